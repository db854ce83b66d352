//! The Set-of-Marks browser pack.
//!
//! A model writes a short script against a `browser` global instead of emitting
//! one JSON action per turn, and acts on numbered boxes ([`Mark`]s) instead of
//! selectors or invented coordinates. Everything here talks to a [`Driver`], a
//! small seam; this crate has no browser dependency (the Chromium driver lives
//! in `sightline-chrome`), so deployments that never open a browser keep a
//! small dependency set.
//!
//! ```no_run
//! # async fn demo<D: sightline_pack::Driver>(driver: std::sync::Arc<D>) {
//! use sightline_pack::{DefaultPolicy, Pack, ScriptOptions};
//! let policy = DefaultPolicy { url_allow_prefixes: vec!["https://example.com/".into()], allow_private: false };
//! let pack = Pack::new(driver, policy, None);
//! let out = pack.run(r#"
//!     browser.goto("https://example.com/search");
//!     var field = browser.mark().find(m => m.role === "textbox" || m.tag === "input");
//!     browser.typeMark(field.id, "socks");
//! "#, ScriptOptions::default()).await;
//! # }
//! ```

mod alloc;
mod driver;
mod engine;
mod policy;
mod primitives;
mod sandbox;

pub use driver::{CancelToken, Cx, DownloadInfo, Driver, DriverError, FileRefusal, Mark, MarkSet};
pub use engine::{run_hosted, HostCall, HostError, ScriptError, ScriptOptions, ScriptOutcome, ScriptRun, MAX_LOG_LINE};
pub use policy::{DefaultPolicy, Denied, Egress, EgressGate, Policy, Request};
pub use primitives::{describe, Prim, PRIMITIVES};
pub use sandbox::{listing, Pack, Vision, VisionError, MAX_UPLOAD_FILES};
