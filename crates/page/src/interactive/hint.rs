//! A hint for an unnamed control, from what a person sees or what its author
//! called it: the file name of its icon image, the symbol an SVG `<use>`
//! draws, a class or id token (`like`, `fa-trash`, `ui-icon-seek-start`).
//! Printed apart from names (`[7]clickable
//! hint:"star"`), so a model never takes it for an accessible name.

use crate::arena::{Arena, NodeId};

/// Words that say what kind of thing an element is or how it is styled, not
/// what it does.
#[rustfmt::skip]
const NOISE: &[&str] = &[
    "icon", "icons", "ico", "fa", "fas", "far", "fab", "fal", "fad", "glyphicon", "material", "symbols", "outlined",
    "round", "rounded", "sharp", "btn", "button", "ui", "clickable", "pointer", "active", "selected", "disabled",
    "hover", "focus", "focused", "col", "row", "item", "inline", "block", "flex", "left", "right", "pull", "float",
    "small", "large", "lg", "sm", "md", "xs", "xl", "primary", "secondary", "default", "link", "action", "control",
    "wrapper", "container", "inner", "outer", "js", "is", "has", "mdi", "bi", "svg", "img", "image", "the", "and",
    "with", "text", "label", "group", "widget", "component", "root", "el", "wrap", "box", "cell", "list", "span",
    "div", "show", "hide", "hidden", "visible", "open", "close", "closed", "on", "off", "dark", "light", "white",
    "black", "red", "green", "blue", "grey", "gray", "flat", "dense", "unelevated", "ripple", "no", "content",
    "notranslate", "translate", "public", "q", "v", "mat", "mui", "ant", "chakra", "css", "sc", "tw", "ng", "x",
];

/// Prefixes icon sets put before the symbol's name.
#[rustfmt::skip]
const PREFIXES: &[&str] = &[
    "fa-", "glyphicon-", "ui-icon-", "icon-", "icons-", "mdi-", "bi-", "ion-", "ti-", "la-", "octicon-", "i-", "ic-", "ic_",
];

/// The edge or corner a jQuery UI `resizable()` grip drags (`ui-resizable-handle ui-resizable-se`
/// is the bottom-right corner), as a person sees it.
fn grip_side(class: &str) -> Option<&'static str> {
    let tokens: Vec<&str> = class.split_ascii_whitespace().collect();
    if !tokens.contains(&"ui-resizable-handle") {
        return None;
    }
    tokens.iter().find_map(|t| match t.strip_prefix("ui-resizable-")? {
        "n" => Some("top"),
        "e" => Some("right"),
        "s" => Some("bottom"),
        "w" => Some("left"),
        "ne" => Some("top-right"),
        "se" => Some("bottom-right"),
        "sw" => Some("bottom-left"),
        "nw" => Some("top-left"),
        _ => None,
    })
}

/// A hint for element `id`, or `None`.
pub(crate) fn hint(arena: &Arena, id: NodeId) -> Option<String> {
    // A form field's label, placeholder or value tells more; its attributes are in its descriptor.
    let n = arena.node(id);
    if matches!(n.tag.as_str(), "input" | "textarea" | "select") || n.has_attr("contenteditable") {
        return None;
    }
    if let Some(side) = grip_side(n.attr("class").unwrap_or("")) {
        return Some(format!("resize-{side}"));
    }
    // The element itself, then what it holds, in document order (a few levels, a few nodes).
    let mut stack = vec![(id, 0)];
    let mut seen = 0;
    let mut from_class = None;
    while let Some((c, depth)) = stack.pop() {
        seen += 1;
        if seen > 24 {
            break;
        }
        let m = arena.node(c);
        if !m.is_element() {
            continue;
        }
        if m.tag == "img" {
            if let Some(h) = m.attr("src").and_then(file_stem) {
                return Some(h);
            }
        }
        if m.tag == "use" {
            if let Some(h) =
                m.attr("href").or(m.attr("xlink:href")).and_then(|h| h.rsplit('#').next()).and_then(token_hint)
            {
                return Some(h);
            }
        }
        // An icon font's ligature (`<i class="material-icons">delete</i>`): the word it draws.
        if c != id && m.aria_hidden() {
            let word = crate::text::visible_text(arena, c, 40, true);
            if !word.is_empty() && word.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_') {
                return token_hint(&word.replace('_', "-"));
            }
        }
        if from_class.is_none() {
            from_class = m
                .attr("class")
                .into_iter()
                .flat_map(str::split_ascii_whitespace)
                // A grip's kind (`ui-resizable-handle`) says less than its side (`ui-resizable-e`).
                .filter(|c| !crate::facts::GRIP_CLASSES.contains(c))
                .chain(m.attr("id"))
                .find_map(token_hint);
        }
        if depth < 3 {
            stack.extend(m.children.iter().rev().map(|&k| (k, depth + 1)));
        }
    }
    from_class
}

/// The name of an image file, without its folders and extension (`trash-can`
/// from `/icons/trash-can.png?v=2`); not for `data:` images.
fn file_stem(src: &str) -> Option<String> {
    let src = src.trim();
    if src.starts_with("data:") || src.is_empty() {
        return None;
    }
    let path = src.split(['?', '#']).next()?;
    let file = path.rsplit('/').next()?;
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    token_hint(stem)
}

/// A class, id or symbol name made readable, or `None` when it says nothing
/// (noise words, generated names with digits, a single letter).
fn token_hint(token: &str) -> Option<String> {
    let mut t = token.trim().to_ascii_lowercase();
    if t.is_empty() || t.len() > 40 || t.chars().any(|c| c.is_ascii_digit()) || !t.is_ascii() {
        return None;
    }
    for p in PREFIXES {
        if let Some(rest) = t.strip_prefix(p) {
            t = rest.to_string();
            break;
        }
    }
    let words: Vec<&str> = t.split(['-', '_']).filter(|w| !w.is_empty()).collect();
    let meaningful: Vec<&str> = words.iter().copied().filter(|w| w.len() > 1 && !NOISE.contains(w)).collect();
    (!meaningful.is_empty()).then(|| meaningful.join("-"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{arena, by_id, el, text};

    #[test]
    fn tokens_say_what_a_control_does_not_how_it_looks() {
        assert_eq!(token_hint("like").as_deref(), Some("like"));
        assert_eq!(token_hint("fa-trash").as_deref(), Some("trash"));
        assert_eq!(token_hint("ui-icon-seek-start").as_deref(), Some("seek-start"));
        assert_eq!(token_hint("btn-primary"), None);
        assert_eq!(token_hint("material-icons"), None);
        assert_eq!(token_hint("css-1x2y3z"), None);
        assert_eq!(token_hint("q-btn--flat"), None);
        assert_eq!(file_stem("/icons/trash-can.png?v=2").as_deref(), Some("trash-can"));
        assert_eq!(file_stem("data:image/png;base64,xx"), None);
    }

    #[test]
    fn an_unnamed_control_is_hinted_by_its_icon_then_its_classes() {
        let a = arena(vec![
            el("span", &[("id", "like"), ("class", "like clickable")], vec![]),
            el("button", &[("id", "b1")], vec![el("img", &[("src", "/img/star.png")], vec![])]),
            el(
                "button",
                &[("id", "b2"), ("class", "btn")],
                vec![el("svg", &[], vec![el("use", &[("href", "#icon-share")], vec![])])],
            ),
            el("button", &[("id", "settings"), ("class", "btn btn-default")], vec![]),
            el("input", &[("id", "email-field")], vec![]),
            el(
                "button",
                &[("id", "cal")],
                vec![el("i", &[("class", "material-icons"), ("aria-hidden", "true")], vec![text("edit_calendar")])
                    .at(0.0, 0.0, 20.0, 20.0)],
            ),
        ]);
        assert_eq!(hint(&a, by_id(&a, "like")).as_deref(), Some("like"));
        assert_eq!(hint(&a, by_id(&a, "b1")).as_deref(), Some("star"));
        assert_eq!(hint(&a, by_id(&a, "b2")).as_deref(), Some("share"));
        assert_eq!(hint(&a, by_id(&a, "settings")).as_deref(), Some("settings"), "its id says more than its classes");
        assert_eq!(hint(&a, by_id(&a, "cal")).as_deref(), Some("edit-calendar"), "the ligature an icon font draws");
        assert_eq!(hint(&a, by_id(&a, "email-field")), None, "a field's attributes are in its descriptor");
    }
}
