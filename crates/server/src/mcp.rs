//! The tools as an MCP server on the official Rust SDK (`rmcp`), for both
//! transports: stdio (`sightline mcp`, over one [`Api`] with named driver
//! sessions) and Streamable HTTP at `/mcp` (one MCP session = one Sightline
//! session of the [`Hub`], owned by the principal whose token opened it; the
//! router keeps other principals off the MCP session, and every call here
//! checks the caller again).
//!
//! rmcp runs each request on its own task, so calls are concurrent (calls on
//! one driver session still queue on its lock). `notifications/cancelled`
//! cancels the request's token, which drops the tool's future: the browser
//! stays where the action left it. A call that carries a progress token gets
//! `notifications/progress` every half second while it runs.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use sightline_api::{Api, Tool, ToolError, ToolOutput};

use crate::auth::Principal;
use crate::error::{EndReason, ServerError};
use crate::hub::{Hub, NewSession, Session};

const INSTRUCTIONS_STDIO: &str = "Bind a browser with bind_browser {session}, then read pages with get_browser_state (snapshot_format semantic_v2) and act on refs with browser_click / browser_type / browser_select. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired.";
const INSTRUCTIONS_HTTP: &str = "This MCP session is one browser session with one tab, already open: no bind_browser needed, and session, target_id and tab_id may be left out. Read pages with get_browser_state (snapshot_format semantic_v2) or get_state, act on refs with browser_click / browser_type / browser_select, or send element-index actions with act. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired.";

/// Tools that destroy something or leave the page: close_tab, end_session, and navigation.
fn destructive(name: &str) -> bool {
    matches!(name, "close_tab" | "end_session" | "browser_navigate" | "bind_browser")
}

/// The MCP `Tool` for one entry of the tool table. Over HTTP the session is
/// implied, so `session` goes and `target_id` / `tab_id` become optional.
fn mcp_tool(t: &Tool, implied_session: bool) -> Value {
    let mut schema = (t.schema)();
    if implied_session {
        if let Some(p) = schema["properties"].as_object_mut() {
            p.remove("session");
        }
        if let Some(r) = schema["required"].as_array_mut() {
            r.retain(|f| !matches!(f.as_str(), Some("session" | "target_id" | "tab_id")));
        }
    }
    json!({
        "name": t.name,
        "description": t.description,
        "inputSchema": schema,
        "annotations": {
            "readOnlyHint": t.read_only,
            "destructiveHint": !t.read_only && destructive(t.name),
            "idempotentHint": t.read_only,
            "openWorldHint": true,
        },
    })
}

/// A tool's output as an MCP result: JSON text + structured content, and the image.
fn result_of(out: Result<ToolOutput, ToolError>) -> Value {
    match out {
        Ok(out) => {
            let mut content = vec![json!({ "type": "text", "text": out.value.to_string() })];
            if let Some(png) = out.image {
                content.push(json!({ "type": "image", "data": png, "mimeType": "image/png" }));
            }
            json!({ "content": content, "structuredContent": out.value, "isError": false })
        }
        Err(e) => json!({
            "content": [{ "type": "text", "text": format!("{}: {}", e.code, e.message) }],
            "structuredContent": { "error": { "code": e.code, "message": e.message, "detail": e.detail } },
            "isError": true,
        }),
    }
}

enum Backend {
    /// stdio: the whole vocabulary over one Api.
    Api(Arc<Api>),
    /// HTTP: one hub session, created at `initialize`.
    Hub { hub: Arc<Hub>, session: OnceLock<Arc<Session>> },
}

/// The MCP server handler.
pub struct SightlineMcp {
    backend: Backend,
}

impl SightlineMcp {
    /// Over one [`Api`] (stdio).
    pub fn over_api(api: Arc<Api>) -> SightlineMcp {
        SightlineMcp { backend: Backend::Api(api) }
    }

    /// One hub session per MCP session (Streamable HTTP).
    pub fn over_hub(hub: Arc<Hub>) -> SightlineMcp {
        SightlineMcp { backend: Backend::Hub { hub, session: OnceLock::new() } }
    }

    fn implied_session(&self) -> bool {
        matches!(self.backend, Backend::Hub { .. })
    }

    async fn run(&self, caller: &Principal, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        match &self.backend {
            Backend::Api(api) => api.dispatch(name, args).await,
            Backend::Hub { hub, session } => {
                let Some(s) = session.get() else {
                    return Err(ToolError::new(
                        sightline_api::ToolCode::SessionNotFound,
                        "initialize the MCP session first",
                    ));
                };
                let entered = hub.enter(caller, &s.id).map_err(ServerError::into_tool_error)?;
                if name == "end_session" {
                    drop(entered);
                    hub.end(caller, &s.id, EndReason::Deleted).await.map_err(ServerError::into_tool_error)?;
                    return Ok(ToolOutput::json(json!({ "status": "ok", "session": s.id })));
                }
                let started = Instant::now();
                let out = match entered.tool(&hub.metrics, name, args).await {
                    Ok(out) => out,
                    Err(e) => return Err(hub.classify(&entered, e).await.into_tool_error()),
                };
                if name == "act" {
                    let outcome = out.value["error"]["code"].as_str().unwrap_or("ok").to_string();
                    hub.metrics.action(&outcome, started.elapsed());
                }
                Ok(out)
            }
        }
    }
}

impl Drop for SightlineMcp {
    fn drop(&mut self) {
        // The MCP session closed (DELETE /mcp, expiry, server stop): end its Sightline session.
        if let Backend::Hub { hub, session } = &self.backend {
            if let Some(s) = session.get() {
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
    fn get_info(&self) -> ServerConfig {
        let instructions = if self.implied_session() { INSTRUCTIONS_HTTP } else { INSTRUCTIONS_STDIO };
        decode(json!({
            "protocolVersion": ProtocolVersion::V_2025_11_25,
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": "sightline", "version": env!("CARGO_PKG_VERSION") },
            "instructions": instructions,
        }))
        .expect("a valid ServerConfig")
    }

    /// Up to 2025-11-25: later revisions drop MCP sessions, and over HTTP an
    /// MCP session is what carries the Sightline session.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        if let Backend::Hub { hub, session } = &self.backend {
            if session.get().is_none() {
                let screenshot = true;
                match hub.create(&caller_of(&context), NewSession { url: None, viewport: None, screenshot }).await {
                    Ok((s, _)) => {
                        let _ = session.set(s);
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let implied = self.implied_session();
        let tools: Vec<Value> = sightline_api::TOOLS.iter().map(|t| mcp_tool(t, implied)).collect();
        decode(json!({ "tools": tools }))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let t = sightline_api::TOOLS.iter().find(|t| t.name == name)?;
        decode(mcp_tool(t, self.implied_session())).ok()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !sightline_api::TOOLS.iter().any(|t| t.name == name) {
            return Err(McpError::invalid_params(format!("unknown tool {name:?}"), None));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
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
            out = self.run(&caller, &name, args) => out,
            _ = context.ct.cancelled() => Err(ToolError::new(sightline_api::ToolCode::Cancelled, format!("{name} was cancelled by the client"))),
        };
        if let Some(t) = ticker {
            t.abort();
        }
        let result: CallToolResult = decode(result_of(out))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// `sightline mcp`: serve over stdin/stdout until the client closes them.
pub async fn serve_stdio(api: Api) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let api = Arc::new(api);
    let running = Box::pin(SightlineMcp::over_api(api.clone()).serve(rmcp::transport::stdio()))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let _ = running.waiting().await;
    api.shutdown().await;
    Ok(())
}
