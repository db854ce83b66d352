//! `sightline serve --grid`: browsers from a real Selenium Grid 4 standalone
//! on 127.0.0.1 (jar from npm `@nightwatch/selenium-server`, Java and
//! chromedriver from Debian), started once for this binary. A missing
//! component fails the run with what to install. The Grids are killed, and
//! their temporary directories removed, when the binary exits.

use crate::common;

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use sightline_server::grid;
use sightline_server::{BrowserSource, GridConfig, HubConfig};
use sightline_testkit::LocalGrid;

static GRID: OnceLock<LocalGrid> = OnceLock::new();
static PATIENT_GRID: OnceLock<LocalGrid> = OnceLock::new();
/// The Grids this binary started: (process group, temporary directory). Statics
/// are never dropped: they are killed and removed at exit.
static STARTED: Mutex<Vec<(i32, std::path::PathBuf)>> = Mutex::new(Vec::new());
/// The Grids have two slots each; tests that fill them take turns.
static SLOTS: Mutex<()> = Mutex::new(());

extern "C" fn kill_grids() {
    let started = std::mem::take(&mut *STARTED.lock().unwrap_or_else(|e| e.into_inner()));
    for (group, _) in &started {
        // SAFETY: kill(2) on a Grid's process group, which this binary started.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    for (_, dir) in &started {
        // Its processes may still be going for a moment.
        for _ in 0..80 {
            if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

/// A Grid standalone with two slots whose queue keeps a request `request_timeout`.
fn start_grid(request_timeout: Duration) -> LocalGrid {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let started = LocalGrid::find_jar(root).and_then(|jar| LocalGrid::start(&jar, 2, request_timeout));
    let g = started.unwrap_or_else(|e| panic!("\n\nThese tests need a real Selenium Grid: {e}\n\n"));
    let mut all = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    if all.is_empty() {
        // SAFETY: registering a plain extern "C" fn.
        unsafe {
            libc::atexit(kill_grids);
        }
    }
    all.push((g.process_group(), g.temp_dir().to_path_buf()));
    g
}

/// The Grid most tests use: its queue drops a request after 15 s (a refusal the tests see).
fn local_grid() -> &'static LocalGrid {
    GRID.get_or_init(|| start_grid(Duration::from_secs(15)))
}

/// A Grid whose queue keeps a request for 10 minutes: a queued request is only
/// ever served, never dropped by the Grid, while a test runs.
fn patient_grid() -> &'static LocalGrid {
    PATIENT_GRID.get_or_init(|| start_grid(Duration::from_secs(600)))
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
    let body = grid::new_session_body(
        &GridConfig {
            url: "http://g".into(),
            chrome_binary: Some("/usr/bin/chromium".into()),
            wait: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
        },
        "0123abcd",
    );
    // Each request carries its own tag, so the Grid can say where it is.
    assert_eq!(body["capabilities"]["alwaysMatch"][grid::TAG], "0123abcd");
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
    // The pool is full before the server listens: one Grid browser, held.
    let held = grid_session_ids(&g.url);
    assert_eq!(held.len(), 1, "one warm Grid browser: {held:?}");
    assert_eq!(srv.warm_ready(), 1);
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

/// The pool by demand (`serve`'s default) over a Grid: after a burst of two,
/// two Grid browsers are held for the next burst, and one is given back as
/// soon as another client's request waits in the Grid's queue. The Grid drops
/// a request after 15 s in its queue, and the pool keeps its demand 10 minutes:
/// without the give-back, that client is refused.
#[test]
fn a_pool_by_demand_holds_grid_browsers_for_the_next_burst_and_yields_them_to_a_queued_request() {
    let g = local_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    until_counts(&g.url, "an idle Grid", |c| c == (0, 0));
    let hub = HubConfig { warm_auto: Some(Duration::from_secs(600)), max_sessions: 2, ..grid_hub(&g.url) };
    let mut srv = InProcServer::start(hub, None);
    // A server that has started no session holds no Grid browser.
    assert_eq!((grid_counts(&g.url), srv.warm_ready()), ((0, 0), 0));
    // A burst of two, then both ended: the pool takes two Grid browsers for the next burst.
    let burst: Vec<_> = (0..2)
        .map(|_| {
            let u = srv.url("/v1/sessions");
            std::thread::spawn(move || post(&u, json!({ "url": url("/signin.html"), "screenshot": false })))
        })
        .collect();
    let ids: Vec<String> = burst
        .into_iter()
        .map(|t| {
            let (status, v) = t.join().unwrap();
            assert_eq!(status, 201, "{v}");
            v["session_id"].as_str().unwrap().to_string()
        })
        .collect();
    for id in &ids {
        assert_eq!(http("DELETE", &srv.url(&format!("/v1/sessions/{id}")), None, &[]).0, 204);
    }
    until_counts(&g.url, "two warm Grid browsers", |c| c == (2, 0));
    srv.until_warm(2, "two warm Grid browsers after the burst");
    // Another client asks the full Grid for a browser: it waits in the queue
    // until the pool gives one back, and is served.
    let BrowserSource::Grid(cfg) = grid_hub(&g.url).source else { unreachable!() };
    let body = grid::new_session_body(&cfg, "another client");
    let grid_url = g.url.clone();
    let other = std::thread::spawn(move || {
        // `send_json` says the charset, which the Grid insists on.
        let mut r = ureq::post(&format!("{grid_url}/session")).send_json(body).expect("the other client was served");
        serde_json::from_str::<Value>(&r.body_mut().read_to_string().unwrap()).unwrap()
    });
    let v = other.join().unwrap();
    let theirs = v["value"]["sessionId"].as_str().expect("a session id").to_string();
    assert!(grid_session_ids(&g.url).contains(&theirs));
    assert_eq!(srv.warm_ready(), 1, "one warm browser given back, one kept");
    // While their browser holds a slot and nobody queues, the pool takes no other.
    assert_eq!(grid_counts(&g.url), (2, 0));
    // Their browser given back, the pool takes the freed slot again.
    assert_eq!(http("DELETE", &format!("{}/session/{theirs}", g.url), None, &[]).0, 200);
    srv.until_warm(2, "the pool refilled after the other client");
    // A request no slot can serve (a platform the Grid lacks) waits in the queue
    // until the Grid drops it: one browser is given back for it, not the whole pool.
    let mut body = grid::new_session_body(&cfg, "nowhere");
    body["capabilities"]["alwaysMatch"]["platformName"] = json!("windows");
    let grid_url = g.url.clone();
    let nowhere = std::thread::spawn(move || {
        ureq::post(&format!("{grid_url}/session")).config().http_status_as_error(false).build().send_json(body).is_ok()
    });
    let mut least = usize::MAX;
    while !nowhere.is_finished() {
        least = least.min(srv.warm_ready());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(nowhere.join().unwrap(), "the Grid answered the unservable request");
    assert_eq!(least, 1, "one warm browser given back for one queued request, no more");
    srv.until_warm(2, "the pool refilled after the unservable request");
    // The next burst takes the warm browsers; shutdown gives every one back.
    let (status, a) = post(&srv.url("/v1/sessions"), json!({ "url": url("/signin.html"), "screenshot": false }));
    assert_eq!(status, 201, "{a}");
    assert!(grid_session_ids(&g.url).contains(&a["grid_session"].as_str().unwrap().to_string()), "{a}");
    srv.stop();
    assert_eq!(busy(&g.url), 0, "nothing left holding a slot");
}

/// Issue 37: more clients than the Grid has slots, against the binary. Two
/// sessions are open at once; the other clients wait in the Grid's queue and
/// each either gets the slot a delete frees or `grid_full` at the bound. A
/// client that hangs up while queued, and the requests still queued when the
/// server stops, leave nothing held: once the server has exited, the Grid
/// holds no session and queues no request.
#[test]
fn more_clients_than_slots_wait_in_the_grids_queue_and_nothing_is_left_held() {
    let g = patient_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    until_counts(&g.url, "an idle Grid", |c| c == (0, 0));
    let mut srv = ServeProc::start(&["--listen", "127.0.0.1:0", "--grid", &g.url, "--grid-wait", "10s"]);
    let (tx, rx) = std::sync::mpsc::channel();
    for i in 0..5 {
        let (u, tx) = (srv.url("/v1/sessions"), tx.clone());
        let body = json!({ "url": url("/signin.html"), "screenshot": false }).to_string();
        std::thread::spawn(move || {
            let _ = tx.send((i, http("POST", &u, Some(&body), &[])));
        });
    }
    let answer = || rx.recv_timeout(Duration::from_secs(120)).expect("a client's answer");
    // Two sessions, open at once in the Grid's two slots (on a slow machine a
    // queued client may reach the bound first: it gets grid_full).
    let (mut open, mut rest) = (Vec::new(), Vec::new());
    while open.len() < 2 {
        let (i, (status, v, head)) = answer();
        match status {
            201 => open.push(v["session_id"].as_str().unwrap().to_string()),
            _ => rest.push((i, (status, v, head))),
        }
    }
    // The other three wait in the Grid's queue (a request leaves it only for a
    // slot), whether their clients still wait or not.
    until_counts(&g.url, "two sessions and three requests queued", |c| c == (2, 3));
    // One more client hangs up while its request waits in the Grid's queue.
    let mut hangup = std::net::TcpStream::connect(srv.base.trim_start_matches("http://")).unwrap();
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
    until_counts(&g.url, "the hung-up client's request queued too", |c| c == (2, 4));
    drop(hangup);
    // Nothing got a browser before a slot came free: whoever answered by now hit the bound.
    while let Ok(early) = rx.try_recv() {
        assert_eq!(early.1 .0, 503, "{:?}", early.1 .1);
        rest.push(early);
    }
    let (status, _, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{}", open[0])), None, &[]);
    assert_eq!(status, 204);
    while rest.len() < 3 {
        rest.push(answer());
    }
    // Each of the others got the freed slot or, within the bound, grid_full (with Retry-After).
    let mut served = 0;
    for (i, (status, v, head)) in &rest {
        match status {
            201 => served += 1,
            503 => {
                assert_eq!(v["error"]["code"], "grid_full", "client {i}: {v}");
                assert_eq!(v["error"]["detail"]["waited_ms"], 10_000, "client {i}: {v}");
                assert!(head.to_ascii_lowercase().contains("retry-after: 10\n"), "{head}");
            }
            _ => panic!("client {i}: {status} {v}"),
        }
    }
    assert!(served <= 1, "one slot came free, {served} sessions got it: {rest:?}");
    if served == 1 {
        // The two open sessions hold the Grid's two slots; the rest still queue.
        let (sessions, _) = grid_counts(&g.url);
        assert_eq!(sessions, 2, "the sessions open now hold the Grid's browsers");
    }
    // The server stops while requests nobody waits for are still queued: it gives
    // back its sessions' browsers, then those the queued requests get.
    assert_eq!(srv.terminate(180).and_then(|s| s.code()), Some(0), "{}", srv.stderr.lock().unwrap());
    let (_, queued) = grid_counts(&g.url);
    assert_eq!(queued, 0, "a request outlived the server in the Grid's queue");
    until_counts(&g.url, "no session held", |c| c == (0, 0));
    assert_eq!(busy(&g.url), 0, "the Grid's /status shows a session held after the server stopped");
}

/// A loopback relay to the Grid whose new-session connections can be cut
/// (the server's side of a request then sees its connection break while the
/// Grid still queues the request).
struct Relay {
    url: String,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn to(grid_url: &str) -> Relay {
        let target = grid_url.trim_start_matches("http://").to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open = std::sync::Arc::new(Mutex::new(Vec::new()));
        let (cuts, opens) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = std::net::TcpStream::connect(&target) else { continue };
                let mut first = [0u8; 16];
                let n = client.peek(&mut first).unwrap_or(0);
                if first[..n].starts_with(b"POST /session") && !cuts.load(std::sync::atomic::Ordering::SeqCst) {
                    opens.lock().unwrap().push(client.try_clone().unwrap());
                }
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Write);
                    });
                }
            }
        });
        Relay { url, cut, open }
    }

    /// Break every new-session connection open now.
    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        for c in self.open.lock().unwrap().drain(..) {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// A new-session request whose answer the server never hears (its connection
/// broke, or its own time limit passed) may still be queued in the Grid, which
/// hands it a browser once a slot frees: the server finds it by its tag and
/// gives it back.
#[test]
fn a_browser_the_grid_hands_to_an_unanswered_request_is_found_by_its_tag_and_given_back() {
    let g = patient_grid();
    let _turn = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    world();
    until_counts(&g.url, "an idle Grid", |c| c == (0, 0));
    // Server A fills both slots.
    let mut a = InProcServer::start(grid_hub(&g.url), None);
    let (one, _) = new_session(&a, json!({ "screenshot": false }));
    new_session(&a, json!({ "screenshot": false }));
    // Server B reaches the Grid through the relay and waits 1 s for a slot.
    let relay = Relay::to(&g.url);
    let mut hub = grid_hub(&relay.url);
    if let BrowserSource::Grid(cfg) = &mut hub.source {
        cfg.wait = Duration::from_secs(1);
    }
    let mut b = InProcServer::start(hub, None);
    let (status, v) = post(&b.url("/v1/sessions"), json!({ "screenshot": false }));
    assert_eq!((status, v["error"]["code"].as_str()), (503, Some("grid_full")), "{v}");
    until_counts(&g.url, "B's request queued", |c| c == (2, 1));
    // Its connection breaks: no answer will reach B, and the Grid keeps the request.
    relay.cut();
    // A slot frees; the Grid hands B's request a browser nobody will hear of (the
    // request leaves the queue only for a slot), but B finds it by its tag.
    let (status, _, _) = http("DELETE", &a.url(&format!("/v1/sessions/{one}")), None, &[]);
    assert_eq!(status, 204);
    until_counts(&g.url, "B's request served", |(_, q)| q == 0);
    // B's shutdown waits for that watch to end: the browser is given back by then.
    b.stop();
    until_counts(&g.url, "only A's second session", |c| c == (1, 0));
    a.stop();
    assert_eq!(busy(&g.url), 0, "the browser B's request got is still held");
}
