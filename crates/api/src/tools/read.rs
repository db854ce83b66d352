//! get_browser_state, browser_screenshot.

use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Api, TabAddress, ToolOutput};
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

pub(crate) async fn get_browser_state(api: &Api, p: StateParams) -> Result<ToolOutput, ToolError> {
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
        Some(b) => return Err(ToolError::invalid(format!("node_budget must be between 1 and {MAX_BUDGET}, got {b}"))),
    };
    if format == Format::DomRefsV1
        && (p.query.is_some() || p.scope_ref.is_some() || p.continuation.is_some() || p.changes)
    {
        return Err(ToolError::invalid("query, scope_ref, continuation and changes need snapshot_format semantic_v2"));
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
    let mut value = snapshot::get(&mut g, &a.tab_id, req).await?;
    let image = value.as_object_mut().and_then(|o| o.remove("screenshot")).and_then(|v| v.as_str().map(str::to_string));
    Ok(ToolOutput { value, image })
}

/// What the egress proxy refused since this session's previous call: a count,
/// and the latest ten with their rule. The proxy serves the whole process, so
/// with several sessions the count is process-wide. Kept out of
/// `get_browser_state`, whose response has exactly the seed's keys.
pub(crate) async fn get_blocked_requests(api: &Api, p: BlockedParams) -> Result<ToolOutput, ToolError> {
    let s = api.registry.session(&p.session).await?;
    let mut g = s.lock().await;
    let Some(egress) = &api.registry.egress else {
        return Ok(ToolOutput {
            value: json!({ "status": "ok", "policy": false, "count": 0, "recent": [] }),
            image: None,
        });
    };
    let since = std::mem::replace(&mut g.egress_mark, egress.mark());
    let recent: Vec<serde_json::Value> = egress
        .refusals_since(since)
        .iter()
        .rev()
        .take(10)
        .map(|r| json!({ "target": r.target, "rule": r.refused.rule() }))
        .collect();
    Ok(ToolOutput {
        value: json!({ "status": "ok", "policy": true, "count": g.egress_mark - since, "recent": recent }),
        image: None,
    })
}

pub(crate) async fn screenshot(api: &Api, p: ScreenshotParams) -> Result<ToolOutput, ToolError> {
    let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
    let s = api.locate(&a).await?;
    let g = s.lock().await;
    let tab = g.tab(&a.tab_id)?.tab.clone();
    drop(g);
    let captured = tab.capture(true).await?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(captured.screenshot.clone().unwrap_or_default())
        .map_err(ToolError::browser)?;
    if !p.marks {
        return Ok(ToolOutput {
            value: json!({ "status": "ok", "width": tab.options().viewport.0, "height": tab.options().viewport.1 }),
            image: Some(base64::engine::general_purpose::STANDARD.encode(png)),
        });
    }
    let marks = captured.view.marks();
    let drawn = sightline_page::draw_marks(&png, &marks).map_err(ToolError::browser)?;
    Ok(ToolOutput {
        value: json!({ "status": "ok", "marks": marks }),
        image: Some(base64::engine::general_purpose::STANDARD.encode(drawn)),
    })
}
