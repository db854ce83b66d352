//! An environment that can hand its tab to a person: `request_human` and
//! `wait_for_human` served through a driver session of the tool API over the
//! environment's own tab (`sightline run --human`, `sightline env --live`), and
//! every other action refused with `HANDED_OVER` while the person has it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Env, Turn};
use crate::action::Action;
use crate::error::{ToolCode, ToolError};
use crate::state::ErrorCode;
use crate::tools::{Api, RequestHumanParams};

/// A person an [`Env`] may hand its tab to: the tool API's driver session whose
/// tab the environment drives, so the session's desk parks it and its live view
/// shows the same tab.
#[derive(Clone)]
pub struct Human {
    pub api: Arc<Api>,
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// Told each live link `request_human` answers (the operator's terminal, a browser).
    pub on_link: Arc<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for Human {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Human").field("session", &self.session).field("tab_id", &self.tab_id).finish()
    }
}

/// A hand-off tool's error as the protocol's code, when it is the hand-off's own.
pub(crate) fn person_code(e: &ToolError) -> Option<ErrorCode> {
    match e.code {
        ToolCode::HumanTimeout => Some(ErrorCode::HumanTimeout),
        ToolCode::LiveUnavailable | ToolCode::NotHandedOver => Some(ErrorCode::HumanUnavailable),
        _ => None,
    }
}

impl Env {
    /// Hand-offs go to `h`'s desk from now on (without one they answer `HUMAN_UNAVAILABLE`).
    pub fn set_human(&mut self, h: Human) {
        self.human = Some(h);
    }

    /// With a person to hand to: the turn of a hand-off action, or the refusal
    /// of any other action while the person has the tab (the previous state,
    /// unchanged). `None`: the action goes on as usual.
    pub(super) async fn person_turn(&mut self, action: &Action, raw: &Value) -> Option<Turn> {
        let h = self.human.clone()?;
        let desk = h.api.desk(&h.session).ok()?;
        if !action.needs_person() {
            let refused = desk.check_agent().err()?;
            return Some(self.error(ErrorCode::HandedOver, refused.message, raw.clone(), false));
        }
        let started = Instant::now();
        let human = match action {
            Action::RequestHuman { reason } => {
                let p = RequestHumanParams {
                    session: h.session.clone(),
                    target_id: h.target_id.clone(),
                    tab_id: h.tab_id.clone(),
                    reason: reason.clone(),
                };
                h.api.request_human(p).await.map(|r| {
                    (h.on_link)(&r.live_url);
                    serde_json::json!({ "live_url": r.live_url, "expires_in_s": r.expires_in_s })
                })
            }
            Action::WaitForHuman { timeout_s } => {
                desk.wait(Duration::from_secs(timeout_s.unwrap_or(300))).await.map(|b| b.reply())
            }
            _ => return None,
        };
        let human = match human {
            Ok(v) => v,
            Err(e) => {
                let code = person_code(&e).unwrap_or(ErrorCode::HumanUnavailable);
                return Some(self.error(code, e.message, raw.clone(), false));
            }
        };
        let mut turn = if matches!(action, Action::WaitForHuman { .. }) {
            // The person may have changed anything: the state is read again.
            self.turn_after(started, raw.clone()).await
        } else {
            Turn {
                state: self.state.clone(),
                ended: false,
                fatal: false,
                act_time: started.elapsed(),
                capture_time: Duration::ZERO,
            }
        };
        if turn.state.error.is_none() {
            turn.state.human = Some(human);
        }
        Some(turn)
    }

    /// What the live view lists of the agent's steps.
    pub(super) fn note_on_desk(&self, name: &str, turn: &Turn) {
        let Some(desk) = self.human.as_ref().and_then(|h| h.api.registry.desk_if(&h.session)) else { return };
        let outcome = turn.state.error.as_ref().map_or("ok", |e| e.code.as_str());
        desk.note_action(format!("act:{name}"), outcome);
    }
}
