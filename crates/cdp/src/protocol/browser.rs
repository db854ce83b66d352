//! `Browser`.

use serde::{Deserialize, Serialize};

use super::{unit_command, Command, Empty, EventParams};
use crate::{BrowserContextId, FrameId};

/// `Browser.getVersion`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetVersion {}

#[derive(Debug, Clone, Deserialize)]
pub struct GetVersionReply {
    /// e.g. `HeadlessChrome/140.0…`.
    pub product: String,
}

impl Command for GetVersion {
    const METHOD: &'static str = "Browser.getVersion";
    type Response = GetVersionReply;
}

/// `Browser.setDownloadBehavior` for one browser context.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetDownloadBehavior<'a> {
    /// `deny`, `allow`, `allowAndName` (files named by their guid) or `default`.
    pub behavior: &'a str,
    pub browser_context_id: &'a BrowserContextId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub download_path: Option<&'a str>,
    pub events_enabled: bool,
}

impl Command for SetDownloadBehavior<'_> {
    const METHOD: &'static str = "Browser.setDownloadBehavior";
    type Response = Empty;
}

/// `Browser.cancelDownload`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelDownload<'a> {
    pub guid: &'a str,
    pub browser_context_id: &'a BrowserContextId,
}

impl Command for CancelDownload<'_> {
    const METHOD: &'static str = "Browser.cancelDownload";
    type Response = Empty;
}

/// `Browser.downloadWillBegin`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadWillBegin {
    /// The frame that caused it (a page's main frame id is its target id).
    pub frame_id: FrameId,
    pub guid: String,
    pub url: String,
    pub suggested_filename: String,
}

impl EventParams for DownloadWillBegin {
    const METHOD: &'static str = "Browser.downloadWillBegin";
}

/// `Browser.downloadProgress`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadProgress {
    pub guid: String,
    #[serde(default)]
    pub total_bytes: f64,
    #[serde(default)]
    pub received_bytes: f64,
    /// `inProgress`, `completed` or `canceled`.
    pub state: String,
    /// Set on `completed` (experimental).
    #[serde(default)]
    pub file_path: Option<String>,
}

impl EventParams for DownloadProgress {
    const METHOD: &'static str = "Browser.downloadProgress";
}
unit_command!(
    /// `Browser.close`: an orderly shutdown (the profile's cookies are written out).
    Close = "Browser.close"
);
