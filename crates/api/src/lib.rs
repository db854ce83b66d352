//! The API layer: the wire types and one tool vocabulary.
//!
//! This is the only crate that knows the JSON shapes agents exchange with
//! Sightline: the State Object, the actions (the seed's seven and the extensions) and the error codes of the
//! element-index protocol ([`Env`]), and the tools of the semantic snapshot API
//! ([`Api`], [`TOOLS`]) with their generated JSON Schemas. Front ends (CLI,
//! stdio loop, JSON-RPC, MCP) are thin framings around it.
//!
//! ```
//! use sightline_api::Action;
//! let a = Action::parse(r#"{"action":"click_element","element_index":4}"#).unwrap();
//! assert_eq!(a, Action::ClickElement { element_index: 4, count: 1 });
//! assert!(Action::parse(r#"{"action":"click_element","element_index":-4}"#).is_err());
//! ```

mod action;
mod changes;
mod env;
mod error;
mod files;
mod fresh;
pub mod human;
pub mod ids;
pub mod lines;
pub mod record;
mod registry;
mod snapshot;
pub mod snapshot_reply;
mod state;
mod tools;

pub use action::{
    action_names, action_object_schema, check_text, check_url, spec, Action, ActionSpec, Direction, DragTarget, Field,
    FieldKind, ValidationError, ACTION_TABLE, MAX_TEXT_CHARS, NAVIGABLE_SCHEMES,
};
pub use env::{Env, EnvError, EnvOptions, Human, Turn};
pub use error::{Cause, DriftKind, ErrorDetail, Found, Proof, Rule, ToolCode, ToolError};
pub use files::{FileAccess, MAX_UPLOAD_FILES};
pub use ids::{ContinuationId, IdError, RefId, SnapshotId, TabId, TargetId};
pub use lines::{LineError, LineReader, MAX_LINE_BYTES};
pub use registry::ApiOptions;
pub use sightline_policy::{Egress, PolicyConfig};
pub use snapshot::capture_semantic;
pub use state::{
    Attributes, ElementDescriptor, ElementIndexMap, ErrorCode, ErrorObject, StateObject, TaskEnd, TaskStatus,
};
pub use tools::{
    decode_params, input_schema_of, output_schema_of, parse_state, ActParams, ActedReply, Api, BindParams, BindReply,
    BlockedParams, BlockedReply, BlockedRequest, ClickParams, CloseTabReply, DownloadInfo, DownloadsReply, DragParams,
    EndParams, EndReply, GetStateParams, HistoryParams, KeyParams, ListDownloadsParams, ListParams, ListTabsReply,
    NavigateParams, NavigateReply, Op, OpenParams, OpenTabReply, Performed, Reply, RunParams, RunReply, SaveParams,
    Scope, ScreenshotParams, ScreenshotReply, ScriptParams, ScriptReply, ScrollParams, ScrollReply, SelectParams,
    SelectReply, SnapshotReply, StateParams, StateReply, Status, TabAddress, TabInfo, TabListing, Tool, ToolName,
    ToolOutput, TypeParams, UploadParams, UploadReply, BROWSER, TOOLS,
};
pub use tools::{
    CancelHumanParams, CancelHumanReply, RequestHumanParams, RequestHumanReply, WaitHumanParams, WaitHumanReply,
    MAX_HUMAN_WAIT,
};
