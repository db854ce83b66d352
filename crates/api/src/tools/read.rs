//! get_browser_state, browser_screenshot.

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Api, Reply, Status, TabAddress};
use crate::error::ToolError;
use crate::registry::Format;
use crate::snapshot::{self, Request, DEFAULT_BUDGET, MAX_BUDGET};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// `semantic_v2`, or `dom_refs_v1` (the default when omitted).
    pub snapshot_format: Option<String>,
    /// Match role, accessible name or value; semantic ancestors are kept for context.
    pub query: Option<String>,
    /// Read the subtree of a current action or content ref.
    pub scope_ref: Option<String>,
    /// Read the next ranked segment of the same snapshot (single-use).
    pub continuation: Option<String>,
    /// At most this many nodes (1..=2000, default 300).
    pub node_budget: Option<u64>,
    /// Include a base64 PNG screenshot.
    #[serde(default)]
    pub include_screenshot: bool,
    /// semantic_v2 only: answer what changed since this tab's latest snapshot (added, removed and
    /// changed nodes; kept nodes keep their ref number) instead of the whole outline.
    #[serde(default)]
    pub changes: bool,
    /// Advanced: process at most this many DOM nodes (the oversized-DOM fallback; default 200000).
    pub dom_node_limit: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockedParams {
    pub session: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// Draw numbered boxes over the visible interactive elements.
    #[serde(default)]
    pub marks: bool,
}

/// `get_browser_state`: the snapshot as [`crate::snapshot`] builds it (its
/// shape depends on the format and the scope), and the screenshot beside it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct SnapshotReply {
    pub snapshot: crate::snapshot_reply::Snapshot,
    #[serde(skip)]
    pub image: Option<String>,
}

/// One request the egress policy refused.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BlockedRequest {
    pub target: String,
    pub rule: &'static str,
}

/// `get_blocked_requests`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BlockedReply {
    pub status: Status,
    /// False when no egress policy is set.
    pub policy: bool,
    pub count: u64,
    /// The latest ten, newest first.
    pub recent: Vec<BlockedRequest>,
}

/// `browser_screenshot`: the viewport's size, or (with marks) the marks drawn; the PNG beside it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScreenshotReply {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marks: Option<Vec<sightline_page::Mark>>,
    #[serde(skip)]
    pub image: Option<String>,
}

impl Reply for SnapshotReply {
    fn take_image(&mut self) -> Option<String> {
        self.image.take()
    }
}

impl Reply for BlockedReply {}

impl Reply for ScreenshotReply {
    fn take_image(&mut self) -> Option<String> {
        self.image.take()
    }
}

impl Api {
    /// `get_browser_state`: a snapshot of the tab.
    pub async fn get_browser_state(&self, p: StateParams) -> Result<SnapshotReply, ToolError> {
        let api = self;
        let format = match p.snapshot_format.as_deref() {
            None | Some("dom_refs_v1") => Format::DomRefsV1,
            Some("semantic_v2") => Format::SemanticV2,
            Some(other) => {
                return Err(ToolError::invalid(format!(
                    "snapshot_format must be semantic_v2 or dom_refs_v1, got {other:?}"
                )))
            }
        };
        let node_budget = match p.node_budget {
            None => DEFAULT_BUDGET,
            Some(b) if (1..=MAX_BUDGET as u64).contains(&b) => b as usize,
            Some(b) => {
                return Err(ToolError::invalid(format!("node_budget must be between 1 and {MAX_BUDGET}, got {b}")))
            }
        };
        if format == Format::DomRefsV1
            && (p.query.is_some() || p.scope_ref.is_some() || p.continuation.is_some() || p.changes)
        {
            return Err(ToolError::invalid(
                "query, scope_ref, continuation and changes need snapshot_format semantic_v2",
            ));
        }
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let s = api.locate(&a).await?;
        let mut g = s.lock().await;
        let req = Request {
            format,
            query: p.query.filter(|q| !q.trim().is_empty()),
            scope_ref: p.scope_ref,
            continuation: p.continuation,
            node_budget,
            screenshot: p.include_screenshot,
            dom_node_limit: p.dom_node_limit.map(|l| l.clamp(1, 10_000_000) as usize),
            changes: p.changes,
        };
        let tab_id = g.tab(&a.tab_id)?.id.clone();
        let (snapshot, image) = snapshot::get(&mut g, &tab_id, req).await?;
        Ok(SnapshotReply { snapshot, image })
    }

    /// What the egress proxy refused since this session's previous call: a count,
    /// and the latest ten with their rule. The proxy serves the whole process, so
    /// with several sessions the count is process-wide. Kept out of
    /// `get_browser_state`, whose response has exactly the seed's keys.
    pub async fn get_blocked_requests(&self, p: BlockedParams) -> Result<BlockedReply, ToolError> {
        let api = self;
        let s = api.registry.session(&p.session).await?;
        let mut g = s.lock().await;
        let Some(egress) = &api.registry.egress else {
            return Ok(BlockedReply { status: Status::Ok, policy: false, count: 0, recent: Vec::new() });
        };
        let since = std::mem::replace(&mut g.egress_mark, egress.mark());
        let recent: Vec<BlockedRequest> = egress
            .refusals_since(since)
            .iter()
            .rev()
            .take(10)
            .map(|r| BlockedRequest { target: r.target.clone(), rule: r.refused.rule() })
            .collect();
        Ok(BlockedReply { status: Status::Ok, policy: true, count: g.egress_mark - since, recent })
    }

    /// Count the refusals `get_blocked_requests` reports from now on (a session
    /// opened ahead of its use starts counting when it is handed out).
    pub async fn mark_egress_now(&self, session: &str) -> Result<(), ToolError> {
        let s = self.registry.session(session).await?;
        s.lock().await.egress_mark = self.registry.egress.as_ref().map_or(0, |e| e.mark());
        Ok(())
    }

    /// `browser_screenshot`: a PNG of the viewport, with marks on request.
    pub async fn browser_screenshot(&self, p: ScreenshotParams) -> Result<ScreenshotReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let s = api.locate(&a).await?;
        let g = s.lock().await;
        let tab = g.tab(&a.tab_id)?.tab.clone();
        drop(g);
        let captured = tab.capture(true).await?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(captured.screenshot.clone().unwrap_or_default())
            .map_err(ToolError::from)?;
        if !p.marks {
            return Ok(ScreenshotReply {
                status: Status::Ok,
                width: Some(tab.options().viewport.0),
                height: Some(tab.options().viewport.1),
                marks: None,
                image: Some(base64::engine::general_purpose::STANDARD.encode(png)),
            });
        }
        let marks = captured.view.marks();
        let drawn = sightline_page::draw_marks(&png, &marks).map_err(ToolError::from)?;
        Ok(ScreenshotReply {
            status: Status::Ok,
            width: None,
            height: None,
            marks: Some(marks),
            image: Some(base64::engine::general_purpose::STANDARD.encode(drawn)),
        })
    }
}
