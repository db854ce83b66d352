//! Sessions as explicit handles: `session_open`, `session_close`,
//! `session_list`, the MCP layer's own tools beside the table's.
//!
//! MCP 2026-07-28 has no MCP session, so a Sightline session cannot hang off
//! one: `session_open` returns a handle (`{session}`), and every
//! session-scoped tool of the table takes it. A handle is a hub session
//! ([`Hub::create`]), owned by the principal that opened it, so refs,
//! snapshots and continuations are valid only with their handle (each hub
//! session has its own [`sightline_api::Api`]), and another principal's handle
//! answers exactly as one never issued. The tools work with older clients too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sightline_api::{decode_params, ErrorDetail, Reply, Status, ToolCode, ToolError, ToolOutput};

use crate::auth::Principal;
use crate::error::{EndReason, ServerError};
use crate::hub::{Hub, NewSession};

/// One handle tool: its wire name, description, annotations and params schema.
pub struct HandleTool {
    pub id: Handle,
    pub name: &'static str,
    pub description: &'static str,
    /// True when the tool never changes a page.
    pub read_only: bool,
    /// True when it destroys something (MCP's `destructiveHint`).
    pub destructive: bool,
    pub schema: fn() -> Value,
    /// The JSON Schema of its reply (MCP's `outputSchema`).
    pub output_schema: fn() -> Value,
}

/// Which handle tool (one variant per row of [`HANDLE_TOOLS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handle {
    Open,
    Close,
    List,
}

/// The handle tools, listed before the table's tools.
pub static HANDLE_TOOLS: &[HandleTool] = &[
    HandleTool {
        id: Handle::Open,
        name: "session_open",
        description: "Open a browser session (its own browser context and tab) and get its handle: {session, target_id, tab_id}, and with url the first State Object. Pass session to every other tool; refs, snapshots and continuations are valid only with the session they came from. viewport is WIDTHxHEIGHT; storage_state is Playwright's storageState JSON (as save_storage_state returns it); screenshot (default true) puts screenshots in its State Objects.",
        read_only: false,
        destructive: false,
        schema: schema_of::<OpenParams>,
        output_schema: sightline_api::output_schema_of::<OpenReply>,
    },
    HandleTool {
        id: Handle::Close,
        name: "session_close",
        description: "Close a session session_open opened: its tabs and browser context go, and every id it issued becomes invalid.",
        read_only: false,
        destructive: true,
        schema: schema_of::<CloseParams>,
        output_schema: sightline_api::output_schema_of::<sightline_api::EndReply>,
    },
    HandleTool {
        id: Handle::List,
        name: "session_list",
        description: "The handles of your open sessions (those your token opened, over any transport).",
        read_only: true,
        destructive: false,
        schema: schema_of::<ListParams>,
        output_schema: sightline_api::output_schema_of::<ListReply>,
    },
];

impl Handle {
    /// Its row of [`HANDLE_TOOLS`].
    pub fn tool(self) -> &'static HandleTool {
        HANDLE_TOOLS.iter().find(|t| t.id == self).expect("every handle tool has a row")
    }

    /// The handle tool of a wire name.
    pub fn parse(name: &str) -> Option<Handle> {
        HANDLE_TOOLS.iter().find(|t| t.name == name).map(|t| t.id)
    }
}

fn schema_of<T: JsonSchema>() -> Value {
    sightline_api::input_schema_of::<T>()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenParams {
    /// Load this absolute URL first (http, https, about or data); the reply then carries its State Object.
    pub url: Option<String>,
    /// The viewport in CSS pixels, WIDTHxHEIGHT (default: the server's, 1280x720 unless set).
    pub viewport: Option<String>,
    /// Cookies and localStorage to start from: Playwright's storageState JSON
    /// ({"cookies": [...], "origins": [...]}), as save_storage_state returns it.
    #[schemars(with = "Option<sightline_browser::StorageState>")]
    pub storage_state: Option<Value>,
    /// Screenshots in this session's State Objects (default true).
    pub screenshot: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseParams {
    /// The handle session_open returned.
    pub session: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {}

/// `session_open`: the handle, its tab's address, and with a url the first State Object.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OpenReply {
    pub status: Status,
    /// The handle to pass as `session`.
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// The State Object of the page at `url` (its screenshot, when taken, travels as an image).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<sightline_api::StateObject>")]
    pub state: Option<Value>,
    #[serde(skip)]
    pub image: Option<String>,
}

impl Reply for OpenReply {
    fn take_image(&mut self) -> Option<String> {
        self.image.take()
    }
}

/// `session_list`: the caller's open handles.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListReply {
    pub sessions: Vec<String>,
}

impl Reply for ListReply {}

/// A call that needs a handle and did not get one it may use.
#[derive(Debug, thiserror::Error)]
pub enum HandleError {
    /// No `session` argument.
    #[error("{tool} needs a session: pass \"session\", a handle session_open returned{}", open_list(.open))]
    Missing { tool: String, open: Vec<String> },
    /// A `session` that is not one of the caller's (never issued, or another principal's: the same answer).
    #[error("no session {given:?} of yours: pass \"session\", a handle session_open returned to you{}", open_list(.open))]
    NotYours { given: String, open: Vec<String> },
}

fn open_list(open: &[String]) -> String {
    if open.is_empty() {
        "; none is open: call session_open first".into()
    } else {
        format!(" (open: {})", open.join(", "))
    }
}

impl From<HandleError> for ToolError {
    fn from(e: HandleError) -> ToolError {
        let (code, detail) = match &e {
            HandleError::Missing { open, .. } => {
                (ToolCode::InvalidParams, ErrorDetail::Handles { needs: Some("session".into()), open: open.clone() })
            }
            HandleError::NotYours { open, .. } => {
                (ToolCode::SessionNotFound, ErrorDetail::Handles { needs: None, open: open.clone() })
            }
        };
        ToolError::new(code, e.to_string()).with_detail(detail).with_source(e)
    }
}

/// Run one handle tool for `caller` on `hub`.
pub async fn call(
    hub: &std::sync::Arc<Hub>,
    caller: &Principal,
    h: Handle,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    match h {
        Handle::Open => open(hub, caller, decode_params(args)?).await,
        Handle::Close => {
            let p: CloseParams = decode_params(args)?;
            match hub.end(caller, &p.session, EndReason::Deleted).await {
                Ok(()) => sightline_api::EndReply { status: Status::Ok, session: p.session }.into_output(),
                Err(ServerError::SessionNotFound { .. }) => {
                    Err(HandleError::NotYours { given: p.session, open: hub.ids(caller) }.into())
                }
                Err(e) => Err(e.into_tool_error()),
            }
        }
        Handle::List => {
            let _: ListParams = decode_params(args)?;
            ListReply { sessions: hub.ids(caller) }.into_output()
        }
    }
}

async fn open(hub: &std::sync::Arc<Hub>, caller: &Principal, p: OpenParams) -> Result<ToolOutput, ToolError> {
    if let Some(url) = &p.url {
        sightline_api::check_url(url).map_err(|e| ToolError::invalid(e.to_string()))?;
    }
    let viewport = p
        .viewport
        .as_deref()
        .map(sightline_browser::parse_viewport)
        .transpose()
        .map_err(|e| ToolError::invalid(format!("viewport {e}")))?;
    let storage_state = p.storage_state.as_ref().map(sightline_api::parse_state).transpose()?.map(std::sync::Arc::new);
    let new = NewSession { url: p.url, viewport, screenshot: p.screenshot.unwrap_or(true), storage_state };
    let (s, state) = hub.create(caller, new).await.map_err(ServerError::into_tool_error)?;
    let (target_id, tab_id) = s.target_and_tab();
    let mut reply =
        OpenReply { status: Status::Ok, session: s.id.clone(), target_id, tab_id, state: None, image: None };
    if let Some(mut state) = state {
        // The screenshot travels beside the JSON as an image, as get_state's does.
        if let Some(shot) = state.get_mut("screenshot").map(Value::take) {
            reply.image = shot.as_str().filter(|s| !s.is_empty()).map(str::to_string);
            state["screenshot"] = json!("");
        }
        reply.state = Some(state);
    }
    reply.into_output()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_names_its_tool_and_takes_an_object() {
        for t in HANDLE_TOOLS {
            assert_eq!(Handle::parse(t.name), Some(t.id));
            assert_eq!(t.id.tool().name, t.name);
            assert!(!(t.read_only && t.destructive), "{}", t.name);
            let schema = (t.schema)();
            assert_eq!(schema["type"], "object", "{}: {schema}", t.name);
            // No name is also a row of the table.
            assert!(t.name.parse::<sightline_api::ToolName>().is_err(), "{} is a table tool too", t.name);
        }
        assert_eq!(Handle::parse("bind_browser"), None);
        let open = (Handle::Open.tool().schema)();
        let props: Vec<&str> = open["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(props, ["screenshot", "storage_state", "url", "viewport"]);
        assert_eq!((Handle::Close.tool().schema)()["required"], json!(["session"]));
    }

    #[test]
    fn a_missing_or_foreign_handle_says_which_to_pass() {
        let e: ToolError = HandleError::Missing { tool: "list_tabs".into(), open: vec![] }.into();
        assert_eq!(e.code, ToolCode::InvalidParams);
        assert!(e.message.contains("call session_open first"), "{}", e.message);
        assert_eq!(e.detail_json()["needs"], "session");
        let e: ToolError = HandleError::NotYours { given: "s-x".into(), open: vec!["s-1".into(), "s-2".into()] }.into();
        assert_eq!(e.code, ToolCode::SessionNotFound);
        assert!(e.message.contains("(open: s-1, s-2)"), "{}", e.message);
        assert_eq!(e.detail_json()["open"], json!(["s-1", "s-2"]));
    }
}
