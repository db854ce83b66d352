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
use sightline_api::{Api, Tool, ToolCode, ToolError, ToolName, ToolOutput};

use crate::auth::Principal;
use crate::error::{EndReason, ServerError};
use crate::hub::{Hub, NewSession, Session};

const INSTRUCTIONS_STDIO: &str = "Bind a browser with bind_browser {session}, then read pages with get_browser_state (snapshot_format semantic_v2) and act on refs with browser_click / browser_type / browser_select. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired.";
const INSTRUCTIONS_HTTP: &str = "This MCP session is one browser session with one tab, already open: no bind_browser needed, and session, target_id and tab_id may be left out. Read pages with get_browser_state (snapshot_format semantic_v2) or get_state, act on refs with browser_click / browser_type / browser_select, or send element-index actions with act. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired.";

/// The MCP `Tool` for one entry of the tool table, its annotations the
/// table's (`read_only`, `destructive`). Over HTTP the session is
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
            "destructiveHint": t.destructive,
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

    async fn run(&self, caller: &Principal, tool: ToolName, args: Value) -> Result<ToolOutput, ToolError> {
        match &self.backend {
            Backend::Api(api) => api.call(tool, args).await,
            Backend::Hub { hub, session } => {
                let Some(s) = session.get() else {
                    return Err(ToolError::new(ToolCode::SessionNotFound, "initialize the MCP session first"));
                };
                let entered = hub.enter(caller, &s.id).map_err(ServerError::into_tool_error)?;
                let out = match tool {
                    ToolName::EndSession => {
                        drop(entered);
                        hub.end(caller, &s.id, EndReason::Deleted).await.map_err(ServerError::into_tool_error)?;
                        let reply =
                            sightline_api::EndReply { status: sightline_api::Status::Ok, session: s.id.clone() };
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
                match hub
                    .create(
                        &caller_of(&context),
                        NewSession { url: None, viewport: None, screenshot, storage_state: None },
                    )
                    .await
                {
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
        let t = name.parse::<ToolName>().ok()?.tool();
        decode(mcp_tool(t, self.implied_session())).ok()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Ok(tool) = name.parse::<ToolName>() else {
            return Err(McpError::invalid_params(format!("unknown tool {name:?}"), None));
        };
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
            out = self.run(&caller, tool, args) => out,
            _ = context.ct.cancelled() => Err(ToolError::new(ToolCode::Cancelled, format!("{name} was cancelled by the client"))),
        };
        if let Some(t) = ticker {
            t.abort();
        }
        let result: CallToolResult = decode(result_of(out))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// `sightline mcp`: serve over stdin/stdout until the client closes them.
///
/// The lines are framed here, not by rmcp's stdio transport, so that every
/// line gets exactly one answer (JSON-RPC 2.0): each is read with
/// [`sightline_api::LineReader`] (4 MiB, the rest of a longer line discarded
/// as it arrives), and a line that is too long, not UTF-8, holds a NUL byte or
/// is not JSON is answered `-32700 Parse error` with `id: null`; JSON that is
/// no JSON-RPC message is `-32600 Invalid Request`; a request for a method we
/// serve whose params do not fit (`tools/call` without `name`) is `-32602
/// Invalid params` with its id. Everything else goes to rmcp as a parsed
/// message, and rmcp's replies and the ones written here share one writer, so
/// lines never interleave. Notifications get no answer, as JSON-RPC says.
pub async fn serve_stdio(api: Api) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let api = Arc::new(api);
    let (out_tx, out_rx) = tokio::sync::mpsc::channel::<String>(64);
    let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<rmcp::model::ClientJsonRpcMessage>(16);
    let writer = tokio::spawn(write_lines(out_rx, tokio::io::stdout()));
    let reader = tokio::spawn(read_lines(tokio::io::stdin(), in_tx, out_tx.clone()));
    let sink = Box::pin(futures_util::sink::unfold(out_tx, |tx, msg: rmcp::model::ServerJsonRpcMessage| async move {
        let line = serde_json::to_string(&msg).map_err(std::io::Error::other)?;
        tx.send(line).await.map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok::<_, std::io::Error>(tx)
    }));
    let stream = futures_util::stream::poll_fn(move |cx| in_rx.poll_recv(cx));
    let running = Box::pin(SightlineMcp::over_api(api.clone()).serve((sink, stream)))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let _ = running.waiting().await;
    reader.abort();
    api.shutdown().await;
    // Every reply queued before the end is written (the writer ends when the last sender goes).
    let _ = writer.await;
    Ok(())
}

/// Write each line (and a newline) to `out`, flushing after each, until every sender is gone.
async fn write_lines(
    mut lines: tokio::sync::mpsc::Receiver<String>,
    mut out: impl tokio::io::AsyncWrite + Unpin,
) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    while let Some(line) = lines.recv().await {
        out.write_all(line.as_bytes()).await?;
        out.write_all(b"\n").await?;
        out.flush().await?;
    }
    Ok(())
}

/// Read `input` line by line: messages go to rmcp, each line that is none gets its error on `out`.
async fn read_lines(
    input: impl tokio::io::AsyncRead + Unpin,
    to_rmcp: tokio::sync::mpsc::Sender<rmcp::model::ClientJsonRpcMessage>,
    out: tokio::sync::mpsc::Sender<String>,
) -> std::io::Result<()> {
    let mut lines = sightline_api::LineReader::new(tokio::io::BufReader::new(input));
    while let Some(line) = lines.next_line().await? {
        let answer = match line {
            Err(e) => Some(rpc_error(&Value::Null, -32700, &format!("Parse error: {e}"))),
            Ok(line) if line.trim().is_empty() => None,
            Ok(line) => match frame(&line) {
                Ok(msg) => {
                    if to_rmcp.send(msg).await.is_err() {
                        break;
                    }
                    None
                }
                Err(answer) => answer,
            },
        };
        if let Some(a) = answer {
            if out.send(a).await.is_err() {
                break;
            }
        }
    }
    Ok(())
}

/// Methods rmcp serves for us; a request for one of them whose params rmcp
/// cannot read would otherwise come back as "method not found".
const SERVED: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// One line as a message for rmcp, or the answer it gets instead (`None` for a
/// malformed notification, which gets none).
fn frame(line: &str) -> Result<rmcp::model::ClientJsonRpcMessage, Option<String>> {
    use rmcp::model::{ClientRequest, JsonRpcMessage};
    let value: Value =
        serde_json::from_str(line).map_err(|e| Some(rpc_error(&Value::Null, -32700, &format!("Parse error: {e}"))))?;
    let id = value.get("id").filter(|id| id.is_string() || id.is_number()).cloned();
    let msg = match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()) {
        Ok(msg) => msg,
        Err(e) => {
            if id.is_none() && value.get("method").is_some() {
                return Err(None);
            }
            let id = id.unwrap_or(Value::Null);
            return Err(Some(rpc_error(&id, -32600, &format!("Invalid Request: {e}"))));
        }
    };
    if let JsonRpcMessage::Request(r) = &msg {
        if let ClientRequest::CustomRequest(c) = &r.request {
            if SERVED.contains(&c.method.as_str()) {
                let why = params_error(&c.method, value.get("params").cloned().unwrap_or(Value::Null));
                let id = id.unwrap_or(Value::Null);
                return Err(Some(rpc_error(&id, -32602, &format!("Invalid params for {}: {why}", c.method))));
            }
        }
    }
    Ok(msg)
}

/// Why `params` do not fit `method`'s parameter type, in serde's words.
fn params_error(method: &str, params: Value) -> String {
    fn why<T: serde::de::DeserializeOwned>(params: Value) -> String {
        match serde_json::from_value::<T>(params) {
            Err(e) => e.to_string(),
            Ok(_) => "they do not fit the method".into(),
        }
    }
    match method {
        "initialize" => why::<InitializeRequestParams>(params),
        "tools/call" => why::<CallToolRequestParams>(params),
        "tools/list" => why::<Option<PaginatedRequestParams>>(params),
        _ => "they do not fit the method".into(),
    }
}

fn rpc_error(id: &Value, code: i64, message: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}

#[cfg(test)]
mod stdio_tests {
    use super::*;

    #[test]
    fn every_tools_annotations_are_the_tables() {
        for t in sightline_api::TOOLS {
            for implied in [false, true] {
                let m = mcp_tool(t, implied);
                assert_eq!(m["name"], t.name);
                assert_eq!(m["annotations"]["readOnlyHint"], t.read_only, "{}", t.name);
                assert_eq!(m["annotations"]["destructiveHint"], t.destructive, "{}", t.name);
                assert_eq!(m["annotations"]["idempotentHint"], t.read_only, "{}", t.name);
                assert!(decode::<rmcp::model::Tool>(m).is_ok(), "{} is a valid MCP tool", t.name);
            }
        }
        let destructive: Vec<&str> = sightline_api::TOOLS.iter().filter(|t| t.destructive).map(|t| t.name).collect();
        assert_eq!(destructive, ["bind_browser", "end_session", "close_tab", "browser_navigate"]);
    }

    fn answer(line: &str) -> Value {
        match frame(line) {
            Ok(_) => Value::Null,
            Err(a) => a.map(|a| serde_json::from_str(&a).unwrap()).unwrap_or(Value::Bool(false)),
        }
    }

    #[test]
    fn every_malformed_line_gets_one_typed_answer() {
        let a = answer("}{");
        assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32700), &Value::Null), "{a}");
        let a = answer(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#);
        assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32602), &json!(3)), "{a}");
        assert!(a["error"]["message"].as_str().unwrap().contains("name"), "{a}");
        let a = answer(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call"}"#);
        assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32602), &json!("x")), "{a}");
        let a = answer("[]");
        assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32600), &Value::Null), "{a}");
        let a = answer(r#"{"id":4}"#);
        assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32600), &json!(4)), "{a}");
        // Well-formed messages go to rmcp, whatever their method.
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tabs","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            assert!(frame(ok).is_ok(), "{ok}: {:?}", frame(ok).err());
        }
    }
}
