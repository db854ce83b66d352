//! The seam between the pack and a browser.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Cancels in-flight driver calls. Cancelling aborts the command being waited
/// for (its future is dropped); it never tears the browser down.
#[derive(Clone, Default)]
pub struct CancelToken(Arc<(AtomicBool, Notify)>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }
    pub fn cancel(&self) {
        self.0 .0.store(true, Ordering::SeqCst);
        self.0 .1.notify_waiters();
    }
    pub fn is_cancelled(&self) -> bool {
        self.0 .0.load(Ordering::SeqCst)
    }
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0 .1.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// The per-call context: a deadline and a cancellation token. It is the
/// agent's turn, shorter than the browser's life.
#[derive(Clone)]
pub struct Cx {
    pub deadline: Instant,
    pub cancel: CancelToken,
}

impl Cx {
    pub fn new(timeout: Duration) -> Cx {
        Cx { deadline: Instant::now() + timeout, cancel: CancelToken::new() }
    }

    pub fn with_cancel(timeout: Duration, cancel: CancelToken) -> Cx {
        Cx { deadline: Instant::now() + timeout, cancel }
    }

    /// Run one driver call within this context: it ends at the deadline or on
    /// cancellation, whichever comes first, by dropping the call's future.
    pub async fn run<T>(
        &self,
        op: &'static str,
        f: impl Future<Output = Result<T, DriverError>>,
    ) -> Result<T, DriverError> {
        if self.cancel.is_cancelled() {
            return Err(DriverError::Cancelled { op });
        }
        let left = self.deadline.saturating_duration_since(Instant::now());
        tokio::select! {
            r = f => r,
            _ = self.cancel.cancelled() => Err(DriverError::Cancelled { op }),
            _ = tokio::time::sleep(left) => Err(DriverError::Timeout { op }),
        }
    }
}

/// What a driver call can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    #[error("no element matches {selector:?}")]
    NotFound { selector: String },
    #[error("{op} timed out")]
    Timeout { op: &'static str },
    #[error("{op} was cancelled")]
    Cancelled { op: &'static str },
    #[error("navigation to {url} failed: {reason}")]
    Navigation { url: String, reason: String },
    #[error("{0}")]
    StaleMarks(String),
    #[error("no mark {id} in the last mark() (ids 1..{count})")]
    NoSuchMark { id: u32, count: usize },
    #[error("the element cannot be used: {0}")]
    Refused(String),
    /// An upload path was refused before anything reached the page.
    #[error("upload refused: {message}")]
    FileRefused { reason: FileRefusal, message: String },
    #[error("the page's script threw: {0}")]
    PageScript(String),
    #[error("browser error: {0}")]
    Browser(String),
}

/// Why the paths of an upload were refused (the tool API's `file_refused` reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FileRefusal {
    /// The operator named no upload directory.
    UploadsOff,
    /// The path leaves the upload directory, as written or once its symlinks are followed.
    Outside,
    Missing,
    NotAFile,
    Empty,
    /// The upload directory itself cannot be used.
    Unusable,
}

/// What became of one download, as `browser.downloads()` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DownloadInfo {
    /// The file's name in the download directory.
    pub name: String,
    /// Bytes received (the file's size once done).
    pub bytes: u64,
    /// `in_progress`, `done` or `failed`.
    pub state: &'static str,
    /// Why it failed (e.g. larger than the size limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One visible interactive element found by `mark()`: the page model's own mark.
pub use sightline_page::Mark;

/// The result of one `mark()`: ids are valid only for this `generation`.
#[derive(Debug, Clone)]
pub struct MarkSet {
    pub generation: u64,
    pub marks: Vec<Mark>,
    /// The viewport PNG taken in the same capture, when asked for.
    pub screenshot: Option<Vec<u8>>,
}

/// Ten operations, as in the seed, three for Set-of-Marks, and two for files.
///
/// Every method returns when the browser has finished the step (including a
/// navigation it caused). A driver is bound to one page. The mark methods are
/// part of the seam because marks come from the driver's own capture of the
/// page (one pipeline for every view), not from a script injected by the pack.
#[allow(async_fn_in_trait)]
pub trait Driver: Send + Sync + 'static {
    /// Load `url` and wait for the page to settle.
    async fn navigate(&self, cx: &Cx, url: &str) -> Result<(), DriverError>;
    /// A real mouse click at the centre of the first element matching `selector`, waiting for it first.
    async fn click(&self, cx: &Cx, selector: &str) -> Result<(), DriverError>;
    /// Focus the first element matching `selector` and type `text` as key events.
    async fn send_keys(&self, cx: &Cx, selector: &str, text: &str) -> Result<(), DriverError>;
    /// Wait until `selector` matches an element that is present and visible.
    async fn wait_visible(&self, cx: &Cx, selector: &str) -> Result<(), DriverError>;
    /// Wait until `selector` matches an element in the DOM, visible or not.
    async fn wait_ready(&self, cx: &Cx, selector: &str) -> Result<(), DriverError>;
    /// The visible text of the first element matching `selector`.
    async fn text(&self, cx: &Cx, selector: &str) -> Result<String, DriverError>;
    /// The `value` property of the first element matching `selector`.
    async fn value(&self, cx: &Cx, selector: &str) -> Result<String, DriverError>;
    /// Evaluate `expr` in the page; its completion value as JSON.
    async fn eval(&self, cx: &Cx, expr: &str) -> Result<serde_json::Value, DriverError>;
    /// Type `text` into whatever has focus, as key events.
    async fn key_event(&self, cx: &Cx, text: &str) -> Result<(), DriverError>;
    /// The viewport as PNG bytes.
    async fn screenshot(&self, cx: &Cx) -> Result<Vec<u8>, DriverError>;

    /// Enumerate the visible interactive elements (ids in document order), with a
    /// screenshot from the same capture when `screenshot` is true.
    async fn marks(&self, cx: &Cx, screenshot: bool) -> Result<MarkSet, DriverError>;
    /// Click mark `id` of `generation`; an older generation, or a navigation since, is an error.
    async fn click_mark(&self, cx: &Cx, generation: u64, id: u32) -> Result<(), DriverError>;
    /// Type into mark `id` of `generation`, as `click_mark`.
    async fn type_mark(&self, cx: &Cx, generation: u64, id: u32, text: &str) -> Result<(), DriverError>;
    /// Choose the files `paths` (names in the operator's upload directory) for
    /// mark `id` of `generation`: a file input, or the element whose click
    /// opened a file chooser. Stale marks as `click_mark`; a refused path is
    /// [`DriverError::FileRefused`] and nothing reaches the page.
    async fn upload_mark(&self, cx: &Cx, generation: u64, id: u32, paths: &[String]) -> Result<(), DriverError>;
    /// The page's downloads so far, oldest first (empty when downloads are not followed).
    async fn downloads(&self, cx: &Cx) -> Result<Vec<DownloadInfo>, DriverError>;
}
