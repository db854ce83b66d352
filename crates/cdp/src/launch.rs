//! Finding, starting and attaching to Chromium.
//!
//! A launched browser runs in its own process group with a fresh profile
//! directory. Dropping [`Chromium`] kills the whole group and removes the
//! profile, so no process outlives us on EOF, error, Ctrl-C (the binary turns
//! the signal into a normal return) or panic (unwinding drops it). On Linux the
//! browser also gets `PR_SET_PDEATHSIG`, which covers a `kill -9` of our process.
//!
//! Nothing is left behind on any exit path: Chromium's temporary files go to a
//! `TMPDIR` of the launch's own, inside the profile (removed with it), or, when
//! that path is too long for the unix socket Chromium puts there, a short
//! directory of the same name in `/tmp` removed with it (see [`chrome_tmpdir`]);
//! every launched browser is
//! also in a process-wide registry that [`kill_launched`] empties, for exit
//! paths that skip `Drop` (the binary calls it last); and a launch first sweeps
//! the profiles of earlier runs whose process is gone (a `kill -9` leaves its
//! profile, and helpers that outlived it), see [`sweep_dead_profiles`].

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use crate::{CdpError, Client};

/// How to start Chromium.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    /// Explicit binary; otherwise `SIGHTLINE_CHROME`, then `PATH`.
    pub chrome: Option<PathBuf>,
    /// Extra command-line switches (for example `--site-per-process`).
    pub extra_args: Vec<String>,
    /// A persistent profile (`--profile DIR`) instead of a fresh one: kept at
    /// exit, and refused while another Chromium holds it (see [`crate::check_profile_free`]).
    pub profile: Option<PathBuf>,
}

/// The flags every launch uses: headless, quiet on the network, no first-run UI.
/// The sandbox stays on unless [`needs_no_sandbox`] says otherwise.
///
/// `WebUIOmniboxPopup` and `WebUIOmniboxAimPopup` are off: headless Chromium
/// gives every browser context a window, and with them each window loads two
/// omnibox popup pages (`chrome://omnibox-popup.top-chrome/`) in a renderer of
/// their own, about three quarters of the CPU a new context costs, for a popup
/// nothing ever shows. `SpareRendererForSitePerProcess` is off: Chromium keeps
/// one renderer started ahead for the context that last navigated, so with many
/// contexts (`serve`) nearly every navigation started a renderer that the next
/// one in another context threw away (about a third of a page load's CPU there);
/// a cross-site navigation now starts its renderer while its request is in flight.
pub const BASE_FLAGS: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,MediaRouter,OptimizationHints,WebUIOmniboxPopup,WebUIOmniboxAimPopup,SpareRendererForSitePerProcess",
    "--disable-smooth-scrolling",
    "--hide-scrollbars",
    "--mute-audio",
    "--password-store=basic",
    "--use-mock-keychain",
    "--remote-debugging-port=0",
    "about:blank",
];

/// Whether to pass `--no-sandbox`: only when running as root (Chromium refuses
/// to start its sandbox as root) and the caller did not already pass it (the
/// binary's `--no-chrome-sandbox` does, for hosts without user namespaces).
pub fn needs_no_sandbox(is_root: bool, extra_args: &[String]) -> bool {
    is_root && !extra_args.iter().any(|a| a == "--no-sandbox")
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Locate a Chromium binary: the explicit path, `SIGHTLINE_CHROME`, then
/// `chromium`, `chromium-browser`, `google-chrome` on `PATH`.
pub fn find_chromium(explicit: Option<&Path>) -> Result<PathBuf, CdpError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(CdpError::ChromiumNotFound { searched: format!("--chrome {} does not exist", p.display()) })
        };
    }
    if let Some(p) = std::env::var_os("SIGHTLINE_CHROME").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(CdpError::ChromiumNotFound { searched: format!("SIGHTLINE_CHROME={} does not exist", p.display()) })
        };
    }
    let names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in names {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(CdpError::ChromiumNotFound { searched: format!("looked for {} on PATH", names.join(", ")) })
}

/// A browser process we started (or, with `connect`, one we only attached to).
pub struct Chromium {
    client: Client,
    child: Option<Child>,
    /// The user data dir (fresh, or the operator's `--profile`).
    profile: Option<PathBuf>,
    /// Our temporary directories, removed at close: the fresh profile itself
    /// (or, beside a persistent one, the temporary and crash files), and
    /// Chromium's `TMPDIR` when it could not be inside.
    scratch: Vec<PathBuf>,
    persistent: bool,
}

impl Chromium {
    /// Start a fresh headless Chromium with a temporary profile.
    pub async fn launch(opts: &LaunchOptions) -> Result<Chromium, CdpError> {
        let binary = find_chromium(opts.chrome.as_deref())?;
        if let Some(dir) = &opts.profile {
            std::fs::create_dir_all(dir)?;
            crate::check_profile_free(dir)?;
        }
        let _ = tokio::task::spawn_blocking(sweep_dead_profiles).await;
        let scratch = fresh_profile_dir()?;
        let profile = opts.profile.clone().unwrap_or_else(|| scratch.clone());
        // Chromium's own temporary files (`org.chromium.Chromium.*`) go to a directory
        // of this launch's own, removed with it.
        let (tmp, outside) = match chrome_tmpdir(&scratch) {
            Ok(t) => t,
            Err(e) => {
                remove_profile(&scratch);
                return Err(e.into());
            }
        };
        let scratch: Vec<PathBuf> = std::iter::once(scratch).chain(outside).collect();
        let mut cmd = Command::new(&binary);
        cmd.env("TMPDIR", &tmp);
        cmd.args(BASE_FLAGS.iter().filter(|f| **f != "about:blank"))
            .args(&opts.extra_args)
            .args(needs_no_sandbox(running_as_root(), &opts.extra_args).then_some("--no-sandbox"))
            .arg(format!("--user-data-dir={}", profile.display()))
            // Crash reports stay inside the throwaway profile, not under ~/.config.
            .arg(format!("--crash-dumps-dir={}", scratch[0].join("crashes").display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        #[cfg(target_os = "linux")]
        unsafe {
            // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                scratch.iter().for_each(|d| remove_profile(d));
                return Err(CdpError::Spawn { binary: binary.to_path_buf(), source: e });
            }
        };
        if let Some(pid) = child.id() {
            LAUNCHED.lock().unwrap_or_else(|e| e.into_inner()).push((pid as i32, scratch.clone()));
        }
        let mut chromium = Chromium {
            client: dummy_client_placeholder(),
            child: None,
            profile: Some(profile),
            scratch,
            persistent: opts.profile.is_some(),
        };
        let stderr = child.stderr.take().expect("stderr is piped");
        chromium.child = Some(child);
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = Vec::new();
        let ws = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return Some(url.trim().to_string());
                }
                if seen.len() < 20 {
                    seen.push(line);
                }
            }
            None
        })
        .await;
        let ws = match ws {
            Ok(Some(ws)) => ws,
            Ok(None) => {
                return Err(CdpError::LaunchFailed { detail: format!("it exited; stderr: {}", seen.join(" | ")) })
            }
            Err(_) => return Err(CdpError::LaunchFailed { detail: "no DevTools endpoint within 30 s".into() }),
        };
        // Keep draining stderr so Chromium never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        chromium.client = Client::connect(&ws).await?;
        Ok(chromium)
    }

    /// Attach to a running browser (`ws://…` or `http://host:port`). We never
    /// close a browser we did not start.
    pub async fn connect(endpoint: &str) -> Result<Chromium, CdpError> {
        let ws = resolve_endpoint(endpoint).await?;
        Ok(Chromium {
            client: Client::connect(&ws).await?,
            child: None,
            profile: None,
            scratch: Vec::new(),
            persistent: false,
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The profile directory of a launched browser (temporary unless [`Chromium::persistent_profile`]).
    pub fn profile_dir(&self) -> Option<&Path> {
        self.profile.as_deref()
    }

    /// Whether it runs with the operator's `--profile` (kept at exit).
    pub fn persistent_profile(&self) -> bool {
        self.persistent
    }

    /// The process group id of a launched browser (for last-resort cleanup hooks).
    pub fn process_group(&self) -> Option<i32> {
        self.child.as_ref().and_then(|c| c.id()).map(|p| p as i32)
    }

    /// Kill the browser (if we started it) and remove its temporary profile.
    /// A persistent profile's browser is first asked to close (so it writes
    /// its cookies out), for up to 10 s.
    pub async fn close(mut self) {
        if let Some(child) = self.child.as_mut().filter(|_| self.persistent) {
            let asked = tokio::time::timeout(
                Duration::from_secs(10),
                self.client.execute(None, &crate::protocol::browser::Close {}),
            );
            if matches!(asked.await, Ok(Ok(_)) | Ok(Err(CdpError::Disconnected))) {
                let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
            }
        }
        if let Some(mut child) = self.child.take() {
            let group = kill_group(&child);
            forget_launched(group);
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
            if let Some(g) = group {
                let _ = tokio::task::spawn_blocking(move || wait_group_gone(g)).await;
            }
        }
        let scratch = std::mem::take(&mut self.scratch);
        if !scratch.is_empty() {
            let _ = tokio::task::spawn_blocking(move || scratch.iter().for_each(|d| remove_profile(d))).await;
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let group = kill_group(&child);
            forget_launched(group);
            if let Some(g) = group {
                // Reap the main process, then wait for its helpers.
                let _ = child.try_wait();
                wait_group_gone(g);
            }
        }
        for d in std::mem::take(&mut self.scratch) {
            remove_profile(&d);
        }
    }
}

/// Remove a profile directory; the killed browser's helpers may still be
/// writing into it for a moment, so try for up to two seconds.
fn remove_profile(p: &Path) {
    for _ in 0..80 {
        if std::fs::remove_dir_all(p).is_ok() || !p.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// SIGKILL the browser's process group; returns the group id.
fn kill_group(child: &Child) -> Option<i32> {
    let pid = child.id()? as i32;
    // SAFETY: plain syscall on a process group we created.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    Some(pid)
}

/// Wait (up to 3 s) until no process of the group is left. Zombies of our own
/// child count as alive until reaped, so reap as we go.
fn wait_group_gone(group: i32) {
    for _ in 0..300 {
        // SAFETY: waitpid on our own child (non-blocking) and a signal-0 probe of the group.
        let gone = unsafe {
            libc::waitpid(group, std::ptr::null_mut(), libc::WNOHANG);
            libc::kill(-group, 0) == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        };
        if gone {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Browsers launched by this process and not yet closed: (process group, temporary directories).
static LAUNCHED: Mutex<Vec<(i32, Vec<PathBuf>)>> = Mutex::new(Vec::new());

fn forget_launched(group: Option<i32>) {
    if let Some(g) = group {
        LAUNCHED.lock().unwrap_or_else(|e| e.into_inner()).retain(|(p, _)| *p != g);
    }
}

/// Kill every browser this process launched and has not closed, and remove
/// their profiles. For exit paths that skip `Drop` (a signal that ends the
/// process while a blocking thread still holds a browser); the binary calls it
/// as the last thing it does. Returns how many there were.
pub fn kill_launched() -> usize {
    let all = std::mem::take(&mut *LAUNCHED.lock().unwrap_or_else(|e| e.into_inner()));
    for (group, _) in &all {
        // SAFETY: kill(2) on a process group we created.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    for (group, dirs) in &all {
        wait_group_gone(*group);
        dirs.iter().for_each(|d| remove_profile(d));
    }
    all.len()
}

/// The longest TMPDIR we give Chromium: it adds `/org.chromium.Chromium.XXXXXX/SingletonSocket`
/// (45 bytes) for a unix socket, whose path is at most 107 bytes (longer, Chromium
/// does not start).
const CHROME_TMPDIR_MAX: usize = 60;

/// Where Chromium's `TMPDIR` goes when the one inside the profile would be too
/// long ([`CHROME_TMPDIR_MAX`]): a short, world-writable directory.
const SHORT_TMP_BASE: &str = "/tmp";

/// The prefix of every profile directory: `sightline-profile-PID-…` in the temp dir.
const PROFILE_PREFIX: &str = "sightline-profile-";

/// Chromium's `TMPDIR` for the launch whose scratch directory is `scratch`:
/// `scratch/t`, or, when that path is too long, `SHORT_TMP_BASE/<scratch's
/// name>.t` (then also returned as a directory to remove at close). A caller's
/// `TMPDIR` of any length works, and Chromium's files never stay in it.
fn chrome_tmpdir(scratch: &Path) -> std::io::Result<(PathBuf, Option<PathBuf>)> {
    let inside = scratch.join("t");
    if inside.as_os_str().len() <= CHROME_TMPDIR_MAX {
        std::fs::create_dir_all(&inside)?;
        return Ok((inside, None));
    }
    let mut name = scratch.file_name().unwrap_or_default().to_os_string();
    name.push(".t");
    let short = Path::new(SHORT_TMP_BASE).join(name);
    std::fs::DirBuilder::new().mode(0o700).create(&short)?;
    Ok((short.clone(), Some(short)))
}

/// Remove what runs killed with `kill -9` left: profile directories (in the temp
/// dir, and Chromium's short `TMPDIR`s in [`SHORT_TMP_BASE`]) whose Sightline
/// process is gone, after killing any process that still uses one (a Chromium
/// helper that outlived its browser). A directory of a live process, or of a
/// pid we cannot check, is left alone. Returns how many were removed.
pub fn sweep_dead_profiles() -> usize {
    let temp = std::env::temp_dir();
    let mut places = vec![temp.clone()];
    if temp != Path::new(SHORT_TMP_BASE) {
        places.push(PathBuf::from(SHORT_TMP_BASE));
    }
    let entries = places.iter().filter_map(|p| std::fs::read_dir(p).ok()).flatten();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix(PROFILE_PREFIX).and_then(|r| r.split('-').next()?.parse::<i32>().ok()) else {
            continue;
        };
        if pid <= 0 || pid == std::process::id() as i32 || !process_gone(pid) {
            continue;
        }
        let dir = entry.path();
        kill_users_of(&dir);
        remove_profile(&dir);
        if !dir.exists() {
            tracing::debug!(dir = %dir.display(), "removed the profile of a run that was killed");
            removed += 1;
        }
    }
    removed
}

/// True when no process has this pid (`kill(pid, 0)` says ESRCH).
fn process_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only probes.
    unsafe { libc::kill(pid, 0) == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) }
}

/// SIGKILL every process whose command line names `dir` (Chromium's processes
/// carry their `--user-data-dir`), then wait for them to go.
fn kill_users_of(dir: &Path) {
    let needle = dir.to_string_lossy().to_string();
    let mut killed = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        if String::from_utf8_lossy(&cmd).contains(&needle) {
            // SAFETY: kill(2) on a process that runs with our dead run's profile.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            killed.push(pid);
        }
    }
    for _ in 0..200 {
        if killed.iter().all(|p| process_gone(*p) || is_zombie(*p)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next().map(|st| st == "Z")))
        .unwrap_or(true)
}

fn fresh_profile_dir() -> Result<PathBuf, CdpError> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "{PROFILE_PREFIX}{}-{}-{:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        // Short: Chromium's socket path under it is bounded (see CHROME_TMPDIR_MAX).
        nanos as u32
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn dummy_client_placeholder() -> Client {
    // Only used between spawning and connecting; replaced before `launch` returns.
    Client::detached()
}

/// Turn `http://host:port` into the browser websocket URL via `/json/version`;
/// a `ws://` or `wss://` URL is returned as is.
pub async fn resolve_endpoint(endpoint: &str) -> Result<String, CdpError> {
    if endpoint.starts_with("ws://") || endpoint.starts_with("wss://") {
        return Ok(endpoint.to_string());
    }
    let err = |cause: Box<dyn std::error::Error + Send + Sync>| CdpError::Connect {
        endpoint: endpoint.to_string(),
        source: cause,
    };
    let parsed = url::Url::parse(endpoint)
        .ok()
        .filter(|u| u.scheme() == "http")
        .ok_or_else(|| err("expected ws://…/devtools/browser/… or http://host:port".into()))?;
    let (Some(host), Some(port)) = (parsed.host(), parsed.port_or_known_default()) else {
        return Err(err("missing host".into()));
    };
    let hostport = format!("{host}:{port}");
    let fut = async {
        let mut stream = TcpStream::connect(hostport.as_str()).await.map_err(|e| err(Box::new(e)))?;
        let req = format!("GET /json/version HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n");
        stream.write_all(req.as_bytes()).await.map_err(|e| err(Box::new(e)))?;
        // Chromium keeps the connection open: read the head, then Content-Length bytes.
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let (head_end, length) = loop {
            let n = stream.read(&mut chunk).await.map_err(|e| err(Box::new(e)))?;
            if n == 0 {
                return Err(err("connection closed before a reply to /json/version".into()));
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:").and_then(|v| v.trim().parse::<usize>().ok()));
                break (i + 4, length);
            }
        };
        while length.is_some_and(|l| buf.len() < head_end + l) {
            let n = stream.read(&mut chunk).await.map_err(|e| err(Box::new(e)))?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body = &buf[head_end..length.map_or(buf.len(), |l| (head_end + l).min(buf.len()))];
        let v: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| err(format!("bad /json/version: {e}").into()))?;
        v["webSocketDebuggerUrl"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| err("/json/version has no webSocketDebuggerUrl".into()))
    };
    tokio::time::timeout(Duration::from_secs(10), fut).await.map_err(|_| err("timed out".into()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_is_off_only_for_root_or_on_request() {
        assert!(!BASE_FLAGS.contains(&"--no-sandbox"));
        assert!(needs_no_sandbox(true, &[]));
        assert!(!needs_no_sandbox(false, &[]));
        // Asked for explicitly: passed once, through extra_args.
        assert!(!needs_no_sandbox(true, &["--no-sandbox".to_string()]));
        assert!(!needs_no_sandbox(false, &["--no-sandbox".to_string()]));
    }
}
