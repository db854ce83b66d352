//! One capture: the CDP calls that fill the page model's input, run concurrently.
//!
//! Per capture: `DOMSnapshot.captureSnapshot` on the page session (covering the
//! main frame, same-process iframes and shadow roots), the same on each
//! out-of-process iframe's session plus `DOM.getFrameOwner` to place it, and
//! `Page.captureScreenshot` when asked. Nothing walks the accessibility tree.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::Deserialize;
use serde_json::Value;
use sightline_cdp::protocol::accessibility::{self, GetFullAxTree, GetPartialAxTree};
use sightline_cdp::protocol::dom::{DescribeNode, GetFrameOwner, ResolveNode};
use sightline_cdp::protocol::dom_snapshot::CaptureSnapshot;
use sightline_cdp::protocol::page::CaptureScreenshot;
use sightline_cdp::protocol::runtime::{CallArgument, CallFunctionOn, Evaluate, GetProperties};
use sightline_cdp::{BackendNodeId, FrameId, SessionId};
use sightline_page::{
    AxNode, Capture, DomRects, ElementIndex, FrameCapture, FrameOwner, PageView, RectRequest, Snapshot, Viewport,
    COMPUTED_STYLES,
};

use crate::world::WorldCell;
use crate::{BrowserError, Tab};

/// What a capture includes besides the DOM snapshot.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaptureOptions {
    pub screenshot: bool,
    /// Also fetch `Accessibility.getFullAXTree` of every frame (semantic snapshots).
    pub accessibility: bool,
    /// Ask the snapshot for the DOM rects of every node (`state --record` keeps
    /// the complete capture), not only of the elements the model reads them for.
    pub all_rects: bool,
    /// Capture the whole document (`DOMSnapshot.captureSnapshot`) even where the
    /// viewport walk would do: views that read beyond the viewport ask for it.
    /// Implied by `accessibility` and `all_rects`.
    pub whole_document: bool,
    /// Take the viewport walk even on a page small enough that its full
    /// snapshot costs less (the equivalence tests compare the two there).
    pub walk_small_pages: bool,
    /// For semantic_v2's viewport scope: the walk keeps the near margin too and
    /// counts the semantic nodes it leaves out ([`Captured::far`]); where it
    /// cannot, the whole document is captured.
    pub semantic_walk: bool,
}

/// How the viewport walk is asked for.
#[derive(Debug, Clone, Copy)]
struct WalkMode {
    small_pages_too: bool,
    semantic: bool,
}

/// A capture and what was derived from it.
pub struct Captured {
    pub view: PageView,
    /// Base64 PNG of the viewport, when asked for.
    pub screenshot: Option<String>,
    /// The raw capture (kept for recording fixtures and for marks).
    pub capture: Capture,
    /// The CDP session of each frame capture (`capture.frames[i]`).
    pub sessions: Vec<SessionId>,
    /// Whether the main frame was captured by the viewport walk (else by the
    /// full `DOMSnapshot`).
    pub walked: bool,
    /// With [`CaptureOptions::semantic_walk`] and a walked page: the semantic
    /// nodes the walk left out, by why the viewport scope omits them.
    pub far: Option<sightline_page::semantic::FarCounts>,
    /// Wall time of the CDP calls, and of building the view.
    pub cdp_time: Duration,
    pub model_time: Duration,
}

/// Past this many elements whose rects the model reads, one snapshot with every
/// rect costs less than resolving them one by one. Resolving costs about 0.1 ms
/// an element; a second snapshot costs what the first did, seconds on a long
/// page (the Rust book's print page has 1,024 scroll boxes, its code blocks:
/// 0.1 s one by one against 3.4 s for the snapshot with every rect).
const RECTS_ONE_BY_ONE: usize = 5000;

/// A capture call that takes longer than this is failing, not slow.
const CAPTURE_LIMIT: Duration = Duration::from_secs(15);

/// The most a whole capture may take (its calls run concurrently).
const CAPTURE_BOUND: Duration = Duration::from_secs(20);

/// The most the viewport walk may take before the full snapshot is taken instead.
const WALK_LIMIT: Duration = Duration::from_secs(5);

/// The most pointer-listener elements read from the probe: as many as it
/// records (`probe.js`: 5,000 with listeners of their own, 5,000 with React
/// props); a page reporting more is lying, and is not believed.
const POINTER_TARGETS_MAX: usize = 10_000;

/// The most the pointer-listener lookup may take; past it they are unknown.
const POINTER_LIMIT: Duration = Duration::from_secs(3);

/// The same, beside a full accessibility tree (tests and the bench only), which
/// Chromium builds for the whole document at once and which delays the lookup
/// on big pages (rustdoc's `Vec`): a comparison must see the same evidence.
const POINTER_LIMIT_WITH_AX: Duration = Duration::from_secs(10);

/// The most documents one capture reads: the page and up to 99 out-of-process
/// frames, however deep they nest (in attachment order, so parents first).
/// Same-process frames come inside their process's snapshot and are not counted.
pub const MAX_FRAMES: usize = 100;

/// A form field Chromium names only from what its author wrote (`aria-labelledby`,
/// `aria-label`, its `<label>`s, `title`, `placeholder`, `aria-placeholder`),
/// never from content: the DOM rules read all but `aria-placeholder` (asked
/// about), so when they found no name Chromium has none either, and asking it
/// would cost a round trip per field on every state.
fn named_by_author_only(d: &sightline_page::Descriptor) -> bool {
    match d.tag.as_str() {
        "textarea" | "select" => true,
        "input" => !matches!(
            d.type_.as_deref().map(str::to_ascii_lowercase).as_deref(),
            Some("button" | "submit" | "reset" | "image" | "file")
        ),
        _ => false,
    }
}

impl Tab {
    /// `DOMSnapshot.captureSnapshot` of one target. DOM rects (client box, scroll
    /// extent) cost as much as the rest of the snapshot when asked for every
    /// node, and the model reads them for a few elements: unless `all_rects`,
    /// they are fetched for those alone ([`Snapshot::rects_needed`]).
    /// With `walk`, the viewport walk is tried first ([`Tab::walk`]); `Some(true)`
    /// tries it on small pages too.
    async fn snapshot(
        &self,
        session: &SessionId,
        all_rects: bool,
        walk: Option<WalkMode>,
        world: &WorldCell,
    ) -> Result<(Snapshot, bool, Option<sightline_page::semantic::FarCounts>), BrowserError> {
        let walk = walk.filter(|_| !all_rects);
        let walk_bounded = |mode: WalkMode| async move {
            match tokio::time::timeout(WALK_LIMIT, self.walk(session, mode.small_pages_too, mode.semantic, world)).await
            {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "viewport walk failed; taking the full snapshot");
                    None
                }
                Err(_) => {
                    tracing::debug!(limit = ?WALK_LIMIT, "viewport walk too slow; taking the full snapshot");
                    None
                }
            }
        };
        // A main document last seen well under the walk's threshold: the size
        // check and the full snapshot are sent together (the renderer answers
        // them in order, so the snapshot still follows the check), and the
        // snapshot is dropped only when the check finds the page has grown.
        let pipelined = walk.filter(|m| !m.small_pages_too && *session == self.session && self.known_small());
        let (walked, full) = match (walk, pipelined) {
            (_, Some(mode)) => {
                self.state.lock().unwrap().loading.pipelined += 1;
                let (walked, full) = tokio::join!(walk_bounded(mode), self.full_snapshot(session, all_rects, world));
                match walked {
                    Some(w) => (Some(w), None),
                    None => (None, Some(full?)),
                }
            }
            (Some(mode), None) => (walk_bounded(mode).await, None),
            (None, None) => (None, None),
        };
        let walked_it = walked.is_some();
        let (walked, far) = match walked {
            Some((s, far)) => (Some(s), far),
            None => (None, None),
        };
        let mut snap = match (walked, full) {
            (Some(s), _) => s,
            (None, Some(s)) => s,
            (None, None) => self.full_snapshot(session, all_rects, world).await?,
        };
        if !all_rects {
            let needed = snap.rects_needed();
            if needed.len() > RECTS_ONE_BY_ONE {
                // A page of many scroll boxes: one snapshot with every rect is cheaper.
                tracing::debug!(needed = needed.len(), "rects for many elements: one snapshot with every rect");
                return Box::pin(self.snapshot(session, true, None, world)).await;
            }
            if !needed.is_empty() {
                let found = self.dom_rects(session, &needed, self.world_once(session, world).await).await?;
                snap.fill_rects(&found);
            }
        }
        Ok((snap, walked_it, far))
    }

    /// `DOMSnapshot.captureSnapshot` of one target, parsed; unless `all_rects`,
    /// the isolated world the few rects are read in is asked for meanwhile (one
    /// round trip less after the snapshot). The main document's size is noted
    /// for its next capture ([`Tab::known_small`]).
    async fn full_snapshot(
        &self,
        session: &SessionId,
        all_rects: bool,
        world: &WorldCell,
    ) -> Result<Snapshot, BrowserError> {
        let snapshot = CaptureSnapshot {
            computed_styles: COMPUTED_STYLES,
            include_paint_order: true,
            include_dom_rects: all_rects,
        };
        // Kept raw by the client, parsed once here.
        let t = Instant::now();
        let (raw, _) = tokio::join!(self.cdp_within(session, &snapshot, CAPTURE_LIMIT), async {
            if !all_rects {
                self.world_once(session, world).await;
            }
        });
        let raw = raw?;
        let took = t.elapsed();
        let snap: Snapshot =
            serde_json::from_str(raw.get()).map_err(|e| BrowserError::Unexpected(format!("DOMSnapshot: {e}")))?;
        tracing::debug!(all_rects, bytes = raw.get().len(), call = ?took, parse = ?(t.elapsed() - took), "DOMSnapshot");
        if *session == self.session {
            if let Some(main) = snap.documents.first() {
                self.note_size(main.nodes.node_type.iter().filter(|t| **t == 1).count() as u64);
            }
        }
        Ok(snap)
    }

    /// The DOM rects of a few elements, read in an isolated world (page scripts
    /// cannot redefine the getters there) with one call per element to resolve it
    /// and one call for all of them to read their rects.
    /// `world`: the isolated world's context when the caller has it already.
    async fn dom_rects(
        &self,
        session: &SessionId,
        needed: &[RectRequest],
        world: Option<sightline_cdp::ExecutionContextId>,
    ) -> Result<Vec<(RectRequest, DomRects)>, BrowserError> {
        const GROUP: &str = "sightline-rects";
        const READ: &str = "function (...els) { return els.map((e) => [e.clientLeft, e.clientTop, e.clientWidth, \
            e.clientHeight, e.scrollLeft, e.scrollTop, e.scrollWidth, e.scrollHeight].map(Math.trunc)); }";
        let world = match world {
            Some(w) => Some(w),
            None => self.world(session).await.ok(),
        };
        // Resolved in the isolated world where it can be (a node in a cross-origin
        // same-process frame cannot), else in its own frame's main world.
        let mut resolved: Vec<(bool, RectRequest, String)> = Vec::with_capacity(needed.len());
        for chunk in needed.chunks(64) {
            let got = join_all(chunk.iter().map(|r| async move {
                let main_world =
                    ResolveNode { object_group: Some(GROUP), ..ResolveNode::backend(BackendNodeId(r.backend_node_id)) };
                if let Some(ctx) = world {
                    let isolated = ResolveNode { execution_context_id: Some(ctx), ..main_world };
                    if let Ok(v) = self.cdp(session, &isolated).await {
                        return v.object.object_id.map(|o| (true, *r, o));
                    }
                }
                let v = self.cdp(session, &main_world).await.ok()?;
                v.object.object_id.map(|o| (false, *r, o))
            }))
            .await;
            resolved.extend(got.into_iter().flatten());
        }
        let mut out = Vec::with_capacity(resolved.len());
        for isolated in [true, false] {
            let group: Vec<&(bool, RectRequest, String)> = resolved.iter().filter(|g| g.0 == isolated).collect();
            let Some(first) = group.first() else { continue };
            let args: Vec<CallArgument> = group.iter().map(|g| CallArgument::object(g.2.clone())).collect();
            let read = CallFunctionOn {
                object_id: &first.2,
                function_declaration: READ,
                arguments: &args,
                return_by_value: true,
            };
            let values = match self.cdp(session, &read).await.ok().and_then(|v| v.result.value) {
                Some(Value::Array(values)) => values,
                _ => Vec::new(),
            };
            for (g, v) in group.iter().zip(values) {
                let n: Vec<f64> =
                    v.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
                if n.len() == 8 {
                    let rects = DomRects { client: [n[0], n[1], n[2], n[3]], scroll: [n[4], n[5], n[6], n[7]] };
                    out.push((g.1, rects));
                }
            }
        }
        self.release(session, GROUP);
        Ok(out)
    }

    /// Capture the page (and a screenshot when `screenshot`), then build its view.
    pub async fn capture(&self, screenshot: bool) -> Result<Captured, BrowserError> {
        self.capture_with(CaptureOptions { screenshot, ..CaptureOptions::default() }).await
    }

    async fn ax_tree(&self, session: &SessionId) -> Option<Vec<AxNode>> {
        #[derive(Deserialize)]
        struct Tree {
            nodes: Vec<AxNode>,
        }
        let raw = self.cdp_within(session, &GetFullAxTree {}, CAPTURE_LIMIT).await.ok()?;
        serde_json::from_str::<Tree>(raw.get()).ok().map(|t| t.nodes)
    }

    /// Capture with options (the accessibility tree is for semantic snapshots).
    /// Bounded as a whole ([`CAPTURE_BOUND`]): a page that stops answering part-way
    /// is a typed time-out, never the CDP call limit.
    pub async fn capture_with(&self, opts: CaptureOptions) -> Result<Captured, BrowserError> {
        self.check_alive()?;
        if self.open_dialog().is_none() {
            // A page whose script never yields answers nothing: stop that script first.
            self.unstick().await?;
        }
        match tokio::time::timeout(CAPTURE_BOUND, self.capture_unbounded(opts)).await {
            Ok(r) => r,
            Err(_) => Err(sightline_cdp::CdpError::Timeout { method: "capture".into(), after: CAPTURE_BOUND }.into()),
        }
    }

    async fn capture_unbounded(&self, opts: CaptureOptions) -> Result<Captured, BrowserError> {
        let screenshot = opts.screenshot;
        let started = Instant::now();
        if let Some(dialog) = self.open_dialog() {
            return Ok(self.dialog_capture(dialog, screenshot, started).await);
        }
        // The page and its out-of-process frames, read at once (a frame attaching
        // meanwhile must not shift one list against the other), at most MAX_FRAMES.
        let (sessions, oop): (Vec<SessionId>, Vec<(FrameId, Option<SessionId>)>) = {
            let st = self.state.lock().unwrap();
            let frames = st.frames.oopifs.iter().take(MAX_FRAMES - 1);
            (
                std::iter::once(self.session.clone()).chain(frames.clone().map(|f| f.session.clone())).collect(),
                frames.map(|f| (f.frame_id.clone(), f.parent.clone())).collect(),
            )
        };
        // Whether to try the walk, and whether on small pages too.
        let walk = (!(opts.accessibility || opts.all_rects) && (opts.semantic_walk || !opts.whole_document))
            .then_some(WalkMode { small_pages_too: opts.walk_small_pages, semantic: opts.semantic_walk });
        let shot = async {
            if screenshot {
                let s = match self.cdp_within(&self.session, &CaptureScreenshot::PNG, CAPTURE_LIMIT).await {
                    // Refused while the frame is between documents (a commit held back
                    // by a left page's handlers): once more, a moment later.
                    Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => {
                        tokio::time::sleep(Duration::from_millis(250)).await;
                        self.cdp_within(&self.session, &CaptureScreenshot::PNG, CAPTURE_LIMIT).await?
                    }
                    r => r?,
                };
                Ok::<_, BrowserError>(Some(s.data))
            } else {
                Ok(None)
            }
        };
        let pointer_limit = if opts.accessibility { POINTER_LIMIT_WITH_AX } else { POINTER_LIMIT };
        let snaps = join_all(sessions.iter().map(|s| async move {
            let ax = async {
                if opts.accessibility {
                    self.ax_tree(s).await
                } else {
                    None
                }
            };
            // The semantic count is the main document's: a frame's document is captured whole.
            let walk = walk.filter(|w| !w.semantic || *s == self.session);
            // One isolated world per session for this capture's reads.
            let world = WorldCell::new();
            let (snap, pointer, ax, focused) = tokio::join!(
                self.snapshot(s, opts.all_rects, walk, &world),
                self.pointer_listeners(s, pointer_limit),
                ax,
                self.focused_element(s, &world)
            );
            snap.map(|snap| (snap, pointer, ax, focused))
        }));
        let owners =
            join_all(oop.iter().map(|(frame_id, parent)| self.frame_owner(frame_id, parent.as_ref(), &sessions)));
        let (shot, snaps, owners) = tokio::join!(shot, snaps, owners);
        if opts.accessibility {
            self.release_ax(&sessions);
        }
        let mut frames = Vec::with_capacity(snaps.len());
        let mut frame_sessions = Vec::with_capacity(snaps.len());
        // Session index → frame index, for the frames we keep.
        let mut kept: Vec<Option<usize>> = vec![None; sessions.len()];
        let mut walked = false;
        let mut far = None;
        for (i, snap) in snaps.into_iter().enumerate() {
            match snap {
                Ok(((snapshot, was_walked, far_counts), pointer_listeners, ax, focused)) => {
                    if i == 0 {
                        walked = was_walked;
                        far = far_counts;
                    }
                    let owner = if i == 0 {
                        None
                    } else {
                        // An OOPIF we cannot place is left out.
                        match owners.get(i - 1).copied().flatten() {
                            Some(o) => match kept.get(o.frame).copied().flatten() {
                                Some(f) => Some(FrameOwner { frame: f, backend_node_id: o.backend_node_id }),
                                None => continue,
                            },
                            None => continue,
                        }
                    };
                    kept[i] = Some(frames.len());
                    frames.push(FrameCapture { snapshot, owner, pointer_listeners, ax, focused });
                    frame_sessions.push(sessions[i].clone());
                }
                Err(e) if i == 0 => return Err(e),
                Err(_) => {}
            }
        }
        let (w, h) = self.opts.viewport;
        let capture = Capture { viewport: Viewport { width: w as f64, height: h as f64 }, frames, dialog: None };
        let cdp_time = started.elapsed();
        let screenshot = shot?;
        let t = Instant::now();
        let mut view = PageView::build(&capture);
        let model_time = t.elapsed();
        self.ax_names(&mut view, &frame_sessions).await;
        tracing::debug!(cdp = ?cdp_time, model = ?model_time, frames = frame_sessions.len(), elements = view.elements.len(), "captured");
        Ok(Captured { view, screenshot, capture, sessions: frame_sessions, walked, far, cdp_time, model_time })
    }

    /// Names for elements the DOM rules left unnamed, from Chromium's accessibility
    /// tree (one `getPartialAXTree` per element, concurrently, at most 25, capped in time).
    async fn ax_names(&self, view: &mut PageView, sessions: &[SessionId]) {
        let unnamed: Vec<(ElementIndex, usize, i64)> = view
            .unnamed()
            .into_iter()
            .filter_map(|i| view.element(i))
            .filter(|e| {
                !(named_by_author_only(&e.descriptor)
                    && view.node(e.node).and_then(|n| n.attr("aria-placeholder")).is_none())
            })
            .take(25)
            .map(|e| (e.index, e.frame, e.backend_node_id))
            .collect();
        if unnamed.is_empty() {
            return;
        }
        let asks = join_all(unnamed.iter().map(|&(index, frame, backend)| async move {
            let session = sessions.get(frame)?;
            let backend = BackendNodeId(backend);
            let ask = GetPartialAxTree { backend_node_id: backend, fetch_relatives: false };
            let tree = self.cdp_within(session, &ask, Duration::from_secs(2)).await.ok()?;
            let node = tree.nodes.into_iter().find(|n| n.backend_dom_node_id == Some(backend))?;
            let name = node.name?.value?.as_str()?.trim().to_string();
            (!name.is_empty()).then_some((index, name))
        }));
        let names = tokio::time::timeout(Duration::from_secs(2), asks).await;
        self.release_ax(sessions);
        if let Ok(names) = names {
            let names: Vec<(ElementIndex, String)> = names.into_iter().flatten().collect();
            view.set_names(&names);
        }
    }

    /// Let Chromium drop the accessibility tree it built for our questions. Kept,
    /// it is updated on every change to the page and slows every later snapshot
    /// (by about half on a page of 20,000 elements); the next semantic snapshot
    /// builds it again.
    fn release_ax(&self, sessions: &[SessionId]) {
        for s in sessions {
            let _ = self.client.send_only(Some(s), &accessibility::Disable {});
        }
    }

    /// While a JavaScript dialog is open, the dialog is the view (the page is paused).
    async fn dialog_capture(&self, dialog: sightline_page::JsDialog, screenshot: bool, started: Instant) -> Captured {
        let shot = if screenshot {
            // The compositor may still give a frame; if not, no screenshot rather than a hang.
            let r = self
                .client
                .execute_within(Some(&self.session), &CaptureScreenshot::PNG, Duration::from_millis(1500))
                .await;
            r.ok().map(|s| s.data)
        } else {
            None
        };
        let (w, h) = self.opts.viewport;
        let capture = Capture {
            viewport: Viewport { width: w as f64, height: h as f64 },
            frames: Vec::new(),
            dialog: Some(dialog),
        };
        let cdp_time = started.elapsed();
        let t = Instant::now();
        let view = PageView::build(&capture);
        Captured {
            view,
            screenshot: shot,
            capture,
            sessions: vec![self.session.clone()],
            walked: false,
            far: None,
            cdp_time,
            model_time: t.elapsed(),
        }
    }

    /// Backend ids of elements with pointer/touch listeners, as recorded by the
    /// probe script. One cheap call when there are none (the common case). The
    /// probe lives in the page's world: what it reports is bounded in time
    /// ([`POINTER_LIMIT`]) and size ([`POINTER_TARGETS_MAX`]); past either, none.
    async fn pointer_listeners(&self, session: &SessionId, limit: Duration) -> Vec<i64> {
        tokio::time::timeout(limit, self.pointer_listeners_unbounded(session)).await.unwrap_or_default()
    }

    async fn pointer_listeners_unbounded(&self, session: &SessionId) -> Vec<i64> {
        // One call: the count when there are none (the common case) or too many,
        // else the array of elements.
        let pointer_list = format!(
            "(() => {{ const s = window.__sightline; if (!s) return 0; const n = s.pointerCount(); \
             return n === 0 || n > {POINTER_TARGETS_MAX} ? n : s.pointerElements(); }})()"
        );
        // Every remote object made here lives in one group, released at the end.
        const GROUP: &str = "sightline-pointer";
        let list = self.cdp(session, &Evaluate::new(&pointer_list).in_group(GROUP)).await;
        let Some(array) = list.ok().and_then(|v| v.result.object_id) else {
            return Vec::new();
        };
        let props = self.cdp(session, &GetProperties { object_id: &array, own_properties: true }).await;
        let ids: Vec<String> = props
            .map(|p| p.result)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.name.parse::<u32>().is_ok())
            .filter_map(|p| p.value?.object_id)
            .collect();
        if ids.len() > POINTER_TARGETS_MAX {
            self.release(session, GROUP);
            return Vec::new();
        }
        // Bounded concurrency: at most 64 calls in flight, however many elements the page made.
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(64) {
            let described =
                join_all(chunk.iter().map(|id| async move { self.cdp(session, &DescribeNode::object(id)).await }))
                    .await;
            out.extend(described.into_iter().filter_map(|d| Some(d.ok()?.node.backend_node_id.0)));
        }
        self.release(session, GROUP);
        out
    }

    /// The backend id of the element with keyboard focus in this target (through
    /// open shadow roots), or `None` when focus is on the document itself.
    async fn focused_element(&self, session: &SessionId, world: &WorldCell) -> Option<i64> {
        const FOCUSED: &str = "(() => { let a = document.activeElement; \
            while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; \
            return a && a !== document.body && a !== document.documentElement ? a : null })()";
        const GROUP: &str = "sightline-focus";
        let context_id = Some(self.world_once(session, world).await?);
        let v = self
            .eval_isolated(session, Evaluate { context_id, ..Evaluate::new(FOCUSED).in_group(GROUP) })
            .await
            .ok()?;
        let object = v.result.object_id?;
        let d = self.cdp(session, &DescribeNode::object(&object)).await;
        self.release(session, GROUP);
        Some(d.ok()?.node.backend_node_id.0)
    }

    /// Which `<iframe>` element (in which session's capture) holds an OOPIF.
    /// Asked of the session that attached it (its parent frame's): a session of
    /// the same renderer process may answer too (frames nested A → B → A share
    /// the first process), with a node of another session's document.
    async fn frame_owner(
        &self,
        frame_id: &FrameId,
        parent: Option<&SessionId>,
        sessions: &[SessionId],
    ) -> Option<FrameOwner> {
        if let Some(i) = parent.and_then(|p| sessions.iter().position(|s| s == p)) {
            let v = self.cdp(&sessions[i], &GetFrameOwner { frame_id }).await.ok()?;
            return Some(FrameOwner { frame: i, backend_node_id: v.backend_node_id.0 });
        }
        for (i, s) in sessions.iter().enumerate() {
            if let Ok(v) = self.cdp(s, &GetFrameOwner { frame_id }).await {
                // The page model keeps backend ids as plain numbers.
                return Some(FrameOwner { frame: i, backend_node_id: v.backend_node_id.0 });
            }
        }
        None
    }
}
