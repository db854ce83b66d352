//! `Network`: the events that tell us which requests are in flight.

use serde::Deserialize;

use super::{unit_command, EventParams};

unit_command!(
    /// `Network.enable`.
    Enable = "Network.enable"
);

/// `Network.requestWillBeSent` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestWillBeSent {
    pub request_id: String,
    /// `Network.ResourceType`: `Document`, `XHR`, `WebSocket`, …
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    pub request: Request,
}

impl EventParams for RequestWillBeSent {
    const METHOD: &'static str = "Network.requestWillBeSent";
}

/// `Network.Request` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
pub struct Request {
    pub url: String,
}

/// `Network.loadingFinished`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadingFinished {
    pub request_id: String,
}

impl EventParams for LoadingFinished {
    const METHOD: &'static str = "Network.loadingFinished";
}

/// `Network.loadingFailed`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadingFailed {
    pub request_id: String,
}

impl EventParams for LoadingFailed {
    const METHOD: &'static str = "Network.loadingFailed";
}
