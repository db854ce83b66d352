//! `sightline-bench soak`: N sessions on a `sightline serve` this process starts,
//! for M minutes, each doing what an agent does (fixture pages, state reads,
//! typing, clicks, semantic_v2 snapshots, downloads), while faults are injected
//! on a schedule:
//!
//! - a renderer crash: SIGKILL to a `--type=renderer` child of the launched browser;
//! - the browser killed: SIGKILL to the Chromium the sessions run in;
//! - a client that hangs up mid-call (a 300 ms client timeout on a slow navigation);
//! - a CDP socket that stalls: SIGSTOP on the browser for 5 s, then SIGCONT;
//! - an event flood: `tests/fixtures/soak-flood.html` while the session acts on it;
//! - a full disk for downloads: a 64 KiB tmpfs mounted on one session's download
//!   staging directory (root only; without root, the directory is made read-only);
//! - with `--grid`, a Grid slot that goes away: the chromedriver of one Grid session killed.
//!
//! Processes are found by walking `/proc` from this process (never by name); the
//! browser is this process's child without `--type=`. A session that ends with a
//! typed error during a fault's window (from its start to [`GRACE`] after its end)
//! is faulted and reopened; one that ends outside any window, with an untyped
//! error, or whose call gets no answer, is lost. After `serve` stops, what is left
//! is counted: this process's descendants and the entries of the soak's private
//! `TMPDIR` (profiles, Chromium's temporary files, download directories).
//! The last line: `soak: C calls, A answered in time, L sessions lost beyond the
//! faulted, R left behind`; the exit status is 1 when L, R or a hung call is not 0.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};
use sightline_server::{BrowserSource, GridConfig};
use sightline_testkit::{LocalGrid, Server};

use crate::opts::Opts;
use crate::serve::{call, start_server, Warm};

mod faults;
use faults::{cmdline, descendants, full_disk, grid_browsers, held_slots, inject, is_root, left_in};

/// The faults `--faults` names, and their names in the log.
const KINDS: &[(&str, &str)] = &[
    ("renderer", "renderer crash"),
    ("browser", "browser killed"),
    ("disconnect", "client disconnect"),
    ("stall", "cdp stall"),
    ("flood", "event flood"),
    ("disk", "full disk"),
    ("grid", "grid slot lost"),
];

/// A call answered later than this was not answered in time.
const DEADLINE: Duration = Duration::from_secs(45);
/// A call unanswered this long is given up on: it hung.
const HANG: Duration = Duration::from_secs(75);
/// How long after a fault ends a session may still die of it.
const GRACE: Duration = Duration::from_secs(20);
/// When the first fault comes.
const FIRST: Duration = Duration::from_secs(3);
/// How long a SIGSTOPped browser stays stopped.
const STALL: Duration = Duration::from_secs(5);
/// Codes that end a session (the rest leave it open).
const ENDING: &[&str] = &["browser_crashed", "session_ended", "session_not_found"];

const PAGE: &str = include_str!("../../../tests/fixtures/soak.html");
const FLOOD: &str = include_str!("../../../tests/fixtures/soak-flood.html");

/// What one call came to.
enum Outcome {
    Ok(Value),
    /// An error with a stable code.
    Typed(String),
    /// An error without one (or a broken connection).
    Untyped(String),
    /// No answer within [`HANG`].
    Hung,
}

/// A fault a worker carries out on its own session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Disconnect,
    Flood,
    FullDisk,
}

/// One injected fault: which session it aimed at (`None`: all of them) and when.
struct Fault {
    kind: &'static str,
    worker: Option<usize>,
    start: Instant,
    end: Instant,
}

#[derive(Default)]
struct Tally {
    calls: usize,
    in_time: usize,
    hung: usize,
    untyped: usize,
    lost: usize,
    faulted: usize,
    /// Faulted sessions by the fault and the code they ended with.
    ended_by: HashMap<String, usize>,
    reopened: usize,
    sessions: usize,
    /// Faults by kind: (injected, skipped with why).
    injected: HashMap<&'static str, usize>,
    skipped: Vec<String>,
    /// What the lost sessions died of.
    causes: Vec<String>,
}

struct Soak {
    site: String,
    end: Instant,
    faults: Mutex<Vec<Fault>>,
    tally: Mutex<Tally>,
    orders: Vec<Mutex<Option<Order>>>,
    /// Which worker runs on which server (the Grid one after the launched ones).
    bases: Vec<String>,
    /// The worker whose session the Grid fault aims at.
    grid_workers: Vec<usize>,
    root: bool,
    next_name: AtomicUsize,
    began: Instant,
}

impl Soak {
    fn agent(timeout: Duration) -> ureq::Agent {
        ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(timeout)).build().into()
    }

    /// One timed call, counted.
    fn call(&self, agent: &ureq::Agent, method: &str, url: &str, body: Option<Value>) -> Outcome {
        let t = Instant::now();
        let r = call(agent, method, url, body);
        let took = t.elapsed();
        let mut tally = self.tally.lock().unwrap();
        tally.calls += 1;
        let outcome = match r {
            Ok((status, v)) if (200..300).contains(&status) => Outcome::Ok(v),
            Ok((status, v)) => match v["error"]["code"].as_str() {
                Some(code) => Outcome::Typed(code.to_string()),
                None => Outcome::Untyped(format!("{method} {url}: {status} {v}")),
            },
            Err(_) if took >= HANG - Duration::from_secs(1) => Outcome::Hung,
            Err(e) => Outcome::Untyped(format!("{method} {url}: {e:#}")),
        };
        match outcome {
            Outcome::Hung => tally.hung += 1,
            Outcome::Untyped(_) => tally.untyped += 1,
            _ if took <= DEADLINE => tally.in_time += 1,
            _ => {}
        }
        outcome
    }

    /// The latest fault aimed at `worker` (or at all) whose window (from its start
    /// to [`GRACE`] after its end) overlaps `[from, to]`.
    fn exposed(&self, worker: usize, from: Instant, to: Instant) -> Option<&'static str> {
        let faults = self.faults.lock().unwrap();
        let hit = faults
            .iter()
            .rev()
            .find(|f| f.worker.is_none_or(|w| w == worker) && f.start <= to && f.end + GRACE >= from);
        hit.map(|f| f.kind)
    }

    /// A line of the soak's log on stderr, stamped with the seconds since it began.
    fn log(&self, what: &str) {
        eprintln!("[{:6.1} s] {what}", self.began.elapsed().as_secs_f64());
    }

    fn note(&self, kind: &'static str, worker: Option<usize>, start: Instant) {
        match worker {
            Some(w) => self.log(&format!("fault: {kind} (worker {w})")),
            None => self.log(&format!("fault: {kind}")),
        }
        self.faults.lock().unwrap().push(Fault { kind, worker, start, end: Instant::now() });
        *self.tally.lock().unwrap().injected.entry(kind).or_default() += 1;
    }
}

/// One client: sessions one after another until the end, each doing the round of work.
fn worker(soak: &Soak, i: usize) {
    let agent = Soak::agent(HANG);
    let base = &soak.bases[i];
    let site = &soak.site;
    // Since when a faulted session waits to be reopened, and since when opening fails.
    let mut reopening: Option<Instant> = None;
    let mut failing: Option<Instant> = None;
    while Instant::now() < soak.end {
        let opened = Instant::now();
        let body = json!({ "url": format!("{site}/soak.html"), "screenshot": false });
        let id = match soak.call(&agent, "POST", &format!("{base}/v1/sessions"), Some(body)) {
            Outcome::Ok(v) => v["session_id"].as_str().unwrap_or_default().to_string(),
            // The browser is restarting after a fault, or the Grid is full: try again,
            // for a minute at most outside a fault's window.
            Outcome::Typed(code) => {
                let since = *failing.get_or_insert(opened);
                if opened.duration_since(since) > Duration::from_secs(60) && soak.exposed(i, since, opened).is_none() {
                    lose(soak, i, "opening a session for a minute", Outcome::Typed(code));
                    failing = None;
                }
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
            other => {
                lose(soak, i, "opening a session", other);
                continue;
            }
        };
        failing = None;
        if reopening.take().is_some() {
            soak.tally.lock().unwrap().reopened += 1;
        }
        soak.tally.lock().unwrap().sessions += 1;
        let mut began = opened;
        let ended = session(soak, &agent, i, base, &id, &mut began);
        let now = Instant::now();
        match ended {
            None => {
                // The soak's end: the session must close cleanly.
                if let o @ (Outcome::Hung | Outcome::Untyped(_)) =
                    soak.call(&agent, "DELETE", &format!("{base}/v1/sessions/{id}"), None)
                {
                    lose(soak, i, "closing at the end", o);
                }
                return;
            }
            Some(Outcome::Typed(code)) if soak.exposed(i, began, now).is_some() => {
                let kind = soak.exposed(i, began, now).unwrap_or_default();
                soak.log(&format!("worker {i}: session ended: {code} (after a {kind}); reopening"));
                let mut t = soak.tally.lock().unwrap();
                t.faulted += 1;
                *t.ended_by.entry(format!("{kind}: {code}")).or_default() += 1;
                reopening = Some(now);
            }
            Some(other) => lose(soak, i, "a session", other),
        }
        let _ = soak.call(&agent, "DELETE", &format!("{base}/v1/sessions/{id}"), None);
    }
}

fn lose(soak: &Soak, i: usize, what: &str, o: Outcome) {
    let why = match o {
        Outcome::Typed(c) => format!("typed {c} outside any fault's window"),
        Outcome::Untyped(e) => format!("untyped: {e}"),
        Outcome::Hung => "a call hung".to_string(),
        Outcome::Ok(_) => "?".to_string(),
    };
    soak.log(&format!("worker {i}: LOST: {what}: {why}"));
    let mut t = soak.tally.lock().unwrap();
    t.lost += 1;
    t.causes.push(format!("worker {i}, {what}: {why}"));
}

/// Run one session until the soak ends (`None`) or it ends with the outcome that ended it.
/// `began` is set to when the step that ended it began (the first of a run of errors):
/// on a loaded machine a call can take many seconds, and a fault during it counts.
fn session(soak: &Soak, agent: &ureq::Agent, i: usize, base: &str, id: &str, began: &mut Instant) -> Option<Outcome> {
    let site = &soak.site;
    let s = format!("{base}/v1/sessions/{id}");
    let act = |a: Value| soak.call(agent, "POST", &format!("{s}/act"), Some(a));
    let mut errors = Vec::new();
    for k in 0.. {
        if Instant::now() >= soak.end {
            return None;
        }
        let step = Instant::now();
        if errors.is_empty() {
            *began = step;
        }
        let order = soak.orders[i].lock().unwrap().take();
        let outcome = match order {
            Some(o) => carry_out(soak, agent, i, &s, o),
            None => match k % 7 {
                0 => soak.call(agent, "GET", &format!("{s}/state?screenshot=false"), None),
                1 => act(
                    json!({ "action": "input_text", "element_index": 1, "text": format!("w{i} k{k}"), "overwrite": true }),
                ),
                2 => act(json!({ "action": "click_element", "element_index": 2 })),
                3 => soak.call(
                    agent,
                    "POST",
                    &format!("{s}/tools/get_browser_state"),
                    Some(json!({ "snapshot_format": "semantic_v2" })),
                ),
                4 => act(json!({ "action": "scroll", "direction": "down" })),
                5 => download(soak, agent, &s, 65536).0,
                _ => act(json!({ "action": "navigate", "url": format!("{site}/soak.html?again") })),
            },
        };
        match outcome {
            Outcome::Ok(_) => errors.clear(),
            Outcome::Typed(c) if ENDING.contains(&c.as_str()) => {
                if errors.is_empty() {
                    *began = step;
                }
                return Some(Outcome::Typed(c));
            }
            Outcome::Typed(c) => {
                // A crashed tab answers typed errors until it is replaced: give it a few calls.
                soak.log(&format!("worker {i}: step {}: {c}", k % 7));
                errors.push(format!("{}:{c}", k % 7));
                if errors.len() >= 6 {
                    soak.log(&format!("worker {i}: six typed errors in a row (step:code): {}", errors.join(" ")));
                    return Some(Outcome::Typed(c));
                }
            }
            other => return Some(other),
        }
    }
    None
}

/// Load the page with its download link pointing at a fresh name, click it, and
/// wait (20 s at most) until `list_downloads` says it is done or failed. Answers the
/// last call's outcome and the state the download reached.
fn download(soak: &Soak, agent: &ureq::Agent, s: &str, bytes: u64) -> (Outcome, Option<String>) {
    let name = format!("soak-{}.bin", soak.next_name.fetch_add(1, Ordering::Relaxed));
    let url = format!("{}/soak.html?name={name}&bytes={bytes}", soak.site);
    let act = |a: Value| soak.call(agent, "POST", &format!("{s}/act"), Some(a));
    match act(json!({ "action": "navigate", "url": url })) {
        Outcome::Ok(_) => {}
        other => return (other, None),
    }
    match act(json!({ "action": "click_element", "element_index": 3 })) {
        Outcome::Ok(_) => {}
        other => return (other, None),
    }
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let o = soak.call(agent, "POST", &format!("{s}/tools/list_downloads"), Some(json!({})));
        let Outcome::Ok(v) = &o else { return (o, None) };
        let state = v["downloads"]
            .as_array()
            .and_then(|l| {
                l.iter().find(|d| d["name"] == json!(name) || d["url"].as_str().is_some_and(|u| u.ends_with(&name)))
            })
            .and_then(|d| d["state"].as_str())
            .map(str::to_string);
        if state.as_deref().is_some_and(|st| st != "in_progress") || Instant::now() >= until {
            return (o, state);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A fault the worker does to its own session.
fn carry_out(soak: &Soak, agent: &ureq::Agent, i: usize, s: &str, order: Order) -> Outcome {
    let start = Instant::now();
    let site = &soak.site;
    let outcome = match order {
        Order::Disconnect => {
            // The client gives up after 300 ms on a navigation the site holds back 3 s.
            let impatient = Soak::agent(Duration::from_millis(300));
            let url = format!("{site}/soak.html?delay=3000");
            let _ = call(&impatient, "POST", &format!("{s}/act"), Some(json!({ "action": "navigate", "url": url })));
            // The session must go on: the next call is answered.
            soak.call(agent, "GET", &format!("{s}/state?screenshot=false"), None)
        }
        Order::Flood => {
            let act = |a: Value| soak.call(agent, "POST", &format!("{s}/act"), Some(a));
            let mut last = act(json!({ "action": "navigate", "url": format!("{site}/soak-flood.html") }));
            if matches!(last, Outcome::Ok(_)) {
                last = act(json!({ "action": "click_element", "element_index": 1 }));
            }
            if matches!(last, Outcome::Ok(_)) {
                last = soak.call(
                    agent,
                    "POST",
                    &format!("{s}/tools/get_browser_state"),
                    Some(json!({ "snapshot_format": "semantic_v2" })),
                );
            }
            if matches!(last, Outcome::Ok(_)) {
                last = act(json!({ "action": "navigate", "url": format!("{site}/soak.html") }));
            }
            last
        }
        Order::FullDisk => full_disk(soak, agent, s),
    };
    soak.note(
        match order {
            Order::Disconnect => "client disconnect",
            Order::Flood => "event flood",
            Order::FullDisk => "full disk",
        },
        Some(i),
        start,
    );
    outcome
}

pub async fn run(a: &Opts) -> Result<u8> {
    let sessions = a.sessions.unwrap_or(3).max(1);
    let minutes = a.minutes.unwrap_or(1.0);
    anyhow::ensure!(minutes > 0.0, "--minutes must be more than 0");
    // A private TMPDIR, so everything the browsers leave can be counted (set
    // before any browser or Grid starts; no other thread reads the environment yet).
    let tmp = std::env::temp_dir().join(format!("sightline-soak-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    std::env::set_var("TMPDIR", &tmp);
    let result = soak(a, sessions, minutes, &tmp).await;
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

async fn soak(a: &Opts, sessions: usize, minutes: f64, tmp: &Path) -> Result<u8> {
    let site = Server::memory().await?;
    site.page("/soak.html", PAGE);
    site.page("/soak-flood.html", FLOOD);
    let site_url = site.url("").trim_end_matches('/').to_string();
    let egress = crate::opts::egress(a)?;
    let launch = crate::opts::browser_options(a, &egress).launch;
    let (base, stop, done) = start_server(BrowserSource::Launch(launch), sessions + 2, Warm::Fixed(0)).await?;
    let mut bases = vec![base; sessions];
    let mut grid_stop = None;
    let mut grid = None;
    let mut grid_workers = Vec::new();
    if a.grid {
        let g = LocalGrid::find_jar(&std::env::current_dir()?)
            .and_then(|jar| LocalGrid::start(&jar, 2, Duration::from_secs(120)))
            .context("--grid: starting a local Selenium Grid")?;
        let source = BrowserSource::Grid(GridConfig {
            url: g.url.clone(),
            chrome_binary: Some("/usr/bin/chromium".into()),
            wait: Duration::from_secs(60),
            timeout: Duration::from_secs(120),
        });
        let (gbase, gstop, gdone) = start_server(source, 2, Warm::Fixed(0)).await?;
        grid_workers = vec![sessions, sessions + 1];
        bases.extend([gbase.clone(), gbase]);
        grid_stop = Some((gstop, gdone));
        grid = Some(g);
    }
    let workers = bases.len();
    let total = Duration::from_secs_f64(minutes * 60.0);
    let root = is_root();
    let soak = Arc::new(Soak {
        site: site_url,
        end: Instant::now() + total,
        faults: Mutex::default(),
        tally: Mutex::default(),
        orders: (0..workers).map(|_| Mutex::new(None)).collect(),
        bases,
        grid_workers,
        root,
        next_name: AtomicUsize::new(0),
        began: Instant::now(),
    });
    let kinds = if grid.is_some() { 7 } else { 6 };
    // Each kind at least once, and twice or more when there is time.
    let period = (total.saturating_sub(GRACE + FIRST) / kinds).clamp(Duration::from_secs(4), Duration::from_secs(40));
    eprintln!(
        "bench soak: {sessions} sessions{} for {minutes} min, a fault every {:.0} s ({}), calls due within {} s",
        if grid.is_some() { " + 2 on a Selenium Grid" } else { "" },
        period.as_secs_f64(),
        if root { "full disk: a 64 KiB tmpfs" } else { "full disk: a read-only directory (not root)" },
        DEADLINE.as_secs(),
    );
    let grid_pid = grid.as_ref().map(LocalGrid::process_group);
    let only: Vec<String> =
        a.faults.as_deref().unwrap_or("").split(',').map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).collect();
    if let Some(bad) = only.iter().find(|o| !KINDS.iter().any(|(short, _)| short == o)) {
        anyhow::bail!("--faults: no fault called {bad} (renderer, browser, disconnect, stall, flood, disk, grid)");
    }
    let launched = sessions;
    let s2 = soak.clone();
    let work = tokio::task::spawn_blocking(move || {
        std::thread::scope(|sc| {
            for i in 0..workers {
                let s = &s2;
                sc.spawn(move || worker(s, i));
            }
            sc.spawn(|| inject(&s2, period, launched, grid_pid, &only));
        });
    });
    work.await?;
    // Stop serve (and the Grid's), then count what is left.
    let _ = stop.send(());
    let _ = done.await;
    if let Some((gstop, gdone)) = grid_stop {
        let _ = gstop.send(());
        let _ = gdone.await;
    }
    // The Grid's side: Chromium still running in its process group (an orphan of a
    // killed chromedriver is not our descendant any more), and slots it still holds.
    let mut grid_left = Vec::new();
    if let Some(g) = &grid {
        for _ in 0..20 {
            grid_left = grid_browsers(g.process_group());
            if grid_left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let status = format!("{}/status", g.url.trim_end_matches('/'));
        let held = tokio::task::spawn_blocking(move || held_slots(&status)).await.unwrap_or(None);
        match held {
            Some(0) => {}
            Some(n) => eprintln!(
                "bench soak: the Grid still holds {n} slot(s) after serve stopped (a slot whose chromedriver \
                 was killed is the Grid's until its session timeout: WebDriver DELETE answers 500)"
            ),
            None => eprintln!("bench soak: the Grid's /status could not be read"),
        }
        // The Grid's own temporary directory goes with it; what chromedriver left there is the Grid machine's.
        let profiles = std::fs::read_dir(g.temp_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("chromium"))
            .count();
        if profiles > 0 {
            eprintln!(
                "bench soak: {profiles} Chromium profile(s) left in the Grid's temporary directory (removed with it)"
            );
        }
    }
    drop(grid);
    let me = std::process::id() as i32;
    let mut left = Vec::new();
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let procs: Vec<String> = descendants(me)
            .into_iter()
            .filter(|p| !std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default().contains(") Z "))
            .map(|p| format!("process {p}: {}", cmdline(p).join(" ")))
            .collect();
        left = procs;
        left.extend(left_in(tmp));
        left.extend(grid_left.iter().cloned());
        if left.is_empty() {
            break;
        }
    }
    let t = soak.tally.lock().unwrap();
    let mut kinds: Vec<_> = t.injected.iter().collect();
    kinds.sort();
    let faults: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    eprintln!("bench soak: faults injected: {}", faults.join(", "));
    let mut ended: Vec<_> = t.ended_by.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    ended.sort();
    eprintln!("bench soak: sessions ended by a fault: {}", ended.join(", "));
    for s in &t.skipped {
        eprintln!("bench soak: fault skipped: {s}");
    }
    for c in &t.causes {
        eprintln!("bench soak: lost: {c}");
    }
    for l in &left {
        eprintln!("bench soak: left behind: {l}");
    }
    println!(
        "sessions opened {}, ended by a fault (typed) {}, reopened after one {}, calls hung {}, untyped errors {}",
        t.sessions, t.faulted, t.reopened, t.hung, t.untyped
    );
    println!(
        "soak: {} calls, {} answered in time, {} sessions lost beyond the faulted, {} left behind",
        t.calls,
        t.in_time,
        t.lost,
        left.len()
    );
    Ok(if t.lost > 0 || !left.is_empty() || t.hung > 0 { 1 } else { 0 })
}
