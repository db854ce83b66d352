//! Downloads of one browser context: where they land, how big they may get,
//! and what became of each.
//!
//! [`Downloads::enable`] sets the context's behaviour (`Browser.setDownloadBehavior`,
//! `allowAndName`, events on) with a staging directory *inside* the download
//! directory, so Chromium writes nowhere else. Chromium names a file there by its
//! guid; once complete it is moved next to the staging directory under its
//! suggested name, sanitized (no separators, no `..`, no leading dot, never
//! replacing a file). A download whose bytes pass the cap is cancelled
//! (`Browser.cancelDownload`) and reported failed; its partial file is removed.
//!
//! Browser-level download events carry no context: a download is ours when the
//! frame that started it is a target of our context (`Target.getTargetInfo`; a
//! page's main frame id is its target id). A same-process subframe is no target:
//! such a download is ours when its file appears in our staging directory, and a
//! cap is enforced by cancelling it in our context (which fails for another's).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sightline_cdp::protocol::{browser, target};
use sightline_cdp::{BrowserContextId, Client, EventParams, TargetId};

use crate::{Browser, BrowserError};

/// The default cap on one download: 100 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 100 << 20;
/// Downloads remembered per context (the oldest are forgotten first).
const REMEMBERED: usize = 200;

/// Where a context's downloads go and how big one may get.
#[derive(Debug, Clone)]
pub struct DownloadConfig {
    /// The directory finished files land in (created if missing). `None`: a
    /// temporary directory of the context's own, removed when [`Downloads`] is
    /// dropped (and, for a browser Sightline launched, inside its temporary
    /// profile, so it leaves with the browser on any exit path).
    pub dir: Option<PathBuf>,
    /// A download whose size passes this is cancelled and reported failed.
    pub max_bytes: u64,
}

impl Default for DownloadConfig {
    fn default() -> Self {
        DownloadConfig { dir: None, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// Why downloads could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DownloadError {
    #[error("the download directory {dir} cannot be used: {source}")]
    Directory {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Browser(#[from] BrowserError),
}

/// What became of a download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadState {
    InProgress,
    Done,
    Failed { reason: String },
}

/// One download of the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// The file's name in the download directory (the suggested name, sanitized;
    /// once done, the name it was saved under).
    pub name: String,
    pub url: String,
    /// Bytes received (the file's size once done).
    pub bytes: u64,
    pub state: DownloadState,
    /// The saved file, once done.
    pub path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Ours,
    /// Started by a frame that is no target: ours if its file shows up in our staging directory.
    Unknown,
}

struct Entry {
    guid: String,
    owner: Owner,
    download: Download,
}

struct Shared {
    context: BrowserContextId,
    dir: PathBuf,
    staging: PathBuf,
    max_bytes: u64,
    list: Mutex<Vec<Entry>>,
    changed: tokio::sync::watch::Sender<u64>,
}

/// Removes the staging (and a temporary download) directory and stops the event task.
struct Guard {
    task: tokio::task::JoinHandle<()>,
    staging: PathBuf,
    temporary: Option<PathBuf>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_dir_all(&self.staging);
        if let Some(t) = &self.temporary {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

/// The downloads of one browser context. Cheap to clone; the last clone dropped
/// stops following them and removes the staging directory (and a temporary
/// download directory with what it holds).
#[derive(Clone)]
pub struct Downloads {
    shared: Arc<Shared>,
    _guard: Arc<Guard>,
}

static SERIAL: AtomicU64 = AtomicU64::new(0);

fn unique() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{}-{:x}", std::process::id(), SERIAL.fetch_add(1, Ordering::Relaxed), nanos & 0xffff_ffff)
}

/// Where a temporary download directory goes: inside the profile of a browser
/// Sightline launched with a fresh one, which leaves on every exit path (a
/// `kill -9` included: the next launch sweeps it), else the temp dir.
fn temporary_base(browser: &Browser) -> PathBuf {
    match browser.profile_dir() {
        Some(p) if !browser.persistent_profile() => p.to_path_buf(),
        _ => std::env::temp_dir(),
    }
}

impl Downloads {
    /// Let `context` download into `cfg.dir` (or a temporary directory), capped at `cfg.max_bytes`.
    pub async fn enable(
        browser: &Browser,
        context: &BrowserContextId,
        cfg: &DownloadConfig,
    ) -> Result<Downloads, DownloadError> {
        let io = |dir: &Path| {
            let dir = dir.to_path_buf();
            move |source| DownloadError::Directory { dir, source }
        };
        let (dir, temporary) = match &cfg.dir {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(io(d))?;
                (d.canonicalize().map_err(io(d))?, None)
            }
            None => {
                let t = temporary_base(browser).join(format!("sightline-downloads-{}", unique()));
                std::fs::create_dir_all(&t).map_err(io(&t))?;
                let t = t.canonicalize().map_err(io(&t))?;
                (t.clone(), Some(t))
            }
        };
        let staging = dir.join(format!(".sightline-partial-{}", unique()));
        std::fs::create_dir(&staging).map_err(io(&staging))?;
        let client = browser.client().clone();
        // Subscribed before the behaviour is set, so no event is missed.
        let events = client.subscribe_to(sightline_cdp::EventFilter::Browser);
        let set = browser::SetDownloadBehavior {
            behavior: "allowAndName",
            browser_context_id: context,
            download_path: Some(&staging.to_string_lossy()),
            events_enabled: true,
        };
        if let Err(e) = client.execute(None, &set).await {
            let _ = std::fs::remove_dir_all(&staging);
            if let Some(t) = &temporary {
                let _ = std::fs::remove_dir_all(t);
            }
            return Err(BrowserError::from(e).into());
        }
        let shared = Arc::new(Shared {
            context: context.clone(),
            dir,
            staging: staging.clone(),
            max_bytes: cfg.max_bytes,
            list: Mutex::new(Vec::new()),
            changed: tokio::sync::watch::channel(0).0,
        });
        let task = tokio::spawn(follow(client, events, shared.clone()));
        Ok(Downloads { shared, _guard: Arc::new(Guard { task, staging, temporary }) })
    }

    /// The directory finished files land in.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    pub fn max_bytes(&self) -> u64 {
        self.shared.max_bytes
    }

    /// Every download of the context known to be ours, oldest first.
    pub fn list(&self) -> Vec<Download> {
        let list = self.shared.list.lock().unwrap();
        list.iter().filter(|e| e.owner == Owner::Ours).map(|e| e.download.clone()).collect()
    }

    /// Wait until no download is in progress, at most `limit`. Says whether none is.
    pub async fn wait_idle(&self, limit: Duration) -> bool {
        let mut rx = self.shared.changed.subscribe();
        let busy = |l: &Vec<Entry>| l.iter().any(|e| e.download.state == DownloadState::InProgress);
        let wait = async {
            loop {
                if !busy(&self.shared.list.lock().unwrap()) {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// How many downloads were seen so far (ours, or not yet known not to be).
    pub fn seen(&self) -> usize {
        self.shared.list.lock().unwrap().len()
    }

    /// Wait until more than `seen` downloads were seen, at most `limit`. Says whether one was.
    pub async fn wait_new(&self, seen: usize, limit: Duration) -> bool {
        let mut rx = self.shared.changed.subscribe();
        let wait = async {
            while self.seen() <= seen {
                if rx.changed().await.is_err() {
                    return false;
                }
            }
            true
        };
        tokio::time::timeout(limit, wait).await.unwrap_or(false)
    }

    /// One line for page_content: the latest downloads, e.g.
    /// `Downloaded: report.csv (1,234 bytes, done)`. `None` before the first.
    pub fn summary(&self) -> Option<String> {
        summary(&self.list(), 5)
    }
}

/// `Downloaded: a.csv (1,234 bytes, done); b.bin (failed: …)`, the latest `show`, oldest first.
pub(crate) fn summary(list: &[Download], show: usize) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let skipped = list.len().saturating_sub(show);
    let items: Vec<String> = list[skipped..]
        .iter()
        .map(|d| match &d.state {
            DownloadState::Done => format!("{} ({} bytes, done)", d.name, thousands(d.bytes)),
            DownloadState::InProgress => format!("{} ({} bytes so far, downloading)", d.name, thousands(d.bytes)),
            DownloadState::Failed { reason } => format!("{} (failed: {reason})", d.name),
        })
        .collect();
    let earlier = if skipped > 0 { format!(" (and {skipped} earlier)") } else { String::new() };
    Some(format!("Downloaded: {}{earlier}", items.join("; ")))
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A navigation whose URL is a download fails as a navigation (Chromium aborts
/// it) and leaves the page as it was: that is no failure when a download began.
/// `seen` is [`Downloads::seen`] taken before the navigation.
pub async fn navigation_outcome<E>(
    r: Result<(), E>,
    downloads: Option<&Downloads>,
    seen: Option<usize>,
) -> Result<(), E> {
    match (r, downloads, seen) {
        (Err(_), Some(d), Some(n)) if d.wait_new(n, Duration::from_secs(1)).await => Ok(()),
        (r, _, _) => r,
    }
}

/// A file name safe to create in the download directory: the last path
/// segment, no control characters, no leading dots, at most 200 bytes.
pub fn sanitize_file_name(suggested: &str) -> String {
    let last = suggested.rsplit(['/', '\\']).next().unwrap_or("");
    let clean: String = last.chars().filter(|c| !c.is_control()).collect();
    let clean = clean.trim().trim_start_matches('.').trim();
    let mut out = String::new();
    for c in clean.chars() {
        if out.len() + c.len_utf8() > 200 {
            break;
        }
        out.push(c);
    }
    if out.is_empty() {
        "download".to_string()
    } else {
        out
    }
}

/// Move a finished file into `dir` under `name`, or `name (1)`, `name (2)`…:
/// never replacing a file (a hard link fails when the name is taken).
fn place(from: &Path, dir: &Path, name: &str) -> std::io::Result<(PathBuf, String)> {
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    };
    for n in 0..1000u32 {
        let candidate = if n == 0 { name.to_string() } else { format!("{stem} ({n}){ext}") };
        let to = dir.join(&candidate);
        match std::fs::hard_link(from, &to) {
            Ok(()) => {
                let _ = std::fs::remove_file(from);
                return Ok((to, candidate));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "every name is taken"))
}

/// Follows the browser's download events. Missed events (a queue that fell
/// behind) are logged by [`sightline_cdp::Subscription::recv`]: a download whose
/// end was missed stays in progress until its wait's limit.
async fn follow(client: Client, mut events: sightline_cdp::Subscription, shared: Arc<Shared>) {
    while let Some(ev) = events.recv().await {
        if let Some(v) = ev.decode::<browser::DownloadWillBegin>() {
            let frame = TargetId(v.frame_id.0.clone());
            let guid = v.guid.clone();
            let download = Download {
                name: sanitize_file_name(&v.suggested_filename),
                url: v.url,
                bytes: 0,
                state: DownloadState::InProgress,
                path: None,
            };
            // Seen at once, before its owner is known (a round trip that takes a while on a
            // loaded machine): an action waiting for the downloads it started (`wait_idle`)
            // must not find none in the meantime.
            {
                let mut list = shared.list.lock().unwrap();
                list.push(Entry { guid: v.guid, owner: Owner::Unknown, download });
                if list.len() > REMEMBERED {
                    list.remove(0);
                }
            }
            shared.changed.send_modify(|n| *n += 1);
            let owner = match client.execute(None, &target::GetTargetInfo { target_id: &frame }).await {
                Ok(r) if r.target_info.browser_context_id.as_ref() == Some(&shared.context) => Some(Owner::Ours),
                Ok(_) => None,
                Err(_) => Some(Owner::Unknown),
            };
            let mut list = shared.list.lock().unwrap();
            match owner {
                // Another context's download: not ours to follow.
                None => list.retain(|e| e.guid != guid),
                Some(owner) => {
                    if let Some(e) = list.iter_mut().find(|e| e.guid == guid) {
                        e.owner = owner;
                    }
                }
            }
        } else if ev.method == browser::DownloadProgress::METHOD {
            let Some(v) = ev.decode::<browser::DownloadProgress>() else { continue };
            progress(&client, &shared, v).await;
        } else {
            continue;
        }
        shared.changed.send_modify(|n| *n += 1);
    }
}

async fn progress(client: &Client, shared: &Shared, v: browser::DownloadProgress) {
    let owner = {
        let mut list = shared.list.lock().unwrap();
        let Some(e) = list.iter_mut().find(|e| e.guid == v.guid) else { return };
        if e.download.state != DownloadState::InProgress {
            return;
        }
        e.download.bytes = v.received_bytes.max(0.0) as u64;
        e.owner
    };
    let cap = shared.max_bytes;
    let partial = shared.staging.join(&v.guid);
    let over = v.received_bytes > cap as f64 || v.total_bytes > cap as f64;
    // The reason it failed (the download is ours), or a return.
    let reason = match v.state.as_str() {
        "inProgress" if over => {
            let cancel = browser::CancelDownload { guid: &v.guid, browser_context_id: &shared.context };
            match client.execute(None, &cancel).await {
                // Cancelled in our context: it was ours.
                Ok(_) => too_big(cap),
                // Not a download of our context.
                Err(_) if owner == Owner::Unknown => return forget(shared, &v.guid),
                Err(e) => format!("larger than the {}-byte limit, and cancelling it failed: {e}", thousands(cap)),
            }
        }
        "inProgress" => return,
        "completed" if !partial.is_file() => {
            if owner == Owner::Unknown {
                return forget(shared, &v.guid);
            }
            "the browser reported it complete but saved no file".to_string()
        }
        "completed" if over => too_big(cap),
        "completed" => {
            let name = {
                let list = shared.list.lock().unwrap();
                list.iter().find(|e| e.guid == v.guid).map(|e| e.download.name.clone()).unwrap_or_default()
            };
            match place(&partial, &shared.dir, &name) {
                Ok((path, saved)) => {
                    let mut list = shared.list.lock().unwrap();
                    if let Some(e) = list.iter_mut().find(|e| e.guid == v.guid) {
                        e.owner = Owner::Ours;
                        e.download.name = saved;
                        e.download.bytes = std::fs::metadata(&path).map_or(e.download.bytes, |m| m.len());
                        e.download.path = Some(path);
                        e.download.state = DownloadState::Done;
                    }
                    return;
                }
                Err(err) => format!("saving it failed: {err}"),
            }
        }
        // Canceled (by the page, the browser, or us).
        _ if owner == Owner::Unknown => {
            let _ = std::fs::remove_file(&partial);
            return forget(shared, &v.guid);
        }
        _ => "cancelled".to_string(),
    };
    // Nothing of a failed download is kept.
    let _ = std::fs::remove_file(&partial);
    let mut list = shared.list.lock().unwrap();
    if let Some(e) = list.iter_mut().find(|e| e.guid == v.guid) {
        e.owner = Owner::Ours;
        e.download.state = DownloadState::Failed { reason };
    }
}

fn too_big(cap: u64) -> String {
    format!("larger than the {}-byte limit, cancelled", thousands(cap))
}

fn forget(shared: &Shared, guid: &str) {
    shared.list.lock().unwrap().retain(|e| e.guid != guid);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_names_cannot_leave_the_directory() {
        assert_eq!(sanitize_file_name("report.csv"), "report.csv");
        assert_eq!(sanitize_file_name("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_file_name("..\\..\\win.ini"), "win.ini");
        assert_eq!(sanitize_file_name(".."), "download");
        assert_eq!(sanitize_file_name(".bashrc"), "bashrc");
        assert_eq!(sanitize_file_name("a\u{0}b\nc.txt"), "abc.txt");
        assert_eq!(sanitize_file_name(""), "download");
        assert!(sanitize_file_name(&"é".repeat(300)).len() <= 200);
    }

    #[test]
    fn the_summary_is_one_line() {
        let d = |name: &str, bytes, state| Download { name: name.into(), url: String::new(), bytes, state, path: None };
        assert_eq!(summary(&[], 5), None);
        assert_eq!(
            summary(&[d("report.csv", 1234, DownloadState::Done)], 5).unwrap(),
            "Downloaded: report.csv (1,234 bytes, done)"
        );
        let many: Vec<Download> = (0..7)
            .map(|i| d(&format!("f{i}"), 1_000_000, DownloadState::Failed { reason: too_big(1 << 20) }))
            .collect();
        let s = summary(&many, 5).unwrap();
        assert!(s.starts_with("Downloaded: f2 (failed: larger than the 1,048,576-byte limit, cancelled); f3"), "{s}");
        assert!(s.ends_with("(and 2 earlier)"), "{s}");
        assert!(!s.contains('\n'));
    }

    #[test]
    fn placing_never_replaces_a_file() {
        let dir = std::env::temp_dir().join(format!("sightline-place-{}", unique()));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..3 {
            let from = dir.join(format!("guid{i}"));
            std::fs::write(&from, format!("{i}")).unwrap();
            place(&from, &dir, "r.csv").unwrap();
            assert!(!from.exists());
        }
        assert_eq!(std::fs::read_to_string(dir.join("r.csv")).unwrap(), "0");
        assert_eq!(std::fs::read_to_string(dir.join("r (1).csv")).unwrap(), "1");
        assert_eq!(std::fs::read_to_string(dir.join("r (2).csv")).unwrap(), "2");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
