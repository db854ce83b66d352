//! One tool vocabulary for every transport.
//!
//! Each tool is one typed method on [`Api`] (`api.bind_browser(BindParams) ->
//! BindReply`, …) and one row of the `tools!` table below, which names the
//! method, its params and reply types, its annotations (read-only,
//! destructive) and which address fields it takes ([`Scope`]). The tool list,
//! the JSON Schemas, the MCP annotations and [`Api::dispatch`] are all
//! generated from that table, so a tool cannot be listed without a method or
//! annotated apart from it. `dispatch(&str, Value)` is only the edge entry
//! of the JSON-RPC, MCP and HTTP front ends; Rust callers use the methods.

mod files;
mod human;
mod mutate;
mod protocol;
mod read;
mod run;
mod session;
mod storage;
mod tabs;

pub use files::{DownloadInfo, DownloadsReply, ListDownloadsParams, UploadParams, UploadReply};
pub use human::{
    CancelHumanParams, CancelHumanReply, RequestHumanParams, RequestHumanReply, WaitHumanParams, WaitHumanReply,
    MAX_HUMAN_WAIT,
};
pub use mutate::{
    ActedReply, ClickParams, DragParams, HistoryParams, KeyParams, ScrollParams, ScrollReply, SelectParams,
    SelectReply, TypeParams,
};
pub use protocol::{ActParams, GetStateParams, StateReply};
pub use read::{
    BlockedParams, BlockedReply, BlockedRequest, ScreenshotParams, ScreenshotReply, SnapshotReply, StateParams,
};
pub use run::{Op, Performed, RunParams, RunReply, ScriptParams, ScriptReply, BROWSER};
pub use session::{BindParams, BindReply, EndParams, EndReply, TabInfo};
pub use storage::{parse_state, SaveParams};
pub use tabs::{
    CloseTabReply, ListParams, ListTabsReply, NavigateParams, NavigateReply, OpenParams, OpenTabReply, TabListing,
};

use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::error::{ToolCode, ToolError};
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

/// A typed tool reply: its JSON (described by its JSON Schema), and the image that travels beside it.
pub trait Reply: Serialize + JsonSchema {
    /// Take the image out (it is not part of the JSON).
    fn take_image(&mut self) -> Option<String> {
        None
    }

    /// The reply as the wire carries it.
    fn into_output(mut self) -> Result<ToolOutput, ToolError>
    where
        Self: Sized,
    {
        let image = self.take_image();
        let value = serde_json::to_value(&self).map_err(ToolError::encoding)?;
        Ok(ToolOutput { value, image })
    }
}

/// `"status": "ok"` in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
pub enum Status {
    #[default]
    #[serde(rename = "ok")]
    Ok,
}

pub type Handler = for<'a> fn(&'a Api, Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// Which address fields a tool's params carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// `session` only.
    Session,
    /// `session` and `target_id`.
    Target,
    /// `session`, `target_id` and `tab_id`.
    Tab,
}

/// One tool: one row of the table.
pub struct Tool {
    /// Which tool (the same as `name`, typed).
    pub id: ToolName,
    pub name: &'static str,
    pub description: &'static str,
    /// True when the tool never changes the page.
    pub read_only: bool,
    /// True when the tool destroys something or leaves the page (MCP's `destructiveHint`).
    pub destructive: bool,
    /// The address fields its params carry.
    pub scope: Scope,
    pub schema: fn() -> Value,
    /// The JSON Schema of its reply (MCP's `outputSchema`), generated from the reply type.
    pub output_schema: fn() -> Value,
    pub handler: Handler,
}

/// A tool's params schema, self-contained (subschemas inline, no `$defs`), so it
/// can be embedded anywhere (MCP's `inputSchema`, the OpenAPI document).
pub fn input_schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let mut v = serde_json::to_value(generator.into_generator().into_root_schema_for::<T>()).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    v
}

/// The JSON Schema of a reply as it is serialized: every field a reply always
/// carries is required, and the root is an object (MCP requires it of an
/// `outputSchema`; a reply of several shapes is `type: object` and `anyOf` them).
/// Self-contained, as the params' schemas are.
pub fn output_schema_of<T: JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let generator = settings.for_serialize().into_generator();
    let mut v = serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.entry("type").or_insert_with(|| Value::from("object"));
    }
    v
}

/// Decode a tool's params from JSON, naming what is wrong (`invalid_params`).
pub fn decode_params<T: DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    let v = if v.is_null() { Value::Object(Default::default()) } else { v };
    serde_json::from_value(v).map_err(|e| ToolError::invalid(format!("invalid params: {e}")).with_source(e))
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
        egress.check_navigation(url).await.map_err(|r| {
            ToolError::new(
                ToolCode::NavigationFailed,
                format!("navigation to {url} was refused by the egress policy (rule {}): {r}", r.rule()),
            )
            .with_detail(crate::error::ErrorDetail::Rule { rule: r.rule().to_string() })
        })
    }

    /// Every tool, in a stable order.
    pub fn tools(&self) -> &'static [Tool] {
        TOOLS
    }

    /// Call a tool by its wire name with JSON params: the edge entry of the
    /// JSON-RPC, MCP and HTTP front ends (Rust callers use the typed methods).
    pub async fn dispatch(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.call(name.parse()?, args).await
    }

    /// Call a tool with JSON params.
    pub async fn call(&self, tool: ToolName, args: Value) -> Result<ToolOutput, ToolError> {
        if !(args.is_object() || args.is_null()) {
            return Err(ToolError::invalid("params must be a JSON object"));
        }
        let name = tool.as_str();
        // While a person has the session, agent actions are refused before they touch the page.
        let desk = args.get("session").and_then(Value::as_str).and_then(|s| self.registry.desk_if(s));
        if let Some(d) = desk.as_ref().filter(|_| tool.is_agent_action()) {
            if let Err(e) = d.check_agent() {
                d.note_action(name.to_string(), e.code.as_str());
                return Err(e);
            }
        }
        let span = tracing::debug_span!("tool", name);
        let result = tracing::Instrument::instrument((tool.tool().handler)(self, args), span.clone()).await;
        if let Err(e) = &result {
            span.in_scope(|| tracing::debug!(code = e.code.as_str(), message = %e.message, "tool call failed"));
        }
        // The live view lists what the agent did (`act` notes its own action).
        if let Some(d) = desk.filter(|_| !tool.tool().read_only && tool != ToolName::Act) {
            d.note_action(name.to_string(), result.as_ref().map_or_else(|e| e.code.as_str(), |_| "ok"));
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
        for (name, s) in sessions {
            self.registry.close_desk(&name);
            session::close(s).await;
        }
    }
}

/// The table: `Variant => "wire_name", method(Params) -> Reply, read_only, destructive, Scope, "description"`.
/// It generates [`ToolName`], [`TOOLS`] (schemas from the params types, handlers that decode
/// the params, call the typed method and encode its reply).
macro_rules! tools {
    ($( $variant:ident => $name:literal, $method:ident($params:ty) -> $reply:ty,
        read_only: $ro:expr, destructive: $de:expr, $scope:ident, $desc:literal; )*) => {
        /// The name of a tool: one variant per row of the table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ToolName { $( $variant, )* }

        impl ToolName {
            /// Every tool, in the table's order.
            pub const ALL: &'static [ToolName] = &[ $( ToolName::$variant, )* ];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $( ToolName::$variant => $name, )* }
            }
        }

        pub static TOOLS: &[Tool] = &[ $(
            Tool {
                id: ToolName::$variant,
                name: $name,
                description: $desc,
                read_only: $ro,
                destructive: $de,
                scope: Scope::$scope,
                schema: input_schema_of::<$params>,
                output_schema: output_schema_of::<$reply>,
                handler: |api, v| Box::pin(async move {
                    let reply: $reply = Api::$method(api, decode_params::<$params>(v)?).await?;
                    reply.into_output()
                }),
            },
        )* ];
    };
}

impl ToolName {
    /// Its row of [`TOOLS`].
    pub fn tool(self) -> &'static Tool {
        &TOOLS[self as usize]
    }

    /// Whether it is an agent action a hand-off refuses (`handed_over`): every
    /// tool that may change the page, but the hand-off's own and `end_session`.
    pub fn is_agent_action(self) -> bool {
        !self.tool().read_only
            && !matches!(
                self,
                ToolName::RequestHuman | ToolName::WaitForHuman | ToolName::CancelHuman | ToolName::EndSession
            )
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ToolName {
    type Err = ToolError;
    /// A wire name; anything else is `unknown_tool`.
    fn from_str(name: &str) -> Result<ToolName, ToolError> {
        ToolName::ALL
            .iter()
            .copied()
            .find(|t| t.as_str() == name)
            .ok_or_else(|| ToolError::new(ToolCode::UnknownTool, format!("no tool {name:?}; see the tool list")))
    }
}

tools! {
    BindBrowser => "bind_browser", bind_browser(BindParams) -> BindReply, read_only: false, destructive: true, Session,
        "Launch (or attach to) a browser for a named driver session. Returns an opaque target_id and the tab ids. With reconnect=true a new browser replaces the old one and everything under the old target_id becomes invalid.";
    EndSession => "end_session", end_session(EndParams) -> EndReply, read_only: false, destructive: true, Session,
        "End a driver session: close its tabs and browser and remove every id it issued.";
    ListTabs => "list_tabs", list_tabs(ListParams) -> ListTabsReply, read_only: true, destructive: false, Target,
        "List the session's tabs, including popups the page opened itself (with their opener).";
    OpenTab => "open_tab", open_tab(OpenParams) -> OpenTabReply, read_only: false, destructive: false, Target,
        "Open a new tab, optionally at a URL.";
    CloseTab => "close_tab", close_tab(TabAddress) -> CloseTabReply, read_only: false, destructive: true, Tab,
        "Close a tab; its snapshots and refs become invalid.";
    BrowserNavigate => "browser_navigate", browser_navigate(NavigateParams) -> NavigateReply, read_only: false, destructive: true, Tab,
        "Load an absolute URL in the tab and wait until it is stable. Invalidates every snapshot of the tab.";
    GetBrowserState => "get_browser_state", get_browser_state(StateParams) -> SnapshotReply, read_only: true, destructive: false, Tab,
        "Snapshot of the tab. snapshot_format: semantic_v2 (accessibility outline, typed action refs, content refs, visibility, omission counts, continuation) or dom_refs_v1 (default: interactive DOM refs and a truncated flag). Scope with query (role, name or text), scope_ref (subtree of a current ref) or continuation (next ranked segment; single-use; not combinable). changes=true (semantic_v2): only what changed since the tab's latest snapshot (added, removed, changed nodes; kept nodes keep their ref number), or the full snapshot with full_because when there is nothing to compare with.";
    GetBlockedRequests => "get_blocked_requests", get_blocked_requests(BlockedParams) -> BlockedReply, read_only: true, destructive: false, Session,
        "Requests the egress policy (--allow, --block, --block-private) refused since this session's previous call: a count and the latest ten, each with its target and rule. policy=false when no egress policy is set.";
    BrowserScreenshot => "browser_screenshot", browser_screenshot(ScreenshotParams) -> ScreenshotReply, read_only: true, destructive: false, Tab,
        "PNG screenshot of the tab's viewport; with marks=true, numbered boxes over the visible interactive elements and their listing.";
    BrowserClick => "browser_click", browser_click(ClickParams) -> ActedReply, read_only: false, destructive: false, Tab,
        "Click the element of a ref (real mouse events), after re-proving the binding, tab, frame and node.";
    BrowserType => "browser_type", browser_type(TypeParams) -> ActedReply, read_only: false, destructive: false, Tab,
        "Type text into the element of a ref (key events; \\n is Enter). overwrite=true clears it first.";
    BrowserSelect => "browser_select", browser_select(SelectParams) -> SelectReply, read_only: false, destructive: false, Tab,
        "Choose an option (by its label or value) of the select of a ref; fires input and change.";
    BrowserScroll => "browser_scroll", browser_scroll(ScrollParams) -> ScrollReply, read_only: false, destructive: false, Tab,
        "Scroll with the mouse wheel: over the element of a ref (its scroll container), else the page.";
    BrowserPressKey => "browser_press_key", browser_press_key(KeyParams) -> ActedReply, read_only: false, destructive: false, Tab,
        "Press a key or chord (Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Space, one character, or a chord like Control+A, Shift+Enter) on the element of ref (focused first), else on whatever has focus. Real key events with key, code, text and modifiers.";
    BrowserDrag => "browser_drag", browser_drag(DragParams) -> ActedReply, read_only: false, destructive: false, Tab,
        "Drag the element of a ref with real pointer events along a path (sliders, sortable lists, kanban boards; HTML5 drag and drop too) and drop it on the element of to_ref, or dx/dy CSS pixels away.";
    BrowserNavigateBack => "browser_navigate_back", browser_navigate_back(HistoryParams) -> ActedReply, read_only: false, destructive: true, Tab,
        "Go back to the previous page of the tab's history (as the browser's Back button); navigation_failed when there is none. Invalidates the tab's snapshots when it navigates.";
    BrowserNavigateForward => "browser_navigate_forward", browser_navigate_forward(HistoryParams) -> ActedReply, read_only: false, destructive: true, Tab,
        "Go forward to the next page of the tab's history; navigation_failed when there is none.";
    GetState => "get_state", get_state(GetStateParams) -> StateReply, read_only: true, destructive: false, Tab,
        "The element-index protocol's State Object of the tab (url, page_content, element_index, screenshot, state_hash). mark_new=true marks elements new since the previous state with * in page_content.";
    SaveStorageState => "save_storage_state", save_storage_state(SaveParams) -> sightline_browser::StorageState, read_only: true, destructive: false, Session,
        "The session's cookies and localStorage as Playwright's storageState JSON ({cookies, origins}), to start a later session from (bind_browser storage_state, --storage-state FILE). localStorage is read for the origins of the open tabs and those the session started with. The values are secrets: keep them so.";
    Act => "act", act(ActParams) -> StateReply, read_only: false, destructive: false, Tab,
        "Send one element-index protocol action (click_element, input_text, select_option, scroll, navigate, finish_task, fail_task) and get the next State Object; errors come back inside it.";
    UploadFile => "upload_file", upload_file(UploadParams) -> UploadReply, read_only: false, destructive: false, Tab,
        "Choose files for the file input of a ref (or for the input whose file chooser a click on the ref's element opened). paths are names inside the operator's upload directory (--files DIR); anything else is refused with file_refused.";
    ListDownloads => "list_downloads", list_downloads(ListDownloadsParams) -> DownloadsReply, read_only: true, destructive: false, Target,
        "The session's downloads: name (in the operator's download directory), bytes, state (in_progress, done, failed) and why it failed (e.g. larger than the size limit).";
    Run => "run", run(RunParams) -> RunReply, read_only: false, destructive: false, Tab,
        "Run JavaScript (the body of an async function; return gives the value) or a batch of ref actions in a sandbox with no file, network or process access, against this tab. browser.find({role, name, near}) gives matching refs best first; click(ref), type(ref, text, {overwrite}), select(ref, option), press(key, ref?), drag(ref, toRef | {dx, dy}), scroll(direction, {ref, pixels}), hover(ref), goto(url), back(), forward(), wait(ms | text | {text|gone|url}), state(), snapshot(opts), url(), tabs(), and the Set-of-Marks mark(), clickMark(id), typeMark(id, text). Every call is proved and fails with the single tools' typed errors. Answers the value, console, the actions performed with their outcomes, and the State Object after (result: state | snapshot | none). Limits: timeout_s, memory_mb, max_steps.";
    GetScript => "get_script", get_script(ScriptParams) -> ScriptReply, read_only: true, destructive: false, Session,
        "What the session did so far, as a run script that finds each target again by role, name and place (not by index or ref); replaying it with run or `sightline script FILE --url URL` stops with a typed drift error at a step whose target is missing, ambiguous or changed.";
    RequestHuman => "request_human", request_human(RequestHumanParams) -> RequestHumanReply, read_only: false, destructive: false, Tab,
        "Hand the tab to a person where only a person can go on (a login with a second factor, a CAPTCHA, a consent screen): the session is parked at once and the reply's live_url opens a live view of the page (no other credential; single session; expires) where the person clicks and types, then presses Hand back with an optional note. While parked, actions answer handed_over and change nothing; reads still work. Then call wait_for_human. Needs `sightline serve` (else live_unavailable).";
    WaitForHuman => "wait_for_human", wait_for_human(WaitHumanParams) -> WaitHumanReply, read_only: false, destructive: false, Session,
        "Wait until the person hands back (at once if they already did): their note, the pages they visited, how many inputs they sent, and a fresh State Object of the tab. After timeout_s (default 300) human_timeout, and the session stays handed over: wait again or cancel_human.";
    CancelHuman => "cancel_human", cancel_human(CancelHumanParams) -> CancelHumanReply, read_only: false, destructive: false, Session,
        "Take the session back from the person (the live link stops working) or drop a hand-back not collected yet; was says who held it.";
}

impl Reply for sightline_browser::StorageState {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn act_publishes_every_action_with_its_fields() {
        let act = TOOLS.iter().find(|t| t.name == "act").unwrap();
        let schema = (act.schema)();
        let one_of = schema["properties"]["action"]["oneOf"].as_array().expect("oneOf");
        assert_eq!(one_of.len(), crate::ACTION_TABLE.len());
        let press = one_of.iter().find(|a| a["properties"]["action"]["const"] == "press_key").unwrap();
        assert_eq!(press["required"], serde_json::json!(["action", "key"]));
        assert_eq!(press["additionalProperties"], false);
    }

    #[test]
    fn the_table_and_the_names_agree() {
        assert_eq!(TOOLS.len(), ToolName::ALL.len());
        for (i, t) in TOOLS.iter().enumerate() {
            assert_eq!(t.id as usize, i);
            assert_eq!(t.id.as_str(), t.name);
            assert_eq!(t.name.parse::<ToolName>().unwrap(), t.id);
            assert_eq!(t.id.tool().name, t.name);
            assert!(!(t.read_only && t.destructive), "{}: read-only tools destroy nothing", t.name);
            let schema = (t.schema)();
            let props = schema["properties"].as_object().unwrap();
            assert_eq!(props.contains_key("target_id"), t.scope >= Scope::Target, "{}", t.name);
            assert_eq!(props.contains_key("tab_id"), t.scope == Scope::Tab, "{}", t.name);
        }
        assert_eq!("nope".parse::<ToolName>().unwrap_err().code, ToolCode::UnknownTool);
    }

    #[test]
    fn every_name_dispatches_to_its_typed_method() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let api = Api::new(ApiOptions::default());
        rt.block_on(async {
            for t in TOOLS {
                // Params are decoded into the method's own type first.
                let e = api.dispatch(t.name, serde_json::json!({ "no_such_field": 1 })).await.unwrap_err();
                assert_eq!(e.code, ToolCode::InvalidParams, "{}: {e}", t.name);
                // With a session no bind made, each method runs and answers for it
                // (bind_browser would start a browser: its method is the one that makes sessions).
                if t.id == ToolName::BindBrowser {
                    continue;
                }
                let e = api.dispatch(t.name, full_params(t)).await.unwrap_err();
                // upload_file checks the paths against the operator's directory (none here) first.
                let want = if t.id == ToolName::UploadFile { ToolCode::FileRefused } else { ToolCode::SessionNotFound };
                assert_eq!(e.code, want, "{}: {e}", t.name);
            }
            let e = api.dispatch("nope", Value::Null).await.unwrap_err();
            assert_eq!(e.code, ToolCode::UnknownTool);
        });
    }

    /// Params every tool accepts, for a session that does not exist.
    fn full_params(t: &Tool) -> Value {
        let schema = (t.schema)();
        let mut args = serde_json::Map::new();
        for f in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            let v = match f {
                "paths" => serde_json::json!(["a.txt"]),
                "action" => serde_json::json!({ "action": "finish_task", "message": "done" }),
                "session" => serde_json::json!("nobody"),
                "target_id" => serde_json::json!("bt-abc-1"),
                "tab_id" => serde_json::json!("tab-abc-2"),
                "ref" => serde_json::json!("p3:1"),
                "url" => serde_json::json!("https://example.com/"),
                "text" => serde_json::json!("x"),
                "direction" => serde_json::json!("down"),
                _ => serde_json::json!("Enter"),
            };
            args.insert(f.to_string(), v);
        }
        Value::Object(args)
    }
}
