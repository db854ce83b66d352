//! The protocol's actions, delivered as a user would: real mouse, wheel and key
//! events through `Input.*`, each followed by a wait for a stable page. Every
//! action re-checks its target right before acting, and refuses (changing
//! nothing) when the element is disabled, gone, hidden or covered.
//!
//! Every action runs in one bracket, [`Tab::act`]: a frozen page revived (or
//! the action refused), the in-page probe marked, the action, the wait.
//! Pointer actions are in `pointer.rs`, typing in `typing.rs`, navigation in
//! `navigate.rs`, keys and history in `press.rs`, drags in `drag.rs`.

mod pointer;
mod typing;

use sightline_cdp::protocol::input::{DispatchKeyEvent, DispatchMouseEvent, MouseButton, MouseEventKind};
use sightline_cdp::protocol::runtime::{CallArgument, CallFunctionOn};
use sightline_cdp::protocol::Command;
use sightline_cdp::{BackendNodeId, FrameId, SessionId};
use sightline_page::{Element, ElementIndex};

use crate::capture::Captured;
pub use crate::keys::NAMED_KEYS;
use crate::{BrowserError, Refusal, Tab};
pub use pointer::Direction;
pub use typing::KEYED_PREFIX;

/// What a JavaScript dialog the action opens means for its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DialogIs {
    /// An error: the action answers `DialogOpen`.
    Error,
    /// The action's outcome, whether it opened during the action or the wait:
    /// the dialog is the next state.
    Outcome,
    /// The outcome when it opened during the wait; an error during the action.
    OutcomeOfWait,
}

/// An action that opened a JavaScript dialog has done its part: the dialog is the next state.
pub(crate) fn dialog_is_outcome(r: Result<(), BrowserError>) -> Result<(), BrowserError> {
    match r {
        Err(BrowserError::DialogOpen) => Ok(()),
        other => other,
    }
}

/// How long one input event's handlers may run before they are stopped.
const HANDLER_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) fn describe_element(e: &Element) -> String {
    let d = &e.descriptor;
    match &d.type_ {
        Some(t) if d.tag == "input" => format!("<input type={t}>"),
        _ => format!("<{}>", d.tag),
    }
}

impl Tab {
    /// The one bracket of every action: revive a frozen page (or refuse: it could
    /// not react), mark the in-page probe, run `act`, then wait for a stable page
    /// counting what started since the mark. An action that checks its element
    /// first revives before the check too ([`Tab::revive`] is then a no-op here).
    pub(crate) async fn act(
        &self,
        dialog: DialogIs,
        act: impl AsyncFnOnce() -> Result<(), BrowserError>,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
        let since = self.mark().await;
        match act().await {
            Err(BrowserError::DialogOpen) if dialog == DialogIs::Outcome => return Ok(()),
            r => r?,
        }
        let waited = self.wait_after(since).await;
        if dialog == DialogIs::Error {
            waited
        } else {
            dialog_is_outcome(waited)
        }
    }

    pub(crate) fn element<'a>(&self, cap: &'a Captured, index: ElementIndex) -> Result<&'a Element, BrowserError> {
        cap.view.element(index).ok_or_else(|| BrowserError::Unexpected(format!("no element {index}")))
    }

    /// The element's node as an object of Sightline's isolated world in the
    /// element's own frame (a same-process cross-origin frame has a world of its own).
    pub(crate) async fn object_id(&self, cap: &Captured, e: &Element) -> Result<String, BrowserError> {
        let (session, backend, index) = (&cap.sessions[e.frame], e.backend_node_id, e.index);
        let frame = cap.view.frame_of(e.node).map(|f| FrameId(f.to_string()));
        let r = self.resolve_isolated(session, BackendNodeId(backend), None, frame.as_ref()).await;
        match r {
            Ok(v) => v.object.object_id.ok_or(BrowserError::NotInteractive { index, reason: Refusal::Detached }),
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => {
                Err(BrowserError::NotInteractive { index, reason: Refusal::Detached })
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn call_on(
        &self,
        session: &SessionId,
        object: &str,
        f: &str,
        args: &[CallArgument],
    ) -> Result<String, BrowserError> {
        let call =
            CallFunctionOn { object_id: object, function_declaration: f, arguments: args, return_by_value: true };
        let v = self.cdp(session, &call).await?;
        Ok(v.result.value.as_ref().and_then(|v| v.as_str()).unwrap_or_default().to_string())
    }

    /// A left-button press or release at a viewport point.
    pub(crate) async fn button(
        &self,
        kind: MouseEventKind,
        x: f64,
        y: f64,
        click_count: u32,
    ) -> Result<(), BrowserError> {
        let pressed = u32::from(kind == MouseEventKind::MousePressed);
        let event = DispatchMouseEvent {
            button: Some(MouseButton::Left),
            buttons: Some(pressed),
            click_count: Some(click_count),
            ..DispatchMouseEvent::at(kind, x, y)
        };
        self.input(&event).await
    }

    /// One input event. Chromium answers once the page has handled it; a handler
    /// that never returns (an endless loop) is stopped after [`HANDLER_LIMIT`]
    /// with `Runtime.terminateExecution`, so the page lives on, and the action fails.
    pub(crate) async fn input<C: Command>(&self, event: &C) -> Result<(), BrowserError> {
        self.check_responsive()?;
        match self.cdp_within(&self.session, event, HANDLER_LIMIT).await {
            Ok(_) => Ok(()),
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Timeout { .. })) => {
                if self.hung().await {
                    return Err(BrowserError::Unresponsive);
                }
                Err(BrowserError::PageScript(format!(
                    "the page's event handler ran for more than {} s and was stopped",
                    HANDLER_LIMIT.as_secs()
                )))
            }
            Err(e) => Err(e),
        }
    }

    /// Move the pointer in a few steps, so hover effects and menus react.
    pub(crate) async fn move_pointer(&self, x: f64, y: f64) -> Result<(), BrowserError> {
        // Straight onto the target, then a step or two inside it: the pointer moves
        // more than once (a menu that opens under a resting pointer defers its first
        // hover to the next move) but never crosses the elements on the way (a menu
        // bar's neighbours would open their own menus).
        for (px, py) in [(x - 2.0, y - 1.0), (x - 1.0, y), (x, y)] {
            self.input(&DispatchMouseEvent::at(MouseEventKind::MouseMoved, px, py)).await?;
        }
        self.state.lock().unwrap().input.pointer = (x, y);
        Ok(())
    }

    pub(crate) async fn press(&self, events: impl IntoIterator<Item = DispatchKeyEvent>) -> Result<(), BrowserError> {
        for ev in events {
            self.input(&ev).await?;
        }
        Ok(())
    }
}
