//! `sightline-bench`: capture and action medians next to the raw CDP floor.
//!
//! For each generated page (about 30, 1,000 and 5,000 interactive elements,
//! four DOM nodes per element), in the same tab and run:
//! - the raw `DOMSnapshot.captureSnapshot` call with our parameters (the floor
//!   any DOM-based capture pays) and the raw `Page.captureScreenshot` call;
//! - a full State Object without and with screenshot (capture, model, JSON);
//! - click → next State Object (real mouse events, the wait, a new capture).
//!
//! And, when `./x bench` has installed them, the same pages' snapshots from
//! two peer MCP servers beside our semantic_v2 snapshot (`peers.rs`).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;
use sightline_api::{Action, Env, EnvOptions, StateObject};
use sightline_browser::Browser;
use sightline_cdp::protocol::accessibility::GetFullAxTree;
use sightline_cdp::protocol::dom_snapshot::CaptureSnapshot;
use sightline_cdp::protocol::page::CaptureScreenshot;
use sightline_page::COMPUTED_STYLES;
use sightline_testkit::Server;

use crate::opts::Opts;
use crate::opts::{start_browser, tab_options};
use crate::peers::{self, Measured, PEERS};

/// A page with `n` interactive elements in cards, plus a counter button on top.
pub fn generated_page(n: usize) -> String {
    let mut html = String::with_capacity(n * 160);
    html.push_str("<!doctype html><html><head><title>Generated</title><style>body{font-family:sans-serif;margin:8px} .card{display:inline-block;width:230px;margin:3px;padding:3px;border:1px solid #ccc}</style></head><body>");
    html.push_str("<h1>Generated page</h1><button id=\"count\" onclick=\"this.textContent = 'Clicked ' + (++window.c || (window.c = 1))\">Counter</button><p id=\"out\"></p>");
    for i in 0..n.saturating_sub(1) {
        let control = match i % 4 {
            0 => format!("<a href=\"/item/{i}\">Item link {i}</a>"),
            1 => format!("<button>Action {i}</button>"),
            2 => format!("<input name=\"f{i}\" placeholder=\"Field {i}\">"),
            _ => format!("<label><input type=\"checkbox\" name=\"c{i}\"> Option {i}</label>"),
        };
        html.push_str(&format!("<div class=\"card\"><span>Card {i}</span> {control}</div>"));
    }
    html.push_str("</body></html>");
    html
}

/// The element index of the generated page's counter button.
fn counter_index(state: &StateObject) -> Result<u64> {
    let i = state
        .element_index
        .0
        .iter()
        .position(|d| d.text_content.as_deref().is_some_and(|t| t.starts_with("Counter") || t.starts_with("Clicked")))
        .context("counter button not indexed")?;
    Ok(i as u64 + 1)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

struct Row {
    label: String,
    /// `captureSnapshot` with every node's DOM rects (what the capture asked for before).
    raw_all_rects: Duration,
    /// `captureSnapshot` without DOM rects (what the capture asks for now).
    raw_snapshot: Duration,
    raw_screenshot: Duration,
    state_no_shot: Duration,
    state_shot: Duration,
    click: Duration,
    elements: usize,
    nodes: usize,
    content_chars: usize,
}

pub async fn run(a: &Opts) -> Result<u8> {
    let runs: usize = a.runs.as_deref().unwrap_or("7").parse().context("--runs expects a number")?;
    let runs = runs.clamp(1, 100);
    let sizes: Vec<usize> = a
        .sizes
        .as_deref()
        .unwrap_or("30,1000,5000")
        .split(',')
        .map(|s| s.trim().parse::<usize>().context("--sizes expects numbers like 30,1000,5000"))
        .collect::<Result<_>>()?;
    if let Some(url) = &a.url {
        return run_on_page(a, url, runs).await;
    }
    let site = Server::memory().await?;
    for &n in &sizes {
        site.page(&format!("/gen-{n}.html"), generated_page(n));
    }
    let (browser, _egress) = start_browser(a).await?;
    eprintln!("sightline bench: {} runs per measure, {}", runs, browser.version().await?);
    let mut rows = Vec::new();
    let mut mark_rows = Vec::new();
    let mut sem_rows = Vec::new();
    let mut peers = PeerRuns::new(a);
    for &n in &sizes {
        let url = site.url(&format!("/gen-{n}.html"));
        rows.push(measure(&browser, a, &url, n, runs).await?);
        mark_rows.push(measure_marks(&browser, a, &url, n, runs).await?);
        sem_rows.push(measure_semantic(&browser, a, &url, format!("{n} elements"), runs).await?);
        // Right after ours, so that drift on a shared machine hits both alike.
        peers.measure(&url, &format!("{n} elements"), runs).await;
    }
    let rss = match (sizes.iter().max(), a.rss_actions.or(Some(200))) {
        (Some(&n), Some(actions)) if actions > 0 => {
            Some(measure_rss(&browser, a, &site.url(&format!("/gen-{n}.html")), n, actions).await?)
        }
        _ => None,
    };
    println!("\nMedians over {runs} runs, viewport {:?} (ms):\n", tab_options(a)?.viewport);
    println!(
        "| page | nodes | indexed | raw snapshot, all rects | raw snapshot, no rects | state, no shot | ratio | raw screenshot | state + shot | ratio | click → state | page_content chars |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.2}x | {} | {} | {:.2}x | {} | {} |",
            r.label,
            r.nodes,
            r.elements,
            ms(r.raw_all_rects),
            ms(r.raw_snapshot),
            ms(r.state_no_shot),
            r.state_no_shot.as_secs_f64() / r.raw_snapshot.as_secs_f64(),
            ms(r.raw_screenshot),
            ms(r.state_shot),
            r.state_shot.as_secs_f64() / r.raw_screenshot.as_secs_f64(),
            ms(r.click),
            r.content_chars,
        );
    }
    println!("\nSet-of-Marks, same pages (ms):\n");
    println!(
        "| page | marks | plain screenshot | mark() | ratio | marks screenshot (capture + draw) | ratio | draw only |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &mark_rows {
        println!(
            "| {} | {} | {} | {} | {:.2}x | {} | {:.2}x | {} |",
            r.label,
            r.marks,
            ms(r.screenshot),
            ms(r.mark),
            r.mark.as_secs_f64() / r.screenshot.as_secs_f64(),
            ms(r.marks_png),
            r.marks_png.as_secs_f64() / r.screenshot.as_secs_f64(),
            ms(r.draw),
        );
    }
    print_semantic(&sem_rows);
    print_peers(&peers, &sem_rows, runs);
    if let Some(r) = rss {
        println!("\nMemory (RSS of sightline + its browser, MiB), {} elements:\n", r.elements);
        println!("| after the first state | after {} actions | ratio |", r.actions);
        println!("|---|---|---|");
        println!("| {:.0} | {:.0} | {:.2}x |", r.first, r.last, r.last / r.first);
    }
    browser.shutdown().await;
    Ok(0)
}

/// Each peer's snapshot on each page (`sizes` order), or why it has none.
/// A peer that is missing or fails is reported, never an error of the bench.
struct PeerRuns {
    /// Per peer: its version, or why it cannot run at all.
    versions: Vec<Result<String>>,
    /// The Chromium and viewport the peers' browsers share with ours.
    setup: Result<peers::Setup>,
    /// Per page, per peer.
    pages: Vec<Vec<Result<Measured>>>,
}

impl PeerRuns {
    fn new(a: &Opts) -> PeerRuns {
        let setup = (|| {
            Ok(peers::Setup {
                chrome: sightline_cdp::find_chromium(a.chrome.as_deref())?,
                viewport: tab_options(a)?.viewport,
            })
        })();
        PeerRuns { versions: PEERS.iter().map(|p| p.installed()).collect(), setup, pages: Vec::new() }
    }

    /// Playwright MCP and chrome-devtools-mcp on the page at `url`, named `label` in the tables.
    async fn measure(&mut self, url: &str, label: &str, runs: usize) {
        if self.versions.iter().all(|v| v.is_err()) {
            return;
        }
        let mut row = Vec::new();
        for (peer, version) in PEERS.iter().zip(&self.versions) {
            row.push(match (version, &self.setup) {
                (Err(_), _) => Err(anyhow::anyhow!("not installed")),
                (Ok(_), Err(e)) => Err(anyhow::anyhow!("{e:#}")),
                (Ok(_), Ok(setup)) => peers::measure(peer, setup, url, runs).await,
            });
        }
        eprintln!("  {label}, peers: done");
        self.pages.push(row);
    }
}

/// `bench --url URL`: semantic_v2 and the peers' snapshots of one page you name.
async fn run_on_page(a: &Opts, url: &str, runs: usize) -> Result<u8> {
    let (browser, _egress) = start_browser(a).await?;
    eprintln!("sightline bench: {} runs per measure, {}", runs, browser.version().await?);
    let sem_rows = vec![measure_semantic(&browser, a, url, url.to_string(), runs).await?];
    eprintln!("  {url}: done");
    let mut peers = PeerRuns::new(a);
    peers.measure(url, url, runs).await;
    print_semantic(&sem_rows);
    print_peers(&peers, &sem_rows, runs);
    Ok(0)
}

fn print_semantic(sem_rows: &[SemRow]) {
    println!("\nsemantic_v2 snapshots, default budget 300, same pages (ms):\n");
    println!("| page | raw DOMSnapshot, no rects | raw getFullAXTree (not asked for) | semantic_v2 snapshot | ratio | outline chars | page_content chars |");
    println!("|---|---|---|---|---|---|---|");
    for r in sem_rows {
        println!(
            "| {} | {} | {} | {} | {:.2}x | {} | {} |",
            r.label,
            ms(r.raw_snapshot),
            ms(r.raw_ax),
            ms(r.semantic),
            r.semantic.as_secs_f64() / r.raw_snapshot.as_secs_f64(),
            r.outline_chars,
            r.content_chars,
        );
    }
}

fn print_peers(peers: &PeerRuns, sem_rows: &[SemRow], runs: usize) {
    let names: Vec<String> = PEERS
        .iter()
        .zip(&peers.versions)
        .filter_map(|(p, v)| Some(format!("{} {}", p.name, v.as_ref().ok()?)))
        .collect();
    if !peers.pages.is_empty() {
        println!(
            "\nPeers ({}), same pages: one snapshot tool call over MCP stdio, median of {runs} (ms); ratio = peer / semantic_v2:\n",
            names.join(", ")
        );
        let mut head = String::from("| page | semantic_v2 snapshot |");
        for p in &PEERS {
            head += &format!(" {} {} | ratio |", p.name, p.snapshot_tool);
        }
        head += " semantic_v2 outline chars |";
        for p in &PEERS {
            head += &format!(" {} chars |", p.name);
        }
        println!("{head}");
        println!("|{}", "---|".repeat(3 + 3 * PEERS.len()));
        for (sem, row) in sem_rows.iter().zip(&peers.pages) {
            let mut line = format!("| {} | {} |", sem.label, ms(sem.semantic));
            for (m, v) in row.iter().zip(&peers.versions) {
                line += &match (m, v) {
                    (Ok(m), _) => {
                        format!(" {} | {:.2}x |", ms(m.median), m.median.as_secs_f64() / sem.semantic.as_secs_f64())
                    }
                    (Err(_), Err(_)) => " skipped | - |".to_string(),
                    (Err(_), Ok(_)) => " failed | - |".to_string(),
                };
            }
            line += &format!(" {} |", sem.outline_chars);
            for m in row {
                line += &match m {
                    Ok(m) => format!(" {} |", m.chars),
                    Err(_) => " - |".to_string(),
                };
            }
            println!("{line}");
        }
    }
    let mut notes = Vec::new();
    for (i, (p, v)) in PEERS.iter().zip(&peers.versions).enumerate() {
        match v {
            Err(e) => notes.push(format!("{}: skipped, {e:#}", p.name)),
            Ok(_) => {
                for (sem, row) in sem_rows.iter().zip(&peers.pages) {
                    if let Err(e) = &row[i] {
                        notes.push(format!("{} on {}: failed, {e:#}", p.name, sem.label));
                    }
                }
            }
        }
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("Peer {n}");
        }
    }
}

struct RssRow {
    elements: usize,
    actions: usize,
    first: f64,
    last: f64,
}

/// Resident memory, in MiB, of this process and every process in `group`.
fn rss_mib(group: Option<i32>) -> f64 {
    fn field(stat: &str, i: usize) -> Option<i64> {
        // Fields after the command name (which may hold spaces) start at ") ".
        stat.rsplit_once(") ")?.1.split(' ').nth(i)?.parse().ok()
    }
    let page = 4096.0 / (1024.0 * 1024.0);
    let own = std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| field(&s, 21)).unwrap_or(0);
    let mut total = own;
    if let (Some(g), Ok(dir)) = (group, std::fs::read_dir("/proc")) {
        for e in dir.flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
            // pgrp is the 3rd field after the name, rss the 22nd.
            if field(&stat, 2) == Some(i64::from(g)) {
                total += field(&stat, 21).unwrap_or(0);
            }
        }
    }
    total as f64 * page
}

/// RSS after the first state, and after `actions` more turns on the same page
/// (clicks on the counter and scrolls, each answered with a full state).
async fn measure_rss(browser: &Browser, a: &Opts, url: &str, n: usize, actions: usize) -> Result<RssRow> {
    let tab = browser.new_tab(tab_options(a)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: true }).await?;
    let first =
        env.step_action(Action::Navigate { url: url.to_string() }, json!({"action": "navigate", "url": url})).await;
    anyhow::ensure!(first.state.error.is_none(), "loading {url}: {:?}", first.state.error);
    let first_rss = rss_mib(browser.process_group());
    for i in 0..actions {
        let action = match i % 4 {
            0 => json!({"action": "scroll", "direction": "down", "pixels": 400}),
            1 => json!({"action": "scroll", "direction": "up", "pixels": 400}),
            _ => {
                json!({"action": "click_element", "element_index": counter_index(env.state())?})
            }
        };
        let turn = env.step(&action.to_string()).await;
        anyhow::ensure!(turn.state.error.is_none(), "action {i} failed: {:?}", turn.state.error);
    }
    let last = rss_mib(browser.process_group());
    env.close().await;
    Ok(RssRow { elements: n, actions, first: first_rss, last })
}

struct SemRow {
    label: String,
    raw_snapshot: Duration,
    raw_ax: Duration,
    semantic: Duration,
    outline_chars: usize,
    content_chars: usize,
}

/// What `get_browser_state` (semantic_v2) does per request, timed on the same tab
/// as the raw DOMSnapshot it needs, beside the full accessibility tree it no
/// longer asks for (released after each read, as it slows later snapshots).
async fn measure_semantic(browser: &Browser, a: &Opts, url: &str, label: String, runs: usize) -> Result<SemRow> {
    use sightline_cdp::protocol::accessibility::Disable;
    use sightline_page::semantic::{self, Scope};
    let tab = browser.new_tab(tab_options(a)?).await?;
    tab.navigate(url).await?;
    let params =
        CaptureSnapshot { computed_styles: COMPUTED_STYLES, include_paint_order: true, include_dom_rects: false };
    let (mut snap, mut ax, mut sem) = (vec![], vec![], vec![]);
    let (mut outline_chars, mut content_chars) = (0, 0);
    for round in 0..=runs {
        let t = Instant::now();
        tab.execute(&GetFullAxTree {}).await?;
        let d2 = t.elapsed();
        tab.execute(&Disable {}).await?;
        let t = Instant::now();
        tab.execute(&params).await?;
        let d1 = t.elapsed();
        let t = Instant::now();
        let (c, tree) = sightline_api::capture_semantic(&tab, false, None).await?;
        let plan = semantic::plan(&tree, &Scope::Viewport);
        let shown = &plan.ranked[..plan.ranked.len().min(300)];
        let outline = semantic::outline(&tree, shown, |i| format!("p1:{}", i + 1));
        let d4 = t.elapsed();
        outline_chars = outline.len();
        content_chars = c.view.page_content.len();
        if round > 0 {
            snap.push(d1);
            ax.push(d2);
            sem.push(d4);
        }
    }
    tab.close().await;
    Ok(SemRow {
        label,
        raw_snapshot: median(snap),
        raw_ax: median(ax),
        semantic: median(sem),
        outline_chars,
        content_chars,
    })
}

struct MarkRow {
    label: String,
    marks: usize,
    screenshot: Duration,
    mark: Duration,
    marks_png: Duration,
    draw: Duration,
}

async fn measure_marks(browser: &Browser, a: &Opts, url: &str, n: usize, runs: usize) -> Result<MarkRow> {
    use sightline_pack::{Cx, Driver};
    use sightline_page::draw_marks;
    let driver = sightline_chrome::ChromeDriver::new(browser.new_tab(tab_options(a)?).await?);
    let cx = Cx::new(Duration::from_secs(600));
    driver.navigate(&cx, url).await?;
    let (mut shot, mut mark, mut png, mut draw) = (vec![], vec![], vec![], vec![]);
    let mut count = 0;
    for round in 0..=runs {
        let t = Instant::now();
        driver.screenshot(&cx).await?;
        let d1 = t.elapsed();
        let t = Instant::now();
        let set = driver.marks(&cx, false).await?;
        let d2 = t.elapsed();
        count = set.marks.len();
        let t = Instant::now();
        let set = driver.marks(&cx, true).await?;
        let t2 = Instant::now();
        draw_marks(set.screenshot.as_deref().unwrap_or_default(), &set.marks)?;
        let d4 = t2.elapsed();
        let d3 = t.elapsed();
        if round > 0 {
            shot.push(d1);
            mark.push(d2);
            png.push(d3);
            draw.push(d4);
        }
    }
    driver.into_tab().close().await;
    Ok(MarkRow {
        label: format!("{n} elements"),
        marks: count,
        screenshot: median(shot),
        mark: median(mark),
        marks_png: median(png),
        draw: median(draw),
    })
}

async fn measure(browser: &Browser, a: &Opts, url: &str, n: usize, runs: usize) -> Result<Row> {
    let tab = browser.new_tab(tab_options(a)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: false }).await?;
    let first =
        env.step_action(Action::Navigate { url: url.to_string() }, json!({"action": "navigate", "url": url})).await;
    anyhow::ensure!(first.state.error.is_none(), "loading {url}: {:?}", first.state.error);
    let tab = env.tab();
    let all_rects =
        CaptureSnapshot { computed_styles: COMPUTED_STYLES, include_paint_order: true, include_dom_rects: true };
    let no_rects = CaptureSnapshot { include_dom_rects: false, ..all_rects.clone() };
    let (mut raw_snap, mut raw_shot, mut no_shot, mut shot, mut click) = (vec![], vec![], vec![], vec![], vec![]);
    let mut raw_all = vec![];
    // One warm-up round, then interleaved measures so drift hits all alike.
    for round in 0..=runs {
        let t = Instant::now();
        tab.execute(&all_rects).await?;
        let d0 = t.elapsed();
        let t = Instant::now();
        tab.execute(&no_rects).await?;
        let d1 = t.elapsed();
        let t = Instant::now();
        tab.execute(&CaptureScreenshot::PNG).await?;
        let d2 = t.elapsed();
        let t = Instant::now();
        let c = tab.capture(false).await?;
        let _ = StateObject::from_view(&c.view, c.screenshot).to_json_line();
        let d3 = t.elapsed();
        let t = Instant::now();
        let c = tab.capture(true).await?;
        let _ = StateObject::from_view(&c.view, c.screenshot).to_json_line();
        let d4 = t.elapsed();
        if round > 0 {
            raw_all.push(d0);
            raw_snap.push(d1);
            raw_shot.push(d2);
            no_shot.push(d3);
            shot.push(d4);
        }
    }
    for round in 0..=runs {
        let counter = counter_index(env.state())?;
        let t = Instant::now();
        let turn = env.step(&json!({"action": "click_element", "element_index": counter}).to_string()).await;
        let d = t.elapsed();
        anyhow::ensure!(turn.state.error.is_none(), "click failed: {:?}", turn.state.error);
        if round > 0 {
            click.push(d);
        }
    }
    let view = &env.captured().view;
    let row = Row {
        label: format!("{n} elements"),
        raw_all_rects: median(raw_all),
        raw_snapshot: median(raw_snap),
        raw_screenshot: median(raw_shot),
        state_no_shot: median(no_shot),
        state_shot: median(shot),
        click: median(click),
        elements: view.elements.len(),
        nodes: view.node_count(),
        content_chars: view.page_content.len(),
    };
    eprintln!("  {}: done", row.label);
    env.close().await;
    Ok(row)
}
