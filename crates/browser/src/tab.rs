//! One page target: its sessions, and what its events tell us (requests in
//! flight, main-frame loading, out-of-process frames, crashes).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use sightline_cdp::{Client, Event, SessionId};

use crate::settle::{SettleOptions, PROBE_SCRIPT};
use crate::{Browser, BrowserError};

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

/// An out-of-process iframe attached to this tab.
#[derive(Debug, Clone)]
pub(crate) struct OopFrame {
    pub frame_id: String,
    pub session: SessionId,
}

#[derive(Default)]
pub(crate) struct Tracker {
    pub main_frame: String,
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
    pub frame_navigations: HashMap<String, u64>,
    pub dead: Option<tokio::sync::watch::Sender<bool>>,
    /// An open JavaScript dialog, and the session whose page opened it.
    pub dialog: Option<(sightline_page::JsDialog, SessionId)>,
    pub dialog_tx: Option<tokio::sync::watch::Sender<bool>>,
    /// Why the last intercepted main-frame navigation failed (see `Tab::navigate`).
    pub nav_error: Option<String>,
    /// Out-of-process frames attached and not yet done loading, since when.
    pub oopif_loading: HashMap<String, Instant>,
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
    pub(crate) target_id: String,
    pub(crate) context_id: Option<String>,
    /// Whether closing the tab disposes its context.
    pub(crate) owned_context: bool,
    pub(crate) session: SessionId,
    pub(crate) opts: TabOptions,
    pub(crate) state: Arc<Mutex<Tracker>>,
    events: tokio::task::JoinHandle<()>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AttachedToTarget {
    session_id: String,
    target_info: TargetInfo,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TargetInfo {
    target_id: String,
    #[serde(rename = "type")]
    kind: String,
}

impl Tab {
    pub(crate) async fn open(
        browser: Browser,
        opts: TabOptions,
        shared_context: Option<String>,
    ) -> Result<Tab, BrowserError> {
        let client = browser.client().clone();
        let (context_id, owned_context) = match shared_context {
            Some(c) => (Some(c), false),
            None => {
                let ctx: Value =
                    client.call(None, "Target.createBrowserContext", json!({ "disposeOnDetach": true })).await?;
                (ctx["browserContextId"].as_str().map(str::to_string), true)
            }
        };
        let created: Value = client
            .call(None, "Target.createTarget", json!({ "url": "about:blank", "browserContextId": context_id }))
            .await?;
        let target_id = created["targetId"].as_str().unwrap_or_default().to_string();
        Tab::attach_session(browser, target_id, context_id, owned_context, opts).await
    }

    /// Attach a flattened session to a page target and start following it.
    async fn attach_session(
        browser: Browser,
        target_id: String,
        context_id: Option<String>,
        owned_context: bool,
        opts: TabOptions,
    ) -> Result<Tab, BrowserError> {
        let client = browser.client().clone();
        let attached: Value =
            client.call(None, "Target.attachToTarget", json!({ "targetId": target_id, "flatten": true })).await?;
        let session = SessionId(attached["sessionId"].as_str().unwrap_or_default().to_string());
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
        let tree: Value = tab.call("Page.getFrameTree", json!({})).await?;
        tab.state.lock().unwrap().main_frame =
            tree["frameTree"]["frame"]["id"].as_str().unwrap_or_default().to_string();
        Ok(tab)
    }

    /// Attach to a page target that already exists (a popup the page opened).
    /// The tab shares its opener's browser context and does not own it.
    pub async fn attach(browser: Browser, target_id: &str, opts: TabOptions) -> Result<Tab, BrowserError> {
        let tab = Tab::attach_session(browser, target_id.to_string(), None, false, opts).await?;
        let _: Result<Value, _> = tab.call("Runtime.runIfWaitingForDebugger", json!({})).await;
        Ok(tab)
    }

    /// Wait until a tab that was attached while loading (a popup) has loaded its
    /// document, then for a stable page. Capped by the load timeout.
    pub async fn wait_loaded(&self) -> Result<(), BrowserError> {
        let start = Instant::now();
        loop {
            let v: Result<Value, _> = self
                .eval_isolated(
                    &self.session,
                    json!({ "expression": "[document.readyState, location.href]", "returnByValue": true }),
                )
                .await;
            match v {
                Ok(v) => {
                    let ready = v["result"]["value"][0].as_str() == Some("complete");
                    let blank = v["result"]["value"][1].as_str() == Some("about:blank");
                    if ready && (!blank || start.elapsed() > Duration::from_millis(500)) {
                        break;
                    }
                }
                Err(BrowserError::DialogOpen) => return Ok(()),
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
        let mut calls = vec![
            // Inspector.targetCrashed only arrives with the domain enabled.
            c.call_raw(Some(s), "Inspector.enable", json!({})),
            c.call_raw(Some(s), "Page.enable", json!({})),
            c.call_raw(Some(s), "Network.enable", json!({})),
            c.call_raw(Some(s), "Page.addScriptToEvaluateOnNewDocument", json!({ "source": PROBE_SCRIPT })),
            c.call_raw(
                Some(s),
                "Target.setAutoAttach",
                json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
            ),
        ];
        if page {
            calls.push(c.call_raw(
                Some(s),
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": w, "height": h, "deviceScaleFactor": 1, "mobile": false }),
            ));
            calls.push(c.call_raw(Some(s), "Page.setLifecycleEventsEnabled", json!({ "enabled": true })));
        }
        for r in futures_util::future::join_all(calls).await {
            r?;
        }
        Ok(())
    }

    /// A command on the page session.
    pub(crate) async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<T, BrowserError> {
        self.cdp(&self.session.clone(), method, params).await
    }

    /// A command on one of this tab's sessions. Fails at once when the page is
    /// dead, and aborts the wait if it dies meanwhile (a crashed renderer never answers).
    pub(crate) async fn cdp<T: serde::de::DeserializeOwned>(
        &self,
        session: &SessionId,
        method: &str,
        params: Value,
    ) -> Result<T, BrowserError> {
        let raw = self.cdp_raw(session, method, params, std::time::Duration::from_secs(60)).await?;
        serde_json::from_str(raw.get()).map_err(|e| BrowserError::Unexpected(format!("{method}: {e}")))
    }

    /// [`Tab::cdp`] returning raw JSON, with its own time limit.
    pub(crate) async fn cdp_raw(
        &self,
        session: &SessionId,
        method: &str,
        params: Value,
        limit: std::time::Duration,
    ) -> Result<Box<serde_json::value::RawValue>, BrowserError> {
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
            r = self.client.call_raw_within(Some(session), method, params, limit) => Ok(r?),
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
        let Some((d, session)) = self.state.lock().unwrap().dialog.clone() else { return Ok(()) };
        let mut params = json!({ "accept": accept });
        if let (true, Some(t)) = (accept, d.prompt_text.as_ref()) {
            params["promptText"] = json!(t);
        }
        let r = self
            .client
            .call_raw_within(Some(&session), "Page.handleJavaScriptDialog", params, Duration::from_secs(10))
            .await;
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
        let since = Instant::now();
        self.settle(since).await
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

    /// The CDP session of a frame capture: 0 is the page, then the OOPIFs in capture order.
    /// The CDP frame id of the page's main frame.
    pub(crate) fn main_frame(&self) -> String {
        self.state.lock().unwrap().main_frame.clone()
    }

    pub(crate) fn sessions(&self) -> Vec<SessionId> {
        let st = self.state.lock().unwrap();
        std::iter::once(self.session.clone()).chain(st.oopifs.iter().map(|f| f.session.clone())).collect()
    }

    /// Send one raw CDP command to the page session (benchmarks and diagnostics).
    pub async fn raw_call(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Box<serde_json::value::RawValue>, BrowserError> {
        self.check_alive()?;
        Ok(self.client.call_raw(Some(&self.session), method, params).await?)
    }

    /// Whether a backend node (in the session of capture frame `session`) is still in its document.
    pub async fn node_alive(&self, session: &SessionId, backend: i64) -> Result<bool, BrowserError> {
        let r = self.resolve_isolated(session, backend, None).await;
        let object = match r {
            Ok(v) => v["object"]["objectId"].as_str().map(str::to_string),
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => None,
            Err(e) => return Err(e),
        };
        let Some(object) = object else { return Ok(false) };
        let v: Value = self
            .cdp(session, "Runtime.callFunctionOn", json!({ "objectId": object, "functionDeclaration": "function(){return this.isConnected}", "returnByValue": true }))
            .await?;
        Ok(v["result"]["value"].as_bool().unwrap_or(false))
    }

    /// Scroll a node into view (centred when it was outside).
    pub async fn scroll_node_into_view(&self, session: &SessionId, backend: i64) -> Result<(), BrowserError> {
        let since = self.mark().await;
        let _: Value = self.cdp(session, "DOM.scrollIntoViewIfNeeded", json!({ "backendNodeId": backend })).await?;
        self.settle(since).await
    }

    /// Evaluate a fixed expression in the main frame and return its value. For
    /// diagnostics and tests; agents never reach this.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, BrowserError> {
        self.eval_json(expression).await
    }

    /// How many main-frame navigations have committed in this tab.
    pub fn navigation_count(&self) -> u64 {
        self.state.lock().unwrap().navigations
    }

    /// How many documents have committed in a frame (its loader identity, as a number).
    pub fn frame_generation(&self, frame_id: &str) -> u64 {
        self.state.lock().unwrap().frame_navigations.get(frame_id).copied().unwrap_or(0)
    }

    /// The CDP target id (kept inside Sightline; never shown to callers).
    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// The browser context this tab lives in.
    pub fn context_id(&self) -> Option<&str> {
        self.context_id.as_deref()
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

    /// Close the target and its browser context.
    pub async fn close(self) {
        let _: Result<Value, _> =
            self.client.call(None, "Target.closeTarget", json!({ "targetId": self.target_id })).await;
        if let Some(ctx) = self.context_id.as_ref().filter(|_| self.owned_context) {
            let _: Result<Value, _> =
                self.client.call(None, "Target.disposeBrowserContext", json!({ "browserContextId": ctx })).await;
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
            if ev.method == "Target.detachedFromTarget" && ev.session.is_none() {
                let v: Value = ev.parse().unwrap_or_default();
                if v["sessionId"].as_str() == Some(page.0.as_str()) {
                    state.lock().unwrap().mark_dead(false);
                }
            }
            continue;
        }
        let now = Instant::now();
        match ev.method.as_str() {
            "Network.requestWillBeSent" => {
                let v: Value = ev.parse().unwrap_or_default();
                let kind = v["type"].as_str().unwrap_or("");
                tracing::trace!(id = %v["requestId"], kind, url = %sightline_page::cut(v["request"]["url"].as_str().unwrap_or(""), 80), "request");
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
                    if let Some(id) = v["requestId"].as_str() {
                        let mut st = state.lock().unwrap();
                        st.inflight.insert(id.to_string(), now);
                    }
                }
            }
            "Network.loadingFinished" | "Network.loadingFailed" => {
                let v: Value = ev.parse().unwrap_or_default();
                if let Some(id) = v["requestId"].as_str() {
                    let mut st = state.lock().unwrap();
                    st.inflight.remove(id);
                }
            }
            "Page.frameStartedLoading" | "Page.frameStoppedLoading" => {
                let v: Value = ev.parse().unwrap_or_default();
                let mut st = state.lock().unwrap();
                if ev.session.as_ref() != Some(&page) {
                    if let Some(f) = v["frameId"].as_str() {
                        if ev.method == "Page.frameStoppedLoading" {
                            st.oopif_loading.remove(f);
                        } else {
                            st.oopif_loading.insert(f.to_string(), now);
                        }
                    }
                }
                if ev.session.as_ref() == Some(&page) && v["frameId"].as_str() == Some(st.main_frame.as_str()) {
                    st.main_loading = ev.method == "Page.frameStartedLoading";
                    st.main_loading_since = st.main_loading.then_some(now);
                    st.nav_requested = None;
                }
            }
            "Page.frameRequestedNavigation" => {
                let v: Value = ev.parse().unwrap_or_default();
                let mut st = state.lock().unwrap();
                if ev.session.as_ref() == Some(&page) && v["frameId"].as_str() == Some(st.main_frame.as_str()) {
                    st.nav_requested = Some(now);
                }
            }
            "Page.frameNavigated" => {
                let v: Value = ev.parse().unwrap_or_default();
                let mut st = state.lock().unwrap();
                if let Some(id) = v["frame"]["id"].as_str() {
                    *st.frame_navigations.entry(id.to_string()).or_insert(0) += 1;
                }
                if v["frame"]["parentId"].is_null() && ev.session.as_ref() == Some(&page) {
                    if let Some(id) = v["frame"]["id"].as_str() {
                        st.main_frame = id.to_string();
                    }
                    st.navigations += 1;
                    // Requests of the old document no longer matter.
                    st.inflight.retain(|_, t| now.duration_since(*t) < Duration::from_millis(50));
                }
            }
            "Fetch.requestPaused" => {
                // Only enabled while `navigate` runs: a main-frame document that failed to
                // load is aborted instead of committing Chromium's error page, so the
                // previous document stays, alive and as it was.
                let v: Value = ev.parse().unwrap_or_default();
                let id = v["requestId"].as_str().unwrap_or_default().to_string();
                // A network failure has no HTTP status; an HTTP error page (a 405 with an
                // empty body) is a page and goes through.
                // Sightline's egress proxy answers a failed or refused connection itself;
                // its headers say so, and that is a failed load too, not a page.
                let header = |name: &str| {
                    v["responseHeaders"].as_array().and_then(|hs| {
                        hs.iter()
                            .find(|h| h["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
                            .and_then(|h| h["value"].as_str().map(str::to_string))
                    })
                };
                let failed = v["responseErrorReason"]
                    .as_str()
                    .filter(|_| v["responseStatusCode"].is_null())
                    .map(str::to_string)
                    .or_else(|| header("x-sightline-egress-error").map(|e| format!("net::{e}")))
                    .or_else(|| {
                        header("x-sightline-refused").map(|r| format!("refused by the egress policy (rule {r})"))
                    });
                let main = {
                    let mut st = state.lock().unwrap();
                    let main = v["frameId"].as_str() == Some(st.main_frame.as_str());
                    if let (true, Some(reason)) = (main, failed.as_ref()) {
                        st.nav_error = Some(reason.clone());
                    }
                    main
                };
                let c = client.clone();
                let s = ev.session.clone();
                tokio::spawn(async move {
                    let _ = if main && failed.is_some() {
                        c.call_raw(
                            s.as_ref(),
                            "Fetch.failRequest",
                            json!({ "requestId": id, "errorReason": "Aborted" }),
                        )
                        .await
                    } else {
                        c.call_raw(s.as_ref(), "Fetch.continueRequest", json!({ "requestId": id })).await
                    };
                });
            }
            "Page.javascriptDialogOpening" => {
                let v: Value = ev.parse().unwrap_or_default();
                let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                let kind = text("type");
                let dialog = sightline_page::JsDialog {
                    prompt_text: (kind == "prompt").then(|| text("defaultPrompt")),
                    kind,
                    message: text("message"),
                    url: text("url"),
                };
                let mut st = state.lock().unwrap();
                if let Some(s) = ev.session.clone() {
                    st.dialog = Some((dialog, s));
                    if let Some(tx) = &st.dialog_tx {
                        let _ = tx.send(true);
                    }
                }
            }
            "Page.javascriptDialogClosed" => {
                let mut st = state.lock().unwrap();
                st.dialog = None;
                if let Some(tx) = &st.dialog_tx {
                    let _ = tx.send(false);
                }
            }
            "Inspector.targetCrashed" if ev.session.as_ref() == Some(&page) => {
                state.lock().unwrap().mark_dead(true);
            }
            "Target.attachedToTarget" => {
                if let Some(a) = ev.parse::<AttachedToTarget>() {
                    let s = SessionId(a.session_id);
                    if a.target_info.kind == "iframe" {
                        {
                            let mut st = state.lock().unwrap();
                            st.oopifs.push(OopFrame { frame_id: a.target_info.target_id.clone(), session: s.clone() });
                            st.oopif_loading.insert(a.target_info.target_id.clone(), now);
                        }
                        // The frame was attached paused (waitForDebuggerOnStart): set up what we
                        // watch (crashes, loading, requests, the settle probe), then let it run,
                        // so nothing in it runs unobserved.
                        let c = client.clone();
                        tokio::spawn(async move {
                            let _ = c.call_raw(Some(&s), "Inspector.enable", json!({})).await;
                            let _ = c.call_raw(Some(&s), "Page.enable", json!({})).await;
                            let _ = c.call_raw(Some(&s), "Network.enable", json!({})).await;
                            let _ = c
                                .call_raw(
                                    Some(&s),
                                    "Target.setAutoAttach",
                                    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
                                )
                                .await;
                            let _ = c
                                .call_raw(
                                    Some(&s),
                                    "Page.addScriptToEvaluateOnNewDocument",
                                    json!({ "source": PROBE_SCRIPT }),
                                )
                                .await;
                            let _ = c.call_raw(Some(&s), "Runtime.runIfWaitingForDebugger", json!({})).await;
                        });
                    } else {
                        // A worker's script request is reported here but finishes in the
                        // worker's own session, which we do not follow: stop counting it.
                        state.lock().unwrap().inflight.remove(&a.target_info.target_id);
                        // Workers and the like: let them run, we do not drive them.
                        let c = client.clone();
                        tokio::spawn(async move {
                            let _ = c.call_raw(Some(&s), "Runtime.runIfWaitingForDebugger", json!({})).await;
                        });
                    }
                }
            }
            "Target.detachedFromTarget" => {
                let v: Value = ev.parse().unwrap_or_default();
                if let Some(sid) = v["sessionId"].as_str() {
                    let mut st = state.lock().unwrap();
                    st.oopifs.retain(|f| f.session.0 != sid);
                    if let Some(t) = v["targetId"].as_str() {
                        st.oopif_loading.remove(t);
                    }
                }
            }
            _ => {}
        }
    }
    state.lock().unwrap().mark_dead(false);
}
