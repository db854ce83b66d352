//! Waiting for a stable page after an action or a navigation.
//!
//! Stable means: no main-frame load in progress, no request started since the
//! action still in flight, no short timer the page scheduled from an event
//! handler still pending, no finite animation running, and no DOM mutation for
//! a short quiet window. Each condition is capped, so a page that never rests
//! (a long-poll, an endless spinner) costs at most `cap`. An action that changes
//! nothing returns after one probe, with no fixed sleep.

use std::time::{Duration, Instant};

use sightline_cdp::protocol::runtime::Evaluate;

use crate::{BrowserError, Tab};

pub(crate) const PROBE_SCRIPT: &str = include_str!("probe.js");

/// Limits for [`Tab::settle`].
#[derive(Debug, Clone)]
pub struct SettleOptions {
    /// The most one wait may take after an action (default 3 s).
    pub cap: Duration,
    /// The most a navigation's load may take before we give up on it (default 15 s).
    pub load_timeout: Duration,
    /// How long the DOM must stay unchanged (default 40 ms).
    pub quiet: Duration,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            cap: Duration::from_secs(3),
            load_timeout: Duration::from_secs(15),
            quiet: Duration::from_millis(40),
        }
    }
}

/// How a wait for a stable page ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a wait can time out; say what happens then"]
pub enum Settled {
    /// The page is stable.
    Stable,
    /// A JavaScript dialog is open: the page is paused, and that is its state until
    /// the dialog is answered.
    Dialog,
    /// The wait hit its limit: a main-frame load still running after
    /// [`SettleOptions::load_timeout`] (`loading`), or a page still busy after
    /// [`SettleOptions::cap`].
    TimedOut { after: Duration, loading: bool },
}

impl Settled {
    /// True when the wait ended on its limit, not on a stable page.
    pub fn timed_out(self) -> bool {
        matches!(self, Settled::TimedOut { .. })
    }
}

/// What the probe saw.
#[derive(Debug, Default, Clone, Copy)]
struct Probe {
    timers: u32,
    quiet_ms: f64,
    animations: u32,
    complete: bool,
}

impl Tab {
    /// Reset the in-page probe's notion of "since the action".
    pub(crate) async fn mark(&self) -> Instant {
        let started = Instant::now();
        let _ = self.call(&Evaluate::new("window.__sightline && window.__sightline.mark()").by_value()).await;
        started
    }

    async fn probe(&self, after_frame: bool) -> Option<Probe> {
        let expression = if after_frame {
            "window.__sightline ? window.__sightline.afterFrame() : null"
        } else {
            "window.__sightline ? window.__sightline.probe() : null"
        };
        let v = self.call(&Evaluate::new(expression).by_value().await_promise(after_frame)).await.ok()?.result.value?;
        let a = v.as_array()?;
        Some(Probe {
            timers: a.first()?.as_u64()? as u32,
            quiet_ms: a.get(1)?.as_f64()?,
            animations: a.get(2)?.as_u64()? as u32,
            complete: a.get(3)?.as_u64()? == 1,
        })
    }

    /// Tracker view: (a main-frame load is pending, requests started since `since`).
    fn network(&self, since: Instant) -> (bool, usize) {
        let st = self.state.lock().unwrap();
        // A requested navigation that never starts (204, download, cancelled) stops counting after 1 s.
        let requested = st.nav_requested.is_some_and(|t| t >= since && t.elapsed() < Duration::from_secs(1));
        // Out-of-process frames that attached since the action and are still loading
        // count like requests (capped like them, so a frame that never loads costs the cap).
        let frames = st.oopif_loading.values().filter(|t| **t >= since).count();
        // A load this action started may take the load time limit; a document that was
        // already loading before it (a page that never finishes) only holds the wait
        // like a request, up to the cap.
        let started_before =
            st.main_loading && st.main_loading_since.is_some_and(|t| t + Duration::from_millis(50) < since);
        let loading = (st.main_loading && !started_before) || requested;
        (loading, st.inflight.values().filter(|t| **t >= since).count() + frames + usize::from(started_before))
    }

    /// After an action: wait for a stable page, and take the page as it is when the
    /// wait times out. A page that never rests (a long-poll, an endless spinner) is
    /// still the action's outcome; the next capture shows it as it is.
    pub(crate) async fn wait_after(&self, since: Instant) -> Result<(), BrowserError> {
        let _outcome = self.settle(since).await?;
        Ok(())
    }

    /// Wait until the page is stable, counting requests started after `since`.
    /// Reports how the wait ended: a timeout is not an error; the caller decides.
    pub async fn settle(&self, since: Instant) -> Result<Settled, BrowserError> {
        let o = self.opts.settle.clone();
        let start = Instant::now();
        let mut first = true;
        loop {
            self.check_alive()?;
            // A JavaScript dialog pauses the page: it is the stable state until answered.
            if *self.dialog.borrow() {
                return Ok(Settled::Dialog);
            }
            let (loading, _) = self.network(since);
            if loading {
                if start.elapsed() >= o.load_timeout {
                    tracing::debug!(after = ?start.elapsed(), "settle: still loading at the load timeout");
                    return Ok(Settled::TimedOut { after: start.elapsed(), loading: true });
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            if start.elapsed() >= o.cap {
                tracing::debug!(after = ?start.elapsed(), "settle: not quiet at the cap");
                return Ok(Settled::TimedOut { after: start.elapsed(), loading: false });
            }
            // The first probe waits a frame and a task, so whatever the action set off
            // (a navigation, a fetch, a re-render) has reported itself before we read the tracker.
            let probe = self.probe(std::mem::take(&mut first)).await;
            let (loading, inflight) = self.network(since);
            if loading {
                continue;
            }
            let settled = |p: &Probe| inflight == 0 && p.timers == 0 && p.animations == 0 && p.complete;
            let quiet = match &probe {
                Some(p) => settled(p) && p.quiet_ms >= o.quiet.as_millis() as f64,
                // No probe: the document is being replaced, or scripts cannot run
                // (about:blank, error pages): judge by the network alone.
                None => inflight == 0 && start.elapsed() >= o.quiet,
            };
            if quiet {
                tracing::debug!(after = ?start.elapsed(), ?probe, inflight, "settled");
                return Ok(Settled::Stable);
            }
            let wait = match &probe {
                Some(p) if settled(p) => {
                    Duration::from_millis(((o.quiet.as_millis() as f64 - p.quiet_ms).max(5.0)) as u64)
                }
                _ => Duration::from_millis(20),
            };
            tokio::time::sleep(wait.min(Duration::from_millis(50))).await;
        }
    }
}
