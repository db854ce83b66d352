//! The `sightline` binary driven as a user's program would: through pipes.

use crate::common;

use std::io::Write;

use common::*;
use serde_json::{json, Value};

#[test]
fn env_loop_through_a_pipe() {
    world();
    let mut s = Proc::start(&["env", &url("/form.html"), "--no-screenshot"]);
    let first = s.read(ACT);
    for k in ["url", "page_content", "element_index", "screenshot", "state_hash"] {
        assert!(first.get(k).is_some(), "{k} missing");
    }
    assert_eq!(first["screenshot"], "");
    assert!(first.get("error").is_none());
    let q = first["element_index"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, d)| d["attributes"]["name"] == "q")
        .unwrap()
        .0
        .clone();
    let typed =
        s.send(&json!({"action": "input_text", "element_index": q.parse::<u64>().unwrap(), "text": "!"}).to_string());
    assert_eq!(typed["element_index"][&q]["attributes"]["value"], "abc!");
    assert_ne!(typed["state_hash"], first["state_hash"]);
    // A malformed line gets an error and the loop goes on.
    let bad = s.send("this is not json");
    assert_eq!(bad["error"]["code"], "ACTION_VALIDATION_FAILED");
    assert_eq!(bad["state_hash"], typed["state_hash"]);
    let missing = s.send(r#"{"action":"click_element","element_index":99}"#);
    assert_eq!(missing["error"]["code"], "INVALID_ELEMENT_INDEX");
    assert!(missing["error"]["message"].as_str().unwrap().contains("99"));
    assert_eq!(missing["error"]["failed_action"], json!({"action": "click_element", "element_index": 99}));
    let last = s.send(r#"{"action":"finish_task","message":"all good"}"#);
    assert_eq!(last["task"], json!({"status": "finished", "message": "all good"}));
    assert_eq!(s.wait(), 0);
}

#[test]
fn env_exits_cleanly_on_eof_and_on_signals() {
    world();
    let mut s = Proc::start(&["env", &url("/kinds.html"), "--no-screenshot"]);
    s.read(ACT);
    s.close_stdin();
    assert_eq!(s.wait(), 0, "EOF exits 0");
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let s = Proc::start(&["env", &url("/kinds.html"), "--no-screenshot"]);
        s.read(ACT);
        // SAFETY: signalling the child we spawned.
        unsafe {
            libc::kill(s.child.id() as i32, sig);
        }
        assert_eq!(s.wait(), code);
    }
}

#[test]
fn state_prints_one_state_object() {
    world();
    let out = bin().args(["state", &url("/kinds.html"), "--pretty", "--no-screenshot"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("{\n"), "pretty JSON");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["page_content"].as_str().unwrap().contains("# Every interactive kind"));
    assert!(out.stderr.is_empty() || !String::from_utf8_lossy(&out.stderr).contains('{'), "logs stay off stdout");
}

#[test]
fn log_debug_goes_to_stderr_and_stdout_stays_clean_json() {
    world();
    let out = bin().args(["state", &url("/kinds.html"), "--no-screenshot", "--log", "debug"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document");
    assert!(v["page_content"].as_str().unwrap().contains("# Every interactive kind"));
    assert!(err.lines().any(|l| l.contains("DEBUG") && l.contains("captured")), "a capture timing on stderr: {err}");
    assert!(err.lines().any(|l| l.contains("settle")), "the settle outcome on stderr: {err}");
    // A filter that does not parse is refused before anything runs.
    let out = bin().args(["state", "http://127.0.0.1:1/", "--log", "sightline=loud"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--log"));
    // Every command's --help shows it.
    let out = bin().args(["rpc", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("--log FILTER"));
}

#[test]
fn bad_command_lines_say_what_is_wrong() {
    let out = bin().args(["env", "not-a-url"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("absolute URL"));
    let out = bin().args(["env", "http://127.0.0.1:1/", "--viewport", "wide"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("WIDTHxHEIGHT"));
    let out = bin().args(["frobnicate"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command"));
    let out = bin().args(["state", "http://127.0.0.1:1/", "--chrome", "/nonexistent/chromium"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("apt-get install -y chromium"), "{err}");
    let out = bin().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("sightline env URL"));
}

fn write_script(name: &str, body: &str) -> std::path::PathBuf {
    let dir = test_root().join("scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn marks_writes_a_png_and_lists_marks() {
    world();
    let out_png = test_root().join("marks.png");
    let out = bin()
        .args(["marks", &url("/signin.html"), "--out", out_png.to_str().unwrap(), "--json", "--viewport", "900x500"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let marks: Value = serde_json::from_slice(&out.stdout).unwrap();
    // email, password, the "Keep me signed in" checkbox (its label is not listed twice), Sign In, Elsewhere.
    assert_eq!(marks.as_array().unwrap().len(), 5);
    assert_eq!(
        marks[0],
        json!({"id": 1, "tag": "input", "role": "textbox", "name": "Email Address", "x": marks[0]["x"], "y": marks[0]["y"], "w": marks[0]["w"], "h": marks[0]["h"]})
    );
    let png = std::fs::read(&out_png).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert_eq!(
        (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap())),
        (900, 500)
    );
}

#[test]
fn script_runs_and_reports_errors_with_exit_codes() {
    world();
    let ok = write_script("ok.js", "var m = browser.mark();\nconsole.log('marks', m.length);\nbrowser.text('h1')\n");
    let out = bin().args(["script", ok.to_str().unwrap(), "--url", &url("/signin.html")]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "marks 5\n\"Sign in\"\n");
    let runaway = write_script("loop.js", "while (true) {}\n");
    let out = bin().args(["script", runaway.to_str().unwrap(), "--timeout", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(124));
    assert!(String::from_utf8_lossy(&out.stderr).contains("time limit"));
    let bad = write_script("bad.js", "var a = 1;\nbrowser.goto('http://127.0.0.1:9/');\n");
    let out = bin().args(["script", bad.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refused by policy") && err.contains("loopback") && err.contains("(line 2)"), "{err}");
}

#[test]
fn describe_lists_vision_primitives_only_with_a_backend() {
    let plain = bin().args(["script", "--describe"]).output().unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout).to_string();
    assert!(plain.contains("browser.clickMark(id)") && !plain.contains("ask"), "{plain}");
    let seeing = bin()
        .args(["script", "--describe", "--vision-url", "http://127.0.0.1:9/v1", "--vision-model", "m"])
        .output()
        .unwrap();
    let seeing = String::from_utf8_lossy(&seeing.stdout).to_string();
    assert!(seeing.contains("browser.ask(question)") && seeing.contains("browser.askMarks(question)"), "{seeing}");
}

/// Plays an OpenAI-compatible endpoint for one request; returns (head, body) of what it received.
fn fake_vision_endpoint(answer: &'static str) -> (u16, std::thread::JoinHandle<(String, Value)>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let (head, body) = read_http_request(&mut s);
        let reply = json!({"choices": [{"message": {"role": "assistant", "content": answer}}]}).to_string();
        write!(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}", reply.len()).unwrap();
        (head, body)
    });
    (port, handle)
}

#[test]
fn ask_marks_sends_the_marked_screenshot_and_question_to_the_vision_endpoint() {
    use base64::Engine;
    world();
    let (port, server) = fake_vision_endpoint("Mark 5 is the Sign In button.");
    let script = write_script("ask.js", "browser.askMarks('Which mark signs in?')\n");
    let out = bin()
        .args(["script", script.to_str().unwrap(), "--url", &url("/signin.html")])
        .args(["--vision-url", &format!("http://127.0.0.1:{port}/v1"), "--vision-model", "vision-test"])
        .env("SIGHTLINE_VISION_API_KEY", "test-key-123")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "\"Mark 5 is the Sign In button.\"");
    let (head, body) = server.join().unwrap();
    assert!(head.starts_with("POST /v1/chat/completions HTTP/1.1"), "{head}");
    assert!(head.contains("Bearer test-key-123"), "{head}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("test-key-123"), "the key is never logged");
    assert_eq!(body["model"], "vision-test");
    let parts = &body["messages"][0]["content"];
    let text = parts[0]["text"].as_str().unwrap();
    assert!(text.starts_with("Which mark signs in?") && text.contains("[4] button \"Sign In\""), "{text}");
    let image = parts[1]["image_url"]["url"].as_str().unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(image.strip_prefix("data:image/png;base64,").unwrap())
        .unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1280);
}

#[test]
fn connect_uses_a_running_browser_and_leaves_it_running() {
    // A browser this test owns, reachable on its DevTools port.
    let owned = run(async {
        tokio::spawn(async { sightline_cdp::Chromium::launch(&sightline_cdp::LaunchOptions::default()).await })
            .await
            .unwrap()
            .expect("second browser")
    });
    let port_file = owned.profile_dir().unwrap().join("DevToolsActivePort");
    let port = std::fs::read_to_string(&port_file).unwrap().lines().next().unwrap().trim().to_string();
    let pages = || -> usize {
        run(async {
            let v = owned.client().execute(None, &sightline_cdp::protocol::target::GetTargets {}).await.unwrap();
            v.target_infos.iter().filter(|t| t.kind == "page").count()
        })
    };
    let before = pages();
    let out = bin()
        .args(["state", &url("/kinds.html"), "--no-screenshot", "--connect", &format!("http://127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["page_content"].as_str().unwrap().contains("# Every interactive kind"));
    // Still alive, and only Sightline's own tab is gone.
    assert!(!owned.client().is_closed());
    assert_eq!(pages(), before);
    let out = bin().args(["state", &url("/kinds.html"), "--connect", "http://127.0.0.1:1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot connect"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    run(async move { owned.close().await });
}

/// Nothing left behind, Chromium's own files included: with `TMPDIR` pointed at
/// a fresh, empty directory whose path is too long for the socket Chromium puts
/// under it (it would not start there), a run that launches and closes a
/// browser works and leaves that directory empty, and nothing of it anywhere else.
#[test]
fn a_run_leaves_a_long_tmpdir_as_it_found_it() {
    world();
    let tmp = fresh_dir("a-temporary-directory-with-a-path-too-long-for-chromiums-socket-under-it");
    assert!(tmp.as_os_str().len() > 62, "{}", tmp.display());
    let out = bin().args(["state", &url("/form.html"), "--no-screenshot"]).env("TMPDIR", &tmp).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["page_content"].as_str().unwrap().contains("textbox"), "{v}");
    // `env` until EOF, with a download: its temporary download directory goes too.
    let mut s = Proc::spawn(bin().args(["env", &url("/files/download.html"), "--no-screenshot"]).env("TMPDIR", &tmp));
    let first = s.read(ACT);
    let link = first["element_index"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, d)| d["text_content"] == "Get the report")
        .unwrap_or_else(|| panic!("no download link: {first}"))
        .0
        .parse::<u64>()
        .unwrap();
    let clicked = s.send(&json!({"action": "click_element", "element_index": link}).to_string());
    assert!(clicked.get("error").is_none(), "{clicked}");
    s.close_stdin();
    let pid = s.child.id();
    let code = s.exit_code();
    assert_eq!(code, 0);
    assert_no_leftovers_in(pid, &tmp);
    assert_eq!(entries(&tmp), Vec::<String>::new(), "left in TMPDIR");
}
