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

/// `Network.responseReceived` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseReceived {
    pub request_id: String,
    /// The loader of the document the response belongs to (for a document: its own).
    #[serde(default)]
    pub loader_id: String,
    /// `Network.ResourceType`: `Document`, `XHR`, …
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub frame_id: Option<crate::FrameId>,
    pub response: Response,
}

impl EventParams for ResponseReceived {
    const METHOD: &'static str = "Network.responseReceived";
}

impl ResponseReceived {
    /// A response header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.response.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).and_then(|(_, v)| v.as_str())
    }
}

/// `Network.responseReceived`, its resource type only: read before the whole
/// event, so that a subresource's headers are not decoded for nothing.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponseKind {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

impl EventParams for ResponseKind {
    const METHOD: &'static str = "Network.responseReceived";
}

/// `Network.Response` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub headers: serde_json::Map<String, serde_json::Value>,
}
