//! How a session ends: the guard for a start whose client went away, liveness, and the one end of a session.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sightline_browser::Browser;

use super::{BrowserSource, Hub, Session};
use crate::error::{EndReason, ServerError};
use crate::grid::{self, GridSession};

/// A session created for a request that may still go away: ended when
/// dropped while it still holds the id (the request's future was dropped
/// before the caller learned the id).
pub(super) struct Unclaimed {
    pub(super) hub: Arc<Hub>,
    pub(super) id: Option<String>,
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let hub = self.hub.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { hub.end_any(&id, EndReason::Deleted).await });
        }
    }
}

impl Session {
    /// Whether the Grid no longer runs this session's WebDriver session: two
    /// WebDriver reads in a row ([`GRID_PROBE`] apart) answered with an error.
    /// The browser can outlive it: when the chromedriver behind a session dies,
    /// its Chromium goes on answering CDP through the Grid's proxy while the
    /// Grid answers every WebDriver command with 500 and cannot end the session.
    pub(super) async fn driver_gone(&self) -> bool {
        let Some(g) = &self.grid else { return false };
        let due = {
            let mut last = self.probed.lock().unwrap();
            let due = last.is_none_or(|t| t.elapsed() >= GRID_PROBE);
            if due {
                *last = Some(Instant::now());
            }
            due
        };
        if due {
            match grid::held(g.clone()).await {
                Some(false) => self.driver_misses.fetch_add(1, Ordering::Relaxed),
                Some(true) => self.driver_misses.swap(0, Ordering::Relaxed),
                None => 0,
            };
        }
        self.driver_misses.load(Ordering::Relaxed) >= 2
    }
}

/// How often each Grid session's WebDriver session is asked after ([`Session::driver_gone`]).
pub const GRID_PROBE: Duration = Duration::from_secs(5);

/// Whether a browser answers a trivial command within 10 s.
pub(super) async fn alive(b: &Browser) -> bool {
    !b.client().is_closed() && matches!(tokio::time::timeout(Duration::from_secs(10), b.version()).await, Ok(Ok(_)))
}

pub(super) fn endpoint_of(source: &BrowserSource, b: &Browser) -> Result<String, ServerError> {
    match source {
        BrowserSource::Connect(url) => Ok(url.clone()),
        _ => {
            let dir = b.profile_dir().ok_or_else(|| ServerError::Browser("the launched browser has no profile"))?;
            let port = std::fs::read_to_string(dir.join("DevToolsActivePort")).map_err(ServerError::DevToolsPort)?;
            let port = port.lines().next().unwrap_or_default().trim().to_string();
            Ok(format!("http://127.0.0.1:{port}"))
        }
    }
}

/// Close a forgotten session's tabs and context, and return its Grid browser.
/// A browser that stopped answering gets 10 s; then the connection is just dropped.
/// Giving a Grid browser back is counted from the call, not from the first
/// poll, so shutdown waits for one spawned an instant before it.
pub(super) fn finish(s: Arc<Session>) -> impl std::future::Future<Output = ()> + Send {
    let counted = s.grid.as_ref().map(GridSession::counted);
    async move {
        let _ = tokio::time::timeout(Duration::from_secs(10), s.api.shutdown()).await;
        if s.driver_misses.load(Ordering::Relaxed) >= 2 {
            // Its chromedriver is gone and cannot quit it: close the browser over CDP.
            let close = s.watch.client().execute(None, &sightline_cdp::protocol::browser::Close {});
            let _ = tokio::time::timeout(Duration::from_secs(5), close).await;
        }
        if let Some(g) = s.grid.clone() {
            grid::delete_session(g).await;
        }
        drop(counted);
    }
}
