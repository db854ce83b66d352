//! list_tabs, open_tab, close_tab, browser_navigate.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use sightline_browser::Tab;

use super::session::tabs_json;
use super::{Api, TabAddress, ToolOutput};
use crate::error::{Rule, ToolCode, ToolError};
use crate::registry::Session;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    pub session: String,
    pub target_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenParams {
    pub session: String,
    pub target_id: String,
    /// An absolute http(s) URL to load in the new tab.
    pub url: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// An absolute URL (http, https, about, data).
    pub url: String,
}

/// Register page targets the session's pages opened themselves.
pub(crate) async fn discover_popups(s: &mut Session) -> Result<(), ToolError> {
    let pages = s.browser.pages_in(&s.context).await.map_err(ToolError::browser)?;
    for (target, opener) in pages {
        if s.tabs.iter().any(|t| *t.tab.target_id() == target) {
            continue;
        }
        let opener_tab = opener.and_then(|o| s.tabs.iter().find(|t| *t.tab.target_id() == o)).map(|t| t.id.clone());
        let Some(opener_tab) = opener_tab else { continue };
        let tab = Tab::attach(s.browser.clone(), &target, s.tabs[0].tab.options().clone())
            .await
            .map_err(ToolError::browser)?;
        s.add_tab(tab, Some(opener_tab));
    }
    Ok(())
}

pub(crate) async fn list_tabs(api: &Api, p: ListParams) -> Result<ToolOutput, ToolError> {
    let s = api.registry.session(&p.session).await?;
    let mut g = s.lock().await;
    g.check_target(&p.target_id)?;
    discover_popups(&mut g).await?;
    let mut tabs = Vec::new();
    for t in &g.tabs {
        let v = t.tab.evaluate("[location.href, document.title]").await.unwrap_or_default();
        tabs.push(json!({ "tab_id": t.id, "url": v[0], "title": v[1], "opener": t.opener }));
    }
    Ok(ToolOutput::json(json!({ "status": "ok", "target_id": g.target_id, "tabs": tabs })))
}

pub(crate) async fn open_tab(api: &Api, p: OpenParams) -> Result<ToolOutput, ToolError> {
    if let Some(u) = &p.url {
        crate::check_url(u).map_err(|e| ToolError::invalid(e.message))?;
        api.check_navigation(u).await?;
    }
    let s = api.registry.session(&p.session).await?;
    let mut g = s.lock().await;
    g.check_target(&p.target_id)?;
    let tab =
        g.browser.new_tab_in(&g.context.clone(), api.registry.opts.tab.clone()).await.map_err(ToolError::browser)?;
    if let Some(u) = &p.url {
        tab.navigate(u).await?;
    }
    let id = g.add_tab(tab, None);
    Ok(ToolOutput::json(json!({ "status": "ok", "tab_id": id, "tabs": tabs_json(&g) })))
}

pub(crate) async fn close_tab(api: &Api, p: TabAddress) -> Result<ToolOutput, ToolError> {
    let s = api.locate(&p).await?;
    let mut g = s.lock().await;
    // `locate` released the lock: a concurrent call (MCP runs requests
    // concurrently) may have closed this tab or rebound the target since, so
    // both are checked again under the lock, and the loser gets the typed error.
    g.check_target(&p.target_id)?;
    g.tab(&p.tab_id)?;
    let i = g.tabs.iter().position(|t| t.id == p.tab_id).ok_or_else(|| {
        ToolError::new(ToolCode::TabNotFound, format!("no tab {} in this target; see list_tabs", p.tab_id))
    })?;
    g.retire_tab_snapshots(&p.tab_id, Rule::TabClosed);
    let entry = g.tabs.remove(i);
    g.closed_tabs.insert(p.tab_id.clone());
    drop(entry.env);
    if let Ok(tab) = Arc::try_unwrap(entry.tab) {
        tab.close().await;
    }
    Ok(ToolOutput::json(json!({ "status": "ok", "tabs": tabs_json(&g) })))
}

pub(crate) async fn navigate(api: &Api, p: NavigateParams) -> Result<ToolOutput, ToolError> {
    crate::check_url(&p.url).map_err(|e| ToolError::invalid(e.message))?;
    api.check_navigation(&p.url).await?;
    let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
    let s = api.locate(&a).await?;
    let mut g = s.lock().await;
    let tab = g.tab(&a.tab_id)?.tab.clone();
    let result = tab.navigate(&p.url).await;
    g.retire_tab_snapshots(&a.tab_id, Rule::Navigation);
    result?;
    let v = tab.evaluate("[location.href, document.title]").await.unwrap_or_default();
    Ok(ToolOutput::json(json!({ "status": "ok", "tab_id": a.tab_id, "url": v[0], "title": v[1] })))
}
