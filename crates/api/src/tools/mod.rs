//! One tool vocabulary for every transport.
//!
//! Each tool is a record: name, description, JSON Schema of its input
//! (generated from the params struct), whether it only reads, and a handler.
//! [`Api::dispatch`] is the single entry point; `sightline rpc` and
//! `sightline mcp` are framings around it.

mod files;
mod mutate;
mod protocol;
mod read;
mod session;
mod storage;
mod tabs;

pub(crate) use storage::storage_error;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;

use crate::error::ToolError;
use crate::registry::{ApiOptions, Registry, Session};

/// What a tool returns: JSON, and optionally an image (base64 PNG).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub value: Value,
    pub image: Option<String>,
}

impl ToolOutput {
    pub fn json(value: Value) -> ToolOutput {
        ToolOutput { value, image: None }
    }
}

pub type Handler = for<'a> fn(&'a Api, Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// One tool.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// True when the tool never changes the page.
    pub read_only: bool,
    pub schema: fn() -> Value,
    pub handler: Handler,
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    v
}

/// Decode a tool's params, naming what is wrong.
pub(crate) fn params<T: DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    let v = if v.is_null() { Value::Object(Default::default()) } else { v };
    serde_json::from_value(v).map_err(|e| ToolError::invalid(format!("invalid params: {e}")))
}

/// The fields every tab-scoped tool carries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TabAddress {
    /// The driver session name given to bind_browser.
    pub session: String,
    /// The opaque target id returned by bind_browser.
    pub target_id: String,
    /// An opaque tab id from bind_browser, list_tabs or open_tab.
    pub tab_id: String,
}

/// The API: a registry of sessions behind one dispatch.
pub struct Api {
    pub(crate) registry: Registry,
}

impl Api {
    pub fn new(opts: ApiOptions) -> Api {
        Api { registry: Registry::new(opts) }
    }

    /// Check every navigation (`browser_navigate`, `open_tab {url}`, `act` navigate) against `egress`.
    pub fn with_egress(mut self, egress: std::sync::Arc<sightline_policy::Egress>) -> Api {
        self.registry.egress = Some(egress);
        self
    }

    /// Let `upload_file` read from `files.uploads` and send each session's downloads to `files.downloads`.
    pub fn with_files(mut self, files: crate::files::FileAccess) -> Api {
        self.registry.files = files;
        self
    }

    /// `navigation_failed` naming the rule when the egress policy refuses `url`.
    pub(crate) async fn check_navigation(&self, url: &str) -> Result<(), ToolError> {
        let Some(egress) = &self.registry.egress else { return Ok(()) };
        egress.check_navigation(url).await.map_err(|r| ToolError {
            code: crate::error::ToolCode::NavigationFailed,
            message: format!("navigation to {url} was refused by the egress policy (rule {}): {r}", r.rule()),
            detail: serde_json::json!({ "rule": r.rule() }),
        })
    }

    /// Every tool, in a stable order.
    pub fn tools(&self) -> &'static [Tool] {
        TOOLS
    }

    /// Call a tool by name.
    pub async fn dispatch(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        let tool = TOOLS.iter().find(|t| t.name == name).ok_or_else(|| {
            ToolError::new(crate::error::ToolCode::UnknownTool, format!("no tool {name:?}; see the tool list"))
        })?;
        if !(args.is_object() || args.is_null()) {
            return Err(ToolError::invalid("params must be a JSON object"));
        }
        let span = tracing::debug_span!("tool", name);
        let result = tracing::Instrument::instrument((tool.handler)(self, args), span.clone()).await;
        if let Err(e) = &result {
            span.in_scope(|| tracing::debug!(code = e.code.as_str(), message = %e.message, "tool call failed"));
        }
        result
    }

    /// The session for an address, checked against its target and tab.
    pub(crate) async fn locate(&self, a: &TabAddress) -> Result<Arc<Mutex<Session>>, ToolError> {
        let s = self.registry.session(&a.session).await?;
        {
            let g = s.lock().await;
            g.check_target(&a.target_id)?;
            g.tab(&a.tab_id)?;
        }
        Ok(s)
    }

    /// End every session (closing the browsers they launched).
    pub async fn shutdown(&self) {
        let sessions: Vec<_> = self.registry.sessions.lock().await.drain().collect();
        for (_, s) in sessions {
            session::close(s).await;
        }
    }
}

macro_rules! tool {
    ($name:literal, $read_only:expr, $params:ty, $f:path, $desc:literal) => {
        Tool {
            name: $name,
            description: $desc,
            read_only: $read_only,
            schema: schema_of::<$params>,
            handler: |api, v| Box::pin(async move { $f(api, params::<$params>(v)?).await }),
        }
    };
}

pub static TOOLS: &[Tool] = &[
    tool!("bind_browser", false, session::BindParams, session::bind_browser,
        "Launch (or attach to) a browser for a named driver session. Returns an opaque target_id and the tab ids. With reconnect=true a new browser replaces the old one and everything under the old target_id becomes invalid."),
    tool!("end_session", false, session::EndParams, session::end_session,
        "End a driver session: close its tabs and browser and remove every id it issued."),
    tool!("list_tabs", true, tabs::ListParams, tabs::list_tabs,
        "List the session's tabs, including popups the page opened itself (with their opener)."),
    tool!("open_tab", false, tabs::OpenParams, tabs::open_tab, "Open a new tab, optionally at a URL."),
    tool!("close_tab", false, TabAddress, tabs::close_tab, "Close a tab; its snapshots and refs become invalid."),
    tool!("browser_navigate", false, tabs::NavigateParams, tabs::navigate,
        "Load an absolute URL in the tab and wait until it is stable. Invalidates every snapshot of the tab."),
    tool!("get_browser_state", true, read::StateParams, read::get_browser_state,
        "Snapshot of the tab. snapshot_format: semantic_v2 (accessibility outline, typed action refs, content refs, visibility, omission counts, continuation) or dom_refs_v1 (default: interactive DOM refs and a truncated flag). Scope with query (role, name or text), scope_ref (subtree of a current ref) or continuation (next ranked segment; single-use; not combinable). changes=true (semantic_v2): only what changed since the tab's latest snapshot (added, removed, changed nodes; kept nodes keep their ref number), or the full snapshot with full_because when there is nothing to compare with."),
    tool!("get_blocked_requests", true, read::BlockedParams, read::get_blocked_requests,
        "Requests the egress policy (--allow, --block, --block-private) refused since this session's previous call: a count and the latest ten, each with its target and rule. policy=false when no egress policy is set."),
    tool!("browser_screenshot", true, read::ScreenshotParams, read::screenshot,
        "PNG screenshot of the tab's viewport; with marks=true, numbered boxes over the visible interactive elements and their listing."),
    tool!("browser_click", false, mutate::ClickParams, mutate::click,
        "Click the element of a ref (real mouse events), after re-proving the binding, tab, frame and node."),
    tool!("browser_type", false, mutate::TypeParams, mutate::type_text,
        "Type text into the element of a ref (key events; \\n is Enter). overwrite=true clears it first."),
    tool!("browser_select", false, mutate::SelectParams, mutate::select,
        "Choose an option (by its label or value) of the select of a ref; fires input and change."),
    tool!("browser_scroll", false, mutate::ScrollParams, mutate::scroll,
        "Scroll with the mouse wheel: over the element of a ref (its scroll container), else the page."),
    tool!("browser_press_key", false, mutate::KeyParams, mutate::press_key,
        "Press a key on whatever has focus: Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Space, or one character."),
    tool!("get_state", true, protocol::GetStateParams, protocol::get_state,
        "The element-index protocol's State Object of the tab (url, page_content, element_index, screenshot, state_hash). mark_new=true marks elements new since the previous state with * in page_content."),
    tool!("save_storage_state", true, storage::SaveParams, storage::save_storage_state,
        "The session's cookies and localStorage as Playwright's storageState JSON ({cookies, origins}), to start a later session from (bind_browser storage_state, --storage-state FILE). localStorage is read for the origins of the open tabs and those the session started with. The values are secrets: keep them so."),
    tool!("act", false, protocol::ActParams, protocol::act,
        "Send one element-index protocol action (click_element, input_text, select_option, scroll, navigate, finish_task, fail_task) and get the next State Object; errors come back inside it."),
    tool!("upload_file", false, files::UploadParams, files::upload_file,
        "Choose files for the file input of a ref (or for the input whose file chooser a click on the ref's element opened). paths are names inside the operator's upload directory (--files DIR); anything else is refused with file_refused."),
    tool!("list_downloads", true, files::ListDownloadsParams, files::list_downloads,
        "The session's downloads: name (in the operator's download directory), bytes, state (in_progress, done, failed) and why it failed (e.g. larger than the size limit)."),
];
