//! The browser layer: tabs, capture, actions and waiting for a stable page.
//!
//! A [`Browser`] owns (or is attached to) one Chromium. A [`Tab`] is one page
//! target in its own browser context, with its out-of-process iframes attached
//! as flattened sessions. [`Tab::capture`] fills a [`sightline_page::Capture`]
//! with the few CDP calls it needs, run concurrently; the actions take elements
//! from the [`sightline_page::PageView`] built from it and re-check them just
//! before acting.

mod actions;
mod capture;
mod error;
mod keys;
mod selectors;
mod settle;
mod tab;
mod world;

use std::sync::Arc;

use serde_json::json;
use sightline_cdp::{Chromium, Client, LaunchOptions};

pub use actions::{Direction, NAMED_KEYS};
pub use capture::{CaptureOptions, Captured};
pub use error::{BrowserError, Refusal};
pub use selectors::Probe;
pub use settle::SettleOptions;
pub use tab::{Tab, TabOptions};

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
        let v: serde_json::Value = self.client().call(None, "Browser.getVersion", json!({})).await?;
        Ok(v["product"].as_str().unwrap_or_default().to_string())
    }

    /// Open a tab in a fresh browser context.
    pub async fn new_tab(&self, opts: TabOptions) -> Result<Tab, BrowserError> {
        Tab::open(self.clone(), opts, None).await
    }

    /// A new browser context (cookies and storage shared by the tabs opened in it).
    pub async fn new_context(&self) -> Result<String, BrowserError> {
        let v: serde_json::Value =
            self.client().call(None, "Target.createBrowserContext", json!({ "disposeOnDetach": true })).await?;
        Ok(v["browserContextId"].as_str().unwrap_or_default().to_string())
    }

    /// Open a tab in an existing context (which the tab does not own).
    pub async fn new_tab_in(&self, context: &str, opts: TabOptions) -> Result<Tab, BrowserError> {
        Tab::open(self.clone(), opts, Some(context.to_string())).await
    }

    /// Page targets in a context and who opened them: (target id, opener target id).
    pub async fn pages_in(&self, context: &str) -> Result<Vec<(String, Option<String>)>, BrowserError> {
        let v: serde_json::Value = self.client().call(None, "Target.getTargets", json!({})).await?;
        Ok(v["targetInfos"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|t| t["type"] == "page" && t["browserContextId"].as_str() == Some(context))
                    .map(|t| {
                        (
                            t["targetId"].as_str().unwrap_or_default().to_string(),
                            t["openerId"].as_str().map(str::to_string),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The process group of a launched browser (for last-resort cleanup).
    pub fn process_group(&self) -> Option<i32> {
        self.chromium.process_group()
    }

    /// The temporary profile of a launched browser (removed when it closes).
    pub fn profile_dir(&self) -> Option<&std::path::Path> {
        self.chromium.profile_dir()
    }

    /// Kill a launched browser now (attached browsers are left running).
    pub async fn shutdown(self) {
        if let Ok(chromium) = Arc::try_unwrap(self.chromium) {
            chromium.close().await;
        }
    }
}
