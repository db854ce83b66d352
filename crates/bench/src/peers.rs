//! Peers for `sightline-bench`: Playwright MCP's `browser_snapshot` and
//! chrome-devtools-mcp's `take_snapshot`, timed on the same generated pages as
//! the semantic_v2 snapshot.
//!
//! `./x bench` installs both from npm into `target/peers` (pinned versions).
//! For each page, each peer runs as an MCP stdio server (newline-delimited
//! JSON-RPC on its stdin/stdout) with its own Chromium: the same binary as
//! ours, headless, with a fresh profile. The client initializes, calls the
//! peer's navigate tool once, then times one warm-up and `runs` calls of its
//! snapshot tool, as the MCP client sees them (request written → reply read).
//!
//! Everything a peer starts carries `TMPDIR=<its scratch directory>`: its
//! Chromium puts itself in a process group (and its crash handler in a session)
//! of its own, so killing the group we created is not enough. On close the
//! server gets EOF on stdin and a moment to close its browser, then every
//! process still carrying the mark is killed with its group, and the scratch
//! directory (profile, config, stderr log) is removed.
//!
//! `bench serve` drives many Playwright MCP servers at once through [`Server`]:
//! every running server is listed ([`live_processes`] finds their processes,
//! [`kill_all`] ends them when the bench is interrupted).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Where `./x bench` installs the peers (relative to the repository root, where `./x` runs).
pub const PEERS_DIR: &str = "target/peers";

/// The Chromium flags every peer's browser gets, besides its profile: the ones
/// Sightline launches its own with (so both lay pages out alike), without the
/// debugging port and start page, which each peer chooses itself.
fn chrome_flags() -> impl Iterator<Item = &'static str> {
    sightline_cdp::BASE_FLAGS
        .iter()
        .copied()
        .filter(|f| !f.starts_with("--remote-debugging") && !f.starts_with("about:"))
        .chain(["--no-sandbox"])
}

const START_TIMEOUT: Duration = Duration::from_secs(60);
const CALL_TIMEOUT: Duration = Duration::from_secs(180);

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Playwright,
    DevTools,
}

/// One peer MCP server.
pub struct Peer {
    pub kind: Kind,
    pub name: &'static str,
    /// The npm package, under `target/peers/node_modules`.
    pub package: &'static str,
    /// Its stdio MCP server, relative to the package.
    entry: &'static str,
    pub navigate_tool: &'static str,
    pub snapshot_tool: &'static str,
}

pub const PEERS: [Peer; 2] = [
    Peer {
        kind: Kind::Playwright,
        name: "Playwright MCP",
        package: "@playwright/mcp",
        entry: "cli.js",
        navigate_tool: "browser_navigate",
        snapshot_tool: "browser_snapshot",
    },
    Peer {
        kind: Kind::DevTools,
        name: "chrome-devtools-mcp",
        package: "chrome-devtools-mcp",
        entry: "build/src/bin/chrome-devtools-mcp.js",
        navigate_tool: "navigate_page",
        snapshot_tool: "take_snapshot",
    },
];

/// What every peer's browser shares with ours.
pub struct Setup {
    pub chrome: PathBuf,
    pub viewport: (u32, u32),
}

impl Peer {
    fn package_dir(&self) -> PathBuf {
        Path::new(PEERS_DIR).join("node_modules").join(self.package)
    }

    /// The installed version, or why the peer cannot run at all.
    pub fn installed(&self) -> Result<String> {
        let manifest = self.package_dir().join("package.json");
        anyhow::ensure!(manifest.is_file(), "not installed: no {} (`./x bench` installs it)", manifest.display());
        let text = std::fs::read_to_string(&manifest)?;
        let v: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", manifest.display()))?;
        let entry = self.package_dir().join(self.entry);
        anyhow::ensure!(entry.is_file(), "installed, but {} is missing", entry.display());
        Ok(v["version"].as_str().unwrap_or("?").to_string())
    }

    /// The arguments of its navigate tool for `url`.
    pub fn navigate_args(&self, url: &str) -> Value {
        match self.kind {
            Kind::Playwright => json!({ "url": url }),
            Kind::DevTools => json!({ "type": "url", "url": url }),
        }
    }

    /// The command line that starts this peer's stdio server in `scratch`.
    fn command(&self, setup: &Setup, scratch: &Path) -> Result<Command> {
        let profile = scratch.join("profile");
        let crashes = format!("--crash-dumps-dir={}", scratch.join("crashes").display());
        let (w, h) = setup.viewport;
        let mut cmd = Command::new("node");
        cmd.arg(std::path::absolute(self.package_dir().join(self.entry))?);
        match self.kind {
            Kind::Playwright => {
                // Chromium's own switches go through the config file; the CLI has no flag for them.
                let mut args: Vec<String> = chrome_flags().map(str::to_string).collect();
                args.push(crashes);
                let config = json!({
                    "browser": {
                        "browserName": "chromium",
                        "userDataDir": profile,
                        "launchOptions": { "executablePath": setup.chrome, "headless": true, "args": args },
                        "contextOptions": { "viewport": { "width": w, "height": h } },
                    },
                });
                let path = scratch.join("playwright-mcp.json");
                std::fs::write(&path, config.to_string())?;
                cmd.arg("--config").arg(path).arg("--output-dir").arg(scratch.join("out"));
            }
            Kind::DevTools => {
                cmd.arg("--headless")
                    .arg(format!("--executablePath={}", setup.chrome.display()))
                    .arg(format!("--userDataDir={}", profile.display()))
                    .arg(format!("--viewport={w}x{h}"))
                    // One page, no page ids to pass; nothing sent to Google's services.
                    .args(["--no-page-id-routing", "--no-usage-statistics", "--no-performance-crux"])
                    .args(chrome_flags().filter(|f| *f != "--headless").map(|f| format!("--chromeArg={f}")))
                    .arg(format!("--chromeArg={crashes}"));
            }
        }
        cmd.current_dir(scratch)
            .env("TMPDIR", scratch)
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .env("PUPPETEER_SKIP_DOWNLOAD", "1")
            .env("CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS", "1")
            .env("CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS", "1");
        Ok(cmd)
    }
}

/// One peer's snapshot on one page.
pub struct Measured {
    pub median: Duration,
    /// Characters of the tool result's text.
    pub chars: usize,
}

/// Start `peer` on a fresh profile, load `url`, time `runs` snapshot calls (after one warm-up).
pub async fn measure(peer: &Peer, setup: &Setup, url: &str, runs: usize) -> Result<Measured> {
    let mut server = Server::start(peer, setup)?;
    let result = async {
        server.initialize().await?;
        server.call_tool(peer.navigate_tool, peer.navigate_args(url)).await?;
        let mut times = Vec::with_capacity(runs);
        let mut chars = 0;
        for round in 0..=runs {
            let t = Instant::now();
            let text = server.call_tool(peer.snapshot_tool, json!({})).await?;
            let d = t.elapsed();
            chars = text.chars().count();
            if round > 0 {
                times.push(d);
            }
        }
        times.sort();
        Ok(Measured { median: times[times.len() / 2], chars })
    }
    .await;
    let result = result.map_err(|e: anyhow::Error| match server.stderr_tail() {
        Some(tail) => anyhow::anyhow!("{e:#}; its stderr ends: {tail}"),
        None => e,
    });
    server.close().await;
    result
}

/// The scratch directories of the peer servers now running (each marks its processes).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// One tool call's reply.
pub struct Reply {
    /// The text parts of its content, joined by newlines.
    pub text: String,
    /// The tool reported an error (`isError`).
    pub is_error: bool,
}

/// A running peer: the child, its pipes, and the scratch directory that marks its processes.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    scratch: PathBuf,
}

impl Server {
    /// Spawn `peer`'s stdio server in a fresh scratch directory (not yet initialized).
    pub fn start(peer: &Peer, setup: &Setup) -> Result<Server> {
        let scratch = scratch_dir()?;
        let stderr = std::fs::File::create(scratch.join("stderr.log"))?;
        let spawned = peer.command(setup, &scratch).and_then(|mut cmd| {
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(stderr)
                .kill_on_drop(true)
                .process_group(0)
                .spawn()
                .context("cannot run node (is Node.js installed?)")
        });
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&scratch);
                return Err(e);
            }
        };
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().context("stdout is piped")?).lines();
        live().push(scratch.clone());
        Ok(Server { child, stdin, stdout, next_id: 0, scratch })
    }

    /// The MCP handshake, within [`START_TIMEOUT`].
    pub async fn initialize(&mut self) -> Result<()> {
        tokio::time::timeout(START_TIMEOUT, self.handshake())
            .await
            .map_err(|_| anyhow::anyhow!("no reply to initialize within {} s", START_TIMEOUT.as_secs()))?
    }

    async fn handshake(&mut self) -> Result<()> {
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "sightline-bench", "version": env!("CARGO_PKG_VERSION") },
        });
        self.request("initialize", params).await?;
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await
    }

    /// Call a tool; its result's text, or an error if the tool reports one.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Result<String> {
        let reply = self.call(name, arguments).await?;
        if reply.is_error {
            bail!("{name} failed: {}", reply.text.chars().take(300).collect::<String>());
        }
        Ok(reply.text)
    }

    /// Call a tool; its reply, error or not. `Err` only when no reply came
    /// (the server exited, or said nothing within [`CALL_TIMEOUT`]).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<Reply> {
        let call = self.request("tools/call", json!({ "name": name, "arguments": arguments }));
        let result = tokio::time::timeout(CALL_TIMEOUT, call)
            .await
            .map_err(|_| anyhow::anyhow!("{name}: no reply within {} s", CALL_TIMEOUT.as_secs()))??;
        let text: String = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Reply { text, is_error: result["isError"] == true })
    }

    /// Its scratch directory: its working directory, where its output files go.
    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await?;
        loop {
            let Some(line) = self.stdout.next_line().await? else {
                let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
                    Ok(Ok(s)) => s.to_string(),
                    _ => "it closed its stdout".to_string(),
                };
                bail!("{method}: the server exited ({status})");
            };
            let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
            if msg.get("method").is_some() {
                // A request from the server (ping, …) gets an empty result; notifications are ignored.
                if let Some(req) = msg.get("id") {
                    self.send(&json!({ "jsonrpc": "2.0", "id": req, "result": {} })).await?;
                }
                continue;
            }
            if msg["id"] != id {
                continue;
            }
            if let Some(e) = msg.get("error") {
                bail!("{method}: {e}");
            }
            return Ok(msg["result"].clone());
        }
    }

    async fn send(&mut self, msg: &Value) -> Result<()> {
        let stdin = self.stdin.as_mut().context("stdin already closed")?;
        stdin.write_all(format!("{msg}\n").as_bytes()).await?;
        stdin.flush().await?;
        Ok(())
    }

    /// The last few lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.scratch.join("stderr.log")).ok()?;
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        (!lines.is_empty()).then(|| lines[lines.len().saturating_sub(4)..].join(" | "))
    }

    /// EOF on stdin (both servers then close their browser and exit), a moment
    /// to do so, then `Drop` kills what is left and removes the scratch directory.
    pub async fn close(mut self) {
        self.stdin = None;
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            kill(&[format!("-{pid}")]);
        }
        live().retain(|d| d != &self.scratch);
        end_marked(&self.scratch);
        let _ = self.child.try_wait();
    }
}

/// Kill every process that carries `scratch`'s mark, with its group, then remove the directory.
fn end_marked(scratch: &Path) {
    let own_group = stat_field(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default(), 2);
    for _ in 0..50 {
        let mut targets = Vec::new();
        for (pid, group) in marked(&[scratch]) {
            targets.push(pid.to_string());
            if group > 1 && Some(group) != own_group {
                targets.push(format!("-{group}"));
            }
        }
        if targets.is_empty() {
            break;
        }
        kill(&targets);
        std::thread::sleep(Duration::from_millis(100));
    }
    for _ in 0..40 {
        if std::fs::remove_dir_all(scratch).is_ok() || !scratch.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The processes of every peer server now running (each server, its browser and their helpers).
pub fn live_processes() -> Vec<i64> {
    let dirs = live().clone();
    let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    marked(&dirs).into_iter().map(|(pid, _)| pid).collect()
}

/// Kill every peer server now running and everything it started, and remove
/// their scratch directories (an interrupted bench; their `Server`s may never be dropped).
pub fn kill_all() -> usize {
    let all = std::mem::take(&mut *live());
    for scratch in &all {
        end_marked(scratch);
    }
    all.len()
}

/// SIGKILL to pids and (as `-pgid`) process groups, all ours, through kill(1).
fn kill(targets: &[String]) {
    let _ = std::process::Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .args(targets)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The `i`th field after the command name of a `/proc/PID/stat` line (0 is the state).
fn stat_field(stat: &str, i: usize) -> Option<i64> {
    stat.rsplit_once(") ")?.1.split(' ').nth(i)?.parse().ok()
}

/// Live processes marked by one of `scratches` (`TMPDIR=<scratch>` in their
/// environment), with their process groups.
fn marked(scratches: &[&Path]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    if scratches.is_empty() {
        return out;
    }
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i64>() else { continue };
        let Ok(env) = std::fs::read(e.path().join("environ")) else { continue };
        let Some(tmpdir) = env.split(|b| *b == 0).find_map(|v| v.strip_prefix(b"TMPDIR=".as_slice())) else {
            continue;
        };
        if !scratches.iter().any(|s| s.as_os_str().as_encoded_bytes() == tmpdir) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        out.push((pid, stat_field(&stat, 2).unwrap_or(0)));
    }
    out
}

fn scratch_dir() -> Result<PathBuf> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("sightline-peer-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
