//! `DOM`: resolving, describing and locating nodes.

use serde::{Deserialize, Serialize};

use super::runtime::RemoteObject;
use super::{Command, Empty};
use crate::{BackendNodeId, ExecutionContextId, FrameId};

/// `DOM.resolveNode`: a remote object for a backend node.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolveNode<'a> {
    pub backend_node_id: BackendNodeId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_group: Option<&'a str>,
    /// The world to resolve into (default: the node's frame's main world).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_context_id: Option<ExecutionContextId>,
}

impl ResolveNode<'_> {
    /// Resolve into the node's frame's main world, in no object group.
    pub fn backend(id: BackendNodeId) -> Self {
        ResolveNode { backend_node_id: id, object_group: None, execution_context_id: None }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct ResolveNodeReply {
    pub object: RemoteObject,
}

impl Command for ResolveNode<'_> {
    const METHOD: &'static str = "DOM.resolveNode";
    type Response = ResolveNodeReply;
}

/// `DOM.describeNode`, by backend id or by remote object.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeNode<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_node_id: Option<BackendNodeId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<&'a str>,
    /// How deep `children` go: `-1` for the whole subtree (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<i32>,
}

impl<'a> DescribeNode<'a> {
    pub fn backend(id: BackendNodeId) -> Self {
        DescribeNode { backend_node_id: Some(id), object_id: None, depth: None }
    }

    pub fn object(id: &'a str) -> Self {
        DescribeNode { backend_node_id: None, object_id: Some(id), depth: None }
    }

    /// The node and its whole light-DOM subtree (`children`, recursively).
    pub fn subtree(id: &'a str) -> Self {
        DescribeNode { backend_node_id: None, object_id: Some(id), depth: Some(-1) }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct DescribeNodeReply {
    pub node: Node,
}

/// `DOM.Node` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub backend_node_id: BackendNodeId,
    #[serde(default)]
    pub local_name: Option<String>,
    /// Flat `[name, value, name, value, …]`.
    #[serde(default)]
    pub attributes: Vec<String>,
    /// 1 for an element, 3 for text, …
    #[serde(default)]
    pub node_type: i64,
    #[serde(default)]
    pub node_name: String,
    /// Light-DOM children, as deep as the request's `depth` (whitespace-only text left out).
    #[serde(default)]
    pub children: Vec<Node>,
}

impl Node {
    /// The node and its descendant elements in tree order (the node itself first, whatever its type).
    pub fn elements_in_order(&self) -> Vec<&Node> {
        let mut out = vec![self];
        let mut stack: Vec<&Node> = self.children.iter().rev().collect();
        while let Some(n) = stack.pop() {
            if n.node_type == 1 {
                out.push(n);
            }
            stack.extend(n.children.iter().rev());
        }
        out
    }
}

impl Command for DescribeNode<'_> {
    const METHOD: &'static str = "DOM.describeNode";
    type Response = DescribeNodeReply;
}

/// `DOM.getNodeForLocation` (main-document coordinates).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetNodeForLocation {
    pub x: i64,
    pub y: i64,
    #[serde(rename = "includeUserAgentShadowDOM")]
    pub include_user_agent_shadow_dom: bool,
    pub ignore_pointer_events_none: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetNodeForLocationReply {
    pub backend_node_id: BackendNodeId,
}

impl Command for GetNodeForLocation {
    const METHOD: &'static str = "DOM.getNodeForLocation";
    type Response = GetNodeForLocationReply;
}

/// `DOM.scrollIntoViewIfNeeded`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScrollIntoViewIfNeeded {
    pub backend_node_id: BackendNodeId,
}

impl Command for ScrollIntoViewIfNeeded {
    const METHOD: &'static str = "DOM.scrollIntoViewIfNeeded";
    type Response = Empty;
}

/// `DOM.getFrameOwner`: the `<iframe>` element holding a frame.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetFrameOwner<'a> {
    pub frame_id: &'a FrameId,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetFrameOwnerReply {
    pub backend_node_id: BackendNodeId,
}

impl Command for GetFrameOwner<'_> {
    const METHOD: &'static str = "DOM.getFrameOwner";
    type Response = GetFrameOwnerReply;
}

/// `DOM.setFileInputFiles`: set the files of an `<input type=file>` (fires `input` and `change`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetFileInputFiles<'a> {
    pub files: &'a [String],
    pub backend_node_id: BackendNodeId,
}

impl Command for SetFileInputFiles<'_> {
    const METHOD: &'static str = "DOM.setFileInputFiles";
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subtree described with depth -1 lists its elements in tree order,
    /// text nodes left out (the walk pairs kept elements by that order).
    #[test]
    fn a_described_subtree_gives_its_elements_in_tree_order() {
        let reply: DescribeNodeReply = serde_json::from_value(serde_json::json!({"node": {
            "backendNodeId": 1, "nodeType": 1, "nodeName": "DIV", "children": [
                {"backendNodeId": 2, "nodeType": 1, "nodeName": "B", "children": [
                    {"backendNodeId": 3, "nodeType": 3, "nodeName": "#text"},
                    {"backendNodeId": 4, "nodeType": 1, "nodeName": "I"}]},
                {"backendNodeId": 5, "nodeType": 8, "nodeName": "#comment"},
                {"backendNodeId": 6, "nodeType": 1, "nodeName": "SPAN"}]}}))
        .expect("reply");
        let order: Vec<(i64, &str)> =
            reply.node.elements_in_order().iter().map(|n| (n.backend_node_id.0, n.node_name.as_str())).collect();
        assert_eq!(order, vec![(1, "DIV"), (2, "B"), (4, "I"), (6, "SPAN")]);
    }
}

/// `DOM.getContentQuads`: the quads of a node as laid out and transformed (an SVG
/// shape's own box, after its transforms), in viewport coordinates.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetContentQuads {
    pub backend_node_id: BackendNodeId,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GetContentQuadsReply {
    /// Each quad as eight numbers: x1, y1, … x4, y4.
    pub quads: Vec<Vec<f64>>,
}

impl Command for GetContentQuads {
    const METHOD: &'static str = "DOM.getContentQuads";
    type Response = GetContentQuadsReply;
}
