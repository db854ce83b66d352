//! The pure page model: one capture in, everything an agent reads out.
//!
//! Input is a [`Capture`]: the `DOMSnapshot.captureSnapshot` reply of the page
//! and of each out-of-process frame, with layout boxes, computed styles and paint
//! order. [`PageView::build`] joins it once into a single tree and derives the
//! element index, the page text and the hash from it. No I/O, no async: every
//! rule here is unit-testable on recorded captures.
//!
//! ```
//! use sightline_page::{Capture, PageView};
//! let capture: Capture = serde_json::from_str(r#"{"viewport":{"width":800,"height":600},"frames":[]}"#).unwrap();
//! let view = PageView::build(&capture);
//! assert!(view.elements.is_empty());
//! ```

mod arena;
mod capture;
mod content;
mod dialog;
mod geometry;
mod hash;
mod interactive;
mod marks;
pub mod semantic;
mod text;
mod url;

pub use arena::{Arena, NodeId};
/// The joined tree's node type.
pub mod arena_node {
    pub use crate::arena::{Node, NodeKind};
}
pub use capture::{
    AxNode, AxProperty, AxValue, Capture, DomRects, FrameCapture, FrameOwner, JsDialog, RectRequest, Snapshot,
    Viewport, COMPUTED_STYLES,
};
pub use content::token;
pub use geometry::Rect;
pub use hash::{canonical, state_hash};
pub use interactive::{Covered, Descriptor, DialogControl, Element, Reason};
pub use marks::MarkView;
pub use text::{collapse, cut};
pub use url::resolve;

/// Everything derived from one capture.
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
    pub naming_labels: std::collections::HashSet<NodeId>,
    /// The joined tree, for callers that need more than the derived views.
    pub arena: Arena,
}

impl PageView {
    pub fn build(capture: &Capture) -> PageView {
        if let Some(d) = &capture.dialog {
            return dialog::view(d, capture.viewport);
        }
        let mut arena = Arena::build(capture);
        let found = interactive::find(&mut arena);
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
        }
    }

    /// Elements the DOM rules could not name (icon buttons, unlabeled widgets),
    /// by index: the browser layer asks Chromium's accessibility tree for them.
    pub fn unnamed(&self) -> Vec<u32> {
        self.elements
            .iter()
            .filter(|e| e.label.is_empty() && e.select.is_none() && e.dialog.is_none() && e.reason != Reason::Editable)
            .map(|e| e.index)
            .collect()
    }

    /// Give unnamed elements the names Chromium's accessibility tree computed, and
    /// render the text again with them.
    pub fn set_names(&mut self, names: &[(u32, String)]) {
        let mut changed = false;
        for (index, name) in names {
            let name = cut(&collapse(name), 80);
            if let Some(e) = index.checked_sub(1).and_then(|i| self.elements.get_mut(i as usize)) {
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
    pub fn marks(&self) -> Vec<MarkView> {
        marks::marks(&self.arena, &self.elements)
    }

    /// The element with a 1-based index.
    pub fn element(&self, index: u32) -> Option<&Element> {
        index.checked_sub(1).and_then(|i| self.elements.get(i as usize))
    }
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
