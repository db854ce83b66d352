//! bind_browser, end_session.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Mutex;

use super::{Api, Reply, Status};
use crate::error::{ToolCode, ToolError};
use crate::ids::{TabId, TargetId};
use crate::registry::{self, Session};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindParams {
    /// A name the caller chooses for this driver session.
    pub session: String,
    /// Replace the session's browser with a new one (a new target generation).
    #[serde(default)]
    pub reconnect: bool,
    /// Start the session's browser context from this state (Playwright's storageState JSON:
    /// {"cookies": [...], "origins": [{"origin", "localStorage": [{"name", "value"}]}]}), as
    /// save_storage_state returns it. Applies to a new session, or with reconnect=true.
    #[serde(default)]
    #[schemars(with = "Option<sightline_browser::StorageState>")]
    pub storage_state: Option<Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndParams {
    pub session: String,
}

/// One tab of a session: its id, and the tab that opened it (popups).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TabInfo {
    pub tab_id: TabId,
    pub opener: Option<TabId>,
}

/// `bind_browser`: the target generation and its tabs.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BindReply {
    pub status: Status,
    pub session: String,
    pub target_id: TargetId,
    pub tabs: Vec<TabInfo>,
}

impl Reply for BindReply {}

/// `end_session`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EndReply {
    pub status: Status,
    pub session: String,
}

impl Reply for EndReply {}

pub(crate) fn tab_infos(s: &Session) -> Vec<TabInfo> {
    s.tabs.iter().map(|t| TabInfo { tab_id: t.id.clone(), opener: t.opener.clone() }).collect()
}

fn check_session_name(name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() || name.len() > 200 {
        return Err(ToolError::invalid("session must be a non-empty name of at most 200 characters"));
    }
    Ok(())
}

fn bound(s: &Session) -> BindReply {
    BindReply { status: Status::Ok, session: s.name.clone(), target_id: s.target_id.clone(), tabs: tab_infos(s) }
}

impl Api {
    /// `bind_browser`: launch (or attach to) a browser for a named driver session.
    pub async fn bind_browser(&self, p: BindParams) -> Result<BindReply, ToolError> {
        check_session_name(&p.session)?;
        let storage = p.storage_state.as_ref().map(super::storage::parse_state).transpose()?;
        self.bind_with_state(BindParams { storage_state: None, ..p }, storage.as_ref()).await
    }

    /// `bind_browser` with its storage state already parsed ([`crate::parse_state`]), as
    /// the server does where a request arrives; `p.storage_state` is not read.
    pub async fn bind_with_state(
        &self,
        p: BindParams,
        storage: Option<&sightline_browser::StorageState>,
    ) -> Result<BindReply, ToolError> {
        let api = self;
        check_session_name(&p.session)?;
        let existing = api.registry.sessions.lock().await.get(&p.session).cloned();
        if let Some(s) = existing {
            let mut g = s.lock().await;
            let dead = g.browser.client().is_closed();
            if storage.is_some() && !(p.reconnect || dead) {
                return Err(ToolError::invalid(
                "storage_state starts a new browser context: pass reconnect=true to replace this session's browser with one that starts from it",
            ));
            }
            if p.reconnect || dead {
                let old_browser = g.browser.clone();
                let owned = g.owns_browser;
                // Close the old generation's tabs (an attached browser keeps running).
                for t in g.tabs.drain(..).collect::<Vec<_>>() {
                    drop(t.env);
                    if let Ok(tab) = Arc::try_unwrap(t.tab) {
                        tab.close().await;
                    }
                }
                let mut fresh = registry::bind(&p.session, &api.registry.opts, Some(&mut g), storage).await?;
                fresh.downloads = downloads(api, &fresh).await?;
                *g = fresh;
                if owned {
                    old_browser.shutdown().await;
                }
            }
            return Ok(bound(&g));
        }
        api.registry.ended.lock().unwrap().remove(&p.session);
        let mut s = registry::bind(&p.session, &api.registry.opts, None, storage).await?;
        s.downloads = downloads(api, &s).await?;
        s.egress_mark = api.registry.egress.as_ref().map_or(0, |e| e.mark());
        let out = bound(&s);
        api.registry.open_desk(&p.session);
        api.registry.sessions.lock().await.insert(p.session.clone(), Arc::new(Mutex::new(s)));
        Ok(out)
    }

    /// A driver session over a browser and tab its caller started and drives
    /// itself (`sightline env --live`: the environment's own tab), so that the
    /// session's desk can hand that tab to a person and its live view show it.
    /// The API never shuts that browser down; the caller's tab stays the caller's.
    pub async fn adopt(
        &self,
        session: &str,
        browser: sightline_browser::Browser,
        context: sightline_browser::BrowserContextId,
        tab: sightline_browser::Tab,
    ) -> Result<BindReply, ToolError> {
        check_session_name(session)?;
        let mut sessions = self.registry.sessions.lock().await;
        if sessions.contains_key(session) {
            return Err(ToolError::invalid(format!("a driver session {session:?} already exists")));
        }
        let s = registry::adopt(session, browser, context, tab);
        let out = bound(&s);
        self.registry.ended.lock().unwrap().remove(session);
        self.registry.open_desk(session);
        sessions.insert(session.to_string(), Arc::new(Mutex::new(s)));
        Ok(out)
    }

    /// `end_session`: close the session's tabs and browser and forget its ids.
    pub async fn end_session(&self, p: EndParams) -> Result<EndReply, ToolError> {
        let api = self;
        let s = api.registry.sessions.lock().await.remove(&p.session);
        let Some(s) = s else {
            return Err(api
                .registry
                .session(&p.session)
                .await
                .err()
                .unwrap_or_else(|| ToolError::new(ToolCode::SessionNotFound, "no such session")));
        };
        api.registry.ended.lock().unwrap().insert(p.session.clone());
        api.registry.close_desk(&p.session);
        // Close our tabs explicitly (an attached browser keeps running).
        let tabs: Vec<_> = s.lock().await.tabs.drain(..).collect();
        for t in tabs {
            if let Ok(tab) = Arc::try_unwrap(t.tab) {
                tab.close().await;
            }
        }
        close(s).await;
        Ok(EndReply { status: Status::Ok, session: p.session })
    }
}

/// The downloads of a new session's context, as the operator configured them.
async fn downloads(api: &Api, s: &Session) -> Result<Option<sightline_browser::Downloads>, ToolError> {
    api.registry.files.enable_downloads(&s.browser, &s.context, &s.name).await.map_err(ToolError::from)
}

pub(crate) async fn close(s: Arc<Mutex<Session>>) {
    let mut g = s.lock().await;
    g.retire_target();
    let browser = g.browser.clone();
    let owned = g.owns_browser;
    drop(g);
    drop(s);
    if owned {
        browser.shutdown().await;
    } else {
        let _ = browser; // attached browsers keep running; our context goes with our tabs
    }
}
