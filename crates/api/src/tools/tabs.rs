//! list_tabs, open_tab, close_tab, browser_navigate.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sightline_browser::Tab;

use super::session::{tab_infos, TabInfo};
use super::{Api, Reply, Status, TabAddress};
use crate::error::{Rule, ToolError};
use crate::ids::{TabId, TargetId};
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

/// One tab as `list_tabs` shows it (`url` and `title` are null when the page does not answer).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TabListing {
    pub tab_id: TabId,
    pub url: Option<String>,
    pub title: Option<String>,
    pub opener: Option<TabId>,
}

/// `list_tabs`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListTabsReply {
    pub status: Status,
    pub target_id: TargetId,
    pub tabs: Vec<TabListing>,
}

/// `open_tab`: the new tab's id and every tab.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OpenTabReply {
    pub status: Status,
    pub tab_id: TabId,
    pub tabs: Vec<TabInfo>,
}

/// `close_tab`: the tabs left.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CloseTabReply {
    pub status: Status,
    pub tabs: Vec<TabInfo>,
}

/// `browser_navigate`: where the tab ended up.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NavigateReply {
    pub status: Status,
    pub tab_id: TabId,
    pub url: Option<String>,
    pub title: Option<String>,
}

/// `location.href` and `document.title` of a tab (each null when the page does not answer).
async fn url_and_title(tab: &Tab) -> (Option<String>, Option<String>) {
    let v = tab.evaluate("[location.href, document.title]").await.unwrap_or_default();
    let text = |v: &Value| v.as_str().map(str::to_string);
    (text(&v[0]), text(&v[1]))
}

impl Reply for ListTabsReply {}
impl Reply for OpenTabReply {}
impl Reply for CloseTabReply {}
impl Reply for NavigateReply {}

/// Register page targets the session's pages opened themselves.
pub(crate) async fn discover_popups(s: &mut Session) -> Result<(), ToolError> {
    let pages = s.browser.pages_in(&s.context).await.map_err(ToolError::from)?;
    for (target, opener) in pages {
        if s.tabs.iter().any(|t| *t.tab.target_id() == target) {
            continue;
        }
        let opener_tab = opener.and_then(|o| s.tabs.iter().find(|t| *t.tab.target_id() == o)).map(|t| t.id.clone());
        let Some(opener_tab) = opener_tab else { continue };
        let tab =
            Tab::attach(s.browser.clone(), &target, s.tabs[0].tab.options().clone()).await.map_err(ToolError::from)?;
        s.add_tab(tab, Some(opener_tab));
    }
    Ok(())
}

impl Api {
    /// `list_tabs`: the session's tabs, popups included.
    pub async fn list_tabs(&self, p: ListParams) -> Result<ListTabsReply, ToolError> {
        let api = self;
        let s = api.registry.session(&p.session).await?;
        let mut g = s.lock().await;
        g.check_target(&p.target_id)?;
        discover_popups(&mut g).await?;
        let mut tabs = Vec::new();
        for t in &g.tabs {
            let (url, title) = url_and_title(&t.tab).await;
            tabs.push(TabListing { tab_id: t.id.clone(), url, title, opener: t.opener.clone() });
        }
        Ok(ListTabsReply { status: Status::Ok, target_id: g.target_id.clone(), tabs })
    }

    /// `open_tab`: a new tab, optionally at a URL.
    pub async fn open_tab(&self, p: OpenParams) -> Result<OpenTabReply, ToolError> {
        let api = self;
        if let Some(u) = &p.url {
            crate::check_url(u).map_err(|e| ToolError::invalid(e.message))?;
            api.check_navigation(u).await?;
        }
        let s = api.registry.session(&p.session).await?;
        let mut g = s.lock().await;
        g.check_target(&p.target_id)?;
        let tab =
            g.browser.new_tab_in(&g.context.clone(), api.registry.opts.tab.clone()).await.map_err(ToolError::from)?;
        if let Some(u) = &p.url {
            tab.navigate(u).await?;
        }
        let id = g.add_tab(tab, None);
        Ok(OpenTabReply { status: Status::Ok, tab_id: id, tabs: tab_infos(&g) })
    }

    /// `close_tab`: close a tab; its snapshots and refs become invalid.
    pub async fn close_tab(&self, p: TabAddress) -> Result<CloseTabReply, ToolError> {
        let api = self;
        let s = api.locate(&p).await?;
        let mut g = s.lock().await;
        // `locate` released the lock: a concurrent call (MCP runs requests
        // concurrently) may have closed this tab or rebound the target since, so
        // both are checked again under the lock, and the loser gets the typed error.
        g.check_target(&p.target_id)?;
        let tab_id = g.tab(&p.tab_id)?.id.clone();
        g.retire_tab_snapshots(&tab_id, Rule::TabClosed);
        let i = g.tabs.iter().position(|t| t.id == tab_id).expect("found by tab()");
        let entry = g.tabs.remove(i);
        g.closed_tabs.insert(tab_id);
        drop(entry.env);
        if let Ok(tab) = Arc::try_unwrap(entry.tab) {
            tab.close().await;
        }
        Ok(CloseTabReply { status: Status::Ok, tabs: tab_infos(&g) })
    }

    /// `browser_navigate`: load a URL in the tab.
    pub async fn browser_navigate(&self, p: NavigateParams) -> Result<NavigateReply, ToolError> {
        let api = self;
        crate::check_url(&p.url).map_err(|e| ToolError::invalid(e.message))?;
        api.check_navigation(&p.url).await?;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let s = api.locate(&a).await?;
        let mut g = s.lock().await;
        let entry = g.tab(&a.tab_id)?;
        let (tab, tab_id) = (entry.tab.clone(), entry.id.clone());
        let from = tab.evaluate("location.href").await.ok().and_then(|v| v.as_str().map(str::to_string));
        let result = tab.navigate(&p.url).await;
        g.retire_tab_snapshots(&tab_id, Rule::Navigation);
        result?;
        g.collect_recording();
        g.recorder.push(from.as_deref().unwrap_or(""), crate::record::Step::Goto { url: p.url.clone() });
        let (url, title) = url_and_title(&tab).await;
        Ok(NavigateReply { status: Status::Ok, tab_id, url, title })
    }
}
