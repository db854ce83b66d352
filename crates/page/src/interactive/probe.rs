//! Where an element is and where it can be clicked: its box (or that of its
//! laid-out descendants), the visible line fragments of an inline element, and
//! the sample points tried against the paint-order hit test.

use crate::arena::{Arena, NodeId, NodeKind};
use crate::geometry::Rect;

/// Box of an element, or of its laid-out descendants when it has none (`display: contents`,
/// an inline `<a>` around blocks).
pub(crate) fn element_rect(arena: &Arena, id: NodeId) -> (Rect, Rect) {
    let n = arena.node(id);
    if let Some(l) = &n.layout {
        if !l.rect.is_empty() {
            return (l.rect, n.visible_rect().unwrap_or_default());
        }
    }
    let mut full = Rect::default();
    let mut vis = Rect::default();
    let mut stack: Vec<NodeId> = n.children.clone();
    let mut budget = 2000;
    while let Some(c) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        let cn = arena.node(c);
        if cn.in_ua_shadow {
            continue;
        }
        if let Some(l) = &cn.layout {
            if !l.rect.is_empty() {
                full = full.union(&l.rect);
                if let Some(v) = cn.visible_rect() {
                    vis = vis.union(&v);
                }
                continue;
            }
        }
        stack.extend(cn.children.iter().copied());
    }
    (full, vis)
}

fn sample_points(r: &Rect) -> [(f64, f64); 5] {
    let (cx, cy) = r.center();
    let q = |fx: f64, fy: f64| (r.x + r.w * fx, r.y + r.h * fy);
    [(cx, cy), q(0.25, 0.25), q(0.75, 0.25), q(0.25, 0.75), q(0.75, 0.75)]
}

/// Visible line fragments of the text inside an inline element (a wrapped
/// link's box spans whole lines; its fragments are where it really is).
fn text_fragments(arena: &Arena, id: NodeId, clip: &Rect) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut stack = vec![id];
    while let Some(c) = stack.pop() {
        let n = arena.node(c);
        if n.kind == NodeKind::Text {
            if let Some(l) = &n.layout {
                for b in &l.boxes {
                    let v = b.intersect(clip).intersect(&n.clip);
                    if !v.is_empty() {
                        out.push(v.center());
                    }
                }
            }
        } else {
            stack.extend(n.children.iter().rev().copied());
        }
        if out.len() >= 6 {
            break;
        }
    }
    out
}

/// A point inside the element that no other element covers: on a visible line
/// fragment of an inline element, else at the centre or a quarter point of its
/// visible box. When every point is covered, `Err` with the first element
/// found covering it (`None` when only clipping or the page hid it).
///
/// For a clickable container, a point on its own text first, and never inside
/// `avoid` (the boxes of the interactive elements it holds, which a click there
/// would reach instead).
pub(crate) fn click_point_avoiding(
    arena: &mut Arena,
    id: NodeId,
    visible: &Rect,
    avoid: &[Rect],
) -> Result<(f64, f64), Option<NodeId>> {
    let inline = arena.node(id).layout.as_ref().is_some_and(|l| l.style.display == "inline");
    let mut points = if inline || !avoid.is_empty() { text_fragments(arena, id, visible) } else { Vec::new() };
    points.extend(sample_points(visible));
    let inside = |(x, y): (f64, f64), r: &Rect| x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h;
    points.retain(|&p| !avoid.iter().any(|r| inside(p, r)));
    let mut cover = None;
    for (x, y) in points {
        match arena.cover_at(id, x, y) {
            None => return Ok((x, y)),
            Some(by) => {
                if cover.is_none() {
                    cover = by;
                }
            }
        }
    }
    Err(cover)
}
