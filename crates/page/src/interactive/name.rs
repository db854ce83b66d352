//! The element index's name rule: a short accessible name for page text and
//! marks, from the author's names (`aria`), `<label>`s, alt, title,
//! placeholder, value, then visible text.

use std::collections::HashMap;

use crate::arena::{Arena, NodeId};
use crate::aria::{labelledby, non_empty, svg_title};
use crate::text::{collapse, cut, name_text, visible_text};

use super::Descriptor;

/// A short name for page text and marks: aria-label, aria-labelledby, label text,
/// alt, title, placeholder, value, then visible text.
pub(crate) fn accessible_name(
    arena: &Arena,
    id: NodeId,
    labels_of: &HashMap<NodeId, Vec<NodeId>>,
    d: &Descriptor,
) -> String {
    accessible_name_within(arena, id, labels_of, d, 80)
}

/// [`accessible_name`] cut at `max` characters (semantic_v2 keeps 200, as Chromium's tree gave).
pub(crate) fn accessible_name_within(
    arena: &Arena,
    id: NodeId,
    labels_of: &HashMap<NodeId, Vec<NodeId>>,
    d: &Descriptor,
    max: usize,
) -> String {
    let n = arena.node(id);
    if let Some(t) = labelledby(arena, id) {
        return t;
    }
    if let Some(l) = non_empty(n.attr("aria-label")) {
        return cut(&l, max);
    }
    if matches!(n.tag.as_str(), "input" | "select" | "textarea") {
        if let Some(ls) = labels_of.get(&id) {
            // A label's name is its text (embedded controls by their value, the control
            // itself left out), or the alt of the icon it shows (`<label><img alt="Search">`).
            let label_text = |l: NodeId| {
                let t = name_text(arena, l, 200, Some(id), false);
                if !t.trim().is_empty() {
                    return t;
                }
                arena
                    .first_descendant(l, |m| m.tag == "img" && m.layout.is_some())
                    .and_then(|img| arena.node(img).attr("alt").map(str::to_string))
                    .unwrap_or_default()
            };
            let t = collapse(&ls.iter().map(|&l| label_text(l)).collect::<Vec<_>>().join(" "));
            if !t.is_empty() {
                return cut(&t, max);
            }
        }
    }
    // An icon names what holds it: its alt, else its title (`<a><img title="Does not compile"></a>`).
    let img_alt = || {
        arena
            .first_descendant(id, |m| m.tag == "img" && m.attr("alt").is_some_and(|a| !a.trim().is_empty()))
            .and_then(|img| arena.node(img).attr("alt").map(collapse))
            .or_else(|| {
                arena
                    .first_descendant(id, |m| {
                        m.tag == "img"
                            && m.attr("alt").is_none()
                            && m.attr("title").is_some_and(|a| !a.trim().is_empty())
                    })
                    .and_then(|img| arena.node(img).attr("title").map(collapse))
            })
    };
    let is_button_input = n.tag == "input" && matches!(d.type_.as_deref(), Some("submit" | "button" | "reset"));
    // An element without a role (a clickable div) that shows only a symbol (`«`)
    // is named by its title, as Chromium names it: a generic element takes no
    // name from its content.
    let symbol_only = |t: &String| !t.chars().any(char::is_alphanumeric);
    let titled_generic = d.role.is_none() && non_empty(n.attr("title")).is_some();
    // Name from content: images by their alt and embedded controls by their value,
    // where they stand; what the author hid from assistive technology left out.
    let content = (!matches!(n.tag.as_str(), "input" | "textarea" | "select"))
        .then(|| cut(&collapse(&name_text(arena, id, 400, None, false)), 200))
        .filter(|t| !t.is_empty());
    let candidates = [
        non_empty(n.attr("alt")),
        content.filter(|_| !matches!(n.tag.as_str(), "select")).filter(|t| !(titled_generic && symbol_only(t))),
        img_alt(),
        non_empty(n.attr("title")),
        svg_title(arena, id),
        non_empty(n.attr("placeholder")),
        if is_button_input { d.value.clone().filter(|v| !v.is_empty()) } else { None },
    ];
    candidates.into_iter().flatten().find(|s| !s.is_empty()).map(|s| cut(&s, max)).unwrap_or_default()
}

/// The name of an element whose role takes no name from its content (a
/// contenteditable, a `role=textbox`, `combobox`, `slider`…): aria-labelledby,
/// aria-label, a `<label>`, title, aria-placeholder. Never its own text, which
/// is its value (or a placeholder drawn by CSS).
pub(crate) fn editable_name(arena: &Arena, id: NodeId, labels_of: &HashMap<NodeId, Vec<NodeId>>) -> String {
    let n = arena.node(id);
    if let Some(t) = labelledby(arena, id) {
        return t;
    }
    if let Some(l) = non_empty(n.attr("aria-label")) {
        return cut(&l, 80);
    }
    if let Some(ls) = labels_of.get(&id) {
        let t = collapse(&ls.iter().map(|&l| visible_text(arena, l, 200, false)).collect::<Vec<_>>().join(" "));
        if !t.is_empty() {
            return cut(&t, 80);
        }
    }
    [non_empty(n.attr("title")), non_empty(n.attr("aria-placeholder")), non_empty(n.attr("data-placeholder"))]
        .into_iter()
        .flatten()
        .next()
        .map(|s| cut(&s, 80))
        .unwrap_or_default()
}
