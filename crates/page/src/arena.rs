//! Flattens a [`Capture`] into one tree: every frame's documents joined in
//! document order (iframe content under its `<iframe>`, shadow roots under their
//! host), every box in top-level viewport coordinates with the clip its
//! ancestors impose, and a paint-order hit test per document.

use std::collections::HashMap;

use crate::capture::*;
use crate::geometry::{Grid, Rect};

pub type NodeId = u32;

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
    pub fixed: bool,
    pub opacity_zero: bool,
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
    pub frame: usize,
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

pub struct Arena {
    pub nodes: Vec<Node>,
    pub docs: Vec<Doc>,
    pub viewport: Rect,
    grids: Vec<Option<Grid>>,
}

struct Local<'a> {
    frame: usize,
    snap: &'a Snapshot,
    doc: &'a DocumentSnapshot,
    children: Vec<Vec<usize>>,
    layout_of: HashMap<usize, usize>,
    boxes_of: HashMap<usize, Vec<Rect>>,
    rare_input: HashMap<usize, i64>,
    rare_text: HashMap<usize, i64>,
    rare_shadow: HashMap<usize, i64>,
    rare_doc: HashMap<usize, i64>,
    checked: Vec<bool>,
    selected: Vec<bool>,
    clickable: Vec<bool>,
}

fn rare_map(r: &RareString) -> HashMap<usize, i64> {
    r.index.iter().copied().zip(r.value.iter().copied()).collect()
}

fn rare_flags(r: &RareBool, n: usize) -> Vec<bool> {
    let mut v = vec![false; n];
    for &i in &r.index {
        if i < n {
            v[i] = true;
        }
    }
    v
}

impl<'a> Local<'a> {
    fn new(frame: usize, snap: &'a Snapshot, doc: &'a DocumentSnapshot) -> Local<'a> {
        let n = doc.nodes.node_name.len();
        let mut children = vec![Vec::new(); n];
        for (i, &p) in doc.nodes.parent_index.iter().enumerate() {
            if p >= 0 && (p as usize) < n {
                children[p as usize].push(i);
            }
        }
        let mut layout_of = HashMap::with_capacity(doc.layout.node_index.len());
        for (li, &ni) in doc.layout.node_index.iter().enumerate() {
            layout_of.entry(ni).or_insert(li);
        }
        let mut boxes_of: HashMap<usize, Vec<Rect>> = HashMap::new();
        for (li, b) in doc.text_boxes.layout_index.iter().zip(&doc.text_boxes.bounds) {
            boxes_of.entry(*li).or_default().push(Rect::from_slice(b));
        }
        Local {
            frame,
            snap,
            doc,
            children,
            layout_of,
            boxes_of,
            rare_input: rare_map(&doc.nodes.input_value),
            rare_text: rare_map(&doc.nodes.text_value),
            rare_shadow: rare_map(&doc.nodes.shadow_root_type),
            rare_doc: doc
                .nodes
                .content_document_index
                .index
                .iter()
                .copied()
                .zip(doc.nodes.content_document_index.value.iter().copied())
                .collect(),
            checked: rare_flags(&doc.nodes.input_checked, n),
            selected: rare_flags(&doc.nodes.option_selected, n),
            clickable: rare_flags(&doc.nodes.is_clickable, n),
        }
    }
}

impl Arena {
    pub fn build(capture: &Capture) -> Arena {
        let viewport = Rect::new(0.0, 0.0, capture.viewport.width, capture.viewport.height);
        let mut arena = Arena { nodes: Vec::new(), docs: Vec::new(), viewport, grids: Vec::new() };
        let Some(main) = capture.frames.first() else { return arena };
        if main.snapshot.documents.is_empty() {
            return arena;
        }
        let mut b = Builder { capture, arena: &mut arena, pending_oopif: HashMap::new() };
        for (fi, f) in capture.frames.iter().enumerate().skip(1) {
            if let Some(owner) = f.owner {
                b.pending_oopif.insert((owner.frame, owner.backend_node_id), fi);
            }
        }
        b.add_document(0, 0, None, None, viewport);
        arena.grids = (0..arena.docs.len()).map(|_| None).collect();
        arena
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// True if `a` is `b` or one of its ancestors (across shadow roots and frames).
    pub fn is_ancestor_or_self(&self, a: NodeId, b: NodeId) -> bool {
        let mut cur = Some(b);
        while let Some(c) = cur {
            if c == a {
                return true;
            }
            cur = self.nodes[c as usize].parent;
        }
        false
    }

    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.nodes[id as usize].parent, move |&p| self.nodes[p as usize].parent)
    }

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

    /// The nodes of the top paint layer at a point of one document.
    fn top_layer(&mut self, doc: usize, x: f64, y: f64) -> Vec<NodeId> {
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

    fn related(&self, a: NodeId, b: NodeId) -> bool {
        self.is_ancestor_or_self(a, b) || self.is_ancestor_or_self(b, a)
    }

    /// Whether `id` is covered at a viewport point: `None` when it is not (the
    /// top paint layer there holds `id`, a relative of it, or nothing), else
    /// `Some(by)`. Nodes of one paint layer are in flow and do not overlap, so
    /// only a higher layer covers. Descends into the iframe holding `id`.
    pub fn cover_at(&mut self, id: NodeId, x: f64, y: f64) -> Option<Option<NodeId>> {
        let mut doc = 0usize;
        loop {
            let top = self.top_layer(doc, x, y);
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
            // `id` itself sits in the top layer here (in-flow siblings share a layer).
            let own = self.nodes[id as usize].layout.as_ref().map(|l| l.paint);
            let best = self.nodes[top[0] as usize].layout.as_ref().map(|l| l.paint);
            if own.is_some() && own == best && self.nodes[id as usize].doc == doc {
                return None;
            }
            return Some(top.last().copied());
        }
    }
}

struct Builder<'c, 'a> {
    capture: &'c Capture,
    arena: &'a mut Arena,
    pending_oopif: HashMap<(usize, i64), usize>,
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
        fixed: s(S_POSITION) == "fixed",
        opacity_zero: opacity < 0.01,
    }
}

impl Builder<'_, '_> {
    /// Adds one document (and, recursively, its frames); returns its doc index.
    fn add_document(
        &mut self,
        frame: usize,
        doc_index: usize,
        parent: Option<NodeId>,
        owner: Option<NodeId>,
        clip: Rect,
    ) -> Option<usize> {
        let fc = &self.capture.frames[frame];
        let dsnap = fc.snapshot.documents.get(doc_index)?;
        let local = Local::new(frame, &fc.snapshot, dsnap);
        if local.doc.nodes.node_name.is_empty() {
            return None;
        }
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
            frame,
            root: self.arena.nodes.len() as NodeId,
            owner,
            scroll,
            content: (dsnap.content_width, dsnap.content_height),
            clip,
        });
        let pointer: std::collections::HashSet<i64> = fc.pointer_listeners.iter().copied().collect();
        let dx = origin.0 - scroll.0;
        let dy = origin.1 - scroll.1;
        let ctx = DocCtx { local: &local, doc_id, dx, dy, doc_clip: clip, pointer: &pointer };
        self.add_node(&ctx, 0, parent, false, false, clip);
        Some(doc_id)
    }

    fn add_node(
        &mut self,
        ctx: &DocCtx,
        i: usize,
        parent: Option<NodeId>,
        in_ua: bool,
        parent_opacity_hidden: bool,
        clip: Rect,
    ) {
        let l = ctx.local;
        let nodes = &l.doc.nodes;
        let snap = l.snap;
        let node_type = nodes.node_type.get(i).copied().unwrap_or(0);
        let raw_name = snap.str(nodes.node_name.get(i).copied().unwrap_or(-1));
        let shadow = l.rare_shadow.get(&i).map(|&v| snap.str(v));
        let kind = match node_type {
            1 => NodeKind::Element,
            3 => NodeKind::Text,
            9 => NodeKind::Document,
            11 if shadow.is_some() => NodeKind::ShadowRoot,
            _ => NodeKind::Other,
        };
        let in_ua = in_ua || shadow == Some("user-agent");
        let attrs = nodes
            .attributes
            .get(i)
            .map(|a| {
                a.chunks(2)
                    .map(|p| (snap.str(p[0]).to_ascii_lowercase(), snap.str(*p.get(1).unwrap_or(&-1)).to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let layout = l.layout_of.get(&i).map(|&li| {
            let lt = &l.doc.layout;
            let rect = Rect::from_slice(lt.bounds.get(li).map(Vec::as_slice).unwrap_or(&[])).offset(ctx.dx, ctx.dy);
            let style = lt.styles.get(li).map(|s| parse_style(snap, s)).unwrap_or_default();
            let text = lt.text.get(li).copied().filter(|&t| t >= 0).map(|t| snap.str(t).to_string());
            let client = lt.client_rects.get(li).filter(|c| c.len() == 4).map(|c| Rect::from_slice(c));
            let boxes =
                l.boxes_of.get(&li).map(|v| v.iter().map(|b| b.offset(ctx.dx, ctx.dy)).collect()).unwrap_or_default();
            Layout { rect, style, paint: lt.paint_orders.get(li).copied().unwrap_or(0), text, client, boxes }
        });
        let opacity_hidden = parent_opacity_hidden || layout.as_ref().is_some_and(|l| l.style.opacity_zero);
        let tag = if kind == NodeKind::Element { raw_name.to_ascii_lowercase() } else { String::new() };
        let backend_id = nodes.backend_node_id.get(i).copied().unwrap_or(0);
        let fixed = layout.as_ref().is_some_and(|l| l.style.fixed);
        let node_clip = if fixed { ctx.doc_clip } else { clip };
        let id = self.arena.nodes.len() as NodeId;
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
            checked: l.checked[i],
            selected: l.selected[i],
            clickable: l.clickable[i],
            pointer_listener: ctx.pointer.contains(&backend_id),
            in_ua_shadow: in_ua,
            opacity_hidden,
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
        for &c in &l.children[i] {
            self.add_node(ctx, c, Some(id), in_ua, opacity_hidden, child_clip);
        }
        // Frames: a same-process document in this snapshot, or an OOPIF capture.
        if kind == NodeKind::Element {
            let content_clip = |arena: &Arena| {
                let n = &arena.nodes[id as usize];
                match &n.layout {
                    Some(lay) => {
                        let c = lay.client.unwrap_or_default();
                        Rect::new(lay.rect.x + c.x, lay.rect.y + c.y, c.w, c.h).intersect(&node_clip)
                    }
                    None => Rect::default(),
                }
            };
            if let Some(&d) = l.rare_doc.get(&i) {
                let cc = content_clip(self.arena);
                self.add_document(l.frame, d as usize, Some(id), Some(id), cc);
            } else if let Some(&f) = self.pending_oopif.get(&(l.frame, backend_id)) {
                let cc = content_clip(self.arena);
                self.add_document(f, 0, Some(id), Some(id), cc);
            }
        }
    }
}

struct DocCtx<'a, 'b> {
    local: &'a Local<'b>,
    doc_id: usize,
    dx: f64,
    dy: f64,
    doc_clip: Rect,
    pointer: &'a std::collections::HashSet<i64>,
}
