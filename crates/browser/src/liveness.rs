//! Liveness: whether the page's main thread answers, and what was done when it
//! did not (a script stopped, the page frozen, thawed again). Its limits are
//! in `settle.rs` ([`UNRESPONSIVE_AFTER`] and the rest), with the wait they bound.

use std::time::{Duration, Instant};

use sightline_cdp::protocol::emulation::SetScriptExecutionDisabled;
use sightline_cdp::protocol::page::{Lifecycle, SetWebLifecycleState};
use sightline_cdp::protocol::runtime::{Evaluate, TerminateExecution};

use crate::settle::{ANSWERED_RECENTLY, REHANG_AFTER, REHANG_WINDOW, REVIVE_LIMIT, REVIVE_ROUNDS, UNRESPONSIVE_AFTER};
use crate::{BrowserError, Tab};

/// What the page's answers (and silences) told so far.
#[derive(Default)]
pub(crate) struct Liveness {
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
}

impl Liveness {
    /// Whether scripts were disabled, and now counted as enabled again.
    pub(crate) fn take_scripts_disabled(&mut self) -> bool {
        std::mem::take(&mut self.scripts_disabled)
    }
}

impl Tab {
    /// How many page scripts were stopped because the page did not answer ([`Tab::unstick`]).
    pub fn scripts_stopped(&self) -> u64 {
        self.state.lock().unwrap().liveness.scripts_stopped
    }

    /// Whether the page's main thread answers a trivial evaluation within `limit`
    /// (an error answer counts: something answered).
    pub(crate) async fn answers(&self, limit: Duration) -> bool {
        let ping = Evaluate::new("0").by_value();
        match self.client.execute_within(Some(&self.session), &ping, limit).await {
            Ok(_) => true,
            Err(sightline_cdp::CdpError::Timeout { .. }) => self.dialog_is_open(),
            Err(_) => true,
        }
    }

    /// When the page's main thread has not answered for [`UNRESPONSIVE_AFTER`] (a
    /// script in an endless loop, on load or in a handler), stop that script with
    /// `Runtime.terminateExecution`, which Chromium runs even while the thread is
    /// busy; the page lives on without it. A page that keeps hanging
    /// ([`FREEZE_AFTER_HANGS`] in a row) is frozen first (`Page.setWebLifecycleState`,
    /// which Chromium also takes while the thread is busy), so none of its scripts
    /// runs again: it is "not responding" ([`Tab::is_frozen`]) until the agent
    /// navigates away. Returns whether a script was stopped.
    pub async fn unstick(&self) -> Result<bool, BrowserError> {
        self.check_alive()?;
        // The page answered a probe read a moment ago (the wait after an action):
        // no need to ask again before the capture.
        let recent = self.state.lock().unwrap().liveness.answered_at.is_some_and(|t| t.elapsed() < ANSWERED_RECENTLY);
        if recent || self.dialog_is_open() {
            return Ok(false);
        }
        if self.answers(self.hang_limit()).await {
            self.answered();
            return Ok(false);
        }
        self.check_alive()?;
        self.hung().await;
        Ok(true)
    }

    /// How long the page may go without answering: [`UNRESPONSIVE_AFTER`], or
    /// [`REHANG_AFTER`] once one of its scripts had to be stopped and it has not answered since.
    pub(crate) fn hang_limit(&self) -> Duration {
        if self.state.lock().unwrap().liveness.hangs > 0 {
            REHANG_AFTER
        } else {
            UNRESPONSIVE_AFTER
        }
    }

    pub(crate) fn answered(&self) {
        let mut st = self.state.lock().unwrap();
        let st = &mut st.liveness;
        st.answered_at = Some(Instant::now());
        st.hangs = 0;
    }

    /// The page did not answer: stop its script, or freeze it when it hung
    /// before within [`REHANG_WINDOW`]. Returns whether it was frozen.
    pub(crate) async fn hung(&self) -> bool {
        let (hangs, again) = {
            let mut st = self.state.lock().unwrap();
            let st = &mut st.liveness;
            st.hangs += 1;
            st.scripts_stopped += 1;
            let again = st.stopped_at.is_some_and(|t| t.elapsed() < REHANG_WINDOW);
            st.stopped_at = Some(Instant::now());
            (st.hangs, again)
        };
        if again {
            self.freeze().await;
        } else {
            self.stop_script().await;
        }
        tracing::warn!(
            hangs,
            frozen = again,
            "the page did not answer: its running script was stopped (Runtime.terminateExecution)"
        );
        again
    }

    async fn stop_script(&self) {
        let _ = self.client.execute_within(Some(&self.session), &TerminateExecution {}, UNRESPONSIVE_AFTER).await;
    }

    /// Freeze the page: its task queues pause (no timer or handler runs) and its
    /// scripts are disabled (no callback runs either: a mutation observer whose
    /// records are pending would otherwise run on the next task, even ours);
    /// then stop the script that holds its thread. Chromium takes all three
    /// while the thread is busy.
    pub(crate) async fn freeze(&self) {
        let off = SetScriptExecutionDisabled { value: true };
        let disabled = self.client.execute_within(Some(&self.session), &off, UNRESPONSIVE_AFTER).await.is_ok();
        let frozen = SetWebLifecycleState { state: Lifecycle::Frozen };
        let r = self.client.execute_within(Some(&self.session), &frozen, UNRESPONSIVE_AFTER).await;
        if let Err(e) = &r {
            tracing::warn!(error = %e, "the page could not be frozen");
        }
        self.stop_script().await;
        let mut st = self.state.lock().unwrap();
        let st = &mut st.liveness;
        st.frozen = r.is_ok() || disabled;
        st.scripts_disabled = disabled;
    }

    /// Undo [`Tab::freeze`]: both settings belong to the page and outlive a
    /// navigation, so the next document would stay frozen.
    pub(crate) async fn thaw(&self) {
        if self.state.lock().unwrap().liveness.take_scripts_disabled() {
            let on = SetScriptExecutionDisabled { value: false };
            let _ = self.client.execute_within(Some(&self.session), &on, UNRESPONSIVE_AFTER).await;
        }
        let active = SetWebLifecycleState { state: Lifecycle::Active };
        let _ = self.client.execute_within(Some(&self.session), &active, UNRESPONSIVE_AFTER).await;
        self.state.lock().unwrap().liveness.frozen = false;
    }

    /// Whether the page was frozen because it kept stopping answering ([`Tab::unstick`]):
    /// nothing on it can react until the agent navigates elsewhere.
    pub fn is_frozen(&self) -> bool {
        self.state.lock().unwrap().liveness.frozen
    }

    /// Before an action on a frozen page: thaw it and see whether it answers
    /// again (a finite chain of loops, such as a left page's unload handlers, has
    /// ended); if it hangs again within [`REVIVE_LIMIT`], freeze it again and
    /// refuse the action, which could not reach the page.
    pub(crate) async fn revive(&self) -> Result<(), BrowserError> {
        if !self.is_frozen() {
            return Ok(());
        }
        self.thaw().await;
        // A few loops may still be queued (each of a left page's unload handlers).
        for _ in 0..REVIVE_ROUNDS {
            if self.answers(REVIVE_LIMIT).await {
                self.answered();
                return Ok(());
            }
            self.stop_script().await;
        }
        self.freeze().await;
        self.state.lock().unwrap().liveness.scripts_stopped += 1;
        Err(BrowserError::Unresponsive)
    }

    /// Refuse an action on a frozen page: it could not react.
    pub(crate) fn check_responsive(&self) -> Result<(), BrowserError> {
        if self.is_frozen() {
            return Err(BrowserError::Unresponsive);
        }
        Ok(())
    }
}
