//! A lean Chrome DevTools Protocol client.
//!
//! It knows how to start Chromium (or attach to a running one), send commands and
//! correlate their replies, route events by session to their subscribers, and address flattened
//! target sessions (pages, out-of-process iframes, popups). It knows nothing about
//! agents, element indexes or pages: those live in `sightline-page` and
//! `sightline-browser`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sightline_cdp::CdpError> {
//! use sightline_cdp::{Chromium, LaunchOptions};
//! use sightline_cdp::protocol::browser::GetVersion;
//! let chrome = Chromium::launch(&LaunchOptions::default()).await?;
//! // Typed end to end: the struct names its method and its reply.
//! let version = chrome.client().execute(None, &GetVersion {}).await?;
//! println!("{}", version.product);
//! # Ok(()) }
//! ```

mod client;
mod error;
mod ids;
mod launch;
mod lenient;
mod profile;
pub mod protocol;
mod route;

pub use client::{Client, Event};
pub use error::CdpError;
pub use ids::{BackendNodeId, BrowserContextId, ExecutionContextId, FrameId, SessionId, TargetId};
pub use launch::{
    find_chromium, kill_launched, needs_no_sandbox, resolve_endpoint, sweep_dead_profiles, Chromium, LaunchOptions,
    BASE_FLAGS,
};
pub use profile::{check_profile_free, lock_holder};
pub use protocol::{Command, EventParams};
pub use route::{EventFilter, EventReceiver, Routed, SessionsHandle, Subscription, EVENT_QUEUE};
