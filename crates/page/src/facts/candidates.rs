//! Which elements are interactive, and why: the tag (`<a>`, `<button>`…), a
//! widget role, a `<label>` tied to a control, `contenteditable`, or evidence
//! of a click handler. Also which `<label>`s name which controls.

use std::collections::{HashMap, HashSet};

use crate::arena::{Arena, NodeId};
use crate::aria;

pub(crate) const NATIVE: &[&str] = &["a", "button", "input", "textarea", "select", "option", "summary"];
pub(crate) const LABELABLE: &[&str] = &["input", "select", "textarea", "button", "meter", "output", "progress"];

/// Why an element counts as interactive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Its tag (`<a>`, `<button>`, …).
    Native,
    /// An explicit interactive ARIA role.
    Role,
    /// A `<label>` tied to a form control.
    Label,
    /// `contenteditable`.
    Editable,
    /// A click listener, `onclick`, or a non-inherited `cursor: pointer`.
    Evidence,
}

fn semantic_reason(arena: &Arena, id: NodeId, label_targets: &HashSet<NodeId>) -> Option<Reason> {
    let n = arena.node(id);
    // An `<a>` without `href` is no link (HTML-AAM: generic, not focusable): only
    // a role or evidence of a handler makes it interactive.
    if NATIVE.contains(&n.tag.as_str()) && (n.tag != "a" || n.has_attr("href")) {
        if n.tag == "input" && aria::input_type(arena, id) == "hidden" {
            return None;
        }
        return Some(Reason::Native);
    }
    if aria::role_attr(arena, id).is_some_and(|r| aria::is_interactive_role(&r)) {
        return Some(Reason::Role);
    }
    if n.tag == "label" && label_targets.contains(&id) {
        return Some(Reason::Label);
    }
    if aria::is_editable_attr(n.attr("contenteditable")) {
        return Some(Reason::Editable);
    }
    None
}

/// `<label>`s that are tied to a control (by `for` or by containing one).
pub(crate) fn labels(arena: &Arena) -> (HashSet<NodeId>, HashMap<NodeId, Vec<NodeId>>) {
    let mut by_id: HashMap<(usize, &str), NodeId> = HashMap::new();
    for (i, n) in arena.nodes.iter().enumerate() {
        // A hidden input is not labelable (HTML): a `<label for>` pointing at one labels nothing.
        let labelable = LABELABLE.contains(&n.tag.as_str())
            && !(n.tag == "input" && aria::input_type(arena, i as NodeId) == "hidden");
        if n.is_element() && !n.in_ua_shadow && labelable {
            if let Some(idv) = n.attr("id") {
                by_id.entry((n.doc, idv)).or_insert(i as NodeId);
            }
        }
    }
    let mut labels = HashSet::new();
    let mut labels_of: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.tag != "label" || n.in_ua_shadow {
            continue;
        }
        let i = i as NodeId;
        let target = match n.attr("for") {
            Some(f) => by_id.get(&(n.doc, f)).copied(),
            None => arena.first_descendant(i, |m| {
                LABELABLE.contains(&m.tag.as_str())
                    && !(m.tag == "input" && m.attr("type").is_some_and(|t| t.trim().eq_ignore_ascii_case("hidden")))
            }),
        };
        if let Some(t) = target {
            labels.insert(i);
            labels_of.entry(t).or_default().push(i);
        }
    }
    (labels, labels_of)
}

/// The nearest ancestor element with a layout box, skipping shadow roots.
fn layout_parent(arena: &Arena, id: NodeId) -> Option<NodeId> {
    arena.ancestors(id).find(|&a| arena.node(a).is_element() && arena.node(a).layout.is_some())
}

/// Evidence that a plain element reacts to clicks: a click/mousedown listener or
/// `onclick` (snapshot), a pointer/touch/dblclick/contextmenu listener (observer
/// script), a non-inherited `cursor: pointer`, `tabindex >= 0`, `draggable="true"`, or a
/// jQuery UI [`GRIP_CLASSES`] item (a sortable row, a resizable grip: the library's one
/// listener is on their container, so nothing else says a person can take hold of them).
fn has_evidence(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    if matches!(n.tag.as_str(), "html" | "body" | "iframe" | "frame") || n.pseudo {
        return false;
    }
    let pointer = n.layout.as_ref().is_some_and(|l| l.style.cursor_pointer)
        && !layout_parent(arena, id)
            .and_then(|p| arena.node(p).layout.as_ref())
            .is_some_and(|l| l.style.cursor_pointer);
    let focusable = n.attr("tabindex").and_then(|t| t.trim().parse::<i64>().ok()).is_some_and(|t| t >= 0);
    // Something a person can pick up and drag (HTML5 drag and drop).
    let draggable = n.attr("draggable").is_some_and(|d| d.trim().eq_ignore_ascii_case("true"));
    let has_class = |id: NodeId, class: &str| {
        arena.node(id).attr("class").is_some_and(|c| c.split_ascii_whitespace().any(|c| c == class))
    };
    let grip = GRIP_CLASSES.iter().any(|c| has_class(id, c))
        || (n.is_element() && n.parent.is_some_and(|p| has_class(p, SORTABLE_LIST)));
    n.clickable || n.pointer_listener || pointer || focusable || draggable || grip
}

/// The classes jQuery UI gives what a person drags: each item of a `sortable()` list (when
/// the list was made sortable before the item existed, only the list's [`SORTABLE_LIST`]
/// says so), and each grip of a `resizable()` box. far.js mirrors both.
pub(crate) const GRIP_CLASSES: &[&str] = &["ui-sortable-handle", "ui-resizable-handle"];
/// The class of a jQuery UI `sortable()` container: its children are what a person drags.
pub(crate) const SORTABLE_LIST: &str = "ui-sortable";

/// A clickable container holding more interactive elements than this delegates
/// clicks for them (a list, a toolbar, a framework's root): it is not a target.
const CONTAINER_TARGETS_MAX: u32 = 3;

/// Whether `id` shows rendered text outside the interactive elements inside it.
fn text_outside_targets(arena: &Arena, id: NodeId, is_target: &dyn Fn(usize) -> bool) -> bool {
    let mut stack: Vec<NodeId> = arena.node(id).children.clone();
    let mut budget = 400;
    while let Some(c) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            return false;
        }
        let n = arena.node(c);
        if n.is_element() && is_target(c as usize) {
            continue;
        }
        if n.kind == crate::arena::NodeKind::Text {
            let shown = n
                .layout
                .as_ref()
                .is_some_and(|l| l.style.visible && l.text.as_deref().is_some_and(|t| !t.trim().is_empty()));
            if shown && !n.opacity_hidden {
                return true;
            }
        }
        stack.extend(n.children.iter().copied());
    }
    false
}

/// Every interactive element of the page, visible or not, with why it counts.
/// Inert elements (an `inert` subtree, outside an open modal dialog) are left out.
pub(crate) fn candidates(arena: &Arena, label_set: &HashSet<NodeId>) -> Vec<(NodeId, Reason)> {
    let n_nodes = arena.nodes.len();
    // Semantic interactivity, and which nodes have a semantic descendant / ancestor.
    let mut semantic: Vec<Option<Reason>> = vec![None; n_nodes];
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.is_element() && !n.in_ua_shadow {
            semantic[i] = semantic_reason(arena, i as NodeId, label_set);
        }
    }
    let mut under_semantic = vec![false; n_nodes];
    for i in 0..n_nodes {
        if let Some(p) = arena.nodes[i].parent {
            under_semantic[i] = under_semantic[p as usize] || semantic[p as usize].is_some();
        }
    }
    // Evidence-only elements: not inside a semantic one.
    let mut evidence = vec![false; n_nodes];
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.is_element() && !n.in_ua_shadow && semantic[i].is_none() && !under_semantic[i] {
            evidence[i] = has_evidence(arena, i as NodeId);
        }
    }
    // A container that delegates clicks for the interactive things inside it is not a target itself,
    // unless it has a click handler of its own and shows text of its own beside a few inner
    // targets (an inbox row holding star and trash icons): that text is what a person clicks.
    let mut targets_inside = vec![0u32; n_nodes];
    for i in (1..n_nodes).rev() {
        if let Some(p) = arena.nodes[i].parent {
            let own = u32::from(semantic[i].is_some() || evidence[i]);
            targets_inside[p as usize] = targets_inside[p as usize].saturating_add(targets_inside[i] + own);
        }
    }
    let is_target = |c: usize| semantic[c].is_some() || evidence[c];
    let has_target_desc: Vec<bool> = (0..n_nodes)
        .map(|i| {
            targets_inside[i] > 0
                && !(arena.nodes[i].clickable
                    && targets_inside[i] <= CONTAINER_TARGETS_MAX
                    && text_outside_targets(arena, i as NodeId, &is_target))
        })
        .collect();
    let mut out = Vec::new();
    for (i, reason) in semantic.iter().enumerate() {
        let n = &arena.nodes[i];
        if !n.is_element() || n.in_ua_shadow || n.inert {
            continue;
        }
        let reason = match reason {
            Some(r) => *r,
            None if evidence[i] && !has_target_desc[i] => Reason::Evidence,
            None => continue,
        };
        out.push((i as NodeId, reason));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{arena, by_id, el, text};

    fn reasons(a: &Arena) -> Vec<(String, Reason)> {
        let (label_set, _) = labels(a);
        candidates(a, &label_set)
            .into_iter()
            .map(|(id, r)| (a.node(id).attr("id").unwrap_or(&a.node(id).tag).to_string(), r))
            .collect()
    }

    #[test]
    fn why_each_element_counts() {
        let a = arena(vec![
            el("a", &[("id", "native"), ("href", "/")], vec![text("Home")]),
            el("div", &[("id", "role"), ("role", "tab")], vec![]),
            el("div", &[("id", "heading"), ("role", "heading")], vec![]),
            el("label", &[("id", "label"), ("for", "field")], vec![text("Email")]),
            el("input", &[("id", "field")], vec![]),
            el("label", &[("id", "loose")], vec![text("tied to nothing")]),
            el("div", &[("id", "edit"), ("contenteditable", "plaintext-only")], vec![]),
            el("div", &[("id", "focusable"), ("tabindex", "0")], vec![]),
            el("div", &[("id", "unfocusable"), ("tabindex", "-1")], vec![]),
            el("input", &[("id", "hidden"), ("type", "hidden")], vec![]),
        ]);
        assert_eq!(
            reasons(&a),
            vec![
                ("native".into(), Reason::Native),
                ("role".into(), Reason::Role),
                ("label".into(), Reason::Label),
                ("field".into(), Reason::Native),
                ("edit".into(), Reason::Editable),
                ("focusable".into(), Reason::Evidence),
            ]
        );
    }

    #[test]
    fn a_pointer_cursor_counts_where_it_starts_and_a_container_of_targets_does_not() {
        let a = arena(vec![
            el(
                "div",
                &[("id", "card")],
                vec![el("span", &[("id", "inner")], vec![text("Open")]).style("cursor", "pointer")],
            )
            .style("cursor", "pointer"),
            el("div", &[("id", "menu"), ("tabindex", "0")], vec![el("button", &[("id", "item")], vec![text("A")])]),
        ]);
        // The span inherits the card's cursor: only the card counts. The menu holds a button: only the button does.
        assert_eq!(reasons(&a), vec![("card".into(), Reason::Evidence), ("item".into(), Reason::Native)]);
    }

    #[test]
    fn inert_subtrees_have_no_candidates() {
        let a = arena(vec![
            el("div", &[("inert", "")], vec![el("button", &[("id", "dead")], vec![text("x")])]),
            el("button", &[("id", "live")], vec![text("y")]),
        ]);
        assert_eq!(reasons(&a), vec![("live".into(), Reason::Native)]);
    }

    #[test]
    fn labels_tie_by_for_within_their_document_or_by_holding_a_control() {
        let a = arena(vec![
            el("label", &[("id", "by-for"), ("for", "f")], vec![text("Name")]),
            el(
                "label",
                &[("id", "holding")],
                vec![text("Agree"), el("input", &[("id", "c"), ("type", "checkbox")], vec![])],
            ),
            el("input", &[("id", "f")], vec![]),
            el("label", &[("id", "dangling"), ("for", "nothing")], vec![]),
        ]);
        let (set, of) = labels(&a);
        assert!(set.contains(&by_id(&a, "by-for")) && set.contains(&by_id(&a, "holding")));
        assert!(!set.contains(&by_id(&a, "dangling")));
        assert_eq!(of[&by_id(&a, "f")], vec![by_id(&a, "by-for")]);
        assert_eq!(of[&by_id(&a, "c")], vec![by_id(&a, "holding")]);
    }
}
