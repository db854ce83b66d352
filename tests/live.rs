//! A person in the loop (issue 36): `request_human` parks a `serve` session
//! and answers a live link; the person's side is driven here with the HTTP
//! requests the live page's script makes, and by the live page itself: in a
//! second, separately launched Chromium with real mouse and key events, and as
//! the owner's page in the shared one; `wait_for_human` collects the hand-back.
//! `rpc --live`, `mcp --live` (under the official MCP client) and `env --live` hand over too.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use sightline_server::{BrowserSource, HubConfig};

const TOKEN: &str = "live-test-token-0123456789";

fn attached() -> HubConfig {
    HubConfig { source: BrowserSource::Connect(browser_endpoint()), ..HubConfig::default() }
}

/// An agent's call with the bearer token: (status, body).
fn call(srv: &InProcServer, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let auth = format!("Bearer {TOKEN}");
    let body = body.map(|b| b.to_string());
    let (s, v, _) = http(method, &srv.url(path), body.as_deref(), &[("authorization", &auth)]);
    (s, v)
}

fn tool(srv: &InProcServer, id: &str, name: &str, args: Value) -> (u16, Value) {
    call(srv, "POST", &format!("/v1/sessions/{id}/tools/{name}"), Some(args))
}

/// A request of the person: no bearer token, only what the link carries.
fn person(method: &str, url: &str, body: Option<Value>) -> (u16, Value, String) {
    let body = body.map(|b| b.to_string());
    http(method, url, body.as_deref(), &[])
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_else(|| panic!("not a typed error: {v}"))
}

fn open(srv: &InProcServer) -> String {
    let (status, v) =
        call(srv, "POST", "/v1/sessions", Some(json!({ "url": url("/live/second-factor.html"), "screenshot": false })));
    assert_eq!(status, 201, "{v}");
    v["session_id"].as_str().unwrap().to_string()
}

/// The live link's endpoint `what` (`status`, `frame`, `input`, `hand_back`), ticket kept.
fn endpoint(live_url: &str, what: &str) -> String {
    let (path, query) = live_url.split_once('?').unwrap();
    format!("{path}/{what}?{query}")
}

/// The first frame of a live view's server-sent event stream (the page's screencast).
fn first_streamed_frame(url: &str) -> Vec<u8> {
    use base64::Engine;
    use std::io::BufRead;
    let resp = ureq::get(url).call().unwrap();
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let lines = std::io::BufReader::new(resp.into_body().into_reader()).lines();
    for line in lines {
        if let Some(data) = line.unwrap().strip_prefix("data:") {
            return base64::engine::general_purpose::STANDARD.decode(data.trim()).unwrap();
        }
    }
    panic!("the stream ended without a frame");
}

fn state(srv: &InProcServer, id: &str) -> Value {
    let (status, v) = call(srv, "GET", &format!("/v1/sessions/{id}/state?screenshot=false"), None);
    assert_eq!(status, 200, "{v}");
    v
}

fn request_human(srv: &InProcServer, id: &str) -> String {
    let (status, v) = tool(srv, id, "request_human", json!({ "reason": "enter the code from your phone" }));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["expires_in_s"], 1800);
    let live = v["live_url"].as_str().unwrap().to_string();
    assert!(live.starts_with(&srv.url(&format!("/live/{id}?ticket="))), "{live}");
    live
}

#[test]
fn a_person_takes_over_clicks_types_and_hands_back_with_a_note() {
    let srv = InProcServer::start(attached(), Some(TOKEN));
    let id = open(&srv);
    let (_, snap) = tool(&srv, &id, "get_browser_state", json!({ "snapshot_format": "semantic_v2" }));
    let confirm =
        snap["refs"].as_array().unwrap().iter().find(|r| r["name"] == "Confirm device").unwrap()["ref"].clone();
    let before = state(&srv, &id);
    let live = request_human(&srv, &id);

    // Parked: agent actions answer handed_over and change nothing; reads work.
    let (status, refused) = tool(&srv, &id, "browser_click", json!({ "ref": confirm }));
    assert_eq!((status, code(&refused)), (409, "handed_over"), "{refused}");
    assert_eq!(refused["error"]["detail"]["reason"], "enter the code from your phone");
    let (status, refused) =
        call(&srv, "POST", &format!("/v1/sessions/{id}/act"), Some(json!({ "action": "scroll", "direction": "down" })));
    assert_eq!((status, code(&refused)), (409, "handed_over"), "{refused}");
    let (status, refused) = tool(&srv, &id, "run", json!({ "script": "await browser.goto('about:blank')" }));
    assert_eq!((status, code(&refused)), (409, "handed_over"), "{refused}");
    let after = state(&srv, &id);
    assert_eq!(after["state_hash"], before["state_hash"]);
    assert!(after["page_content"].as_str().unwrap().contains("Waiting for the device"), "{after}");

    // The live page: with the ticket, and only with it.
    let (status, _, head) = person("GET", &live, None);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(head.contains("cache-control: no-store") && head.contains("referrer-policy: no-referrer"), "{head}");
    let (status, v, _) = person("GET", &srv.url(&format!("/live/{id}")), None);
    assert_eq!((status, code(&v)), (401, "unauthorized"));
    let wrong = format!("{}?ticket=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", srv.url(&format!("/live/{id}")));
    let (status, v, _) = person("GET", &wrong, None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    let ticket = live.split("ticket=").nth(1).unwrap();
    let (status, v, _) = person("GET", &srv.url(&format!("/live/s-0000000000000000?ticket={ticket}")), None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "another session's id with this ticket: {v}");

    let (status, st, _) = person("GET", &endpoint(&live, "status"), None);
    assert_eq!(status, 200, "{st}");
    assert_eq!(
        (st["state"].as_str(), st["reason"].as_str()),
        (Some("handed_over"), Some("enter the code from your phone"))
    );
    assert_eq!(st["viewport"], json!([1280, 720]));
    assert!(st["url"].as_str().unwrap().ends_with("/live/second-factor.html"), "{st}");
    let refused_click =
        st["recent"].as_array().unwrap().iter().any(|r| r["tool"] == "browser_click" && r["outcome"] == "handed_over");
    assert!(refused_click, "recent actions list the refused click: {st}");
    let frame = ureq::get(&endpoint(&live, "frame")).call().unwrap().body_mut().read_to_vec().unwrap();
    assert_eq!(&frame[..3], &[0xff, 0xd8, 0xff], "a JPEG frame");
    let streamed = first_streamed_frame(&endpoint(&live, "frames"));
    assert_eq!(&streamed[..3], &[0xff, 0xd8, 0xff], "a JPEG frame from the screencast");

    // The agent waits while the person works.
    let waiter = {
        let (base, id) = (srv.base.clone(), id.clone());
        std::thread::spawn(move || {
            let auth = format!("Bearer {TOKEN}");
            let body = json!({ "timeout_s": 120, "screenshot": false }).to_string();
            let url = format!("{base}/v1/sessions/{id}/tools/wait_for_human");
            let (s, v, _) = http("POST", &url, Some(&body), &[("authorization", &auth)]);
            (s, v)
        })
    };

    // The person's click reaches the page (the button is at 20..220 x 100..140).
    let input = endpoint(&live, "input");
    let (status, v, _) = person("POST", &input, Some(json!({ "type": "click", "x": 100, "y": 120 })));
    assert_eq!(status, 200, "{v}");
    assert!(state(&srv, &id)["page_content"].as_str().unwrap().contains("Device confirmed by a person"));
    // Typing: focus the field (20..320 x 20..60), type, and the DOM has the value.
    person("POST", &input, Some(json!({ "type": "click", "x": 150, "y": 40 })));
    let (status, v, _) = person("POST", &input, Some(json!({ "type": "text", "text": "123456" })));
    assert_eq!(status, 200, "{v}");
    let typed = state(&srv, &id);
    let values: Vec<&Value> =
        typed["element_index"].as_object().unwrap().values().map(|e| &e["attributes"]["value"]).collect();
    assert!(values.contains(&&json!("123456")), "{typed}");
    let (status, v, _) = person("POST", &input, Some(json!({ "type": "click", "x": 5000, "y": 1 })));
    assert_eq!((status, code(&v)), (400, "invalid_params"), "outside the viewport: {v}");
    // Enter submits the form: the person visits another page.
    let (status, v, _) = person("POST", &input, Some(json!({ "type": "key", "key": "Enter" })));
    assert_eq!(status, 200, "{v}");
    assert!(!waiter.is_finished(), "wait_for_human returned before the hand-back");

    let (status, v, _) = person(
        "POST",
        &endpoint(&live, "hand_back"),
        Some(json!({ "note": "Code entered; the device is trusted now." })),
    );
    assert_eq!(status, 200, "{v}");
    let (status, back) = waiter.join().unwrap();
    assert_eq!(status, 200, "{back}");
    assert_eq!(back["note"], "Code entered; the device is trusted now.");
    assert_eq!(back["inputs"], 4);
    let fields = back["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 1, "{back}");
    assert_eq!(fields[0]["field"], "code");
    assert!(fields[0]["url"].as_str().unwrap().ends_with("/live/second-factor.html"), "{back}");
    assert_eq!(fields[0].as_object().unwrap().len(), 2, "the field's name and page, never what was typed: {back}");
    let visited: Vec<&str> = back["visited"].as_array().unwrap().iter().map(|v| v["url"].as_str().unwrap()).collect();
    assert!(visited.first().unwrap().ends_with("/live/second-factor.html"), "{visited:?}");
    assert!(visited.last().unwrap().ends_with("/submitted.html?code=123456"), "{visited:?}");
    assert!(back["state"]["url"].as_str().unwrap().ends_with("/submitted.html?code=123456"), "{back}");
    assert!(back["state"]["page_content"].as_str().unwrap().contains("query: ?code=123456"), "{back}");

    // The ticket is spent; the agent acts again.
    let (status, v, _) = person("GET", &live, None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    let (status, v, _) = person("POST", &input, Some(json!({ "type": "text", "text": "x" })));
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    let (status, v) =
        call(&srv, "POST", &format!("/v1/sessions/{id}/act"), Some(json!({ "action": "scroll", "direction": "down" })));
    assert_eq!(status, 200, "{v}");
    assert!(v["error"].is_null(), "{v}");
    let (status, v) = tool(&srv, &id, "wait_for_human", json!({ "timeout_s": 1 }));
    assert_eq!((status, code(&v)), (409, "not_handed_over"), "a hand-back is collected once: {v}");
}

#[test]
fn wait_for_human_times_out_typed_and_cancel_human_unparks() {
    let srv = InProcServer::start(attached(), Some(TOKEN));
    let id = open(&srv);
    let live = request_human(&srv, &id);
    let (status, v) = tool(&srv, &id, "wait_for_human", json!({ "timeout_s": 0.5 }));
    assert_eq!((status, code(&v)), (408, "human_timeout"), "{v}");
    // Still handed over after the time-out.
    let (status, v) =
        call(&srv, "POST", &format!("/v1/sessions/{id}/act"), Some(json!({ "action": "scroll", "direction": "down" })));
    assert_eq!((status, code(&v)), (409, "handed_over"), "{v}");
    // Asking again gives a new link; the old one is revoked.
    let again = request_human(&srv, &id);
    assert_ne!(again, live);
    let (status, v, _) = person("GET", &endpoint(&live, "status"), None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    let (status, _, _) = person("GET", &endpoint(&again, "status"), None);
    assert_eq!(status, 200);

    let (status, v) = tool(&srv, &id, "cancel_human", json!({}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["was"], "handed_over");
    let (status, v, _) = person("GET", &again, None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    let (status, v) =
        call(&srv, "POST", &format!("/v1/sessions/{id}/act"), Some(json!({ "action": "scroll", "direction": "down" })));
    assert_eq!(status, 200, "{v}");
    let (status, v) = tool(&srv, &id, "wait_for_human", json!({ "timeout_s": 1 }));
    assert_eq!((status, code(&v)), (409, "not_handed_over"), "{v}");

    // The owner's frame stream (no ticket) stays open; stopping the server ends it.
    let frames = srv.url(&format!("/live/{id}/frames"));
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let auth = format!("Bearer {TOKEN}");
        let resp = ureq::get(&frames).header("authorization", &auth).call().unwrap();
        std::io::BufReader::new(resp.into_body().into_reader())
            .lines()
            .map_while(Result::ok)
            .filter(|l| l.starts_with("data:"))
            .count()
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!reader.is_finished(), "the frame stream is open");
    let mut srv = srv;
    assert!(srv.stop(), "the server ended by itself with a frame stream open (not cut off at the bound)");
    assert!(reader.join().unwrap() >= 1, "the stream carried frames until the stop");
}

#[test]
fn a_hand_back_before_the_wait_is_returned_at_once_and_the_page_renders_in_a_browser() {
    let srv = InProcServer::start(attached(), Some(TOKEN));
    let id = open(&srv);
    let idle = open(&srv);
    let live = request_human(&srv, &id);

    // The operator's list: every session of the token, and who holds it.
    let (status, list) = call(&srv, "GET", "/live", None);
    assert_eq!(status, 200, "{list}");
    let sessions = list["sessions"].as_array().unwrap();
    let row = |sid: &str| sessions.iter().find(|s| s["session_id"] == sid).unwrap_or_else(|| panic!("{sid}: {list}"));
    assert_eq!(row(&id)["state"], "handed_over");
    assert_eq!(row(&id)["reason"], "enter the code from your phone");
    assert_eq!(row(&idle)["state"], "idle");
    assert_eq!(row(&idle)["title"], "Second factor");
    let (status, _, _) = person("GET", &srv.url("/live"), None);
    assert_eq!(status, 401, "the list needs the bearer token");

    // The live page itself, in a real browser: its script shows the frames and the reason.
    run(async {
        let tab = tab().await;
        tab.navigate(&live).await.unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        let seen = loop {
            let v = tab
                .evaluate(
                    "[document.getElementById('frame').naturalWidth, document.getElementById('banner').textContent, document.getElementById('frame').src.slice(0, 23)]",
                )
                .await
                .unwrap();
            if v[0].as_u64().unwrap_or(0) > 0 || Instant::now() > until {
                break v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(seen[0], 1280, "the frame is the viewport: {seen}");
        assert!(seen[1].as_str().unwrap().contains("enter the code from your phone"), "{seen}");
        assert_eq!(seen[2], "data:image/jpeg;base64,", "the frame came over the screencast stream: {seen}");
        tab.close().await;
    });

    let (status, v, _) = person("POST", &endpoint(&live, "hand_back"), Some(json!({})));
    assert_eq!(status, 200, "{v}");
    // Handed back before the wait: it answers the hand-back (a wait that blocked would end in human_timeout).
    let (status, back) = tool(&srv, &id, "wait_for_human", json!({ "timeout_s": 30, "screenshot": false }));
    assert_eq!(status, 200, "{back}");
    assert_eq!(back["note"], Value::Null);
    assert_eq!(back["inputs"], 0);
    assert!(back["state"]["url"].as_str().unwrap().ends_with("/live/second-factor.html"), "{back}");
}

#[test]
fn request_human_without_a_live_view_is_typed() {
    // `rpc`'s API (stdio): no listener for a live page.
    let api = api();
    run(async {
        let bound = ok(&api, "bind_browser", json!({ "session": "alone" })).await;
        let (target, tab) = (bound["target_id"].clone(), bound["tabs"][0]["tab_id"].clone());
        let e = fails(
            &api,
            "request_human",
            json!({ "session": "alone", "target_id": target, "tab_id": tab, "reason": "help" }),
        )
        .await;
        assert_eq!(e.code, sightline_api::ToolCode::LiveUnavailable, "{e}");
        let e = fails(&api, "wait_for_human", json!({ "session": "alone", "timeout_s": 0 })).await;
        assert_eq!(e.code, sightline_api::ToolCode::NotHandedOver, "{e}");
        ok(&api, "end_session", json!({ "session": "alone" })).await;
    });
}

#[test]
fn the_element_index_protocol_hands_over_and_waits_as_actions() {
    let srv = InProcServer::start(attached(), Some(TOKEN));
    let id = open(&srv);
    let act = |a: Value| call(&srv, "POST", &format!("/v1/sessions/{id}/act"), Some(a));
    let before = state(&srv, &id);
    let (status, asked) = act(json!({ "action": "request_human", "reason": "confirm the device" }));
    assert_eq!(status, 200, "{asked}");
    assert_eq!(asked["state_hash"], before["state_hash"], "the same state, with the link");
    let live = asked["human"]["live_url"].as_str().unwrap().to_string();
    assert!(live.starts_with(&srv.url(&format!("/live/{id}?ticket="))), "{asked}");
    let (status, v) = act(json!({ "action": "click_element", "element_index": 1 }));
    assert_eq!((status, code(&v)), (409, "handed_over"), "{v}");
    // A time-out is an error inside the State Object, which is the previous one.
    let (status, v) = act(json!({ "action": "wait_for_human", "timeout_s": 0 }));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["error"]["code"], "HUMAN_TIMEOUT", "{v}");
    assert_eq!(v["state_hash"], before["state_hash"]);
    assert!(v.get("human").is_none());

    person("POST", &endpoint(&live, "input"), Some(json!({ "type": "click", "x": 100, "y": 120 })));
    let (status, _, _) = person("POST", &endpoint(&live, "hand_back"), Some(json!({ "note": "done" })));
    assert_eq!(status, 200);
    let (status, back) = act(json!({ "action": "wait_for_human", "timeout_s": 30 }));
    assert_eq!(status, 200, "{back}");
    assert!(back["error"].is_null(), "{back}");
    assert_eq!(back["human"]["note"], "done");
    assert_eq!(back["human"]["inputs"], 1);
    assert!(back["page_content"].as_str().unwrap().contains("Device confirmed by a person"), "{back}");
    let (status, again) = act(json!({ "action": "wait_for_human" }));
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["error"]["code"], "HUMAN_UNAVAILABLE", "{again}");
}

#[test]
fn a_bare_environment_answers_human_unavailable() {
    let mut env = run(env_with("/live/second-factor.html", sightline_api::EnvOptions { screenshot: false }));
    let turn = run(step(&mut env, json!({ "action": "request_human", "reason": "help" })));
    let e = turn.state.error.as_ref().expect("an error");
    assert_eq!(e.code.as_str(), "HUMAN_UNAVAILABLE", "{}", e.message);
    let bad = run(step(&mut env, json!({ "action": "wait_for_human", "timeout_s": 7200 })));
    assert_eq!(bad.state.error.unwrap().code.as_str(), "ACTION_VALIDATION_FAILED");
}

/// `sightline rpc --live ADDR`: a person takes over a session of the stdio JSON-RPC server.
#[test]
fn rpc_with_live_serves_the_live_view_on_its_own_listener() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["rpc", "--live", "127.0.0.1:0", "--connect", &browser_endpoint()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sightline rpc");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let base = line
        .split("live views on ")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"))
        .split("/live/")
        .next()
        .unwrap()
        .to_string();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut id = 0;
    let mut rpc = |method: &str, params: Value| -> Value {
        id += 1;
        writeln!(stdin, "{}", json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).unwrap();
        let mut answer = String::new();
        stdout.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap()
    };
    let bound = rpc("bind_browser", json!({ "session": "s1" }));
    let (target, tab) = (bound["result"]["target_id"].clone(), bound["result"]["tabs"][0]["tab_id"].clone());
    let at = json!({ "session": "s1", "target_id": target, "tab_id": tab });
    let with = |extra: Value| {
        let mut v = at.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    rpc("browser_navigate", with(json!({ "url": url("/live/second-factor.html") })));
    let asked = rpc("request_human", with(json!({ "reason": "confirm the device" })));
    let live = asked["result"]["live_url"].as_str().unwrap_or_else(|| panic!("{asked}")).to_string();
    assert!(live.starts_with(&format!("{base}/live/s1?ticket=")), "{live} on {base}");
    let clicked = rpc("browser_scroll", with(json!({ "direction": "down" })));
    assert_eq!(clicked["error"]["data"]["code"], "handed_over", "{clicked}");

    let (status, _, _) = person("GET", &live, None);
    assert_eq!(status, 200);
    let (status, v, _) = person("GET", &format!("{base}/live/s1"), None);
    assert_eq!((status, code(&v)), (401, "unauthorized"), "no ticket, no bearer token here: {v}");
    let (status, v, _) =
        person("POST", &endpoint(&live, "input"), Some(json!({ "type": "click", "x": 100, "y": 120 })));
    assert_eq!(status, 200, "{v}");
    let (status, v, _) = person("POST", &endpoint(&live, "hand_back"), Some(json!({ "note": "confirmed" })));
    assert_eq!(status, 200, "{v}");
    let back = rpc("wait_for_human", json!({ "session": "s1", "timeout_s": 10, "screenshot": false }));
    assert_eq!(back["result"]["note"], "confirmed", "{back}");
    assert!(
        back["result"]["state"]["page_content"].as_str().unwrap().contains("Device confirmed by a person"),
        "{back}"
    );
    let (status, v, _) = person("GET", &live, None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    rpc("end_session", json!({ "session": "s1" }));
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `sightline env --live ADDR`: the JSON-lines environment's own tab handed to a
/// person and back, as element-index actions; other actions meanwhile answer
/// `HANDED_OVER` with the state unchanged, and the live view lists them.
#[test]
fn env_with_live_hands_its_own_tab_to_a_person() {
    let mut env = Proc::start(&["env", &url("/live/second-factor.html"), "--no-screenshot", "--live", "127.0.0.1:0"]);
    let first = env.read(ACT);
    assert!(first["error"].is_null(), "{first}");
    let asked = env.send(r#"{"action": "request_human", "reason": "confirm the device"}"#);
    assert!(asked["error"].is_null(), "{asked}");
    assert_eq!(asked["state_hash"], first["state_hash"], "the same state, with the link");
    let live = asked["human"]["live_url"].as_str().unwrap_or_else(|| panic!("{asked}")).to_string();
    assert!(live.starts_with("http://127.0.0.1:") && live.contains("/live/env?ticket="), "{live}");

    let refused = env.send(r#"{"action": "click_element", "element_index": 1}"#);
    assert_eq!(refused["error"]["code"], "HANDED_OVER", "{refused}");
    assert_eq!(refused["state_hash"], first["state_hash"], "nothing changed");
    let (status, v, _) = person("GET", &endpoint(&live, "status"), None);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["state"], "handed_over", "{v}");
    let recent = v["recent"].to_string();
    assert!(recent.contains("act:click_element") && recent.contains("HANDED_OVER"), "{v}");

    let (status, page, _) = person("GET", &live, None);
    assert_eq!(status, 200, "{page}");
    let (status, v, _) =
        person("POST", &endpoint(&live, "input"), Some(json!({ "type": "click", "x": 100, "y": 120 })));
    assert_eq!(status, 200, "{v}");
    let (status, v, _) = person("POST", &endpoint(&live, "hand_back"), Some(json!({ "note": "confirmed" })));
    assert_eq!(status, 200, "{v}");
    let back = env.send(r#"{"action": "wait_for_human", "timeout_s": 30}"#);
    assert!(back["error"].is_null(), "{back}");
    assert_eq!((back["human"]["note"].as_str(), back["human"]["inputs"].as_u64()), (Some("confirmed"), Some(1)));
    assert!(back["page_content"].as_str().unwrap().contains("Device confirmed by a person"), "{back}");
    assert_ne!(back["state_hash"], first["state_hash"]);
    let (status, v, _) = person("GET", &live, None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "the link ends with the hand-back: {v}");

    // The agent has the tab again.
    let next = env.send(r#"{"action": "scroll", "direction": "down"}"#);
    assert!(next["error"].is_null(), "{next}");
    env.close_stdin();
    assert_eq!(env.exit_code(), 0);
}

/// MCP over Streamable HTTP: the same tools from the table, the link on serve's own listener.
#[test]
fn mcp_over_http_hands_over_too() {
    let srv = InProcServer::start(attached(), Some(TOKEN));
    let auth = format!("Bearer {TOKEN}");
    let mcp = srv.url("/mcp");
    let post = |body: Value, sid: Option<&str>| -> (u16, String) {
        let mut h = vec![
            ("authorization", auth.as_str()),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        if let Some(s) = sid {
            h.push(("mcp-session-id", s));
        }
        let (status, _, head) = http("POST", &mcp, Some(&body.to_string()), &h);
        (status, head)
    };
    // The answers come as server-sent events: read them with the raw body.
    let call = |body: Value, sid: &str| -> Value {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let mut resp = agent
            .post(&mcp)
            .header("authorization", &auth)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", sid)
            .send(body.to_string())
            .unwrap();
        let text = resp.body_mut().read_to_string().unwrap();
        let data = text.lines().rev().filter_map(|l| l.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty());
        serde_json::from_str(data.unwrap_or_else(|| panic!("no data in {text}"))).unwrap()
    };
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "live-test", "version": "1" } } });
    let (status, head) = post(init, None);
    assert_eq!(status, 200, "{head}");
    let sid = head.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).expect("an MCP session").trim().to_string();
    post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), Some(&sid));
    let asked = call(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "request_human", "arguments": { "reason": "solve the puzzle" } } }),
        &sid,
    );
    let live =
        asked["result"]["structuredContent"]["live_url"].as_str().unwrap_or_else(|| panic!("{asked}")).to_string();
    assert!(live.starts_with(&srv.url("/live/s-")) && live.contains("?ticket="), "{live}");
    let refused = call(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "browser_navigate", "arguments": { "url": "about:blank" } } }),
        &sid,
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(refused["result"]["structuredContent"]["error"]["code"], "handed_over", "{refused}");
    let (status, _, _) = person("GET", &endpoint(&live, "status"), None);
    assert_eq!(status, 200);
    let cancelled = call(
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "cancel_human", "arguments": {} } }),
        &sid,
    );
    assert_eq!(cancelled["result"]["structuredContent"]["was"], "handed_over", "{cancelled}");
}

/// Where a viewport point of the session lands on the watcher's screen: the live page's
/// picture of the page is scaled to its box.
async fn on_picture(watcher: &sightline_browser::Tab, x: f64, y: f64) -> (f64, f64) {
    let r = watcher
        .evaluate("(() => { const r = document.getElementById('frame').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
        .await
        .unwrap();
    let f = |i: usize| r[i].as_f64().unwrap();
    (f(0) + x * f(2) / 1280.0, f(1) + y * f(3) / 720.0)
}

/// The centre of an element of the live page itself, in the watcher's viewport.
async fn centre_of(watcher: &sightline_browser::Tab, id: &str) -> (f64, f64) {
    let r = watcher
        .evaluate(&format!(
            "(() => {{ const r = document.getElementById('{id}').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
        ))
        .await
        .unwrap();
    (r[0].as_f64().unwrap(), r[1].as_f64().unwrap())
}

/// Poll `check` on the session's state until it holds (bounded: the person's input
/// reaches the session through the live page's own requests).
fn until_state(srv: &InProcServer, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let s = state(srv, id);
        if check(&s) {
            return s;
        }
        assert!(Instant::now() < until, "{what} never showed in the session: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 36, item 3: a second, separately launched Chromium opens the live link and a
/// person clicks, types and hands back through the live page with real input events
/// (Input.dispatchMouseEvent and key events on the watcher's tab), never by calling the
/// live endpoints. With `SIGHTLINE_WRITE_DOCS=1` it also writes `docs/live.png`, the
/// watcher's screen, for README.
#[test]
fn a_second_chromium_clicks_types_and_hands_back_through_the_live_page() {
    let srv = InProcServer::start(attached(), Some(TOKEN));
    let id = open(&srv);
    let live = request_human(&srv, &id);
    let waiter = {
        let (base, id) = (srv.base.clone(), id.clone());
        std::thread::spawn(move || {
            let auth = format!("Bearer {TOKEN}");
            let body = json!({ "timeout_s": 120, "screenshot": false }).to_string();
            let url = format!("{base}/v1/sessions/{id}/tools/wait_for_human");
            let (s, v, _) = http("POST", &url, Some(&body), &[("authorization", &auth)]);
            (s, v)
        })
    };

    let second = run(async {
        // A Chromium of its own (own profile, own process), launched from a runtime worker.
        tokio::spawn(async {
            sightline_browser::Browser::start(&sightline_browser::BrowserOptions {
                launch: sightline_cdp::LaunchOptions::default(),
                connect: None,
            })
            .await
        })
        .await
        .unwrap()
        .expect("a second Chromium")
    });
    assert_ne!(second.process_group(), world().browser.process_group(), "a separately launched Chromium");
    let watcher = run(async {
        let opts = sightline_browser::TabOptions { viewport: (1400, 900), ..Default::default() };
        let t = second.new_tab(opts).await.unwrap();
        t.navigate(&live).await.unwrap();
        t
    });

    // Frames arrive, of the session's viewport, and the status with the reason is shown.
    let seen = run(async {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let v = watcher
                .evaluate(
                    "[document.getElementById('frame').naturalWidth, document.getElementById('frame').naturalHeight, document.getElementById('banner').textContent, document.getElementById('frame').src.slice(0, 23), document.getElementById('frame').getBoundingClientRect().width]",
                )
                .await
                .unwrap();
            let ready = v[0].as_u64().unwrap_or(0) > 0 && v[2].as_str().unwrap_or("").starts_with("Your turn");
            if ready || Instant::now() > until {
                break v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    assert_eq!((seen[0].as_u64(), seen[1].as_u64()), (Some(1280), Some(720)), "frames of the viewport's size: {seen}");
    assert!(seen[2].as_str().unwrap().contains("enter the code from your phone"), "{seen}");
    assert_eq!(seen[3], "data:image/jpeg;base64,", "frames from the screencast stream: {seen}");
    assert!(seen[4].as_f64().unwrap() < 1280.0, "the picture is scaled to the live page's box: {seen}");
    assert!(!state(&srv, &id)["page_content"].as_str().unwrap().contains("Device confirmed by a person"));

    // The person clicks the button where the picture shows it (20..220 x 100..140 on the page).
    run(async {
        let (x, y) = on_picture(&watcher, 120.0, 120.0).await;
        watcher.click_at(x, y).await.unwrap();
    });
    until_state(&srv, &id, "the person's click", |s| {
        s["page_content"].as_str().unwrap().contains("Device confirmed by a person")
    });

    // The field (20..320 x 20..60): a click focuses it, keys typed on the live page fill it.
    run(async {
        let (x, y) = on_picture(&watcher, 150.0, 40.0).await;
        watcher.click_at(x, y).await.unwrap();
    });
    run(async { watcher.keys("654321").await.unwrap() });
    until_state(&srv, &id, "the typed code", |s| {
        s["element_index"].as_object().unwrap().values().any(|e| e["attributes"]["value"] == json!("654321"))
    });

    if std::env::var_os("SIGHTLINE_WRITE_DOCS").is_some_and(|v| v == "1") {
        let png = run(async { watcher.screenshot_png().await.unwrap() });
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("live.png"), png).unwrap();
    }

    // Enter on the live page submits the session's form.
    run(async { assert!(watcher.press_key("Enter").await.unwrap()) });
    until_state(&srv, &id, "the submitted form", |s| s["url"].as_str().unwrap().ends_with("?code=654321"));
    assert!(!waiter.is_finished(), "wait_for_human returned before the hand-back");

    // The note typed into the live page's box, then its "Hand back" button.
    run(async {
        let (x, y) = centre_of(&watcher, "note").await;
        watcher.click_at(x, y).await.unwrap();
        watcher.keys("Code typed; trusted.").await.unwrap();
        let (x, y) = centre_of(&watcher, "back").await;
        watcher.click_at(x, y).await.unwrap();
    });
    let (status, back) = waiter.join().unwrap();
    assert_eq!(status, 200, "{back}");
    assert_eq!(back["note"], "Code typed; trusted.");
    assert_eq!(back["inputs"], 4, "two clicks, the text, Enter: {back}");
    let fields = back["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 1, "{back}");
    assert_eq!(fields[0]["field"], "code");
    let visited: Vec<&str> = back["visited"].as_array().unwrap().iter().map(|v| v["url"].as_str().unwrap()).collect();
    assert!(visited.last().unwrap().ends_with("/submitted.html?code=654321"), "{visited:?}");
    assert!(back["state"]["page_content"].as_str().unwrap().contains("query: ?code=654321"), "{back}");

    // The live page says so, and the link is spent.
    let banner = run(async {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let b = watcher.evaluate("document.getElementById('banner').textContent").await.unwrap();
            if b.as_str().unwrap_or("").starts_with("Handed back") || Instant::now() > until {
                break b;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    assert!(banner.as_str().unwrap().starts_with("Handed back to the agent"), "{banner}");
    let (status, v, _) = person("GET", &live, None);
    assert_eq!((status, code(&v)), (403, "ticket_refused"), "{v}");
    run(async {
        watcher.close().await;
        second.shutdown().await;
    });
}

/// One request without following redirects: (status, headers as lowercase "name: value" lines, body).
fn no_redirect(method: &str, url: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().into();
    let mut req = ureq::http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut resp = match method {
        "GET" => agent.run(req.body(()).unwrap()),
        _ => agent.run(req.header("content-type", "application/json").body("{}".to_string()).unwrap()),
    }
    .unwrap();
    let head: String =
        resp.headers().iter().map(|(k, v)| format!("{}: {}\n", k.as_str(), v.to_str().unwrap_or(""))).collect();
    (resp.status().as_u16(), head, resp.body_mut().read_to_string().unwrap_or_default())
}

/// Issue 36, item 1 (access as today's API): the owner opens `/live` and `/live/{id}` in a
/// browser with the token once in the URL; the server trades it for an HttpOnly,
/// SameSite=Strict cookie and drops it from the address. Another principal's sessions
/// are neither listed nor reachable with that cookie.
#[test]
fn the_owner_signs_in_a_browser_once_and_sees_only_their_sessions() {
    const ALICE: &str = "alice-live-token-0123456789";
    const BOB: &str = "bob-live-token-9876543210ab";
    let team = sightline_server::Principals::parse(&format!("alice {ALICE}\nbob {BOB}\n")).unwrap();
    let srv = InProcServer::start_with(attached(), team);
    let open_as = |token: &str| {
        let auth = format!("Bearer {token}");
        let body = json!({ "url": url("/live/second-factor.html"), "screenshot": false }).to_string();
        let (status, v, _) = http("POST", &srv.url("/v1/sessions"), Some(&body), &[("authorization", &auth)]);
        assert_eq!(status, 201, "{v}");
        v["session_id"].as_str().unwrap().to_string()
    };
    let (mine, theirs) = (open_as(ALICE), open_as(BOB));

    // The exchange: a redirect to the same path without the token, and the cookie.
    let (status, head, _) = no_redirect("GET", &srv.url(&format!("/live/{mine}?token={ALICE}")), &[]);
    assert_eq!(status, 303, "{head}");
    assert!(head.contains(&format!("location: /live/{mine}\n")), "{head}");
    let cookie_line = head.lines().find(|l| l.starts_with("set-cookie: ")).unwrap_or_else(|| panic!("{head}"));
    for part in ["HttpOnly", "SameSite=Strict", "Path=/live"] {
        assert!(cookie_line.contains(part), "{cookie_line}");
    }
    assert!(!cookie_line.contains(ALICE), "the cookie is not the token: {cookie_line}");
    let cookie = cookie_line["set-cookie: ".len()..].split(';').next().unwrap().to_string();
    let (status, _, _) = no_redirect("GET", &srv.url(&format!("/live?token={ALICE}x")), &[]);
    assert_eq!(status, 401, "a wrong token gets no cookie");
    let (status, _, _) = no_redirect("POST", &srv.url(&format!("/live/{mine}/hand_back?token={ALICE}")), &[]);
    assert_eq!(status, 400, "the token is exchanged by GET only");
    // The cookie on its own: this owner's sessions; another's is not found; a request with a
    // body from another site's page is refused.
    let (status, _, body) = no_redirect("GET", &srv.url(&format!("/live/{mine}/status")), &[("cookie", &cookie)]);
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = no_redirect("GET", &srv.url(&format!("/live/{theirs}/status")), &[("cookie", &cookie)]);
    assert_eq!(status, 404, "{body}");
    let (status, _, _) = no_redirect("GET", &srv.url("/v1/sessions"), &[("cookie", &cookie)]);
    assert_eq!(status, 401, "the cookie is for the live pages only");
    let evil = [("cookie", cookie.as_str()), ("origin", "http://evil.example")];
    let (status, _, _) = no_redirect("POST", &srv.url(&format!("/live/{mine}/hand_back")), &evil);
    assert_eq!(status, 401, "a cross-site request with a body is refused");

    // In a browser: the list, then the session's page, the token gone from the address.
    run(async {
        let tab = tab().await;
        tab.navigate(&srv.url(&format!("/live?token={ALICE}"))).await.unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        let seen = loop {
            let v = tab
                .evaluate(
                    "[location.href, document.cookie, [...document.querySelectorAll('a.card')].map(a => a.dataset.session), [...document.querySelectorAll('a.card img')].map(i => i.naturalWidth)]",
                )
                .await
                .unwrap();
            let thumbs = v[3].as_array().map_or(0, |a| a.iter().filter(|w| w.as_u64().unwrap_or(0) > 0).count());
            if thumbs > 0 || Instant::now() > until {
                break v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(seen[0], srv.url("/live"), "the token left the address: {seen}");
        assert_eq!(seen[1], "", "the cookie is HttpOnly: {seen}");
        assert_eq!(seen[2], json!([mine]), "only the owner's session is listed: {seen}");
        assert_eq!(seen[3], json!([1280]), "with its live thumbnail: {seen}");

        tab.navigate(&srv.url(&format!("/live/{mine}"))).await.unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        let seen = loop {
            let v = tab
                .evaluate(
                    "[document.getElementById('frame').naturalWidth, document.getElementById('banner').textContent]",
                )
                .await
                .unwrap();
            if v[0].as_u64().unwrap_or(0) > 0 && v[1].as_str().unwrap_or("").contains("watching")
                || Instant::now() > until
            {
                break v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(seen[0], 1280, "the owner's page shows frames: {seen}");
        assert!(seen[1].as_str().unwrap().contains("you are watching"), "{seen}");

        // The same browser cannot reach bob's session.
        tab.navigate(&srv.url(&format!("/live/{theirs}"))).await.unwrap();
        let body = tab.evaluate("document.body.textContent").await.unwrap();
        assert!(body.as_str().unwrap().contains("session_not_found"), "{body}");
        tab.close().await;
    });
}

/// `sightline mcp --live ADDR` over stdio, under the official MCP client (`tests/mcp_live.py`):
/// request_human answers a link on the command's own loopback listener and, as the client
/// declared URL-mode elicitation (2025-11-25), asks it to show the link; a person acts through
/// it, and wait_for_human returns the note and the page the person left.
#[test]
fn stdio_mcp_with_live_hands_over_to_a_person() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_live.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_sightline"))
        .arg(url("/live/second-factor.html"))
        .arg(browser_endpoint())
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'mcp'") {
        panic!("this test needs the official MCP client: python3 -m pip install mcp (./x test installs it)");
    }
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["asked_error"], false, "{v}");
    let live = v["live_url"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(live.starts_with("http://127.0.0.1:") && live.contains("/live/p1?ticket="), "{v}");
    assert_eq!(v["parked_code"], "handed_over", "{v}");
    // The client declared URL-mode elicitation: it was asked to show the link to its user.
    let elicited = v["elicited"].as_array().unwrap();
    assert_eq!(elicited.len(), 1, "{v}");
    assert_eq!((elicited[0]["mode"].as_str(), elicited[0]["url"].as_str()), (Some("url"), Some(live)), "{v}");
    assert!(elicited[0]["message"].as_str().unwrap().contains("confirm the device"), "{v}");
    assert_eq!(v["status"][0], 200, "{v}");
    assert_eq!(v["status"][1]["state"], "handed_over", "{v}");
    assert_eq!((v["click"].as_u64(), v["hand_back"].as_u64()), (Some(200), Some(200)), "{v}");
    assert_eq!(v["note"], "confirmed over MCP", "{v}");
    assert_eq!(v["confirmed"], true, "{v}");
    assert_eq!(v["after"], 403, "the ticket is spent: {v}");
}
