//! The live view under watch: frames per second per stream and the CPU a watched session adds.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::json;
use sightline_server::BrowserSource;

use super::{agent, call, start_server};

/// Sessions watched at once in the live-view run, and how long each phase lasts.
pub(super) const WATCHED: [usize; 2] = [1, 4];
pub(super) const WATCH_FOR: Duration = Duration::from_secs(10);

/// The live view under watch: N sessions on a page that paints all the time.
pub struct LiveRow {
    pub watched: usize,
    /// Frames each stream received per second (mean over the streams).
    pub fps: f64,
    /// CPU of this process (the server, and the threads reading the streams) and its
    /// browser, as a share of one core: with nobody watching, then watched.
    pub cpu_idle: f64,
    pub cpu_watched: f64,
}

/// CPU time (clock ticks: utime + stime) of `root` and all its descendants, from /proc.
pub(super) fn tree_cpu_ticks(root: i32) -> u64 {
    let mut parent_of: HashMap<i32, i32> = HashMap::new();
    let mut ticks: HashMap<i32, u64> = HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the command: state, ppid, … utime (12th), stime (13th).
        let (Some(ppid), Some(u), Some(s)) = (f.get(1), f.get(11), f.get(12)) else { continue };
        let (Ok(ppid), Ok(u), Ok(s)) = (ppid.parse::<i32>(), u.parse::<u64>(), s.parse::<u64>()) else { continue };
        parent_of.insert(pid, ppid);
        ticks.insert(pid, u + s);
    }
    let mut total = ticks.get(&root).copied().unwrap_or(0);
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for (pid, ppid) in &parent_of {
            if *ppid == p {
                total += ticks.get(pid).copied().unwrap_or(0);
                stack.push(*pid);
            }
        }
    }
    total
}

/// Share of one core used by this process tree during `f` (Linux's USER_HZ is 100).
pub(super) fn cpu_during<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let me = std::process::id() as i32;
    let (t0, c0) = (Instant::now(), tree_cpu_ticks(me));
    let out = f();
    let (t1, c1) = (Instant::now(), tree_cpu_ticks(me));
    (out, c1.saturating_sub(c0) as f64 / 100.0 / (t1 - t0).as_secs_f64())
}

/// Read `url`'s server-sent frames for `secs`; the number of frames.
pub(super) fn count_frames(url: &str, until: Instant) -> Result<usize> {
    use std::io::BufRead;
    let resp = agent().get(url).call()?;
    let mut frames = 0;
    let mut lines = std::io::BufReader::new(resp.into_body().into_reader()).lines();
    while Instant::now() < until {
        match lines.next() {
            Some(Ok(l)) if l.starts_with("data:") => frames += 1,
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    Ok(frames)
}

/// The live view's frame rate and added CPU per watched session: for each size in
/// [`WATCHED`], that many sessions on [`BUSY`], first unwatched for [`WATCH_FOR`], then
/// each watched by one frame stream (`GET /live/{id}/frames`) for as long.
pub(super) async fn live_rows(source: BrowserSource, site: &str) -> Result<Vec<LiveRow>> {
    let max = WATCHED.iter().copied().max().unwrap_or(1);
    let (base, stop, done) = start_server(source, max, super::Warm::Fixed(0)).await?;
    let site = site.to_string();
    let rows = tokio::task::spawn_blocking(move || -> Result<Vec<LiveRow>> {
        let agent = agent();
        let mut rows = Vec::new();
        for n in WATCHED {
            let mut ids = Vec::new();
            for _ in 0..n {
                let body = json!({ "url": format!("{site}/busy.html"), "screenshot": false });
                let (status, v) = call(&agent, "POST", &format!("{base}/v1/sessions"), Some(body))?;
                if status != 201 {
                    bail!("creating a session: {status} {v}");
                }
                ids.push(v["session_id"].as_str().unwrap_or_default().to_string());
            }
            std::thread::sleep(Duration::from_secs(1));
            let ((), cpu_idle) = cpu_during(|| std::thread::sleep(WATCH_FOR));
            let (counts, cpu_watched) = cpu_during(|| {
                let until = Instant::now() + WATCH_FOR;
                let readers: Vec<_> = ids
                    .iter()
                    .map(|id| {
                        let url = format!("{base}/live/{id}/frames");
                        std::thread::spawn(move || count_frames(&url, until))
                    })
                    .collect();
                readers
                    .into_iter()
                    .map(|r| r.join().map_err(|_| anyhow::anyhow!("a reader panicked"))?)
                    .collect::<Result<Vec<usize>>>()
            });
            let counts = counts?;
            let fps = counts.iter().sum::<usize>() as f64 / n as f64 / WATCH_FOR.as_secs_f64();
            eprintln!("  live view, {n} watched: {fps:.1} frames/s each, CPU {cpu_idle:.2} → {cpu_watched:.2} cores");
            rows.push(LiveRow { watched: n, fps, cpu_idle, cpu_watched });
            for id in ids {
                call(&agent, "DELETE", &format!("{base}/v1/sessions/{id}"), None)?;
            }
        }
        Ok(rows)
    })
    .await??;
    let _ = stop.send(());
    let _ = done.await;
    Ok(rows)
}

pub(super) fn print_live(rows: &[LiveRow]) {
    println!("
| watched sessions | frames/s per stream | CPU unwatched (cores) | CPU watched (cores) | added CPU per watched session |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {:.1} | {:.2} | {:.2} | {:.0}% of a core |",
            r.watched,
            r.fps,
            r.cpu_idle,
            r.cpu_watched,
            (r.cpu_watched - r.cpu_idle) / r.watched as f64 * 100.0
        );
    }
    println!(
        "Live view: each session on a page that repaints every animation frame; CPU is this process (the server and \
         the stream readers, which only count lines) and its Chromium from /proc (utime + stime), {} s unwatched \
         then {} s with one frame stream per session.",
        WATCH_FOR.as_secs(),
        WATCH_FOR.as_secs()
    );
}
