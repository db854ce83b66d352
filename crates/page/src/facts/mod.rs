//! What one capture says about its nodes, worked out once and shared by every
//! view of it (the element index, the marks and the semantic_v2 tree):
//! which `<label>`s name which controls, which elements are interactive, and
//! the accessibility tree joined to the arena. [`candidates`] holds the rules
//! for what counts as interactive.

mod candidates;

use std::collections::HashMap;

use crate::arena::{Arena, NodeId};
use crate::capture::{AxNode, AxValue, Capture};
use crate::text::{accessible_text, collapse, is_private_use};

pub use candidates::Reason;
pub(crate) use candidates::{GRIP_CLASSES, LABELABLE, NATIVE};

#[derive(Debug, Default, Clone)]
pub(crate) struct Facts {
    /// The `<label>`s of each control (tied by `for` or by containing it).
    pub labels_of: HashMap<NodeId, Vec<NodeId>>,
    /// Every interactive element, visible or not, in document order, with why it counts.
    pub candidates: Vec<(NodeId, Reason)>,
    /// Each node's accessibility node, joined by (frame, backend node id); empty
    /// when the capture carries no accessibility tree.
    pub ax: HashMap<NodeId, AxNode>,
    /// Out-of-process frames captured.
    pub oopif_frames: usize,
}

impl Facts {
    /// Why `id` is interactive, if it is.
    pub fn reason(&self, id: NodeId) -> Option<Reason> {
        // Candidates are in document order, which is id order.
        self.candidates.binary_search_by_key(&id, |&(c, _)| c).ok().map(|i| self.candidates[i].1)
    }

    pub fn gather(arena: &Arena, capture: &Capture) -> Facts {
        let (label_set, labels_of) = candidates::labels(arena);
        let candidates = candidates::candidates(arena, &label_set);
        Facts {
            labels_of,
            candidates,
            ax: ax_join(arena, capture),
            oopif_frames: capture.frames.len().saturating_sub(1),
        }
    }
}

fn ax_join(arena: &Arena, capture: &Capture) -> HashMap<NodeId, AxNode> {
    let mut by_backend: HashMap<(usize, i64), &AxNode> = HashMap::new();
    for (fi, f) in capture.frames.iter().enumerate() {
        for n in f.ax.iter().flatten() {
            if let Some(b) = n.backend_dom_node_id {
                by_backend.insert((fi, b), n);
            }
        }
    }
    if by_backend.is_empty() {
        return HashMap::new();
    }
    let wbrs = wbr_prefix(arena);
    arena
        .ids()
        .filter_map(|id| {
            let n = arena.node(id);
            by_backend
                .get(&(n.frame, n.backend_id))
                .map(|&a| (id, rendered_spacing(arena, &wbrs, id, without_icon_glyphs(a.clone()))))
        })
        .collect()
}

/// Chromium puts a space in a name where a `<wbr>` allows a break
/// (`assert_ eq`); the rendered text has none (`assert_eq`). Where the two differ
/// by whitespace alone, in an element holding a `<wbr>`, the rendered text's
/// spacing is kept.
///
/// Likewise for U+FFFD, which CSS makes of `content: "\0"` (rustdoc's invisible
/// zero-width marker before "🔬"): it is not text (see `Arena`), and Chromium's
/// name has it with a space after.
fn rendered_spacing(arena: &Arena, wbrs: &[u32], id: NodeId, mut a: AxNode) -> AxNode {
    let Some(name) = a.name.as_ref().and_then(AxValue::as_str) else { return a };
    let end = arena.subtree_end(id) as usize;
    let holds_wbr = wbrs.get(end + 1).zip(wbrs.get(id as usize)).is_some_and(|(e, b)| e > b);
    let replacement = name.contains('\u{FFFD}');
    if !(replacement || (name.contains(' ') && holds_wbr)) {
        return a;
    }
    let text = collapse(&accessible_text(arena, id, 400));
    // Only a name from content, and only where the rendered text has no U+FFFD
    // of its own (a lone surrogate in the page's text is a U+FFFD that stays).
    let from_content = !arena.node(id).has_attr("aria-label") && !arena.node(id).has_attr("aria-labelledby");
    if !from_content || (replacement && text.contains('\u{FFFD}')) {
        return a;
    }
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace() && *c != '\u{FFFD}').collect::<String>();
    if !text.is_empty() && squeeze(&text) == squeeze(name) {
        a.name = Some(AxValue::string(text));
    }
    a
}

/// How many `<wbr>` come before each node in document order (one more entry
/// at the end), so that whether a subtree holds one is a subtraction.
fn wbr_prefix(arena: &Arena) -> Vec<u32> {
    let mut out = Vec::with_capacity(arena.nodes.len() + 1);
    let mut count = 0;
    out.push(0);
    for n in &arena.nodes {
        count += u32::from(n.tag == "wbr");
        out.push(count);
    }
    out
}

/// Chromium names an icon-font button by its glyph (`button "\u{f1f8}"`), a
/// private-use character no one reads. The glyphs are left out of its names, as
/// out of every text we read; a name made only of them is no name, so the
/// author's title or label applies (as the DOM rules give it).
fn without_icon_glyphs(mut a: AxNode) -> AxNode {
    if let Some(s) = a.name.as_ref().and_then(AxValue::as_str) {
        if s.chars().any(is_private_use) {
            let kept: String = s.chars().filter(|&c| !is_private_use(c)).collect();
            a.name = (!kept.trim().is_empty()).then_some(AxValue::string(kept));
        }
    }
    a
}
