//! The floor of a session start: what Chromium itself takes to give N
//! concurrent sessions their own context and page, with no Sightline in the way.
//!
//! Over raw CDP on a browser launched as `serve` launches its own (same flags,
//! same egress proxy): per start, a browser context, a blank tab, an attached
//! session with `Page.enable`, and `Page.navigate` to the bench's form page
//! until its `Page.loadEventFired`; admitted [`DEFAULT_START_LIMIT`] at a time,
//! as `serve` admits starts. A start counts from the moment all N were asked
//! for, so the p50 is comparable with the table's "session start p50"
//! (Sightline's start adds its tab setup, the settle wait and the first State
//! Object on top). Three rounds, the median round's p50 reported.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::future::join_all;
use sightline_cdp::protocol::{page, target};
use sightline_cdp::{Chromium, Client, EventFilter, LaunchOptions, Routed, SessionId};
use sightline_server::DEFAULT_START_LIMIT;

use super::{Row, LAUNCH, LAUNCH_NEXT};

/// Rounds of N starts; the round with the median p50 is reported.
pub(super) const ROUNDS: usize = 3;

/// One round's session starts, from the moment all were asked for: p50 and slowest.
#[derive(Clone, Copy)]
pub struct Floor {
    pub sessions: usize,
    pub p50: Duration,
    pub max: Duration,
}

/// The floor at `n` concurrent starts of `page` (a URL on the bench's site).
pub async fn start_floor(launch: &LaunchOptions, page: &str, n: usize) -> Result<Floor> {
    let chromium = Chromium::launch(launch).await.context("launching Chromium for the floor")?;
    let client = chromium.client().clone();
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let r = round(&client, page, n).await;
        match r {
            Ok(f) => rounds.push(f),
            Err(e) => {
                chromium.close().await;
                return Err(e);
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    chromium.close().await;
    rounds.sort_by_key(|f| f.p50);
    Ok(rounds[rounds.len() / 2])
}

async fn round(client: &Client, page: &str, n: usize) -> Result<Floor> {
    let turns = Arc::new(tokio::sync::Semaphore::new(DEFAULT_START_LIMIT));
    let asked = Instant::now();
    let starts = join_all((0..n).map(|_| {
        let turns = turns.clone();
        async move {
            let _turn = turns.acquire().await.context("start turn")?;
            let ctx = client.execute(None, &target::CreateBrowserContext { dispose_on_detach: false }).await?;
            let start = async {
                let t = target::CreateTarget { url: "about:blank", browser_context_id: Some(&ctx.browser_context_id) };
                let tab = client.execute(None, &t).await?;
                let attach = target::AttachToTarget { target_id: &tab.target_id, flatten: true };
                let session: SessionId = client.execute(None, &attach).await?.session_id;
                let mut events = client.subscribe_to(EventFilter::from(Some(Some(session.clone()))));
                client.execute(Some(&session), &page::Enable {}).await?;
                client.execute(Some(&session), &page::Navigate { url: page }).await?;
                let loaded = async {
                    while let Some(ev) = events.next().await {
                        if matches!(&ev, Routed::Event(e) if e.method == "Page.loadEventFired") {
                            return Ok(asked.elapsed());
                        }
                    }
                    anyhow::bail!("the connection closed before the page loaded")
                };
                tokio::time::timeout(Duration::from_secs(30), loaded).await.context("no load event within 30 s")?
            }
            .await;
            Ok::<_, anyhow::Error>((ctx.browser_context_id, start))
        }
    }))
    .await;
    let mut took = Vec::with_capacity(n);
    let mut failed = None;
    for s in starts {
        let (ctx, start) = s?;
        let _ = client.execute(None, &target::DisposeBrowserContext { browser_context_id: &ctx }).await;
        match start {
            Ok(t) => took.push(t),
            Err(e) => failed = Some(e),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    took.sort();
    Ok(Floor { sessions: n, p50: took[took.len() / 2], max: took[took.len() - 1] })
}

/// The floor of a session start beside ours (launched: the first burst, and the next with a pool by demand).
pub(super) fn print_floor(floors: &[Floor], rows: &[Row]) {
    println!("\n| concurrent starts | Chromium alone (raw CDP): start p50 ms | slowest ms | sightline, launched: start p50 ms | ratio | next burst: start p50 ms | ratio |");
    println!("|---|---|---|---|---|---|---|");
    for f in floors {
        let ours = |side: &str| match rows.iter().find(|r| r.side == side && r.sessions == f.sessions) {
            Some(r) => format!(
                "{:.0} | {:.2}x",
                r.start_p50.as_secs_f64() * 1e3,
                r.start_p50.as_secs_f64() / f.p50.as_secs_f64()
            ),
            None => "- | -".into(),
        };
        println!(
            "| {} | {:.0} | {:.0} | {} | {} |",
            f.sessions,
            f.p50.as_secs_f64() * 1e3,
            f.max.as_secs_f64() * 1e3,
            ours(LAUNCH),
            ours(LAUNCH_NEXT)
        );
    }
    println!(
        "Chromium alone: per start a browser context, a blank tab, Page.enable and Page.navigate to the same form page \
         until its load event, over raw CDP on a browser launched with serve's flags, {DEFAULT_START_LIMIT} at a time \
         as serve admits starts, timed from the moment all were asked for (median of {} rounds).",
        ROUNDS
    );
}
