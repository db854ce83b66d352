//! Names an author gives: `aria-label`, `aria-labelledby`, an SVG's
//! `<title>`, a table's `<caption>` or a fieldset's `<legend>`, and the
//! author-given names inside an element that shows no text. The element
//! index's full name rule (`interactive::name`) and semantic_v2 start from these.

use crate::arena::{Arena, NodeId};
use crate::text::{collapse, cut, referenced_text, visible_text};

/// Collapsed, and `None` when nothing is left.
pub(crate) fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(collapse).filter(|s| !s.is_empty())
}

/// The name an author gave an element: `aria-labelledby` (accname's step 2B),
/// else `aria-label` (2C).
pub(crate) fn aria_label(arena: &Arena, id: NodeId) -> Option<String> {
    labelledby(arena, id).or_else(|| non_empty(arena.node(id).attr("aria-label")).map(|l| cut(&l, 80)))
}

/// The text of the elements `aria-labelledby` points at (or the legacy
/// spelling `aria-labeledby`, which Chromium honours), read as a name reads
/// content: `aria-hidden` parts left out, images by their alt.
pub(crate) fn labelledby(arena: &Arena, id: NodeId) -> Option<String> {
    let n = arena.node(id);
    let ids = n.attr("aria-labelledby").or_else(|| n.attr("aria-labeledby"))?;
    let text: Vec<String> = ids
        .split_whitespace()
        .filter_map(|want| {
            arena.nodes.iter().position(|m| m.doc == n.doc && m.attr("id") == Some(want)).map(|m| {
                let m = m as NodeId;
                // A target that is itself a name's author source gives that name.
                non_empty(arena.node(m).attr("aria-label")).unwrap_or_else(|| referenced_text(arena, m, 200))
            })
        })
        .collect();
    let t = collapse(&text.join(" "));
    (!t.is_empty()).then(|| cut(&t, 80))
}

/// The `<title>` of an `<svg>` (the element itself or an icon inside it).
pub(crate) fn svg_title(arena: &Arena, id: NodeId) -> Option<String> {
    let svg = if arena.node(id).tag == "svg" { Some(id) } else { arena.first_descendant(id, |m| m.tag == "svg") }?;
    let title = arena.node(svg).children.iter().copied().find(|&c| arena.node(c).tag == "title")?;
    let text: String = arena.node(title).children.iter().map(|&c| arena.node(c).value.as_str()).collect();
    non_empty(Some(&text))
}

/// The caption that names a table (`<caption>`) or a fieldset (`<legend>`).
pub(crate) fn caption(arena: &Arena, id: NodeId) -> Option<String> {
    let want = match arena.node(id).tag.as_str() {
        "table" => "caption",
        "fieldset" => "legend",
        _ => return None,
    };
    let c = arena.node(id).children.iter().copied().find(|&c| arena.node(c).tag == want)?;
    let t = collapse(&visible_text(arena, c, 200, true));
    (!t.is_empty()).then_some(t)
}

/// The author-given names (`aria-label`, `aria-labelledby`, an image's alt or
/// title) of the elements inside one that shows no text, joined: what Chromium
/// names it from its content.
pub(crate) fn author_names_inside(arena: &Arena, id: NodeId) -> String {
    let mut names = Vec::new();
    let mut stack: Vec<NodeId> = arena.node(id).children.iter().rev().copied().collect();
    let mut budget = 200;
    while let Some(c) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        if arena.node(c).aria_hidden() {
            continue;
        }
        let node = arena.node(c);
        let img_name = || {
            (node.tag == "img")
                .then(|| node.attr("alt").or(node.attr("title")))
                .flatten()
                .map(collapse)
                .filter(|a| !a.is_empty())
        };
        match aria_label(arena, c).or_else(img_name) {
            Some(n) => names.push(n),
            None => stack.extend(node.children.iter().rev().copied()),
        }
    }
    collapse(&names.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{arena, by_id, el, text};

    #[test]
    fn labelledby_then_aria_label_in_the_order_written() {
        let a = arena(vec![
            el("span", &[("id", "first")], vec![text("Billing")]),
            el("span", &[("id", "second")], vec![text(" address ")]),
            el("div", &[("id", "both"), ("aria-label", "  Own  name "), ("aria-labelledby", "first")], vec![]),
            el("div", &[("id", "by"), ("aria-labelledby", "second first missing")], vec![]),
            el("div", &[("id", "blank"), ("aria-label", "   ")], vec![]),
        ]);
        assert_eq!(aria_label(&a, by_id(&a, "both")).as_deref(), Some("Billing"), "labelledby comes first");
        assert_eq!(aria_label(&a, by_id(&a, "by")).as_deref(), Some("address Billing"));
        assert_eq!(aria_label(&a, by_id(&a, "blank")), None);
    }

    #[test]
    fn captions_name_tables_and_legends_fieldsets() {
        let a = arena(vec![
            el("table", &[("id", "t")], vec![el("caption", &[], vec![text("Prices")])]),
            el("fieldset", &[("id", "f")], vec![el("legend", &[], vec![text("Shipping")])]),
            el("div", &[("id", "d")], vec![el("caption", &[], vec![text("no")])]),
        ]);
        assert_eq!(caption(&a, by_id(&a, "t")).as_deref(), Some("Prices"));
        assert_eq!(caption(&a, by_id(&a, "f")).as_deref(), Some("Shipping"));
        assert_eq!(caption(&a, by_id(&a, "d")), None);
    }

    #[test]
    fn names_inside_skip_what_is_hidden_and_stop_at_a_name() {
        let a = arena(vec![el(
            "td",
            &[("id", "cell")],
            vec![
                el("input", &[("aria-label", "Pick Ada")], vec![]),
                el("img", &[("alt", "hidden"), ("aria-hidden", "true")], vec![]),
                el("span", &[("aria-label", "outer")], vec![el("img", &[("alt", "inner")], vec![])]),
                el("img", &[("title", "Photo")], vec![]),
            ],
        )]);
        assert_eq!(author_names_inside(&a, by_id(&a, "cell")), "Pick Ada outer Photo");
    }

    #[test]
    fn an_svg_is_named_by_its_title() {
        let a = arena(vec![el(
            "button",
            &[("id", "b")],
            vec![el("svg", &[], vec![el("title", &[], vec![text(" Close ")])])],
        )]);
        assert_eq!(svg_title(&a, by_id(&a, "b")).as_deref(), Some("Close"));
    }
}
