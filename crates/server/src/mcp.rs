//! The tools as an MCP server on the official Rust SDK (`rmcp`), for both
//! transports and two protocol eras.
//!
//! - **2025-11-25 and earlier** (an `initialize` handshake, MCP sessions):
//!   over stdio (`sightline mcp`) the table's tools over one [`Api`] with
//!   named driver sessions (`bind_browser {session}`), as `rpc` has them; over
//!   Streamable HTTP at `/mcp` one MCP session is one Sightline session of the
//!   [`Hub`], owned by the principal whose token opened it (the router keeps
//!   other principals off the MCP session, and every call here checks the
//!   caller again).
//! - **2026-07-28** (stateless: `server/discover`, every request carries its
//!   own `_meta`, no MCP session): a session is an explicit handle.
//!   `session_open` returns `{session}` and every session-scoped tool takes it
//!   ([`handles`]); `bind_browser` and `end_session` give way to
//!   `session_open` and `session_close`.
//!
//! The handle tools serve older clients too. rmcp picks the era per request
//! (a request whose `_meta` names 2026-07-28, or a connection opened with
//! `server/discover`); [`View`] is what this module makes of it.
//!
//! rmcp runs each request on its own task, so calls are concurrent (calls on
//! one driver session still queue on its lock). `notifications/cancelled` (or,
//! over stateless HTTP, a closed response stream) cancels the request's token,
//! which drops the tool's future: the browser stays where the action left it.
//! A call that carries a progress token gets `notifications/progress` every
//! half second while it runs.

mod handles;
mod stdio;

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverResult, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use sightline_api::{Api, Tool, ToolCode, ToolError, ToolName, ToolOutput};

pub use handles::{Handle, HandleError, HandleTool, HANDLE_TOOLS};
pub use stdio::{serve_io, serve_stdio};

use crate::auth::Principal;
use crate::error::{EndReason, ServerError};
use crate::hub::{Hub, NewSession, Session};

const INSTRUCTIONS_STDIO: &str = "Bind a browser with bind_browser {session}, then read pages with get_browser_state (snapshot_format semantic_v2) and act on refs with browser_click / browser_type / browser_select. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired. Sessions can also be handles: session_open returns {session, target_id, tab_id} to pass to every tool; session_close ends one, session_list lists yours.";
const INSTRUCTIONS_HTTP: &str = "This MCP session is one browser session with one tab, already open: no bind_browser needed, and session, target_id and tab_id may be left out. Read pages with get_browser_state (snapshot_format semantic_v2) or get_state, act on refs with browser_click / browser_type / browser_select, or send element-index actions with act. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired. More sessions: session_open returns a handle to pass as session; session_close ends one, session_list lists yours.";
const INSTRUCTIONS_HANDLES: &str = "Open a browser session with session_open {url?, viewport?, storage_state?, screenshot?}: it returns {session}. Every other tool takes that handle as session (target_id and tab_id default to the session's first tab); refs, snapshots and continuations are valid only with their session. session_close ends it, session_list lists yours. Read pages with get_browser_state (snapshot_format semantic_v2) or get_state, act on refs with browser_click / browser_type / browser_select, or send element-index actions with act. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired.";

/// What a request is served with: the transport and the protocol era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// stdio before 2026-07-28: the table as `rpc` has it (named driver
    /// sessions from bind_browser, `session`, `target_id` and `tab_id`
    /// required), and the handle tools (a handle also goes in `session`).
    Named,
    /// Streamable HTTP before 2026-07-28: the MCP session's own Sightline
    /// session is implied; `session` (a handle) is optional, and `target_id`
    /// and `tab_id` default to the session's tab.
    Implied,
    /// 2026-07-28, both transports: every session-scoped tool takes a handle;
    /// `target_id` and `tab_id` default to its first tab.
    Handles,
}

impl View {
    /// Whether the table's tool is offered in this view.
    fn offers(self, t: &Tool) -> bool {
        self != View::Handles || !matches!(t.id, ToolName::BindBrowser | ToolName::EndSession)
    }
}

/// The MCP `Tool` for one row of the table, its annotations the table's
/// (`read_only`, `destructive`), its address fields as the view takes them.
fn mcp_tool(t: &Tool, view: View) -> Value {
    let mut schema = (t.schema)();
    let session = match view {
        View::Named => "A driver session name given to bind_browser, or a handle session_open returned.",
        View::Implied => "A handle session_open returned; default: this MCP session's own browser session.",
        View::Handles => "The handle session_open returned.",
    };
    if let Some(p) = schema["properties"].as_object_mut() {
        p.insert("session".into(), json!({ "type": "string", "description": session }));
        if view != View::Named {
            for f in ["target_id", "tab_id"] {
                if let Some(d) = p.get_mut(f).and_then(Value::as_object_mut) {
                    let about = d.get("description").and_then(Value::as_str).unwrap_or("").to_string();
                    let about = format!("{} Default: the session's first tab.", about.trim()).trim().to_string();
                    d.insert("description".into(), json!(about));
                }
            }
        }
    }
    if let Some(r) = schema["required"].as_array_mut() {
        r.retain(|f| match f.as_str() {
            Some("session") => view != View::Implied,
            Some("target_id" | "tab_id") => view == View::Named,
            _ => true,
        });
    }
    json!({
        "name": t.name,
        "description": t.description,
        "inputSchema": schema,
        "outputSchema": (t.output_schema)(),
        "annotations": annotations(t.read_only, t.destructive),
    })
}

/// The MCP `Tool` for a handle tool.
fn mcp_handle_tool(h: &HandleTool) -> Value {
    json!({
        "name": h.name,
        "description": h.description,
        "inputSchema": (h.schema)(),
        "outputSchema": (h.output_schema)(),
        "annotations": annotations(h.read_only, h.destructive),
    })
}

fn annotations(read_only: bool, destructive: bool) -> Value {
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": read_only,
        "openWorldHint": true,
    })
}

/// Every tool a view offers: the handle tools first, then the table's rows.
fn tool_list(view: View) -> Vec<Value> {
    let handles = HANDLE_TOOLS.iter().map(mcp_handle_tool);
    let table = sightline_api::TOOLS.iter().filter(|t| view.offers(t)).map(|t| mcp_tool(t, view));
    handles.chain(table).collect()
}

/// A tool's output as an MCP result: JSON text + structured content, and the image.
fn result_of(out: Result<ToolOutput, ToolError>) -> Value {
    match out {
        Ok(out) => {
            let mut content = vec![json!({ "type": "text", "text": out.value.to_string() })];
            if let Some(png) = out.image {
                content.push(json!({ "type": "image", "data": png, "mimeType": "image/png" }));
            }
            // rmcp drops `resultType` for a peer older than 2026-07-28.
            json!({ "content": content, "structuredContent": out.value, "isError": false, "resultType": "complete" })
        }
        Err(e) => json!({
            "content": [{ "type": "text", "text": format!("{}: {}", e.code, e.message) }],
            "structuredContent": { "error": { "code": e.code, "message": e.message, "detail": e.detail } },
            "isError": true,
            "resultType": "complete",
        }),
    }
}

/// A tool by name: a handle tool or a row of the table.
#[derive(Debug, Clone, Copy)]
enum Call {
    Handle(Handle),
    Table(ToolName),
}

impl Call {
    /// The tool `name` names, if the view offers it.
    fn parse(name: &str, view: View) -> Option<Call> {
        if let Some(h) = Handle::parse(name) {
            return Some(Call::Handle(h));
        }
        let t = name.parse::<ToolName>().ok()?;
        view.offers(t.tool()).then_some(Call::Table(t))
    }
}

enum Backend {
    /// stdio: named driver sessions over one Api, and handles on a hub of their own.
    Stdio { api: Arc<Api>, hub: Arc<Hub> },
    /// HTTP: the server's hub. An MCP session before 2026-07-28 also holds the
    /// hub session it opened at `initialize` (none at 2026-07-28).
    Http { hub: Arc<Hub>, own: OnceLock<Arc<Session>> },
}

/// The MCP server handler.
pub struct SightlineMcp {
    backend: Backend,
    /// Where the server's live views are (`request_human`'s link); none over stdio.
    live_base: Option<String>,
}

impl SightlineMcp {
    /// stdio: the table over one [`Api`], handles on `hub`.
    pub fn over_stdio(api: Arc<Api>, hub: Arc<Hub>) -> SightlineMcp {
        SightlineMcp { backend: Backend::Stdio { api, hub }, live_base: None }
    }

    /// Streamable HTTP: one hub session per MCP session before 2026-07-28, handles on the hub.
    pub fn over_hub(hub: Arc<Hub>) -> SightlineMcp {
        SightlineMcp { backend: Backend::Http { hub, own: OnceLock::new() }, live_base: None }
    }

    /// Where the server's live views are, for the links `request_human` answers.
    pub fn with_live_base(mut self, base: Option<String>) -> SightlineMcp {
        self.live_base = base;
        self
    }

    fn hub(&self) -> &Arc<Hub> {
        match &self.backend {
            Backend::Stdio { hub, .. } | Backend::Http { hub, .. } => hub,
        }
    }

    /// The view of a request: its protocol era (rmcp's per request), then the transport.
    fn view(&self, context: &RequestContext<RoleServer>) -> View {
        let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        match (&self.backend, stateless) {
            (_, true) => View::Handles,
            (Backend::Stdio { .. }, false) => View::Named,
            (Backend::Http { .. }, false) => View::Implied,
        }
    }

    async fn run(&self, view: View, caller: &Principal, call: Call, args: Value) -> Result<ToolOutput, ToolError> {
        let tool = match call {
            Call::Handle(h) => return Box::pin(handles::call(self.hub(), caller, h, args)).await,
            Call::Table(tool) => tool,
        };
        let given = args.get("session").and_then(Value::as_str).map(str::to_string);
        match (&self.backend, given) {
            // Today's stdio: a name that is no handle is a driver session of the Api.
            (Backend::Stdio { api, hub }, Some(id)) if view == View::Named => {
                self.on_hub(hub, caller, &id, tool, args, Some(api)).await
            }
            (_, Some(id)) => self.on_hub(self.hub(), caller, &id, tool, args, None).await,
            (Backend::Http { hub, own }, None) if view == View::Implied => {
                let Some(s) = own.get() else {
                    return Err(ToolError::new(ToolCode::SessionNotFound, "initialize the MCP session first"));
                };
                self.on_hub(hub, caller, &s.id, tool, args, None).await
            }
            (_, None) => Err(HandleError::Missing { tool: tool.to_string(), open: self.hub().ids(caller) }.into()),
        }
    }

    /// A table tool on hub session `id` of `caller`; an id the hub does not
    /// know goes to `named` when there is one (stdio's driver sessions).
    async fn on_hub(
        &self,
        hub: &Arc<Hub>,
        caller: &Principal,
        id: &str,
        tool: ToolName,
        args: Value,
        named: Option<&Arc<Api>>,
    ) -> Result<ToolOutput, ToolError> {
        let entered = match (hub.enter(caller, id), named) {
            (Ok(entered), _) => entered,
            (Err(ServerError::SessionNotFound { .. }), Some(api)) => return api.call(tool, args).await,
            (Err(ServerError::SessionNotFound { .. }), None) => {
                return Err(HandleError::NotYours { given: id.to_string(), open: hub.ids(caller) }.into())
            }
            (Err(e), _) => return Err(e.into_tool_error()),
        };
        if let Some(b) = &self.live_base {
            entered.api().set_live_base(b);
        }
        let out = match tool {
            ToolName::EndSession => {
                drop(entered);
                hub.end(caller, id, EndReason::Deleted).await.map_err(ServerError::into_tool_error)?;
                let reply = sightline_api::EndReply { status: sightline_api::Status::Ok, session: id.to_string() };
                return sightline_api::Reply::into_output(reply);
            }
            ToolName::Act => entered.act_tool(&hub.metrics, args).await,
            _ => entered.tool(&hub.metrics, tool.as_str(), args).await,
        };
        match out {
            Ok(out) => Ok(out),
            Err(e) => Err(hub.classify(&entered, e).await.into_tool_error()),
        }
    }

    fn info(&self, instructions: &str) -> ServerConfig {
        decode(json!({
            "protocolVersion": ProtocolVersion::V_2025_11_25,
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": "sightline", "version": env!("CARGO_PKG_VERSION") },
            "instructions": instructions,
        }))
        .expect("a valid ServerConfig")
    }
}

impl Drop for SightlineMcp {
    fn drop(&mut self) {
        // The MCP session closed (DELETE /mcp, expiry, server stop): end its Sightline session.
        if let Backend::Http { hub, own } = &self.backend {
            if let Some(s) = own.get() {
                if !s.is_ended() {
                    let (hub, id, owner) = (hub.clone(), s.id.clone(), s.owner.clone());
                    if let Ok(rt) = tokio::runtime::Handle::try_current() {
                        rt.spawn(async move {
                            let _ = hub.end(&owner, &id, EndReason::Deleted).await;
                        });
                    }
                }
            }
        }
    }
}

/// The principal the HTTP guard found for this request (rmcp passes the
/// request's HTTP parts along); over stdio, and for a request without one, the
/// anonymous principal.
fn caller_of(context: &RequestContext<RoleServer>) -> Principal {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>().cloned())
        .unwrap_or_else(Principal::anonymous)
}

fn decode<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, McpError> {
    serde_json::from_value(v).map_err(|e| McpError::internal_error(format!("building an MCP message: {e}"), None))
}

impl ServerHandler for SightlineMcp {
    /// What `initialize` answers (eras before 2026-07-28).
    fn get_info(&self) -> ServerConfig {
        match self.backend {
            Backend::Stdio { .. } => self.info(INSTRUCTIONS_STDIO),
            Backend::Http { .. } => self.info(INSTRUCTIONS_HTTP),
        }
    }

    /// Every revision up to 2026-07-28: `initialize` agrees on 2025-11-25 at most, `server/discover` offers all.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    /// `server/discover` (2026-07-28): the revisions, and the instructions of the handle view.
    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let versions = self.supported_protocol_versions().into_owned();
        Ok(DiscoverResult::from_server_info(versions, self.info(INSTRUCTIONS_HANDLES)))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        if let Backend::Http { hub, own } = &self.backend {
            if own.get().is_none() {
                let screenshot = true;
                match hub
                    .create(
                        &caller_of(&context),
                        NewSession { url: None, viewport: None, screenshot, storage_state: None },
                    )
                    .await
                {
                    Ok((s, _)) => {
                        let _ = own.set(s);
                    }
                    Err(e) => return Err(McpError::internal_error(e.to_string(), Some(e.body()))),
                }
            }
        }
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // rmcp fills the caching hints for 2026-07-28 and drops `resultType` for older peers.
        decode(json!({ "tools": tool_list(self.view(&context)), "resultType": "complete" }))
    }

    /// A tool's schema for rmcp's `Mcp-Param-*` header check, which only
    /// 2026-07-28 requests carry: the handle view.
    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let tool = match Call::parse(name, View::Handles)? {
            Call::Handle(h) => mcp_handle_tool(h.tool()),
            Call::Table(t) => mcp_tool(t.tool(), View::Handles),
        };
        decode(tool).ok()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let view = self.view(&context);
        let Some(call) = Call::parse(&name, view) else {
            return Err(McpError::invalid_params(format!("unknown tool {name:?}"), None));
        };
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let reason = (name == "request_human").then(|| args["reason"].as_str().unwrap_or_default().to_string());
        let ticker = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            let name = name.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                for step in 0u32.. {
                    let note = json!({
                        "progressToken": token,
                        "progress": step,
                        "message": format!("{name}: running for {} ms", started.elapsed().as_millis()),
                    });
                    if let Ok(p) = serde_json::from_value::<ProgressNotificationParam>(note) {
                        if peer.notify_progress(p).await.is_err() {
                            return;
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            })
        });
        let caller = caller_of(&context);
        let out = tokio::select! {
            out = self.run(view, &caller, call, args) => out,
            _ = context.ct.cancelled() => Err(ToolError::new(ToolCode::Cancelled, format!("{name} was cancelled by the client"))),
        };
        if let Some(t) = ticker {
            t.abort();
        }
        if let (Some(reason), Ok(o)) = (reason, &out) {
            offer_link(&context, &reason, &o.value);
        }
        let result: CallToolResult = decode(result_of(out))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// URL-mode elicitation (MCP 2025-11-25): a client that declared it is asked to
/// show `request_human`'s live link to its user. Sent beside the tool's answer
/// (the tool does not wait for the person); whatever the client answers changes
/// nothing here: `wait_for_human` reports the hand-back. Not on 2026-07-28, which
/// has no server-to-client requests.
fn offer_link(context: &RequestContext<RoleServer>, reason: &str, reply: &Value) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let Some(url) = reply["live_url"].as_str() else { return };
    let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if stateless || !context.peer.supported_elicitation_modes().contains(&rmcp::service::ElicitationMode::Url) {
        return;
    }
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let params = json!({
        "mode": "url",
        "message": format!("The agent hands you the browser: {reason}. Open the link, act on the page, then press Hand back."),
        "url": url,
        "elicitationId": format!("sightline-live-{n}"),
    });
    let Ok(params) = decode::<rmcp::model::ElicitRequestParams>(params) else { return };
    let peer = context.peer.clone();
    tokio::spawn(async move {
        match peer.create_elicitation(params).await {
            Ok(r) => tracing::debug!(action = ?r.action, "the client showed the live link"),
            Err(e) => tracing::debug!(error = %e, "the client did not show the live link"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tools_annotations_are_the_tables() {
        for view in [View::Named, View::Implied, View::Handles] {
            let list = tool_list(view);
            for t in sightline_api::TOOLS {
                let Some(m) = list.iter().find(|m| m["name"] == t.name) else {
                    assert!(!view.offers(t), "{view:?} lacks {}", t.name);
                    continue;
                };
                assert_eq!(m["annotations"]["readOnlyHint"], t.read_only, "{}", t.name);
                assert_eq!(m["annotations"]["destructiveHint"], t.destructive, "{}", t.name);
                assert_eq!(m["annotations"]["idempotentHint"], t.read_only, "{}", t.name);
            }
            for m in &list {
                let tool = decode::<rmcp::model::Tool>(m.clone());
                assert!(tool.is_ok(), "{} is a valid MCP tool", m["name"]);
                // An object root: rmcp drops any other output schema for a peer older than 2026-07-28.
                let output = tool.unwrap().output_schema.expect("every tool publishes its output schema");
                assert_eq!(output.get("type"), Some(&json!("object")), "{}", m["name"]);
            }
            let names: Vec<&str> = list.iter().filter_map(|m| m["name"].as_str()).collect();
            assert_eq!(names[..3], ["session_open", "session_close", "session_list"], "{view:?}");
        }
        let destructive: Vec<&str> = sightline_api::TOOLS.iter().filter(|t| t.destructive).map(|t| t.name).collect();
        assert_eq!(
            destructive,
            [
                "bind_browser",
                "end_session",
                "close_tab",
                "browser_navigate",
                "browser_navigate_back",
                "browser_navigate_forward"
            ]
        );
    }

    /// Which address fields each view requires: stdio's named sessions all
    /// three, HTTP's implied session none, a 2026-07-28 handle `session` only.
    #[test]
    fn each_view_requires_the_address_it_needs() {
        let required = |view: View, name: &str| -> Vec<String> {
            let t = name.parse::<ToolName>().unwrap().tool();
            let m = mcp_tool(t, view);
            assert!(m["inputSchema"]["properties"]["session"].is_object(), "{view:?} {name}");
            let r = m["inputSchema"]["required"].as_array().cloned().unwrap_or_default();
            r.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
        };
        assert_eq!(required(View::Named, "browser_click"), ["session", "target_id", "tab_id", "ref"]);
        assert_eq!(required(View::Implied, "browser_click"), ["ref"]);
        assert_eq!(required(View::Handles, "browser_click"), ["session", "ref"]);
        assert_eq!(required(View::Handles, "list_tabs"), ["session"]);
        let handles: Vec<Value> = tool_list(View::Handles);
        assert!(!handles.iter().any(|m| m["name"] == "bind_browser" || m["name"] == "end_session"));
        assert!(Call::parse("bind_browser", View::Handles).is_none());
        assert!(matches!(Call::parse("bind_browser", View::Named), Some(Call::Table(ToolName::BindBrowser))));
        assert!(matches!(Call::parse("session_open", View::Implied), Some(Call::Handle(Handle::Open))));
    }
}
