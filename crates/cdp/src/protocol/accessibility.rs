//! `Accessibility`: Chromium's accessible names and trees.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{raw_reply, unit_command, Command};

unit_command!(
    /// `Accessibility.disable`: Chromium drops the tree it built (kept, it is
    /// updated on every change and slows every later snapshot).
    Disable = "Accessibility.disable"
);
use crate::BackendNodeId;

/// `Accessibility.getFullAXTree`. The reply (`{nodes}`) is kept raw: the page model parses it once.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetFullAxTree {}

impl Command for GetFullAxTree {
    const METHOD: &'static str = "Accessibility.getFullAXTree";
    type Response = Box<RawValue>;
    raw_reply!();
}

/// `Accessibility.getPartialAXTree`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPartialAxTree {
    pub backend_node_id: BackendNodeId,
    pub fetch_relatives: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GetPartialAxTreeReply {
    pub nodes: Vec<AxNode>,
}

/// `Accessibility.AXNode` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
pub struct AxNode {
    #[serde(rename = "backendDOMNodeId", default)]
    pub backend_dom_node_id: Option<BackendNodeId>,
    #[serde(default)]
    pub name: Option<AxValue>,
}

/// `Accessibility.AXValue` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
pub struct AxValue {
    #[serde(default)]
    pub value: Option<Value>,
}

impl Command for GetPartialAxTree {
    const METHOD: &'static str = "Accessibility.getPartialAXTree";
    type Response = GetPartialAxTreeReply;
}

/// `Accessibility.getFullAXTree` of one frame (a same-process iframe's document
/// is a frame of its own to this call). The reply is kept raw, as
/// [`GetFullAxTree`]'s. The test suite's oracle reads it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetFullAxTreeOfFrame<'a> {
    pub frame_id: &'a crate::FrameId,
}

impl Command for GetFullAxTreeOfFrame<'_> {
    const METHOD: &'static str = "Accessibility.getFullAXTree";
    type Response = Box<RawValue>;
    raw_reply!();
}
