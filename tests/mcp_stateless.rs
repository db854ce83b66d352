//! MCP 2026-07-28 beside 2025-11-25. The official Python client (`tests/mcp_handles.py`)
//! in its default mode (`auto`: `server/discover`, then the stateless revision) and in
//! `legacy` mode (the `initialize` handshake), over stdio and Streamable HTTP: one
//! connection opens two sessions with `session_open`, acts in each, and each sees only
//! its own page; a call without a handle, with another session's ref, with a handle never
//! issued, closed, or another principal's, is a typed tool error. Then the stateless wire
//! itself, as a client without an SDK speaks it.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

/// Run `tests/mcp_handles.py ARGS` and read the JSON it prints.
fn handles_script(args: &[&str]) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_handles.py");
    let out = Command::new("python3").arg(&script).args(args).output().expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'mcp'") {
        panic!("this test needs the official MCP client: python3 -m pip install mcp (./x test installs it)");
    }
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// What every mode and transport must show: two sessions in one connection, each with its own page.
fn assert_two_sessions_each_see_their_own(v: &Value) {
    assert_eq!(v["server"], "sightline", "{v}");
    let tools: Vec<&str> = v["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(tools[..3], ["session_open", "session_close", "session_list"], "{v}");
    assert_eq!(v["open_a_error"], false, "{v}");
    assert_eq!(v["open_a_keys"], json!(["session", "state", "status", "tab_id", "target_id"]), "{v}");
    assert!(v["open_a_state_url"].as_str().unwrap().ends_with("/signin.html"), "{v}");
    assert_eq!(v["open_a_image"], true, "session_open's first state carries its screenshot as an image: {v}");
    assert_eq!((v["open_b_error"].clone(), v["distinct"].clone()), (json!(false), json!(true)), "{v}");
    assert_eq!((v["typed_error"].clone(), v["b_navigate_error"].clone()), (json!(false), json!(false)), "{v}");
    assert_eq!(v["b_act_error"], Value::Null, "{v}");
    assert_eq!(v["a_email"], "a@example.com", "{v}");
    assert_eq!(v["b_email"], "b@example.com", "each session sees only what was typed in it: {v}");
    assert_eq!(v["b_screenshot"], "", "B was opened with screenshot false: {v}");
    // A's ref means nothing in B.
    assert_eq!(v["foreign_ref"]["code"], "snapshot_not_found", "{v}");
    let listed = v["listed"].as_array().unwrap();
    assert!(v["a_b"].as_array().unwrap().iter().all(|h| listed.contains(h)), "session_list lists both: {v}");
    assert_eq!(v["close_error"], false, "{v}");
    assert_eq!(v["after_close"]["code"], "session_ended", "{v}");
    assert_eq!(v["close_again"]["code"], "session_ended", "{v}");
    assert_eq!(v["b_tabs_after"], 1, "closing A left B alone: {v}");
}

/// No handle where one is needed: a typed error naming the handles open.
fn assert_missing_handle_says_which(v: &Value) {
    let e = &v["no_handle"];
    assert_eq!((e["is_error"].clone(), e["code"].clone()), (json!(true), json!("invalid_params")), "{v}");
    assert_eq!(e["detail"]["needs"], "session", "{v}");
    let open = e["detail"]["open"].as_array().unwrap();
    assert_eq!(open.len(), 2, "{v}");
    for h in open {
        assert!(e["message"].as_str().unwrap().contains(h.as_str().unwrap()), "{v}");
    }
}

/// A handle not the caller's: `session_not_found`, naming the caller's own handles.
fn assert_unknown_handle_says_which(v: &Value) {
    let e = &v["unknown_handle"];
    assert_eq!(e["code"], "session_not_found", "{v}");
    assert!(e["message"].as_str().unwrap().contains("session_open"), "{v}");
    assert!(e["detail"]["open"].as_array().unwrap().len() >= 2, "{v}");
}

#[test]
fn stdio_auto_negotiates_2026_07_28_and_serves_handles() {
    world();
    let fixture = url("/signin.html");
    // A launched browser for the handles, as a host starts `sightline mcp`.
    let v = handles_script(&["stdio", "auto", &fixture, env!("CARGO_BIN_EXE_sightline")]);
    assert_eq!((v["protocol"].clone(), v["discovered"].clone()), (json!("2026-07-28"), json!(true)), "{v}");
    assert_two_sessions_each_see_their_own(&v);
    assert_missing_handle_says_which(&v);
    assert_unknown_handle_says_which(&v);
    // Handles replace bind_browser's names: session is required, target_id and tab_id default.
    assert_eq!(v["click_required"], json!(["session", "ref"]), "{v}");
    assert_eq!(v["list_tabs_required"], json!(["session"]), "{v}");
    let tools = v["tools"].as_array().unwrap();
    assert!(!tools.contains(&json!("bind_browser")) && !tools.contains(&json!("end_session")), "{v}");
    assert_eq!(v["bind_browser"], json!({ "protocol_error": -32602 }), "{v}");
    assert_eq!(v["listed"], v["a_b"], "{v}");
}

#[test]
fn stdio_legacy_keeps_initialize_and_the_handles_work_there_too() {
    world();
    let fixture = url("/signin.html");
    let endpoint = browser_endpoint();
    let v = handles_script(&["stdio", "legacy", &fixture, env!("CARGO_BIN_EXE_sightline"), "--connect", &endpoint]);
    assert_eq!((v["protocol"].clone(), v["discovered"].clone()), (json!("2025-11-25"), json!(false)), "{v}");
    assert_two_sessions_each_see_their_own(&v);
    assert_missing_handle_says_which(&v);
    // Today's named driver sessions stay: the addresses are required, bind_browser works.
    assert_eq!(v["click_required"], json!(["session", "target_id", "tab_id", "ref"]), "{v}");
    assert_eq!(v["bind_browser"], json!({ "is_error": false, "code": null }), "{v}");
    // A name that is no handle is a driver session's, as it always was.
    assert_eq!(v["unknown_handle"]["code"], "session_not_found", "{v}");
    assert!(v["unknown_handle"]["message"].as_str().unwrap().contains("bind_browser"), "{v}");
}

/// Another principal on the first one's handle: the same answer as a handle never issued, and its list is its own.
fn assert_handles_belong_to_their_token(v: &Value) {
    for k in ["other_on_b", "other_close_b"] {
        assert_eq!(v[k]["code"], "session_not_found", "{k}: {v}");
        assert!(v[k]["message"].as_str().unwrap().contains("of yours"), "{k}: {v}");
    }
    let mine: Vec<&Value> = v["a_b"].as_array().unwrap().iter().collect();
    assert!(v["other_listed"].as_array().unwrap().iter().all(|s| !mine.contains(&s)), "{v}");
    assert_eq!(v["b_email_after_other"], "b@example.com", "the other principal changed nothing: {v}");
}

#[test]
fn http_auto_negotiates_2026_07_28_statelessly_and_handles_belong_to_their_token() {
    world();
    let tokens = token_file("mcp-stateless", &format!("alice {ALICE}\nbob {BOB}\n"), 0o600);
    let mut srv = ServeProc::with_tokens(&tokens, &[]);
    let v = handles_script(&["http", "auto", &url("/signin.html"), &srv.url("/mcp"), ALICE, BOB]);
    assert_eq!((v["protocol"].clone(), v["discovered"].clone()), (json!("2026-07-28"), json!(true)), "{v}");
    assert_eq!(v["other_protocol"], "2026-07-28", "{v}");
    assert_two_sessions_each_see_their_own(&v);
    assert_missing_handle_says_which(&v);
    assert_unknown_handle_says_which(&v);
    assert_handles_belong_to_their_token(&v);
    assert_eq!(v["click_required"], json!(["session", "ref"]), "{v}");
    assert_eq!(v["other_listed"], json!([]), "{v}");
    // Stateless: nothing was left open by the clients (no MCP session held a browser session).
    let (_, health, _) = http("GET", &srv.url("/healthz"), None, &[("authorization", &format!("Bearer {ALICE}"))]);
    assert_eq!(health["sessions"], 0, "{health}");
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
}

#[test]
fn http_legacy_keeps_the_mcp_session_and_the_handles_work_there_too() {
    world();
    let tokens = token_file("mcp-stateless", &format!("alice {ALICE}\nbob {BOB}\n"), 0o600);
    let mut srv = ServeProc::with_tokens(&tokens, &[]);
    let v = handles_script(&["http", "legacy", &url("/signin.html"), &srv.url("/mcp"), ALICE, BOB]);
    assert_eq!((v["protocol"].clone(), v["discovered"].clone()), (json!("2025-11-25"), json!(false)), "{v}");
    assert_two_sessions_each_see_their_own(&v);
    assert_unknown_handle_says_which(&v);
    assert_handles_belong_to_their_token(&v);
    // Today's MCP session is still a browser session of its own: no handle needed.
    assert_eq!(v["no_handle"]["is_error"], false, "{v}");
    assert_eq!(v["click_required"], json!(["ref"]), "{v}");
    // The list holds the MCP session's own session beside the two handles.
    assert_eq!(v["listed"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(v["other_listed"].as_array().unwrap().len(), 1, "the other client's MCP session: {v}");
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
}

/// The 2026-07-28 requests' `_meta`.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "1" },
    })
}

/// A stdio client without an SDK: `server/discover`, then requests that carry
/// their own `_meta`, and no `initialize`.
#[test]
fn the_stateless_wire_over_stdio() {
    world();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["mcp", "--connect", &browser_endpoint()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut call = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        out.read_line(&mut answer).unwrap();
        let v: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(v["id"], id, "{v}");
        v
    };
    let d = call(1, "server/discover", json!({ "_meta": meta() }));
    let r = &d["result"];
    let versions = r["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")), "{d}");
    assert_eq!(r["resultType"], "complete", "{d}");
    assert!(r["instructions"].as_str().unwrap().contains("session_open"), "{d}");
    assert_eq!(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "sightline", "{d}");
    let tools = call(2, "tools/list", json!({ "_meta": meta() }));
    assert_eq!(tools["result"]["resultType"], "complete", "{tools}");
    assert!(tools["result"]["ttlMs"].is_u64(), "2026-07-28 lists carry caching hints: {tools}");
    let open = call(
        3,
        "tools/call",
        json!({ "_meta": meta(), "name": "session_open", "arguments": { "url": url("/signin.html") } }),
    );
    let handle = open["result"]["structuredContent"]["session"].as_str().expect("a handle").to_string();
    assert!(handle.starts_with("s-"), "{open}");
    assert_eq!(open["result"]["resultType"], "complete", "{open}");
    let state = call(
        4,
        "tools/call",
        json!({ "_meta": meta(), "name": "get_state", "arguments": { "session": handle, "screenshot": false } }),
    );
    assert!(
        state["result"]["structuredContent"]["page_content"].as_str().unwrap().contains("Email Address"),
        "{state}"
    );
    // A request without the envelope, once the connection is 2026-07-28's, is refused as such.
    let bare = call(5, "tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
    assert!(bare["error"]["message"].as_str().unwrap().contains("_meta"), "{bare}");
    let closed =
        call(6, "tools/call", json!({ "_meta": meta(), "name": "session_close", "arguments": { "session": handle } }));
    assert_eq!(closed["result"]["structuredContent"]["status"], "ok", "{closed}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// One POST to /mcp: (status, the headers as lowercase lines, the JSON-RPC message
/// it carries, whether as JSON or as the last `data:` line of an SSE stream).
/// The routing headers (`Mcp-Method`, and `Mcp-Name` for a tool call) come from the body, as SEP-2243 has them.
fn mcp_post(url: &str, body: &Value) -> (u16, String, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut req = ureq::http::Request::builder()
        .method("POST")
        .uri(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", body["method"].as_str().unwrap());
    if let Some(name) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", name);
    }
    let req = req.body(body.to_string()).unwrap();
    let mut resp = agent.run(req).unwrap();
    let status = resp.status().as_u16();
    let head: String =
        resp.headers().iter().map(|(k, v)| format!("{}: {}\n", k.as_str(), v.to_str().unwrap_or(""))).collect();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    let msg = serde_json::from_str(&text).unwrap_or_else(|_| {
        let mut data = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).filter(|d| !d.is_empty());
        data.next_back().and_then(|d| serde_json::from_str(d).ok()).unwrap_or(Value::Null)
    });
    (status, head, msg)
}

/// Streamable HTTP at 2026-07-28: each POST stands alone (no `Mcp-Session-Id` is
/// issued or needed), and a handle opened by one request is used by the next.
#[test]
fn the_stateless_wire_over_http() {
    world();
    let mut srv = ServeProc::start(&["--listen", "127.0.0.1:0", "--connect", &browser_endpoint()]);
    let mcp = srv.url("/mcp");
    let (status, head, d) = mcp_post(
        &mcp,
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": meta() } }),
    );
    assert_eq!(status, 200, "{d}");
    assert!(!head.contains("mcp-session-id"), "a stateless answer issues no MCP session: {head}");
    assert!(d["result"]["supportedVersions"].as_array().unwrap().contains(&json!("2026-07-28")), "{d}");
    let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "_meta": meta(), "name": "session_open", "arguments": { "url": url("/signin.html") } } });
    let (status, head, open) = mcp_post(&mcp, &open);
    assert_eq!(status, 200, "{open}");
    assert!(!head.contains("mcp-session-id"), "{head}");
    let handle = open["result"]["structuredContent"]["session"].as_str().expect("a handle").to_string();
    let (_, _, listed) = mcp_post(
        &mcp,
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "_meta": meta(), "name": "session_list", "arguments": {} } }),
    );
    assert_eq!(listed["result"]["structuredContent"]["sessions"], json!([handle]), "{listed}");
    // The handle is a session of the server like any other: the HTTP API sees it too.
    let (status, state, _) = http("GET", &srv.url(&format!("/v1/sessions/{handle}/state?screenshot=false")), None, &[]);
    assert_eq!(status, 200, "{state}");
    assert!(state["url"].as_str().unwrap().ends_with("/signin.html"), "{state}");
    let (_, _, closed) = mcp_post(
        &mcp,
        &json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "_meta": meta(), "name": "session_close", "arguments": { "session": handle } } }),
    );
    assert_eq!(closed["result"]["structuredContent"]["status"], "ok", "{closed}");
    let (_, health, _) = http("GET", &srv.url("/healthz"), None, &[]);
    assert_eq!(health["sessions"], 0, "{health}");
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
}
