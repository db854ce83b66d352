//! `sightline-bench serve`: load on `sightline serve`.
//!
//! For 1, 10 and 25 concurrent sessions (`--sizes`), each client thread
//! creates a session over HTTP and runs a scripted mix of element-index
//! actions on local fixture pages (type, tick, scroll down and up, read the
//! state), `--runs` rounds. Reported: actions/s over all sessions, p50/p99
//! action latency as the client sees it, and memory per session (PSS of the
//! server process and of the browser processes, with N sessions open, minus
//! the same before the server started, divided by N: the shared browser and
//! the server are counted, as each peer's whole browser is). Then each session checks isolation: it
//! sees only its own typed value and its own cookie. Playwright MCP does the
//! same work beside it, one stdio server and browser per session
//! ([`crate::serve_peer`]; `--no-peers` leaves it out), and the table gives
//! our ratio to it. The same runs again with browsers from a local Selenium
//! Grid when its jar is installed.
//!
//! The live view is measured on its own server after our launched rows
//! ([`live_rows`]): frames per second each watched session's stream gets on a
//! page that repaints all the time, and the CPU the watching adds.
//!
//! Ctrl-C (or SIGTERM) ends the run: every peer server, browser and the Grid
//! it started is killed on the way out.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use sightline_server::{BrowserSource, GridConfig, HubConfig, ServeConfig};
use sightline_testkit::LocalGrid;
use sightline_testkit::Server;

use crate::opts::Opts;
use crate::{peers, serve_peer};

mod floor;
mod live;
use floor::{print_floor, start_floor};
use live::{live_rows, print_live};

const FORM: &str = r#"<!doctype html><html><head><title>Bench form</title></head><body>
<h1>Order</h1>
<form><input name="name" aria-label="Name"> <input type="checkbox" name="gift" aria-label="Gift wrap">
<select name="size"><option>S</option><option>M</option><option>L</option></select>
<button type="button" onclick="document.getElementById('out').textContent='saved'">Save</button></form>
<p id="out"></p>
<div style="height:2400px;background:linear-gradient(#fff,#ddd)">A long page</div>
<a href="/form.html">Again</a>
</body></html>"#;

/// Stores `?value` in a cookie, shows the cookie.
const JAR: &str = r#"<!doctype html><html><body><script>
if (location.search) document.cookie = "who=" + location.search.slice(1) + "; path=/";
document.write("<p>cookie=[" + document.cookie + "]</p>");
</script></body></html>"#;

/// A page that paints all the time (a counter redrawn each animation frame and a
/// moving box), so a watched session's screencast sends frames as fast as it can.
const BUSY: &str = r#"<!doctype html><html><head><title>Busy page</title>
<style>#box{position:absolute;top:80px;width:120px;height:120px;background:#2563eb;animation:m 2s linear infinite alternate}
@keyframes m{from{left:0}to{left:900px}}</style></head><body>
<h1 id="n">0</h1><div id="box"></div>
<script>let n = 0; (function f() { document.getElementById("n").textContent = ++n; requestAnimationFrame(f); })();</script>
</body></html>"#;

/// One side at one size.
pub struct Row {
    /// Who served the sessions: ours with launched browsers or a Grid's, or a peer.
    pub side: &'static str,
    pub sessions: usize,
    /// Requests made (timed), over all sessions.
    pub actions: usize,
    /// Requests answered with an error, or not at all.
    pub failed: usize,
    /// From every session open to every session done.
    pub wall: Duration,
    /// Sorted.
    pub latencies: Vec<Duration>,
    pub start_p50: Duration,
    pub mem_per_session_mb: f64,
    /// Sessions that saw only their own typed value and cookie.
    pub isolated: usize,
}

/// The `side` of our rows.
const LAUNCH: &str = "sightline, launched";
/// The same size again on the same server, once its pool by demand holds the first burst's size.
const LAUNCH_NEXT: &str = "sightline, launched, next burst";

/// The warm pool a run asks for (`sightline serve --warm N|auto`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Warm {
    Fixed(usize),
    /// Sized by demand ([`sightline_server::HubConfig::warm_auto`]).
    Auto,
}

impl Warm {
    fn parse(s: Option<&str>) -> Result<Warm> {
        match s {
            None | Some("auto") => Ok(Warm::Auto),
            Some(n) => Ok(Warm::Fixed(n.parse().context("--warm expects a number or auto")?)),
        }
    }
}

impl std::fmt::Display for Warm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warm::Fixed(n) => write!(f, "{n} warm contexts"),
            Warm::Auto => f.write_str("the warm pool by demand (serve's default)"),
        }
    }
}
const GRID: &str = "sightline, Grid";
/// The Grid's size again, once the pool by demand holds the first burst's Grid browsers.
const GRID_NEXT: &str = "sightline, Grid, next burst";

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(180)))
        .build()
        .into()
}

pub(crate) fn call(agent: &ureq::Agent, method: &str, url: &str, body: Option<Value>) -> Result<(u16, Value)> {
    let mut resp = match (method, body) {
        ("POST", Some(b)) => agent.post(url).send_json(b)?,
        ("POST", None) => agent.post(url).send_empty()?,
        ("DELETE", _) => agent.delete(url).call()?,
        _ => agent.get(url).call()?,
    };
    let status = resp.status().as_u16();
    let text = resp.body_mut().with_config().limit(64 << 20).read_to_string().unwrap_or_default();
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// Proportional set size (kB) of each process, and their parents.
pub(crate) fn processes() -> HashMap<i32, (i32, u64)> {
    let mut out = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(ppid) = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<i32>().ok())
        else {
            continue;
        };
        out.insert(pid, (ppid, pss_kb(pid.into())));
    }
    out
}

/// Proportional set size (kB) of one process; 0 if it is gone.
pub fn pss_kb(pid: i64) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Pss:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

/// PSS (kB) of `root` (if `with_root`) and all its descendants.
fn tree_pss(root: i32, with_root: bool) -> u64 {
    let procs = processes();
    let mut total = if with_root { procs.get(&root).map_or(0, |p| p.1) } else { 0 };
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for (pid, (ppid, pss)) in &procs {
            if *ppid == p {
                total += pss;
                stack.push(*pid);
            }
        }
    }
    total
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Memory of the server and its browsers: this process plus its descendants,
/// or, with a Grid, this process plus the Grid's browser processes (not the JVM).
fn memory_kb(grid_pid: Option<i32>) -> u64 {
    let me = std::process::id() as i32;
    match grid_pid {
        None => tree_pss(me, true),
        Some(g) => tree_pss(me, true) + tree_pss(g, false),
    }
}

/// `before`: the memory with no server running (so that ours counts the shared
/// browser, the server and any warm sessions, as the peer's counts its browsers).
fn one_size(
    side: &'static str,
    base: &str,
    site: &str,
    n: usize,
    rounds: usize,
    grid_pid: Option<i32>,
    before: u64,
) -> Result<Row> {
    std::thread::sleep(Duration::from_millis(500));
    // Sessions start together, then all wait until every one is open before acting.
    let barrier = Arc::new(std::sync::Barrier::new(n + 1));
    let measured = Arc::new(std::sync::Barrier::new(n + 1));
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let (base, site, barrier, measured) = (base.to_string(), site.to_string(), barrier.clone(), measured.clone());
            std::thread::spawn(move || -> Result<(Duration, Vec<Duration>, usize, bool)> {
                let agent = agent();
                let started = Instant::now();
                let created = call(&agent, "POST", &format!("{base}/v1/sessions"), Some(json!({ "url": format!("{site}/form.html"), "screenshot": false })));
                let start_time = started.elapsed();
                barrier.wait();
                measured.wait();
                let work = (|| -> Result<(String, Vec<Duration>, usize)> {
                    let (status, v) = created?;
                    if status != 201 {
                        bail!("creating a session: {status} {v}");
                    }
                    let id = v["session_id"].as_str().unwrap_or_default().to_string();
                    let act = format!("{base}/v1/sessions/{id}/act");
                    let mut lat = Vec::new();
                    let mut failed = 0;
                    for r in 0..rounds {
                        let steps = [
                            json!({ "action": "input_text", "element_index": 1, "text": format!("session {i} round {r}"), "overwrite": true }),
                            json!({ "action": "click_element", "element_index": 2 }),
                            json!({ "action": "scroll", "direction": "down" }),
                            json!({ "action": "scroll", "direction": "up" }),
                        ];
                        for s in steps {
                            let t = Instant::now();
                            let (status, state) = call(&agent, "POST", &act, Some(s))?;
                            lat.push(t.elapsed());
                            if status != 200 || !state["error"].is_null() {
                                failed += 1;
                            }
                        }
                        let t = Instant::now();
                        let (status, _) = call(&agent, "GET", &format!("{base}/v1/sessions/{id}/state?screenshot=false"), None)?;
                        lat.push(t.elapsed());
                        if status != 200 {
                            failed += 1;
                        }
                    }
                    Ok((id, lat, failed))
                })();
                // Every thread reaches the barriers, so one failure cannot hang the run.
                barrier.wait();
                measured.wait();
                let (id, lat, failed) = work?;
                let act = format!("{base}/v1/sessions/{id}/act");
                // Isolation: my own typed value, my own cookie, nobody else's.
                let (_, state) = call(&agent, "GET", &format!("{base}/v1/sessions/{id}/state?screenshot=false"), None)?;
                let own_value = state["element_index"]["1"]["attributes"]["value"] == json!(format!("session {i} round {}", rounds - 1));
                call(&agent, "POST", &act, Some(json!({ "action": "navigate", "url": format!("{site}/jar.html?s{i}") })))?;
                let (_, jar) = call(&agent, "POST", &act, Some(json!({ "action": "navigate", "url": format!("{site}/jar.html") })))?;
                let own_cookie = jar["page_content"].as_str().is_some_and(|c| c.contains(&format!("cookie=[who=s{i}]")));
                call(&agent, "DELETE", &format!("{base}/v1/sessions/{id}"), None)?;
                Ok((start_time, lat, failed, own_value && own_cookie))
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let open = memory_kb(grid_pid);
    measured.wait();
    barrier.wait();
    let wall = started.elapsed();
    let after = memory_kb(grid_pid);
    measured.wait();
    let mut latencies = Vec::new();
    let mut starts = Vec::new();
    let (mut failed, mut isolated) = (0, 0);
    for t in threads {
        let (start, lat, f, iso) = t.join().map_err(|_| anyhow::anyhow!("a client thread panicked"))??;
        starts.push(start);
        latencies.extend(lat);
        failed += f;
        isolated += iso as usize;
    }
    latencies.sort();
    starts.sort();
    let peak = open.max(after);
    Ok(Row {
        side,
        sessions: n,
        actions: latencies.len(),
        failed,
        wall,
        start_p50: percentile(&starts, 0.5),
        latencies,
        mem_per_session_mb: peak.saturating_sub(before) as f64 / 1024.0 / n as f64,
        isolated,
    })
}

/// Wait (two minutes at most) until the server's pool holds `want` warm
/// contexts or Grid browsers (`sightline_warm_ready` in `/metrics`): the
/// previous size's sessions are given back and refilled one at a time.
fn wait_warm(base: &str, want: usize) {
    if want == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_secs(120);
    let agent = agent();
    while Instant::now() < until {
        let ready = agent
            .get(&format!("{base}/metrics"))
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("sightline_warm_ready ").and_then(|v| v.trim().parse::<usize>().ok()))
            });
        if ready.is_some_and(|r| r >= want) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("bench serve: the warm pool did not reach {want} in two minutes; measuring anyway");
}

pub(crate) async fn start_server(
    source: BrowserSource,
    max: usize,
    warm: Warm,
) -> Result<(String, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>)> {
    let (warm, warm_auto) = match warm {
        Warm::Fixed(n) => (n, None),
        Warm::Auto => (0, Some(sightline_server::WARM_AUTO_KEEP)),
    };
    let hub = HubConfig {
        source,
        max_sessions: max,
        idle_timeout: Duration::from_secs(600),
        warm,
        warm_auto,
        ..HubConfig::default()
    };
    let cfg =
        ServeConfig { listen: "127.0.0.1:0".parse()?, principals: sightline_server::Principals::anonymous(), hub };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (ready, addr) = tokio::sync::oneshot::channel();
    let done = tokio::spawn(sightline_server::serve(
        cfg,
        async move {
            let _ = stopped.await;
        },
        move |a| {
            let _ = ready.send(a);
        },
    ));
    let addr = addr.await.context("the server did not start")?;
    Ok((format!("http://{addr}"), stop, done))
}

async fn run_mode(
    side: &'static str,
    source: BrowserSource,
    site: &str,
    sizes: &[usize],
    rounds: usize,
    grid_pid: Option<i32>,
    warm: Warm,
) -> Result<Vec<Row>> {
    let max = sizes.iter().copied().max().unwrap_or(1);
    let before = memory_kb(grid_pid);
    let (base, stop, done) = start_server(source, max, warm).await?;
    // What a pool by demand holds: nothing on a server that has started no session.
    let by_demand = warm == Warm::Auto;
    if by_demand {
        std::thread::sleep(Duration::from_secs(1));
        let idle = memory_kb(grid_pid).saturating_sub(before);
        eprintln!("  {side}: no session started yet, the server and its browser: {} MB", idle / 1024);
    }
    let mut rows = Vec::new();
    for &n in sizes {
        // A pool by demand measures each size twice: the first burst finds what the
        // sizes before left; the next finds this burst's size.
        let next = if side == GRID { GRID_NEXT } else { LAUNCH_NEXT };
        let by_demand_bursts = [(side, 0), (next, n.min(sightline_server::WARM_AUTO_MAX))];
        let bursts: &[(&'static str, usize)] = match warm {
            Warm::Fixed(w) => &[(side, w.min(n))],
            Warm::Auto => &by_demand_bursts,
        };
        for &(side, want) in bursts {
            let (base, site) = (base.clone(), site.to_string());
            let row = tokio::task::spawn_blocking(move || {
                wait_warm(&base, want);
                one_size(side, &base, &site, n, rounds, grid_pid, before)
            })
            .await??;
            eprintln!(
                "  {side} {n:>3} sessions: {:.1} requests/s, start p50 {:.0} ms",
                row.actions as f64 / row.wall.as_secs_f64(),
                row.start_p50.as_secs_f64() * 1e3
            );
            rows.push(row);
        }
    }
    // ...and once the largest burst has ended, its size in warm contexts, until no
    // session has started for the keep time.
    if by_demand {
        let (base, want) = (base.clone(), max.min(sightline_server::WARM_AUTO_MAX));
        tokio::task::spawn_blocking(move || wait_warm(&base, want)).await?;
        let held = memory_kb(grid_pid).saturating_sub(before);
        let what = if side == GRID { "Grid browsers" } else { "contexts" };
        eprintln!("  {side}: after the bursts, {want} warm {what} held: {} MB", held / 1024);
    }
    let _ = stop.send(());
    let _ = done.await;
    Ok(rows)
}

/// The whole run; Ctrl-C or SIGTERM drops it (the Grid and every peer server with it),
/// then kills what an interrupted step may still hold. `main` kills our browsers after.
pub async fn run(a: &Opts) -> Result<u8> {
    tokio::select! {
        result = run_all(a) => result,
        signal = interrupted() => {
            eprintln!("bench serve: {signal}: closing what it started");
            peers::kill_all();
            Ok(130)
        }
    }
}

async fn interrupted() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).ok();
    let term = async {
        match term.as_mut() {
            Some(t) => t.recv().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted",
        _ = term => "terminated",
    }
}

async fn run_all(a: &Opts) -> Result<u8> {
    let sizes: Vec<usize> = match &a.sizes {
        Some(s) => s
            .split(',')
            .map(|n| n.trim().parse().context("--sizes expects numbers like 1,10,25"))
            .collect::<Result<_>>()?,
        None => vec![1, 10, 25],
    };
    let rounds: usize = a.runs.as_deref().unwrap_or("4").parse().context("--runs expects a number")?;
    anyhow::ensure!(rounds > 0 && !sizes.contains(&0), "--runs and --sizes must be at least 1");
    let site = Server::memory().await?;
    site.page("/form.html", FORM);
    site.page("/jar.html", JAR);
    site.page("/busy.html", BUSY);
    let site_url = site.url("");
    let site_url = site_url.trim_end_matches('/').to_string();
    let warm = Warm::parse(a.warm.as_deref())?;
    eprintln!("bench serve: {rounds} rounds of 5 requests per session (type, tick, scroll down, scroll up, read state), screenshots off, {warm} (Grid browsers in the Grid runs)");
    let egress = crate::opts::egress(a)?;
    let launch = crate::opts::browser_options(a, &egress).launch;
    let mut rows =
        run_mode(LAUNCH, BrowserSource::Launch(launch.clone()), &site_url, &sizes, rounds, None, warm).await?;
    let mut floors = Vec::with_capacity(sizes.len());
    for &n in &sizes {
        let f = start_floor(&launch, &format!("{site_url}/form.html"), n).await?;
        eprintln!("  Chromium alone (raw CDP) {n:>3} starts: p50 {:.0} ms", f.p50.as_secs_f64() * 1e3);
        floors.push(f);
    }
    let live = live_rows(BrowserSource::Launch(launch), &site_url).await?;
    let peer_rows = peer_rows(a, &site_url, &sizes, rounds).await;
    rows.extend(peer_rows);
    let root = std::env::current_dir()?;
    let grid = LocalGrid::find_jar(&root).and_then(|jar| {
        eprintln!("bench serve: starting a local Selenium Grid");
        LocalGrid::start(&jar, sizes.iter().copied().max().unwrap_or(1), Duration::from_secs(300))
    });
    match grid {
        Ok(g) => {
            let source = BrowserSource::Grid(GridConfig {
                url: g.url.clone(),
                chrome_binary: Some("/usr/bin/chromium".into()),
                wait: Duration::from_secs(300),
                timeout: Duration::from_secs(300),
            });
            rows.extend(run_mode(GRID, source, &site_url, &sizes, rounds, Some(g.process_group()), warm).await?);
        }
        Err(e) => eprintln!("bench serve: the Grid runs are skipped: {e}"),
    }
    print_table(&rows);
    print_floor(&floors, &rows);
    print_live(&live);
    let broken = rows.iter().any(|r| r.side != serve_peer::SIDE && r.isolated != r.sessions);
    Ok(if broken { 1 } else { 0 })
}

/// Playwright MCP at each size, or nothing (and why) when it is left out.
async fn peer_rows(a: &Opts, site: &str, sizes: &[usize], rounds: usize) -> Vec<Row> {
    if a.no_peers {
        eprintln!("bench serve: {} left out (--no-peers)", serve_peer::SIDE);
        return Vec::new();
    }
    let ready = serve_peer::peer().and_then(|(peer, version)| {
        let setup = peers::Setup {
            chrome: sightline_cdp::find_chromium(a.chrome.as_deref())?,
            viewport: crate::opts::tab_options(a)?.viewport,
        };
        Ok((peer, version, setup))
    });
    match ready {
        Ok((peer, version, setup)) => {
            eprintln!(
                "bench serve: {} {version}, one stdio server and headless Chromium per session",
                serve_peer::SIDE
            );
            serve_peer::run(peer, &setup, site, sizes, rounds).await
        }
        Err(e) => {
            eprintln!("bench serve: {} left out: {e:#}", serve_peer::SIDE);
            Vec::new()
        }
    }
}

fn print_table(rows: &[Row]) {
    println!("| side | sessions | requests | failed | requests/s | p50 ms | p99 ms | session start p50 ms | memory per session | isolated |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0} MB | {}/{} |",
            r.side,
            r.sessions,
            r.actions,
            r.failed,
            throughput(r),
            percentile(&r.latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&r.latencies, 0.99).as_secs_f64() * 1e3,
            r.start_p50.as_secs_f64() * 1e3,
            r.mem_per_session_mb,
            r.isolated,
            r.sessions,
        );
    }
    let ratios: Vec<String> = rows
        .iter()
        .filter(|ours| ours.side == LAUNCH)
        .filter_map(|ours| {
            let peer = rows.iter().find(|p| p.side == serve_peer::SIDE && p.sessions == ours.sessions)?;
            Some(format!(
                "{} session{}: {:.2}x the requests/s, {:.2}x the memory per session",
                ours.sessions,
                if ours.sessions == 1 { "" } else { "s" },
                throughput(ours) / throughput(peer),
                ours.mem_per_session_mb / peer.mem_per_session_mb,
            ))
        })
        .collect();
    if !ratios.is_empty() {
        println!("\nsightline (launched browsers) to {}: {}.", serve_peer::SIDE, ratios.join("; "));
    }
    println!(
        "Memory per session: ours is PSS of this process and its browsers with N sessions open minus the same before \
         the server started (so it counts the shared browser and the server), over N; {}'s is PSS of all its N \
         servers' processes (node, Chromium and helpers), over N.",
        serve_peer::SIDE
    );
}

fn throughput(r: &Row) -> f64 {
    r.actions as f64 / r.wall.as_secs_f64()
}
