//! Waiting for a stable page after an action or a navigation.
//!
//! Stable means: no main-frame load in progress, no request started since the
//! action still in flight, no short timer the page scheduled from an event
//! handler still pending, no finite animation running, and no DOM mutation for
//! a short quiet window. Each condition is capped, so a page that never rests
//! (a long-poll, an endless spinner) costs at most `cap`. An action that changes
//! nothing returns after one probe, with no fixed sleep.
//!
//! Nothing the page does can stretch the wait past its cap. The probe lives in
//! the page's main world, so the page can replace what it calls or make it
//! lie: every read of it is bounded ([`PROBE_LIMIT`]), and a read that times
//! out or comes back malformed counts as "unknown" (the wait goes on to the
//! cap). A page whose main thread does not answer at all (a script in an
//! endless loop) gets its script stopped ([`Tab::unstick`], `liveness.rs`).

use std::time::{Duration, Instant};

use sightline_cdp::protocol::runtime::Evaluate;

use crate::{BrowserError, Tab};

/// The most one read of the in-page probe may take. A page whose promise or
/// probe never answers costs this per read, never the CDP call limit.
pub const PROBE_LIMIT: Duration = Duration::from_secs(1);

/// How long the page's main thread may go without answering a trivial
/// evaluation before the script holding it is stopped (`Runtime.terminateExecution`,
/// as a browser's "page unresponsive" dialog would). Generous, so a page that is
/// only slow on a loaded machine is left alone.
pub(crate) const UNRESPONSIVE_AFTER: Duration = Duration::from_secs(5);

/// A page that stops answering again this soon after one of its scripts was
/// stopped (a mutation observer that replaces the body on every mutation, a
/// timer that restarts the loop) is frozen, not stopped again and again. A
/// freeze that was not needed (a short chain of loops, such as a left page's
/// `pagehide` and `unload` handlers) is undone by the next action ([`Tab::revive`]).
pub(crate) const REHANG_WINDOW: Duration = Duration::from_secs(30);

/// How long a page whose script was just stopped, and that has not answered
/// since, may go without answering before it counts as hung again.
pub(crate) const REHANG_AFTER: Duration = Duration::from_secs(2);

/// How long a thawed page ([`Tab::revive`]) has to answer, in each of
/// [`REVIVE_ROUNDS`] rounds (a script stopped between), before it is frozen again.
pub(crate) const REVIVE_LIMIT: Duration = Duration::from_secs(1);
pub(crate) const REVIVE_ROUNDS: usize = 3;

/// A page that answered this recently is not asked again before a capture.
pub(crate) const ANSWERED_RECENTLY: Duration = Duration::from_millis(500);

/// While a navigation away is pending, how often it checks that the page being left still answers.
pub(crate) const LEAVING_CHECK_EVERY: Duration = Duration::from_secs(2);

/// While a load runs, how often the wait checks that the page still answers.
const LOADING_CHECK_EVERY: Duration = Duration::from_secs(2);

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
    /// Events the tab's event task may have queued (default [`sightline_cdp::EVENT_QUEUE`]).
    /// Past it events are missed, and the tab re-reads what they would have told
    /// (requests stop counting, the main frame's load is read again): the wait
    /// never runs to its cap on a lost event. Small only to test that.
    pub event_queue: usize,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            cap: Duration::from_secs(3),
            load_timeout: Duration::from_secs(15),
            quiet: Duration::from_millis(40),
            event_queue: sightline_cdp::EVENT_QUEUE,
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

/// One read of the probe.
#[derive(Debug, Clone, Copy)]
enum ProbeRead {
    Read(Probe),
    /// The document has no probe (about:blank, an error page): judge by the network.
    Missing,
    /// No answer within [`PROBE_LIMIT`], an error, or an answer of the wrong
    /// shape: the page's own scripts may have tampered with it. Not stable.
    Unknown,
}

impl Tab {
    /// Reset the in-page probe's notion of "since the action" (bounded: a page that
    /// does not answer is not waited for).
    pub(crate) async fn mark(&self) -> Instant {
        let started = Instant::now();
        let mark = Evaluate::new("window.__sightline && window.__sightline.mark()").by_value();
        let _ = self.cdp_within(&self.session, &mark, PROBE_LIMIT).await;
        started
    }

    async fn probe(&self, after_frame: bool) -> ProbeRead {
        let expression = if after_frame {
            "window.__sightline ? window.__sightline.afterFrame() : null"
        } else {
            "window.__sightline ? window.__sightline.probe() : null"
        };
        let read = Evaluate::new(expression).by_value().await_promise(after_frame);
        let v = match self.cdp_within(&self.session, &read, PROBE_LIMIT).await {
            Ok(v) => {
                self.answered();
                v.result.value
            }
            Err(_) => return ProbeRead::Unknown,
        };
        let Some(v) = v.filter(|v| !v.is_null()) else { return ProbeRead::Missing };
        let parsed = (|| {
            let a = v.as_array().filter(|a| a.len() == 4)?;
            Some(Probe {
                timers: u32::try_from(a[0].as_u64()?).ok()?,
                quiet_ms: a[1].as_f64()?,
                animations: u32::try_from(a[2].as_u64()?).ok()?,
                complete: a[3].as_u64()? == 1,
            })
        })();
        parsed.map_or(ProbeRead::Unknown, ProbeRead::Read)
    }

    /// Tracker view: (a main-frame load is pending, requests started since `since`).
    fn network(&self, since: Instant) -> (bool, usize) {
        let st = self.state.lock().unwrap();
        // Out-of-process frames that attached since the action and are still loading
        // count like requests (capped like them, so a frame that never loads costs the cap).
        st.loading.network(since, st.frames.loading_since(since))
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
        let mut checked = start;
        loop {
            self.check_alive()?;
            // Events were missed: what they said is read again first.
            self.reread_loading().await;
            // A JavaScript dialog pauses the page: it is the stable state until answered.
            if self.dialog_is_open() {
                return Ok(Settled::Dialog);
            }
            // A frozen page cannot change until it is left.
            if self.is_frozen() {
                return Ok(Settled::Stable);
            }
            let (loading, _) = self.network(since);
            if loading {
                if start.elapsed() >= o.load_timeout {
                    tracing::debug!(after = ?start.elapsed(), "settle: still loading at the load timeout");
                    return Ok(Settled::TimedOut { after: start.elapsed(), loading: true });
                }
                // A load held by a script that never yields (`for(;;){}` on load)
                // would hold the wait to the load timeout and every call after it.
                if checked.elapsed() >= LOADING_CHECK_EVERY {
                    self.unstick().await?;
                    checked = Instant::now();
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
                ProbeRead::Read(p) => settled(p) && p.quiet_ms >= o.quiet.as_millis() as f64,
                // No probe: the document is being replaced, or scripts cannot run
                // (about:blank, error pages): judge by the network alone.
                ProbeRead::Missing => inflight == 0 && start.elapsed() >= o.quiet,
                // A probe that does not answer or lies: unknown, so the cap decides;
                // and a page that does not answer at all gets its script stopped.
                ProbeRead::Unknown => {
                    self.unstick().await?;
                    false
                }
            };
            if quiet {
                tracing::debug!(after = ?start.elapsed(), ?probe, inflight, "settled");
                return Ok(Settled::Stable);
            }
            let wait = match &probe {
                ProbeRead::Read(p) if settled(p) => {
                    Duration::from_millis(((o.quiet.as_millis() as f64 - p.quiet_ms).max(5.0)) as u64)
                }
                _ => Duration::from_millis(20),
            };
            tokio::time::sleep(wait.min(Duration::from_millis(50))).await;
        }
    }
}
