//! `bench serve`'s other side: Playwright MCP as its users run it, one stdio
//! server with its own headless Chromium per session, doing the work one
//! `sightline serve` client does ([`crate::serve`]), in the same run.
//!
//! For N sessions, N servers start together ([`peers::Server`]: the Chromium
//! binary and flags the suite's peers get, a scratch directory each). Session
//! start is spawn + initialize + `browser_navigate` to the form page, as the
//! client sees it. When every session is open, each runs the rounds:
//! `browser_type` into the Name field and `browser_click` on the Gift wrap
//! checkbox (our element 1 and 2), with the refs of its last snapshot,
//! `browser_press_key` PageDown and PageUp (Playwright MCP's default tools have
//! no scroll; `browser_mouse_wheel` needs `--caps vision`), `browser_snapshot`.
//! Each call is timed as the client sees it (request written → reply read).
//!
//! The first round's refs come from the snapshot `browser_navigate` wrote to
//! its output directory (its reply links the file); later rounds use the
//! round's own `browser_snapshot`.
//!
//! Memory per session: PSS of every process of the N servers (node, its
//! Chromium and the helpers, found by their scratch-directory mark), at the two
//! moments ours is read (all sessions open; all rounds done), the larger,
//! divided by N. Nothing runs before, so there is no baseline to subtract.
//! Then isolation as ours: its own typed value, its own cookie (`jar.html`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};
use tokio::sync::Barrier;

use crate::peers::{self, Kind, Peer, Server, Setup, PEERS};
use crate::serve::{pss_kb, Row};

/// The `side` of its rows.
pub const SIDE: &str = "Playwright MCP";

/// The peer this side runs, or why it cannot (not installed).
pub fn peer() -> Result<(&'static Peer, String)> {
    let peer = PEERS.iter().find(|p| p.kind == Kind::Playwright).context("no Playwright MCP among the peers")?;
    Ok((peer, peer.installed()?))
}

/// One row per size in `sizes`; a size that fails is reported and left out.
pub async fn run(peer: &Peer, setup: &Setup, site: &str, sizes: &[usize], rounds: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for &n in sizes {
        match one_size(peer, setup, site, n, rounds).await {
            Ok(row) => {
                eprintln!("  {SIDE} {n:>3} sessions: {:.1} requests/s", row.actions as f64 / row.wall.as_secs_f64());
                rows.push(row);
            }
            Err(e) => eprintln!("  {SIDE} {n:>3} sessions: left out: {e:#}"),
        }
    }
    rows
}

/// What the client and the measuring side wait for together, as in `serve::one_size`:
/// `ready` when every session is open (then when every one is done), `measured` once memory is read.
struct Gates {
    ready: Barrier,
    measured: Barrier,
}

impl Gates {
    async fn pass(&self) {
        self.ready.wait().await;
        self.measured.wait().await;
    }
}

/// One session's account.
#[derive(Default)]
struct Outcome {
    start: Option<Duration>,
    latencies: Vec<Duration>,
    failed: usize,
    isolated: bool,
}

async fn one_size(peer: &Peer, setup: &Setup, site: &str, n: usize, rounds: usize) -> Result<Row> {
    anyhow::ensure!(n > 0, "no sessions");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let gates = Gates { ready: Barrier::new(n + 1), measured: Barrier::new(n + 1) };
    // All sessions and the measuring side in this one task: dropping it (Ctrl-C) drops every server.
    let sessions = futures_util::future::join_all((0..n).map(|i| session(peer, setup, site, i, rounds, &gates)));
    let measuring = async {
        gates.ready.wait().await;
        let started = Instant::now();
        let open = memory_kb();
        gates.measured.wait().await;
        gates.ready.wait().await;
        let wall = started.elapsed();
        let after = memory_kb();
        gates.measured.wait().await;
        (wall, open.max(after))
    };
    let (outcomes, (wall, peak)) = tokio::join!(sessions, measuring);
    let mut latencies = Vec::new();
    let mut starts = Vec::new();
    let (mut failed, mut isolated) = (0, 0);
    for o in outcomes {
        starts.extend(o.start);
        latencies.extend(o.latencies);
        failed += o.failed;
        isolated += o.isolated as usize;
    }
    anyhow::ensure!(!starts.is_empty(), "no session started");
    latencies.sort();
    starts.sort();
    Ok(Row {
        side: SIDE,
        sessions: n,
        actions: latencies.len(),
        failed,
        wall,
        start_p50: crate::serve::percentile(&starts, 0.5),
        latencies,
        mem_per_session_mb: peak as f64 / 1024.0 / n as f64,
        isolated,
    })
}

/// PSS (kB) of every process of every peer server now running.
fn memory_kb() -> u64 {
    peers::live_processes().into_iter().map(pss_kb).sum()
}

/// One client: open, rounds, isolation, close. Every path passes both gates twice,
/// so one failing session cannot hang the others.
async fn session(peer: &Peer, setup: &Setup, site: &str, i: usize, rounds: usize, gates: &Gates) -> Outcome {
    let mut out = Outcome::default();
    let t = Instant::now();
    let opened = open(peer, setup, site).await;
    let start = t.elapsed();
    gates.pass().await;
    let (mut server, first) = match opened {
        Ok(s) => s,
        Err(e) => {
            eprintln!("  {SIDE} session {i}: could not start: {e:#}");
            gates.pass().await;
            return out;
        }
    };
    out.start = Some(start);
    let worked = work(&mut server, i, rounds, first, &mut out).await;
    gates.pass().await;
    let checked = match worked {
        Ok(()) => isolation(&mut server, site, i, rounds).await,
        Err(e) => Err(e),
    };
    match checked {
        Ok(isolated) => out.isolated = isolated,
        Err(e) => eprintln!("  {SIDE} session {i}: {}", with_stderr(e, &server)),
    }
    server.close().await;
    out
}

/// Spawn, initialize, navigate to the form: the server and the snapshot its navigation wrote.
async fn open(peer: &Peer, setup: &Setup, site: &str) -> Result<(Server, String)> {
    let mut server = Server::start(peer, setup)?;
    let opened = async {
        server.initialize().await?;
        let reply = server.call_tool("browser_navigate", json!({ "url": format!("{site}/form.html") })).await?;
        snapshot_in(&reply, server.scratch()).context("browser_navigate's reply has no snapshot")
    }
    .await;
    match opened {
        Ok(snapshot) => Ok((server, snapshot)),
        Err(e) => Err(with_stderr(e, &server)),
    }
}

/// The rounds, as ours: type, click, scroll down, scroll up, read. A call that
/// gets no reply at all (the server died or hung) ends the session.
async fn work(server: &mut Server, i: usize, rounds: usize, mut snapshot: String, out: &mut Outcome) -> Result<()> {
    for r in 0..rounds {
        let name = ref_of(&snapshot, "textbox", "Name").context("no Name textbox in its last snapshot")?;
        let tick = ref_of(&snapshot, "checkbox", "Gift wrap").context("no Gift wrap checkbox in its last snapshot")?;
        let steps: [(&str, Value); 5] = [
            ("browser_type", json!({ "element": "Name", "target": name, "text": format!("session {i} round {r}") })),
            ("browser_click", json!({ "element": "Gift wrap", "target": tick })),
            ("browser_press_key", json!({ "key": "PageDown" })),
            ("browser_press_key", json!({ "key": "PageUp" })),
            ("browser_snapshot", json!({})),
        ];
        for (tool, args) in steps {
            let t = Instant::now();
            let reply = server.call(tool, args).await;
            out.latencies.push(t.elapsed());
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    out.failed += 1;
                    return Err(e);
                }
            };
            if reply.is_error {
                out.failed += 1;
            } else if tool == "browser_snapshot" {
                snapshot = snapshot_in(&reply.text, server.scratch()).context("browser_snapshot returned none")?;
            }
        }
    }
    Ok(())
}

/// Its own typed value, then its own cookie, nobody else's.
async fn isolation(server: &mut Server, site: &str, i: usize, rounds: usize) -> Result<bool> {
    let reply = server.call_tool("browser_snapshot", json!({})).await?;
    let form = snapshot_in(&reply, server.scratch()).context("browser_snapshot returned none")?;
    let own_value = textbox_value(&form, "Name") == Some(format!("session {i} round {}", rounds - 1));
    server.call_tool("browser_navigate", json!({ "url": format!("{site}/jar.html?s{i}") })).await?;
    server.call_tool("browser_navigate", json!({ "url": format!("{site}/jar.html") })).await?;
    let reply = server.call_tool("browser_snapshot", json!({})).await?;
    let jar = snapshot_in(&reply, server.scratch()).context("browser_snapshot returned none")?;
    Ok(own_value && jar.contains(&format!("cookie=[who=s{i}]")))
}

fn with_stderr(e: anyhow::Error, server: &Server) -> anyhow::Error {
    match server.stderr_tail() {
        Some(tail) => anyhow::anyhow!("{e:#}; its stderr ends: {tail}"),
        None => e,
    }
}

/// The aria snapshot in a tool reply: inline (a `yaml` block after `### Snapshot`),
/// or in the file its `[Snapshot](PATH)` link names, relative to the server's directory `dir`.
fn snapshot_in(reply: &str, dir: &Path) -> Option<String> {
    let section = &reply[reply.find("### Snapshot")?..];
    if let Some(start) = section.find("```yaml\n") {
        let body = &section[start + "```yaml\n".len()..];
        return Some(body[..body.find("```").unwrap_or(body.len())].to_string());
    }
    let link = &section[section.find("[Snapshot](")? + "[Snapshot](".len()..];
    let path = &link[..link.find(')')?];
    std::fs::read_to_string(dir.join(path)).ok()
}

/// The line `- ROLE "NAME" … [ref=REF] …` of an aria snapshot, trimmed.
fn line_of<'a>(snapshot: &'a str, role: &str, name: &str) -> Option<&'a str> {
    let head = format!("- {role} \"{name}\"");
    snapshot.lines().map(str::trim_start).find(|l| l.starts_with(&head) && l.contains("[ref="))
}

/// The ref of element ROLE "NAME", to pass as a tool's `target`.
fn ref_of(snapshot: &str, role: &str, name: &str) -> Option<String> {
    let rest = line_of(snapshot, role, name)?.split("[ref=").nth(1)?;
    Some(rest[..rest.find(']')?].to_string())
}

/// The value the snapshot shows for textbox NAME (`- textbox "NAME" [ref=e4]: VALUE`).
fn textbox_value(snapshot: &str, name: &str) -> Option<String> {
    let line = line_of(snapshot, "textbox", name)?;
    let value = line[line.rfind("]: ")? + 3..].trim();
    let unquoted = value.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
    Some(unquoted.unwrap_or(value).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAPSHOT: &str = r#"- generic [active] [ref=e1]:
  - heading "Order" [level=1] [ref=e2]
  - generic [ref=e3]:
    - textbox "Name" [ref=e4]: session 3 round 1
    - checkbox "Gift wrap" [checked] [ref=e5]
    - button "Save" [ref=e7]
"#;

    #[test]
    fn refs_and_values_come_from_the_snapshot_lines() {
        assert_eq!(ref_of(SNAPSHOT, "textbox", "Name").as_deref(), Some("e4"));
        assert_eq!(ref_of(SNAPSHOT, "checkbox", "Gift wrap").as_deref(), Some("e5"));
        assert_eq!(ref_of(SNAPSHOT, "button", "Missing"), None);
        assert_eq!(textbox_value(SNAPSHOT, "Name").as_deref(), Some("session 3 round 1"));
        let empty = "- textbox \"Name\" [ref=e4]\n";
        assert_eq!(textbox_value(empty, "Name"), None);
    }

    #[test]
    fn a_snapshot_is_read_inline_or_from_the_linked_file() {
        let inline = format!("### Page\n- Page URL: x\n### Snapshot\n```yaml\n{SNAPSHOT}```\n");
        assert_eq!(snapshot_in(&inline, Path::new("/nonexistent")).as_deref(), Some(SNAPSHOT));
        let dir = std::env::temp_dir().join(format!("sightline-bench-snapshot-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("out")).unwrap();
        std::fs::write(dir.join("out/page.yml"), SNAPSHOT).unwrap();
        let linked = "### Page\n- Page URL: x\n### Snapshot\n- [Snapshot](out/page.yml)\n### Events\n";
        let read = snapshot_in(linked, &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read.as_deref(), Some(SNAPSHOT));
        assert_eq!(snapshot_in("### Page\n- Page URL: x\n", &dir), None);
    }
}
