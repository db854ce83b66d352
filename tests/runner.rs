//! `sightline run` against a local server that plays the model provider:
//! scripted replies, and every request recorded for the assertions.

use crate::common;

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Output};
use std::thread::JoinHandle;

use common::*;
use serde_json::{json, Value};

struct Request {
    head: String,
    body: Value,
}

impl Request {
    /// Every text the request sends the model, joined.
    fn text(&self) -> String {
        self.body.to_string()
    }
}

/// Serve `replies` in order, one per request; record what was asked.
fn provider(replies: Vec<(u16, String)>) -> (u16, JoinHandle<Vec<Request>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for (status, reply) in replies {
            let (mut s, _) = listener.accept().unwrap();
            let (head, body) = read_http_request(&mut s);
            let reason = if status == 200 { "OK" } else { "Error" };
            let extra = if status == 429 { "Retry-After: 0\r\n" } else { "" };
            write!(s, "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{reply}", reply.len()).unwrap();
            seen.push(Request { head, body });
        }
        seen
    });
    (port, handle)
}

fn call(name: &str, args: Value) -> (u16, String) {
    let reply = json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": name, "arguments": args.to_string() } }] } }] });
    (200, reply.to_string())
}

fn text(t: &str) -> (u16, String) {
    (200, json!({ "choices": [{ "message": { "role": "assistant", "content": t } }] }).to_string())
}

fn sightline(port: u16, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["run", &url("/signin.html"), "--task", "Sign in as ada@example.com", "--model", "openai:test-model"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}/v1"), "--retry-base-ms", "10"])
        .args(extra)
        .env("SIGHTLINE_API_KEY", "sk-test-secret-123")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn a_task_runs_to_finish_on_an_openai_compatible_endpoint() {
    world();
    let (port, server) = provider(vec![
        call("input_text", json!({ "element_index": 1, "text": "ada@example.com" })),
        call("click_element", json!({ "element_index": 5 })),
        call("finish_task", json!({ "message": "signed in" })),
    ]);
    let out = sightline(port, &[]);
    let reqs = server.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&out).starts_with("finished: signed in"), "{}", stdout(&out));
    assert_eq!(reqs.len(), 3);
    let first = &reqs[0];
    assert!(first.head.starts_with("POST /v1/chat/completions"), "{}", first.head);
    assert!(first.head.contains("Bearer sk-test-secret-123"));
    assert_eq!(first.body["model"], "test-model");
    assert_eq!(first.body["tool_choice"], "required");
    // Every action of the protocol's table is a tool, the extensions too.
    let tools: Vec<&str> =
        first.body["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    let offered = sightline_api::ACTION_TABLE.iter().filter(|a| !a.needs_person()).count();
    assert_eq!(tools.len(), offered, "{tools:?}");
    for name in ["click_element", "hover_element", "upload_file", "press_key", "go_back", "finish_task"] {
        assert!(tools.contains(&name), "{name} missing from {tools:?}");
    }
    let user = first.body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("Task: Sign in as ada@example.com"), "{user}");
    assert!(user.contains("[1] <input> role=textbox label=\"Email Address\""), "{user}");
    assert!(user.contains("[5]button \"Sign In\""), "page_content is in the prompt: {user}");
    // The label has its own entry (the seed's), a marker beside its checkbox in page_content.
    let content = &user[user.find("page_content:").unwrap()..user.find("element_index:").unwrap()];
    assert!(content.contains("[3]label [4]checkbox \"Keep me signed in\""), "{user}");
    assert_eq!(content.matches("Keep me signed in").count(), 1, "the label names its checkbox once: {user}");
    assert!(reqs[2].text().contains("Welcome back"), "the third turn sees the page after the click");
    assert!(reqs[2].text().contains("step 1: input_text"), "recent actions are listed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("step  1") && stderr.contains("input_text"), "{stderr}");
    assert!(!stderr.contains("sk-test-secret") && !stdout(&out).contains("sk-test-secret"), "the key is never logged");
}

#[test]
fn malformed_replies_are_repaired_errors_fed_back_and_repeats_refused() {
    world();
    let (port, server) = provider(vec![
        text("I would like to click the button please"),
        call("click_element", json!({ "element_index": 99 })),
        call("click_element", json!({ "element_index": 99 })),
        call("fail_task", json!({ "message": "cannot find it" })),
    ]);
    let out = sightline(port, &["--json"]);
    let reqs = server.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["status"], "failed");
    assert_eq!(last["message"], "cannot find it");
    assert!(reqs[1].text().contains("That action is invalid"), "one repair, with the validation message");
    assert!(reqs[2].text().contains("FAILED with INVALID_ELEMENT_INDEX"), "the error object goes back to the model");
    assert!(
        reqs[3].text().contains("You already sent click_element element_index=99"),
        "a repeat on the same state_hash is refused"
    );
    let turns: Vec<Value> =
        String::from_utf8_lossy(&out.stderr).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(turns.len(), 2, "two turns reached the browser: {turns:?}");
    assert_eq!(turns[0]["outcome"], "INVALID_ELEMENT_INDEX");
}

#[test]
fn a_second_invalid_reply_or_repeat_ends_with_fail_task() {
    world();
    let (port, server) = provider(vec![text("nope"), text("still nope")]);
    let out = sightline(port, &["--quiet"]);
    server.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with("failed: the model gave no valid action after a repair attempt"),
        "{}",
        stdout(&out)
    );
    assert!(String::from_utf8_lossy(&out.stderr).is_empty(), "--quiet prints no turn lines");
}

#[test]
fn rate_limits_are_retried_and_a_bad_key_is_a_clear_error() {
    world();
    let (port, server) = provider(vec![
        (429, "{\"error\":\"slow down\"}".into()),
        (503, "{}".into()),
        call("finish_task", json!({ "message": "ok" })),
    ]);
    let out = sightline(port, &[]);
    assert_eq!(server.join().unwrap().len(), 3);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let (port, server) = provider(vec![(401, "{\"error\":{\"message\":\"bad key\"}}".into())]);
    let out = sightline(port, &[]);
    server.join().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stdout(&out).contains("error: the model endpoint refused the API key (HTTP 401)"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("sk-test-secret"));
}

#[test]
fn the_step_limit_ends_as_fail_task() {
    world();
    let (port, server) = provider(vec![
        call("scroll", json!({ "direction": "down", "pixels": 10 })),
        call("scroll", json!({ "direction": "up", "pixels": 10 })),
    ]);
    let out = sightline(port, &["--max-steps", "2"]);
    server.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("failed: step limit of 2 reached"), "{}", stdout(&out));
}

#[test]
fn the_anthropic_messages_api_is_spoken_too() {
    world();
    let reply = json!({ "content": [{ "type": "text", "text": "Done." }, { "type": "tool_use", "id": "t1", "name": "finish_task", "input": { "message": "nothing to do" } }] });
    let (port, server) = provider(vec![(200, reply.to_string())]);
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "run",
            &url("/signin.html"),
            "--task",
            "Look",
            "--model",
            "anthropic:claude-test",
            "--base-url",
            &format!("http://127.0.0.1:{port}/v1"),
        ])
        .env("SIGHTLINE_API_KEY", "ak-test")
        .output()
        .unwrap();
    let reqs = server.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r = &reqs[0];
    assert!(r.head.starts_with("POST /v1/messages"), "{}", r.head);
    assert!(r.head.to_ascii_lowercase().contains("x-api-key: ak-test"));
    assert!(r.head.to_ascii_lowercase().contains("anthropic-version: 2023-06-01"));
    assert_eq!(r.body["model"], "claude-test");
    assert!(r.body["system"].as_str().unwrap().contains("exactly one action"));
    assert_eq!(r.body["tool_choice"], json!({ "type": "any" }));
    assert!(r.body["tools"][0]["input_schema"].is_object());
}

#[test]
fn traces_record_every_turn_and_view_and_replay() {
    world();
    let dir = std::env::temp_dir().join(format!("sightline-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (port, server) = provider(vec![
        call("input_text", json!({ "element_index": 1, "text": "ada@example.com" })),
        call("click_element", json!({ "element_index": 4 })),
        call("finish_task", json!({ "message": "signed in" })),
    ]);
    let out = sightline(port, &["--vision", "--trace", dir.to_str().unwrap()]);
    let reqs = server.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // Vision: the marks screenshot travels with the prompt.
    let content = &reqs[0].body["messages"][1]["content"];
    assert!(content[1]["image_url"]["url"].as_str().unwrap().starts_with("data:image/png;base64,"), "{content}");
    let lines: Vec<Value> = std::fs::read_to_string(dir.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "run + 3 turns + end");
    assert_eq!(lines[0]["type"], "run");
    assert_eq!(lines[4]["type"], "end");
    assert_eq!(lines[4]["status"], "finished");
    let click = &lines[2];
    assert_eq!(click["action"], json!({ "action": "click_element", "element_index": 4 }));
    assert!(click["target_box"].is_array());
    assert!(click["prompt_tokens"].as_u64().unwrap() > 100);
    assert!(click["replies"][0].as_str().unwrap().contains("tool_calls"));
    for l in &lines[1..4] {
        assert!(dir.join(l["screenshot"].as_str().unwrap()).exists());
        assert!(dir.join(l["marks_screenshot"].as_str().unwrap()).exists());
    }
    // The viewer: one self-contained page, checked in Chromium.
    let html_out =
        Command::new(env!("CARGO_BIN_EXE_sightline")).args(["trace", "view", dir.to_str().unwrap()]).output().unwrap();
    assert!(html_out.status.success(), "{}", String::from_utf8_lossy(&html_out.stderr));
    let html = std::fs::read_to_string(dir.join("trace.html")).unwrap();
    assert!(!html.contains("src=\"step-"), "images are inlined");
    run(async {
        let server = sightline_testkit::Server::dir(&dir).await.unwrap();
        let tab = tab().await;
        tab.navigate(&server.url("/trace.html")).await.unwrap();
        let v = tab
            .evaluate("({ turns: document.querySelectorAll('.turn').length, images: [...document.images].filter(i => i.complete && i.naturalWidth > 0).length, targets: document.querySelectorAll('.target').length, text: document.body.innerText })")
            .await
            .unwrap();
        assert_eq!(v["turns"], 3, "{}", sightline_page::cut(v["text"].as_str().unwrap_or(""), 400));
        assert_eq!(v["images"], 6, "a screenshot and a marks screenshot per turn");
        assert_eq!(v["targets"], 2, "the typed and the clicked box are highlighted");
        let text = v["text"].as_str().unwrap();
        assert!(text.contains("3 steps") && text.contains("finished"), "{text}");
        tab.close().await;
    });
    // Replay against a fresh browser.
    let replay = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["trace", "replay", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{text}\n{}", String::from_utf8_lossy(&replay.stderr));
    assert!(text.contains("3 actions replayed, 0 outcome(s) differ"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run --human`: the model is offered the hand-off actions; its request_human prints the
/// live link for the operator and opens it (`$SIGHTLINE_OPEN`, here a script that records
/// it); the person clicks and hands back over the link, and the model's next turn carries
/// the note and the page the person left.
#[test]
fn run_with_human_hands_the_browser_to_the_operator_and_resumes() {
    use std::io::BufRead;
    world();
    let (port, server) = provider(vec![
        call("request_human", json!({ "reason": "confirm the device" })),
        call("wait_for_human", json!({ "timeout_s": 120 })),
        call("finish_task", json!({ "message": "device confirmed" })),
    ]);
    let dir = fresh_dir("run-human");
    let opened = dir.join("opened");
    let opener = dir.join("open.sh");
    std::fs::write(&opener, format!("#!/bin/sh\nprintf '%s' \"$1\" > {}.part && mv {0}.part {0}\n", opened.display()))
        .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["run", &url("/live/second-factor.html"), "--task", "Confirm the device", "--model", "openai:test-model"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}/v1"), "--retry-base-ms", "10", "--human"])
        .env("SIGHTLINE_API_KEY", "sk-test-secret-123")
        .env("SIGHTLINE_OPEN", &opener)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let link = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "sightline run ended before a link: {said}");
        said.push_str(&line);
        if let Some(l) = line.trim().strip_prefix("sightline run: a person is needed; open ") {
            break l.to_string();
        }
    };
    assert!(link.starts_with("http://127.0.0.1:") && link.contains("/live/run?ticket="), "{said}");
    // Drain the rest of stderr on a thread, so the run never blocks on a full pipe.
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    });

    // The person, over the link: the button (20..220 x 100..140), then Hand back with a note.
    let (path, query) = link.split_once('?').unwrap();
    let (status, v, _) = http("GET", &format!("{path}/status?{query}"), None, &[]);
    assert_eq!((status, v["state"].as_str()), (200, Some("handed_over")), "{v}");
    assert_eq!(v["reason"], "confirm the device");
    let body = json!({ "type": "click", "x": 100, "y": 120 }).to_string();
    let (status, v, _) = http("POST", &format!("{path}/input?{query}"), Some(&body), &[]);
    assert_eq!(status, 200, "{v}");
    let body = json!({ "note": "Confirmed on my phone." }).to_string();
    let (status, v, _) = http("POST", &format!("{path}/hand_back?{query}"), Some(&body), &[]);
    assert_eq!(status, 200, "{v}");

    let out = child.wait_with_output().unwrap();
    let said = said + &rest.join().unwrap();
    let reqs = server.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}\n{said}", stdout(&out));
    assert!(stdout(&out).starts_with("finished: device confirmed"), "{}", stdout(&out));
    let tools: Vec<&str> =
        reqs[0].body["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(tools.len(), sightline_api::ACTION_TABLE.len(), "every action, the hand-off's too: {tools:?}");
    assert!(tools.contains(&"request_human") && tools.contains(&"wait_for_human"), "{tools:?}");
    assert!(reqs[1].text().contains(&link), "the model got the link it asked for");
    let third = reqs[2].text();
    assert!(third.contains("Confirmed on my phone."), "the person's note reaches the model: {third}");
    assert!(third.contains("Device confirmed by a person"), "and the page the person left: {third}");
    // The opener runs beside the run (never waited for): give it its moment, bounded.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !opened.exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&opened).unwrap(), link, "the link was opened for the operator");
}
