//! The tab's event task: each event decoded once into a [`TabEvent`] and
//! dispatched to the state owner it concerns. The client routes here only the
//! page's session, its frames' sessions (added as they attach) and the
//! browser's detach of the page; a gap in them is re-read, never left wrong.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use sightline_cdp::protocol::{fetch, input, inspector, network, page, runtime, target};
use sightline_cdp::{Client, Event, EventParams, FrameId, Routed, SessionId, SessionsHandle, Subscription};

use super::dialogs::Dialogs;
use super::frames::{Frames, OopFrame};
use super::life::{Life, LifeOwner};
use super::loading::Loading;
use super::setup::{setup_session, SessionKind};
use crate::liveness::Liveness;

/// Input as the page last saw it.
pub(crate) struct Input {
    /// Where the pointer rests (a wheel turn with no element goes there).
    pub pointer: (f64, f64),
    /// The data of an HTML5 drag the page started while drags are intercepted (`drag`).
    pub drag: Option<Box<serde_json::value::RawValue>>,
}

/// Everything the tab's events tell, one owner per concern.
pub(crate) struct Tracker {
    pub life: LifeOwner,
    pub loading: Loading,
    pub dialogs: Dialogs,
    pub frames: Frames,
    pub liveness: Liveness,
    pub input: Input,
    /// Times the event task fell behind and events were missed (each re-read).
    pub gaps: u64,
    /// Events missed in those gaps.
    pub missed: u64,
}

/// The events a tab acts on, decoded once.
enum TabEvent {
    Request(network::RequestWillBeSent),
    /// A document's response, as the page's session reports it.
    DocumentResponse(network::ResponseReceived),
    RequestDone(String),
    FrameLoading {
        frame_id: FrameId,
        stopped: bool,
    },
    NavigationRequested(FrameId),
    Navigated(page::FrameNavigated),
    DocumentPaused(fetch::RequestPaused),
    DialogOpening(page::JavascriptDialogOpening),
    DialogClosed,
    DragIntercepted(input::DragIntercepted),
    ChooserOpened(page::FileChooserOpened),
    Crashed,
    Attached(target::AttachedToTarget),
    Detached(target::DetachedFromTarget),
}

impl TabEvent {
    fn decode(ev: &Event) -> Option<TabEvent> {
        Some(match ev.method.as_str() {
            network::RequestWillBeSent::METHOD => TabEvent::Request(ev.decode()?),
            network::ResponseReceived::METHOD => {
                let document =
                    ev.decode::<network::ResponseKind>().is_some_and(|k| k.kind.as_deref() == Some("Document"));
                if !document {
                    return None;
                }
                TabEvent::DocumentResponse(ev.decode()?)
            }
            network::LoadingFinished::METHOD => {
                TabEvent::RequestDone(ev.decode::<network::LoadingFinished>()?.request_id)
            }
            network::LoadingFailed::METHOD => TabEvent::RequestDone(ev.decode::<network::LoadingFailed>()?.request_id),
            page::FrameStartedLoading::METHOD => {
                TabEvent::FrameLoading { frame_id: ev.decode::<page::FrameStartedLoading>()?.frame_id, stopped: false }
            }
            page::FrameStoppedLoading::METHOD => {
                TabEvent::FrameLoading { frame_id: ev.decode::<page::FrameStoppedLoading>()?.frame_id, stopped: true }
            }
            page::FrameRequestedNavigation::METHOD => {
                TabEvent::NavigationRequested(ev.decode::<page::FrameRequestedNavigation>()?.frame_id)
            }
            page::FrameNavigated::METHOD => TabEvent::Navigated(ev.decode()?),
            fetch::RequestPaused::METHOD => TabEvent::DocumentPaused(ev.decode()?),
            page::JavascriptDialogOpening::METHOD => TabEvent::DialogOpening(ev.decode()?),
            page::JavascriptDialogClosed::METHOD => TabEvent::DialogClosed,
            input::DragIntercepted::METHOD => TabEvent::DragIntercepted(ev.decode()?),
            page::FileChooserOpened::METHOD => TabEvent::ChooserOpened(ev.decode()?),
            inspector::TargetCrashed::METHOD => TabEvent::Crashed,
            target::AttachedToTarget::METHOD => TabEvent::Attached(ev.decode()?),
            target::DetachedFromTarget::METHOD => TabEvent::Detached(ev.decode()?),
            _ => return None,
        })
    }
}

/// What the event task holds.
pub(crate) struct Tracking {
    pub client: Client,
    pub page: SessionId,
    pub state: Arc<Mutex<Tracker>>,
    pub sessions: SessionsHandle,
}

/// Follows the tab's events until the connection closes (then the page counts as closed).
pub(crate) async fn track(t: Tracking, mut events: Subscription) {
    while let Some(routed) = events.next().await {
        match routed {
            Routed::Event(ev) => {
                if ev.method.starts_with("Page.")
                    || ev.method.starts_with("Target.")
                    || ev.method.starts_with("Inspector.")
                {
                    tracing::trace!(method = %ev.method, params = %sightline_page::cut(ev.params.get(), 120), "event");
                }
                if let Some(te) = TabEvent::decode(&ev) {
                    t.dispatch(ev.session, te);
                }
            }
            Routed::Gap { missed } => t.gap(missed),
        }
    }
    t.state.lock().unwrap().life.end(Life::Closed);
}

impl Tracking {
    fn dispatch(&self, from: Option<SessionId>, ev: TabEvent) {
        let now = Instant::now();
        let on_page = from.as_ref() == Some(&self.page);
        let mut st = self.state.lock().unwrap();
        match ev {
            TabEvent::Request(v) => st.loading.on_request(v, now),
            TabEvent::DocumentResponse(v) if on_page => st.loading.on_document_response(v),
            TabEvent::DocumentResponse(_) => {}
            TabEvent::RequestDone(id) => st.loading.on_request_done(&id),
            TabEvent::FrameLoading { frame_id, stopped } => {
                if on_page {
                    st.loading.on_frame_loading(&frame_id, stopped, now);
                } else {
                    st.frames.on_loading(frame_id, stopped, now);
                }
            }
            TabEvent::NavigationRequested(frame_id) if on_page => st.loading.on_navigation_requested(&frame_id, now),
            TabEvent::NavigationRequested(_) => {}
            TabEvent::Navigated(v) => {
                if st.loading.on_navigated(v, on_page, now) {
                    st.dialogs.on_new_document();
                }
            }
            TabEvent::DocumentPaused(v) => {
                // Only enabled while `navigate` runs: a main-frame document that failed to
                // load is aborted instead of committing Chromium's error page, so the
                // previous document stays, alive and as it was.
                let (main, failed) = st.loading.on_document_paused(&v);
                // A frozen page being left: its scripts come back on before the new
                // document commits, so that the new document's own scripts run (the
                // page stays frozen, so the old one's cannot start again meanwhile).
                let enable = main && st.liveness.take_scripts_disabled();
                drop(st);
                let c = self.client.clone();
                tokio::spawn(async move {
                    let id = v.request_id.as_str();
                    if enable {
                        let on = sightline_cdp::protocol::emulation::SetScriptExecutionDisabled { value: false };
                        let _ = c.execute(from.as_ref(), &on).await;
                    }
                    let _ = if main && failed.is_some() {
                        c.execute(from.as_ref(), &fetch::FailRequest { request_id: id, error_reason: "Aborted" }).await
                    } else {
                        c.execute(from.as_ref(), &fetch::ContinueRequest { request_id: id }).await
                    };
                });
            }
            TabEvent::DialogOpening(v) => {
                if let Some(s) = from {
                    st.dialogs.on_opening(s, v);
                }
            }
            TabEvent::DialogClosed => st.dialogs.on_closed(),
            TabEvent::DragIntercepted(v) => st.input.drag = Some(v.data),
            TabEvent::ChooserOpened(v) => {
                if let Some(s) = from {
                    st.dialogs.on_chooser_opened(s, v);
                }
            }
            TabEvent::Crashed if on_page => st.life.end(Life::Crashed),
            TabEvent::Crashed => {}
            TabEvent::Attached(a) => {
                drop(st);
                self.attached(from, a, now);
            }
            TabEvent::Detached(v) if from.is_none() => {
                // The browser's word that the page's own session is gone.
                if v.session_id == self.page {
                    st.life.end(Life::Closed);
                }
            }
            TabEvent::Detached(v) => {
                if st.frames.on_detached(&v.session_id, v.target_id.map(|t| FrameId(t.0))) {
                    self.sessions.remove(&v.session_id);
                }
            }
        }
    }

    /// A child target attached (paused) to one of our sessions.
    fn attached(&self, parent: Option<SessionId>, a: target::AttachedToTarget, now: Instant) {
        let s = a.session_id;
        let c = self.client.clone();
        if a.target_info.kind == "iframe" {
            // An out-of-process iframe's target id is its frame id. Its events are
            // routed here from now on; it runs once set up, so none is missed.
            let frame_id = FrameId(a.target_info.target_id.0);
            self.sessions.add(s.clone());
            let frame = OopFrame { frame_id, session: s.clone(), parent };
            self.state.lock().unwrap().frames.on_attached(frame, now);
            tokio::spawn(async move {
                let _ = setup_session(&c, &s, SessionKind::Frame).await;
                let _ = c.execute(Some(&s), &runtime::RunIfWaitingForDebugger {}).await;
            });
        } else {
            // A worker's script request is reported here but finishes in the
            // worker's own session, which we do not follow: stop counting it
            // (its request id is the worker's target id).
            self.state.lock().unwrap().loading.on_request_done(a.target_info.target_id.as_str());
            // Workers and the like: let them run, we do not drive them.
            tokio::spawn(async move {
                let _ = c.execute(Some(&s), &runtime::RunIfWaitingForDebugger {}).await;
            });
        }
    }

    /// Events were missed: what they said is unknown now. Requests and frame
    /// loads stop counting (a lost `loadingFinished` must not hold the next wait
    /// to its cap), and the main frame and its load state are marked to be read
    /// again before the next wait relies on them (`Tab::reread_loading`).
    fn gap(&self, missed: u64) {
        tracing::warn!(missed, "the tab's event queue fell behind: its state is re-read");
        let mut st = self.state.lock().unwrap();
        st.gaps += 1;
        st.missed += missed;
        st.loading.forget();
        st.frames.forget();
    }
}
