//! Loading and navigation: requests in flight, the main frame's load, the
//! documents committed, and how the last main-frame load failed. Its events
//! come from the page's and its frames' sessions; `settle.rs` reads it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sightline_cdp::protocol::runtime::Evaluate;
use sightline_cdp::protocol::{fetch, network, page};
use sightline_cdp::FrameId;

use crate::settle::PROBE_LIMIT;
use crate::{LoadFailure, Tab};

/// What the page's network and navigation events say.
#[derive(Default)]
pub(crate) struct Loading {
    /// Unknown until the first `Page.getFrameTree` answers.
    pub main_frame: Option<FrameId>,
    /// request id → when it started.
    pub inflight: HashMap<String, Instant>,
    pub main_loading: bool,
    /// When the main frame's current load started.
    pub main_loading_since: Option<Instant>,
    /// The main frame asked to navigate (link, form, script) and has not started loading yet.
    pub nav_requested: Option<Instant>,
    /// Main-frame navigations committed so far (a document replaced).
    pub navigations: u64,
    /// Per frame id: documents committed in that frame so far.
    pub frame_navigations: HashMap<FrameId, u64>,
    /// Why the last intercepted main-frame navigation failed (see `Tab::navigate`).
    pub nav_error: Option<LoadFailure>,
    /// The last main-frame document that was the egress proxy's answer to a
    /// failed or refused load (not intercepted: a blank tab's first load), by loader.
    pub proxy_failure: Option<(String, LoadFailure)>,
    /// The tab is one we opened and still shows the blank page it was opened
    /// with: no document has committed in it since (so no page script ever
    /// ran there, and a failed load has nothing to preserve but a blank page).
    pub blank: bool,
    /// Events were missed since the main frame and its load were last known:
    /// read them again before relying on them ([`Tab::reread_loading`]).
    pub stale: bool,
}

/// Requests that never say they are done, or that no person waits for:
/// sockets, streams, media, beacons, prefetches, reports.
fn never_done(kind: &str) -> bool {
    matches!(
        kind,
        "WebSocket"
            | "EventSource"
            | "Media"
            | "Ping"
            | "Prefetch"
            | "Manifest"
            | "CSPViolationReport"
            | "SignedExchange"
    )
}

impl Loading {
    pub(crate) fn on_request(&mut self, v: network::RequestWillBeSent, now: Instant) {
        let kind = v.kind.as_deref().unwrap_or("");
        tracing::trace!(id = %v.request_id, kind, url = %sightline_page::cut(&v.request.url, 80), "request");
        if !never_done(kind) {
            self.inflight.insert(v.request_id, now);
        }
    }

    /// Finished or failed: no longer in flight. A worker's script request, reported
    /// in the page but finished in the worker's own session, ends here too.
    pub(crate) fn on_request_done(&mut self, request_id: &str) {
        self.inflight.remove(request_id);
    }

    /// The egress proxy answers a failed or refused connection itself; for the
    /// main frame's document that is a failed load, not a page. Only a blank tab's
    /// first load is read here: every other one is intercepted, and aborted
    /// before this (see `Tab::navigate`).
    pub(crate) fn on_document_response(&mut self, v: network::ResponseReceived) {
        if !self.blank {
            return;
        }
        if let Some(failed) = LoadFailure::from_proxy_headers(|h| v.header(h)) {
            if v.frame_id.is_some() && v.frame_id == self.main_frame {
                self.proxy_failure = Some((v.loader_id, failed));
            }
        }
    }

    /// A frame of the page's own session started or stopped loading.
    pub(crate) fn on_frame_loading(&mut self, frame_id: &FrameId, stopped: bool, now: Instant) {
        if self.main_frame.as_ref() == Some(frame_id) {
            self.main_loading = !stopped;
            self.main_loading_since = self.main_loading.then_some(now);
            self.nav_requested = None;
        }
    }

    pub(crate) fn on_navigation_requested(&mut self, frame_id: &FrameId, now: Instant) {
        if self.main_frame.as_ref() == Some(frame_id) {
            self.nav_requested = Some(now);
        }
    }

    /// A document committed in a frame. Returns whether it was the main frame's.
    pub(crate) fn on_navigated(&mut self, v: page::FrameNavigated, main_session: bool, now: Instant) -> bool {
        *self.frame_navigations.entry(v.frame.id.clone()).or_insert(0) += 1;
        if v.frame.parent_id.is_some() || !main_session {
            return false;
        }
        self.main_frame = Some(v.frame.id);
        self.navigations += 1;
        self.blank = false;
        // Requests of the old document no longer matter.
        self.inflight.retain(|_, t| now.duration_since(*t) < Duration::from_millis(50));
        true
    }

    /// A document held at its response while `navigate` intercepts. Returns
    /// (it is the main frame's, how it failed): a failed main-frame document is
    /// aborted instead of committing Chromium's error page.
    pub(crate) fn on_document_paused(&mut self, v: &fetch::RequestPaused) -> (bool, Option<LoadFailure>) {
        // A network failure has no HTTP status; an HTTP error page (a 405 with an
        // empty body) is a page and goes through. Sightline's egress proxy answers
        // a failed or refused connection itself; its headers say so, and that is a
        // failed load too, not a page.
        let failed = v
            .response_error_reason
            .as_deref()
            .filter(|_| v.response_status_code.is_none())
            .map(LoadFailure::from_fetch_reason)
            .or_else(|| LoadFailure::from_proxy_headers(|h| v.header(h)));
        let main = v.frame_id.is_some() && v.frame_id == self.main_frame;
        if let (true, Some(reason)) = (main, failed.as_ref()) {
            self.nav_error = Some(reason.clone());
        }
        (main, failed)
    }

    /// Events were missed: what they would have said is unknown. Requests are no
    /// longer counted (a lost `loadingFinished` must not hold every later wait to
    /// its cap; the in-page probe still sees the page's own activity), and the
    /// main frame's load is re-read by the caller ([`Loading::reread`]).
    pub(crate) fn forget(&mut self) {
        self.inflight.clear();
        self.nav_requested = None;
        self.stale = true;
    }

    /// The main frame and its load state, as read again after a gap.
    fn reread(&mut self, main_frame: Option<FrameId>, complete: Option<bool>) {
        if let Some(f) = main_frame {
            self.main_frame = Some(f);
        }
        // A load whose end was missed would hold every wait to the load timeout.
        if complete == Some(true) {
            self.main_loading = false;
            self.main_loading_since = None;
        }
    }

    /// The settle's view: (a main-frame load is pending, requests started since `since`),
    /// with `frames`: out-of-process frames loading since `since`.
    pub(crate) fn network(&self, since: Instant, frames: usize) -> (bool, usize) {
        // A requested navigation that never starts (204, download, cancelled) stops counting after 1 s.
        let requested = self.nav_requested.is_some_and(|t| t >= since && t.elapsed() < Duration::from_secs(1));
        // A load this action started may take the load time limit; a document that was
        // already loading before it (a page that never finishes) only holds the wait
        // like a request, up to the cap.
        let started_before =
            self.main_loading && self.main_loading_since.is_some_and(|t| t + Duration::from_millis(50) < since);
        let loading = (self.main_loading && !started_before) || requested;
        (loading, self.inflight.values().filter(|t| **t >= since).count() + frames + usize::from(started_before))
    }
}

impl Tab {
    /// After missed events ([`Loading::forget`]): the main frame (`Page.getFrameTree`)
    /// and whether its document has loaded (its ready state, read in the isolated
    /// world), each bounded by [`PROBE_LIMIT`]. What does not answer stays as it was.
    pub(crate) async fn reread_loading(&self) {
        if !std::mem::take(&mut self.state.lock().unwrap().loading.stale) {
            return;
        }
        let tree = self.cdp_within(&self.session, &page::GetFrameTree {}, PROBE_LIMIT).await.ok();
        let ready = tokio::time::timeout(
            PROBE_LIMIT,
            self.eval_isolated(&self.session, Evaluate::new("document.readyState").by_value()),
        )
        .await;
        let complete = match ready {
            Ok(Ok(v)) => v.result.value.and_then(|v| v.as_str().map(|s| s == "complete")),
            _ => None,
        };
        tracing::debug!(?complete, "re-read the main frame after missed events");
        self.state.lock().unwrap().loading.reread(tree.map(|t| t.frame_tree.frame.id), complete);
    }
}
