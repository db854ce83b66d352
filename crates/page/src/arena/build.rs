//! Building the joined tree from a capture: each frame's documents walked
//! with an explicit stack (iframe content under its `<iframe>`, shadow roots
//! under their host), styles parsed from the snapshot's string table, boxes
//! placed in top-level viewport coordinates, and inertness marked.

use std::collections::HashMap;

use crate::capture::*;
use crate::geometry::Rect;

use super::local::Local;
use super::*;

impl Arena {
    pub fn build(capture: &Capture) -> Arena {
        let viewport = Rect::new(0.0, 0.0, capture.viewport.width, capture.viewport.height);
        let mut arena = Arena {
            nodes: Vec::new(),
            docs: Vec::new(),
            viewport,
            grids: Vec::new(),
            subtree_end: Vec::new(),
            active_descendants: Default::default(),
        };
        let Some(main) = capture.frames.first() else { return arena };
        if main.snapshot.documents.is_empty() {
            return arena;
        }
        let mut b =
            Builder { capture, arena: &mut arena, pending_oopif: HashMap::new(), seen_docs: Default::default() };
        for (fi, f) in capture.frames.iter().enumerate().skip(1) {
            if let Some(owner) = f.owner {
                b.pending_oopif.insert((owner.frame, owner.backend_node_id), fi);
            }
        }
        b.seen_docs.insert((0, 0));
        b.run();
        arena.grids = (0..arena.docs.len()).map(|_| None).collect();
        arena.subtree_end = (0..arena.nodes.len() as NodeId).collect();
        for i in (0..arena.nodes.len()).rev() {
            if let Some(p) = arena.nodes[i].parent {
                let end = arena.subtree_end[i];
                let pe = &mut arena.subtree_end[p as usize];
                *pe = (*pe).max(end);
            }
        }
        arena.mark_inert();
        arena
    }

    /// Marks what a person cannot use although it may be painted: `inert`
    /// subtrees, and everything outside an open modal `<dialog>` of its document.
    /// Node ids are in document order, so parents are decided before children.
    fn mark_inert(&mut self) {
        // A dialog opened with showModal() is in the top layer with `position: fixed`
        // (the UA rule for `dialog:modal`); one opened with show() is absolute.
        let mut modal_of_doc: HashMap<usize, NodeId> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.tag == "dialog" && n.has_attr("open") && n.layout.as_ref().is_some_and(|l| l.style.fixed) {
                modal_of_doc.insert(n.doc, i as NodeId);
            }
        }
        let mut under_modal = vec![false; self.nodes.len()];
        for i in 0..self.nodes.len() {
            let n = &self.nodes[i];
            let parent = n.parent.map(|p| p as usize);
            let is_modal = modal_of_doc.get(&n.doc) == Some(&(i as NodeId));
            under_modal[i] = is_modal || parent.is_some_and(|p| under_modal[p] && self.nodes[p].doc == n.doc);
            let blocked_by_modal = modal_of_doc.contains_key(&n.doc) && !under_modal[i];
            let inherited = parent.is_some_and(|p| {
                let pn = &self.nodes[p];
                // Inertness crosses into frames and never leaves an open modal.
                pn.inert && (pn.doc != n.doc || !under_modal[i] || pn.has_attr("inert"))
            });
            let own = n.has_attr("inert");
            self.nodes[i].inert = own || blocked_by_modal || inherited;
        }
    }
}

struct Builder<'c, 'a> {
    capture: &'c Capture,
    arena: &'a mut Arena,
    pending_oopif: HashMap<(usize, i64), usize>,
    seen_docs: std::collections::HashSet<(usize, usize)>,
}

/// `transparent`, `rgba(…, 0)`, or not captured at all.
fn is_transparent(color: &str) -> bool {
    let c = color.trim();
    c.is_empty()
        || c == "transparent"
        || (c.starts_with("rgba(")
            && c.trim_end_matches(')')
                .rsplit(',')
                .next()
                .is_some_and(|a| a.trim().parse::<f64>().is_ok_and(|a| a < 0.01)))
}

fn parse_style(snap: &Snapshot, ids: &[i64]) -> Style {
    let s = |i: usize| ids.get(i).map(|&v| snap.str(v)).unwrap_or("");
    let opacity = s(S_OPACITY).parse::<f64>().unwrap_or(1.0);
    let visibility = s(S_VISIBILITY);
    let clips = |v: &str| matches!(v, "hidden" | "clip" | "scroll" | "auto");
    Style {
        display: s(S_DISPLAY).to_string(),
        visible: !matches!(visibility, "hidden" | "collapse"),
        cursor_pointer: s(S_CURSOR) == "pointer",
        pointer_events_none: s(S_POINTER_EVENTS) == "none",
        clips_x: clips(s(S_OVERFLOW_X)),
        clips_y: clips(s(S_OVERFLOW_Y)),
        scrolls_y: matches!(s(S_OVERFLOW_Y), "auto" | "scroll"),
        fixed: s(S_POSITION) == "fixed",
        opacity_zero: opacity < 0.01,
        white_space: WhiteSpace::parse(s(S_WHITE_SPACE)),
        transparent: is_transparent(s(S_BACKGROUND_COLOR)) && matches!(s(S_BACKGROUND_IMAGE), "" | "none"),
    }
}

/// One step of the tree walk. The walk uses an explicit stack: pages choose
/// their depth, so nothing here recurses by DOM depth.
enum Task {
    Document {
        frame: usize,
        doc_index: usize,
        parent: Option<NodeId>,
        owner: Option<NodeId>,
        clip: Rect,
    },
    Node {
        ctx: usize,
        i: usize,
        parent: Option<NodeId>,
        in_ua: bool,
        opacity_hidden: bool,
        collapsed: bool,
        clip: Rect,
    },
}

impl<'c> Builder<'c, '_> {
    fn run(&mut self) {
        let mut ctxs: Vec<DocCtx<'c>> = Vec::new();
        let mut stack =
            vec![Task::Document { frame: 0, doc_index: 0, parent: None, owner: None, clip: self.arena.viewport }];
        while let Some(task) = stack.pop() {
            match task {
                Task::Document { frame, doc_index, parent, owner, clip } => {
                    if let Some(ctx) = self.add_document(frame, doc_index, owner, clip) {
                        ctxs.push(ctx);
                        stack.push(Task::Node {
                            ctx: ctxs.len() - 1,
                            i: 0,
                            parent,
                            in_ua: false,
                            opacity_hidden: false,
                            collapsed: false,
                            clip,
                        });
                    }
                }
                Task::Node { ctx, i, parent, in_ua, opacity_hidden, collapsed, clip } => {
                    self.add_node(&ctxs[ctx], ctx, i, parent, in_ua, opacity_hidden, collapsed, clip, &mut stack);
                }
            }
        }
    }

    /// Registers one document; its nodes are walked from the returned context.
    fn add_document(
        &mut self,
        frame: usize,
        doc_index: usize,
        owner: Option<NodeId>,
        clip: Rect,
    ) -> Option<DocCtx<'c>> {
        let fc = self.capture.frames.get(frame)?;
        let dsnap = fc.snapshot.documents.get(doc_index)?;
        if dsnap.nodes.node_name.is_empty() {
            return None;
        }
        let local = Local::new(frame, &fc.snapshot, dsnap);
        // Where this document's (0,0) lands in the top-level viewport.
        let origin = match owner {
            Some(o) => {
                let n = &self.arena.nodes[o as usize];
                let l = n.layout.as_ref();
                let r = l.map(|l| l.rect).unwrap_or_default();
                let c = l.and_then(|l| l.client).unwrap_or_default();
                (r.x + c.x, r.y + c.y)
            }
            None => (0.0, 0.0),
        };
        let scroll = (dsnap.scroll_offset_x, dsnap.scroll_offset_y);
        let doc_id = self.arena.docs.len();
        let snap = &fc.snapshot;
        self.arena.docs.push(Doc {
            frame_id: snap.str(dsnap.frame_id).to_string(),
            url: snap.str(dsnap.document_url).to_string(),
            title: snap.str(dsnap.title).to_string(),
            base_url: snap.str(dsnap.base_url).to_string(),
            root: self.arena.nodes.len() as NodeId,
            owner,
            scroll,
            content: (dsnap.content_width, dsnap.content_height),
            clip,
        });
        let pointer = fc.pointer_listeners.iter().copied().collect();
        Some(DocCtx {
            local,
            doc_id,
            dx: origin.0 - scroll.0,
            dy: origin.1 - scroll.1,
            doc_clip: clip,
            pointer,
            focused: fc.focused,
            visited: std::cell::RefCell::new(vec![false; dsnap.nodes.node_name.len()]),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn add_node(
        &mut self,
        ctx: &DocCtx<'c>,
        ctx_index: usize,
        i: usize,
        parent: Option<NodeId>,
        in_ua: bool,
        parent_opacity_hidden: bool,
        collapsed: bool,
        clip: Rect,
        stack: &mut Vec<Task>,
    ) {
        let l = &ctx.local;
        {
            let mut seen = ctx.visited.borrow_mut();
            match seen.get_mut(i) {
                Some(v) if !*v => *v = true,
                _ => return,
            }
        }
        let nodes = &l.doc.nodes;
        let snap = l.snap;
        let node_type = nodes.node_type.get(i).copied().unwrap_or(0);
        let raw_name = snap.str(nodes.node_name.get(i).copied().unwrap_or(-1));
        let shadow = l.rare_shadow.get(&i).map(|&v| snap.str(v));
        let pseudo = l.rare_pseudo.get(&i).map(|&v| snap.str(v));
        let kind = match node_type {
            1 => NodeKind::Element,
            3 => NodeKind::Text,
            9 => NodeKind::Document,
            11 if shadow.is_some() => NodeKind::ShadowRoot,
            _ => NodeKind::Other,
        };
        let in_ua = in_ua || shadow == Some("user-agent");
        let attrs: Vec<(String, String)> = nodes
            .attributes
            .get(i)
            .map(|a| {
                a.chunks(2)
                    .map(|p| (snap.str(p[0]).to_ascii_lowercase(), snap.str(*p.get(1).unwrap_or(&-1)).to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let lt = &l.doc.layout;
        // Content of a closed <details> has boxes in Chromium's snapshot, but is not rendered.
        let layout = l.layout_of.get(&i).filter(|_| !collapsed).map(|&li| {
            let rect = Rect::from_slice(lt.bounds.get(li).map(Vec::as_slice).unwrap_or(&[])).offset(ctx.dx, ctx.dy);
            let style = lt.styles.get(li).map(|s| parse_style(snap, s)).unwrap_or_default();
            let text = lt.text.get(li).copied().filter(|&t| t >= 0).map(|t| snap.str(t).to_string());
            let client = lt.client_rects.get(li).filter(|c| c.len() == 4).map(|c| Rect::from_slice(c));
            let boxes =
                l.boxes_of.get(&li).map(|v| v.iter().map(|b| b.offset(ctx.dx, ctx.dy)).collect()).unwrap_or_default();
            let scroll = lt.scroll_rects.get(li).filter(|s| s.len() == 4).map(|s| (s[1], s[3]));
            Layout { rect, style, paint: lt.paint_orders.get(li).copied().unwrap_or(0), text, client, boxes, scroll }
        });
        let generated = match pseudo {
            Some("before" | "after" | "::before" | "::after") if layout.is_some() => {
                let t: String = l
                    .texts_of
                    .get(&i)
                    .into_iter()
                    .flatten()
                    .filter_map(|&li| lt.text.get(li).copied())
                    .map(|t| snap.str(t))
                    .collect();
                // CSS turns `content: "\0"` into U+FFFD: a placeholder (rustdoc's
                // zero-width marker), not text anyone reads.
                let t = if t.contains('\u{FFFD}') { t.replace('\u{FFFD}', "") } else { t };
                Some(t).filter(|t| !t.trim().is_empty())
            }
            _ => None,
        };
        let opacity_hidden = parent_opacity_hidden || layout.as_ref().is_some_and(|l| l.style.opacity_zero);
        let tag = if kind == NodeKind::Element { raw_name.to_ascii_lowercase() } else { String::new() };
        let backend_id = nodes.backend_node_id.get(i).copied().unwrap_or(0);
        let fixed = layout.as_ref().is_some_and(|l| l.style.fixed);
        let node_clip = if fixed { ctx.doc_clip } else { clip };
        let id = self.arena.nodes.len() as NodeId;
        let closed_details = tag == "details" && !attrs.iter().any(|(k, _)| k == "open");
        self.arena.nodes.push(Node {
            parent,
            children: Vec::new(),
            kind,
            tag,
            attrs,
            value: snap.str(nodes.node_value.get(i).copied().unwrap_or(-1)).to_string(),
            backend_id,
            frame: l.frame,
            doc: ctx.doc_id,
            layout,
            input_value: l.rare_input.get(&i).map(|&v| snap.str(v).to_string()),
            text_value: l.rare_text.get(&i).map(|&v| snap.str(v).to_string()),
            checked: l.checked.get(i).copied().unwrap_or(false),
            selected: l.selected.get(i).copied().unwrap_or(false),
            clickable: l.clickable.get(i).copied().unwrap_or(false),
            pointer_listener: ctx.pointer.contains(&backend_id),
            in_ua_shadow: in_ua,
            opacity_hidden,
            inert: false,
            generated,
            pseudo: pseudo.is_some(),
            focused: ctx.focused == Some(backend_id) && kind == NodeKind::Element,
            clip: node_clip,
        });
        if let Some(p) = parent {
            self.arena.nodes[p as usize].children.push(id);
        }
        // The clip our children inherit.
        let n = &self.arena.nodes[id as usize];
        let mut child_clip = node_clip;
        if let Some(lay) = &n.layout {
            if n.tag != "html" && n.tag != "body" && (lay.style.clips_x || lay.style.clips_y) {
                let r = lay.rect;
                let bound = Rect::new(
                    if lay.style.clips_x { r.x } else { f64::MIN / 4.0 },
                    if lay.style.clips_y { r.y } else { f64::MIN / 4.0 },
                    if lay.style.clips_x { r.w } else { f64::MAX / 2.0 },
                    if lay.style.clips_y { r.h } else { f64::MAX / 2.0 },
                );
                child_clip = child_clip.intersect(&bound);
            }
        }
        // Frames: a same-process document in this snapshot, or an OOPIF capture. Walked
        // after this element's children (pushed first, popped last).
        if kind == NodeKind::Element {
            let content_clip = match &n.layout {
                Some(lay) => {
                    let c = lay.client.unwrap_or_default();
                    Rect::new(lay.rect.x + c.x, lay.rect.y + c.y, c.w, c.h).intersect(&node_clip)
                }
                None => Rect::default(),
            };
            let frame = if let Some(&d) = l.rare_doc.get(&i) {
                Some((l.frame, d.max(0) as usize))
            } else {
                self.pending_oopif.remove(&(l.frame, backend_id)).map(|f| (f, 0))
            };
            if let Some((frame, doc_index)) = frame {
                // A document is joined once, whatever the ids claim.
                if self.seen_docs.insert((frame, doc_index)) {
                    stack.push(Task::Document {
                        frame,
                        doc_index,
                        parent: Some(id),
                        owner: Some(id),
                        clip: content_clip,
                    });
                }
            }
        }
        // Children of a closed <details>, other than its first <summary>, are not rendered.
        let first_summary = if closed_details {
            l.children.get(i).and_then(|cs| {
                cs.iter()
                    .copied()
                    .find(|&c| snap.str(nodes.node_name.get(c).copied().unwrap_or(-1)).eq_ignore_ascii_case("summary"))
            })
        } else {
            None
        };
        if let Some(children) = l.children.get(i) {
            // `::before` and `::marker` come first and `::after` last, as they render.
            let rank = |c: usize| match l.rare_pseudo.get(&c).map(|&v| snap.str(v)) {
                Some("before" | "marker" | "::before" | "::marker") => 0,
                Some("after" | "::after") => 2,
                _ => 1,
            };
            let mut ordered = children.clone();
            if ordered.iter().any(|c| l.rare_pseudo.contains_key(c)) {
                ordered.sort_by_key(|&c| rank(c));
            }
            for &c in ordered.iter().rev() {
                let collapsed = collapsed || (closed_details && Some(c) != first_summary);
                stack.push(Task::Node {
                    ctx: ctx_index,
                    i: c,
                    parent: Some(id),
                    in_ua,
                    opacity_hidden,
                    collapsed,
                    clip: child_clip,
                });
            }
        }
    }
}

struct DocCtx<'a> {
    local: Local<'a>,
    doc_id: usize,
    dx: f64,
    dy: f64,
    doc_clip: Rect,
    pointer: std::collections::HashSet<i64>,
    focused: Option<i64>,
    /// Nodes of this document already joined: a capture whose parent links form a
    /// cycle (or list a node twice) still gives each node once.
    visited: std::cell::RefCell<Vec<bool>>,
}
