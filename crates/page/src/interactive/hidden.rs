//! Controls a person never sees themselves: an `opacity: 0` input over a
//! custom widget, a 1-px or clipped-away (visually hidden) native radio or
//! slider inside a styled label, a terminal's helper `<textarea>`. Chromium's
//! accessibility tree lists them with their role, name and state, and so does
//! the element index, once, acting through what a person would click.

use std::collections::HashMap;

use crate::arena::{Arena, NodeId};
use crate::facts::{Facts, Reason};
use crate::geometry::Rect;

use super::probe::element_rect;

/// A box this small in either direction is not something a person clicks:
/// the visually-hidden pattern (1×1, `margin: -1px`, `clip`), or a zero-size
/// focus target.
const TINY: f64 = 2.0;

/// An element that stands for a hidden control must be at least this big.
const PROXY_MIN: f64 = 8.0;

/// How far up from a hidden control its stand-in is looked for when no label
/// draws it (a custom select's field, a terminal's screen).
const PROXY_DEPTH: usize = 4;

/// The box of a control that is rendered but transparent (`opacity: 0` over a
/// styled file input or select): a click at its place reaches it, so its own
/// box is where it is, as for any visible element.
pub(crate) fn own_rect(arena: &Arena, id: NodeId) -> (Rect, Rect) {
    let (bounds, visible) = element_rect(arena, id);
    let n = arena.node(id);
    if !visible.is_empty() || !n.opacity_hidden {
        return (bounds, visible);
    }
    match &n.layout {
        Some(l) if l.style.visible => (bounds, l.rect.intersect(&n.clip)),
        _ => (bounds, visible),
    }
}

fn tiny(r: &Rect) -> bool {
    r.w <= TINY || r.h <= TINY
}

/// A box too small in either direction for a person to see or click.
pub(crate) fn is_speck(r: &Rect) -> bool {
    tiny(r)
}

/// Whether a candidate is a control that is rendered (it has a box and is not
/// `visibility: hidden`) but drawn by something else: a speck (its own box, or
/// the box an ancestor clips it to, as the visually-hidden wrapper does), or
/// transparent and either small or drawn by a label of its own (a custom
/// checkbox, a component library's select).
fn hidden_control(arena: &Arena, id: NodeId, reason: Reason, facts: &Facts) -> bool {
    if !matches!(reason, Reason::Native | Reason::Role | Reason::Editable) {
        return false;
    }
    let n = arena.node(id);
    if n.aria_hidden() || matches!(n.tag.as_str(), "option" | "a" | "summary") {
        return false;
    }
    let Some(l) = &n.layout else { return false };
    if !l.style.visible {
        return false;
    }
    let small = l.rect.w < PROXY_MIN || l.rect.h < PROXY_MIN;
    tiny(&l.rect) || tiny(&n.clip) || (n.opacity_hidden && (small || facts.labels_of.contains_key(&id)))
}

/// Whether `by`, found over a transparent control, is the widget drawn for it:
/// the control is a field or widget nobody sees (`opacity: 0`), and `by` shares
/// an ancestor with it a few levels up and is big enough to click.
pub(crate) fn drawn_over(arena: &Arena, id: NodeId, reason: Reason, by: NodeId) -> bool {
    let n = arena.node(id);
    if !n.opacity_hidden || !matches!(reason, Reason::Native | Reason::Role | Reason::Editable) {
        return false;
    }
    let near = arena.ancestors(id).take(PROXY_DEPTH).any(|a| arena.is_ancestor_or_self(a, by));
    near && big_enough(&element_rect(arena, by).1)
}

fn big_enough(r: &Rect) -> bool {
    r.w >= PROXY_MIN && r.h >= PROXY_MIN
}

/// For each hidden control, the element that stands for it: a visible label of
/// its own, else the nearest ancestor a few levels up whose visible box is big
/// enough to click and holds the control's place.
pub(crate) fn proxies(arena: &Arena, facts: &Facts) -> HashMap<NodeId, NodeId> {
    let mut out = HashMap::new();
    for &(id, reason) in &facts.candidates {
        if !hidden_control(arena, id, reason, facts) {
            continue;
        }
        let label = facts.labels_of.get(&id).into_iter().flatten().copied().find(|&l| {
            let (_, v) = element_rect(arena, l);
            big_enough(&v)
        });
        if let Some(l) = label {
            out.insert(id, l);
            continue;
        }
        // Labelled, but its label is not rendered (MkDocs' palette: one radio's label
        // at a time): a person cannot reach it now. A label hidden the screen-reader
        // way (select2's) is no reason: the widget that holds it stands for it.
        let label_unrendered =
            facts.labels_of.get(&id).is_some_and(|ls| ls.iter().all(|&l| arena.node(l).layout.is_none()));
        if label_unrendered {
            continue;
        }
        let Some(l) = &arena.node(id).layout else { continue };
        let (cx, cy) = l.rect.center();
        let holder = arena.ancestors(id).take(PROXY_DEPTH).find(|&a| {
            let n = arena.node(a);
            if !n.is_element() || matches!(n.tag.as_str(), "body" | "html") {
                return false;
            }
            let (_, v) = element_rect(arena, a);
            big_enough(&v) && cx >= v.x - 1.0 && cx <= v.x + v.w + 1.0 && cy >= v.y - 1.0 && cy <= v.y + v.h + 1.0
        });
        if let Some(a) = holder {
            out.insert(id, a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::{el, text, view};

    use crate::interactive::Element;

    /// `[N]role "name" checked` of each element.
    fn tokens(elements: &[Element]) -> Vec<String> {
        elements
            .iter()
            .map(|e| {
                let role = e.descriptor.role.as_ref().map_or("?", |r| r.as_str());
                let state = match e.descriptor.checked {
                    Some(true) => " checked",
                    Some(false) => " unchecked",
                    None => "",
                };
                format!("[{}]{role} {:?}{state}", e.index, e.label)
            })
            .collect()
    }

    #[test]
    fn a_transparent_speck_of_an_input_is_listed_once_through_its_label() {
        let v = view(vec![el(
            "label",
            &[("id", "field")],
            vec![
                el("span", &[], vec![text("Single")]).at(10.0, 10.0, 100.0, 20.0),
                el("input", &[("role", "combobox"), ("aria-label", "Room type")], vec![])
                    .at(12.0, 12.0, 1.0, 1.0)
                    .style("opacity", "0"),
            ],
        )
        .at(0.0, 0.0, 300.0, 40.0)]);
        assert_eq!(tokens(&v.elements), vec![r#"[1]combobox "Room type""#.to_string()]);
        let e = &v.elements[0];
        assert_eq!(e.proxy.and_then(|p| v.node(p)).map(|n| n.tag().to_string()), Some("label".to_string()));
        assert!(e.click_point.0 > 2.0 && e.click_point.1 > 2.0, "clicked where the label is: {:?}", e.click_point);
    }

    #[test]
    fn a_visually_hidden_radio_reads_the_same_focused_or_not() {
        let page = |focused_shift: f64| {
            view(vec![el(
                "label",
                &[],
                vec![
                    el(
                        "span",
                        &[],
                        vec![el("input", &[("type", "radio"), ("name", "l")], vec![])
                            .at(20.0, 10.0 + focused_shift, 13.0, 13.0)
                            .checked()],
                    )
                    .at(20.0, 10.0 + focused_shift, 1.0, 1.0)
                    .style("overflow-x", "hidden")
                    .style("overflow-y", "hidden"),
                    el("span", &[], vec![text("Compact")]).at(20.0, 10.0, 80.0, 20.0),
                ],
            )
            .at(10.0, 10.0, 200.0, 24.0)])
        };
        for shift in [0.0, 1.0] {
            assert_eq!(tokens(&page(shift).elements), vec![r#"[1]radio "Compact" checked"#.to_string()]);
        }
    }

    #[test]
    fn a_transparent_input_of_some_size_inside_its_label_is_the_labels_control() {
        let v = view(vec![el(
            "label",
            &[],
            vec![
                el("input", &[("type", "checkbox")], vec![]).at(10.0, 10.0, 13.0, 13.0).style("opacity", "0"),
                el("span", &[], vec![text("Remember me")]).at(30.0, 10.0, 100.0, 20.0),
            ],
        )
        .at(10.0, 10.0, 200.0, 24.0)]);
        assert_eq!(tokens(&v.elements), vec![r#"[1]checkbox "Remember me" unchecked"#.to_string()]);
    }

    #[test]
    fn a_transparent_control_of_full_size_is_clicked_where_it_is() {
        let v = view(vec![el(
            "div",
            &[],
            vec![el("button", &[], vec![text("Upload")]).at(10.0, 10.0, 120.0, 30.0).style("opacity", "0")],
        )]);
        assert_eq!(tokens(&v.elements), vec![r#"[1]button "Upload""#.to_string()]);
        assert!(v.elements[0].proxy.is_none());
    }
}
