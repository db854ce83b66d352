//! The browser layer: tabs, capture, actions and waiting for a stable page.
//!
//! A [`Browser`] owns (or is attached to) one Chromium. A [`Tab`] is one page
//! target in its own browser context, with its out-of-process iframes attached
//! as flattened sessions. [`Tab::capture`] fills a [`sightline_page::Capture`]
//! with the few CDP calls it needs, run concurrently; the actions take elements
//! from the [`sightline_page::PageView`] built from it and re-check them just
//! before acting.
//!
//! A [`Tab`] is a cheap handle over state split by owner: `tab/life.rs`
//! (alive, crashed, closed), `tab/loading.rs` (requests, loads, navigations),
//! `tab/dialogs.rs` (JavaScript dialogs, file choosers), `tab/frames.rs`
//! (out-of-process frames), `liveness.rs` (a page that stops answering), and
//! the input it last saw; `tab/track.rs` dispatches the typed events the CDP
//! client routes to the tab (and re-reads what a gap in them hid),
//! `tab/setup.rs` is the one setup list of its sessions. Every action runs in
//! one bracket, `Tab::act` (`actions/mod.rs`).

mod actions;
mod capture;
mod downloads;
mod drag;
mod error;
mod files;
pub mod keys;
mod liveness;
mod navigate;
pub mod oracle;
mod person;
mod press;
mod selectors;
mod settle;
mod storage;
mod tab;
mod walk;
mod world;

use std::sync::Arc;

use sightline_cdp::protocol::{browser, target};
use sightline_cdp::{Chromium, Client, LaunchOptions};

pub use actions::{Direction, KEYED_PREFIX, NAMED_KEYS};
pub use capture::{CaptureOptions, Captured};
pub use downloads::{
    navigation_outcome, sanitize_file_name, Download, DownloadConfig, DownloadError, DownloadState, Downloads,
    DEFAULT_MAX_BYTES,
};
pub use drag::DragTo;
pub use error::{BrowserError, LoadFailure, Refusal};
pub use files::{ChooserInfo, FileError, FileRoot};
pub use keys::chord;
pub use person::Screencast;
pub use press::HistoryStep;
pub use selectors::Probe;
pub use settle::{SettleOptions, Settled};
/// The protocol's ids, as they travel through this layer and the API above it.
pub use sightline_cdp::{BackendNodeId, BrowserContextId, CdpError, FrameId, SessionId, TargetId};
pub use storage::{
    normalize_origin, origin_of_url, read_file as read_storage_file, write_file as write_storage_file, NameValue,
    OriginStorage, StorageError, StorageState, StoredCookie,
};
pub use tab::{parse_viewport, Tab, TabOptions, ViewportError};

/// How to get a browser.
#[derive(Debug, Clone, Default)]
pub struct BrowserOptions {
    pub launch: LaunchOptions,
    /// Attach to this endpoint instead of launching (`ws://…` or `http://host:port`).
    pub connect: Option<String>,
}

/// One Chromium, launched or attached. Cheap to clone.
#[derive(Clone)]
pub struct Browser {
    chromium: Arc<Chromium>,
}

impl Browser {
    pub async fn start(opts: &BrowserOptions) -> Result<Browser, BrowserError> {
        let chromium = match &opts.connect {
            Some(endpoint) => Chromium::connect(endpoint).await?,
            None => Chromium::launch(&opts.launch).await?,
        };
        Ok(Browser { chromium: Arc::new(chromium) })
    }

    pub fn client(&self) -> &Client {
        self.chromium.client()
    }

    /// The browser's product string, e.g. `Chrome/156.0…`.
    pub async fn version(&self) -> Result<String, BrowserError> {
        Ok(self.client().execute(None, &browser::GetVersion {}).await?.product)
    }

    /// Open a tab in a fresh browser context.
    pub async fn new_tab(&self, opts: TabOptions) -> Result<Tab, BrowserError> {
        Tab::open(self.clone(), opts, None).await
    }

    /// A new browser context (cookies and storage shared by the tabs opened in it).
    pub async fn new_context(&self) -> Result<BrowserContextId, BrowserError> {
        let created = self.client().execute(None, &target::CreateBrowserContext { dispose_on_detach: true }).await?;
        Ok(created.browser_context_id)
    }

    /// Open a tab in an existing context (which the tab does not own).
    pub async fn new_tab_in(&self, context: &BrowserContextId, opts: TabOptions) -> Result<Tab, BrowserError> {
        Tab::open(self.clone(), opts, Some(context.clone())).await
    }

    /// Page targets in a context and who opened them: (target id, opener target id).
    pub async fn pages_in(
        &self,
        context: &BrowserContextId,
    ) -> Result<Vec<(TargetId, Option<TargetId>)>, BrowserError> {
        let targets = self.client().execute(None, &target::GetTargets {}).await?;
        Ok(targets
            .target_infos
            .into_iter()
            .filter(|t| t.kind == "page" && t.browser_context_id.as_ref() == Some(context))
            .map(|t| (t.target_id, t.opener_id))
            .collect())
    }

    /// Each page of the browser: its target, its title and its URL.
    pub async fn page_titles(&self) -> Result<Vec<(TargetId, String, String)>, BrowserError> {
        let targets = self.client().execute(None, &target::GetTargets {}).await?;
        Ok(targets
            .target_infos
            .into_iter()
            .filter(|t| t.kind == "page")
            .map(|t| (t.target_id, t.title, t.url))
            .collect())
    }

    /// The process group of a launched browser (for last-resort cleanup).
    pub fn process_group(&self) -> Option<i32> {
        self.chromium.process_group()
    }

    /// The profile of a launched browser (removed when it closes, unless it is a persistent `--profile`).
    pub fn profile_dir(&self) -> Option<&std::path::Path> {
        self.chromium.profile_dir()
    }

    /// Whether it runs with a persistent `--profile` (see [`Browser::session_context`]).
    pub fn persistent_profile(&self) -> bool {
        self.chromium.persistent_profile()
    }

    /// Kill a launched browser now (attached browsers are left running).
    pub async fn shutdown(self) {
        if let Ok(chromium) = Arc::try_unwrap(self.chromium) {
            chromium.close().await;
        }
    }
}
