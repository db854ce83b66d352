//! `sightline serve --grid`: browsers from a real Selenium Grid 4 standalone
//! on 127.0.0.1 (jar from npm `@nightwatch/selenium-server`, Java and
//! chromedriver from Debian), started once for this binary. A missing
//! component fails the run with what to install.

mod common;

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use sightline_server::grid;
use sightline_server::{BrowserSource, GridConfig, HubConfig};
use sightline_testkit::LocalGrid;

static GRID: OnceLock<LocalGrid> = OnceLock::new();
static GRID_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// The Grid has two slots; tests that fill them take turns.
static SLOTS: Mutex<()> = Mutex::new(());

extern "C" fn kill_grid() {
    let g = GRID_GROUP.load(std::sync::atomic::Ordering::SeqCst);
    if g > 0 {
        // SAFETY: kill(2) on the Grid's process group, which this binary started.
        unsafe {
            libc::kill(-g, libc::SIGKILL);
        }
    }
}

fn local_grid() -> &'static LocalGrid {
    GRID.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let started = LocalGrid::find_jar(root).and_then(|jar| LocalGrid::start(&jar, 2, Duration::from_secs(15)));
        let g = started.unwrap_or_else(|e| panic!("\n\nThese tests need a real Selenium Grid: {e}\n\n"));
        GRID_GROUP.store(g.process_group(), std::sync::atomic::Ordering::SeqCst);
        // SAFETY: registering a plain extern "C" fn.
        unsafe {
            libc::atexit(kill_grid);
        }
        g
    })
}

fn grid_hub(grid_url: &str) -> HubConfig {
    HubConfig {
        source: BrowserSource::Grid(GridConfig {
            url: grid_url.to_string(),
            chrome_binary: Some("/usr/bin/chromium".into()),
            wait: Duration::from_secs(60),
            timeout: Duration::from_secs(60),
        }),
        ..HubConfig::default()
    }
}

fn busy(grid_url: &str) -> usize {
    run(grid::busy_slots(grid_url)).expect("Grid /status")
}

fn post(url: &str, body: Value) -> (u16, Value) {
    let (s, v, _) = http("POST", url, Some(&body.to_string()), &[]);
    (s, v)
}

#[test]
fn grid_sessions_are_browsers_of_their_own_refusals_are_typed_and_nothing_leaks() {
    let g = local_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    let mut srv = InProcServer::start(grid_hub(&g.url), None);
    assert_eq!(busy(&g.url), 0);
    let (status, a) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "{a}");
    assert!(a["grid_session"].as_str().is_some_and(|s| !s.is_empty()), "{a}");
    assert!(a["state"]["page_content"].as_str().unwrap().contains("Sign In"), "{a}");
    let (status, b) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "{b}");
    assert_eq!(busy(&g.url), 2, "each session is a Grid browser of its own");
    let (ida, idb) = (a["session_id"].as_str().unwrap(), b["session_id"].as_str().unwrap());
    let typed = post(
        &srv.url(&format!("/v1/sessions/{ida}/act")),
        json!({ "action": "input_text", "element_index": 1, "text": "only in A" }),
    )
    .1;
    assert_eq!(typed["element_index"]["1"]["attributes"]["value"], "only in A", "{typed}");
    let (_, sb, _) = http("GET", &srv.url(&format!("/v1/sessions/{idb}/state?screenshot=false")), None, &[]);
    assert_eq!(sb["element_index"]["1"]["attributes"]["value"], "");
    // The same tools as everywhere else.
    let (status, snap) = post(
        &srv.url(&format!("/v1/sessions/{idb}/tools/get_browser_state")),
        json!({ "snapshot_format": "semantic_v2" }),
    );
    assert_eq!(status, 200, "{snap}");
    assert!(snap["outline"].as_str().unwrap().contains("button \"Sign In\""));
    // Both slots are taken: the Grid refuses a third browser (after its 15 s request timeout), typed.
    let (status, refused) = post(&srv.url("/v1/sessions"), json!({}));
    assert_eq!((status, refused["error"]["code"].as_str()), (503, Some("grid_refused")), "{refused}");
    let (status, _, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{ida}")), None, &[]);
    assert_eq!(status, 204);
    assert_eq!(busy(&g.url), 1, "DELETE gives the Grid browser back");
    srv.stop();
    assert_eq!(busy(&g.url), 0, "stopping the server gives every Grid browser back");
}

#[test]
fn a_grid_browser_that_dies_ends_only_its_session() {
    let g = local_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    let srv = InProcServer::start(grid_hub(&g.url), None);
    let (_, a) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    let (_, b) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    let (ida, idb) = (a["session_id"].as_str().unwrap(), b["session_id"].as_str().unwrap());
    // The Grid loses A's browser (deleted behind the server's back).
    let (status, _, _) =
        http("DELETE", &format!("{}/session/{}", g.url, a["grid_session"].as_str().unwrap()), None, &[]);
    assert_eq!(status, 200);
    let until = std::time::Instant::now() + Duration::from_secs(10);
    let (status, err) = loop {
        let (status, v, _) = http("GET", &srv.url(&format!("/v1/sessions/{ida}/state?screenshot=false")), None, &[]);
        if status != 200 || std::time::Instant::now() > until {
            break (status, v);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!((status, err["error"]["code"].as_str()), (404, Some("browser_crashed")), "{err}");
    let (status, sb, _) = http("GET", &srv.url(&format!("/v1/sessions/{idb}/state?screenshot=false")), None, &[]);
    assert_eq!(status, 200, "B goes on: {sb}");
    assert!(sb["page_content"].as_str().unwrap().contains("Sign In"));
}

#[test]
fn the_binary_with_grid_returns_its_browsers_on_sigterm() {
    let g = local_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    let mut srv = ServeProc::start(&["--listen", "127.0.0.1:0", "--grid", &g.url]);
    let (status, v) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "{v}");
    assert_eq!(busy(&g.url), 1);
    assert_eq!(srv.terminate(60).and_then(|s| s.code()), Some(0), "{}", srv.stderr.lock().unwrap());
    assert_eq!(busy(&g.url), 0, "the WebDriver session outlived the server");
}

#[test]
fn connect_accepts_wss() {
    // TLS is compiled in: a wss:// endpoint is dialled (and here refused), not rejected as unsupported.
    let err = run(sightline_cdp::Chromium::connect("wss://127.0.0.1:9/devtools/browser/x"))
        .err()
        .expect("nothing listens on port 9");
    let msg = err.to_string();
    assert!(!msg.contains("TLS support not compiled in") && !msg.to_lowercase().contains("not compiled"), "{msg}");
    assert!(msg.to_lowercase().contains("refused") || msg.contains("Connection"), "{msg}");
}

#[test]
fn new_session_asks_for_our_chromium_and_flags() {
    let body = grid::new_session_body(&GridConfig {
        url: "http://g".into(),
        chrome_binary: Some("/usr/bin/chromium".into()),
        wait: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
    });
    let chrome = &body["capabilities"]["alwaysMatch"]["goog:chromeOptions"];
    assert_eq!(chrome["binary"], "/usr/bin/chromium");
    let args: Vec<&str> = chrome["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    for f in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ] {
        assert!(args.contains(&f), "{f} missing from {args:?}");
    }
}

/// The Grid's own counts: (browsers running, new-session requests waiting in its queue).
fn grid_counts(grid_url: &str) -> (u64, u64) {
    let q = json!({ "query": "{ grid { sessionCount sessionQueueSize } }" }).to_string();
    let (status, v, _) = http("POST", &format!("{grid_url}/graphql"), Some(&q), &[]);
    assert_eq!(status, 200, "{v}");
    let g = &v["data"]["grid"];
    (g["sessionCount"].as_u64().expect("sessionCount"), g["sessionQueueSize"].as_u64().expect("sessionQueueSize"))
}

/// Poll (hang guard only) until `ok` holds for the Grid's counts.
fn until_counts(grid_url: &str, what: &str, ok: impl Fn((u64, u64)) -> bool) {
    let until = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let c = grid_counts(grid_url);
        if ok(c) {
            return;
        }
        assert!(std::time::Instant::now() < until, "waiting for {what}: (sessions, queued) = {c:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_full_grid_answers_grid_full_after_the_wait_and_abandoned_browsers_are_given_back() {
    let g = local_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    until_counts(&g.url, "an idle Grid", |c| c == (0, 0));
    // Server A fills both slots.
    let mut a = InProcServer::start(grid_hub(&g.url), None);
    let (s1, one) = post(&a.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    let (s2, two) = post(&a.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!((s1, s2), (201, 201), "{one} {two}");
    // Server B waits at most 2 s for a slot: more clients than slots get a typed 503 with Retry-After.
    let mut short = grid_hub(&g.url);
    if let BrowserSource::Grid(cfg) = &mut short.source {
        cfg.wait = Duration::from_secs(2);
    }
    let mut b = InProcServer::start(short, None);
    let clients: Vec<_> = (0..2)
        .map(|_| {
            let u = b.url("/v1/sessions");
            std::thread::spawn(move || http("POST", &u, Some(&json!({ "screenshot": false }).to_string()), &[]))
        })
        .collect();
    for c in clients {
        let (status, v, head) = c.join().unwrap();
        assert_eq!((status, v["error"]["code"].as_str()), (503, Some("grid_full")), "{v}");
        assert!(head.to_ascii_lowercase().contains("retry-after: 2\n"), "{head}");
        assert_eq!(v["error"]["detail"]["waited_ms"], 2000, "{v}");
        assert_eq!(v["error"]["detail"]["retry_after_s"], 2, "{v}");
    }
    // The sessions that were created work.
    let id1 = one["session_id"].as_str().unwrap();
    let (status, st, _) = http("GET", &a.url(&format!("/v1/sessions/{id1}/state?screenshot=false")), None, &[]);
    assert_eq!(status, 200, "{st}");
    assert!(st["page_content"].as_str().unwrap().contains("Sign In"));
    // The two refused requests still wait in the Grid's queue (it cannot take them back).
    // A third client asks server A, then hangs up while its request waits there too.
    let (_, queued) = grid_counts(&g.url);
    let mut hangup = std::net::TcpStream::connect(a.base.trim_start_matches("http://")).unwrap();
    let body = json!({ "screenshot": false }).to_string();
    std::io::Write::write_all(
        &mut hangup,
        format!(
            "POST /v1/sessions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .unwrap();
    until_counts(&g.url, "the third request in the Grid's queue", |(_, q)| q > queued);
    drop(hangup);
    // Free one slot: every browser the Grid now hands to a request nobody waits for is given back at once.
    let id2 = two["session_id"].as_str().unwrap();
    let (status, _, _) = http("DELETE", &a.url(&format!("/v1/sessions/{id2}")), None, &[]);
    assert_eq!(status, 204);
    until_counts(&g.url, "an empty queue and only session one", |c| c == (1, 0));
    // Nothing holds the freed slot: a new session gets it.
    let (status, three) = post(&a.url("/v1/sessions"), json!({ "screenshot": false }));
    assert_eq!(status, 201, "{three}");
    // The Grid's queue count can lag its sessions by a moment (a request it
    // retries after a slot was freed): it must settle at two and none queued.
    until_counts(&g.url, "sessions one and three, none queued", |c| c == (2, 0));
    b.stop();
    a.stop();
    assert_eq!(busy(&g.url), 0);
}

/// The ids of the sessions the Grid holds now (its `/status`).
fn grid_session_ids(grid_url: &str) -> Vec<String> {
    let (status, v, _) = http("GET", &format!("{grid_url}/status"), None, &[]);
    assert_eq!(status, 200, "{v}");
    let nodes = v["value"]["nodes"].as_array().expect("nodes");
    nodes
        .iter()
        .flat_map(|n| n["slots"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["session"]["sessionId"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn warm_grid_browsers_serve_new_sessions_are_refilled_and_given_back() {
    let g = local_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    until_counts(&g.url, "an idle Grid", |c| c == (0, 0));
    let mut srv = InProcServer::start(HubConfig { warm: 1, max_sessions: 2, ..grid_hub(&g.url) }, None);
    let warm_ready = |srv: &InProcServer| {
        let text = ureq::get(&srv.url("/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
        text.lines().find_map(|l| l.strip_prefix("sightline_warm_ready ")).map(|v| v.trim().to_string())
    };
    // The pool is full before the server listens: one Grid browser, held.
    let held = grid_session_ids(&g.url);
    assert_eq!(held.len(), 1, "one warm Grid browser: {held:?}");
    assert_eq!(warm_ready(&srv).as_deref(), Some("1"));
    // A new session takes that browser and loads its page in it.
    let (status, a) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "{a}");
    assert_eq!(a["grid_session"], held[0], "the session got the warm Grid browser: {a}");
    assert!(a["state"]["page_content"].as_str().unwrap().contains("Sign In"), "{a}");
    let ida = a["session_id"].as_str().unwrap().to_string();
    let typed = post(
        &srv.url(&format!("/v1/sessions/{ida}/act")),
        json!({ "action": "input_text", "element_index": 1, "text": "warm" }),
    )
    .1;
    assert_eq!(typed["element_index"]["1"]["attributes"]["value"], "warm", "{typed}");
    // Once the server is quiet the pool takes a second Grid browser.
    until_counts(&g.url, "the pool refilled", |c| c == (2, 0));
    let refill: Vec<String> = grid_session_ids(&g.url).into_iter().filter(|id| *id != held[0]).collect();
    assert_eq!(refill.len(), 1, "{refill:?}");
    // The session's browser is given back; the warm one stays (the pool holds one).
    let (status, _, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{ida}")), None, &[]);
    assert_eq!(status, 204);
    until_counts(&g.url, "the session's browser given back", |c| c == (1, 0));
    assert_eq!(grid_session_ids(&g.url), refill);
    // Shutdown gives back every Grid browser, warm ones included.
    srv.stop();
    assert_eq!(busy(&g.url), 0, "nothing left holding a slot");
}
