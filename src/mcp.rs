//! `sightline mcp`: a Model Context Protocol server over stdio.
//!
//! Same tools, same schemas, same error codes as `sightline rpc`. A tool
//! failure is a `tools/call` result with `isError: true` (its structured
//! content carries the stable code), as MCP prescribes; screenshots are image
//! content.

use serde_json::{json, Value};
use sightline_api::Api;

use crate::jsonrpc::{serve, RpcError};

/// Protocol revisions we speak; the client's is echoed when we know it.
const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub async fn run(api: Api) -> anyhow::Result<u8> {
    serve(&api, async |api: &Api, method: &str, params: Value| -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or(VERSIONS[0]);
                let version = VERSIONS.iter().find(|v| **v == asked).copied().unwrap_or(VERSIONS[0]);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "sightline", "version": env!("CARGO_PKG_VERSION") },
                    "instructions": "Bind a browser with bind_browser {session}, then read pages with get_browser_state (snapshot_format semantic_v2) and act on refs with browser_click / browser_type / browser_select. Refs die with a newer snapshot or a navigation: take a new snapshot when told a capability expired.",
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => {
                let tools: Vec<Value> = api
                    .tools()
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "description": t.description,
                            "inputSchema": (t.schema)(),
                            "annotations": { "readOnlyHint": t.read_only, "destructiveHint": false, "openWorldHint": true },
                        })
                    })
                    .collect();
                Ok(json!({ "tools": tools }))
            }
            "tools/call" => {
                let name = params["name"].as_str().ok_or_else(|| RpcError::new(-32602, "tools/call needs a tool name"))?;
                if !api.tools().iter().any(|t| t.name == name) {
                    return Err(RpcError::new(-32602, format!("unknown tool {name:?}")));
                }
                let args = params.get("arguments").cloned().unwrap_or(Value::Null);
                match api.dispatch(name, args).await {
                    Ok(out) => {
                        let mut content = vec![json!({ "type": "text", "text": out.value.to_string() })];
                        if let Some(png) = out.image {
                            content.push(json!({ "type": "image", "data": png, "mimeType": "image/png" }));
                        }
                        Ok(json!({ "content": content, "structuredContent": out.value, "isError": false }))
                    }
                    Err(e) => {
                        let err = json!({ "error": { "code": e.code, "message": e.message, "detail": e.detail } });
                        Ok(json!({ "content": [{ "type": "text", "text": format!("{}: {}", e.code, e.message) }], "structuredContent": err, "isError": true }))
                    }
                }
            }
            m if m.starts_with("notifications/") => Ok(Value::Null),
            other => Err(RpcError::new(-32601, format!("method not found: {other}"))),
        }
    })
    .await?;
    Ok(0)
}
