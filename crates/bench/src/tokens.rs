//! `sightline-bench tokens` (issue 38 item 1): the tokens a model reads per
//! state, on a corpus nobody here wrote: the MiniWoB++ task pages
//! (`.cache/miniwob/miniwob/html/miniwob/*.html`, as `./x miniwob` installs
//! them from PyPI's `miniwob` wheel), served from `127.0.0.1` with the seed
//! line `tests/miniwob` adds to `core/core.js` (`?seed=1`, so every reader sees
//! the same problem), in two first states:
//!
//! - the episode's first state: `?start=1` makes the page's first
//!   `core.startEpisode()` (its load handler) go on as a click on the START
//!   cover does (`core.startEpisodeReal()`: the problem drawn, the instruction
//!   shown, the cover gone), once; the one line [`START_LINE`] adds this;
//! - the page as loaded: the START cover over an empty task, the same on every page.
//!
//! Per page, in the same run: Sightline's element-index State Object
//! (`get_state`, no screenshot: its `page_content`, and the whole JSON),
//! semantic_v2 at the default budget (`get_browser_state`, the whole reply as
//! JSON, and its outline alone), Playwright MCP's `browser_snapshot` and
//! chrome-devtools-mcp's `take_snapshot` (the text of the tool result; one
//! server per peer for the whole corpus, each page loaded with its navigate
//! tool). Tokens are counted with OpenAI's `o200k_base` vocabulary
//! (`tiktoken-rs`, which ships it), characters beside. The last line gives the
//! medians of the episode's first state.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use crate::opts::{tab_options, Opts};
use crate::peers::{self, PEERS};
use crate::tool_state::ToolState;

/// The one line the MiniWoB++ tests add to `core/core.js` (`tests/miniwob/harness.rs`).
const SEED_LINE: &str = "\nif (core.QueryString.seed) { Math.seedrandom(core.QueryString.seed); }\n";

/// `?start=1`: the page's first `core.startEpisode()` goes on to start the episode, as a click on START does.
const START_LINE: &str = "\nif (core.QueryString.start) { var startFirst = core.startEpisode; \
core.startEpisode = function () { startFirst(); core.startEpisode = startFirst; core.startEpisodeReal(); }; }\n";

/// The two first states read, in the order printed: (name, query string).
const PHASES: [(&str, &str); 2] = [
    ("the page as loaded (START cover)", "seed=1"),
    ("the episode's first state (START clicked at load)", "seed=1&start=1"),
];

/// Where `./x miniwob` unpacks the wheel's pages.
fn corpus_root() -> PathBuf {
    PathBuf::from(".cache/miniwob/miniwob/html")
}

/// The task names (file stems), sorted.
fn tasks(root: &Path) -> Result<Vec<String>> {
    let dir = root.join("miniwob");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("no MiniWoB++ pages in {} (`./x miniwob` installs them)", dir.display()))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".html").map(str::to_string))
        .collect();
    names.sort();
    anyhow::ensure!(!names.is_empty(), "no task pages in {}", dir.display());
    Ok(names)
}

/// One reader's text of one page: characters and tokens (`None`: the reader failed there).
#[derive(Clone, Copy, Default)]
struct Count {
    chars: usize,
    tokens: usize,
}

/// The readers, in the table's order.
const READERS: [&str; 6] = [
    "element-index page_content",
    "State Object JSON (no screenshot)",
    "semantic_v2 reply JSON",
    "semantic_v2 outline",
    "Playwright MCP browser_snapshot",
    "chrome-devtools-mcp take_snapshot",
];

struct Page {
    task: String,
    counts: [Option<Count>; 6],
}

fn median(mut v: Vec<usize>) -> Option<usize> {
    v.sort_unstable();
    (!v.is_empty()).then(|| v[v.len() / 2])
}

pub async fn run(a: &Opts) -> Result<u8> {
    let root = corpus_root();
    let names = tasks(&root)?;
    let mut core_js = std::fs::read(root.join("core/core.js")).context("core/core.js")?;
    core_js.extend_from_slice(SEED_LINE.as_bytes());
    core_js.extend_from_slice(START_LINE.as_bytes());
    let site = sightline_testkit::Server::dir(std::fs::canonicalize(&root)?).await?;
    site.page("/core/core.js", core_js);
    eprintln!("sightline bench tokens: {} MiniWoB++ pages, tokenizer o200k_base", names.len());
    let mut last = String::new();
    for (phase, query) in PHASES {
        let url = |task: &str| site.url(&format!("/miniwob/{task}.html?{query}"));
        let (pages, notes) = read_corpus(a, &names, &url).await?;
        eprintln!("  {phase}: done");
        last = print(phase, &pages, &notes);
    }
    println!("\n{last}");
    Ok(0)
}

/// Every reader on every page (`url` names a task's page).
async fn read_corpus(a: &Opts, names: &[String], url: &dyn Fn(&str) -> String) -> Result<(Vec<Page>, Vec<String>)> {
    let bpe = tiktoken_rs::o200k_base().context("the o200k_base vocabulary")?;
    let count = |text: &str| Count { chars: text.chars().count(), tokens: bpe.encode_ordinary(text).len() };
    let mut pages: Vec<Page> = names.iter().map(|t| Page { task: t.clone(), counts: [None; 6] }).collect();
    let mut notes = Vec::new();
    // Ours: one tool session for the corpus.
    let tool = ToolState::start(a).await?;
    for p in &mut pages {
        let u = url(&p.task);
        let r: Result<()> = async {
            tool.api().dispatch("browser_navigate", tool.args(json!({ "url": u }))).await?;
            let state = tool.api().dispatch("get_state", tool.args(json!({ "screenshot": false }))).await?.value;
            p.counts[0] = Some(count(state["page_content"].as_str().unwrap_or_default()));
            p.counts[1] = Some(count(&serde_json::to_string(&state)?));
            let sem = tool
                .api()
                .dispatch("get_browser_state", tool.args(json!({ "snapshot_format": "semantic_v2" })))
                .await?
                .value;
            p.counts[2] = Some(count(&serde_json::to_string(&sem)?));
            p.counts[3] = Some(count(sem["outline"].as_str().unwrap_or_default()));
            Ok(())
        }
        .await;
        if let Err(e) = r {
            notes.push(format!("Sightline on {}: {e:#}", p.task));
        }
    }
    tool.close().await;

    // The peers: one server each for the whole corpus.
    let setup = (|| {
        Ok::<_, anyhow::Error>(peers::Setup {
            chrome: sightline_cdp::find_chromium(a.chrome.as_deref())?,
            viewport: tab_options(a)?.viewport,
        })
    })();
    for (k, peer) in PEERS.iter().enumerate() {
        let col = 4 + k;
        let version = match (peer.installed(), &setup) {
            (Ok(v), Ok(_)) => v,
            (Err(e), _) => {
                notes.push(format!("{}: skipped, {e:#}", peer.name));
                continue;
            }
            (_, Err(e)) => {
                notes.push(format!("{}: skipped, {e:#}", peer.name));
                continue;
            }
        };
        let Ok(setup) = &setup else { continue };
        let mut server = match peers::Server::start(peer, setup) {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("{} {version}: did not start, {e:#}", peer.name));
                continue;
            }
        };
        if let Err(e) = server.initialize().await {
            notes.push(format!("{} {version}: did not start, {e:#}", peer.name));
            server.close().await;
            continue;
        }
        for p in &mut pages {
            let r: Result<String> = async {
                server.call_tool(peer.navigate_tool, peer.navigate_args(&url(&p.task))).await?;
                server.call_tool(peer.snapshot_tool, json!({})).await
            }
            .await;
            match r {
                Ok(text) => p.counts[col] = Some(count(&text)),
                Err(e) => notes.push(format!("{} on {}: {e:#}", peer.name, p.task)),
            }
        }
        server.close().await;
    }

    Ok((pages, notes))
}

/// The page rows and the summary of one first state; returns its "tokens per page (median)" line.
fn print(phase: &str, pages: &[Page], notes: &[String]) -> String {
    println!("\nTokens a model reads per state (o200k_base, tiktoken-rs), MiniWoB++ pages, {phase}; tokens / chars:\n");
    println!("| task | {} |", READERS.join(" | "));
    println!("|---|{}", "---|".repeat(READERS.len()));
    for p in pages {
        let cells: Vec<String> =
            p.counts.iter().map(|c| c.map_or("-".to_string(), |c| format!("{} / {}", c.tokens, c.chars))).collect();
        println!("| {} | {} |", p.task, cells.join(" | "));
    }
    // Medians and totals over the pages every reader that ran read, so that each column sums the same pages.
    let ran: Vec<bool> = (0..READERS.len()).map(|i| pages.iter().any(|p| p.counts[i].is_some())).collect();
    let full: Vec<&Page> =
        pages.iter().filter(|p| p.counts.iter().zip(&ran).all(|(c, ran)| c.is_some() || !ran)).collect();
    let column = |i: usize, f: fn(&Count) -> usize| -> Vec<usize> {
        full.iter().filter_map(|p| p.counts[i].as_ref().map(f)).collect()
    };
    println!("\nSummary, {phase}, over the {} pages (of {}) that every reader read:\n", full.len(), pages.len());
    println!("| reader | median tokens | total tokens | median chars | total chars | chars per token |");
    println!("|---|---|---|---|---|---|");
    let mut med = [None; 6];
    for (i, name) in READERS.iter().enumerate() {
        if !ran[i] {
            println!("| {name} | - | - | - | - | - |");
            continue;
        }
        let tokens = column(i, |c| c.tokens);
        let chars = column(i, |c| c.chars);
        let (tt, tc): (usize, usize) = (tokens.iter().sum(), chars.iter().sum());
        med[i] = median(tokens);
        println!(
            "| {name} | {} | {tt} | {} | {tc} | {:.2} |",
            med[i].unwrap_or(0),
            median(chars).unwrap_or(0),
            tc as f64 / tt.max(1) as f64
        );
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("Note: {n}");
        }
    }
    let m = |i: usize| med[i].map_or("-".to_string(), |m: usize| m.to_string());
    format!(
        "tokens per page (median): sightline {}, semantic_v2 {}, playwright-mcp {}, chrome-devtools-mcp {}",
        m(0),
        m(2),
        m(4),
        m(5)
    )
}
