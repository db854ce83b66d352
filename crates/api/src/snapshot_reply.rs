//! What `get_browser_state` answers, as types: a semantic_v2 snapshot (whole,
//! scoped, a continuation's next segment, or a change read) or a dom_refs_v1
//! one. [`crate::snapshot`] and [`crate::changes`] build these values; their
//! JSON Schema is the tool's published output schema.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use sightline_page::semantic::{Omitted, SemNode, SemanticTree};
use sightline_page::StateValue;

use crate::ids::{ContinuationId, SnapshotId, TabId, TargetId};
use crate::tools::Status;

/// A snapshot in either format.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Snapshot {
    Semantic(Box<SemanticSnapshot>),
    DomRefs(Box<DomRefsSnapshot>),
}

/// `"mode": "snapshot"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum Mode {
    #[serde(rename = "snapshot")]
    Snapshot,
}

/// `"format": "semantic_v2"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum SemanticV2 {
    #[serde(rename = "semantic_v2")]
    SemanticV2,
}

/// `"format": "dom_refs_v1"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum DomRefsV1 {
    #[serde(rename = "dom_refs_v1")]
    DomRefsV1,
}

/// The page a snapshot was taken of.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PageInfo {
    pub url: String,
    pub title: String,
}

/// A semantic_v2 snapshot.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SemanticSnapshot {
    pub status: Status,
    pub mode: Mode,
    pub target_id: TargetId,
    pub tab_id: TabId,
    pub snapshot: SemanticMeta,
    pub page: PageInfo,
    /// The accessibility outline, one line per node with its ref; empty in a change read.
    pub outline: String,
    /// The nodes an action can be taken on.
    pub refs: Vec<ActionRef>,
    /// The other nodes shown (headings, text, images…).
    pub content_refs: Vec<ContentRef>,
    /// A change read: what changed since `snapshot.since`; null when it answered the whole snapshot (see
    /// `snapshot.full_because`); absent in a whole snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Option<Changes>>,
    pub oopif: Oopif,
}

/// What a semantic_v2 snapshot is and what it left out.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SemanticMeta {
    pub id: SnapshotId,
    pub format: SemanticV2,
    /// True when nothing in scope was left for a continuation and the page was read whole.
    pub complete: bool,
    /// viewport, query or subtree.
    pub scope: &'static str,
    /// A change read: the snapshot the changes are measured from (null when there was none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Option<SnapshotId>>,
    pub selected_nodes: usize,
    pub total_nodes: usize,
    pub node_budget: usize,
    pub omitted: Omitted,
    /// The token of the next segment (single-use), when the budget left nodes out.
    pub continuation: Option<ContinuationId>,
    /// A change read that answered the whole snapshot: why (no_previous_snapshot, navigation, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_because: Option<&'static str>,
}

/// A node an action can be taken on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ActionRef {
    #[serde(rename = "ref")]
    #[schemars(schema_with = "crate::ids::ref_schema")]
    pub reference: String,
    pub role: String,
    pub name: String,
    pub value: Option<String>,
    /// ARIA states by name: a flag or a number (level).
    pub states: BTreeMap<&'static str, StateValue>,
    /// What can be done to it (click, type, select, scroll…).
    pub actions: Vec<&'static str>,
    /// `main`, or `frame-N`.
    pub frame: String,
    pub visibility: &'static str,
}

/// A node shown for its content.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ContentRef {
    #[serde(rename = "ref")]
    #[schemars(schema_with = "crate::ids::ref_schema")]
    pub reference: String,
    pub role: String,
    pub name: String,
    pub frame: String,
    pub visibility: &'static str,
}

/// The out-of-process frames of the page.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Oopif {
    pub status: OopifStatus,
    pub frames: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OopifStatus {
    /// The page has none.
    None,
    /// Some could not be proved (their nodes are counted in `omitted.unprovable_frame`).
    Partial,
    /// Every one is read.
    Attached,
}

impl Oopif {
    pub fn of(tree: &SemanticTree) -> Oopif {
        let status = match (tree.oopif_frames, tree.unprovable_frames) {
            (0, _) => OopifStatus::None,
            (_, 0) => OopifStatus::Attached,
            _ => OopifStatus::Partial,
        };
        Oopif { status, frames: tree.oopif_frames }
    }
}

/// A node's states as the wire has them.
pub fn states_of(s: &SemNode) -> BTreeMap<&'static str, StateValue> {
    s.states.iter().map(|st| (st.name(), st.value())).collect()
}

/// What a change read found.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Changes {
    pub added: Vec<Added>,
    pub changed: Vec<Changed>,
    /// Refs of the previous snapshot no longer in view.
    pub removed: Vec<String>,
}

/// A node new since the previous snapshot, and where it is.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Added {
    #[serde(rename = "ref")]
    #[schemars(schema_with = "crate::ids::ref_schema")]
    pub reference: String,
    pub parent: Option<String>,
    pub after: Option<String>,
    /// Its outline line.
    pub line: String,
}

/// A kept node whose fields changed: only those fields, and its place when it moved.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Changed {
    #[serde(rename = "ref")]
    #[schemars(schema_with = "crate::ids::ref_schema")]
    pub reference: String,
    pub line: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<BTreeMap<&'static str, StateValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Option<String>>,
}

/// A dom_refs_v1 snapshot.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DomRefsSnapshot {
    pub status: Status,
    pub mode: Mode,
    pub target_id: TargetId,
    pub tab_id: TabId,
    pub snapshot: DomRefsMeta,
    pub page: PageInfo,
    pub refs: Vec<DomRef>,
    /// True when the budget cut the list.
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DomRefsMeta {
    pub id: SnapshotId,
    pub format: DomRefsV1,
}

/// One interactive element of a dom_refs_v1 snapshot.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DomRef {
    #[serde(rename = "ref")]
    #[schemars(schema_with = "crate::ids::ref_schema")]
    pub reference: String,
    pub tag: String,
    pub role: Option<String>,
    pub name: String,
    pub text: Option<String>,
    pub value: Option<String>,
    pub href: Option<String>,
    pub checked: Option<bool>,
    pub disabled: bool,
}
