//! One capture: the CDP calls that fill the page model's input, run concurrently.
//!
//! Per capture: `DOMSnapshot.captureSnapshot` on the page session (covering the
//! main frame, same-process iframes and shadow roots), the same on each
//! out-of-process iframe's session plus `DOM.getFrameOwner` to place it, and
//! `Page.captureScreenshot` when asked. Nothing walks the accessibility tree.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::Deserialize;
use sightline_cdp::protocol::accessibility::{GetFullAxTree, GetPartialAxTree};
use sightline_cdp::protocol::dom::{DescribeNode, GetFrameOwner};
use sightline_cdp::protocol::dom_snapshot::CaptureSnapshot;
use sightline_cdp::protocol::page::CaptureScreenshot;
use sightline_cdp::protocol::runtime::{Evaluate, GetProperties, ReleaseObjectGroup};
use sightline_cdp::{BackendNodeId, FrameId, SessionId};
use sightline_page::{AxNode, Capture, FrameCapture, FrameOwner, PageView, Snapshot, Viewport, COMPUTED_STYLES};

use crate::{BrowserError, Tab};

/// What a capture includes besides the DOM snapshot.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaptureOptions {
    pub screenshot: bool,
    /// Also fetch `Accessibility.getFullAXTree` of every frame (semantic snapshots).
    pub accessibility: bool,
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
    /// Wall time of the CDP calls, and of building the view.
    pub cdp_time: Duration,
    pub model_time: Duration,
}

/// A capture call that takes longer than this is failing, not slow.
const CAPTURE_LIMIT: Duration = Duration::from_secs(15);

impl Tab {
    async fn snapshot(&self, session: &SessionId) -> Result<Snapshot, BrowserError> {
        let snapshot =
            CaptureSnapshot { computed_styles: COMPUTED_STYLES, include_paint_order: true, include_dom_rects: true };
        // Kept raw by the client, parsed once here.
        let raw = self.cdp_within(session, &snapshot, CAPTURE_LIMIT).await?;
        serde_json::from_str(raw.get()).map_err(|e| BrowserError::Unexpected(format!("DOMSnapshot: {e}")))
    }

    /// Capture the page (and a screenshot when `screenshot`), then build its view.
    pub async fn capture(&self, screenshot: bool) -> Result<Captured, BrowserError> {
        self.capture_with(CaptureOptions { screenshot, accessibility: false }).await
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
    pub async fn capture_with(&self, opts: CaptureOptions) -> Result<Captured, BrowserError> {
        let screenshot = opts.screenshot;
        self.check_alive()?;
        let started = Instant::now();
        if let Some(dialog) = self.open_dialog() {
            return Ok(self.dialog_capture(dialog, screenshot, started).await);
        }
        let sessions = self.sessions();
        let oop: Vec<FrameId> = self.state.lock().unwrap().oopifs.iter().map(|f| f.frame_id.clone()).collect();
        let shot = async {
            if screenshot {
                let s = self.cdp_within(&self.session, &CaptureScreenshot::PNG, CAPTURE_LIMIT).await?;
                Ok::<_, BrowserError>(Some(s.data))
            } else {
                Ok(None)
            }
        };
        let snaps = join_all(sessions.iter().map(|s| async move {
            let ax = async {
                if opts.accessibility {
                    self.ax_tree(s).await
                } else {
                    None
                }
            };
            let (snap, pointer, ax, focused) =
                tokio::join!(self.snapshot(s), self.pointer_listeners(s), ax, self.focused_element(s));
            snap.map(|snap| (snap, pointer, ax, focused))
        }));
        let owners = join_all(oop.iter().map(|frame_id| self.frame_owner(frame_id, &sessions)));
        let (shot, snaps, owners) = tokio::join!(shot, snaps, owners);
        let mut frames = Vec::with_capacity(snaps.len());
        let mut frame_sessions = Vec::with_capacity(snaps.len());
        // Session index → frame index, for the frames we keep.
        let mut kept: Vec<Option<usize>> = vec![None; sessions.len()];
        for (i, snap) in snaps.into_iter().enumerate() {
            match snap {
                Ok((snapshot, pointer_listeners, ax, focused)) => {
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
        Ok(Captured { view, screenshot, capture, sessions: frame_sessions, cdp_time, model_time })
    }

    /// Names for elements the DOM rules left unnamed, from Chromium's accessibility
    /// tree (one `getPartialAXTree` per element, concurrently, at most 25, capped in time).
    async fn ax_names(&self, view: &mut PageView, sessions: &[SessionId]) {
        let unnamed: Vec<(u32, usize, i64)> = view
            .unnamed()
            .into_iter()
            .take(25)
            .filter_map(|i| view.element(i).map(|e| (i, e.frame, e.backend_node_id)))
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
        if let Ok(names) = tokio::time::timeout(Duration::from_secs(2), asks).await {
            let names: Vec<(u32, String)> = names.into_iter().flatten().collect();
            view.set_names(&names);
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
            cdp_time,
            model_time: t.elapsed(),
        }
    }

    /// Backend ids of elements with pointer/touch listeners, as recorded by the
    /// probe script. One cheap call when there are none (the common case).
    async fn pointer_listeners(&self, session: &SessionId) -> Vec<i64> {
        const COUNT: &str = "window.__sightline ? window.__sightline.pointerCount() : 0";
        let count = self.cdp(session, &Evaluate::new(COUNT).by_value()).await;
        if count.ok().and_then(|v| v.result.value?.as_u64()).unwrap_or(0) == 0 {
            return Vec::new();
        }
        // Every remote object made here lives in one group, released at the end.
        const GROUP: &str = "sightline-pointer";
        let list = self.cdp(session, &Evaluate::new("window.__sightline.pointerElements()").in_group(GROUP)).await;
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
        // Bounded concurrency: at most 64 calls in flight, however many elements the page made.
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(64) {
            let described =
                join_all(chunk.iter().map(|id| async move { self.cdp(session, &DescribeNode::object(id)).await }))
                    .await;
            out.extend(described.into_iter().filter_map(|d| Some(d.ok()?.node.backend_node_id.0)));
        }
        let _ = self.cdp(session, &ReleaseObjectGroup { object_group: GROUP }).await;
        out
    }

    /// The backend id of the element with keyboard focus in this target (through
    /// open shadow roots), or `None` when focus is on the document itself.
    async fn focused_element(&self, session: &SessionId) -> Option<i64> {
        const FOCUSED: &str = "(() => { let a = document.activeElement; \
            while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; \
            return a && a !== document.body && a !== document.documentElement ? a : null })()";
        const GROUP: &str = "sightline-focus";
        let v = self.cdp(session, &Evaluate::new(FOCUSED).in_group(GROUP)).await.ok()?;
        let object = v.result.object_id?;
        let d = self.cdp(session, &DescribeNode::object(&object)).await;
        let _ = self.cdp(session, &ReleaseObjectGroup { object_group: GROUP }).await;
        Some(d.ok()?.node.backend_node_id.0)
    }

    /// Which `<iframe>` element (in which session's capture) holds an OOPIF.
    async fn frame_owner(&self, frame_id: &FrameId, sessions: &[SessionId]) -> Option<FrameOwner> {
        for (i, s) in sessions.iter().enumerate() {
            if let Ok(v) = self.cdp(s, &GetFrameOwner { frame_id }).await {
                // The page model keeps backend ids as plain numbers.
                return Some(FrameOwner { frame: i, backend_node_id: v.backend_node_id.0 });
            }
        }
        None
    }
}
