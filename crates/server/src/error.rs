//! The server's one error type. Each variant knows its stable code (the same
//! strings `sightline rpc` puts in `error.data.code`); [`status_of`] maps
//! every code to its HTTP status by matching the code's variant.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use sightline_api::{ErrorDetail, ToolCode, ToolError};

/// Why a session ended (kept so a later request on its id says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// `DELETE /v1/sessions/{id}`, `end_session`, or the MCP session closed.
    Deleted,
    /// No request for `--idle-timeout`.
    IdleTimeout,
    /// Its browser crashed or its connection dropped.
    BrowserCrashed,
    /// The server is stopping.
    Shutdown,
}

impl EndReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            EndReason::Deleted => "deleted",
            EndReason::IdleTimeout => "idle_timeout",
            EndReason::BrowserCrashed => "browser_crashed",
            EndReason::Shutdown => "shutdown",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Selenium Grid said no, or could not be reached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// No HTTP answer from the Grid.
    #[error("Selenium Grid at {url} is unreachable: {detail}")]
    Unreachable { url: String, detail: String },
    /// The Grid answered a new-session request with a WebDriver error (no free slot, timeout, bad capabilities).
    #[error("Selenium Grid refused a browser ({status} {error}): {message}")]
    Refused { status: u16, error: String, message: String },
    /// No Grid slot came free within the server's `--grid-wait`.
    #[error("Selenium Grid has no free browser slot: waited {}s; retry after {retry_after}s", waited.as_secs_f64())]
    Full { waited: std::time::Duration, retry_after: u64 },
    /// The Grid gave a session but no `se:cdp` endpoint to drive it.
    #[error("Selenium Grid returned no se:cdp endpoint for session {session}")]
    NoCdp { session: String },
}

/// A request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    #[error("no session {id:?}")]
    SessionNotFound { id: String },
    #[error("session {id:?} has ended ({reason})")]
    SessionEnded { id: String, reason: EndReason },
    #[error("session {id:?} ended: its browser crashed or disconnected")]
    BrowserCrashed { id: String },
    #[error("session {id:?} is busy: {limit} requests are already queued; retry after one finishes")]
    Busy { id: String, limit: usize },
    #[error("the server already runs its maximum of {max} sessions")]
    TooManySessions { max: usize },
    #[error("missing or wrong bearer token")]
    Unauthorized,
    #[error("request headers exceed {limit} bytes")]
    HeadersTooLarge { limit: usize },
    #[error("{0}")]
    BadRequest(String),
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("starting a browser failed: {0}")]
    Launch(#[source] sightline_browser::BrowserError),
    /// The task that launched the browser panicked or was cancelled.
    #[error("starting a browser failed: {0}")]
    LaunchTask(#[source] tokio::task::JoinError),
    /// The launched browser's `DevToolsActivePort` file could not be read.
    #[error("starting a browser failed: reading DevToolsActivePort: {0}")]
    DevToolsPort(#[source] std::io::Error),
    /// The browser or the tool API answered without something a session needs (a profile, a tab).
    #[error("starting a browser failed: {0}")]
    Browser(&'static str),
    #[error(transparent)]
    Grid(#[from] GridError),
    #[error("{}", .0.message)]
    Tool(#[from] ToolError),
}

impl ServerError {
    /// The stable code.
    pub fn tool_code(&self) -> ToolCode {
        match self {
            ServerError::SessionNotFound { .. } => ToolCode::SessionNotFound,
            ServerError::SessionEnded { .. } => ToolCode::SessionEnded,
            ServerError::BrowserCrashed { .. } => ToolCode::BrowserCrashed,
            ServerError::Busy { .. } => ToolCode::Busy,
            ServerError::TooManySessions { .. } => ToolCode::TooManySessions,
            ServerError::Unauthorized => ToolCode::Unauthorized,
            ServerError::HeadersTooLarge { .. } => ToolCode::HeadersTooLarge,
            ServerError::BadRequest(_) => ToolCode::InvalidParams,
            ServerError::ShuttingDown => ToolCode::ShuttingDown,
            ServerError::Launch(_)
            | ServerError::LaunchTask(_)
            | ServerError::DevToolsPort(_)
            | ServerError::Browser(_) => ToolCode::BrowserError,
            ServerError::Grid(GridError::Unreachable { .. }) => ToolCode::GridUnreachable,
            ServerError::Grid(GridError::Refused { .. }) => ToolCode::GridRefused,
            ServerError::Grid(GridError::Full { .. }) => ToolCode::GridFull,
            ServerError::Grid(GridError::NoCdp { .. }) => ToolCode::GridNoCdp,
            ServerError::Tool(e) => e.code,
        }
    }

    /// The stable code string.
    pub fn code(&self) -> &'static str {
        self.tool_code().as_str()
    }

    /// The HTTP status that carries it.
    pub fn status(&self) -> StatusCode {
        status_of(self.tool_code())
    }

    /// Structured detail (the tool's own detail, the end reason, the Grid's answer).
    pub fn detail(&self) -> Option<Box<ErrorDetail>> {
        Some(Box::new(match self {
            ServerError::SessionEnded { reason, .. } => ErrorDetail::Reason { reason: reason.as_str().into() },
            ServerError::BrowserCrashed { .. } => {
                ErrorDetail::Reason { reason: EndReason::BrowserCrashed.as_str().into() }
            }
            ServerError::Busy { limit, .. } => ErrorDetail::Busy { queue_limit: *limit },
            ServerError::TooManySessions { max } => ErrorDetail::MaxSessions { max_sessions: *max },
            ServerError::Grid(GridError::Refused { status, error, .. }) => {
                ErrorDetail::GridRefused { status: *status, error: error.clone() }
            }
            ServerError::Grid(GridError::Full { waited, retry_after }) => {
                ErrorDetail::GridFull { waited_ms: waited.as_millis() as u64, retry_after_s: *retry_after }
            }
            ServerError::Tool(e) => return e.detail.clone(),
            _ => return None,
        }))
    }

    /// `{"error": {"code", "message", "detail"}}`: the body of every failed request.
    pub fn body(&self) -> Value {
        json!({ "error": { "code": self.code(), "message": self.to_string(), "detail": self.detail() } })
    }

    /// Seconds a client should wait before trying again (the `Retry-After` header), if any.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            ServerError::Grid(GridError::Full { retry_after, .. }) => Some(*retry_after),
            _ => None,
        }
    }

    /// As a tool error (for MCP results).
    pub fn into_tool_error(self) -> ToolError {
        match self {
            ServerError::Tool(e) => e,
            other => {
                ToolError::new(other.tool_code(), other.to_string()).with_detail_opt(other.detail()).with_source(other)
            }
        }
    }
}

/// The HTTP status of each stable code: its row of the `tool_codes!` table.
pub fn status_of(code: ToolCode) -> StatusCode {
    StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY)
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let mut r = (self.status(), axum::Json(self.body())).into_response();
        if matches!(self, ServerError::Unauthorized) {
            r.headers_mut()
                .insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        if let Some(s) = self.retry_after() {
            r.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(s));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_has_one_status_and_every_error_takes_its_codes() {
        for &c in ToolCode::ALL {
            let tool = ServerError::Tool(ToolError::new(c, "x"));
            assert_eq!(tool.status(), status_of(c), "{c}");
        }
        assert_eq!(ServerError::BrowserCrashed { id: "s".into() }.status(), StatusCode::NOT_FOUND);
        assert_eq!(ServerError::Tool(ToolError::new(ToolCode::BrowserCrashed, "x")).status(), StatusCode::NOT_FOUND);
        assert_eq!(ServerError::Busy { id: "s".into(), limit: 1 }.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(ServerError::Tool(ToolError::invalid("x")).status(), StatusCode::BAD_REQUEST);
        assert_eq!(ServerError::Tool(ToolError::new(ToolCode::BrowserError, "x")).status(), StatusCode::BAD_GATEWAY);
        assert_eq!(
            ServerError::Tool(ToolError::new(ToolCode::CapabilityExpired, "x")).status(),
            StatusCode::UNPROCESSABLE_ENTITY
        );
        assert_eq!(
            ServerError::Grid(GridError::NoCdp { session: "x".into() }).status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        // A server error handed to MCP keeps its code, and itself as the cause.
        let e = ServerError::SessionEnded { id: "s".into(), reason: EndReason::IdleTimeout }.into_tool_error();
        assert_eq!((e.code, &e.detail_json()["reason"]), (ToolCode::SessionEnded, &json!("idle_timeout")));
        assert!(std::error::Error::source(&e).is_some());
    }
}
