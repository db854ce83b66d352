//! How `sightline serve` starts sessions: the warm pool (`--warm N`: contexts
//! opened ahead of demand), the admission of starts (`--start-limit N`), and
//! what a new browser context costs the browser. Against real Chromium.

use crate::common;

use std::time::{Duration, Instant};

use common::gate;
use common::*;
use serde::Serialize;
use serde_json::{json, Value};
use sightline_browser::{Browser, BrowserOptions, TabOptions};
use sightline_cdp::protocol::target::GetBrowserContexts;
use sightline_cdp::protocol::Command;
use sightline_server::{BrowserSource, HubConfig};

/// `Target.getTargets` with every kind of target (the default filter leaves some out).
#[derive(Serialize)]
struct AllTargets {
    filter: Vec<Value>,
}

impl Command for AllTargets {
    const METHOD: &'static str = "Target.getTargets";
    type Response = Value;
}

fn endpoint_of(b: &Browser) -> String {
    let port = std::fs::read_to_string(b.profile_dir().expect("launched").join("DevToolsActivePort")).unwrap();
    format!("http://127.0.0.1:{}", port.lines().next().unwrap().trim())
}

fn context_count(b: &Browser) -> usize {
    let v = run(b.client().execute(None, &GetBrowserContexts {})).expect("Target.getBrowserContexts");
    v.browser_context_ids.len()
}

/// Poll until `count` is `want` (the browser disposes contexts shortly after their connection closes).
fn wait_contexts(b: &Browser, want: usize, what: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let n = context_count(b);
        if n == want {
            return;
        }
        assert!(Instant::now() < until, "{what}: {n} browser contexts, expected {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_new_context_opens_no_browser_ui_pages() {
    // Headless Chromium gives each context a window; its omnibox popup pages
    // (chrome://omnibox-popup.top-chrome/) would each load in a renderer of their own.
    let b = &world().browser;
    let tab = run(b.new_tab(TabOptions::default())).expect("a tab in a fresh context");
    let v = run(b.client().execute(None, &AllTargets { filter: vec![json!({})] })).expect("Target.getTargets");
    let infos = v["targetInfos"].as_array().expect("targetInfos");
    assert!(infos.iter().any(|t| t["targetId"] == json!(tab.target_id().to_string())), "the new tab is listed");
    let ui: Vec<&Value> = infos
        .iter()
        .filter(|t| t["type"] == "browser_ui" || t["url"].as_str().unwrap_or("").starts_with("chrome://"))
        .collect();
    assert!(ui.is_empty(), "browser UI pages were opened: {ui:?}");
    run(tab.close());
}

/// The cookie-jar page on a local server, and a browser of the test's own, so its contexts can be counted.
fn jar_site_and_own_browser() -> (sightline_testkit::Server, Browser) {
    let site = run(async {
        let s = sightline_testkit::Server::memory().await.unwrap();
        s.page("/jar.html", JAR);
        s
    });
    (site, run(Browser::start(&BrowserOptions::default())).expect("a browser"))
}

#[test]
fn warm_sessions_are_isolated_load_their_page_first_and_leave_nothing_behind() {
    let (site, b) = jar_site_and_own_browser();
    let before = context_count(&b);
    let hub =
        HubConfig { source: BrowserSource::Connect(endpoint_of(&b)), warm: 2, max_sessions: 6, ..HubConfig::default() };
    let mut srv = InProcServer::start(hub, None);
    // The pool is full before the server listens.
    assert_eq!(context_count(&b), before + 2, "two warm contexts");
    let act = |id: &str, a: Value| post(&srv.url(&format!("/v1/sessions/{id}/act")), a).1;

    // From the pool: the first state is the requested page's, screenshot as asked.
    let (a, created) = new_session(&srv, json!({ "url": site.url("/jar.html?alice"), "screenshot": true }));
    let state = &created["state"];
    assert_eq!(state["url"], site.url("/jar.html?alice"), "{state}");
    assert!(state["page_content"].as_str().unwrap().contains("cookie=[who=alice] storage=[alice]"), "{state}");
    assert!(state["screenshot"].as_str().unwrap().len() > 1000, "the first state carries its screenshot");
    let typed = act(&a, json!({ "action": "input_text", "element_index": 1, "text": "alice's secret" }));
    assert_eq!(typed["element_index"]["1"]["attributes"]["value"], "alice's secret");

    let (b1, created) = new_session(&srv, json!({ "url": site.url("/jar.html"), "screenshot": false }));
    let state = &created["state"];
    assert_eq!(state["screenshot"], "", "no screenshot asked");
    assert!(state["page_content"].as_str().unwrap().contains("cookie=[] storage=[]"), "B sees A's: {state}");
    assert_eq!(state["element_index"]["1"]["attributes"]["value"], "", "B sees what A typed");

    // The pool is refilled once the server is quiet, and the refills are as clean.
    wait_contexts(&b, before + 4, "two sessions and two warm contexts again");
    let (c, created) = new_session(&srv, json!({ "url": site.url("/jar.html"), "screenshot": false }));
    assert!(created["state"]["page_content"].as_str().unwrap().contains("cookie=[] storage=[]"), "{created}");
    // A session the pool cannot serve (its own viewport) is opened as before.
    let (d, created) =
        new_session(&srv, json!({ "url": site.url("/jar.html"), "viewport": "800x600", "screenshot": false }));
    assert!(created["state"]["page_content"].as_str().unwrap().contains("cookie=[] storage=[]"), "{created}");
    let (_, again, _) = http("GET", &srv.url(&format!("/v1/sessions/{a}/state?screenshot=false")), None, &[]);
    assert_eq!(again["element_index"]["1"]["attributes"]["value"], "alice's secret", "A keeps its own");

    for id in [&a, &b1, &c] {
        let (status, _, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{id}")), None, &[]);
        assert_eq!(status, 204);
    }
    let _ = d;
    // Shutdown ends the last session and closes the warm contexts: the browser is as it was.
    srv.stop();
    wait_contexts(&b, before, "after shutdown");
    run(b.shutdown());
}

#[test]
fn a_pool_by_demand_holds_the_last_burst_for_the_next_and_nothing_once_idle() {
    let (site, b) = jar_site_and_own_browser();
    let before = context_count(&b);
    // Long enough that the refill after the first burst, on a busy machine, comes well
    // within it (the demand is counted from the last start); short enough to see it end.
    let keep = Duration::from_secs(15);
    let hub = HubConfig {
        source: BrowserSource::Connect(endpoint_of(&b)),
        warm_auto: Some(keep),
        max_sessions: 8,
        ..HubConfig::default()
    };
    let mut srv = InProcServer::start(hub, None);
    assert_eq!(context_count(&b), before, "a server that has started no session holds nothing");
    let burst = |srv: &InProcServer| -> Vec<String> {
        std::thread::scope(|s| {
            let starts: Vec<_> = (0..3)
                .map(|_| s.spawn(|| new_session(srv, json!({ "url": site.url("/jar.html"), "screenshot": false })).0))
                .collect();
            starts.into_iter().map(|t| t.join().unwrap()).collect()
        })
    };
    let end = |ids: &[String]| {
        for id in ids {
            let (status, _, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{id}")), None, &[]);
            assert_eq!(status, 204);
        }
    };
    let first = burst(&srv);
    // While the three sessions are open, the pool adds nothing beside them.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(context_count(&b), before + 3, "the burst's own contexts only");
    end(&first);
    srv.until_warm(3, "three warm contexts after the burst");
    wait_contexts(&b, before + 3, "three warm contexts for the next burst of three, no more");
    let second = burst(&srv);
    // The three took the warm contexts: no context was opened beside them.
    assert_eq!(context_count(&b), before + 3, "the second burst started in the warm contexts");
    let (_, state, _) = http("GET", &srv.url(&format!("/v1/sessions/{}/state?screenshot=false", second[0])), None, &[]);
    assert_eq!(state["url"], site.url("/jar.html"), "{state}");
    end(&second);
    wait_contexts(&b, before + 3, "refilled after the second burst");
    // No start for the keep time: the pool is closed.
    wait_contexts(&b, before, "nothing held once no session started for the keep time");
    assert_eq!(srv.warm_ready(), 0);
    srv.stop();
    run(b.shutdown());
}

#[test]
fn a_start_whose_page_is_slow_does_not_hold_up_the_queue() {
    world();
    // One start turn: it goes to the held session, and the next start still gets
    // its turn (after sightline_server::TURN) and completes.
    let hub = HubConfig { source: BrowserSource::Connect(browser_endpoint()), start_limit: 1, ..HubConfig::default() };
    let srv = InProcServer::start(hub, None);
    gate::a_held_start_does_not_hold_up_the_next(&srv);
}
