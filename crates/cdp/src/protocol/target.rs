//! `Target`: browser contexts, page targets, flattened sessions.

use serde::{Deserialize, Serialize};

use super::{Command, Empty, EventParams};
use crate::{BrowserContextId, SessionId, TargetId};

/// `Target.createBrowserContext`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBrowserContext {
    pub dispose_on_detach: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBrowserContextReply {
    pub browser_context_id: BrowserContextId,
}

impl Command for CreateBrowserContext {
    const METHOD: &'static str = "Target.createBrowserContext";
    type Response = CreateBrowserContextReply;
}

/// `Target.disposeBrowserContext`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisposeBrowserContext<'a> {
    pub browser_context_id: &'a BrowserContextId,
}

impl Command for DisposeBrowserContext<'_> {
    const METHOD: &'static str = "Target.disposeBrowserContext";
    type Response = Empty;
}

/// `Target.createTarget`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTarget<'a> {
    pub url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<&'a BrowserContextId>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTargetReply {
    pub target_id: TargetId,
}

impl Command for CreateTarget<'_> {
    const METHOD: &'static str = "Target.createTarget";
    type Response = CreateTargetReply;
}

/// `Target.attachToTarget`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachToTarget<'a> {
    pub target_id: &'a TargetId,
    pub flatten: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachToTargetReply {
    pub session_id: SessionId,
}

impl Command for AttachToTarget<'_> {
    const METHOD: &'static str = "Target.attachToTarget";
    type Response = AttachToTargetReply;
}

/// `Target.setAutoAttach`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetAutoAttach {
    pub auto_attach: bool,
    pub wait_for_debugger_on_start: bool,
    pub flatten: bool,
}

impl Command for SetAutoAttach {
    const METHOD: &'static str = "Target.setAutoAttach";
    type Response = Empty;
}

/// `Target.closeTarget`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseTarget<'a> {
    pub target_id: &'a TargetId,
}

impl Command for CloseTarget<'_> {
    const METHOD: &'static str = "Target.closeTarget";
    type Response = Empty;
}

/// `Target.getTargets`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetTargets {}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTargetsReply {
    pub target_infos: Vec<TargetInfo>,
}

impl Command for GetTargets {
    const METHOD: &'static str = "Target.getTargets";
    type Response = GetTargetsReply;
}

/// `Target.TargetInfo` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    pub target_id: TargetId,
    /// `page`, `iframe`, `worker`, …
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub opener_id: Option<TargetId>,
    #[serde(default)]
    pub browser_context_id: Option<BrowserContextId>,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
}

/// `Target.attachedToTarget`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachedToTarget {
    pub session_id: SessionId,
    pub target_info: TargetInfo,
}

impl EventParams for AttachedToTarget {
    const METHOD: &'static str = "Target.attachedToTarget";
}

/// `Target.detachedFromTarget`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetachedFromTarget {
    pub session_id: SessionId,
    #[serde(default)]
    pub target_id: Option<TargetId>,
}

impl EventParams for DetachedFromTarget {
    const METHOD: &'static str = "Target.detachedFromTarget";
}

/// `Target.getTargetInfo`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTargetInfo<'a> {
    pub target_id: &'a TargetId,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTargetInfoReply {
    pub target_info: TargetInfo,
}

impl Command for GetTargetInfo<'_> {
    const METHOD: &'static str = "Target.getTargetInfo";
    type Response = GetTargetInfoReply;
}

/// `Target.getBrowserContexts`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetBrowserContexts {}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetBrowserContextsReply {
    /// The default context (the profile's own); absent in old browsers.
    #[serde(default)]
    pub default_browser_context_id: Option<BrowserContextId>,
    /// Every context made with `createBrowserContext` and still open.
    #[serde(default)]
    pub browser_context_ids: Vec<BrowserContextId>,
}

impl Command for GetBrowserContexts {
    const METHOD: &'static str = "Target.getBrowserContexts";
    type Response = GetBrowserContextsReply;
}
