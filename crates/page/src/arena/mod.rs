//! Flattens a [`Capture`](crate::Capture) into one tree: every frame's documents joined in
//! document order (iframe content under its `<iframe>`, shadow roots under their
//! host), every box in top-level viewport coordinates with the clip its
//! ancestors impose, and a paint-order hit test per document.

mod build;
mod hit;
mod local;

use crate::geometry::{Grid, Rect};

pub type NodeId = u32;

/// Elements that paint content of their own even without a background.
const REPLACED: &[&str] = &[
    "img", "video", "canvas", "iframe", "frame", "svg", "input", "textarea", "select", "button", "embed", "object",
    "picture",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Element,
    Text,
    Document,
    ShadowRoot,
    Other,
}

#[derive(Debug, Clone, Default)]
pub struct Style {
    pub display: String,
    pub visible: bool,
    pub cursor_pointer: bool,
    pub pointer_events_none: bool,
    pub clips_x: bool,
    pub clips_y: bool,
    /// `overflow-y: auto | scroll`: the user can scroll it.
    pub scrolls_y: bool,
    pub fixed: bool,
    pub opacity_zero: bool,
    pub white_space: WhiteSpace,
    /// Paints nothing of its own: no background colour or image.
    pub transparent: bool,
}

/// How a box treats spaces and line breaks in its text (CSS `white-space`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhiteSpace {
    /// `normal`, `nowrap`: runs of spaces and line breaks collapse to one space.
    #[default]
    Collapse,
    /// `pre`, `pre-wrap`, `break-spaces`: kept as written.
    Preserve,
    /// `pre-line`: spaces collapse, line breaks are kept.
    PreserveBreaks,
}

impl WhiteSpace {
    fn parse(v: &str) -> WhiteSpace {
        match v {
            "pre" | "pre-wrap" | "break-spaces" => WhiteSpace::Preserve,
            "pre-line" => WhiteSpace::PreserveBreaks,
            _ => WhiteSpace::Collapse,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Layout {
    /// Border box in top-level viewport coordinates.
    pub rect: Rect,
    pub style: Style,
    pub paint: i64,
    /// Rendered text for text nodes (whitespace already collapsed by layout).
    pub text: Option<String>,
    /// Client (padding) box relative to the border box.
    pub client: Option<Rect>,
    /// Line fragments of a text node, in viewport coordinates.
    pub boxes: Vec<Rect>,
    /// `(scrollTop, scrollHeight)` of a box that scrolls its content.
    pub scroll: Option<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
    pub kind: NodeKind,
    /// Lower-case tag name for elements, empty otherwise.
    pub tag: String,
    pub attrs: Vec<(String, String)>,
    /// DOM text for text nodes.
    pub value: String,
    pub backend_id: i64,
    pub frame: usize,
    pub doc: usize,
    pub layout: Option<Layout>,
    pub input_value: Option<String>,
    pub text_value: Option<String>,
    pub checked: bool,
    pub selected: bool,
    pub clickable: bool,
    pub pointer_listener: bool,
    pub in_ua_shadow: bool,
    pub opacity_hidden: bool,
    /// Inside an `inert` subtree, or outside the open modal `<dialog>`: seen, not usable.
    pub inert: bool,
    /// For `::before` / `::after`: the generated text (`content: "×"`).
    pub generated: Option<String>,
    /// A pseudo-element node (`::before`, `::after`, `::marker`, …).
    pub pseudo: bool,
    /// The element that has keyboard focus.
    pub focused: bool,
    /// The region this node's box is clipped to (viewport, iframe, overflow ancestors).
    pub clip: Rect,
}

impl Node {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    pub fn has_attr(&self, name: &str) -> bool {
        self.attrs.iter().any(|(k, _)| k == name)
    }
    pub fn is_element(&self) -> bool {
        self.kind == NodeKind::Element
    }
    /// `aria-hidden="true"`: the element and its subtree are left out of the
    /// accessibility tree (and of names computed from content).
    pub fn aria_hidden(&self) -> bool {
        self.attr("aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }
    /// The visible part of the box, if any.
    pub fn visible_rect(&self) -> Option<Rect> {
        let l = self.layout.as_ref()?;
        if !l.style.visible || self.opacity_hidden {
            return None;
        }
        let r = l.rect.intersect(&self.clip);
        (!r.is_empty()).then_some(r)
    }
}

#[derive(Debug, Clone)]
pub struct Doc {
    /// The CDP frame id of this document.
    pub frame_id: String,
    pub url: String,
    pub title: String,
    pub base_url: String,
    pub root: NodeId,
    /// The `<iframe>` element holding this document, if it is not the main one.
    pub owner: Option<NodeId>,
    pub scroll: (f64, f64),
    pub content: (f64, f64),
    /// The document's viewport in top-level coordinates (clipped by its ancestors).
    pub clip: Rect,
}

impl Doc {
    /// The base URL links resolve against (the document URL when there is no `<base>`).
    pub fn base_url_or_url(&self) -> String {
        if self.base_url.is_empty() {
            self.url.clone()
        } else {
            self.base_url.clone()
        }
    }
}

#[derive(Clone)]
pub struct Arena {
    pub nodes: Vec<Node>,
    pub docs: Vec<Doc>,
    pub viewport: Rect,
    grids: Vec<Option<Grid>>,
    /// The last node of each node's subtree. Ids are given in document (pre-)order,
    /// so a subtree is the id range `id..=subtree_end[id]`: ancestry in O(1).
    subtree_end: Vec<NodeId>,
    /// `(document, id)` of every element some `aria-activedescendant` names, read once when asked.
    active_descendants: std::sync::OnceLock<std::collections::HashSet<(usize, String)>>,
}

impl Arena {
    /// A page with nothing in it (while a JavaScript dialog blocks the real one).
    pub fn empty(viewport: Rect) -> Arena {
        Arena {
            nodes: Vec::new(),
            docs: Vec::new(),
            viewport,
            grids: Vec::new(),
            subtree_end: Vec::new(),
            active_descendants: Default::default(),
        }
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Every node id, in document order.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> {
        0..self.nodes.len() as NodeId
    }

    /// Whether some element of its document names `id` in `aria-activedescendant`
    /// (the set is read from the whole arena once, on the first question).
    pub fn is_active_descendant(&self, id: NodeId) -> bool {
        let n = self.node(id);
        let Some(own) = n.attr("id").filter(|i| !i.is_empty()) else { return false };
        let set = self.active_descendants.get_or_init(|| {
            self.nodes
                .iter()
                .filter_map(|m| Some((m.doc, m.attr("aria-activedescendant")?.trim().to_string())))
                .collect()
        });
        set.contains(&(n.doc, own.to_string()))
    }

    /// The last id of `id`'s subtree (its descendants are `id + 1..=end`).
    pub fn subtree_end(&self, id: NodeId) -> NodeId {
        self.subtree_end.get(id as usize).copied().unwrap_or(id)
    }

    /// True if `a` is `b` or one of its ancestors (across shadow roots and frames).
    pub fn is_ancestor_or_self(&self, a: NodeId, b: NodeId) -> bool {
        match self.subtree_end.get(a as usize) {
            Some(&end) => a <= b && b <= end,
            None => a == b,
        }
    }

    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.nodes[id as usize].parent, move |&p| self.nodes[p as usize].parent)
    }

    /// The first element below `id` (in document order, `id` itself excluded) that `pred` accepts.
    pub fn first_descendant(&self, id: NodeId, pred: impl Fn(&Node) -> bool) -> Option<NodeId> {
        let mut stack: Vec<NodeId> = self.node(id).children.iter().rev().copied().collect();
        while let Some(c) = stack.pop() {
            let n = self.node(c);
            if n.is_element() && pred(n) {
                return Some(c);
            }
            stack.extend(n.children.iter().rev().copied());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{arena, by_id, el, text};

    #[test]
    fn subtrees_are_id_ranges() {
        let a = arena(vec![
            el("div", &[("id", "outer")], vec![el("p", &[("id", "inner")], vec![text("x")])]),
            el("div", &[("id", "next")], vec![]),
        ]);
        let (outer, inner, next) = (by_id(&a, "outer"), by_id(&a, "inner"), by_id(&a, "next"));
        assert!(a.is_ancestor_or_self(outer, inner));
        assert!(a.is_ancestor_or_self(outer, outer));
        assert!(!a.is_ancestor_or_self(inner, outer));
        assert!(!a.is_ancestor_or_self(outer, next));
        assert_eq!(a.subtree_end(outer), inner + 1, "the text is the last node inside");
        assert_eq!(a.ancestors(inner).next(), Some(outer));
        assert_eq!(a.first_descendant(outer, |n| n.tag == "p"), Some(inner));
        assert_eq!(a.first_descendant(inner, |n| n.tag == "p"), None, "itself is not its descendant");
    }

    #[test]
    fn what_is_painted_later_covers_and_ancestors_never_do() {
        let mut a = arena(vec![
            el("div", &[("id", "card")], vec![el("button", &[("id", "btn")], vec![]).at(10.0, 10.0, 50.0, 20.0)])
                .at(0.0, 0.0, 300.0, 100.0),
            el("div", &[("id", "toast")], vec![]).at(0.0, 50.0, 300.0, 50.0).style("position", "fixed"),
            el("div", &[("id", "ghost")], vec![]).at(200.0, 0.0, 50.0, 50.0).style("pointer-events", "none"),
        ]);
        let (card, btn, toast) = (by_id(&a, "card"), by_id(&a, "btn"), by_id(&a, "toast"));
        assert_eq!(a.cover_at(btn, 20.0, 20.0), None, "its own card is under it, not over it");
        assert_eq!(a.cover_at(card, 20.0, 20.0), None, "a descendant is part of the card");
        assert_eq!(a.cover_at(card, 20.0, 70.0), Some(Some(toast)));
        assert_eq!(a.cover_at(card, 220.0, 20.0), None, "pointer-events: none takes no click");
    }

    #[test]
    fn an_open_modal_dialog_makes_the_rest_of_its_document_inert() {
        let a = arena(vec![
            el("button", &[("id", "behind")], vec![]),
            el("dialog", &[("open", "")], vec![el("button", &[("id", "inside")], vec![])]).style("position", "fixed"),
            el("div", &[("inert", "")], vec![el("a", &[("id", "dead")], vec![])]),
        ]);
        assert!(a.node(by_id(&a, "behind")).inert);
        assert!(!a.node(by_id(&a, "inside")).inert);
        assert!(a.node(by_id(&a, "dead")).inert);
    }

    #[test]
    fn aria_hidden_is_true_in_any_case_and_nothing_else() {
        let a = arena(vec![
            el("i", &[("id", "t"), ("aria-hidden", " TRUE ")], vec![]),
            el("i", &[("id", "f"), ("aria-hidden", "false")], vec![]),
            el("i", &[("id", "e"), ("aria-hidden", "")], vec![]),
        ]);
        assert!(a.node(by_id(&a, "t")).aria_hidden());
        assert!(!a.node(by_id(&a, "f")).aria_hidden());
        assert!(!a.node(by_id(&a, "e")).aria_hidden());
    }
}
