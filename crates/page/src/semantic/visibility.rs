//! The visibility of a semantic node, from layout, clipping and paint order
//! (the closed vocabulary of [`Visibility`]), and a point to click when it is
//! in the viewport.

use crate::arena::{Arena, NodeId};
use crate::geometry::Rect;
use crate::interactive;

use super::Visibility;

/// Visibility from layout, clipping and paint order; and a click point when visible.
pub(super) fn classify(arena: &mut Arena, id: NodeId, near: &Rect) -> (Visibility, Option<(f64, f64)>) {
    let n = arena.node(id);
    let doc_has_layout = arena.nodes.iter().skip(arena.docs[n.doc].root as usize).take(4).any(|m| m.layout.is_some());
    if !doc_has_layout {
        return (Visibility::Unknown, None);
    }
    // A transparent control is where its box is: a pointer there reaches it.
    let (full, visible) = interactive::own_rect(arena, id);
    if full.is_empty() || !full.x.is_finite() || !full.y.is_finite() {
        return (Visibility::NoLayout, None);
    }
    if !visible.is_empty() {
        let points = [
            visible.center(),
            (visible.x + visible.w * 0.25, visible.y + visible.h * 0.25),
            (visible.x + visible.w * 0.75, visible.y + visible.h * 0.75),
        ];
        let mut covered_by_overlay = true;
        for (x, y) in points {
            match arena.cover_at(id, x, y) {
                None => return (Visibility::InViewport, Some((x, y))),
                Some(by) => {
                    let positioned =
                        by.and_then(|b| arena.node(b).layout.as_ref()).is_some_and(|l| l.style.fixed || l.paint > 0);
                    covered_by_overlay &= positioned;
                }
            }
        }
        return (if covered_by_overlay { Visibility::PageOccluded } else { Visibility::InViewport }, None);
    }
    if !full.intersect(near).is_empty() {
        (Visibility::NearViewport, None)
    } else {
        (Visibility::Offscreen, None)
    }
}
