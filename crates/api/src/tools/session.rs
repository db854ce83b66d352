//! bind_browser, end_session.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::Mutex;

use super::{Api, ToolOutput};
use crate::error::ToolError;
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
    pub storage_state: Option<Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndParams {
    pub session: String,
}

pub(crate) fn tabs_json(s: &Session) -> Value {
    Value::Array(s.tabs.iter().map(|t| json!({ "tab_id": t.id, "opener": t.opener })).collect())
}

pub(crate) async fn bind_browser(api: &Api, p: BindParams) -> Result<ToolOutput, ToolError> {
    if p.session.trim().is_empty() || p.session.len() > 200 {
        return Err(ToolError::invalid("session must be a non-empty name of at most 200 characters"));
    }
    let storage = p.storage_state.as_ref().map(super::storage::parse_state).transpose()?;
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
            let mut fresh = registry::bind(&p.session, &api.registry.opts, Some(&mut g), storage.as_ref()).await?;
            fresh.downloads = downloads(api, &fresh).await?;
            *g = fresh;
            if owned {
                old_browser.shutdown().await;
            }
        }
        return Ok(ToolOutput::json(
            json!({ "status": "ok", "session": g.name, "target_id": g.target_id, "tabs": tabs_json(&g) }),
        ));
    }
    api.registry.ended.lock().unwrap().remove(&p.session);
    let mut s = registry::bind(&p.session, &api.registry.opts, None, storage.as_ref()).await?;
    s.downloads = downloads(api, &s).await?;
    s.egress_mark = api.registry.egress.as_ref().map_or(0, |e| e.mark());
    let out = json!({ "status": "ok", "session": s.name, "target_id": s.target_id, "tabs": tabs_json(&s) });
    api.registry.sessions.lock().await.insert(p.session.clone(), Arc::new(Mutex::new(s)));
    Ok(ToolOutput::json(out))
}

/// The downloads of a new session's context, as the operator configured them.
async fn downloads(api: &Api, s: &Session) -> Result<Option<sightline_browser::Downloads>, ToolError> {
    api.registry.files.enable_downloads(&s.browser, &s.context, &s.name).await.map_err(ToolError::browser)
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

pub(crate) async fn end_session(api: &Api, p: EndParams) -> Result<ToolOutput, ToolError> {
    let s = api.registry.sessions.lock().await.remove(&p.session);
    let Some(s) = s else {
        return Err(api
            .registry
            .session(&p.session)
            .await
            .err()
            .unwrap_or_else(|| ToolError::new(crate::error::ToolCode::SessionNotFound, "no such session")));
    };
    api.registry.ended.lock().unwrap().insert(p.session.clone());
    // Close our tabs explicitly (an attached browser keeps running).
    let tabs: Vec<_> = s.lock().await.tabs.drain(..).collect();
    for t in tabs {
        if let Ok(tab) = Arc::try_unwrap(t.tab) {
            tab.close().await;
        }
    }
    close(s).await;
    Ok(ToolOutput::json(json!({ "status": "ok", "session": p.session })))
}
