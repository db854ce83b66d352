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

use serde_json::{json, Value};
use sightline_cdp::SessionId;

use crate::{BrowserError, Tab};

/// The name of Sightline's isolated world in every frame.
pub(crate) const WORLD: &str = "sightline";

impl Tab {
    /// The CDP frame id a session's document belongs to (the page's main frame,
    /// or the out-of-process frame the session was attached for).
    fn frame_of_session(&self, session: &SessionId) -> Option<String> {
        if *session == self.session {
            return Some(self.main_frame());
        }
        let st = self.state.lock().unwrap();
        st.oopifs.iter().find(|f| f.session == *session).map(|f| f.frame_id.clone())
    }

    /// The execution context of Sightline's isolated world in a session's frame.
    pub(crate) async fn world(&self, session: &SessionId) -> Result<i64, BrowserError> {
        let frame = self
            .frame_of_session(session)
            .ok_or_else(|| BrowserError::Unexpected("no frame for this session".to_string()))?;
        let v: Value =
            self.cdp(session, "Page.createIsolatedWorld", json!({ "frameId": frame, "worldName": WORLD })).await?;
        v["executionContextId"]
            .as_i64()
            .ok_or_else(|| BrowserError::Unexpected("Page.createIsolatedWorld gave no context".to_string()))
    }

    /// `Runtime.evaluate` in the isolated world of a session's frame (`params`
    /// as for `Runtime.evaluate`; the context is filled in).
    pub(crate) async fn eval_isolated(&self, session: &SessionId, mut params: Value) -> Result<Value, BrowserError> {
        params["contextId"] = self.world(session).await?.into();
        self.cdp(session, "Runtime.evaluate", params).await
    }

    /// `DOM.resolveNode` into the isolated world, so functions called on the
    /// object run there. A node of a nested same-process frame that the main
    /// frame's world cannot reach (a cross-origin frame) resolves in its own
    /// frame's main world instead.
    pub(crate) async fn resolve_isolated(
        &self,
        session: &SessionId,
        backend: i64,
        group: Option<&str>,
    ) -> Result<Value, BrowserError> {
        let mut p = json!({ "backendNodeId": backend });
        if let Some(g) = group {
            p["objectGroup"] = g.into();
        }
        if let Ok(ctx) = self.world(session).await {
            let mut q = p.clone();
            q["executionContextId"] = ctx.into();
            if let Ok(v) = self.cdp::<Value>(session, "DOM.resolveNode", q).await {
                return Ok(v);
            }
        }
        self.cdp(session, "DOM.resolveNode", p).await
    }
}
