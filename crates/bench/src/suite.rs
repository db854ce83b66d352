//! `sightline-bench`: capture and action medians next to the raw CDP floor.
//!
//! For each generated page (about 30, 1,000 and 5,000 interactive elements,
//! four DOM nodes per element; and the 5,000-control page of issue 20, 1,250
//! rows of a flex table, unless `--no-controls`), in the same tab and run:
//! - the raw `DOMSnapshot.captureSnapshot` call with our parameters (the floor
//!   any DOM-based capture pays) and the raw `Page.captureScreenshot` call;
//! - a full State Object without and with screenshot (capture, model, JSON);
//! - click → next State Object (real mouse events, the wait, a new capture).
//!
//! And, on those pages, on six small fixture pages (`tests/fixtures`: login,
//! form, dialog, kinds, semantic, visibility) and on the Rust book's
//! `print.html` (from the toolchain's docs, when installed): our element-index
//! state as a tool caller gets it (`get_state` through the API, reply encoded:
//! `tool_state.rs`) and our semantic_v2 snapshot, beside two peer MCP servers'
//! snapshots when `./x bench` has installed them (`peers.rs`). Then a 10-step
//! form task by single tool calls and by the `run` tool (`run_task.rs`). This file runs
//! the pages and prints the tables; `measure.rs` times each measure.

use std::time::Duration;

use anyhow::{Context, Result};
use sightline_testkit::Server;

use crate::measure::{
    controls_page, generated_page, measure, measure_marks, measure_rss, measure_semantic, ms, SemRow,
};

use crate::opts::Opts;
use crate::opts::{start_browser, tab_options};
use crate::peers::{self, Measured, PEERS};
use crate::tool_state::ToolState;

/// The small fixture pages the peers table covers (under `tests/fixtures`).
const SMALL_PAGES: [&str; 6] = ["login", "form", "dialog", "kinds", "semantic", "visibility"];

/// The Rust book's one-page edition in the toolchain's docs (about 46,000 elements).
fn rust_book() -> Option<std::path::PathBuf> {
    let out = std::process::Command::new("rustc").args(["--print", "sysroot"]).output().ok()?;
    let root = std::path::PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let book = root.join("share/doc/rust/html/book");
    book.join("print.html").is_file().then_some(book)
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
    site.page("/controls-5000.html", controls_page(1250));
    site.page("/form.html", crate::run_task::FORM);
    let fixtures = Server::dir(std::env::current_dir()?.join("tests/fixtures")).await?;
    let book = match rust_book() {
        Some(dir) => Some(Server::dir(dir).await?),
        None => {
            eprintln!("sightline bench: no Rust book in the toolchain's docs (rustup component add rust-docs); its row is left out");
            None
        }
    };
    let (browser, _egress) = start_browser(a).await?;
    eprintln!("sightline bench: {} runs per measure, {}", runs, browser.version().await?);
    let tool = ToolState::start(a).await?;
    let mut rows = Vec::new();
    let mut mark_rows = Vec::new();
    let mut sem_rows = Vec::new();
    let mut states = Vec::new();
    let mut peers = PeerRuns::new(a);
    // The pages the peers table covers: (label, url).
    let mut peer_pages: Vec<(String, String)> = Vec::new();
    for &n in &sizes {
        let url = site.url(&format!("/gen-{n}.html"));
        rows.push(measure(&browser, a, &url, n, runs).await?);
        mark_rows.push(measure_marks(&browser, a, &url, n, runs).await?);
        peer_pages.push((format!("{n} elements"), url));
    }
    if !a.no_controls {
        let url = site.url("/controls-5000.html");
        let label = "5,000 controls";
        let mut row = measure(&browser, a, &url, 1250 * 4, runs).await?;
        row.label = label.to_string();
        rows.push(row);
        peer_pages.push((label.to_string(), url));
    }
    for name in SMALL_PAGES {
        peer_pages.push((name.to_string(), fixtures.url(&format!("/{name}.html"))));
    }
    if let Some(book) = &book {
        peer_pages.push(("Rust book print.html".to_string(), book.url("/print.html")));
    }
    // Ours, then the peers, page by page, so that drift on a shared machine hits both alike.
    for (label, url) in &peer_pages {
        let (state, _) = tool.measure(url, runs).await.with_context(|| format!("get_state on {label}"))?;
        states.push(Some(state));
        sem_rows.push(measure_semantic(&browser, &tool, a, url, label.clone(), runs).await?);
        peers.measure(url, label, runs).await;
    }
    let run_rows = crate::run_task::measure(&tool, &site.url("/form.html"), runs).await?;
    tool.close().await;
    let rss = match (sizes.iter().max(), a.rss_actions.or(Some(200))) {
        (Some(&n), Some(actions)) if actions > 0 => {
            Some(measure_rss(&browser, a, &site.url(&format!("/gen-{n}.html")), n, actions).await?)
        }
        _ => None,
    };
    println!("\nMedians over {runs} runs, viewport {:?} (ms):\n", tab_options(a)?.viewport);
    println!(
        "| page | nodes | indexed | raw snapshot, all rects | raw snapshot, no rects | one walk + round trip | state, no shot | ratio | state / walk | raw screenshot | state + shot | ratio | click → state | page_content chars |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.2}x | {:.2}x | {} | {} | {:.2}x | {} | {} |",
            r.label,
            r.nodes,
            r.elements,
            ms(r.raw_all_rects),
            ms(r.raw_snapshot),
            ms(r.walk_floor),
            ms(r.state_no_shot),
            r.state_no_shot.as_secs_f64() / r.raw_snapshot.as_secs_f64(),
            r.state_no_shot.as_secs_f64() / r.walk_floor.as_secs_f64(),
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
    print_peers(&peers, &sem_rows, &states, runs);
    crate::run_task::print(&run_rows, runs);
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

/// `bench --url URL`: the element-index state, semantic_v2 and the peers' snapshots of one page you name.
async fn run_on_page(a: &Opts, url: &str, runs: usize) -> Result<u8> {
    let (browser, _egress) = start_browser(a).await?;
    eprintln!("sightline bench: {} runs per measure, {}", runs, browser.version().await?);
    let tool = ToolState::start(a).await?;
    let (state, _) = tool.measure(url, runs).await?;
    let sem_rows = vec![measure_semantic(&browser, &tool, a, url, url.to_string(), runs).await?];
    tool.close().await;
    eprintln!("  {url}: done");
    let mut peers = PeerRuns::new(a);
    peers.measure(url, url, runs).await;
    print_semantic(&sem_rows);
    print_peers(&peers, &sem_rows, &[Some(state)], runs);
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

/// `states`: our element-index state (no screenshot) on the same pages, where measured.
fn print_peers(peers: &PeerRuns, sem_rows: &[SemRow], states: &[Option<Duration>], runs: usize) {
    let names: Vec<String> = PEERS
        .iter()
        .zip(&peers.versions)
        .filter_map(|(p, v)| Some(format!("{} {}", p.name, v.as_ref().ok()?)))
        .collect();
    if !peers.pages.is_empty() {
        println!(
            "\nPeers ({}), same pages: one snapshot tool call over MCP stdio, median of {runs} (ms); ratios are ours / the peer's (below 1: ours is faster):\n",
            names.join(", ")
        );
        let mut head = String::from("| page | element-index state | semantic_v2 snapshot |");
        for p in &PEERS {
            head += &format!(" {} {} | state / peer | semantic_v2 / peer |", p.name, p.snapshot_tool);
        }
        head += " semantic_v2 outline chars |";
        for p in &PEERS {
            head += &format!(" {} chars |", p.name);
        }
        println!("{head}");
        println!("|{}", "---|".repeat(4 + 4 * PEERS.len()));
        for (i, (sem, row)) in sem_rows.iter().zip(&peers.pages).enumerate() {
            let state = states.get(i).copied().flatten();
            let mut line = format!("| {} | {} | {} |", sem.label, state.map_or("-".to_string(), ms), ms(sem.semantic));
            for (m, v) in row.iter().zip(&peers.versions) {
                line += &match (m, v) {
                    (Ok(m), _) => {
                        let peer = m.median.as_secs_f64();
                        let of_state = state.map_or("-".to_string(), |s| format!("{:.2}x", s.as_secs_f64() / peer));
                        format!(" {} | {of_state} | {:.2}x |", ms(m.median), sem.semantic.as_secs_f64() / peer)
                    }
                    (Err(_), Err(_)) => " skipped | - | - |".to_string(),
                    (Err(_), Ok(_)) => " failed | - | - |".to_string(),
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
