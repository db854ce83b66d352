//! request_human, wait_for_human, cancel_human: hand the session to a person
//! and take it back (the desk is [`crate::human`]).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Api, GetStateParams, Reply, StateReply, Status, TabAddress};
use crate::error::{ToolCode, ToolError};
use crate::human::{Holder, Touched, Visit, TICKET_TTL};
use crate::StateObject;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestHumanParams {
    pub session: String,
    pub target_id: String,
    /// The tab the person gets.
    pub tab_id: String,
    /// What the person should do, shown on the live page ("sign in with the second factor").
    pub reason: String,
}

/// `request_human`: the link to give a person.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RequestHumanReply {
    pub status: Status,
    /// Opens the live view of this session, with no other credential, until the hand-back (single session).
    pub live_url: String,
    /// Seconds the link works unless handed back or cancelled first.
    pub expires_in_s: u64,
}

impl Reply for RequestHumanReply {}

/// The longest `wait_for_human` blocks in one call.
pub const MAX_HUMAN_WAIT: Duration = Duration::from_secs(3600);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitHumanParams {
    pub session: String,
    /// Seconds to wait for the hand-back (default 300, at most 3600); then human_timeout, and the session stays handed over.
    pub timeout_s: Option<f64>,
    /// Attach the fresh State Object's screenshot (default true).
    pub screenshot: Option<bool>,
}

/// `wait_for_human`: what the person left, and the page now.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitHumanReply {
    pub status: Status,
    /// The person's note from the live page, if any.
    pub note: Option<String>,
    /// Pages the person had the tab on, in order (URL and title).
    pub visited: Vec<Visit>,
    /// Form fields the person typed into (by name; what they typed is not reported).
    pub fields: Vec<Touched>,
    /// Clicks, wheel turns, keys and texts the person sent.
    pub inputs: u64,
    /// Seconds the person held the session.
    pub held_s: f64,
    /// The tab the person had.
    pub tab_id: String,
    /// A fresh State Object of that tab.
    pub state: StateObject,
    #[serde(skip)]
    pub image: Option<String>,
}

impl Reply for WaitHumanReply {
    fn take_image(&mut self) -> Option<String> {
        self.image.take()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelHumanParams {
    pub session: String,
}

/// `cancel_human`: who held the session before.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CancelHumanReply {
    pub status: Status,
    pub was: Holder,
}

impl Reply for CancelHumanReply {}

impl Api {
    /// `request_human`: park the session for a person; the live link.
    pub async fn request_human(&self, p: RequestHumanParams) -> Result<RequestHumanReply, ToolError> {
        if p.reason.trim().is_empty() || p.reason.len() > 2000 {
            return Err(ToolError::invalid("reason must say what the person should do, in at most 2000 bytes"));
        }
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let s = self.locate(&a).await?;
        let Some(base) = self.registry.live_base.lock().unwrap().clone() else {
            return Err(ToolError::new(
                ToolCode::LiveUnavailable,
                "no live view here: a person can take over only on `sightline serve` (its /live pages)",
            ));
        };
        let (tab, target_id, tab_id) = {
            let g = s.lock().await;
            let e = g.tab(&a.tab_id)?;
            (e.tab.clone(), g.target_id.clone(), e.id.clone())
        };
        let desk = self.desk(&a.session)?;
        let ticket = desk.park(p.reason, tab, target_id, tab_id)?;
        tracing::info!(session = %a.session, "handed over to a person");
        Ok(RequestHumanReply {
            status: Status::Ok,
            live_url: format!("{base}/live/{}?ticket={ticket}", a.session),
            expires_in_s: TICKET_TTL.as_secs(),
        })
    }

    /// `wait_for_human`: block until the hand-back (at once if it already happened).
    pub async fn wait_for_human(&self, p: WaitHumanParams) -> Result<WaitHumanReply, ToolError> {
        let timeout = match p.timeout_s {
            Some(t) if !(t.is_finite() && t >= 0.0) => return Err(ToolError::invalid("timeout_s must be 0 or more")),
            Some(t) => Duration::from_secs_f64(t).min(MAX_HUMAN_WAIT),
            None => Duration::from_secs(300),
        };
        let desk = self.desk(&p.session)?;
        let back = desk.wait(timeout).await?;
        tracing::info!(session = %p.session, "handed back by the person");
        let fresh = GetStateParams {
            session: p.session,
            target_id: back.target_id.to_string(),
            tab_id: back.tab_id.to_string(),
            screenshot: p.screenshot,
            mark_new: None,
        };
        let StateReply { state, image } = self.get_state(fresh).await?;
        Ok(WaitHumanReply {
            status: Status::Ok,
            note: back.note,
            visited: back.visited,
            fields: back.fields,
            inputs: back.inputs,
            held_s: (back.held.as_secs_f64() * 10.0).round() / 10.0,
            tab_id: back.tab_id.to_string(),
            state,
            image,
        })
    }

    /// `cancel_human`: take the session back; the ticket stops working.
    pub async fn cancel_human(&self, p: CancelHumanParams) -> Result<CancelHumanReply, ToolError> {
        self.registry.session(&p.session).await?;
        let was = self.desk(&p.session)?.cancel();
        Ok(CancelHumanReply { status: Status::Ok, was })
    }
}
