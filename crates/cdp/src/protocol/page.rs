//! `Page`: frames, navigation, dialogs, screenshots.

use serde::{Deserialize, Serialize};

use super::{unit_command, Command, Empty, EventParams};
use crate::{ExecutionContextId, FrameId};

unit_command!(
    /// `Page.enable`.
    Enable = "Page.enable"
);
unit_command!(
    /// `Page.stopLoading`.
    StopLoading = "Page.stopLoading"
);
unit_command!(
    /// `Page.crash` (tests: the renderer crashes and never answers).
    Crash = "Page.crash"
);

/// `Page.setWebLifecycleState`: `frozen` pauses the page's task queues (timers,
/// observers, handlers no longer run; DevTools evaluation still answers); `active`
/// resumes them. The state belongs to the page and outlives a navigation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SetWebLifecycleState {
    pub state: Lifecycle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lifecycle {
    Frozen,
    Active,
}

impl Command for SetWebLifecycleState {
    const METHOD: &'static str = "Page.setWebLifecycleState";
    type Response = Empty;
}

/// `Page.getFrameTree`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetFrameTree {}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetFrameTreeReply {
    pub frame_tree: FrameTree,
}

/// `Page.FrameTree` (the root frame; children are not read).
#[derive(Debug, Clone, Deserialize)]
pub struct FrameTree {
    pub frame: Frame,
}

impl Command for GetFrameTree {
    const METHOD: &'static str = "Page.getFrameTree";
    type Response = GetFrameTreeReply;
}

/// `Page.Frame` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    pub id: FrameId,
    /// `None` for a top-level frame.
    #[serde(default)]
    pub parent_id: Option<FrameId>,
    /// The loader of the frame's current document: a new one per document committed.
    #[serde(default)]
    pub loader_id: Option<String>,
}

/// `Page.createIsolatedWorld`: the same world for the same frame and name until
/// the frame's document changes.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateIsolatedWorld<'a> {
    pub frame_id: &'a FrameId,
    pub world_name: &'a str,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateIsolatedWorldReply {
    pub execution_context_id: ExecutionContextId,
}

impl Command for CreateIsolatedWorld<'_> {
    const METHOD: &'static str = "Page.createIsolatedWorld";
    type Response = CreateIsolatedWorldReply;
}

/// `Page.addScriptToEvaluateOnNewDocument`.
#[derive(Debug, Clone, Serialize)]
pub struct AddScriptToEvaluateOnNewDocument<'a> {
    pub source: &'a str,
}

impl Command for AddScriptToEvaluateOnNewDocument<'_> {
    const METHOD: &'static str = "Page.addScriptToEvaluateOnNewDocument";
    type Response = Empty;
}

/// `Page.setLifecycleEventsEnabled`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SetLifecycleEventsEnabled {
    pub enabled: bool,
}

impl Command for SetLifecycleEventsEnabled {
    const METHOD: &'static str = "Page.setLifecycleEventsEnabled";
    type Response = Empty;
}

/// `Page.handleJavaScriptDialog`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandleJavaScriptDialog<'a> {
    pub accept: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<&'a str>,
}

impl Command for HandleJavaScriptDialog<'_> {
    const METHOD: &'static str = "Page.handleJavaScriptDialog";
    type Response = Empty;
}

/// `Page.captureScreenshot` (of the viewport: PNG, or JPEG at a quality).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CaptureScreenshot {
    pub format: &'static str,
    /// JPEG quality, 0..=100 (JPEG only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<u32>,
}

impl CaptureScreenshot {
    pub const PNG: CaptureScreenshot = CaptureScreenshot { format: "png", quality: None };

    /// A JPEG at `quality` (0..=100): smaller, for a live view.
    pub fn jpeg(quality: u32) -> CaptureScreenshot {
        CaptureScreenshot { format: "jpeg", quality: Some(quality.min(100)) }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct CaptureScreenshotReply {
    /// Base64 image data.
    pub data: String,
}

impl Command for CaptureScreenshot {
    const METHOD: &'static str = "Page.captureScreenshot";
    type Response = CaptureScreenshotReply;
}

/// `Page.startScreencast`: frames of the page as Chromium paints them, each
/// sent as a [`ScreencastFrame`] event and acknowledged ([`ScreencastFrameAck`])
/// before the next one comes.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartScreencast {
    /// `jpeg` or `png`.
    pub format: &'static str,
    /// JPEG quality, 0..=100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_height: Option<u32>,
}

impl Command for StartScreencast {
    const METHOD: &'static str = "Page.startScreencast";
    type Response = Empty;
}

unit_command!(
    /// `Page.stopScreencast`.
    StopScreencast = "Page.stopScreencast"
);

/// `Page.screencastFrameAck`: the frame was taken; send the next.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreencastFrameAck {
    pub session_id: i64,
}

impl Command for ScreencastFrameAck {
    const METHOD: &'static str = "Page.screencastFrameAck";
    type Response = Empty;
}

/// `Page.screencastFrame` (only the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreencastFrame {
    /// Base64 image data.
    pub data: String,
    /// The frame's number, for the acknowledgement.
    pub session_id: i64,
}

impl EventParams for ScreencastFrame {
    const METHOD: &'static str = "Page.screencastFrame";
}

/// `Page.navigate`.
#[derive(Debug, Clone, Serialize)]
pub struct Navigate<'a> {
    pub url: &'a str,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateReply {
    /// Set when the navigation failed (`net::ERR_…`).
    #[serde(default)]
    pub error_text: Option<String>,
    /// The loader of the new document (none for a same-document navigation).
    #[serde(default)]
    pub loader_id: Option<String>,
}

impl Command for Navigate<'_> {
    const METHOD: &'static str = "Page.navigate";
    type Response = NavigateReply;
}

/// `Page.getNavigationHistory`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetNavigationHistory {}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigationHistory {
    pub current_index: usize,
    pub entries: Vec<NavigationEntry>,
}

impl NavigationHistory {
    /// The id of the current entry.
    pub fn current(&self) -> Option<i64> {
        self.entries.get(self.current_index).map(|e| e.id)
    }
}

/// `Page.NavigationEntry` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
pub struct NavigationEntry {
    pub id: i64,
    #[serde(default)]
    pub url: String,
}

impl Command for GetNavigationHistory {
    const METHOD: &'static str = "Page.getNavigationHistory";
    type Response = NavigationHistory;
}

/// `Page.navigateToHistoryEntry`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateToHistoryEntry {
    pub entry_id: i64,
}

impl Command for NavigateToHistoryEntry {
    const METHOD: &'static str = "Page.navigateToHistoryEntry";
    type Response = Empty;
}

/// `Page.frameStartedLoading`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameStartedLoading {
    pub frame_id: FrameId,
}

impl EventParams for FrameStartedLoading {
    const METHOD: &'static str = "Page.frameStartedLoading";
}

/// `Page.frameStoppedLoading`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameStoppedLoading {
    pub frame_id: FrameId,
}

impl EventParams for FrameStoppedLoading {
    const METHOD: &'static str = "Page.frameStoppedLoading";
}

/// `Page.frameRequestedNavigation`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameRequestedNavigation {
    pub frame_id: FrameId,
}

impl EventParams for FrameRequestedNavigation {
    const METHOD: &'static str = "Page.frameRequestedNavigation";
}

/// `Page.frameNavigated`.
#[derive(Debug, Clone, Deserialize)]
pub struct FrameNavigated {
    pub frame: Frame,
}

impl EventParams for FrameNavigated {
    const METHOD: &'static str = "Page.frameNavigated";
}

/// `Page.javascriptDialogOpening`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JavascriptDialogOpening {
    pub url: String,
    pub message: String,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub kind: String,
    pub default_prompt: Option<String>,
}

impl EventParams for JavascriptDialogOpening {
    const METHOD: &'static str = "Page.javascriptDialogOpening";
}

/// `Page.javascriptDialogClosed`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct JavascriptDialogClosed {}

impl EventParams for JavascriptDialogClosed {
    const METHOD: &'static str = "Page.javascriptDialogClosed";
}

/// `Page.setInterceptFileChooserDialog`: a file chooser opens no native dialog;
/// `Page.fileChooserOpened` says which input asked.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SetInterceptFileChooserDialog {
    pub enabled: bool,
}

impl Command for SetInterceptFileChooserDialog {
    const METHOD: &'static str = "Page.setInterceptFileChooserDialog";
    type Response = Empty;
}

/// `Page.fileChooserOpened`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChooserOpened {
    pub frame_id: FrameId,
    /// `selectSingle` or `selectMultiple`.
    pub mode: String,
    /// The `<input type=file>` that opened it (absent for `showOpenFilePicker`).
    #[serde(default)]
    pub backend_node_id: Option<crate::BackendNodeId>,
}

impl EventParams for FileChooserOpened {
    const METHOD: &'static str = "Page.fileChooserOpened";
}
