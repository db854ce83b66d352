//! `sightline rpc`: the tools as JSON-RPC 2.0 methods over stdio.
//!
//! Method names are the tool names; `list_tools` lists them with their input
//! schemas. Tool errors are JSON-RPC errors whose `data.code` is the stable
//! code string (`capability_expired`, `browser_action_unavailable`, …).

use base64::Engine;
use serde_json::{json, Value};
use sightline_api::Api;

use crate::jsonrpc::{serve, RpcError};

pub async fn run(api: Api) -> anyhow::Result<u8> {
    serve(&api, async |api: &Api, method: &str, params: Value| -> Result<Value, RpcError> {
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
            let _ = base64::engine::general_purpose::STANDARD.decode(&png);
            v["image"] = json!({ "mime_type": "image/png", "data": png });
        }
        Ok(v)
    })
    .await?;
    Ok(0)
}
