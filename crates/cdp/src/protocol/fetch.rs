//! `Fetch`: intercepting a navigation's document at the response stage.

use serde::{Deserialize, Serialize};

use super::{unit_command, Command, Empty, EventParams};
use crate::FrameId;

/// `Fetch.enable`.
#[derive(Debug, Clone, Serialize)]
pub struct Enable<'a> {
    pub patterns: &'a [RequestPattern<'a>],
}

impl Command for Enable<'_> {
    const METHOD: &'static str = "Fetch.enable";
    type Response = Empty;
}

/// `Fetch.RequestPattern`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPattern<'a> {
    pub url_pattern: &'a str,
    pub resource_type: &'a str,
    pub request_stage: &'a str,
}

unit_command!(
    /// `Fetch.disable`.
    Disable = "Fetch.disable"
);

/// `Fetch.failRequest`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailRequest<'a> {
    pub request_id: &'a str,
    /// `Network.ErrorReason`, e.g. `Aborted`.
    pub error_reason: &'a str,
}

impl Command for FailRequest<'_> {
    const METHOD: &'static str = "Fetch.failRequest";
    type Response = Empty;
}

/// `Fetch.continueRequest`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueRequest<'a> {
    pub request_id: &'a str,
}

impl Command for ContinueRequest<'_> {
    const METHOD: &'static str = "Fetch.continueRequest";
    type Response = Empty;
}

/// `Fetch.requestPaused` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPaused {
    pub request_id: String,
    #[serde(default)]
    pub frame_id: Option<FrameId>,
    /// Set when the response failed before any HTTP status (`ConnectionRefused`, …).
    #[serde(default)]
    pub response_error_reason: Option<String>,
    #[serde(default)]
    pub response_status_code: Option<i64>,
    #[serde(default)]
    pub response_headers: Option<Vec<HeaderEntry>>,
}

impl RequestPaused {
    /// A response header's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.response_headers.as_ref()?.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.as_str())
    }
}

impl EventParams for RequestPaused {
    const METHOD: &'static str = "Fetch.requestPaused";
}

/// `Fetch.HeaderEntry`.
#[derive(Debug, Clone, Deserialize)]
pub struct HeaderEntry {
    pub name: String,
    pub value: String,
}

/// `Fetch.fulfillRequest`: answer a paused request without the network.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FulfillRequest<'a> {
    pub request_id: &'a str,
    pub response_code: u16,
    pub response_headers: &'a [ResponseHeader<'a>],
    /// Base64.
    pub body: &'a str,
}

impl Command for FulfillRequest<'_> {
    const METHOD: &'static str = "Fetch.fulfillRequest";
    type Response = Empty;
}

/// A header of a fulfilled response.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseHeader<'a> {
    pub name: &'a str,
    pub value: &'a str,
}
