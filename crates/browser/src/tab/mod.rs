//! One page target, as a cheap handle: its sessions, and the state its events
//! keep, split by owner (`life`, `loading`, `dialogs`, `frames`, `setup`,
//! `track`; liveness in `liveness.rs`, the wait in `settle.rs`).

mod dialogs;
mod frames;
mod life;
mod loading;
mod setup;
mod track;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sightline_cdp::protocol::{dom, page, runtime, target};
use sightline_cdp::{BackendNodeId, BrowserContextId, Client, Command, EventFilter, FrameId, SessionId, TargetId};

pub(crate) use life::Life;
pub(crate) use track::Tracker;

use crate::settle::{SettleOptions, Settled};
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

/// One page target: a cheap handle (clones share the page, its sessions and
/// its event task). [`Tab::close`] closes it for every clone, once.
#[derive(Clone)]
pub struct Tab {
    inner: Arc<TabInner>,
}

/// What the clones of a [`Tab`] share.
pub struct TabInner {
    /// Alive, crashed or closed: the event task ends it.
    pub(crate) life: tokio::sync::watch::Receiver<Life>,
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
    /// Per session, the backend ids of the last walk's kept elements, handed
    /// to the next walk (`walk.rs`).
    pub(crate) walked: Mutex<std::collections::HashMap<SessionId, crate::walk::Learned>>,
    /// Walks that knew every kept element's backend id (nothing described).
    pub(crate) walks_ids_known: std::sync::atomic::AtomicU64,
    /// Set by the first [`Tab::close`].
    closing: AtomicBool,
    events: tokio::task::JoinHandle<()>,
}

impl std::ops::Deref for Tab {
    type Target = TabInner;
    fn deref(&self) -> &TabInner {
        &self.inner
    }
}

impl Drop for TabInner {
    fn drop(&mut self) {
        self.events.abort();
    }
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
        st.loading.blank = st.loading.navigations == 0;
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
        let (life_owner, life) = life::LifeOwner::new();
        let (dialogs, dialog) = dialogs::Dialogs::new();
        let state = Arc::new(Mutex::new(Tracker {
            life: life_owner,
            loading: Default::default(),
            dialogs,
            frames: Default::default(),
            liveness: Default::default(),
            input: track::Input { pointer: (opts.viewport.0 as f64 / 2.0, opts.viewport.1 as f64 / 2.0), drag: None },
            gaps: 0,
            missed: 0,
        }));
        // Routed here: the page's session, and each frame's as it attaches.
        let events = client.subscribe_bounded(EventFilter::session(session.clone()), opts.settle.event_queue);
        let tracking = track::Tracking {
            client: client.clone(),
            page: session.clone(),
            state: state.clone(),
            sessions: events.sessions(),
        };
        let events = tokio::spawn(track::track(tracking, events));
        let tab = Tab {
            inner: Arc::new(TabInner {
                life,
                dialog,
                browser,
                client,
                target_id,
                context_id,
                owned_context,
                session,
                opts,
                state,
                walked: Default::default(),
                walks_ids_known: Default::default(),
                closing: AtomicBool::new(false),
                events,
            }),
        };
        let kind = setup::SessionKind::Page { viewport: tab.opts.viewport };
        setup::setup_session(&tab.client, &tab.session, kind).await?;
        let tree = tab.call(&page::GetFrameTree {}).await?;
        let frame = tree.frame_tree.frame;
        let mut st = tab.state.lock().unwrap();
        (st.loading.main_frame, st.loading.main_loader) = (Some(frame.id), frame.loader_id);
        drop(st);
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
        if self.dialog_is_open() {
            return Err(BrowserError::DialogOpen);
        }
        tokio::select! {
            r = self.client.execute_within(Some(session), cmd, limit) => Ok(r?),
            _ = self.until_dead() => Err(self.ended()),
            _ = self.until_dialog() => Err(BrowserError::DialogOpen),
        }
    }

    /// The CDP frame id of the page's main frame (known once the tab is attached).
    pub(crate) fn main_frame(&self) -> Option<FrameId> {
        self.state.lock().unwrap().loading.main_frame.clone()
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
        let scroll = dom::ScrollIntoViewIfNeeded { backend_node_id: backend };
        self.act(crate::actions::DialogIs::Error, async || self.cdp(session, &scroll).await.map(|_| ())).await
    }

    /// Evaluate a fixed expression in the main frame and return its value. For
    /// diagnostics and tests; agents never reach this.
    pub async fn evaluate(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        self.eval_json(expression).await
    }

    /// How many main-frame navigations have committed in this tab.
    pub fn navigation_count(&self) -> u64 {
        self.state.lock().unwrap().loading.navigations
    }

    /// How many documents have committed in a frame (its loader identity, as a number).
    pub fn frame_generation(&self, frame_id: &FrameId) -> u64 {
        self.state.lock().unwrap().loading.frame_navigations.get(frame_id).copied().unwrap_or(0)
    }

    /// How often this tab's event task fell behind, and how many events it missed
    /// then: each gap made it re-read what it tracks (see `tab/track.rs`).
    pub fn event_gaps(&self) -> (u64, u64) {
        let st = self.state.lock().unwrap();
        (st.gaps, st.missed)
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

    /// Close the target and its browser context (when the tab owns it), and let
    /// go of this handle (the last one lets go of the browser too). Safe twice:
    /// only the first close of any clone closes; the other clones see a closed
    /// tab, whose calls answer `TabClosed`, and closing them does nothing more.
    pub async fn close(self) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        let _ = self.client.execute(None, &target::CloseTarget { target_id: &self.target_id }).await;
        if let Some(ctx) = self.context_id.as_ref().filter(|_| self.owned_context) {
            let _ = self.client.execute(None, &target::DisposeBrowserContext { browser_context_id: ctx }).await;
        }
        self.events.abort();
        self.state.lock().unwrap().life.end(Life::Closed);
    }

    pub fn browser(&self) -> &Browser {
        &self.browser
    }
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
