//! rmcp's own client against `sightline mcp`'s server (its stdio framing, over
//! pipes in memory, with a launched Chromium), in both lifecycles:
//! `server/discover` (2026-07-28, every request carrying its `_meta`) and
//! `initialize` (2025-11-25). One connection opens two sessions with
//! `session_open`, types into each, and each sees only its own page.

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::RoleClient;
use serde_json::{json, Value};
use sightline_api::{Api, ApiOptions};
use sightline_server::HubConfig;

/// A page with one text field, as a data URL (no fixture server needed).
fn page(title: &str) -> String {
    format!("data:text/html,<title>{title}</title><h1>{title}</h1><input aria-label=Note name=note>")
}

type Client = RunningService<RoleClient, ()>;

async fn call(client: &Client, name: &'static str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(name).with_arguments(args.as_object().cloned().unwrap_or_default());
    client.call_tool(params).await.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or(Value::Null)
}

/// The note field's value in a session's State Object.
async fn note(client: &Client, session: &str) -> String {
    let state = structured(&call(client, "get_state", json!({ "session": session, "screenshot": false })).await);
    let field = state["element_index"].as_object().unwrap().values().find(|d| d["attributes"]["name"] == "note");
    field.expect("the note field")["attributes"]["value"].as_str().unwrap_or_default().to_string()
}

/// Open two sessions, type into each (a ref in one, an element-index action in the other), read both back.
async fn two_sessions(lifecycle: ClientLifecycleMode) -> (ProtocolVersion, Value) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server_io);
    let server = tokio::spawn(sightline_server::serve_io(
        Api::new(ApiOptions::default()),
        HubConfig::default(),
        server_in,
        server_out,
    ));
    let client: Client = ().serve_with_lifecycle(tokio::io::split(client_io), lifecycle).await.expect("connected");
    let version = client.peer_info().expect("negotiated").protocol_version.clone();
    let tools = client.list_all_tools().await.unwrap();
    let mut out = json!({ "tools": tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>() });

    let a = structured(&call(&client, "session_open", json!({ "url": page("Alpha") })).await);
    let b = structured(&call(&client, "session_open", json!({ "url": page("Beta"), "screenshot": false })).await);
    let (a, b) = (a["session"].as_str().unwrap().to_string(), b["session"].as_str().unwrap().to_string());
    let snap = structured(
        &call(&client, "get_browser_state", json!({ "session": a, "snapshot_format": "semantic_v2" })).await,
    );
    let field = snap["refs"].as_array().unwrap().iter().find(|r| r["name"] == "Note").expect("the Note ref");
    let typed = call(&client, "browser_type", json!({ "session": a, "ref": field["ref"], "text": "for alpha" })).await;
    out["typed_error"] = json!(typed.is_error);
    let b_state = structured(&call(&client, "get_state", json!({ "session": b, "screenshot": false })).await);
    let index = b_state["element_index"].as_object().unwrap();
    let n: u64 = index.iter().find(|(_, d)| d["attributes"]["name"] == "note").unwrap().0.parse().unwrap();
    let action = json!({ "action": "input_text", "element_index": n, "text": "for beta" });
    let acted = structured(&call(&client, "act", json!({ "session": b, "action": action })).await);
    out["act_error"] = acted["error"].clone();
    out["a_note"] = json!(note(&client, &a).await);
    out["b_note"] = json!(note(&client, &b).await);
    out["b_url"] = b_state["url"].clone();
    // A's ref in B, and no handle at all: typed tool errors.
    let foreign = call(&client, "browser_click", json!({ "session": b, "ref": field["ref"] })).await;
    out["foreign"] = structured(&foreign)["error"]["code"].clone();
    let missing = call(&client, "list_tabs", json!({})).await;
    out["missing"] = structured(&missing)["error"].clone();
    for s in [&a, &b] {
        assert_eq!(structured(&call(&client, "session_close", json!({ "session": s })).await)["status"], "ok");
    }
    out["listed_after"] = structured(&call(&client, "session_list", json!({})).await)["sessions"].clone();
    client.cancel().await.unwrap();
    server.await.unwrap().expect("the server ends cleanly when the client goes");
    (version, out)
}

fn assert_each_sees_its_own(v: &Value) {
    assert_eq!(v["typed_error"], false, "{v}");
    assert_eq!(v["act_error"], Value::Null, "{v}");
    assert_eq!(v["a_note"], "for alpha", "{v}");
    assert_eq!(v["b_note"], "for beta", "{v}");
    assert!(v["b_url"].as_str().unwrap().contains("Beta"), "{v}");
    assert_eq!(v["foreign"], "snapshot_not_found", "{v}");
    assert_eq!(v["missing"]["code"], "invalid_params", "{v}");
    assert_eq!(v["missing"]["detail"]["open"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["listed_after"], json!([]), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_discovers_2026_07_28_and_drives_two_sessions() {
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let (version, v) = two_sessions(lifecycle).await;
    assert_eq!(version, ProtocolVersion::V_2026_07_28);
    assert_each_sees_its_own(&v);
    assert!(!v["tools"].as_array().unwrap().contains(&json!("bind_browser")), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_initializes_2025_11_25_and_drives_two_sessions() {
    let (version, v) = two_sessions(ClientLifecycleMode::Initialize).await;
    assert_eq!(version, ProtocolVersion::V_2025_11_25);
    assert_each_sees_its_own(&v);
    assert!(v["tools"].as_array().unwrap().contains(&json!("bind_browser")), "{v}");
}
