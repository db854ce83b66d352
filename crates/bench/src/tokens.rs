//! `sightline-bench tokens` (issue 38 item 1): the tokens a model reads per
//! state, on a corpus nobody here wrote, in four parts ([`corpus`], [`apps`]):
//!
//! - the 130 MiniWoB++ task pages (`.cache/miniwob/miniwob/html/miniwob/*.html`,
//!   as `./x miniwob` installs them from PyPI's `miniwob` wheel), served from
//!   `127.0.0.1` with the seed line `tests/miniwob` adds to `core/core.js`
//!   (`?seed=1`, so every reader sees the same problem), each in two states:
//!   the episode's first state (`?start=1`: the page's load handler goes on as
//!   a click on START does) and a mid-task state (`&step=1`: one deterministic
//!   step in the page right after, see [`corpus::STEP_LINE`]);
//! - a fixed dozen of real documents: rustdoc and the Rust book from the
//!   toolchain's `share/doc/rust/html`, Python's library reference from
//!   `/usr/share/doc/python3/html`;
//! - the real apps `./x apps` installs under `.cache/apps`, each started here
//!   on `127.0.0.1` (a port the OS picks) by its `tests/apps/NAME/serve.py`,
//!   or served as files (TodoMVC), a fixed list of pages each.
//!
//! Per page, in the same run: Sightline's element-index State Object
//! (`get_state`, no screenshot: its `page_content`, and the whole JSON),
//! semantic_v2 at the default budget (`get_browser_state`, the whole reply as
//! JSON, its outline alone, and its envelope: the reply with an empty outline,
//! `refs` and `content_refs`, which is what the semantic_v2 contract makes every
//! reply carry whatever the page), Playwright MCP's `browser_snapshot` and
//! chrome-devtools-mcp's `take_snapshot` (the text of the tool result; one
//! server per peer for the whole corpus, each page loaded with its navigate
//! tool) ([`read`]). Tokens are counted with OpenAI's `o200k_base` vocabulary
//! (`tiktoken-rs`, which ships it), characters beside ([`report`]).
//!
//! Then what the project's scripted MiniWoB++ policies read through Sightline
//! per solved task, from the `target/miniwob/TASK.reads.jsonl` files the
//! MiniWoB++ suite writes ([`solved`]). The last line gives the medians over
//! the whole page corpus.

mod apps;
mod corpus;
mod read;
mod report;
mod solved;

use anyhow::{Context, Result};

use crate::opts::Opts;

/// One reader's text of one page: characters and tokens.
#[derive(Clone, Copy, Default)]
pub struct Count {
    pub chars: usize,
    pub tokens: usize,
}

/// The readers, in the table's order.
pub const READERS: [&str; 7] = [
    "element-index page_content",
    "State Object JSON (no screenshot)",
    "semantic_v2 reply JSON",
    "semantic_v2 outline",
    "semantic_v2 envelope",
    "Playwright MCP browser_snapshot",
    "chrome-devtools-mcp take_snapshot",
];

/// The first peer's column in [`READERS`] (Playwright MCP; chrome-devtools-mcp's is the next),
/// in the order of `peers::PEERS`.
pub const FIRST_PEER: usize = 5;

/// The corpus's parts, in the order printed.
pub const PARTS: [&str; 4] = [
    "MiniWoB++, the episode's first state (START clicked at load)",
    "MiniWoB++, a mid-task state (one step taken in the page after START)",
    "real documents (rustdoc, the Rust book, Python's library reference)",
    "real apps (.cache/apps, started on 127.0.0.1)",
];

/// One page of the corpus and what each reader gave for it (`None`: the reader failed there).
pub struct Page {
    /// Index into [`PARTS`].
    pub part: usize,
    /// The task, document or app page.
    pub label: String,
    pub url: String,
    /// A text every reader waits for before it reads (an app that draws after it loads).
    pub wait: Option<&'static str>,
    pub counts: [Option<Count>; 7],
    /// Sightline's page_content (the mid-task states are compared with the first ones).
    pub text: Option<String>,
}

impl Page {
    pub fn new(part: usize, label: String, url: String, wait: Option<&'static str>) -> Page {
        Page { part, label, url, wait, counts: [None; 7], text: None }
    }
}

/// Characters and `o200k_base` tokens of `text`.
pub fn count(bpe: &tiktoken_rs::CoreBPE, text: &str) -> Count {
    Count { chars: text.chars().count(), tokens: bpe.encode_ordinary(text).len() }
}

pub fn median(mut v: Vec<usize>) -> Option<usize> {
    v.sort_unstable();
    (!v.is_empty()).then(|| v[v.len() / 2])
}

pub async fn run(a: &Opts) -> Result<u8> {
    // Everything the corpus needs, checked before anything starts.
    let miniwob = corpus::MiniWob::find()?;
    let documents = corpus::Documents::find()?;
    let specs = apps::check()?;
    let bpe = tiktoken_rs::o200k_base().context("the o200k_base vocabulary")?;

    let mut pages = Vec::new();
    let site = miniwob.serve().await?;
    for (part, query) in [(0, corpus::FIRST_QUERY), (1, corpus::MID_QUERY)] {
        for task in &miniwob.tasks {
            pages.push(Page::new(part, task.clone(), site.url(&format!("/miniwob/{task}.html?{query}")), None));
        }
    }
    let servers = documents.serve().await?;
    for (label, url) in documents.pages(&servers) {
        pages.push(Page::new(2, label, url, None));
    }
    eprintln!(
        "sightline bench tokens: starting the apps ({})",
        specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
    );
    let running = apps::start(specs).await?;
    for app in &running {
        for (path, wait) in app.spec.pages {
            pages.push(Page::new(3, format!("{} {path}", app.spec.name), app.url(path), *wait));
        }
    }
    eprintln!(
        "sightline bench tokens: {} pages ({} MiniWoB++ tasks in two states, {} documents, {} app pages), tokenizer o200k_base",
        pages.len(),
        miniwob.tasks.len(),
        pages.iter().filter(|p| p.part == 2).count(),
        pages.iter().filter(|p| p.part == 3).count(),
    );
    let notes = Box::pin(read::read_corpus(a, &bpe, &mut pages)).await;
    drop(running);
    drop(servers);
    drop(site);
    let notes = notes?;

    for (part, title) in PARTS.iter().enumerate() {
        let of_part: Vec<&Page> = pages.iter().filter(|p| p.part == part).collect();
        report::part(title, &of_part);
        if part == 1 {
            report::mid_states(&pages);
        }
    }
    if !notes.is_empty() {
        println!();
        for n in &notes {
            println!("Note: {n}");
        }
    }
    solved::print(&bpe, &solved::MINIWOB)?;
    solved::print(&bpe, &solved::APPS)?;
    let all: Vec<&Page> = pages.iter().collect();
    let last = report::whole(&all);
    println!("\n{last}");
    Ok(0)
}
