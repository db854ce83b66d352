//! Every reader on every page of the corpus: ours through one tool session,
//! each peer through one MCP server of its own for the whole corpus.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{json, Value};
use tiktoken_rs::CoreBPE;

use super::{count, Page};
use crate::opts::{tab_options, Opts};
use crate::peers::{self, Kind, Peer, PEERS};
use crate::tool_state::ToolState;

/// The most one page may take a reader (load, wait, read).
const PAGE_LIMIT: Duration = Duration::from_secs(240);
/// The most a reader waits for a page's text.
const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// Fill in every page's counts; returns notes on what failed.
pub async fn read_corpus(a: &Opts, bpe: &CoreBPE, pages: &mut [Page]) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let tool = ToolState::start(a).await?;
    let started = Instant::now();
    for (k, p) in pages.iter_mut().enumerate() {
        let r = tokio::time::timeout(PAGE_LIMIT, Box::pin(ours(&tool, bpe, p, &mut notes))).await;
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => notes.push(format!("Sightline on {}: {e:#}", p.label)),
            Err(_) => notes.push(format!("Sightline on {}: no answer within {} s", p.label, PAGE_LIMIT.as_secs())),
        }
        progress("Sightline", k, started);
    }
    tool.close().await;

    let setup = (|| {
        Ok::<_, anyhow::Error>(peers::Setup {
            chrome: sightline_cdp::find_chromium(a.chrome.as_deref())?,
            viewport: tab_options(a)?.viewport,
        })
    })();
    for (k, peer) in PEERS.iter().enumerate() {
        let col = super::FIRST_PEER + k;
        let (version, setup) = match (peer.installed(), &setup) {
            (Ok(v), Ok(s)) => (v, s),
            (Err(e), _) => {
                notes.push(format!("{}: skipped, {e:#}", peer.name));
                continue;
            }
            (_, Err(e)) => {
                notes.push(format!("{}: skipped, {e:#}", peer.name));
                continue;
            }
        };
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
        let started = Instant::now();
        for (n, p) in pages.iter_mut().enumerate() {
            let r = tokio::time::timeout(PAGE_LIMIT, theirs(peer, &mut server, p, &mut notes)).await;
            match r {
                Ok(Ok(text)) => p.counts[col] = Some(count(bpe, &text)),
                Ok(Err(e)) => notes.push(format!("{} on {}: {e:#}", peer.name, p.label)),
                Err(_) => {
                    notes.push(format!("{} on {}: no answer within {} s", peer.name, p.label, PAGE_LIMIT.as_secs()))
                }
            }
            progress(peer.name, n, started);
        }
        server.close().await;
    }
    Ok(notes)
}

fn progress(who: &str, k: usize, started: Instant) {
    if (k + 1).is_multiple_of(50) {
        eprintln!("  {who}: {} pages read, {:.0} s", k + 1, started.elapsed().as_secs_f64());
    }
}

/// Sightline's element-index state (page_content and the whole JSON) and semantic_v2 (the reply,
/// its outline and its envelope) of one page. With a text to wait for, the state is read again every half
/// second until its page_content shows it (at most [`WAIT_LIMIT`]).
async fn ours(tool: &ToolState, bpe: &CoreBPE, p: &mut Page, notes: &mut Vec<String>) -> Result<()> {
    tool.api().dispatch("browser_navigate", tool.args(json!({ "url": p.url }))).await?;
    let get_state = || tool.api().dispatch("get_state", tool.args(json!({ "screenshot": false })));
    let mut state: Value = get_state().await?.value;
    if let Some(text) = p.wait {
        let until = Instant::now() + WAIT_LIMIT;
        let shows = |s: &Value| s["page_content"].as_str().unwrap_or_default().contains(text);
        while !shows(&state) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(500)).await;
            state = get_state().await?.value;
        }
        if !shows(&state) {
            notes.push(format!(
                "Sightline on {}: page_content did not show {text:?} within {} s",
                p.label,
                WAIT_LIMIT.as_secs()
            ));
        }
    }
    let page_content = state["page_content"].as_str().unwrap_or_default();
    p.counts[0] = Some(count(bpe, page_content));
    p.text = Some(page_content.to_string());
    p.counts[1] = Some(count(bpe, &serde_json::to_string(&state)?));
    let sem =
        tool.api().dispatch("get_browser_state", tool.args(json!({ "snapshot_format": "semantic_v2" }))).await?.value;
    p.counts[2] = Some(count(bpe, &serde_json::to_string(&sem)?));
    p.counts[3] = Some(count(bpe, sem["outline"].as_str().unwrap_or_default()));
    // What the contract makes every reply carry whatever the page shows: the snapshot's
    // header, page, omission counts and frames, with no outline, refs or content refs.
    let mut envelope = sem;
    envelope["outline"] = json!("");
    envelope["refs"] = json!([]);
    envelope["content_refs"] = json!([]);
    p.counts[4] = Some(count(bpe, &serde_json::to_string(&envelope)?));
    Ok(())
}

/// A peer's snapshot of one page: its navigate tool, its wait tool when the page has a text to
/// wait for, then its snapshot tool (the only reply counted).
async fn theirs(peer: &Peer, server: &mut peers::Server, p: &Page, notes: &mut Vec<String>) -> Result<String> {
    server.call_tool(peer.navigate_tool, peer.navigate_args(&p.url)).await?;
    if let Some(text) = p.wait {
        let ms = WAIT_LIMIT.as_millis() as u64;
        let (tool, args) = match peer.kind {
            Kind::Playwright => ("browser_wait_for", json!({ "text": text })),
            Kind::DevTools => ("wait_for", json!({ "text": [text], "timeout": ms })),
        };
        // Playwright's wait gives up after its action timeout (5 s): asked again until the limit.
        let until = Instant::now() + WAIT_LIMIT;
        loop {
            match server.call_tool(tool, args.clone()).await {
                Ok(_) => break,
                Err(_) if Instant::now() < until => tokio::time::sleep(Duration::from_millis(200)).await,
                Err(e) => {
                    notes.push(format!("{} on {}: {tool} {text:?}: {e:#}", peer.name, p.label));
                    break;
                }
            }
        }
    }
    server.call_tool(peer.snapshot_tool, json!({})).await
}
