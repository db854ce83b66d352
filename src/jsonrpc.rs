//! JSON-RPC 2.0 over stdio, one message per line: the framing of `sightline rpc`
//! (`sightline mcp` runs on rmcp; see `mcp.rs`). Requests are answered in order;
//! notifications (no `id`) get no answer. The process and its sessions survive
//! any malformed line: a line longer than `MAX_LINE_BYTES` (discarded as it
//! arrives, never buffered whole), not UTF-8, holding a NUL byte, or nested
//! too deeply gets a -32700 parse error and the loop goes on.

use serde_json::{json, Value};
use sightline_api::LineReader;
use sightline_api::{Api, ToolError};
use tokio::io::{AsyncWriteExt, BufReader};

/// A protocol-level error (not a tool failure).
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Value,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: Value::Null }
    }
}

/// JSON-RPC error code for a tool error's stable code.
pub fn rpc_code(e: &ToolError) -> i64 {
    e.code.rpc_code()
}

impl From<ToolError> for RpcError {
    fn from(e: ToolError) -> Self {
        RpcError { code: rpc_code(&e), message: e.message.clone(), data: json!({ "code": e.code, "detail": e.detail }) }
    }
}

/// Serve `handle` over stdin/stdout until EOF, then shut the API down.
pub async fn serve<F>(api: &Api, mut handle: F) -> anyhow::Result<()>
where
    F: AsyncFnMut(&Api, &str, Value) -> Result<Value, RpcError>,
{
    let mut lines = LineReader::new(BufReader::new(tokio::io::stdin()));
    let mut out = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                let mut err = RpcError::new(-32700, format!("parse error: {e}"));
                err.data = json!({ "code": "invalid_params" });
                let r = error_reply(Value::Null, err);
                out.write_all(format!("{r}\n").as_bytes()).await?;
                out.flush().await?;
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Err(e) => Some(error_reply(Value::Null, RpcError::new(-32700, format!("parse error: {e}")))),
            Ok(msg) => {
                let id = msg.get("id").cloned();
                let method = msg.get("method").and_then(Value::as_str).map(str::to_string);
                match (msg.get("jsonrpc").and_then(Value::as_str), method) {
                    (Some("2.0"), Some(method)) => {
                        let params = msg.get("params").cloned().unwrap_or(Value::Null);
                        let result = handle(api, &method, params).await;
                        id.map(|id| match result {
                            Ok(v) => json!({ "jsonrpc": "2.0", "id": id, "result": v }),
                            Err(e) => error_reply(id, e),
                        })
                    }
                    _ if msg.get("result").is_some() || msg.get("error").is_some() => None,
                    _ => Some(error_reply(
                        id.unwrap_or(Value::Null),
                        RpcError::new(-32600, "invalid request: expected jsonrpc \"2.0\" and a method"),
                    )),
                }
            }
        };
        if let Some(r) = reply {
            out.write_all(r.to_string().as_bytes()).await?;
            out.write_all(b"\n").await?;
            out.flush().await?;
        }
    }
    api.shutdown().await;
    Ok(())
}

fn error_reply(id: Value, e: RpcError) -> Value {
    let mut err = json!({ "code": e.code, "message": e.message });
    if !e.data.is_null() {
        err["data"] = e.data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": err })
}
