//! `sightline serve`: the HTTP API against real Chromium. In-process servers
//! attach to this binary's shared browser (each session is its own context);
//! the lifecycle tests run the real binary with its own browser.

use crate::common;

use std::time::{Duration, Instant};

use common::gate::{self, Gate};
use common::*;
use serde_json::{json, Value};
use sightline_server::{BrowserSource, HubConfig};

fn attached() -> HubConfig {
    HubConfig { source: BrowserSource::Connect(browser_endpoint()), ..HubConfig::default() }
}

fn get(url: &str) -> (u16, Value) {
    let (s, v, _) = http("GET", url, None, &[]);
    (s, v)
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_else(|| panic!("not a typed error: {v}"))
}

#[test]
fn act_answers_exactly_as_env_does() {
    let srv = InProcServer::start(attached(), None);
    let page = url("/signin.html");
    let (id, created) = new_session(&srv, json!({ "url": page, "screenshot": false }));
    let act = |a: Value| post(&srv.url(&format!("/v1/sessions/{id}/act")), a);
    let mut env = run(env_with("/signin.html", sightline_api::EnvOptions { screenshot: false }));
    let first = serde_json::to_value(env.state()).unwrap();
    assert_eq!(created["state"], first, "the first state differs from env's");
    let email = by_id_name(env.state(), "email");
    for action in [
        json!({ "action": "input_text", "element_index": email, "text": "ada@example.com", "overwrite": true }),
        json!({ "action": "click_element", "element_index": 99 }),
        json!({ "action": "scroll", "direction": "sideways" }),
        json!({ "action": "finish_task", "message": "done" }),
    ] {
        let (status, over_http) = act(action.clone());
        assert_eq!(status, 200, "{over_http}");
        let turn = run(step(&mut env, action.clone()));
        assert_eq!(over_http, serde_json::to_value(&turn.state).unwrap(), "after {action}");
    }
    // A body that is not JSON is answered like env answers a line that is not JSON.
    let (_, raw, _) = http("POST", &srv.url(&format!("/v1/sessions/{id}/act")), Some("not json"), &[]);
    assert_eq!(raw["error"]["code"], "ACTION_VALIDATION_FAILED");
    assert_eq!(raw["error"]["failed_action"], "not json");
    assert_eq!(raw["state_hash"], serde_json::to_value(env.state()).unwrap()["state_hash"]);
}

#[test]
fn state_tools_and_delete_over_http() {
    let srv = InProcServer::start(attached(), None);
    let (id, created) = new_session(&srv, json!({}));
    assert!(created.get("state").is_none(), "no url, no state: {created}");
    let s = |p: &str| srv.url(&format!("/v1/sessions/{id}{p}"));
    let (status, nav) = post(&s("/tools/browser_navigate"), json!({ "url": url("/signin.html") }));
    assert_eq!(status, 200, "{nav}");
    let (_, state) = get(&s("/state"));
    assert!(state["page_content"].as_str().unwrap().contains("Sign In"), "{state}");
    assert!(state["screenshot"].as_str().unwrap().len() > 1000, "state carries a screenshot by default");
    let (_, bare) = get(&s("/state?screenshot=false"));
    assert_eq!(bare["screenshot"], "");
    assert_eq!(bare["state_hash"], state["state_hash"]);
    let (status, snap) = post(&s("/tools/get_browser_state"), json!({ "snapshot_format": "semantic_v2" }));
    assert_eq!(status, 200, "{snap}");
    let button = snap["refs"].as_array().unwrap().iter().find(|r| r["name"] == "Sign In").unwrap()["ref"].clone();
    // A session argument naming another session is overwritten with the path's.
    let (status, clicked) = post(&s("/tools/browser_click"), json!({ "ref": button, "session": "someone-else" }));
    assert_eq!(status, 200, "{clicked}");
    assert_eq!(clicked["navigated"], true);
    // The tool's own error codes, typed, with a status.
    let (status, stale) = post(&s("/tools/browser_click"), json!({ "ref": button }));
    assert_eq!((status, code(&stale)), (422, "capability_expired"), "{stale}");
    assert_eq!(stale["error"]["detail"]["rule"], "navigation");
    let (status, bad) = post(&s("/tools/browser_type"), json!({ "text": 5 }));
    assert_eq!((status, code(&bad)), (400, "invalid_params"), "{bad}");
    let (status, unknown) = post(&s("/tools/browser_teleport"), json!({}));
    assert_eq!((status, code(&unknown)), (404, "unknown_tool"));
    let (status, shot) = post(&s("/tools/browser_screenshot"), json!({ "marks": true }));
    assert_eq!(status, 200);
    assert_eq!(shot["image"]["mime_type"], "image/png");
    let (status, _, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{id}")), None, &[]);
    assert_eq!(status, 204);
    let (status, gone) = get(&s("/state"));
    assert_eq!((status, code(&gone)), (404, "session_ended"));
    assert_eq!(gone["error"]["detail"]["reason"], "deleted");
    let (status, never) = post(&srv.url("/v1/sessions/s-nope/act"), json!({ "action": "finish_task", "message": "x" }));
    assert_eq!((status, code(&never)), (404, "session_not_found"));
    let (status, again, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{id}")), None, &[]);
    assert_eq!((status, code(&again)), (404, "session_ended"));
    let (status, bad_body) = post(&srv.url("/v1/sessions"), json!({ "url": "javascript:alert(1)" }));
    assert_eq!((status, code(&bad_body)), (400, "invalid_params"));
    let (status, bad_vp) = post(&srv.url("/v1/sessions"), json!({ "viewport": "5x5" }));
    assert_eq!((status, code(&bad_vp)), (400, "invalid_params"));
}

#[test]
fn sessions_are_isolated() {
    let site = run(async {
        let s = sightline_testkit::Server::memory().await.unwrap();
        s.page("/jar.html", JAR);
        s
    });
    let srv = InProcServer::start(attached(), None);
    let (a, _) = new_session(&srv, json!({ "url": site.url("/jar.html?alice"), "screenshot": false }));
    let (b, _) = new_session(&srv, json!({ "screenshot": false }));
    let act = |id: &str, a: Value| post(&srv.url(&format!("/v1/sessions/{id}/act")), a).1;
    let sa = act(&a, json!({ "action": "navigate", "url": site.url("/jar.html") }));
    assert!(sa["page_content"].as_str().unwrap().contains("cookie=[who=alice] storage=[alice]"), "{sa}");
    let typed = act(&a, json!({ "action": "input_text", "element_index": 1, "text": "alice's secret" }));
    assert_eq!(typed["element_index"]["1"]["attributes"]["value"], "alice's secret");
    let sb = act(&b, json!({ "action": "navigate", "url": site.url("/jar.html") }));
    assert!(
        sb["page_content"].as_str().unwrap().contains("cookie=[] storage=[]"),
        "B sees A's cookie or storage: {sb}"
    );
    assert_eq!(sb["element_index"]["1"]["attributes"]["value"], "", "B sees what A typed");
    // And A still has its own.
    let (_, again) = get(&srv.url(&format!("/v1/sessions/{a}/state?screenshot=false")));
    assert_eq!(again["element_index"]["1"]["attributes"]["value"], "alice's secret");
}

#[test]
fn a_flood_gets_busy_and_the_session_limit_holds() {
    let srv = InProcServer::start(HubConfig { max_sessions: 2, queue_limit: 2, ..attached() }, None);
    let (a, _) = new_session(&srv, json!({ "screenshot": false }));
    let (_b, _) = new_session(&srv, json!({ "screenshot": false }));
    let (status, full) = post(&srv.url("/v1/sessions"), json!({}));
    assert_eq!((status, code(&full)), (503, "too_many_sessions"));
    let slow = url("/signin.html?delay=1500");
    let endpoint = srv.url(&format!("/v1/sessions/{a}/act"));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (endpoint, slow) = (endpoint.clone(), slow.clone());
            std::thread::spawn(move || post(&endpoint, json!({ "action": "navigate", "url": slow })))
        })
        .collect();
    let results: Vec<(u16, Value)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let busy = results.iter().filter(|(s, v)| *s == 429 && code(v) == "busy").count();
    let served = results.iter().filter(|(s, v)| *s == 200 && v["error"].is_null()).count();
    assert_eq!(busy + served, 8, "every answer is a state or a typed busy error: {results:?}");
    assert!(busy >= 4 && (1..=4).contains(&served), "queue of 2 under a flood of 8: {busy} busy, {served} served");
    let text = ureq::get(&srv.url("/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(text.contains(&format!("sightline_busy_rejections_total {busy}")), "{text}");
    assert!(text.contains("sightline_sessions_open 2"), "{text}");
}

#[test]
fn idle_sessions_are_ended() {
    let srv = InProcServer::start(HubConfig { idle_timeout: Duration::from_millis(800), ..attached() }, None);
    let (id, _) = new_session(&srv, json!({ "screenshot": false }));
    let (status, _) = get(&srv.url(&format!("/v1/sessions/{id}/state")));
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(2500));
    let (status, v) = get(&srv.url(&format!("/v1/sessions/{id}/state")));
    assert_eq!((status, code(&v)), (404, "session_ended"));
    assert_eq!(v["error"]["detail"]["reason"], "idle_timeout");
    assert_eq!(get(&srv.url("/healthz")).1["sessions"], 0);
}

#[test]
fn token_bounds_and_no_cors() {
    let token = "0123456789abcdef-token";
    let srv = InProcServer::start(attached(), Some(token));
    let bearer = format!("Bearer {token}");
    let (status, v, head) = http("GET", &srv.url("/healthz"), None, &[]);
    assert_eq!((status, code(&v)), (401, "unauthorized"));
    assert!(head.contains("www-authenticate: Bearer"), "{head}");
    let (status, _, _) = http("GET", &srv.url("/healthz"), None, &[("authorization", "Bearer 0123456789abcdef-tokeN")]);
    assert_eq!(status, 401);
    let (status, _, _) = http("POST", &srv.url("/v1/sessions"), Some("{}"), &[("authorization", token)]);
    assert_eq!(status, 401, "the scheme is required");
    let (status, v, _) = http("GET", &srv.url("/healthz"), None, &[("authorization", &bearer)]);
    assert_eq!((status, v["status"].as_str()), (200, Some("ok")));
    let (status, _, _) = http("GET", &srv.url("/mcp"), None, &[]);
    assert_eq!(status, 401, "/mcp is behind the token too");
    let big = "x".repeat(sightline_server::MAX_HEADERS + 1);
    let (status, v, _) = http("GET", &srv.url("/healthz"), None, &[("authorization", &bearer), ("x-filler", &big)]);
    assert_eq!((status, code(&v)), (431, "headers_too_large"));
    let body = format!("{{\"url\":\"{}\"}}", "a".repeat(sightline_server::MAX_BODY));
    let (status, _, _) = http("POST", &srv.url("/v1/sessions"), Some(&body), &[("authorization", &bearer)]);
    assert_eq!(status, 413);
    let (status, _, _) = http(
        "POST",
        &srv.url("/mcp"),
        Some(&body),
        &[("authorization", &bearer), ("accept", "application/json, text/event-stream")],
    );
    assert_eq!(status, 413, "/mcp bodies are bounded too");
    // CORS is off: a preflight gets no allow-origin, and neither does a plain request.
    let (_, _, head) = http(
        "OPTIONS",
        &srv.url("/v1/sessions"),
        None,
        &[("authorization", &bearer), ("origin", "http://evil.test"), ("access-control-request-method", "POST")],
    );
    assert!(!head.contains("access-control-allow-origin"), "{head}");
    let (_, _, head) =
        http("GET", &srv.url("/healthz"), None, &[("authorization", &bearer), ("origin", "http://evil.test")]);
    assert!(!head.contains("access-control-allow-origin"), "{head}");
}

#[test]
fn openapi_healthz_and_metrics() {
    let srv = InProcServer::start(attached(), None);
    let (_, doc) = get(&srv.url("/openapi.json"));
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for t in sightline_api::TOOLS {
        let p = &paths[&format!("/v1/sessions/{{id}}/tools/{}", t.name)]["post"];
        let schema = &p["requestBody"]["content"]["application/json"]["schema"];
        // The same schema as the tool table's, minus the session the path implies.
        let mut expected = (t.schema)();
        if let Some(props) = expected["properties"].as_object_mut() {
            props.remove("session");
        }
        assert_eq!(schema["properties"], expected["properties"], "{}", t.name);
    }
    for p in ["/v1/sessions", "/v1/sessions/{id}", "/v1/sessions/{id}/act", "/v1/sessions/{id}/state", "/mcp"] {
        assert!(paths.contains_key(p), "{p} missing from openapi.json");
    }
    let (id, _) = new_session(&srv, json!({ "url": url("/signin.html"), "screenshot": false }));
    post(&srv.url(&format!("/v1/sessions/{id}/act")), json!({ "action": "click_element", "element_index": 42 }));
    get(&srv.url(&format!("/v1/sessions/{id}/state")));
    let (_, health) = get(&srv.url("/healthz"));
    assert_eq!((health["status"].as_str(), health["sessions"].as_u64()), (Some("ok"), Some(1)));
    let text = ureq::get(&srv.url("/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
    for line in [
        "sightline_sessions_open 1",
        "sightline_actions_total{outcome=\"ok\"} 1",
        "sightline_actions_total{outcome=\"INVALID_ELEMENT_INDEX\"} 1",
        "sightline_action_seconds_count 2",
        "sightline_capture_seconds_count 1",
        "sightline_browser_restarts_total 0",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
}

#[test]
fn sigterm_ends_sessions_closes_the_browser_and_exits_0() {
    world();
    let mut srv = ServeProc::start(&["--listen", "127.0.0.1:0"]);
    let (status, v) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "{v}");
    let browsers = srv.children();
    assert_eq!(browsers.len(), 1, "one launched browser for every session");
    assert!(group_alive(browsers[0]));
    let status = srv.terminate(20).expect("exits within 20 s of SIGTERM");
    assert_eq!(status.code(), Some(0), "stderr:\n{}", srv.stderr.lock().unwrap());
    assert!(!group_alive(browsers[0]), "the browser's processes outlived the server");
    assert!(srv.stderr.lock().unwrap().contains("ending sessions"));
}

#[test]
fn a_crashed_browser_ends_its_sessions_and_the_server_goes_on() {
    world();
    let mut srv = ServeProc::start(&["--listen", "127.0.0.1:0"]);
    let (_, v) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    let id = v["session_id"].as_str().unwrap().to_string();
    let browser = srv.children()[0];
    // SAFETY: kill(2) on the browser group of the server this test started.
    unsafe {
        libc::kill(-browser, libc::SIGKILL);
    }
    let until = Instant::now() + Duration::from_secs(10);
    let (status, err) = loop {
        let (status, v) = get(&srv.url(&format!("/v1/sessions/{id}/state?screenshot=false")));
        if status != 200 || Instant::now() > until {
            break (status, v);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!((status, code(&err)), (404, "browser_crashed"), "{err}");
    assert_eq!(get(&srv.url("/healthz")).0, 200, "the server goes on");
    let (status, v) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "a new session gets a new browser: {v}");
    assert!(v["state"]["page_content"].as_str().unwrap().contains("Sign In"));
    let text = ureq::get(&srv.url("/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(text.contains("sightline_browser_restarts_total 1"), "{text}");
    assert!(text.contains("sightline_sessions_ended_total{reason=\"browser_crashed\"} 1"), "{text}");
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
}

#[test]
fn a_public_bind_needs_a_token_file() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token-file"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["serve", "--token", "on-the-command-line"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a token is never taken on the command line");
}

/// `http` with a bearer token.
fn as_(token: &str, method: &str, url: &str, body: Option<Value>) -> (u16, Value, String) {
    let body = body.map(|b| b.to_string());
    http(method, url, body.as_deref(), &[("authorization", &format!("Bearer {token}"))])
}

/// A response head without the lines that differ between any two answers.
fn head_of(head: &str) -> Vec<&str> {
    head.lines().filter(|l| !l.starts_with("date:")).collect()
}

#[test]
fn two_principals_each_see_and_drive_only_their_own_sessions() {
    let team = sightline_server::Principals::parse(&format!("alice {ALICE}\n{BOB}\n")).unwrap();
    let srv = InProcServer::start_with(attached(), team);
    let create = |token: &str, body: Value| {
        let (status, v, _) = as_(token, "POST", &srv.url("/v1/sessions"), Some(body));
        assert_eq!(status, 201, "{v}");
        v["session_id"].as_str().unwrap().to_string()
    };
    let a1 = create(ALICE, json!({ "url": url("/signin.html"), "screenshot": false }));
    let a2 = create(ALICE, json!({ "screenshot": false }));
    let b1 = create(BOB, json!({ "screenshot": false }));
    let list = |token: &str| as_(token, "GET", &srv.url("/v1/sessions"), None).1["sessions"].clone();
    let mut alices = vec![a1.clone(), a2.clone()];
    alices.sort();
    assert_eq!(list(ALICE), json!(alices), "alice lists her own two");
    assert_eq!(list(BOB), json!([b1]), "bob lists his one");
    let (status, _, _) =
        http("GET", &srv.url("/v1/sessions"), None, &[("authorization", "Bearer nobody-0123456789abcdef")]);
    assert_eq!(status, 401);

    // Alice types into her first session.
    let (_, typed, _) = as_(
        ALICE,
        "POST",
        &srv.url(&format!("/v1/sessions/{a1}/act")),
        Some(json!({ "action": "input_text", "element_index": 1, "text": "ada@example.com" })),
    );
    assert_eq!(typed["element_index"]["1"]["attributes"]["value"], "ada@example.com", "{typed}");

    // Every route on alice's session answers bob exactly as on an id that never existed
    // (the same length, so even Content-Length agrees; the id itself is echoed back).
    let never = format!("s-{}", "0".repeat(a1.len() - 2));
    let routes: [(&str, &str, Option<Value>); 6] = [
        ("GET", "/state", None),
        ("GET", "/state?screenshot=false", None),
        ("POST", "/act", Some(json!({ "action": "navigate", "url": url("/signin.html") }))),
        ("POST", "/tools/browser_navigate", Some(json!({ "url": url("/signin.html") }))),
        ("POST", "/tools/end_session", Some(json!({}))),
        ("DELETE", "", None),
    ];
    for (method, path, body) in routes {
        let (s_foreign, foreign, h_foreign) =
            as_(BOB, method, &srv.url(&format!("/v1/sessions/{a1}{path}")), body.clone());
        let (s_never, unknown, h_never) = as_(BOB, method, &srv.url(&format!("/v1/sessions/{never}{path}")), body);
        assert_eq!((s_foreign, code(&foreign)), (404, "session_not_found"), "{method} {path}: {foreign}");
        let unknown = serde_json::to_string(&unknown).unwrap().replace(&never, &a1);
        assert_eq!(serde_json::to_string(&foreign).unwrap(), unknown, "{method} {path}");
        assert_eq!((s_foreign, head_of(&h_foreign)), (s_never, head_of(&h_never)), "{method} {path}");
    }

    // Nothing bob tried reached alice's session: it is open, on her page, with what she typed.
    assert_eq!(list(ALICE), json!(alices));
    let (status, state, _) = as_(ALICE, "GET", &srv.url(&format!("/v1/sessions/{a1}/state?screenshot=false")), None);
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["element_index"]["1"]["attributes"]["value"], "ada@example.com");
    assert!(state["url"].as_str().unwrap().ends_with("/signin.html"), "{state}");

    // An ended session of alice's: she is told it ended; bob still hears of no such session.
    let (status, _, _) = as_(ALICE, "DELETE", &srv.url(&format!("/v1/sessions/{a2}")), None);
    assert_eq!(status, 204);
    let (status, mine, _) = as_(ALICE, "GET", &srv.url(&format!("/v1/sessions/{a2}/state")), None);
    assert_eq!((status, code(&mine)), (404, "session_ended"), "{mine}");
    let (status, theirs, _) = as_(BOB, "GET", &srv.url(&format!("/v1/sessions/{a2}/state")), None);
    assert_eq!((status, code(&theirs)), (404, "session_not_found"), "{theirs}");
    assert_eq!(list(ALICE), json!([a1]));

    // Bob's own session answers him, and alice cannot end it.
    let (status, _, _) = as_(ALICE, "DELETE", &srv.url(&format!("/v1/sessions/{b1}")), None);
    assert_eq!(status, 404);
    let (status, _, _) = as_(BOB, "GET", &srv.url(&format!("/v1/sessions/{b1}/state?screenshot=false")), None);
    assert_eq!(status, 200);

    // /metrics counts for everyone and names no session.
    let text = ureq::get(&srv.url("/metrics"))
        .header("authorization", &format!("Bearer {BOB}"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(text.contains("sightline_sessions_open 2"), "{text}");
    for id in [&a1, &a2, &b1] {
        assert!(!text.contains(id.as_str()), "/metrics names session {id}:\n{text}");
    }
}

#[test]
fn a_tool_name_from_the_path_never_becomes_a_metrics_label() {
    let srv = InProcServer::start(attached(), None);
    let (id, _) = new_session(&srv, json!({ "screenshot": false }));
    let (status, v) = post(&srv.url(&format!("/v1/sessions/{id}/tools/{id}")), json!({}));
    assert_eq!((status, code(&v)), (404, "unknown_tool"));
    let text = ureq::get(&srv.url("/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(!text.contains(&id), "{text}");
    assert!(text.contains("sightline_tool_calls_total{tool=\"unknown\",outcome=\"unknown_tool\"} 1"), "{text}");
}

/// A token file of `lines` with `mode` in a fresh directory.
#[test]
fn mcp_sessions_belong_to_the_token_that_opened_them() {
    world();
    let tokens = token_file("mcp", &format!("alice {ALICE}\nbob {BOB}\n"), 0o600);
    let mut srv = ServeProc::with_tokens(&tokens, &["--log", "trace"]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_http_principals.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .args([&srv.base, &url("/signin.html"), ALICE, BOB])
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'mcp'") {
        panic!("this test needs the official MCP client: python3 -m pip install mcp (./x test installs it)");
    }
    assert!(out.status.success(), "{stderr}\nserver:\n{}", srv.stderr.lock().unwrap());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["distinct_mcp_sessions"], true);
    let (a, b) = (v["lists"]["a"].as_array().unwrap(), v["lists"]["b"].as_array().unwrap());
    assert_eq!((a.len(), b.len()), (1, 1), "each principal lists only its own MCP-held session: {v}");
    assert_ne!(a, b);
    // Bob on alice's MCP session id is answered exactly as on an id nobody was given.
    for m in ["post", "get", "delete"] {
        assert_eq!(v[format!("foreign_{m}")], v[format!("unknown_{m}")], "{m}: {v}");
    }
    assert_eq!(v["foreign_post"][0], 404, "{v}");
    assert_eq!(v["foreign_get"][0], 404, "{v}");
    assert_eq!(v["foreign_http_state"][0], 404, "{v}");
    assert_eq!(v["foreign_http_state"][1]["error"]["code"], "session_not_found", "{v}");
    // Alice's session was neither read nor ended by any of it.
    assert_eq!(v["a_email_value"], "a@example.com", "{v}");
    assert_eq!(v["b_url"], "about:blank", "{v}");
    let log = srv.stderr.lock().unwrap().clone();
    assert!(log.contains("2 principals (alice, bob)"), "{log}");
    // Logged at trace level, every layer (rmcp, axum, ours) included: no token anywhere.
    assert!(log.lines().count() > 100, "trace logging was off:\n{log}");
    assert!(!log.contains(ALICE) && !log.contains(BOB), "a token was logged:\n{log}");
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
    let _ = std::fs::remove_dir_all(tokens.parent().unwrap());
}

#[test]
fn a_token_file_others_can_read_is_refused_at_start() {
    let tokens = token_file("open", &format!("alice {ALICE}\n"), 0o644);
    let serve = |f: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["serve", "--listen", "127.0.0.1:0", "--token-file", f.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = serve(&tokens);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("mode 0644") && stderr.contains("chmod 600"), "{stderr}");
    assert!(!stderr.contains(ALICE), "the refusal shows the token: {stderr}");
    // A short token is refused by line, without showing it.
    let short = token_file("short", "alice 0123456789abcdef\nbob tiny-token\n", 0o600);
    let out = serve(&short);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 2: the token is shorter than 16 characters"), "{stderr}");
    assert!(!stderr.contains("tiny-token"), "{stderr}");
    for f in [tokens, short] {
        let _ = std::fs::remove_dir_all(f.parent().unwrap());
    }
}

#[test]
fn sessions_are_created_side_by_side_not_one_after_another() {
    world();
    let srv = InProcServer::start(attached(), None);
    gate::a_held_start_does_not_hold_up_the_next(&srv);
}

#[test]
fn a_client_that_hangs_up_while_its_session_starts_leaves_no_session() {
    world();
    let srv = InProcServer::start(attached(), None);
    let gate = Gate::start();
    let mut conn = std::net::TcpStream::connect(srv.base.trim_start_matches("http://")).unwrap();
    let body = json!({ "url": format!("{}/held", gate.base), "screenshot": false }).to_string();
    let req = format!(
        "POST /v1/sessions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    std::io::Write::write_all(&mut conn, req.as_bytes()).unwrap();
    gate.wait_seen(1);
    // The session exists while its start page is held; the client hangs up.
    let (_, listed) = get(&srv.url("/v1/sessions"));
    assert_eq!(listed["sessions"].as_array().map(Vec::len), Some(1), "{listed}");
    drop(conn);
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, listed) = get(&srv.url("/v1/sessions"));
        if listed["sessions"].as_array().is_some_and(Vec::is_empty) {
            break;
        }
        assert!(Instant::now() < until, "the abandoned session is still open: {listed}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!gate.released(), "ended while its start page was still held");
    gate.release();
}
