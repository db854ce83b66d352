//! `sightline mcp`: the MCP server over stdin/stdout, with our own line framing.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, InitializeRequestParams, PaginatedRequestParams};
use serde_json::{json, Value};
use sightline_api::Api;

use super::SightlineMcp;
use crate::hub::{Hub, HubConfig};

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
pub async fn serve_stdio(api: impl Into<Arc<Api>>, handles: HubConfig) -> std::io::Result<()> {
    serve_io(api, handles, tokio::io::stdin(), tokio::io::stdout()).await
}

/// [`serve_stdio`] over any byte streams (tests drive it over pipes in memory).
pub async fn serve_io(
    api: impl Into<Arc<Api>>,
    handles: HubConfig,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let api: Arc<Api> = api.into();
    let hub = Hub::new(handles);
    let (out_tx, out_rx) = tokio::sync::mpsc::channel::<String>(64);
    let (in_tx, mut in_rx) = tokio::sync::mpsc::channel::<rmcp::model::ClientJsonRpcMessage>(16);
    let writer = tokio::spawn(write_lines(out_rx, output));
    let reader = tokio::spawn(read_lines(input, in_tx, out_tx.clone()));
    let sink = Box::pin(futures_util::sink::unfold(out_tx, |tx, msg: rmcp::model::ServerJsonRpcMessage| async move {
        let line = serde_json::to_string(&msg).map_err(std::io::Error::other)?;
        tx.send(line).await.map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok::<_, std::io::Error>(tx)
    }));
    let stream = futures_util::stream::poll_fn(move |cx| in_rx.poll_recv(cx));
    let served = Box::pin(SightlineMcp::over_stdio(api.clone(), hub.clone()).serve((sink, stream))).await;
    let result = match served {
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        // The client left before any session began (nothing sent, or only `server/discover`): a normal end.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    };
    reader.abort();
    api.shutdown().await;
    hub.shutdown().await;
    // Every reply queued before the end is written (the writer ends when the last sender goes).
    let _ = writer.await;
    result
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
mod tests {
    use super::*;

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
            r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ] {
            assert!(frame(ok).is_ok(), "{ok}: {:?}", frame(ok).err());
        }
    }
}
