//! The paint-order hit test: which element a person would hit at a point,
//! per document, through a lazily built grid of the painted boxes.

use crate::geometry::Grid;

use super::{Arena, NodeId, NodeKind, REPLACED};

impl Arena {
    fn ensure_grid(&mut self, doc: usize) {
        if self.grids[doc].is_none() {
            let area = self.docs[doc].clip;
            let mut g = Grid::new(area, 96.0);
            for (i, n) in self.nodes.iter().enumerate() {
                // Text never blocks a click on its own: its element's box does.
                if n.doc != doc || n.in_ua_shadow || n.kind == NodeKind::Text {
                    continue;
                }
                let Some(l) = &n.layout else { continue };
                if l.style.pointer_events_none {
                    continue;
                }
                if let Some(r) = n.visible_rect() {
                    g.insert(&r, i as u32);
                }
            }
            self.grids[doc] = Some(g);
        }
    }

    /// The nodes of the top paint layer at a point of one document. With
    /// `painted_only`, boxes that paint nothing there (no background, not a
    /// replaced element) are looked through, as the eye does.
    fn top_layer(&mut self, doc: usize, x: f64, y: f64, painted_only: bool) -> Vec<NodeId> {
        self.ensure_grid(doc);
        let grid = self.grids[doc].as_ref().expect("grid just built");
        let mut best = i64::MIN;
        let mut top = Vec::new();
        for &id in grid.at(x, y) {
            let n = &self.nodes[id as usize];
            let l = n.layout.as_ref().expect("grid holds laid-out nodes");
            if !l.rect.intersect(&n.clip).contains(x, y) {
                continue;
            }
            if painted_only && l.style.transparent && !REPLACED.contains(&n.tag.as_str()) {
                continue;
            }
            if l.paint > best {
                best = l.paint;
                top.clear();
            }
            if l.paint == best {
                top.push(id);
            }
        }
        top
    }

    /// The paint layer `id` is painted in: its own box's, else that of the
    /// nearest ancestor with a box in the same document (`display: contents`).
    fn paint_of(&self, id: NodeId) -> Option<i64> {
        let doc = self.nodes[id as usize].doc;
        std::iter::once(id)
            .chain(self.ancestors(id))
            .take_while(|&a| self.nodes[a as usize].doc == doc)
            .find_map(|a| self.nodes[a as usize].layout.as_ref().map(|l| l.paint))
    }

    fn related(&self, a: NodeId, b: NodeId) -> bool {
        self.is_ancestor_or_self(a, b) || self.is_ancestor_or_self(b, a)
    }

    /// Whether `id` is covered at a viewport point: `None` when it is not (the
    /// top paint layer there holds `id`, a relative of it, or nothing), else
    /// `Some(by)`. Nodes of one paint layer are in flow and do not overlap, so
    /// only a higher layer covers. Descends into the iframe holding `id`.
    pub fn cover_at(&mut self, id: NodeId, x: f64, y: f64) -> Option<Option<NodeId>> {
        self.cover_at_with(id, x, y, false)
    }

    /// Like [`Arena::cover_at`], for what the eye sees: a box that paints nothing
    /// (a transparent positioned list over a text) does not hide what is under it,
    /// although it would take a click.
    pub fn visually_covered_at(&mut self, id: NodeId, x: f64, y: f64) -> bool {
        self.cover_at_with(id, x, y, true).is_some()
    }

    fn cover_at_with(&mut self, id: NodeId, x: f64, y: f64, painted_only: bool) -> Option<Option<NodeId>> {
        let mut doc = 0usize;
        loop {
            let top = self.top_layer(doc, x, y, painted_only);
            if top.is_empty() {
                return None;
            }
            if let Some(&frame_owner) =
                top.iter().find(|&&t| self.is_ancestor_or_self(t, id) && self.docs.iter().any(|d| d.owner == Some(t)))
            {
                if let Some(d) = self.docs.iter().position(|d| d.owner == Some(frame_owner) && d.clip.contains(x, y)) {
                    if self.is_ancestor_or_self(self.docs[d].root, id) {
                        doc = d;
                        continue;
                    }
                }
            }
            if top.iter().any(|&t| self.related(t, id)) {
                return None;
            }
            // Only a layer painted *after* `id`'s own covers it: `id` in the top layer
            // (in-flow siblings share a layer), or in a later one (a positioned
            // caption over a canvas, whose box paints nothing and was looked
            // through), is seen.
            let own = self.paint_of(id);
            let best = self.nodes[top[0] as usize].layout.as_ref().map(|l| l.paint);
            if let (Some(own), Some(best)) = (own, best) {
                if own >= best && self.nodes[id as usize].doc == doc {
                    return None;
                }
            }
            return Some(top.last().copied());
        }
    }
}
