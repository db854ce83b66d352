//! A lean Chrome DevTools Protocol client.
//!
//! It knows how to start Chromium (or attach to a running one), send commands and
//! correlate their replies, fan events out to subscribers, and address flattened
//! target sessions (pages, out-of-process iframes, popups). It knows nothing about
//! agents, element indexes or pages: those live in `sightline-page` and
//! `sightline-browser`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sightline_cdp::CdpError> {
//! use sightline_cdp::{Chromium, LaunchOptions};
//! let chrome = Chromium::launch(&LaunchOptions::default()).await?;
//! let version: serde_json::Value = chrome.client().call(None, "Browser.getVersion", serde_json::json!({})).await?;
//! println!("{}", version["product"]);
//! # Ok(()) }
//! ```

mod client;
mod error;
mod launch;

pub use client::{Client, Event, EventReceiver, SessionId, EVENT_QUEUE};
pub use error::CdpError;
pub use launch::{find_chromium, needs_no_sandbox, resolve_endpoint, Chromium, LaunchOptions, BASE_FLAGS};
