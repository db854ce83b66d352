//! Hostile input and hostile pages. Each attack gets an answer within a
//! bounded time (a valid State Object or a typed error), the egress policy
//! holds on every request the page makes, and every session exits cleanly.
//!
//! Input attacks and the egress policy run the real binary through pipes
//! (each launches its own Chromium behind the egress proxy); page attacks run
//! on the shared browser of this test binary.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

fn error_code(state: &Value) -> &str {
    state["error"]["code"].as_str().unwrap_or("")
}

#[test]
fn bad_input_lines_get_typed_errors_and_the_env_loop_goes_on() {
    world();
    let mut p = Proc::start(&["env", &url("/form.html"), "--no-screenshot"]);
    let first = p.read(Duration::from_secs(60));
    assert!(first.get("error").is_none(), "{first}");
    let hash = first["state_hash"].as_str().unwrap().to_string();
    let huge_line = vec![b'x'; 10 << 20];
    let huge_text =
        format!(r#"{{"action":"input_text","element_index":1,"text":"{}"}}"#, "y".repeat(10 << 20)).into_bytes();
    let over_text_limit =
        format!(r#"{{"action":"input_text","element_index":1,"text":"{}"}}"#, "z".repeat(100_001)).into_bytes();
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000)).into_bytes();
    let deep_object = format!(r#"{}"x"{}"#, r#"{"a":"#.repeat(5_000), "}".repeat(5_000)).into_bytes();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("invalid UTF-8", b"{\"action\":\"click_element\",\"element_index\":\xff}".to_vec(), "not valid UTF-8"),
        ("lone continuation byte", b"\x80".to_vec(), "not valid UTF-8"),
        ("NUL byte", b"{\"action\":\"finish_task\",\"message\":\"a\x00b\"}".to_vec(), "NUL"),
        ("NUL escape in text", br#"{"action":"input_text","element_index":1,"text":"a\u0000b"}"#.to_vec(), "NUL"),
        ("10 MB line", huge_line, "longer than the limit"),
        ("10 MB input_text line", huge_text, "longer than the limit"),
        ("text over the limit", over_text_limit, "at most 100000"),
        ("deeply nested array", deep, "recursion limit"),
        ("deeply nested object", deep_object, "recursion limit"),
        ("not JSON", b"}{".to_vec(), "not valid JSON"),
        ("file: URL", br#"{"action":"navigate","url":"file:///etc/passwd"}"#.to_vec(), "not allowed"),
    ];
    for (what, line, says) in cases {
        // Answered (within ACT, the hang guard), in order: the next line is its answer.
        let (state, _) = p.ask(&line, ACT);
        assert_eq!(error_code(&state), "ACTION_VALIDATION_FAILED", "{what}: {}", state["error"]);
        let msg = state["error"]["message"].as_str().unwrap();
        assert!(msg.contains(says), "{what}: {msg}");
        assert_eq!(state["state_hash"], hash, "{what}: the state changed");
        // A reply to a huge line stays small.
        assert!(state.to_string().len() < 64 << 10, "{what}: a {} byte reply", state.to_string().len());
    }
    // The loop still works: a real action changes the state.
    let (state, _) = p.ask(br#"{"action":"input_text","element_index":1,"text":"still here"}"#, ACT);
    assert!(state.get("error").is_none(), "{}", state["error"]);
    assert_ne!(state["state_hash"], hash);
    assert_eq!(p.finish(), 0);
}

#[test]
fn bad_input_lines_get_parse_errors_and_the_rpc_loop_goes_on() {
    world();
    let mut p = Proc::start(&["rpc"]);
    let huge = vec![b'{'; 10 << 20];
    let deep = "[".repeat(100_000).into_bytes();
    for (what, line) in [
        ("invalid UTF-8", b"{\"jsonrpc\":\"2.0\",\"method\":\"list_tools\",\"id\":\xff}".to_vec()),
        ("NUL byte", b"{\"jsonrpc\":\"2.0\",\"method\":\"list\x00_tools\",\"id\":1}".to_vec()),
        ("10 MB line", huge),
        ("deeply nested", deep),
    ] {
        let (reply, _) = p.ask(&line, ACT);
        assert_eq!(reply["error"]["code"], -32700, "{what}: {reply}");
        assert_eq!(reply["id"], Value::Null, "{what}");
    }
    let (reply, _) = p.ask(br#"{"jsonrpc":"2.0","method":"list_tools","id":7}"#, ACT);
    assert_eq!(reply["id"], 7);
    assert!(reply["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{reply}");
    // browser_type refuses text past the limit before touching any session.
    let long = json!({"jsonrpc":"2.0","method":"browser_type","id":8,"params":{"session":"s","target_id":"t","tab_id":"x","ref":"p1:1","text":"a".repeat(100_001)}});
    let (reply, _) = p.ask(long.to_string().as_bytes(), ACT);
    assert_eq!(reply["error"]["data"]["code"], "invalid_params", "{reply}");
    assert_eq!(p.finish(), 0);
}

/// A loopback HTTP server for policy tests: routes by path, records every request line.
struct Mini {
    port: u16,
    hits: Arc<Mutex<Vec<String>>>,
}

type Route = Arc<dyn Fn(&str) -> String + Send + Sync>;

fn mini(route: Route) -> Mini {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(Mutex::new(Vec::new()));
    let log = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let (log, route) = (log.clone(), route.clone());
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = [0u8; 8192];
                let n = s.read(&mut buf).unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let line = head.lines().next().unwrap_or("").to_string();
                log.lock().unwrap().push(line.clone());
                let path = line.split(' ').nth(1).unwrap_or("/").to_string();
                let _ = s.write_all(route(&path).as_bytes());
            });
        }
    });
    Mini { port, hits }
}

fn html(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The attacker-chosen destination: answers anything, records everything.
fn victim() -> Mini {
    mini(Arc::new(|_| html("<h1>victim reached</h1>")))
}

/// Pages that try to reach `target` every way a page can.
fn attack_site(target: u16) -> Mini {
    let b = format!("127.0.0.1:{target}");
    mini(Arc::new(move |path| {
        let page = |body: String| html(&format!("<!doctype html><title>attack</title><h1>{path}</h1>{body}"));
        match path {
            "/redirect" => format!(
                "HTTP/1.1 302 Found\r\nLocation: http://{b}/redirected\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            "/iframe" => page(format!(r#"<iframe src="http://{b}/iframe"></iframe>"#)),
            "/subresources" => page(format!(
                r#"<img src="http://{b}/img"><link rel="stylesheet" href="http://{b}/css"><script src="http://{b}/script.js"></script>
                <video src="http://{b}/video"></video><object data="http://{b}/object"></object>"#
            )),
            "/fetch" => page(format!(
                r#"<script>
                fetch("http://{b}/fetch").catch(function(){{}});
                var x = new XMLHttpRequest(); x.open("GET", "http://{b}/xhr"); x.send();
                navigator.sendBeacon("http://{b}/beacon", "x");
                new EventSource("http://{b}/sse");
                </script>"#
            )),
            "/websocket" => page(format!(r#"<script>try {{ new WebSocket("ws://{b}/ws"); }} catch (e) {{}}</script>"#)),
            "/worker" => page(format!(
                r#"<script>
                var src = 'fetch("http://{b}/worker").catch(function(){{}})';
                new Worker(URL.createObjectURL(new Blob([src], {{type: "text/javascript"}})));
                </script>"#
            )),
            "/refresh" => page(format!(r#"<meta http-equiv="refresh" content="0;url=http://{b}/refresh">"#)),
            "/form" => page(format!(
                r#"<form id="f" method="post" action="http://{b}/post"><input name="x" value="1"></form>
                <script>document.getElementById("f").submit();</script>"#
            )),
            "/popup" => page(format!(r#"<button onclick="window.open('http://{b}/popup')">open</button>"#)),
            "/ok" => page(r#"<img src="/own-image">"#.to_string()),
            _ => page(String::new()),
        }
    }))
}

fn navigate(p: &mut Proc, url: &str) -> Value {
    p.ask(json!({"action": "navigate", "url": url}).to_string().as_bytes(), ACT).0
}

#[test]
fn the_egress_policy_holds_on_every_request_the_page_makes() {
    let victim = victim();
    let site = attack_site(victim.port);
    let a = format!("http://127.0.0.1:{}", site.port);
    let blocked = format!("http://127.0.0.1:{}/", victim.port);
    let mut p = Proc::start(&["env", &format!("{a}/"), "--no-screenshot", "--block", &blocked]);
    let first = p.read(Duration::from_secs(60));
    assert!(first.get("error").is_none(), "{first}");

    for path in ["/iframe", "/subresources", "/fetch", "/websocket", "/worker", "/refresh", "/form", "/redirect"] {
        let state = navigate(&mut p, &format!("{a}{path}"));
        // A page that loads answers with a state; a redirect into the blocked host shows the refusal.
        if path == "/redirect" {
            let shown = state["page_content"].as_str().unwrap_or("").contains("rule block")
                || state["error"]["message"].as_str().unwrap_or("").contains("rule block");
            assert!(shown, "the refusal is not named: {state}");
        } else {
            assert!(state.get("error").is_none(), "{path}: {}", state["error"]);
        }
    }
    // A popup opened by a click.
    let state = navigate(&mut p, &format!("{a}/popup"));
    let (state, _) = p.ask(
        json!({"action": "click_element", "element_index": state["element_index"].as_object().unwrap().len()})
            .to_string()
            .as_bytes(),
        ACT,
    );
    assert!(state.get("error").is_none(), "popup click: {}", state["error"]);

    // Where the agent steers: refused before the browser moves, naming the rule.
    let hash = state["state_hash"].clone();
    for (target, code, rule) in [
        (blocked.clone(), "NAVIGATION_FAILED", "rule block"),
        ("http://169.254.169.254/latest/meta-data/".into(), "NAVIGATION_FAILED", "rule metadata"),
        ("http://169.254.169.254\\@8.8.8.8/".into(), "NAVIGATION_FAILED", "rule metadata"),
        ("http://2852039166/".into(), "NAVIGATION_FAILED", "rule metadata"),
        ("http://[::ffff:169.254.169.254]/".into(), "NAVIGATION_FAILED", "rule metadata"),
        ("http://metadata.google.internal/".into(), "NAVIGATION_FAILED", "rule metadata"),
        (format!("http://127.0.0.1:{}@127.0.0.1:{}/", site.port, victim.port), "ACTION_VALIDATION_FAILED", "user name"),
        (format!("http://127.0.0.1:{}\\@127.0.0.1:{}/", victim.port, site.port), "NAVIGATION_FAILED", "rule block"),
    ] {
        let s = navigate(&mut p, &target);
        assert_eq!(error_code(&s), code, "{target}: {s}");
        assert!(s["error"]["message"].as_str().unwrap().contains(rule), "{target}: {}", s["error"]["message"]);
        assert_eq!(s["state_hash"], hash, "{target}");
    }

    // The control: the proxy passes what is allowed.
    let ok = navigate(&mut p, &format!("{a}/ok"));
    assert!(ok.get("error").is_none(), "{}", ok["error"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(p.finish(), 0);
    assert!(site.hits.lock().unwrap().iter().any(|h| h.starts_with("GET /own-image")), "{:?}", site.hits);
    let reached = victim.hits.lock().unwrap().clone();
    assert!(reached.is_empty(), "the blocked host was reached: {reached:?}");
}

#[test]
fn without_the_block_rule_the_same_pages_do_reach_the_victim() {
    // Proves the test above can fail: the attacks are real.
    let victim = victim();
    let site = attack_site(victim.port);
    let a = format!("http://127.0.0.1:{}", site.port);
    let mut p = Proc::start(&["env", &format!("{a}/subresources"), "--no-screenshot"]);
    let _ = p.read(Duration::from_secs(60));
    for page in ["/fetch", "/iframe", "/websocket", "/worker", "/form", "/redirect"] {
        let _ = navigate(&mut p, &format!("{a}{page}"));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(p.finish(), 0);
    let reached = victim.hits.lock().unwrap().clone();
    for path in ["/img", "/css", "/fetch", "/xhr", "/iframe", "/ws", "/worker", "/post", "/redirected"] {
        assert!(reached.iter().any(|h| h.contains(path)), "{path} not seen: {reached:?}");
    }
}

#[test]
fn allow_prefixes_and_block_private_cover_page_requests() {
    let victim = victim();
    let site = attack_site(victim.port);
    let a = format!("http://127.0.0.1:{}", site.port);
    // Only the attack site is allowed (a prefix naming it also lifts --block-private for it).
    let mut p = Proc::start(&[
        "env",
        &format!("{a}/subresources"),
        "--no-screenshot",
        "--allow",
        &format!("{a}/"),
        "--block-private",
    ]);
    let first = p.read(Duration::from_secs(60));
    assert!(first.get("error").is_none(), "{first}");
    let s = navigate(&mut p, &format!("http://127.0.0.1:{}/", victim.port));
    assert_eq!(error_code(&s), "NAVIGATION_FAILED");
    assert!(s["error"]["message"].as_str().unwrap().contains("rule allow"), "{}", s["error"]);
    let s = navigate(&mut p, &format!("http://localhost:{}/", site.port));
    assert!(s["error"]["message"].as_str().unwrap_or("").contains("rule allow"), "{}", s["error"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(p.finish(), 0);
    assert!(victim.hits.lock().unwrap().is_empty(), "{:?}", victim.hits);

    // --block-private alone refuses a loopback start page, naming the rule.
    let out = bin().args(["state", &format!("{a}/"), "--no-screenshot", "--block-private"]).output().unwrap();
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(error_code(&s), "NAVIGATION_FAILED", "{s}");
    assert!(s["error"]["message"].as_str().unwrap().contains("rule private_address"), "{}", s["error"]);
    assert!(site.hits.lock().unwrap().is_empty() || !site.hits.lock().unwrap().iter().any(|h| h.starts_with("GET / ")));

    // Explicit rules cannot be half-enforced on an attached browser.
    let out =
        bin().args(["state", &format!("{a}/"), "--connect", "http://127.0.0.1:9", "--block-private"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--connect"));
}

#[test]
fn rpc_and_script_front_ends_use_the_same_egress_policy() {
    let victim = victim();
    let site = attack_site(victim.port);
    // rpc: browser_navigate is refused with the rule in detail.
    let mut p = Proc::start(&["rpc", "--block", &format!("http://127.0.0.1:{}/", victim.port)]);
    let bind = json!({"jsonrpc":"2.0","method":"bind_browser","id":1,"params":{"session":"h"}});
    let (reply, _) = p.ask(bind.to_string().as_bytes(), Duration::from_secs(60));
    let r = &reply["result"];
    let (target, tab) = (r["target_id"].as_str().unwrap(), r["tabs"][0]["tab_id"].as_str().unwrap());
    let nav = json!({"jsonrpc":"2.0","method":"browser_navigate","id":2,"params":{"session":"h","target_id":target,"tab_id":tab,"url":"http://[::ffff:a9fe:a9fe]/latest/"}});
    let (reply, _) = p.ask(nav.to_string().as_bytes(), ACT);
    assert_eq!(reply["error"]["data"]["code"], "navigation_failed", "{reply}");
    assert_eq!(reply["error"]["data"]["detail"]["rule"], "metadata", "{reply}");
    // A page whose sub-resources are refused: the snapshot counts them, with the rule.
    let addr = json!({"session":"h","target_id":target,"tab_id":tab});
    let mut nav = json!({"jsonrpc":"2.0","method":"browser_navigate","id":3,"params":addr.clone()});
    nav["params"]["url"] = json!(format!("http://127.0.0.1:{}/subresources", site.port));
    let (reply, _) = p.ask(nav.to_string().as_bytes(), ACT);
    assert!(reply.get("result").is_some(), "{reply}");
    // The snapshot keeps exactly the seed's keys; the refusals are a tool of their own.
    let mut sem = addr.clone();
    sem["snapshot_format"] = json!("semantic_v2");
    let snap = json!({"jsonrpc":"2.0","method":"get_browser_state","id":4,"params":sem});
    let (reply, _) = p.ask(snap.to_string().as_bytes(), ACT);
    let mut keys: Vec<&str> = reply["result"].as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["content_refs", "mode", "oopif", "outline", "page", "refs", "snapshot", "status", "tab_id", "target_id"],
        "{reply}"
    );
    let ask_blocked = json!({"jsonrpc":"2.0","method":"get_blocked_requests","id":40,"params":{"session":"h"}});
    let (reply, _) = p.ask(ask_blocked.to_string().as_bytes(), ACT);
    let blocked = &reply["result"];
    assert!(blocked["count"].as_u64().unwrap_or(0) >= 2, "{reply}");
    // Chromium's own background requests may be refused too (rule `private` or
    // `scheme`), in any order: look for the page's.
    let victim_port = format!(":{}", victim.port);
    let ours = |b: &Value| -> Vec<Value> {
        b["recent"]
            .as_array()
            .map(|r| r.iter().filter(|e| e.to_string().contains(&victim_port)).cloned().collect())
            .unwrap_or_default()
    };
    let mine = ours(blocked);
    assert!(!mine.is_empty() && mine.iter().all(|e| e["rule"] == "block"), "{blocked}");
    let (reply, _) = p.ask(ask_blocked.to_string().replace("\"id\":40", "\"id\":5").as_bytes(), ACT);
    assert!(ours(&reply["result"]).is_empty(), "counted since the previous call: {reply}");
    assert_eq!(p.finish(), 0);
    assert!(victim.hits.lock().unwrap().is_empty(), "reached: {:?}", victim.hits);

    // script: the page is steered by browser.eval (not a gated primitive), and the
    // proxy still refuses the loopback victim (scripts refuse private addresses by default).
    let dir = std::env::temp_dir().join(format!("sightline-hostile-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let js = dir.join("steer.js");
    let v = victim.port;
    std::fs::write(
        &js,
        format!(
            r#"browser.eval("fetch('http://127.0.0.1:{v}/by-eval').catch(function(){{}}); 1");
            browser.eval("location.href = 'http://127.0.0.1:{v}/by-location'");
            var refused = false;
            try {{ browser.goto("http://169.254.169.254/latest/"); }} catch (e) {{ refused = String(e).indexOf("rule metadata") >= 0; }}
            refused"#
        ),
    )
    .unwrap();
    let out = bin()
        .args([
            "script",
            js.to_str().unwrap(),
            "--url",
            &format!("http://127.0.0.1:{}/ok", site.port),
            "--timeout",
            "20",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.trim().lines().last(), Some("true"), "{stdout}");
    assert!(site.hits.lock().unwrap().iter().any(|h| h.starts_with("GET /ok")), "the trusted start page loads");
    assert!(victim.hits.lock().unwrap().is_empty(), "reached: {:?}", victim.hits);
}

#[test]
fn a_logging_loop_stays_within_the_console_bound() {
    world();
    let dir = std::env::temp_dir().join(format!("sightline-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("spam.js");
    std::fs::write(&script, "console.log('first'); for (;;) console.log('x'.repeat(100000));").unwrap();
    let mut child = bin()
        .args(["script", script.to_str().unwrap(), "--timeout", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak_kb = 0u64;
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(kb) =
                s.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "the script did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = String::from_utf8(reader.join().unwrap()).unwrap();
    assert_eq!(status.code(), Some(124), "the time limit ends it");
    assert_no_leftovers(pid);
    // Kept on timeout, bounded, and the overflow is said.
    assert!(out.starts_with("first\n"), "{}", &out[..out.len().min(200)]);
    assert!(out.len() < (1 << 20) + (64 << 10), "{} bytes of console output", out.len());
    assert!(out.lines().last().unwrap().contains("more console lines dropped"), "{}", out.lines().last().unwrap());
    assert!(peak_kb < 300 * 1024, "sightline grew to {} MB", peak_kb / 1024);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- hostile pages, on the shared browser ----

async fn within<T>(what: &str, limit: Duration, f: impl std::future::Future<Output = T>) -> T {
    let t = Instant::now();
    match tokio::time::timeout(limit, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no answer within {limit:?} (waited {:?})", t.elapsed()),
    }
}

/// A valid State Object: every key present, indexes 1..N.
fn assert_valid(s: &sightline_api::StateObject) {
    let v = serde_json::to_value(s).unwrap();
    for k in ["url", "page_content", "element_index", "screenshot", "state_hash"] {
        assert!(v.get(k).is_some(), "{k} missing");
    }
    assert_eq!(s.state_hash.len(), 64);
}

async fn open(path: &str) -> sightline_api::Env {
    let mut env = sightline_api::Env::new(tab().await, sightline_api::EnvOptions { screenshot: true }).await.unwrap();
    let t = within(
        path,
        Duration::from_secs(30),
        env.step_action(sightline_api::Action::Navigate { url: url(path) }, json!({"action": "navigate"})),
    )
    .await;
    assert_valid(&t.state);
    env
}

/// One step on a hostile page, and what its answer must show.
enum Do {
    /// The state shows this text.
    Shows(&'static str),
    /// Click the control with this text.
    Click(&'static str, Then),
    /// Type into the field with this id or name.
    Type(&'static str, &'static str, Then),
    /// Scroll down this many pixels.
    Scroll(u32, Then),
    /// No script of the page had to be stopped.
    NothingHung,
}

/// What an answer must be: it is always a valid State Object, within the bound.
enum Then {
    /// No error.
    Ok,
    /// No error, and the page shows this text.
    Shows(&'static str),
    /// A typed error is allowed, not one that ends the session.
    Survives,
}

/// Hostile pages that differ only in what is done on them: each row a test that
/// opens the page on the shared browser and plays its steps, every answer a
/// valid State Object within the bound.
macro_rules! hostile_pages {
    ($( $(#[$doc:meta])* $name:ident: $path:literal => [$($step:expr),* $(,)?]; )*) => {
        $( $(#[$doc])* #[test] fn $name() { run(play($path, vec![$($step),*])) } )*
    };
}

hostile_pages! {
    /// The main frame never stops loading: clicks answer after the load limit.
    a_page_that_never_finishes_loading_still_answers: "/hostile/never.html" =>
        [Do::Shows("never finishes loading"), Do::Click("Still usable", Then::Ok)];
    pages_that_redefine_globals_and_freeze_prototypes_still_work: "/hostile/globals.html" =>
        [Do::Type("q", "abc", Then::Ok), Do::Click("Go", Then::Shows("clicked abc"))];
    /// After 50 popups took the foreground, the opener still answers (perhaps typed).
    fifty_popups_from_one_click: "/hostile/popups.html" =>
        [Do::Click("Open 50", Then::Ok), Do::Scroll(500, Then::Survives)];
    a_page_that_navigates_itself_every_100_ms: "/hostile/renav.html" =>
        [Do::Scroll(500, Then::Survives), Do::Scroll(500, Then::Survives), Do::Scroll(500, Then::Survives),
         Do::Scroll(500, Then::Survives), Do::Scroll(500, Then::Survives)];
    twenty_nested_iframes: "/hostile/nested.html?d=20" => [Do::Shows("Level 20")];
    a_huge_canvas: "/hostile/canvas.html" =>
        [Do::Click("Below the title", Then::Ok), Do::Scroll(20_000, Then::Survives)];
    /// The handler is stopped (`Runtime.terminateExecution`) and the page lives on.
    infinite_loops_in_handlers_are_bounded: "/hostile/loop.html" =>
        [Do::Click("Spin after the click", Then::Survives), Do::Scroll(500, Then::Ok)];
    /// Issue 18, item 1: `Promise`, `requestAnimationFrame`, `Reflect.apply` and
    /// `Function.prototype.call` replaced, and the probe rewritten so it never answers:
    /// the probe keeps what it took at install, and every read of it is bounded.
    a_page_that_breaks_promises_and_the_probe: "/hostile/promise.html" =>
        [Do::Click("Click me", Then::Shows("clicked")), Do::NothingHung];
    /// Issue 18, item 1: a probe that would report 200,000 pointer targets: what it may
    /// report is bounded.
    a_page_that_reports_200000_pointer_targets: "/hostile/pointers.html" =>
        [Do::Click("Click me", Then::Shows("clicked"))];
}

async fn play(path: &str, steps: Vec<Do>) {
    let mut env = open(path).await;
    assert!(!env.state().screenshot.is_empty(), "{path}: a screenshot");
    for (i, s) in steps.iter().enumerate() {
        let (action, then) = match s {
            Do::Shows(text) => {
                assert!(env.state().page_content.contains(text), "{path}: {text:?} in {}", env.state().page_content);
                continue;
            }
            Do::NothingHung => {
                assert_eq!(env.tab().scripts_stopped(), 0, "{path}: nothing hung");
                continue;
            }
            Do::Click(text, then) => {
                (json!({"action":"click_element","element_index": by_text(env.state(), text)}), then)
            }
            Do::Type(name, text, then) => {
                (json!({"action":"input_text","element_index": by_id_name(env.state(), name),"text": text}), then)
            }
            Do::Scroll(px, then) => (json!({"action":"scroll","direction":"down","pixels": px}), then),
        };
        let what = format!("{path} step {i}: {action}");
        let turn = within(&what, Duration::from_secs(60), step(&mut env, action.clone())).await;
        assert_valid(&turn.state);
        match then {
            Then::Ok => assert!(turn.state.error.is_none(), "{what}: {:?}", turn.state.error),
            Then::Shows(text) => {
                assert!(turn.state.error.is_none(), "{what}: {:?}", turn.state.error);
                assert!(turn.state.page_content.contains(text), "{what}: {text:?} in {}", turn.state.page_content);
            }
            Then::Survives => assert!(!turn.fatal, "{what}: {:?}", turn.state.error),
        }
    }
    env.close().await;
}

#[test]
fn a_renderer_crash_is_a_typed_error() {
    run(async {
        let mut env = open("/form.html").await;
        let hash = env.state().state_hash.clone();
        // chrome://crash, as CDP offers it.
        // Chromium never answers Page.crash (the renderer is gone): the client fails the
        // call when the crash event arrives instead of waiting for its 60 s limit.
        let t = Instant::now();
        let r =
            within("Page.crash", Duration::from_secs(10), env.tab().execute(&sightline_cdp::protocol::page::Crash {}))
                .await;
        eprintln!("Page.crash returned in {:?}: {:?}", t.elapsed(), r.as_ref().err());
        assert!(r.is_err());
        let t = Instant::now();
        let turn = within(
            "after the crash",
            Duration::from_secs(20),
            step(&mut env, json!({"action":"scroll","direction":"down"})),
        )
        .await;
        eprintln!("the first action after a renderer crash answered in {:?}", t.elapsed());
        let e = turn.state.error.as_ref().expect("an error after the crash");
        assert_eq!(e.code, sightline_api::ErrorCode::InternalBrowserError, "{e:?}");
        assert_eq!(turn.state.state_hash, hash);
        assert!(turn.fatal, "a crashed tab ends the session");
        let t = Instant::now();
        within("closing the crashed tab", Duration::from_secs(70), env.close()).await;
        eprintln!("closing a crashed tab took {:?}", t.elapsed());
        // The browser itself survives: a new tab works.
        let env = open("/form.html").await;
        env.close().await;
    });
}

fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap()
}

#[test]
fn memory_stays_flat_over_500_actions_on_one_page() {
    world();
    let mut p = Proc::start(&["env", &url("/scroll.html"), "--no-screenshot"]);
    let first = p.read(Duration::from_secs(60));
    assert!(first.get("error").is_none(), "{first}");
    let pid = p.child.id();
    let mut at_100 = 0;
    let t = Instant::now();
    for i in 0..500 {
        let action = match i % 4 {
            0 => json!({"action":"scroll","direction":"down","pixels": 300}),
            1 => json!({"action":"scroll","direction":"up","pixels": 300}),
            2 => json!({"action":"click_element","element_index": 10_000}),
            _ => json!({"action":"bogus"}),
        };
        let (state, _) = p.ask(action.to_string().as_bytes(), ACT);
        assert!(state.get("state_hash").is_some(), "{state}");
        if i == 100 {
            at_100 = rss_kb(pid);
        }
    }
    let at_500 = rss_kb(pid);
    eprintln!("500 actions in {:?}; sightline RSS {} KB after 100, {} KB after 500", t.elapsed(), at_100, at_500);
    assert!(at_500 < at_100 + 16 * 1024, "grew from {at_100} KB to {at_500} KB");
    assert_eq!(p.finish(), 0);
}

/// A page 2,500 elements deep through every front end: env, state, rpc (semantic_v2)
/// and script (marks). Nothing overflows its stack and every process exits cleanly.
#[test]
fn a_very_deep_page_through_every_front_end() {
    world();
    let page = url("/hostile/deep.html");
    // env
    let mut p = Proc::start(&["env", &page, "--no-screenshot"]);
    let first = p.read(ACT);
    let content = first["page_content"].as_str().unwrap_or_default().to_string();
    assert!(content.contains("[1]button \"Deep button\" deep text"), "{first}");
    let (after, _) = p.ask(br#"{"action":"click_element","element_index":1}"#, ACT);
    assert!(after["page_content"].as_str().unwrap_or_default().contains("Deep clicked"), "{after}");
    assert_eq!(p.finish(), 0);
    // state
    let out = bin().args(["state", &page, "--no-screenshot"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Deep button"));
    // rpc, semantic_v2
    let mut p = Proc::start(&["rpc"]);
    let bind = json!({"jsonrpc":"2.0","method":"bind_browser","id":1,"params":{"session":"deep"}});
    let (reply, _) = p.ask(bind.to_string().as_bytes(), Duration::from_secs(60));
    let r = &reply["result"];
    let addr = json!({"session":"deep","target_id":r["target_id"],"tab_id":r["tabs"][0]["tab_id"]});
    let mut nav = json!({"jsonrpc":"2.0","method":"browser_navigate","id":2,"params":addr.clone()});
    nav["params"]["url"] = json!(page);
    let (reply, _) = p.ask(nav.to_string().as_bytes(), ACT);
    assert!(reply.get("result").is_some(), "{reply}");
    let mut snap = json!({"jsonrpc":"2.0","method":"get_browser_state","id":3,"params":addr});
    snap["params"]["snapshot_format"] = json!("semantic_v2");
    let (reply, _) = p.ask(snap.to_string().as_bytes(), ACT);
    assert!(reply["result"]["outline"].as_str().unwrap_or_default().contains("Deep button"), "{reply}");
    assert_eq!(p.finish(), 0);
    // script
    let dir = std::env::temp_dir().join(format!("sightline-hostile-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let js = dir.join("deep.js");
    std::fs::write(&js, "var m = browser.mark(); m.some(function (x) { return x.name === 'Deep button'; })").unwrap();
    let out = bin().args(["script", js.to_str().unwrap(), "--url", &page, "--timeout", "20"]).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.trim().lines().last(), Some("true"), "{stdout}");
}

/// Behind the egress proxy, a refused connection is a failed navigation (the
/// proxy's 502 is not shown as a page), and the previous page stays live.
#[test]
fn a_refused_connection_through_the_proxy_is_a_failed_navigation() {
    world();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut p = Proc::start(&["env", &url("/form.html"), "--no-screenshot"]);
    let first = p.read(ACT);
    let nav = json!({"action": "navigate", "url": format!("http://{dead}/")});
    let (failed, _) = p.ask(nav.to_string().as_bytes(), ACT);
    assert_eq!(error_code(&failed), "NAVIGATION_FAILED", "{failed}");
    assert!(failed["error"]["message"].as_str().unwrap_or_default().contains("ERR_CONNECTION_REFUSED"), "{failed}");
    assert_eq!(failed["state_hash"], first["state_hash"]);
    let (typed, _) = p.ask(br#"{"action":"input_text","element_index":1,"text":"!"}"#, ACT);
    assert_eq!(error_code(&typed), "", "{typed}");
    assert_eq!(p.finish(), 0);
    // The first load of a blank tab (not intercepted): the proxy's answer
    // committed in its place is undone, and the tab is blank again.
    let mut p = Proc::start(&["env", &format!("http://{dead}/"), "--no-screenshot"]);
    let first = p.read(ACT);
    assert_eq!(error_code(&first), "NAVIGATION_FAILED", "{first}");
    assert!(first["error"]["message"].as_str().unwrap_or_default().contains("ERR_CONNECTION_REFUSED"), "{first}");
    assert_eq!(first["url"], "about:blank", "{first}");
    assert_eq!(first["page_content"], "", "{first}");
    let nav = json!({"action": "navigate", "url": url("/form.html")});
    let (loaded, _) = p.ask(nav.to_string().as_bytes(), ACT);
    assert_eq!(error_code(&loaded), "", "{loaded}");
    assert_eq!(p.finish(), 0);
    // A first load that worked, whose page then went on by itself to an address
    // that fails: the agent's navigation did not fail (the proxy's answer to the
    // page's own load is not taken for it).
    let moves = format!("{}?to=http://{dead}/", url("/hostile/moves-on.html"));
    let p = Proc::start(&["env", &moves, "--no-screenshot"]);
    let first = p.read(ACT);
    assert_eq!(error_code(&first), "", "{first}");
    assert_eq!(p.finish(), 0);
}

/// Sightline's own scripts run in an isolated world: a page that redefines the
/// getters they read (scroll extents, the focused element, the ready state)
/// cannot make them misread the page or refuse to type.
#[test]
fn a_page_that_redefines_dom_getters_does_not_fool_the_capture() {
    run(async {
        let mut env = env("/hostile/liar.html").await;
        let s = env.state().clone();
        assert!(s.page_content.contains("[scroll box: 0px above, 400px below]"), "{}", s.page_content);
        let i = find(&s, "the name box", |d| d.aria_label.as_deref() == Some("Name"));
        let s = step(&mut env, json!({"action": "input_text", "element_index": i, "text": "Ada"})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("Typed: Ada"), "{}", s.page_content);
        assert!(s.page_content.contains("value=\"Ada\" focused"), "{}", s.page_content);
        env.close().await;
    })
}

// ---- issue 18: hostile pages, round two ----

/// Issue 18, item 3: a lone UTF-16 surrogate in a text node, an attribute, the
/// title and a console message (Chromium escapes it as `\ud800`, which is no
/// Unicode scalar value) reads as U+FFFD everywhere, through env and rpc, and
/// the session goes on.
#[test]
fn lone_surrogates_read_as_replacement_characters() {
    world();
    let page = url("/hostile/surrogate.html");
    // env: the State Object, then an action on the same page.
    let mut p = Proc::start(&["env", &page, "--no-screenshot"]);
    let first = p.read(ACT);
    assert!(first.get("error").is_none(), "{first}");
    let content = first["page_content"].as_str().unwrap();
    assert!(content.contains("a\u{FFFD}b"), "{content}");
    assert!(content.contains("button \"Go \u{FFFD}\""), "{content}");
    let (after, _) = p.ask(br#"{"action":"click_element","element_index":1}"#, ACT);
    assert!(after.get("error").is_none(), "{after}");
    assert!(after["page_content"].as_str().unwrap().contains("clicked \u{FFFD}"), "{after}");
    assert_eq!(p.finish(), 0);
    // rpc: the title, the semantic snapshot.
    let mut p = Proc::start(&["rpc"]);
    let bind = json!({"jsonrpc":"2.0","method":"bind_browser","id":1,"params":{"session":"s"}});
    let (reply, _) = p.ask(bind.to_string().as_bytes(), Duration::from_secs(60));
    let r = &reply["result"];
    let addr = json!({"session":"s","target_id":r["target_id"],"tab_id":r["tabs"][0]["tab_id"]});
    let mut nav = json!({"jsonrpc":"2.0","method":"browser_navigate","id":2,"params":addr.clone()});
    nav["params"]["url"] = json!(page);
    let (reply, _) = p.ask(nav.to_string().as_bytes(), ACT);
    assert_eq!(reply["result"]["title"], "T\u{FFFD}itle", "{reply}");
    let mut snap = json!({"jsonrpc":"2.0","method":"get_browser_state","id":3,"params":addr});
    snap["params"]["snapshot_format"] = json!("semantic_v2");
    let (reply, _) = p.ask(snap.to_string().as_bytes(), ACT);
    let outline = reply["result"]["outline"].as_str().unwrap_or_default();
    assert!(outline.contains("a\u{FFFD}b"), "{reply}");
    assert_eq!(reply["result"]["page"]["title"], "T\u{FFFD}itle", "{reply}");
    assert_eq!(p.finish(), 0);
    // An evaluate result, in process.
    run(async {
        let env = env("/hostile/surrogate.html").await;
        assert_eq!(eval(&env, "document.title").await, json!("T\u{FFFD}itle"));
        assert_eq!(eval(&env, "'x\\uDBFF'").await, json!("x\u{FFFD}"));
        // A whole pair is kept.
        assert_eq!(eval(&env, "'\\uD83D\\uDE00'").await, json!("\u{1F600}"));
        env.close().await;
    });
}

/// Issue 18, item 2: a page that asks to stay (`beforeunload`) cannot keep the agent:
/// an explicit `navigate` answers the dialog with Leave. A `beforeunload` the page
/// raises for another reason (a link clicked) is shown as a dialog, as before.
#[test]
fn navigate_leaves_a_page_that_asks_to_stay() {
    run(async {
        let mut env = env("/hostile/beforeunload.html").await;
        // Typing is a user activation: from now on the page's beforeunload asks.
        let draft = find(env.state(), "the draft box", |d| d.aria_label.as_deref() == Some("Draft"));
        let t = step(&mut env, json!({"action":"input_text","element_index": draft,"text":"unsaved"})).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        // A link: the dialog is the next state, Leave and Stay its buttons.
        let link = by_text(env.state(), "Elsewhere");
        let t = within(
            "click",
            Duration::from_secs(30),
            step(&mut env, json!({"action":"click_element","element_index": link})),
        )
        .await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert!(texts(&t.state).contains(&"Stay".to_string()), "{}", t.state.page_content);
        // navigate, with the dialog open: the agent leaves.
        let form = url("/form.html");
        let t =
            within("navigate", Duration::from_secs(30), step(&mut env, json!({"action":"navigate","url": form}))).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert_eq!(t.state.url, form);
        // Back on the page, activated again: navigate leaves without any dialog in between.
        let back = url("/hostile/beforeunload.html");
        let t = step(&mut env, json!({"action":"navigate","url": back})).await;
        assert_eq!(t.state.url, back, "{:?}", t.state.error);
        let draft = find(env.state(), "the draft box", |d| d.aria_label.as_deref() == Some("Draft"));
        step(&mut env, json!({"action":"input_text","element_index": draft,"text":"again"})).await;
        let t =
            within("navigate", Duration::from_secs(30), step(&mut env, json!({"action":"navigate","url": form}))).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert_eq!(t.state.url, form);
        assert!(env.tab().open_dialog().is_none());
        env.close().await;
    });
}

/// Issue 18, item 2: `input_text` of 8,000 characters: the first ones and the last
/// as real keys, the rest inserted as an input method would, every `input` event
/// trusted, the whole text in the field.
#[test]
fn eight_thousand_characters_of_input_text() {
    run(async {
        let mut env = env("/hostile/typing.html").await;
        let field = find(env.state(), "the long field", |d| d.aria_label.as_deref() == Some("Long"));
        let text: String = (0..8000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let t = Instant::now();
        let turn = within(
            "typing",
            Duration::from_secs(120),
            step(&mut env, json!({"action":"input_text","element_index": field,"text": text})),
        )
        .await;
        eprintln!("8,000 characters typed in {:?}", t.elapsed());
        assert!(turn.state.error.is_none(), "{:?}", turn.state.error);
        assert!(turn.state.page_content.contains("length 8000"), "{}", turn.state.page_content);
        assert_eq!(eval(&env, "document.getElementById('t').value").await, json!(text));
        let seen = eval(&env, "seen").await;
        let keyed = sightline_browser::KEYED_PREFIX as u64 + 1;
        assert_eq!(seen["keydown"], keyed, "{seen}");
        assert_eq!(seen["keyup"], keyed, "{seen}");
        assert_eq!(seen["untrusted"], 0, "{seen}");
        assert_eq!(seen["lastKeyupLength"], 8000, "the last key comes last: {seen}");
        // The page goes on.
        let t = step(&mut env, json!({"action":"input_text","element_index": field,"text":"!","overwrite":true})).await;
        assert!(t.state.page_content.contains("length 1"), "{}", t.state.page_content);
        env.close().await;
    });
}

/// Issue 18, item 1: a script that never yields on load (`for(;;){}`). The first
/// state comes with the page as far as it got (the script is stopped, the page
/// lives on), then `navigate` leaves and the session goes on. Through the binary.
/// The bound is loose on purpose (it was 70 s, and then only a time-out).
#[test]
fn a_script_that_never_yields_on_load_does_not_hold_the_answer() {
    world();
    let mut p = Proc::start(&["env", &url("/hostile/hung.html"), "--no-screenshot"]);
    let first = p.read(Duration::from_secs(40));
    assert!(first.get("error").is_none(), "{first}");
    assert_eq!(first["url"], url("/hostile/hung.html"));
    assert!(first["page_content"].as_str().unwrap().contains("Before the loop"), "{first}");
    let (after, _) = p.ask(br#"{"action":"click_element","element_index":1}"#, Duration::from_secs(40));
    assert!(after.get("error").is_none(), "{after}");
    assert!(after["page_content"].as_str().unwrap().contains("Clicked"), "{after}");
    let form = url("/form.html");
    let (moved, _) = p.ask(json!({"action":"navigate","url": form}).to_string().as_bytes(), Duration::from_secs(40));
    assert!(moved.get("error").is_none(), "{moved}");
    assert_eq!(moved["url"], form);
    assert_eq!(p.finish(), 0);
}

/// Issue 18, item 1: a page that hangs while the agent reads it: `navigate` leaves
/// the hung renderer (its script is stopped first), and the session goes on.
#[test]
fn navigate_leaves_a_hung_page() {
    run(async {
        let mut env = open("/hostile/hang-later.html").await;
        let b = by_text(env.state(), "Hang in a moment");
        let t = step(&mut env, json!({"action":"click_element","element_index": b})).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        // Wait until the page no longer answers (its timer's loop has started).
        within("the page to hang", Duration::from_secs(30), async {
            loop {
                let probe = tokio::time::timeout(Duration::from_millis(300), env.tab().evaluate("1"));
                if probe.await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await;
        let stopped = env.tab().scripts_stopped();
        let form = url("/form.html");
        let t =
            within("navigate", Duration::from_secs(40), step(&mut env, json!({"action":"navigate","url": form}))).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert_eq!(t.state.url, form);
        assert!(env.tab().scripts_stopped() > stopped, "the hung script was stopped");
        let i = by_id_name(env.state(), "email");
        let t = step(&mut env, json!({"action":"input_text","element_index": i,"text":"on"})).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        env.close().await;
    });
}

/// An environment whose first state is a page that may hang: a valid State Object
/// (or a typed error in one) within the bound.
async fn first_state(path: &str) -> (sightline_api::Env, sightline_api::Turn) {
    let mut env = sightline_api::Env::new(tab().await, sightline_api::EnvOptions { screenshot: false }).await.unwrap();
    let first = env.step_action(sightline_api::Action::Navigate { url: url(path) }, json!({"action": "navigate"}));
    let t = within("the first state", Duration::from_secs(60), first).await;
    assert_valid(&t.state);
    (env, t)
}

/// Issue 18, item 1: the body replaced synchronously on every mutation (an endless
/// chain of observer callbacks): a valid state or a typed error, and `navigate` leaves.
#[test]
fn a_page_that_replaces_its_body_on_every_mutation() {
    run(async {
        let (mut env, t) = first_state("/hostile/storm.html").await;
        if let Some(e) = &t.state.error {
            assert_eq!(e.code, sightline_api::ErrorCode::InternalBrowserError, "{e:?}");
        }
        assert!(!t.fatal, "the browser is still there");
        let form = url("/form.html");
        let t =
            within("navigate", Duration::from_secs(60), step(&mut env, json!({"action":"navigate","url": form}))).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert_eq!(t.state.url, form);
        env.close().await;
    });
}

/// A page that hangs again as soon as its script is stopped (the body replaced on
/// every mutation, and a timer that mutates every 200 ms): the second hang freezes
/// it, the state says nothing can react there, and `navigate` leaves it for a page
/// whose scripts and timers run.
#[test]
fn a_page_that_hangs_again_after_each_stop_is_frozen_and_left() {
    run(async {
        let (mut env, t) = first_state("/hostile/storm-again.html").await;
        assert!(!t.fatal, "the browser is still there");
        // Each action finds the page hung again, until it is frozen; then it is refused.
        let mut refused = None;
        for _ in 0..3 {
            let t = within(
                "scroll",
                Duration::from_secs(30),
                step(&mut env, json!({"action":"scroll","direction":"down"})),
            )
            .await;
            let e = t.state.error.clone().expect("an action on a hung page fails");
            assert_eq!(e.code, sightline_api::ErrorCode::InternalBrowserError, "{e:?}");
            if env.tab().is_frozen() {
                refused = Some(e.message);
                break;
            }
        }
        let message = refused.expect("frozen after hanging again and again");
        assert!(message.contains("not responding"), "{message}");
        assert!(env.tab().scripts_stopped() >= 3, "{}", env.tab().scripts_stopped());
        let form = url("/form.html");
        let t =
            within("navigate", Duration::from_secs(60), step(&mut env, json!({"action":"navigate","url": form}))).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert_eq!(t.state.url, form);
        assert!(!env.tab().is_frozen(), "the next document is thawed");
        let timer = env.tab().evaluate("new Promise(r => setTimeout(() => r(document.title), 20))").await.unwrap();
        assert_eq!(timer, json!("Form"), "timers run on the next page");
        let i = by_id_name(env.state(), "email");
        let t = step(&mut env, json!({"action":"input_text","element_index": i,"text":"on"})).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        env.close().await;
    });
}

/// A page whose `beforeunload`, `pagehide` and `unload` handlers are endless loops:
/// `navigate` leaves it, and the next page works (a page frozen while the old
/// one's handlers held the thread is thawed on the next action).
#[test]
fn a_page_that_loops_while_being_left() {
    run(async {
        let mut env = open("/hostile/hang-on-leave.html").await;
        let form = url("/form.html");
        let t =
            within("navigate", Duration::from_secs(60), step(&mut env, json!({"action":"navigate","url": form}))).await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert_eq!(t.state.url, form);
        assert!(env.tab().scripts_stopped() >= 1, "a handler was stopped");
        let i = by_id_name(env.state(), "email");
        let t = within(
            "input_text",
            Duration::from_secs(30),
            step(&mut env, json!({"action":"input_text","element_index": i,"text":"on"})),
        )
        .await;
        assert!(t.state.error.is_none(), "{:?}", t.state.error);
        assert!(!env.tab().is_frozen());
        let typed = env
            .tab()
            .evaluate("new Promise(r => setTimeout(() => r(document.querySelector('[name=email]').value), 20))");
        assert_eq!(typed.await.unwrap(), json!("on"));
        env.close().await;
    });
}

// ---- issue 18, item 5: nothing left behind ----

fn profiles_of(pid: u32) -> usize {
    let marker = format!("sightline-profile-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&marker))
        .count()
}

/// `kill -9` of `sightline env` leaves its profile (nothing can run then); the next
/// run sweeps the profiles of runs whose process is gone, and whatever still used them.
#[test]
fn a_later_run_sweeps_what_a_killed_run_left() {
    world();
    let mut p = Proc::start(&["env", &url("/form.html"), "--no-screenshot"]);
    let first = p.read(ACT);
    assert!(first.get("error").is_none(), "{first}");
    let pid = p.child.id();
    assert_eq!(profiles_of(pid), 1);
    // SAFETY: kill(2) on the process this test started.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    p.child.wait().unwrap();
    let out = bin().args(["state", &url("/form.html"), "--no-screenshot"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_no_leftovers(pid);
}

/// Chromium's own temporary files (`org.chromium.Chromium.*`) go to a directory of
/// the run's own, removed with it: after a run, its TMPDIR is as it was.
#[test]
fn a_run_leaves_its_tmpdir_as_it_found_it() {
    world();
    // Short: Chromium puts a unix socket under it (a longer one makes Sightline keep Chromium's files elsewhere).
    let tmp = std::path::PathBuf::from(format!("/tmp/slt{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    for _ in 0..2 {
        let out = bin().args(["state", &url("/form.html"), "--no-screenshot"]).env("TMPDIR", &tmp).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let left: Vec<String> =
        std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// A script that tells a local listener it has started, then runs `rest`; SIGTERM
/// once it has. The run exits 143 with no panic and leaves nothing behind.
fn sigterm_script_while(rest: &str) {
    world();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!("sightline-hostile-term-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let js = dir.join("busy.js");
    let started = format!("browser.eval(\"fetch('http://127.0.0.1:{port}/started').catch(function () {{}}); 1\");\n");
    std::fs::write(&js, started + rest).unwrap();
    let mut child = bin()
        .args(["script", js.to_str().unwrap(), "--url", &url("/form.html"), "--allow-private", "--timeout", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait for the page's request: the script is running.
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while listener.accept().is_err() {
        assert!(Instant::now() < deadline, "the script never started");
        assert!(child.try_wait().unwrap().is_none(), "the script ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the process this test started.
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "SIGTERM did not end the script");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_no_leftovers(pid);
}

#[test]
fn sigterm_while_a_script_runs_javascript_leaves_nothing() {
    sigterm_script_while("for (;;) {}");
}

#[test]
fn sigterm_while_a_script_waits_on_the_browser_leaves_nothing() {
    sigterm_script_while("browser.waitVisible('#never-there');");
}

/// Issue 18, item 1, over rpc: `browser_navigate` to a page whose script never
/// yields answers, its semantic snapshot shows the page as far as it got, and the
/// next navigation leaves it.
#[test]
fn a_script_that_never_yields_on_load_over_rpc() {
    world();
    let mut p = Proc::start(&["rpc"]);
    let bind = json!({"jsonrpc":"2.0","method":"bind_browser","id":1,"params":{"session":"h"}});
    let (reply, _) = p.ask(bind.to_string().as_bytes(), Duration::from_secs(60));
    let r = &reply["result"];
    let addr = json!({"session":"h","target_id":r["target_id"],"tab_id":r["tabs"][0]["tab_id"]});
    let mut nav = json!({"jsonrpc":"2.0","method":"browser_navigate","id":2,"params":addr.clone()});
    nav["params"]["url"] = json!(url("/hostile/hung.html"));
    let (reply, _) = p.ask(nav.to_string().as_bytes(), Duration::from_secs(40));
    assert_eq!(reply["result"]["status"], "ok", "{reply}");
    let mut snap = json!({"jsonrpc":"2.0","method":"get_browser_state","id":3,"params":addr.clone()});
    snap["params"]["snapshot_format"] = json!("semantic_v2");
    let (reply, _) = p.ask(snap.to_string().as_bytes(), Duration::from_secs(40));
    assert!(reply["result"]["outline"].as_str().unwrap_or_default().contains("Before the loop"), "{reply}");
    let mut nav = json!({"jsonrpc":"2.0","method":"browser_navigate","id":4,"params":addr});
    nav["params"]["url"] = json!(url("/form.html"));
    let (reply, _) = p.ask(nav.to_string().as_bytes(), Duration::from_secs(40));
    assert_eq!(reply["result"]["status"], "ok", "{reply}");
    assert_eq!(reply["result"]["url"], url("/form.html"), "{reply}");
    assert_eq!(p.finish(), 0);
}
