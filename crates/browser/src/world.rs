//! Sightline's isolated world: where its own scripts run in a page.
//!
//! Page scripts share the DOM with an isolated world but not its JavaScript
//! globals or prototypes: a page cannot see these scripts, wrap the functions
//! they call, or redefine a getter to lie to them. `Page.createIsolatedWorld`
//! returns the same world for the same frame and name until the frame's
//! document changes, so asking for it before each use costs one round trip and
//! needs no cache to invalidate.
//!
//! What still runs in the page's main world, and why: the probe
//! (`probe.js`), which must wrap the page's own `setTimeout` and
//! `addEventListener` to see what the page schedules and listens for, and the
//! two reads of what it recorded (`settle`, pointer listeners); and
//! `browser.eval()` of the scripting pack, whose point is to run in the page.

use sightline_cdp::protocol::dom::{ResolveNode, ResolveNodeReply};
use sightline_cdp::protocol::page::CreateIsolatedWorld;
use sightline_cdp::protocol::runtime::{Evaluate, EvaluateReply};
use sightline_cdp::{BackendNodeId, ExecutionContextId, FrameId, SessionId};

use crate::{BrowserError, Tab};

/// One capture's isolated world of one session ([`Tab::world_once`]).
pub(crate) type WorldCell = tokio::sync::OnceCell<ExecutionContextId>;

/// The name of Sightline's isolated world in every frame.
pub(crate) const WORLD: &str = "sightline";

impl Tab {
    /// The CDP frame id a session's document belongs to (the page's main frame,
    /// or the out-of-process frame the session was attached for).
    pub(crate) fn frame_of_session(&self, session: &SessionId) -> Option<FrameId> {
        if *session == self.session {
            return self.main_frame();
        }
        self.state.lock().unwrap().frames.frame_of(session)
    }

    /// The execution context of Sightline's isolated world in a session's frame.
    pub(crate) async fn world(&self, session: &SessionId) -> Result<ExecutionContextId, BrowserError> {
        self.world_in(session, None).await
    }

    /// The isolated world of a session's frame, asked for once per `cell`: the
    /// reads of one capture share it (several asked for at once are one round
    /// trip; a lookup that failed is asked again by the next). None when it
    /// cannot be had.
    pub(crate) async fn world_once(&self, session: &SessionId, cell: &WorldCell) -> Option<ExecutionContextId> {
        cell.get_or_try_init(|| self.world(session)).await.ok().copied()
    }

    /// The isolated world of one frame of a session: `frame`, else the
    /// session's own frame. A same-process frame of another origin needs its
    /// own: a node resolved into the parent frame's world is a cross-origin
    /// object there, whose properties cannot be read.
    pub(crate) async fn world_in(
        &self,
        session: &SessionId,
        frame: Option<&FrameId>,
    ) -> Result<ExecutionContextId, BrowserError> {
        let frame = match frame {
            Some(f) => f.clone(),
            None => self
                .frame_of_session(session)
                .ok_or_else(|| BrowserError::Unexpected("no frame for this session".to_string()))?,
        };
        let world = self.cdp(session, &CreateIsolatedWorld { frame_id: &frame, world_name: WORLD }).await?;
        Ok(world.execution_context_id)
    }

    /// `Runtime.evaluate` in the isolated world of a session's frame (the context
    /// is filled in, unless the caller asked [`Tab::world`] for it already).
    pub(crate) async fn eval_isolated(
        &self,
        session: &SessionId,
        eval: Evaluate<'_>,
    ) -> Result<EvaluateReply, BrowserError> {
        let context_id = match eval.context_id {
            Some(world) => Some(world),
            None => Some(self.world(session).await?),
        };
        self.cdp(session, &Evaluate { context_id, ..eval }).await
    }

    /// `DOM.resolveNode` into the isolated world, so functions called on the
    /// object run there. A node of a nested same-process frame that the main
    /// frame's world cannot reach (a cross-origin frame) resolves in its own
    /// frame's main world instead.
    pub(crate) async fn resolve_isolated(
        &self,
        session: &SessionId,
        backend: BackendNodeId,
        group: Option<&str>,
        frame: Option<&FrameId>,
    ) -> Result<ResolveNodeReply, BrowserError> {
        let main_world = ResolveNode { object_group: group, ..ResolveNode::backend(backend) };
        if let Ok(ctx) = self.world_in(session, frame).await {
            let isolated = ResolveNode { execution_context_id: Some(ctx), ..main_world };
            if let Ok(v) = self.cdp(session, &isolated).await {
                return Ok(v);
            }
        }
        self.cdp(session, &main_world).await
    }
}
