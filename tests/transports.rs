//! The tool API over its two transports, driven as a client program would.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

#[test]
fn json_rpc_over_stdio() {
    world();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("rpc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut rpc = Rpc { stdin: child.stdin.take().unwrap(), out: BufReader::new(child.stdout.take().unwrap()), id: 0 };
    let mut call = |method: &str, params: Value| -> Value { rpc.call(method, params) };
    let tools = call("list_tools", json!({}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "bind_browser",
        "list_tabs",
        "open_tab",
        "close_tab",
        "browser_navigate",
        "get_browser_state",
        "browser_click",
        "browser_type",
        "browser_select",
        "browser_scroll",
        "browser_press_key",
        "end_session",
        "get_state",
        "act",
        "browser_drag",
        "browser_navigate_back",
        "browser_navigate_forward",
        "run",
        "get_script",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let b = call("bind_browser", json!({ "session": "rpc-1" }))["result"].clone();
    let addr = json!({ "session": "rpc-1", "target_id": b["target_id"], "tab_id": b["tabs"][0]["tab_id"] });
    let mut nav = addr.clone();
    nav["url"] = json!(url("/signin.html"));
    assert_eq!(call("browser_navigate", nav)["result"]["status"], "ok");
    let mut req = addr.clone();
    req["snapshot_format"] = json!("semantic_v2");
    let snap = call("get_browser_state", req)["result"].clone();
    assert!(snap["outline"].as_str().unwrap().contains("button \"Sign In\""));
    let button = snap["refs"].as_array().unwrap().iter().find(|r| r["name"] == "Sign In").unwrap()["ref"].clone();
    let mut ty = addr.clone();
    ty["ref"] = button.clone();
    ty["text"] = json!("x");
    let err = call("browser_type", ty);
    assert_eq!(err["error"]["data"]["code"], "browser_action_unavailable", "{err}");
    assert_eq!(err["error"]["code"], -32000);
    // Issue 11: a ref number past u32 is refused with a typed error, never wrapped around to a small one.
    let (snap_id, n) = button.as_str().unwrap().split_once(':').unwrap();
    let mut wrapped = addr.clone();
    wrapped["ref"] = json!(format!("{snap_id}:{}", n.parse::<u64>().unwrap() + (1u64 << 32)));
    let err = call("browser_click", wrapped);
    assert_eq!(err["error"]["data"]["code"], "snapshot_not_found", "{err}");
    assert_eq!(err["error"]["code"], -32000);
    assert!(err["error"]["message"].as_str().unwrap().contains("past the largest element index"), "{err}");
    let bad = call("browser_click", json!({ "session": "rpc-1" }));
    assert_eq!(bad["error"]["code"], -32602);
    assert_eq!(bad["error"]["data"]["code"], "invalid_params");
    // `run` over JSON-RPC: a script's value, and its limit as a typed error.
    let mut run = addr.clone();
    run["code"] = json!("return (await browser.find({role: 'button', name: 'Sign In'})).length");
    run["result"] = json!("none");
    assert_eq!(call("run", run.clone())["result"]["value"], 1);
    run["code"] = json!("for (;;) {}");
    run["timeout_s"] = json!(0.5);
    let err = call("run", run);
    assert_eq!(err["error"]["data"]["code"], "script_limit", "{err}");
    let unknown = call("browser_teleport", json!({}));
    assert_eq!(unknown["error"]["data"]["code"], "unknown_tool");
    // A garbage line is answered and the session survives it.
    assert_eq!(call("\u{0}raw:this is not json", json!(null))["error"]["code"], -32700);
    let mut shot = addr.clone();
    shot["marks"] = json!(true);
    let s = call("browser_screenshot", shot);
    assert_eq!(s["result"]["image"]["mime_type"], "image/png");
    assert_eq!(
        call("list_tabs", json!({ "session": "rpc-1", "target_id": b["target_id"] }))["result"]["tabs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    drop(rpc);
    assert!(child.wait().unwrap().success());
}

struct Rpc {
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Rpc {
    /// One request and its reply; a method starting with "\0raw:" sends the rest as a raw line.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        match method.strip_prefix("\u{0}raw:") {
            Some(raw) => writeln!(self.stdin, "{raw}").unwrap(),
            None => writeln!(
                self.stdin,
                "{}",
                json!({ "jsonrpc": "2.0", "id": self.id, "method": method, "params": params })
            )
            .unwrap(),
        }
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

#[test]
fn a_real_mcp_client_lists_binds_snapshots_and_clicks() {
    world();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_sightline"))
        .arg(url("/signin.html"))
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'mcp'") {
        panic!("this test needs the official MCP client: python3 -m pip install mcp (./x test installs it)");
    }
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["server"], "sightline");
    assert_eq!(v["schemas_ok"], true);
    assert!(v["tools"].as_array().unwrap().len() >= 14);
    assert!(v["read_only"].as_array().unwrap().contains(&json!("get_browser_state")));
    assert!(!v["read_only"].as_array().unwrap().contains(&json!("browser_click")));
    assert!(v["outline"].as_str().unwrap().contains("textbox \"Email Address\""));
    assert_eq!(v["typed_error"], false);
    assert!(v["run_value"].as_str().unwrap().contains("/welcome-back.html"), "{v}");
    assert_eq!(v["run_limit_code"], "script_limit", "{v}");
    assert_eq!(v["navigated"], true);
    assert_eq!(v["stale_is_error"], true);
    assert_eq!(v["stale_code"], "capability_expired");
    assert_eq!(v["stale_rule"], "navigation");
    assert_eq!(v["image_mime"], "image/png");
    assert!(v["image_bytes"].as_u64().unwrap() > 1000);
    assert!(v["state_url"].as_str().unwrap().contains("/welcome-back.html"));
    for d in ["close_tab", "end_session", "browser_navigate"] {
        assert!(v["destructive"].as_array().unwrap().contains(&json!(d)), "{d} lacks destructiveHint: {v}");
    }
    assert!(!v["destructive"].as_array().unwrap().contains(&json!("get_state")));
    // Proved by order, not by the clock (issue 18): the second call answered while the
    // first one's page was still held, and the lock was free while a cancelled call's page was.
    assert_eq!(v["second_answered_while_first_pending"], true, "requests are not concurrent: {v}");
    assert!(v["progress_notes"].as_u64().unwrap() >= 3, "{v}");
    assert_eq!(v["lock_free_while_page_held"], true, "cancel not honoured: {v}");
}

#[test]
fn real_mcp_clients_over_streamable_http_each_get_their_own_session() {
    world();
    let mut srv = ServeProc::start(&["--listen", "127.0.0.1:0", "--connect", &browser_endpoint()]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_http_client.py");
    let out =
        Command::new("python3").arg(&script).arg(srv.url("/mcp")).arg(url("/signin.html")).output().expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'mcp'") {
        panic!("this test needs the official MCP client: python3 -m pip install mcp (./x test installs it)");
    }
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Session termination failed"), "the client could not end its MCP session: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["server"], "sightline");
    // Over HTTP the MCP session is the Sightline session: only the handle tools name one.
    assert_eq!(v["session_required"], json!(["session_close"]), "{v}");
    assert_eq!(v["act_required"], json!(["action"]));
    for d in ["close_tab", "end_session", "browser_navigate"] {
        assert!(v["destructive"].as_array().unwrap().contains(&json!(d)), "{d}: {v}");
    }
    assert_eq!(v["first_url"], "about:blank");
    assert!(v["act_page_content"].as_str().unwrap().contains("textbox \"Email Address\""), "{v}");
    assert_eq!(v["typed_error"], false);
    assert_eq!(v["a_email_value"], "a@example.com");
    assert_eq!(v["b_email_value"], "", "session B saw what session A typed");
    assert!(v["progress_notes"].as_u64().unwrap() >= 3, "{v}");
    assert_eq!(v["after_end_is_error"], true);
    assert_eq!(v["after_end_code"], "session_ended");
    // Both clients closed their MCP sessions: both Sightline sessions are gone.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (_, health, _) = http("GET", &srv.url("/healthz"), None, &[]);
        if health["sessions"] == 0 {
            break;
        }
        assert!(std::time::Instant::now() < until, "sessions left after the MCP clients closed: {health}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
}

/// Issue 18, item 6: `sightline mcp` answers every line exactly once, as JSON-RPC 2.0
/// says: not JSON, not UTF-8 and a 10 MB line each get one -32700 with `id: null`;
/// `tools/call` without a name gets -32602 with its id; then the session goes on.
#[test]
fn mcp_over_stdio_answers_every_line_exactly_once() {
    world();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |line: &[u8]| {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let next = || -> Value {
        let line = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("an answer");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    send(init.to_string().as_bytes());
    assert_eq!(next()["result"]["serverInfo"]["name"], "sightline");
    send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let huge = vec![b'x'; 10 << 20];
    for (what, line) in [
        ("not JSON", b"}{".to_vec()),
        ("not UTF-8", b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"\xff}".to_vec()),
        ("10 MB", huge),
    ] {
        send(&line);
        let reply = next();
        assert_eq!(reply["error"]["code"], -32700, "{what}: {reply}");
        assert_eq!(reply["id"], Value::Null, "{what}: {reply}");
        assert_eq!(reply["jsonrpc"], "2.0", "{what}: {reply}");
    }
    send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#);
    let reply = next();
    assert_eq!((reply["error"]["code"].as_i64(), &reply["id"]), (Some(-32602), &json!(3)), "{reply}");
    // Nothing else was answered in between: the next line is the answer to the next request.
    send(br#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    let reply = next();
    assert_eq!(reply["id"], 4, "{reply}");
    assert!(reply["result"]["tools"].as_array().is_some_and(|t| t.len() >= 14), "{reply}");
    send(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_tabs","arguments":{"session":"none"}}}"#);
    let reply = next();
    assert_eq!(reply["id"], 5, "{reply}");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // The server has exited, so its stdout is closed and the reader's sender is
    // dropped: whatever is left was answered, with no time window to guess.
    let extra: Vec<String> = rx.iter().collect();
    assert!(extra.is_empty(), "answers too many: {extra:?}");
}

/// Typed outputs (issue 37, item 3), as the official MCP client sees them:
/// every table tool publishes an output schema with an object root, `act`'s
/// `action` lists every row of the action table with its required fields, and
/// real replies from real pages (snapshots whole, changed, continued and
/// dom_refs_v1, tab listings, scroll, State Objects, storage state) validate
/// against the published schemas while broken copies of them do not.
#[test]
fn mcp_tools_publish_output_schemas_that_real_replies_validate_against() {
    world();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_schemas.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_sightline"))
        .arg(url("/long.html"))
        .arg(url("/signin.html"))
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let with_schema: Vec<&str> = v["with_output_schema"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for t in sightline_api::TOOLS {
        assert!(with_schema.contains(&t.name), "{} publishes no output schema: {v}", t.name);
    }
    assert_eq!(v["output_roots"], json!(["object"]), "{v}");
    // The action field: one alternative per row of ACTION_TABLE, its required fields the row's.
    let actions = v["act_actions"].as_object().unwrap();
    assert_eq!(actions.len(), sightline_api::ACTION_TABLE.len(), "{v}");
    for spec in sightline_api::ACTION_TABLE {
        let mut want = vec!["action"];
        want.extend(spec.fields.iter().filter(|f| f.required).map(|f| f.name));
        assert_eq!(actions[spec.name], json!(want), "{}", spec.name);
    }
    assert_eq!(v["act_closed"], true);
    assert_eq!(v["act_accepts"], true);
    assert_eq!(v["act_refuses"], json!([false, false, false]));
    // Every real reply validated (an empty error list per call)...
    let checked = v["checked"].as_object().unwrap();
    for label in [
        "bind_browser",
        "list_tabs",
        "list_tabs_two",
        "snapshot_full_because",
        "snapshot",
        "browser_scroll",
        "snapshot_changes",
        "snapshot_budget",
        "snapshot_continuation",
        "snapshot_dom_refs",
        "get_state",
        "act",
        "open_tab",
        "close_tab",
        "save_storage_state",
    ] {
        assert_eq!(checked.get(label), Some(&json!([])), "{label}: {v}");
    }
    assert_eq!(v["continued"], true, "{v}");
    assert!(v["snapshot_refs"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["tab_titles"], json!(["Long page"]), "{v}");
    assert!(v["page_scroll"][1].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["changes_keys"], json!(["added", "changed", "removed"]), "{v}");
    assert_eq!(v["full_because"], json!(["no_previous_snapshot", null]), "{v}");
    assert_eq!(v["storage_input"], json!([true, true, false, false]), "{v}");
    // ...and every broken copy was refused.
    let refused = v["refused"].as_object().unwrap();
    assert_eq!(refused.len(), 5, "{v}");
    for (label, r) in refused {
        assert_eq!(r, &json!(true), "{label} passed its schema: {v}");
    }
}
