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
    /// The loader of the main frame's current document, when known: a commit is
    /// counted once per loader, whether its event or a re-read tells of it first.
    pub main_loader: Option<String>,
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
    /// The main document (by [`Loading::navigations`]) was last seen well under
    /// the walk's threshold: its next capture sends the size check and the full
    /// snapshot together (`capture.rs`).
    pub small_document: Option<u64>,
    /// Captures whose size check went out with the full snapshot.
    pub pipelined: u64,
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
        self.committed(v.frame, now)
    }

    /// The main frame shows the document of `frame.loader_id`: a new one is
    /// counted (returns true), the one already counted is not. A loader-less
    /// report always counts.
    fn committed(&mut self, frame: page::Frame, now: Instant) -> bool {
        if frame.loader_id.is_some() && frame.loader_id == self.main_loader {
            return false;
        }
        self.main_frame = Some(frame.id);
        self.main_loader = frame.loader_id;
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

    /// The main frame and its load state, as read again after a gap. Returns
    /// whether its document is one whose commit was missed (now counted).
    fn reread(&mut self, main_frame: Option<page::Frame>, complete: Option<bool>, now: Instant) -> bool {
        let new_document = main_frame.is_some_and(|f| self.committed(f, now));
        // A load whose end was missed would hold every wait to the load timeout.
        if complete == Some(true) {
            self.main_loading = false;
            self.main_loading_since = None;
        }
        new_document
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
        let mut st = self.state.lock().unwrap();
        if st.loading.reread(tree.map(|t| t.frame_tree.frame), complete, Instant::now()) {
            st.dialogs.on_new_document();
        }
    }

    /// After `navigate`: the main frame's document as the browser has it now, so
    /// a commit whose event was lost in a gap (or is still queued) is counted
    /// before `navigate` returns. A read that fails changes nothing.
    pub(crate) async fn read_main_document(&self) {
        let Ok(tree) = self.cdp_within(&self.session, &page::GetFrameTree {}, PROBE_LIMIT).await else { return };
        let mut st = self.state.lock().unwrap();
        if st.loading.committed(tree.frame_tree.frame, Instant::now()) {
            st.dialogs.on_new_document();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(loader: &str) -> page::Frame {
        page::Frame { id: FrameId::from("main"), parent_id: None, loader_id: Some(loader.into()) }
    }

    #[test]
    fn a_document_is_counted_once_whether_its_event_or_a_read_tells_first() {
        let now = Instant::now();
        let mut l = Loading { main_loader: Some("blank".into()), ..Loading::default() };
        assert!(!l.committed(frame("blank"), now), "the document the tab opened with is not a navigation");
        assert!(l.committed(frame("one"), now));
        assert!(!l.committed(frame("one"), now), "its event, arriving after the read, is not counted again");
        // A commit lost in a gap: the re-read finds a new loader and counts it.
        l.forget();
        assert!(l.reread(Some(frame("two")), Some(true), now));
        assert_eq!((l.navigations, l.blank), (2, false));
        assert!(!l.reread(Some(frame("two")), None, now), "the same document read again");
    }
}
