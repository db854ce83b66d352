//! get_state and act: the element-index protocol through the same API.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Api, Reply, TabAddress};
use crate::error::ToolError;
use crate::{Env, EnvOptions, StateObject};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetStateParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// Attach the screenshot (default true).
    pub screenshot: Option<bool>,
    /// Mark elements new since the previous state in page_content (`*[12]button "Save"`); later
    /// `act` calls follow the last value given (default false).
    pub mark_new: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// One Action Object of the element-index protocol.
    #[schemars(schema_with = "crate::action::action_object_json_schema")]
    pub action: Value,
}

/// `get_state` and `act`: the State Object, its screenshot taken out (`""`)
/// to travel beside the JSON as an image.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct StateReply {
    pub state: StateObject,
    #[serde(skip)]
    pub image: Option<String>,
}

impl StateReply {
    /// The State Object with its screenshot back in (`""` when `screenshot` is false).
    pub fn into_state(self, screenshot: bool) -> StateObject {
        let mut state = self.state;
        state.screenshot = if screenshot { self.image.unwrap_or_default() } else { String::new() };
        state
    }
}

impl Reply for StateReply {
    fn take_image(&mut self) -> Option<String> {
        self.image.take()
    }
}

/// The screenshot travels as an image, not inside the JSON.
fn split(mut state: StateObject) -> StateReply {
    let shot = std::mem::take(&mut state.screenshot);
    StateReply { state, image: (!shot.is_empty()).then_some(shot) }
}

impl Api {
    /// `get_state`: the element-index protocol's State Object of the tab.
    pub async fn get_state(&self, p: GetStateParams) -> Result<StateReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let s = api.locate(&a).await?;
        let mut g = s.lock().await;
        let downloads = g.downloads.clone();
        let entry = g.tab_mut(&a.tab_id)?;
        let screenshot = p.screenshot.unwrap_or(true);
        match &mut entry.env {
            Some(env) => {
                // Each call honours its own flag (later `act` calls follow the last one).
                env.set_screenshot(screenshot);
                if let Some(on) = p.mark_new {
                    env.set_mark_new(on);
                }
                let state = env.refresh().await?.clone();
                Ok(split(state))
            }
            None => {
                let mut env = Env::new(entry.tab.clone(), EnvOptions { screenshot }).await?;
                if let Some(egress) = &api.registry.egress {
                    env.set_egress(egress.clone());
                }
                env.set_files(api.registry.files.uploads.clone(), downloads);
                env.set_mark_new(p.mark_new.unwrap_or(false));
                // What `act` does joins the session's recording (get_script).
                env.record();
                let state = env.state().clone();
                entry.env = Some(env);
                Ok(split(state))
            }
        }
    }

    /// Whether the tab's next State Objects carry a screenshot, as `get_state`'s
    /// flag sets it for the following `act` calls, without capturing now. The
    /// tab must have had its first `get_state`.
    pub async fn set_screenshot(&self, a: TabAddress, on: bool) -> Result<(), ToolError> {
        let s = self.locate(&a).await?;
        let mut g = s.lock().await;
        match g.tab_mut(&a.tab_id)?.env.as_mut() {
            Some(env) => {
                env.set_screenshot(on);
                Ok(())
            }
            None => Err(ToolError::invalid("call get_state for this tab first")),
        }
    }

    /// `act`: one element-index protocol action, and the next State Object.
    pub async fn act(&self, p: ActParams) -> Result<StateReply, ToolError> {
        let api = self;
        let desk = api.registry.desk_if(&p.session);
        let what = format!("act:{}", p.action.get("action").and_then(Value::as_str).unwrap_or("?"));
        // request_human and wait_for_human are the hand-off's own: a person holding the session does not refuse them.
        let person = crate::Action::from_value(&p.action).ok().filter(crate::Action::needs_person);
        if let Some(d) = desk.as_ref().filter(|_| person.is_none()) {
            if let Err(e) = d.check_agent() {
                d.note_action(what, e.code.as_str());
                return Err(e);
            }
        }
        let r = match person {
            Some(action) => api.act_person(p, action).await,
            None => api.act_now(p).await,
        };
        if let Some(d) = desk {
            let outcome = match &r {
                Ok(reply) => reply.state.error.as_ref().map_or("ok", |e| e.code.as_str()),
                Err(e) => e.code.as_str(),
            };
            d.note_action(what, outcome);
        }
        r
    }

    /// `request_human` and `wait_for_human` as actions: the tools' work, answered as a State Object
    /// (`human` carries the reply; a time-out or nothing to wait for is an error inside it).
    async fn act_person(&self, p: ActParams, action: crate::Action) -> Result<StateReply, ToolError> {
        use crate::tools::human::RequestHumanParams;
        use crate::{Action, ErrorObject};
        let raw = p.action;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let waited = matches!(action, Action::WaitForHuman { .. });
        let outcome = match action {
            Action::RequestHuman { reason } => {
                let rq = RequestHumanParams {
                    session: a.session.clone(),
                    target_id: a.target_id.clone(),
                    tab_id: a.tab_id.clone(),
                    reason,
                };
                self.request_human(rq)
                    .await
                    .map(|r| serde_json::json!({ "live_url": r.live_url, "expires_in_s": r.expires_in_s }))
            }
            Action::WaitForHuman { timeout_s } => {
                let wait = std::time::Duration::from_secs(timeout_s.unwrap_or(300));
                self.desk(&a.session)?.wait(wait).await.map(|b| b.reply())
            }
            other => return Err(ToolError::invalid(format!("{} is not a hand-off action", other.name()))),
        };
        let s = self.locate(&a).await?;
        let mut g = s.lock().await;
        let entry = g.tab_mut(&a.tab_id)?;
        let Some(env) = entry.env.as_mut() else {
            return Err(ToolError::invalid("call get_state for this tab first"));
        };
        let state = match outcome {
            Ok(human) => {
                let mut state = if waited { env.refresh().await?.clone() } else { env.state().clone() };
                state.human = Some(human);
                state
            }
            Err(e) => {
                let Some(code) = crate::env::person_code(&e) else { return Err(e) };
                env.state().with_error(ErrorObject { code, message: e.message, failed_action: raw })
            }
        };
        Ok(split(state))
    }

    async fn act_now(&self, p: ActParams) -> Result<StateReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let s = api.locate(&a).await?;
        let mut g = s.lock().await;
        let entry = g.tab_mut(&a.tab_id)?;
        let Some(env) = entry.env.as_mut() else {
            return Err(ToolError::invalid(
                "call get_state for this tab first: an action's element_index refers to the last State Object",
            ));
        };
        let before = env.tab().navigation_count();
        // The action is validated by the environment: a bad one comes back as ACTION_VALIDATION_FAILED inside the state.
        let turn = env.step_value(p.action).await;
        let navigated = env.tab().navigation_count() != before;
        let tab_id = entry.id.clone();
        if navigated {
            g.retire_tab_snapshots(&tab_id, crate::error::Rule::Navigation);
        }
        Ok(split(turn.state))
    }
}
