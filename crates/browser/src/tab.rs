//! One page target: its sessions, and what its events tell us (requests in
//! flight, main-frame loading, out-of-process frames, crashes).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sightline_cdp::protocol::{dom, emulation, fetch, input, inspector, network, page, runtime, target};
use sightline_cdp::{
    BackendNodeId, BrowserContextId, Client, Command, Event, EventParams, FrameId, SessionId, TargetId,
};

use crate::settle::{SettleOptions, Settled, PROBE_SCRIPT};
use crate::{Browser, BrowserError};

/// A viewport written as `WIDTHxHEIGHT` that is not one (or has a side outside 100..=8000).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expects WIDTHxHEIGHT with sides between 100 and 8000 CSS pixels, got {given:?}")]
pub struct ViewportError {
    pub given: String,
}

/// `WIDTHxHEIGHT` (`1280x720`) → (width, height) in CSS pixels, each side 100..=8000:
/// the one reading of a viewport for every front end (flags, the HTTP API, the bench).
pub fn parse_viewport(s: &str) -> Result<(u32, u32), ViewportError> {
    let bad = || ViewportError { given: s.to_string() };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if !(100..=8000).contains(&w) || !(100..=8000).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

/// How a tab is set up.
#[derive(Debug, Clone)]
pub struct TabOptions {
    /// Viewport in CSS pixels; screenshots have exactly this size.
    pub viewport: (u32, u32),
    pub settle: SettleOptions,
}

impl Default for TabOptions {
    fn default() -> Self {
        TabOptions { viewport: (1280, 720), settle: SettleOptions::default() }
    }
}

/// What we ask of every page and frame session: attach its child targets (flattened),
/// paused until we have set them up.
const AUTO_ATTACH: target::SetAutoAttach =
    target::SetAutoAttach { auto_attach: true, wait_for_debugger_on_start: true, flatten: true };

/// An out-of-process iframe attached to this tab.
#[derive(Debug, Clone)]
pub(crate) struct OopFrame {
    pub frame_id: FrameId,
    pub session: SessionId,
    /// The session that attached it: its parent frame's (the page's, or
    /// another out-of-process frame's when they nest).
    pub parent: Option<SessionId>,
}

#[derive(Default)]
pub(crate) struct Tracker {
    /// The data of an HTML5 drag the page started while drags are intercepted (`drag`).
    pub drag: Option<Box<serde_json::value::RawValue>>,
    /// Unknown until the first `Page.getFrameTree` answers.
    pub main_frame: Option<FrameId>,
    /// request id → when it started.
    pub inflight: HashMap<String, Instant>,
    pub main_loading: bool,
    /// When the main frame's current load started.
    pub main_loading_since: Option<Instant>,
    /// The main frame asked to navigate (link, form, script) and has not started loading yet.
    pub nav_requested: Option<Instant>,
    pub crashed: bool,
    pub detached: bool,
    pub oopifs: Vec<OopFrame>,
    pub pointer: (f64, f64),
    /// Main-frame navigations committed so far (a document replaced).
    pub navigations: u64,
    /// Per frame id: documents committed in that frame so far.
    pub frame_navigations: HashMap<FrameId, u64>,
    pub dead: Option<tokio::sync::watch::Sender<bool>>,
    /// An open JavaScript dialog, and the session whose page opened it.
    pub dialog: Option<(sightline_page::JsDialog, SessionId)>,
    pub dialog_tx: Option<tokio::sync::watch::Sender<bool>>,
    /// Why the last intercepted main-frame navigation failed (see `Tab::navigate`).
    pub nav_error: Option<crate::LoadFailure>,
    /// The last main-frame document that was the egress proxy's answer to a
    /// failed or refused load (not intercepted: a blank tab's first load), by loader.
    pub proxy_failure: Option<(String, crate::LoadFailure)>,
    /// The tab is one we opened and still shows the blank page it was opened
    /// with: no document has committed in it since (so no page script ever
    /// ran there, and a failed load has nothing to preserve but a blank page).
    pub blank: bool,
    /// Out-of-process frames attached and not yet done loading, since when.
    pub oopif_loading: HashMap<FrameId, Instant>,
    /// Page scripts stopped because the page stopped answering ([`Tab::unstick`]).
    pub scripts_stopped: u64,
    /// When the page's main thread last answered a probe read or a liveness check.
    pub answered_at: Option<Instant>,
    /// Hangs in a row: page scripts stopped with no answer between ([`Tab::unstick`]).
    pub hangs: u32,
    /// When a page script was last stopped ([`Tab::unstick`]).
    pub stopped_at: Option<Instant>,
    /// The page was frozen because it kept hanging ([`Tab::is_frozen`]).
    pub frozen: bool,
    /// Its scripts are disabled too (until its next document, or a thaw).
    pub scripts_disabled: bool,
    /// A file chooser the page opened and no upload answered yet (see `files.rs`).
    pub file_chooser: Option<crate::files::Chooser>,
    /// The element a click is being delivered to (frame session, backend id).
    pub clicking: Option<(SessionId, i64)>,
}

impl Tracker {
    fn mark_dead(&mut self, crashed: bool) {
        if crashed {
            self.crashed = true;
        } else {
            self.detached = true;
        }
        if let Some(tx) = &self.dead {
            let _ = tx.send(true);
        }
    }
}

pub struct Tab {
    /// Turns true when the page crashes or its target goes away.
    pub(crate) dead: tokio::sync::watch::Receiver<bool>,
    /// True while a JavaScript dialog is open.
    pub(crate) dialog: tokio::sync::watch::Receiver<bool>,
    pub(crate) browser: Browser,
    pub(crate) client: Client,
    pub(crate) target_id: TargetId,
    pub(crate) context_id: Option<BrowserContextId>,
    /// Whether closing the tab disposes its context.
    pub(crate) owned_context: bool,
    pub(crate) session: SessionId,
    pub(crate) opts: TabOptions,
    pub(crate) state: Arc<Mutex<Tracker>>,
    events: tokio::task::JoinHandle<()>,
}

impl Tab {
    pub(crate) async fn open(
        browser: Browser,
        opts: TabOptions,
        shared_context: Option<BrowserContextId>,
    ) -> Result<Tab, BrowserError> {
        let client = browser.client().clone();
        let (context_id, owned_context) = match shared_context {
            Some(c) => (c, false),
            None => {
                let ctx = client.execute(None, &target::CreateBrowserContext { dispose_on_detach: true }).await?;
                (ctx.browser_context_id, true)
            }
        };
        let created = client
            .execute(None, &target::CreateTarget { url: "about:blank", browser_context_id: Some(&context_id) })
            .await?;
        let tab = Tab::attach_session(browser, created.target_id, Some(context_id), owned_context, opts).await?;
        // Only a tab we created starts blank; a popup's page runs its opener's scripts.
        let mut st = tab.state.lock().unwrap();
        st.blank = st.navigations == 0;
        drop(st);
        Ok(tab)
    }

    /// Attach a flattened session to a page target and start following it.
    async fn attach_session(
        browser: Browser,
        target_id: TargetId,
        context_id: Option<BrowserContextId>,
        owned_context: bool,
        opts: TabOptions,
    ) -> Result<Tab, BrowserError> {
        let client = browser.client().clone();
        let session =
            client.execute(None, &target::AttachToTarget { target_id: &target_id, flatten: true }).await?.session_id;
        let (dead_tx, dead) = tokio::sync::watch::channel(false);
        let (dialog_tx, dialog) = tokio::sync::watch::channel(false);
        let state = Arc::new(Mutex::new(Tracker {
            pointer: (opts.viewport.0 as f64 / 2.0, opts.viewport.1 as f64 / 2.0),
            dead: Some(dead_tx),
            dialog_tx: Some(dialog_tx),
            ..Tracker::default()
        }));
        let events = tokio::spawn(track(client.clone(), client.subscribe(None), session.clone(), state.clone()));
        let tab =
            Tab { dead, dialog, browser, client, target_id, context_id, owned_context, session, opts, state, events };
        tab.setup_session(&tab.session.clone(), true).await?;
        let tree = tab.call(&page::GetFrameTree {}).await?;
        tab.state.lock().unwrap().main_frame = Some(tree.frame_tree.frame.id);
        Ok(tab)
    }

    /// Attach to a page target that already exists (a popup the page opened).
    /// The tab shares its opener's browser context and does not own it.
    pub async fn attach(browser: Browser, target_id: &TargetId, opts: TabOptions) -> Result<Tab, BrowserError> {
        let tab = Tab::attach_session(browser, target_id.clone(), None, false, opts).await?;
        let _ = tab.call(&runtime::RunIfWaitingForDebugger {}).await;
        Ok(tab)
    }

    /// Wait until a tab that was attached while loading (a popup) has loaded its
    /// document, then for a stable page. Capped by the load timeout; says how the wait ended.
    pub async fn wait_loaded(&self) -> Result<Settled, BrowserError> {
        let start = Instant::now();
        loop {
            let v = self
                .eval_isolated(&self.session, runtime::Evaluate::new("[document.readyState, location.href]").by_value())
                .await;
            match v {
                Ok(v) => {
                    let value = v.result.value.unwrap_or_default();
                    let ready = value[0].as_str() == Some("complete");
                    let blank = value[1].as_str() == Some("about:blank");
                    if ready && (!blank || start.elapsed() > Duration::from_millis(500)) {
                        break;
                    }
                }
                Err(BrowserError::DialogOpen) => return Ok(Settled::Dialog),
                Err(e @ (BrowserError::Crashed | BrowserError::TabClosed | BrowserError::Cdp(_))) => {
                    if self.check_alive().is_err() {
                        return Err(e);
                    }
                }
                Err(_) => {}
            }
            if start.elapsed() > self.opts.settle.load_timeout {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        self.settle(Instant::now()).await
    }

    /// Enable what we listen to on a page or OOPIF session.
    pub(crate) async fn setup_session(&self, s: &SessionId, page: bool) -> Result<(), BrowserError> {
        let c = &self.client;
        let (w, h) = self.opts.viewport;
        let s = Some(s);
        let metrics =
            emulation::SetDeviceMetricsOverride { width: w, height: h, device_scale_factor: 1.0, mobile: false };
        // Sent together (each is written to the socket on its first poll), in this order.
        let (inspector, page_enable, network, probe, auto_attach, metrics, lifecycle, chooser) = tokio::join!(
            // Inspector.targetCrashed only arrives with the domain enabled.
            c.execute(s, &inspector::Enable {}),
            c.execute(s, &page::Enable {}),
            c.execute(s, &network::Enable {}),
            c.execute(s, &page::AddScriptToEvaluateOnNewDocument { source: PROBE_SCRIPT }),
            c.execute(s, &AUTO_ATTACH),
            async {
                if page {
                    c.execute(s, &metrics).await.map(Some)
                } else {
                    Ok(None)
                }
            },
            async {
                if page {
                    c.execute(s, &page::SetLifecycleEventsEnabled { enabled: true }).await.map(Some)
                } else {
                    Ok(None)
                }
            },
            // No native file dialog ever blocks the page: `Page.fileChooserOpened` instead.
            c.execute(s, &page::SetInterceptFileChooserDialog { enabled: true }),
        );
        inspector?;
        page_enable?;
        network?;
        probe?;
        auto_attach?;
        metrics?;
        lifecycle?;
        chooser?;
        Ok(())
    }

    /// A command on the page session.
    pub(crate) async fn call<C: Command>(&self, cmd: &C) -> Result<C::Response, BrowserError> {
        self.cdp(&self.session, cmd).await
    }

    /// A command on one of this tab's sessions. Fails at once when the page is
    /// dead, and aborts the wait if it dies meanwhile (a crashed renderer never answers).
    pub(crate) async fn cdp<C: Command>(&self, session: &SessionId, cmd: &C) -> Result<C::Response, BrowserError> {
        self.cdp_within(session, cmd, Duration::from_secs(60)).await
    }

    /// Release a group of remote objects without waiting for the reply: the
    /// release leaves in order with every later call, so none of them can see
    /// the objects, and the capture does not wait a round trip for it.
    pub(crate) fn release(&self, session: &SessionId, group: &'static str) {
        let release = sightline_cdp::protocol::runtime::ReleaseObjectGroup { object_group: group };
        let _ = self.client.send_only(Some(session), &release);
    }

    /// [`Tab::cdp`] with its own time limit.
    pub(crate) async fn cdp_within<C: Command>(
        &self,
        session: &SessionId,
        cmd: &C,
        limit: Duration,
    ) -> Result<C::Response, BrowserError> {
        self.check_alive()?;
        // While a JavaScript dialog is open the page's main thread is paused: a call
        // that needs it would wait for good. Such calls fail at once, and a call that
        // was waiting when a dialog opened (the click that called `confirm()`) stops waiting.
        if *self.dialog.borrow() {
            return Err(BrowserError::DialogOpen);
        }
        let mut dead = self.dead.clone();
        let mut dialog = self.dialog.clone();
        tokio::select! {
            r = self.client.execute_within(Some(session), cmd, limit) => Ok(r?),
            _ = dead.wait_for(|d| *d) => Err(if self.is_closed() { BrowserError::TabClosed } else { BrowserError::Crashed }),
            _ = dialog.wait_for(|d| *d) => Err(BrowserError::DialogOpen),
        }
    }

    /// The open JavaScript dialog, if any.
    pub fn open_dialog(&self) -> Option<sightline_page::JsDialog> {
        self.state.lock().unwrap().dialog.as_ref().map(|(d, _)| d.clone())
    }

    /// Set the text of an open `prompt()` (answered later with [`Tab::answer_dialog`]).
    pub fn set_prompt_text(&self, text: &str) {
        if let Some((d, _)) = self.state.lock().unwrap().dialog.as_mut() {
            d.prompt_text = Some(text.to_string());
        }
    }

    /// Answer an open dialog the way an unattended browser would: accept `alert` and
    /// `beforeunload`, dismiss `confirm` and `prompt`. Returns what was answered, so
    /// the caller can say so (never silently).
    pub async fn answer_dialog_by_default(&self) -> Result<Option<(sightline_page::JsDialog, bool)>, BrowserError> {
        let Some(d) = self.open_dialog() else { return Ok(None) };
        let accept = matches!(d.kind.as_str(), "alert" | "beforeunload");
        self.answer_dialog(accept).await?;
        Ok(Some((d, accept)))
    }

    /// Accept or dismiss the open JavaScript dialog, then wait for the page.
    pub async fn answer_dialog(&self, accept: bool) -> Result<(), BrowserError> {
        if !self.close_dialog(accept).await? {
            return Ok(());
        }
        let since = Instant::now();
        self.wait_after(since).await
    }

    /// Accept or dismiss the open JavaScript dialog, if there is one (whether there was).
    pub(crate) async fn close_dialog(&self, accept: bool) -> Result<bool, BrowserError> {
        let Some((d, session)) = self.state.lock().unwrap().dialog.clone() else { return Ok(false) };
        let answer = page::HandleJavaScriptDialog { accept, prompt_text: d.prompt_text.as_deref().filter(|_| accept) };
        let r = self.client.execute_within(Some(&session), &answer, Duration::from_secs(10)).await;
        {
            // Closed now (or already gone): the page runs again.
            let mut st = self.state.lock().unwrap();
            st.dialog = None;
            if let Some(tx) = &st.dialog_tx {
                let _ = tx.send(false);
            }
        }
        if let Err(e) = r {
            if !matches!(e, sightline_cdp::CdpError::Protocol { .. }) {
                return Err(e.into());
            }
        }
        Ok(true)
    }

    pub(crate) fn check_alive(&self) -> Result<(), BrowserError> {
        let st = self.state.lock().unwrap();
        if st.crashed || st.detached || self.client.is_closed() {
            return Err(if self.client.is_closed() {
                BrowserError::Cdp(sightline_cdp::CdpError::Disconnected)
            } else if st.crashed {
                BrowserError::Crashed
            } else {
                BrowserError::TabClosed
            });
        }
        Ok(())
    }

    /// True once the page closed itself (`window.close()`) or its target went away, without a crash.
    pub fn is_closed(&self) -> bool {
        let st = self.state.lock().unwrap();
        st.detached && !st.crashed && !self.client.is_closed()
    }

    /// The CDP frame id of the page's main frame (known once the tab is attached).
    pub(crate) fn main_frame(&self) -> Option<FrameId> {
        self.state.lock().unwrap().main_frame.clone()
    }

    /// Send one CDP command to the page session as is (benchmarks and diagnostics):
    /// no dialog or crash guard, so a command that never gets its answer (`Page.crash`)
    /// shows how the client itself copes.
    pub async fn execute<C: Command>(&self, cmd: &C) -> Result<C::Response, BrowserError> {
        self.check_alive()?;
        Ok(self.client.execute(Some(&self.session), cmd).await?)
    }

    /// Whether a backend node (in the session of capture frame `session`) is still in its document.
    pub async fn node_alive(
        &self,
        session: &SessionId,
        backend: BackendNodeId,
        frame: Option<&FrameId>,
    ) -> Result<bool, BrowserError> {
        let r = self.resolve_isolated(session, backend, None, frame).await;
        let object = match r {
            Ok(v) => v.object.object_id,
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => None,
            Err(e) => return Err(e),
        };
        let Some(object) = object else { return Ok(false) };
        let connected = runtime::CallFunctionOn {
            object_id: &object,
            function_declaration: "function(){return this.isConnected}",
            arguments: &[],
            return_by_value: true,
        };
        let v = self.cdp(session, &connected).await?;
        Ok(v.result.value.and_then(|v| v.as_bool()).unwrap_or(false))
    }

    /// Scroll a node into view (centred when it was outside).
    pub async fn scroll_node_into_view(&self, session: &SessionId, backend: BackendNodeId) -> Result<(), BrowserError> {
        let since = self.mark().await;
        self.cdp(session, &dom::ScrollIntoViewIfNeeded { backend_node_id: backend }).await?;
        self.wait_after(since).await
    }

    /// Evaluate a fixed expression in the main frame and return its value. For
    /// diagnostics and tests; agents never reach this.
    pub async fn evaluate(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        self.eval_json(expression).await
    }

    /// How many page scripts were stopped because the page did not answer ([`Tab::unstick`]).
    pub fn scripts_stopped(&self) -> u64 {
        self.state.lock().unwrap().scripts_stopped
    }

    /// How many main-frame navigations have committed in this tab.
    pub fn navigation_count(&self) -> u64 {
        self.state.lock().unwrap().navigations
    }

    /// How many documents have committed in a frame (its loader identity, as a number).
    pub fn frame_generation(&self, frame_id: &FrameId) -> u64 {
        self.state.lock().unwrap().frame_navigations.get(frame_id).copied().unwrap_or(0)
    }

    /// The CDP target id (kept inside Sightline; never shown to callers).
    pub fn target_id(&self) -> &TargetId {
        &self.target_id
    }

    /// The browser context this tab lives in (unknown for an attached popup).
    pub fn context_id(&self) -> Option<&BrowserContextId> {
        self.context_id.as_ref()
    }

    /// The page's CDP session (the main frame and its same-process frames).
    pub fn session(&self) -> &sightline_cdp::SessionId {
        &self.session
    }

    /// True once the page crashed or its target went away.
    pub fn is_dead(&self) -> bool {
        let st = self.state.lock().unwrap();
        st.crashed || st.detached
    }

    pub fn options(&self) -> &TabOptions {
        &self.opts
    }

    /// Close this page only (`close_tab`): its browser context and the other pages
    /// in it stay. Returns once the target is gone (or after a second).
    pub async fn close_page(&self) -> Result<(), BrowserError> {
        self.client.execute(None, &target::CloseTarget { target_id: &self.target_id }).await?;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while !self.is_dead() && std::time::Instant::now() < until {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        Ok(())
    }

    /// Close the target and its browser context.
    pub async fn close(self) {
        let _ = self.client.execute(None, &target::CloseTarget { target_id: &self.target_id }).await;
        if let Some(ctx) = self.context_id.as_ref().filter(|_| self.owned_context) {
            let _ = self.client.execute(None, &target::DisposeBrowserContext { browser_context_id: ctx }).await;
        }
        self.events.abort();
    }

    pub fn browser(&self) -> &Browser {
        &self.browser
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        self.events.abort();
    }
}

/// Follows the tab's events until the connection closes.
async fn track(
    client: Client,
    mut rx: tokio::sync::mpsc::Receiver<Event>,
    page: SessionId,
    state: Arc<Mutex<Tracker>>,
) {
    while let Some(ev) = rx.recv().await {
        if ev.method.starts_with("Page.") || ev.method.starts_with("Target.") || ev.method.starts_with("Inspector.") {
            tracing::trace!(method = %ev.method, params = %sightline_page::cut(ev.params.get(), 120), "event");
        }
        let ours = {
            let st = state.lock().unwrap();
            ev.session.as_ref() == Some(&page) || st.oopifs.iter().any(|f| Some(&f.session) == ev.session.as_ref())
        };
        if !ours {
            if let Some(d) = ev.decode::<target::DetachedFromTarget>().filter(|_| ev.session.is_none()) {
                if d.session_id == page {
                    state.lock().unwrap().mark_dead(false);
                }
            }
            continue;
        }
        let now = Instant::now();
        match ev.method.as_str() {
            network::RequestWillBeSent::METHOD => {
                let Some(v) = ev.decode::<network::RequestWillBeSent>() else { continue };
                let kind = v.kind.as_deref().unwrap_or("");
                tracing::trace!(id = %v.request_id, kind, url = %sightline_page::cut(&v.request.url, 80), "request");
                // Requests that never say they are done, or that no person waits for:
                // sockets, streams, media, beacons, prefetches, reports.
                if !matches!(
                    kind,
                    "WebSocket"
                        | "EventSource"
                        | "Media"
                        | "Ping"
                        | "Prefetch"
                        | "Manifest"
                        | "CSPViolationReport"
                        | "SignedExchange"
                ) {
                    let mut st = state.lock().unwrap();
                    st.inflight.insert(v.request_id, now);
                }
            }
            network::ResponseReceived::METHOD => {
                // The egress proxy answers a failed or refused connection itself; for
                // the main frame's document that is a failed load, not a page. Only a
                // blank tab's first load is read here: every other one is intercepted,
                // and aborted before this (see `Tab::navigate`).
                if ev.session.as_ref() != Some(&page) || !state.lock().unwrap().blank {
                    continue;
                }
                let document =
                    ev.decode::<network::ResponseKind>().is_some_and(|k| k.kind.as_deref() == Some("Document"));
                if !document {
                    continue;
                }
                let Some(v) = ev.decode::<network::ResponseReceived>() else { continue };
                if let Some(failed) = crate::LoadFailure::from_proxy_headers(|h| v.header(h)) {
                    let mut st = state.lock().unwrap();
                    if v.frame_id.is_some() && v.frame_id == st.main_frame {
                        st.proxy_failure = Some((v.loader_id, failed));
                    }
                }
            }
            network::LoadingFinished::METHOD | network::LoadingFailed::METHOD => {
                let id = match ev.decode::<network::LoadingFinished>() {
                    Some(v) => v.request_id,
                    None => match ev.decode::<network::LoadingFailed>() {
                        Some(v) => v.request_id,
                        None => continue,
                    },
                };
                state.lock().unwrap().inflight.remove(&id);
            }
            page::FrameStartedLoading::METHOD | page::FrameStoppedLoading::METHOD => {
                let stopped = ev.is::<page::FrameStoppedLoading>();
                let frame_id = match ev.decode::<page::FrameStartedLoading>() {
                    Some(v) => v.frame_id,
                    None => match ev.decode::<page::FrameStoppedLoading>() {
                        Some(v) => v.frame_id,
                        None => continue,
                    },
                };
                let mut st = state.lock().unwrap();
                if ev.session.as_ref() != Some(&page) {
                    if stopped {
                        st.oopif_loading.remove(&frame_id);
                    } else {
                        st.oopif_loading.insert(frame_id.clone(), now);
                    }
                }
                if ev.session.as_ref() == Some(&page) && st.main_frame.as_ref() == Some(&frame_id) {
                    st.main_loading = !stopped;
                    st.main_loading_since = st.main_loading.then_some(now);
                    st.nav_requested = None;
                }
            }
            page::FrameRequestedNavigation::METHOD => {
                let Some(v) = ev.decode::<page::FrameRequestedNavigation>() else { continue };
                let mut st = state.lock().unwrap();
                if ev.session.as_ref() == Some(&page) && st.main_frame.as_ref() == Some(&v.frame_id) {
                    st.nav_requested = Some(now);
                }
            }
            page::FrameNavigated::METHOD => {
                let Some(v) = ev.decode::<page::FrameNavigated>() else { continue };
                let mut st = state.lock().unwrap();
                *st.frame_navigations.entry(v.frame.id.clone()).or_insert(0) += 1;
                if v.frame.parent_id.is_none() && ev.session.as_ref() == Some(&page) {
                    st.main_frame = Some(v.frame.id);
                    st.navigations += 1;
                    st.blank = false;
                    st.file_chooser = None;
                    // Requests of the old document no longer matter.
                    st.inflight.retain(|_, t| now.duration_since(*t) < Duration::from_millis(50));
                }
            }
            fetch::RequestPaused::METHOD => {
                // Only enabled while `navigate` runs: a main-frame document that failed to
                // load is aborted instead of committing Chromium's error page, so the
                // previous document stays, alive and as it was.
                let Some(v) = ev.decode::<fetch::RequestPaused>() else { continue };
                // A network failure has no HTTP status; an HTTP error page (a 405 with an
                // empty body) is a page and goes through.
                // Sightline's egress proxy answers a failed or refused connection itself;
                // its headers say so, and that is a failed load too, not a page.
                let failed = v
                    .response_error_reason
                    .as_deref()
                    .filter(|_| v.response_status_code.is_none())
                    .map(crate::LoadFailure::from_fetch_reason)
                    .or_else(|| crate::LoadFailure::from_proxy_headers(|h| v.header(h)));
                let main = {
                    let mut st = state.lock().unwrap();
                    let main = v.frame_id.is_some() && v.frame_id == st.main_frame;
                    if let (true, Some(reason)) = (main, failed.as_ref()) {
                        st.nav_error = Some(reason.clone());
                    }
                    main
                };
                // A frozen page being left: its scripts come back on before the new
                // document commits, so that the new document's own scripts run (the
                // page stays frozen, so the old one's cannot start again meanwhile).
                let enable = main && std::mem::take(&mut state.lock().unwrap().scripts_disabled);
                let c = client.clone();
                let s = ev.session.clone();
                tokio::spawn(async move {
                    let id = v.request_id.as_str();
                    if enable {
                        let on = sightline_cdp::protocol::emulation::SetScriptExecutionDisabled { value: false };
                        let _ = c.execute(s.as_ref(), &on).await;
                    }
                    let _ = if main && failed.is_some() {
                        c.execute(s.as_ref(), &fetch::FailRequest { request_id: id, error_reason: "Aborted" }).await
                    } else {
                        c.execute(s.as_ref(), &fetch::ContinueRequest { request_id: id }).await
                    };
                });
            }
            page::JavascriptDialogOpening::METHOD => {
                let Some(v) = ev.decode::<page::JavascriptDialogOpening>() else { continue };
                let dialog = sightline_page::JsDialog {
                    prompt_text: (v.kind == "prompt").then(|| v.default_prompt.unwrap_or_default()),
                    kind: v.kind,
                    message: v.message,
                    url: v.url,
                };
                let mut st = state.lock().unwrap();
                if let Some(s) = ev.session.clone() {
                    st.dialog = Some((dialog, s));
                    if let Some(tx) = &st.dialog_tx {
                        let _ = tx.send(true);
                    }
                }
            }
            page::JavascriptDialogClosed::METHOD => {
                let mut st = state.lock().unwrap();
                st.dialog = None;
                if let Some(tx) = &st.dialog_tx {
                    let _ = tx.send(false);
                }
            }
            input::DragIntercepted::METHOD => {
                let Some(v) = ev.decode::<input::DragIntercepted>() else { continue };
                state.lock().unwrap().drag = Some(v.data);
            }
            page::FileChooserOpened::METHOD => {
                let (Some(v), Some(s)) = (ev.decode::<page::FileChooserOpened>(), ev.session.clone()) else { continue };
                crate::files::chooser_opened(&mut state.lock().unwrap(), s, v);
            }
            inspector::TargetCrashed::METHOD if ev.session.as_ref() == Some(&page) => {
                state.lock().unwrap().mark_dead(true);
            }
            target::AttachedToTarget::METHOD => {
                let Some(a) = ev.decode::<target::AttachedToTarget>() else { continue };
                let s = a.session_id;
                if a.target_info.kind == "iframe" {
                    // An out-of-process iframe's target id is its frame id.
                    let frame_id = FrameId(a.target_info.target_id.0);
                    {
                        let mut st = state.lock().unwrap();
                        let parent = ev.session.clone();
                        st.oopifs.push(OopFrame { frame_id: frame_id.clone(), session: s.clone(), parent });
                        st.oopif_loading.insert(frame_id, now);
                    }
                    // The frame was attached paused (waitForDebuggerOnStart): set up what we
                    // watch (crashes, loading, requests, the settle probe), then let it run,
                    // so nothing in it runs unobserved.
                    let c = client.clone();
                    tokio::spawn(async move {
                        let s = Some(&s);
                        let _ = c.execute(s, &inspector::Enable {}).await;
                        let _ = c.execute(s, &page::Enable {}).await;
                        let _ = c.execute(s, &network::Enable {}).await;
                        let _ = c.execute(s, &AUTO_ATTACH).await;
                        let _ = c.execute(s, &page::SetInterceptFileChooserDialog { enabled: true }).await;
                        let _ = c.execute(s, &page::AddScriptToEvaluateOnNewDocument { source: PROBE_SCRIPT }).await;
                        let _ = c.execute(s, &runtime::RunIfWaitingForDebugger {}).await;
                    });
                } else {
                    // A worker's script request is reported here but finishes in the
                    // worker's own session, which we do not follow: stop counting it
                    // (its request id is the worker's target id).
                    state.lock().unwrap().inflight.remove(a.target_info.target_id.as_str());
                    // Workers and the like: let them run, we do not drive them.
                    let c = client.clone();
                    tokio::spawn(async move {
                        let _ = c.execute(Some(&s), &runtime::RunIfWaitingForDebugger {}).await;
                    });
                }
            }
            target::DetachedFromTarget::METHOD => {
                let Some(v) = ev.decode::<target::DetachedFromTarget>() else { continue };
                let mut st = state.lock().unwrap();
                st.oopifs.retain(|f| f.session != v.session_id);
                if let Some(t) = v.target_id {
                    st.oopif_loading.remove(&FrameId(t.0));
                }
            }
            _ => {}
        }
    }
    state.lock().unwrap().mark_dead(false);
}

#[cfg(test)]
mod tests {
    use super::parse_viewport;

    #[test]
    fn a_viewport_is_width_x_height_with_sides_in_range() {
        assert_eq!(parse_viewport("1280x720"), Ok((1280, 720)));
        assert_eq!(parse_viewport("800X600"), Ok((800, 600)));
        for bad in ["800", "5x5", "100x9000", "axb", ""] {
            assert_eq!(parse_viewport(bad).unwrap_err().given, bad);
        }
    }
}
