//! `run`: scripts and batches in the sandbox over a real tab, their limits
//! against hostile scripts, and recorded sessions replayed by role and name.

use crate::common;

use common::*;
use serde_json::{json, Value};
use sightline_api::{Api, ToolCode};

/// A session on `path`; its address.
async fn open(api: &Api, session: &str, path: &str) -> Value {
    let b = ok(api, "bind_browser", json!({ "session": session })).await;
    let a = json!({ "session": session, "target_id": b["target_id"], "tab_id": b["tabs"][0]["tab_id"] });
    ok(api, "browser_navigate", with(&a, json!({ "url": url(path) }))).await;
    a
}

fn with(a: &Value, extra: Value) -> Value {
    let mut v = a.clone();
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    v
}

const ORDER: &str = r#"
const name = (await browser.find({role: "textbox", name: "Name"}))[0].ref;
await browser.type(name, "Ann");
// Two fields are called Email: the one under the Checkout heading.
const email = browser.find({role: "textbox", name: "Email", near: "Checkout"})[0];
console.log("email is near", email.near);
await browser.type(email.ref, "ann@example.com");
await browser.select(browser.find({role: "combobox", name: "Country"})[0].ref, "Japan");
await browser.click(browser.find({role: "checkbox", name: "Gift wrap"})[0].ref);
await browser.click(browser.find({role: "button", name: "Place order"})[0].ref);
await browser.wait({text: "Thanks"});
const s = await browser.state();
return s.page_content.split("\n").find(l => l.startsWith("Thanks"));
"#;

#[test]
fn a_script_fills_a_form_by_role_and_name_and_answers_its_value_console_and_actions() {
    run(async {
        let api = api();
        let a = open(&api, "run-form", "/run/shop.html").await;
        let out = ok(&api, "run", with(&a, json!({ "code": ORDER }))).await;
        assert_eq!(out["value"], "Thanks Ann <ann@example.com> to Japan with gift wrap", "{out}");
        assert_eq!(out["console"], json!(["email is near Checkout"]));
        let ops: Vec<&str> = out["actions"].as_array().unwrap().iter().map(|a| a["op"].as_str().unwrap()).collect();
        assert_eq!(ops, ["type", "type", "select", "click", "click", "wait"]);
        assert!(out["actions"].as_array().unwrap().iter().all(|a| a["ok"] == true), "{out}");
        // The State Object after the script, without a screenshot.
        assert!(out["state"]["page_content"].as_str().unwrap().contains("Thanks Ann"), "{out}");
        assert_eq!(out["state"]["screenshot"], "");
    })
}

#[test]
fn a_batch_of_ref_actions_runs_in_order_and_stops_at_the_first_failure() {
    run(async {
        let api = api();
        let a = open(&api, "run-batch", "/run/shop.html").await;
        let snap = ok(&api, "get_browser_state", with(&a, json!({ "snapshot_format": "semantic_v2" }))).await;
        let r = |role: &str, name: &str| {
            let refs = snap["refs"].as_array().unwrap();
            refs.iter().find(|r| r["role"] == role && r["name"] == name).unwrap()["ref"].as_str().unwrap().to_string()
        };
        let actions = json!([
            { "op": "type", "ref": r("textbox", "Name"), "text": "Bo" },
            { "op": "click", "ref": r("button", "Place order") },
            { "op": "wait", "text": "Thanks Bo" },
        ]);
        let out = ok(&api, "run", with(&a, json!({ "actions": actions, "result": "none" }))).await;
        assert_eq!(out["actions"].as_array().unwrap().len(), 3, "{out}");
        assert!(out.get("state").is_none());
        // The page changed under the old snapshot's refs only by text; a ref of no snapshot fails its step.
        let actions = json!([
            { "op": "type", "ref": r("textbox", "Name"), "text": "x" },
            { "op": "click", "ref": "p99999:1" },
            { "op": "type", "ref": r("textbox", "Name"), "text": "never" },
        ]);
        let e = fails(&api, "run", with(&a, json!({ "actions": actions }))).await;
        assert_eq!(e.code, ToolCode::SnapshotNotFound, "{e:?}");
        assert_eq!(e.detail_json()["step"], 2, "{e:?}");
        assert_eq!(e.detail_json()["actions"].as_array().unwrap().len(), 2, "the third never ran: {e:?}");
        // Malformed batches are refused by name before anything runs.
        let e = fails(&api, "run", with(&a, json!({ "actions": [{ "op": "klick", "ref": "p1:1" }] }))).await;
        assert_eq!(e.code, ToolCode::InvalidParams);
        let e = fails(&api, "run", with(&a, json!({ "code": "return 1", "actions": [] }))).await;
        assert_eq!(e.code, ToolCode::InvalidParams);
    })
}

#[test]
fn errors_are_typed_with_their_line_and_a_script_can_catch_a_browser_error() {
    run(async {
        let api = api();
        let a = open(&api, "run-errors", "/run/shop.html").await;
        let e = fails(&api, "run", with(&a, json!({ "code": "const x = 1;\nthrow new Error('boom');" }))).await;
        assert_eq!(e.code, ToolCode::ScriptError, "{e:?}");
        assert_eq!(e.detail_json()["line"], 2, "{e:?}");
        assert!(e.message.contains("boom (line 2)"), "{e}");
        // An uncaught browser error keeps the browser's code, and the script's line.
        let code = "console.log('before');\nawait browser.click('p123456:1');";
        let e = fails(&api, "run", with(&a, json!({ "code": code }))).await;
        assert_eq!(e.code, ToolCode::SnapshotNotFound, "{e:?}");
        assert_eq!(e.detail_json()["line"], 2, "{e:?}");
        assert_eq!(e.detail_json()["console"], json!(["before"]));
        // Caught, it is an Error with code and detail.
        let code = "try { await browser.click('p123456:1') } catch (e) { return [e.code, e.message] }";
        let out = ok(&api, "run", with(&a, json!({ "code": code, "result": "none" }))).await;
        assert_eq!(out["value"][0], "snapshot_not_found", "{out}");
        assert!(out["value"][1].as_str().unwrap().starts_with("browser.click: "), "{out}");
        // A drift names its step and what is there instead.
        let code = r#"return browser.expect(7, {role: "button", name: "Pay", near: "Checkout"})"#;
        let e = fails(&api, "run", with(&a, json!({ "code": code }))).await;
        assert_eq!(e.code, ToolCode::Drift, "{e:?}");
        assert!(e.message.contains("step 7: no button \"Pay\""), "{e}");
        assert_eq!(e.detail_json()["cause"]["found"][0]["name"], "Place order", "{e:?}");
    })
}

#[test]
fn hostile_scripts_meet_their_limits_and_the_session_goes_on() {
    run(async {
        let api = api();
        let a = open(&api, "run-hostile", "/run/shop.html").await;
        let limit = |e: &sightline_api::ToolError| e.detail_json()["limit"].as_str().unwrap_or_default().to_string();
        let e = fails(&api, "run", with(&a, json!({ "code": "while (true) {}", "timeout_s": 1 }))).await;
        assert_eq!((e.code, limit(&e).as_str()), (ToolCode::ScriptLimit, "time"), "{e:?}");
        let code = "const a = []; while (true) a.push('x'.repeat(1 << 20));";
        let e = fails(&api, "run", with(&a, json!({ "code": code, "memory_mb": 16 }))).await;
        assert_eq!((e.code, limit(&e).as_str()), (ToolCode::ScriptLimit, "memory"), "{e:?}");
        let e =
            fails(&api, "run", with(&a, json!({ "code": "function f(n) { return f(n + 1) + 1 }\nreturn f(0)" }))).await;
        assert_eq!(e.code, ToolCode::ScriptError, "deep recursion is a stack overflow: {e:?}");
        let e = fails(&api, "run", with(&a, json!({ "code": "for (;;) await browser.url()", "max_steps": 5 }))).await;
        assert_eq!((e.code, limit(&e).as_str()), (ToolCode::ScriptLimit, "steps"), "{e:?}");
        // Nothing outside the sandbox but `browser` and `console`.
        let code =
            "return [typeof require, typeof fetch, typeof std, typeof os, typeof XMLHttpRequest, typeof process]";
        let out = ok(&api, "run", with(&a, json!({ "code": code, "result": "none" }))).await;
        assert_eq!(out["value"], json!(vec!["undefined"; 6]));
        // A goto goes through the egress policy like any navigation (no policy here: the URL must be valid).
        let e = fails(&api, "run", with(&a, json!({ "code": "await browser.goto('javascript:alert(1)')" }))).await;
        assert_eq!(e.code, ToolCode::InvalidParams, "{e:?}");
        // Bad limits are refused before anything runs.
        for bad in [
            json!({ "timeout_s": 0 }),
            json!({ "memory_mb": 0 }),
            json!({ "max_steps": 0 }),
            json!({ "result": "all" }),
        ] {
            let e = fails(&api, "run", with(&a, with(&bad, json!({ "code": "return 1" })))).await;
            assert_eq!(e.code, ToolCode::InvalidParams, "{bad}: {e:?}");
        }
        // The session and its browser are fine.
        let out =
            ok(&api, "run", with(&a, json!({ "code": "return (await browser.url()).endsWith('/run/shop.html')" })))
                .await;
        assert_eq!(out["value"], true, "{out}");
    })
}

#[test]
fn a_recorded_session_replays_where_its_targets_are_still_found_and_reports_drift_where_not() {
    run(async {
        let api = api();
        // Record: the element-index protocol (act) and the tool API (refs) in one session.
        let a = open(&api, "run-record", "/run/shop.html").await;
        let state = ok(&api, "get_state", with(&a, json!({ "screenshot": false }))).await;
        let index = |s: &Value, want: &str| -> u64 {
            let lines = s["page_content"].as_str().unwrap();
            let at = lines.find(want).unwrap_or_else(|| panic!("{want} in {lines}"));
            let open = lines[..at].rfind('[').unwrap();
            lines[open + 1..at - 1].parse().unwrap()
        };
        let name = index(&state, "textbox \"Name\"");
        let s = ok(
            &api,
            "act",
            with(&a, json!({ "action": { "action": "input_text", "element_index": name, "text": "Cy" } })),
        )
        .await;
        assert!(s["error"].is_null(), "{s}");
        let snap = ok(&api, "get_browser_state", with(&a, json!({ "snapshot_format": "semantic_v2" }))).await;
        let refs = snap["refs"].as_array().unwrap();
        let email = refs.iter().find(|r| r["role"] == "textbox" && r["name"] == "Email").unwrap()["ref"].clone();
        ok(&api, "browser_type", with(&a, json!({ "ref": email, "text": "cy@example.com" }))).await;
        let country = refs.iter().find(|r| r["name"] == "Country").unwrap()["ref"].clone();
        ok(&api, "browser_select", with(&a, json!({ "ref": country, "option": "France" }))).await;
        let place = refs.iter().find(|r| r["name"] == "Place order").unwrap()["ref"].clone();
        ok(&api, "browser_click", with(&a, json!({ "ref": place }))).await;
        let rec = ok(&api, "get_script", json!({ "session": "run-record" })).await;
        let script = rec["script"].as_str().unwrap().to_string();
        assert_eq!(rec["steps"], 4, "{script}");
        assert!(script.starts_with("\"use sightline/run\";"), "{script}");
        assert!(script.contains(r#""role":"button","name":"Place order","near":"Checkout""#), "{script}");
        assert!(!script.contains("p1") && !script.contains("element_index"), "no refs or indexes: {script}");

        // Replay: on the same page, on the page changed (fields reordered, ids renamed), and renamed.
        for (path, want) in
            [("/run/shop.html", Ok(())), ("/run/shop-moved.html", Ok(())), ("/run/shop-renamed.html", Err(4))]
        {
            let b = open(&api, &format!("replay{path}"), path).await;
            let r = api.dispatch("run", with(&b, json!({ "code": script.clone() }))).await;
            match (want, r) {
                (Ok(()), Ok(out)) => {
                    let content = out.value["state"]["page_content"].as_str().unwrap().to_string();
                    assert!(content.contains("Thanks Cy <cy@example.com> to France"), "{path}: {content}");
                }
                (Err(step), Err(e)) => {
                    assert_eq!(e.code, ToolCode::Drift, "{path}: {e:?}");
                    assert_eq!(e.detail_json()["cause"]["step"], step, "{path}: {e:?}");
                    assert_eq!(e.detail_json()["cause"]["found"][0]["name"], "Buy now", "{path}: {e:?}");
                    // The steps before the drift were done.
                    assert_eq!(e.detail_json()["actions"].as_array().unwrap().len(), 3, "{path}: {e:?}");
                }
                (want, got) => panic!("{path}: wanted {want:?}, got {got:?}"),
            }
        }
    })
}

#[test]
fn run_and_the_recording_travel_over_http() {
    let hub = sightline_server::HubConfig {
        source: sightline_server::BrowserSource::Connect(browser_endpoint()),
        ..sightline_server::HubConfig::default()
    };
    let srv = InProcServer::start(hub, Some("token-for-run-tests"));
    let auth = [("authorization", "Bearer token-for-run-tests")];
    let (status, created, _) =
        http("POST", &srv.url("/v1/sessions"), Some(&json!({ "url": url("/run/shop.html") }).to_string()), &auth);
    assert_eq!(status, 201, "{created}");
    let id = created["session_id"].as_str().unwrap();
    let body = json!({ "code": ORDER, "result": "none" }).to_string();
    let (status, out, _) = http("POST", &srv.url(&format!("/v1/sessions/{id}/tools/run")), Some(&body), &auth);
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["value"], "Thanks Ann <ann@example.com> to Japan with gift wrap", "{out}");
    // A hostile script is a 422 with its typed code; the session lives on.
    let body = json!({ "code": "while(true){}", "timeout_s": 0.5 }).to_string();
    let (status, out, _) = http("POST", &srv.url(&format!("/v1/sessions/{id}/tools/run")), Some(&body), &auth);
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("script_limit")), "{out}");
    // The recording: what run did, as JavaScript.
    let mut resp = ureq::get(&srv.url(&format!("/v1/sessions/{id}/script")))
        .header("authorization", "Bearer token-for-run-tests")
        .call()
        .unwrap();
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let text = resp.body_mut().read_to_string().unwrap();
    assert!(text.starts_with("\"use sightline/run\";"), "{text}");
    assert!(text.contains(r#"browser.expect(5, {"role":"button","name":"Place order""#), "{text}");
    let (status, _, _) = http("GET", &srv.url(&format!("/v1/sessions/{id}/script")), None, &[]);
    assert_eq!(status, 401);
}

/// As a user would: record with `sightline env --record-script`, replay with `sightline script`.
#[test]
fn the_command_line_records_an_env_loop_and_replays_it_with_no_model() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let dir = tempfile_dir("sightline-run-cli");
    let file = dir.join("order.js");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["env", &url("/run/shop.html"), "--no-screenshot", "--record-script"])
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sightline env");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut read = || {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let first = read();
    let content = first["page_content"].as_str().unwrap().to_string();
    let index = |want: &str| -> u64 {
        let at = content.find(want).unwrap_or_else(|| panic!("{want} in {content}"));
        content[content[..at].rfind('[').unwrap() + 1..at - 1].parse().unwrap()
    };
    let stdin = child.stdin.as_mut().unwrap();
    for action in [
        json!({ "action": "input_text", "element_index": index("textbox \"Name\""), "text": "Di" }),
        json!({ "action": "select_option", "element_index": index("combobox \"Country\""), "option_index": index("option \"Japan\"") }),
        json!({ "action": "click_element", "element_index": index("button \"Place order\"") }),
    ] {
        writeln!(stdin, "{action}").unwrap();
        stdin.flush().unwrap();
        let s = read();
        assert!(s["error"].is_null(), "{s}");
    }
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let script = std::fs::read_to_string(&file).expect("the recorded script");
    assert!(script.contains(&format!("--url {}", url("/run/shop.html"))), "{script}");
    let replay = |path: &str| {
        Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["script"])
            .arg(&file)
            .args(["--url", &other_url(path), "--allow-private"])
            .output()
            .expect("run sightline script")
    };
    // Another server (another port), the page changed: still found.
    let ok = replay("/run/shop-moved.html");
    let (stdout, stderr) = (String::from_utf8_lossy(&ok.stdout), String::from_utf8_lossy(&ok.stderr));
    assert_eq!(ok.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stderr.matches("\"ok\":true").count(), 3, "{stderr}");
    // Renamed: drift at step 3, exit code 2, what was found instead.
    let drift = replay("/run/shop-renamed.html");
    let stderr = String::from_utf8_lossy(&drift.stderr);
    assert_eq!(drift.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("drift: browser.expect: step 3: no button \"Place order\""), "{stderr}");
    assert!(stderr.contains("Buy now"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    fresh_dir(name)
}

/// The single tools for what `act` and `run` do: drag by ref, chords on a ref, back and forward.
#[test]
fn the_tool_api_drags_presses_chords_and_goes_back_and_forward_by_ref() {
    run(async {
        let api = api();
        let a = open(&api, "tools-gestures", "/drag.html").await;
        let snap = ok(&api, "get_browser_state", with(&a, json!({ "snapshot_format": "semantic_v2" }))).await;
        let refs = snap["refs"].as_array().unwrap().clone();
        let r = |role: &str, name: &str| {
            refs.iter()
                .find(|r| r["role"] == role && r["name"] == name)
                .unwrap_or_else(|| panic!("{role} {name}: {snap}"))["ref"]
                .clone()
        };
        ok(&api, "browser_drag", with(&a, json!({ "ref": r("slider", "Level"), "dx": 140, "dy": 0 }))).await;
        let tab = ok(&api, "run", with(&a, json!({ "code": "return 1", "result": "state" }))).await;
        let content = tab["state"]["page_content"].as_str().unwrap().to_string();
        assert!(content.contains("level: 50"), "{content}");
        // Bad ends are refused by name.
        let e = fails(&api, "browser_drag", with(&a, json!({ "ref": r("slider", "Level"), "dx": 1 }))).await;
        assert_eq!(e.code, ToolCode::InvalidParams);
        // Chords on a ref: the key goes to the element, focused first.
        ok(&api, "browser_navigate", with(&a, json!({ "url": url("/keys.html") }))).await;
        let snap = ok(&api, "get_browser_state", with(&a, json!({ "snapshot_format": "semantic_v2" }))).await;
        let msg = snap["refs"].as_array().unwrap().iter().find(|r| r["name"] == "Message").unwrap()["ref"].clone();
        ok(&api, "browser_press_key", with(&a, json!({ "key": "Control+A", "ref": msg }))).await;
        ok(&api, "browser_press_key", with(&a, json!({ "key": "x" }))).await;
        let out = ok(&api, "browser_press_key", with(&a, json!({ "key": "Enter", "ref": msg }))).await;
        assert_eq!(out["navigated"], false);
        let out = ok(&api, "run", with(&a, json!({ "code": "return 1" }))).await;
        assert!(out["state"]["page_content"].as_str().unwrap().contains("sent: x"), "{out}");
        let e = fails(&api, "browser_press_key", with(&a, json!({ "key": "Hyper+Q" }))).await;
        assert_eq!(e.code, ToolCode::InvalidParams, "{e:?}");
        // History: back to the drag page, forward again; past the end is navigation_failed.
        let out = ok(&api, "browser_navigate_back", a.clone()).await;
        assert_eq!(out["navigated"], true);
        let here = ok(&api, "run", with(&a, json!({ "code": "return await browser.url()", "result": "none" }))).await;
        assert!(here["value"].as_str().unwrap().ends_with("/drag.html"), "{here}");
        ok(&api, "browser_navigate_forward", a.clone()).await;
        let e = fails(&api, "browser_navigate_forward", a.clone()).await;
        assert_eq!(e.code, ToolCode::NavigationFailed, "{e:?}");
        let script = ok(&api, "get_script", json!({ "session": "tools-gestures" })).await["script"]
            .as_str()
            .unwrap()
            .to_string();
        for line in [
            "await browser.drag(browser.expect(",
            "await browser.press(\"Control+A\", browser.expect(",
            "await browser.back();",
            "await browser.forward();",
        ] {
            assert!(script.contains(line), "{line} in {script}");
        }
    })
}

/// The Set-of-Marks pack's numbered marks inside `run`, each carrying its ref.
#[test]
fn a_script_acts_on_marks_as_the_pack_does() {
    run(async {
        let api = api();
        let a = open(&api, "run-marks", "/run/shop.html").await;
        let e = fails(&api, "run", with(&a, json!({ "code": "await browser.clickMark(1)" }))).await;
        assert_eq!(e.code, ToolCode::InvalidParams, "{e:?}");
        assert!(e.message.contains("call browser.mark() first"), "{e}");
        let code = r#"
const m = await browser.mark();
const name = m.find(x => x.role === "textbox");
await browser.typeMark(name.id, "Zed");
await browser.clickMark(m.find(x => x.name === "Place order").id);
await browser.wait("Thanks Zed");
return [m.length, m[0].id, name.ref.includes(":")];
"#;
        let out = ok(&api, "run", with(&a, json!({ "code": code, "result": "none" }))).await;
        assert_eq!(out["value"][1], 1, "{out}");
        assert_eq!(out["value"][2], true, "{out}");
        assert!(out["value"][0].as_u64().unwrap() >= 7, "{out}");
    })
}
