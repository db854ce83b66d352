//! The pure page model: one capture in, everything an agent reads out.
//!
//! Input is a [`Capture`]: the `DOMSnapshot.captureSnapshot` reply of the page
//! and of each out-of-process frame, with layout boxes, computed styles and paint
//! order. [`PageView::build`] joins it once into a single tree and derives the
//! element index, the page text and the hash from it. No I/O, no async: every
//! rule here is unit-testable on recorded captures.
//!
//! The modules form layers, each reading only those below it (held by
//! `tests/layers.rs`): `capture`, `geometry`, `index`, `url` → `arena` (the
//! joined tree, hit test) → `text` → `aria` (roles, states, author names) →
//! `facts` (labels, interactive candidates, the accessibility join) →
//! `interactive` (the element index) → `content`, `marks`, `hash` → `dialog`,
//! `draw` → [`PageView`] here → [`semantic`] → [`delta`].
//!
//! ```
//! use sightline_page::{Capture, PageView};
//! let capture: Capture = serde_json::from_str(r#"{"viewport":{"width":800,"height":600},"frames":[]}"#).unwrap();
//! let view = PageView::build(&capture);
//! assert!(view.elements.is_empty());
//! ```

mod arena;
mod aria;
mod capture;
mod content;
pub mod delta;
mod dialog;
mod draw;
mod facts;
mod geometry;
mod hash;
mod index;
mod interactive;
mod marks;
pub mod semantic;
#[cfg(test)]
mod testing;
mod text;
mod url;

pub use arena::NodeId;
pub use aria::{Role, State, StateValue};
pub use capture::{
    AxNode, AxProperty, AxValue, Capture, DocumentSnapshot, DomRects, FrameCapture, FrameOwner, JsDialog, RectRequest,
    Snapshot, Viewport, COMPUTED_STYLES,
};
pub use content::token;
pub use draw::{draw_marks, mark_box, mark_color, DrawError};
pub use facts::Reason;
pub use geometry::Rect;
pub use hash::{canonical, state_hash};
pub use index::{ElementIndex, IndexError};
pub use interactive::{Covered, Descriptor, DialogControl, Element};
pub use marks::Mark;
pub use text::{collapse, cut};
pub use url::resolve;

use arena::{Arena, Node};
use facts::Facts;

/// Everything derived from one capture. A clone is a deep copy (a recording builds a
/// semantic tree from one without touching the shared capture).
#[derive(Clone)]
pub struct PageView {
    pub url: String,
    pub title: String,
    /// Main-frame scroll offsets in CSS pixels.
    pub scroll: (f64, f64),
    /// Main document size in CSS pixels.
    pub content_size: (f64, f64),
    pub viewport: Viewport,
    /// Visible interactive elements, index `i+1` at position `i`.
    pub elements: Vec<Element>,
    /// Interactive elements laid out in the viewport but covered by another element.
    pub covered: Vec<Covered>,
    pub page_content: String,
    /// Labels whose text is already the name of the control they label.
    naming_labels: std::collections::HashSet<NodeId>,
    /// The joined tree; callers read it through the accessors below.
    arena: Arena,
    /// Labels, interactive candidates and the accessibility join, shared by every view.
    facts: Facts,
}

impl PageView {
    pub fn build(capture: &Capture) -> PageView {
        if let Some(d) = &capture.dialog {
            let viewport = capture.viewport;
            let (elements, page_content) = dialog::view(d, viewport);
            return PageView {
                url: d.url.clone(),
                title: String::new(),
                scroll: (0.0, 0.0),
                content_size: (viewport.width, viewport.height),
                viewport,
                elements,
                covered: Vec::new(),
                page_content,
                naming_labels: Default::default(),
                arena: Arena::empty(Rect::new(0.0, 0.0, viewport.width, viewport.height)),
                facts: Default::default(),
            };
        }
        let mut arena = Arena::build(capture);
        let facts = Facts::gather(&arena, capture);
        let mut found = interactive::find(&mut arena, &facts);
        // Names the DOM rules could not give, from the accessibility tree when the capture has it.
        for e in found.elements.iter_mut().filter(|e| needs_name(e)) {
            if let Some(name) = facts.ax.get(&e.node).and_then(|a| a.name.as_ref()).and_then(AxValue::as_str) {
                e.label = cut(&collapse(name), 80);
            }
        }
        let (url, title, scroll, content_size) = match arena.docs.first() {
            Some(d) => (d.url.clone(), d.title.clone(), d.scroll, d.content),
            None => (String::new(), String::new(), (0.0, 0.0), (0.0, 0.0)),
        };
        let page_content =
            render_text(&mut arena, &found.elements, &found.naming_labels, scroll, content_size, capture.viewport);
        PageView {
            url,
            title,
            scroll,
            content_size,
            viewport: capture.viewport,
            elements: found.elements,
            covered: found.covered,
            naming_labels: found.naming_labels,
            page_content,
            arena,
            facts,
        }
    }

    /// Elements the DOM rules could not name (icon buttons, unlabeled widgets),
    /// by index: the browser layer asks Chromium's accessibility tree for them.
    /// Those the capture's own accessibility tree already answered are not listed.
    pub fn unnamed(&self) -> Vec<ElementIndex> {
        self.elements
            .iter()
            .filter(|e| needs_name(e) && !self.facts.ax.contains_key(&e.node))
            .map(|e| e.index)
            .collect()
    }

    /// Give unnamed elements the names Chromium's accessibility tree computed, and
    /// render the text again with them.
    pub fn set_names(&mut self, names: &[(ElementIndex, String)]) {
        let mut changed = false;
        for (index, name) in names {
            // An icon font's glyph is no name (see `text::is_private_use`).
            let name: String = name.chars().filter(|&c| !text::is_private_use(c)).collect();
            let name = cut(&collapse(&name), 80);
            if let Some(e) = self.elements.get_mut(index.position()) {
                if e.label.is_empty() && !name.is_empty() {
                    e.label = name;
                    changed = true;
                }
            }
        }
        if changed {
            self.page_content = render_text(
                &mut self.arena,
                &self.elements,
                &self.naming_labels,
                self.scroll,
                self.content_size,
                self.viewport,
            );
        }
    }

    /// `state_hash` of this view.
    pub fn state_hash(&self) -> String {
        state_hash(&self.url, &self.page_content, self.scroll, &self.elements)
    }

    /// Set-of-Marks: the visible interactive elements with boxes, numbered in document order.
    pub fn marks(&self) -> Vec<Mark> {
        marks::marks(&self.arena, &self.elements)
    }

    /// The same marks numbered by their element index, for a screenshot read
    /// beside the element index (the agent runner's).
    pub fn index_marks(&self) -> Vec<Mark> {
        self.marks().into_iter().map(|m| Mark { id: m.element_index.get(), ..m }).collect()
    }

    /// A node of the joined tree, to read (`Element::node`, `Covered::by`).
    pub fn node(&self, id: NodeId) -> Option<NodeRef<'_>> {
        self.arena.nodes.get(id as usize).map(NodeRef)
    }

    /// The node of a frame capture (`Element::frame`) with this backend node id.
    pub fn node_by_backend(&self, frame: usize, backend_node_id: i64) -> Option<NodeId> {
        self.arena.nodes.iter().position(|n| n.backend_id == backend_node_id && n.frame == frame).map(|i| i as NodeId)
    }

    /// True if `ancestor` is `node` or holds it (across shadow roots and frames).
    pub fn contains(&self, ancestor: NodeId, node: NodeId) -> bool {
        self.arena.is_ancestor_or_self(ancestor, node)
    }

    /// The CDP frame id of the document that holds a node.
    pub fn frame_of(&self, id: NodeId) -> Option<&str> {
        let doc = self.arena.nodes.get(id as usize)?.doc;
        self.arena.docs.get(doc).map(|d| d.frame_id.as_str())
    }

    /// The CDP frame id of each document, the main one first (a semantic node's `doc` indexes it).
    pub fn frame_ids(&self) -> impl Iterator<Item = &str> {
        self.arena.docs.iter().map(|d| d.frame_id.as_str())
    }

    /// How many nodes the joined tree has.
    pub fn node_count(&self) -> usize {
        self.arena.nodes.len()
    }

    /// The element with this index.
    pub fn element(&self, index: ElementIndex) -> Option<&Element> {
        index.of(&self.elements)
    }
}

/// One node of a view's joined tree, read-only.
#[derive(Clone, Copy)]
pub struct NodeRef<'a>(&'a Node);

impl<'a> NodeRef<'a> {
    /// Lower-case tag name; empty for text and other non-element nodes.
    pub fn tag(&self) -> &'a str {
        &self.0.tag
    }
    /// Its backend node id (in its frame's CDP session).
    pub fn backend_id(&self) -> i64 {
        self.0.backend_id
    }
    pub fn attr(&self, name: &str) -> Option<&'a str> {
        self.0.attr(name)
    }
    /// DOM text of a text node.
    pub fn text(&self) -> &'a str {
        &self.0.value
    }
    /// Its border box in viewport CSS pixels and its paint order, when laid out.
    pub fn layout(&self) -> Option<(Rect, i64)> {
        self.0.layout.as_ref().map(|l| (l.rect, l.paint))
    }
    /// Fully transparent (`opacity: 0` on it or an ancestor).
    pub fn opacity_hidden(&self) -> bool {
        self.0.opacity_hidden
    }
}

/// An element with no name from the DOM rules, which the accessibility tree may name.
fn needs_name(e: &Element) -> bool {
    e.label.is_empty() && e.select.is_none() && e.dialog.is_none() && e.reason != Reason::Editable
}

fn render_text(
    arena: &mut Arena,
    elements: &[Element],
    quiet: &std::collections::HashSet<NodeId>,
    scroll: (f64, f64),
    content_size: (f64, f64),
    viewport: Viewport,
) -> String {
    let mut page_content = content::render(arena, elements, quiet);
    if let Some(hint) = scroll_hint(scroll, content_size, viewport) {
        if !page_content.is_empty() {
            page_content.push('\n');
        }
        page_content.push_str(&hint);
    }
    page_content
}

/// A last line telling the model what lies outside the viewport, e.g.
/// `[scroll: 0px above, 2680px below]`.
fn scroll_hint(scroll: (f64, f64), content: (f64, f64), vp: Viewport) -> Option<String> {
    let above = scroll.1.max(0.0).round() as i64;
    let below = (content.1 - scroll.1 - vp.height).max(0.0).round() as i64;
    let left = scroll.0.max(0.0).round() as i64;
    let right = (content.0 - scroll.0 - vp.width).max(0.0).round() as i64;
    let mut parts = Vec::new();
    if above > 0 || below > 0 {
        parts.push(format!("{above}px above, {below}px below"));
    }
    if left > 0 || right > 0 {
        parts.push(format!("{left}px left, {right}px right"));
    }
    (!parts.is_empty()).then(|| format!("[scroll: {}]", parts.join("; ")))
}
