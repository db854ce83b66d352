//! `sightline rpc`: the tool API as JSON-RPC 2.0 over stdio, one message per
//! line (`sightline mcp` runs on rmcp; see `mcp.rs`).
//!
//! Method names are the tool names, answered by [`Api::dispatch`]; `list_tools`
//! lists them with their input schemas. Tool errors are JSON-RPC errors whose
//! `data.code` is the stable code string (`capability_expired`,
//! `browser_action_unavailable`, …).
//!
//! Requests are answered in order; notifications (no `id`) get no answer. The
//! process and its sessions survive any malformed line: a line longer than
//! `MAX_LINE_BYTES` (discarded as it arrives, never buffered whole), not UTF-8,
//! holding a NUL byte, or nested too deeply gets a -32700 parse error and the
//! loop goes on.

use serde_json::{json, Value};
use sightline_api::LineReader;
use sightline_api::{Api, ToolError};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt, BufReader};

/// A protocol-level error (not a tool failure).
struct RpcError {
    code: i64,
    message: String,
    data: Value,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: Value::Null }
    }
}

impl From<ToolError> for RpcError {
    fn from(e: ToolError) -> Self {
        RpcError {
            code: e.code.rpc_code(),
            message: e.message.clone(),
            data: json!({ "code": e.code, "detail": e.detail }),
        }
    }
}

/// Serve the tools over stdin/stdout until EOF, then shut the API down.
pub async fn serve_stdio(api: Api) -> std::io::Result<()> {
    serve(&api, BufReader::new(tokio::io::stdin()), tokio::io::stdout()).await
}

/// Serve the tools over `input`/`output` until EOF, then shut the API down.
pub async fn serve<R, W>(api: &Api, input: R, mut out: W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = LineReader::new(input);
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
                        let result = call(api, &method, params).await;
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

/// One method: `list_tools`, or a tool by name.
async fn call(api: &Api, method: &str, params: Value) -> Result<Value, RpcError> {
    if method == "list_tools" {
        let tools: Vec<Value> = api
            .tools()
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "read_only": t.read_only, "input_schema": (t.schema)() }))
            .collect();
        return Ok(json!({ "tools": tools }));
    }
    let out = api.dispatch(method, params).await?;
    let mut v = out.value;
    if let Some(png) = out.image {
        v["image"] = json!({ "mime_type": "image/png", "data": png });
    }
    Ok(v)
}

fn error_reply(id: Value, e: RpcError) -> Value {
    let mut err = json!({ "code": e.code, "message": e.message });
    if !e.data.is_null() {
        err["data"] = e.data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": err })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replies `serve` writes for `input`, one JSON value per line.
    async fn replies(input: &str) -> Vec<Value> {
        let api = Api::new(sightline_api::ApiOptions::default());
        let mut out = Vec::new();
        serve(&api, input.as_bytes(), &mut out).await.unwrap();
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[tokio::test]
    async fn framing_survives_bad_lines_and_answers_in_order() {
        let r = replies(concat!(
            "not json\n",
            "\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"list_tools\"}\n",
            "{\"id\":7,\"method\":\"list_tools\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"list_tools\"}\n",
        ))
        .await;
        assert_eq!(r.len(), 3, "a blank line and a notification get no answer: {r:?}");
        assert_eq!((r[0]["id"].clone(), r[0]["error"]["code"].clone()), (Value::Null, json!(-32700)));
        assert_eq!((r[1]["id"].clone(), r[1]["error"]["code"].clone()), (json!(7), json!(-32600)));
        assert_eq!(r[2]["id"], 8);
        let tools = r[2]["result"]["tools"].as_array().unwrap();
        assert!(tools.iter().any(|t| t["name"] == "get_browser_state" && t["input_schema"].is_object()), "{tools:?}");
    }
}
