//! The Chromium implementation of [`sightline_pack::Driver`], over a
//! [`sightline_browser::Tab`]. Marks come from the tab's capture pipeline (the
//! same one that builds the element index); acting on a mark acts on that exact
//! DOM node, re-checked at the moment of acting.

use std::sync::{Arc, Mutex};

use base64::Engine;
use sightline_browser::{BrowserError, Captured, DownloadState, Downloads, FileError, FileRoot, Tab};
use sightline_pack::{Cx, DownloadInfo, Driver, DriverError, FileRefusal, MarkSet};
use sightline_page::ElementIndex;

struct MarkState {
    generation: u64,
    /// Tab navigation count when the marks were taken.
    navigations: u64,
    captured: Arc<Captured>,
    /// mark id - 1 → element index.
    elements: Vec<ElementIndex>,
}

pub struct ChromeDriver {
    tab: Tab,
    marks: Mutex<Option<MarkState>>,
    generation: Mutex<u64>,
    /// `--files DIR`: where uploads may come from; `None`, uploads are off.
    uploads: Option<Arc<FileRoot>>,
    /// The tab's context's downloads, when they are followed.
    downloads: Option<Downloads>,
}

fn err(e: BrowserError) -> DriverError {
    match e {
        BrowserError::NoMatch { selector } => DriverError::NotFound { selector },
        BrowserError::NavigationFailed { url, reason } => DriverError::Navigation { url, reason: reason.to_string() },
        BrowserError::NotInteractive { reason, .. } | BrowserError::Refused { reason } => {
            DriverError::Refused(reason.to_string())
        }
        BrowserError::PageScript(m) => DriverError::PageScript(m),
        other => DriverError::Browser(other.to_string()),
    }
}

fn file_err(e: FileError) -> DriverError {
    let reason = match &e {
        FileError::NoDirectory => FileRefusal::UploadsOff,
        FileError::Outside { .. } => FileRefusal::Outside,
        FileError::Missing { .. } => FileRefusal::Missing,
        FileError::NotAFile { .. } => FileRefusal::NotAFile,
        FileError::Empty => FileRefusal::Empty,
        _ => FileRefusal::Unusable,
    };
    DriverError::FileRefused { reason, message: e.to_string() }
}

impl ChromeDriver {
    pub fn new(tab: Tab) -> ChromeDriver {
        ChromeDriver { tab, marks: Mutex::new(None), generation: Mutex::new(0), uploads: None, downloads: None }
    }

    /// Uploads from `uploads` (`None`: refused), and the downloads of the tab's
    /// context (set up with [`Downloads::enable`]) reported and waited for.
    pub fn with_files(mut self, uploads: Option<Arc<FileRoot>>, downloads: Option<Downloads>) -> ChromeDriver {
        self.uploads = uploads;
        self.downloads = downloads;
        self
    }

    pub fn tab(&self) -> &Tab {
        &self.tab
    }

    /// One line on the downloads so far (`Downloaded: report.csv (1,753 bytes, done)`), if any.
    pub fn download_summary(&self) -> Option<String> {
        self.downloads.as_ref().and_then(Downloads::summary)
    }

    pub fn into_tab(self) -> Tab {
        self.tab
    }

    /// The capture and element index behind mark `id` of `generation`, if still valid.
    fn resolve(&self, generation: u64, id: u32) -> Result<(Arc<Captured>, ElementIndex), DriverError> {
        let guard = self.marks.lock().unwrap();
        let Some(state) = guard.as_ref() else {
            return Err(DriverError::StaleMarks("no marks yet: call mark() first".into()));
        };
        if state.generation != generation {
            return Err(DriverError::StaleMarks("these mark ids come from an older mark(); call mark() again".into()));
        }
        if self.tab.navigation_count() != state.navigations {
            return Err(DriverError::StaleMarks(
                "the page navigated since mark(); its ids are gone, call mark() again".into(),
            ));
        }
        let index = state
            .elements
            .get((id as usize).wrapping_sub(1))
            .copied()
            .ok_or(DriverError::NoSuchMark { id, count: state.elements.len() })?;
        Ok((state.captured.clone(), index))
    }
}

impl ChromeDriver {
    /// Scripts have no dialog primitive: a JavaScript dialog an action opened is
    /// answered as an unattended browser would (alert and beforeunload accepted,
    /// confirm and prompt dismissed) and reported on stderr, never left open.
    async fn after_action(&self, r: Result<(), BrowserError>) -> Result<(), DriverError> {
        r.map_err(err)?;
        // A download the action started is given the settle cap to finish, as in the element-index protocol.
        if let Some(d) = &self.downloads {
            d.wait_idle(self.tab.options().settle.cap).await;
        }
        while let Some((d, accepted)) = self.tab.answer_dialog_by_default().await.map_err(err)? {
            tracing::warn!(
                kind = %d.kind,
                message = ?d.message,
                answer = if accepted { "OK" } else { "Cancel" },
                "the page opened a dialog; answered it as an unattended browser would"
            );
        }
        Ok(())
    }
}

impl Driver for ChromeDriver {
    async fn navigate(&self, _cx: &Cx, url: &str) -> Result<(), DriverError> {
        // A URL that turns out to be a download keeps the page and lands the file.
        let seen = self.downloads.as_ref().map(Downloads::seen);
        let r =
            sightline_browser::navigation_outcome(self.tab.navigate(url).await, self.downloads.as_ref(), seen).await;
        self.after_action(r).await
    }
    async fn click(&self, _cx: &Cx, selector: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.click_selector(selector).await).await
    }
    async fn send_keys(&self, _cx: &Cx, selector: &str, text: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.type_selector(selector, text).await).await
    }
    async fn wait_visible(&self, _cx: &Cx, selector: &str) -> Result<(), DriverError> {
        self.tab.wait_for(selector, true).await.map(|_| ()).map_err(err)
    }
    async fn wait_ready(&self, _cx: &Cx, selector: &str) -> Result<(), DriverError> {
        self.tab.wait_for(selector, false).await.map(|_| ()).map_err(err)
    }
    async fn text(&self, _cx: &Cx, selector: &str) -> Result<String, DriverError> {
        self.tab.read_selector(selector, false).await.map_err(err)
    }
    async fn value(&self, _cx: &Cx, selector: &str) -> Result<String, DriverError> {
        self.tab.read_selector(selector, true).await.map_err(err)
    }
    async fn eval(&self, _cx: &Cx, expr: &str) -> Result<serde_json::Value, DriverError> {
        self.tab.eval_json(expr).await.map_err(err)
    }
    async fn key_event(&self, _cx: &Cx, text: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.keys(text).await).await
    }
    async fn screenshot(&self, _cx: &Cx) -> Result<Vec<u8>, DriverError> {
        self.tab.screenshot_png().await.map_err(err)
    }

    async fn marks(&self, _cx: &Cx, screenshot: bool) -> Result<MarkSet, DriverError> {
        let navigations = self.tab.navigation_count();
        let captured = self.tab.capture(screenshot).await.map_err(err)?;
        let marks = captured.view.marks();
        let png = match &captured.screenshot {
            Some(b64) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| DriverError::Browser(format!("screenshot: {e}")))?,
            ),
            None => None,
        };
        let generation = {
            let mut g = self.generation.lock().unwrap();
            *g += 1;
            *g
        };
        *self.marks.lock().unwrap() = Some(MarkState {
            generation,
            navigations,
            elements: marks.iter().map(|m| m.element_index).collect(),
            captured: Arc::new(captured),
        });
        Ok(MarkSet { generation, marks, screenshot: png })
    }

    async fn click_mark(&self, _cx: &Cx, generation: u64, id: u32) -> Result<(), DriverError> {
        let (captured, index) = self.resolve(generation, id)?;
        self.after_action(self.tab.click(&captured, index).await).await
    }

    async fn type_mark(&self, _cx: &Cx, generation: u64, id: u32, text: &str) -> Result<(), DriverError> {
        let (captured, index) = self.resolve(generation, id)?;
        self.after_action(self.tab.type_text(&captured, index, text, false).await).await
    }

    async fn upload_mark(&self, _cx: &Cx, generation: u64, id: u32, paths: &[String]) -> Result<(), DriverError> {
        let root = self.uploads.as_deref().ok_or(FileError::NoDirectory).map_err(file_err)?;
        let files = root.resolve_all(paths).map_err(file_err)?;
        let (captured, index) = self.resolve(generation, id)?;
        self.after_action(self.tab.upload_files(&captured, index, &files).await).await
    }

    async fn downloads(&self, _cx: &Cx) -> Result<Vec<DownloadInfo>, DriverError> {
        let Some(d) = &self.downloads else { return Ok(Vec::new()) };
        Ok(d.list()
            .into_iter()
            .map(|d| {
                let (state, error) = match d.state {
                    DownloadState::InProgress => ("in_progress", None),
                    DownloadState::Done => ("done", None),
                    DownloadState::Failed { reason } => ("failed", Some(reason)),
                };
                DownloadInfo { name: d.name, bytes: d.bytes, state, error }
            })
            .collect())
    }
}
