//! Tool errors: a stable code string, a message, structured detail, and the cause.
//!
//! This is the one place where internal errors become wire codes: the `From`
//! conversions below map each error of the layers beneath (browser, CDP,
//! storage, files, downloads, action validation) to a [`ToolCode`] by its
//! variant, keeping the original error as the [`std::error::Error::source`];
//! [`ToolCode::as_str`] is the wire string and [`ToolCode::rpc_code`] the
//! JSON-RPC code. Front ends (the HTTP status in `sightline-server`) match
//! on the code, never on a message.

use std::sync::Arc;

use serde_json::{json, Value};
use sightline_browser::{BrowserError, CdpError, DownloadError, FileError, StorageError};

/// Which lifetime rule invalidated a capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// A newer snapshot of the tab was taken.
    NewerSnapshot,
    /// The tab navigated since the snapshot.
    Navigation,
    /// The browser was reconnected or replaced.
    TargetGeneration,
    /// The driver session ended.
    SessionEnded,
    /// The continuation was already used.
    ContinuationUsed,
    /// The continuation belongs to another session, target, tab or snapshot.
    ContinuationForeign,
    /// The tab was closed.
    TabClosed,
}

impl Rule {
    pub fn as_str(&self) -> &'static str {
        match self {
            Rule::NewerSnapshot => "newer_snapshot",
            Rule::Navigation => "navigation",
            Rule::TargetGeneration => "target_generation",
            Rule::SessionEnded => "session_ended",
            Rule::ContinuationUsed => "continuation_used",
            Rule::ContinuationForeign => "continuation_foreign",
            Rule::TabClosed => "tab_closed",
        }
    }

    fn explain(&self) -> &'static str {
        match self {
            Rule::NewerSnapshot => "a newer snapshot of this tab replaced it; use the refs of the latest snapshot",
            Rule::Navigation => "the tab navigated since the snapshot; take a new snapshot",
            Rule::TargetGeneration => {
                "the browser was reconnected or replaced; use the new target_id from bind_browser"
            }
            Rule::SessionEnded => "the driver session ended and its capabilities are gone",
            Rule::ContinuationUsed => "continuations are single-use",
            Rule::ContinuationForeign => "it belongs to another session, target, tab or snapshot",
            Rule::TabClosed => "the tab was closed",
        }
    }
}

/// Which re-proof failed before a mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    Binding,
    TabTarget,
    FrameLoader,
    NodeLiveness,
}

impl Proof {
    pub fn as_str(&self) -> &'static str {
        match self {
            Proof::Binding => "binding",
            Proof::TabTarget => "tab_target",
            Proof::FrameLoader => "frame_loader",
            Proof::NodeLiveness => "node_liveness",
        }
    }
}

/// The stable code of a tool error: one wire string and one JSON-RPC code each.
/// Front ends choose statuses by matching on it, never on messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolCode {
    InvalidParams,
    UnknownTool,
    SessionNotFound,
    TabNotFound,
    SnapshotNotFound,
    TargetMismatch,
    CapabilityExpired,
    ProofFailed,
    BrowserActionUnavailable,
    ElementNotInteractive,
    NavigationFailed,
    NotFound,
    DialogOpen,
    BrowserError,
    Cancelled,
    /// A path named for an upload is outside the upload directory, missing, or uploads are off.
    FileRefused,
    ProfileInUse,
    /// A `run` script threw (its line in the detail).
    ScriptError,
    /// A `run` script hit its time, memory or browser-call limit and was stopped.
    ScriptLimit,
    /// A replayed step's target is missing, ambiguous or no longer what was recorded.
    Drift,
    /// The session is handed over to a person (`request_human`): agent actions wait for the hand-back.
    HandedOver,
    /// `wait_for_human` ran out of time; the session stays handed over.
    HumanTimeout,
    /// `wait_for_human` on a session nobody was asked to help (or whose hand-back was already collected).
    NotHandedOver,
    /// No live view here: `request_human` needs `sightline serve`.
    LiveUnavailable,
    /// A live-view ticket that is wrong, expired, revoked or already used up by a hand-back.
    TicketRefused,
    // Codes of the server front end (`sightline serve`), in the same vocabulary.
    SessionEnded,
    BrowserCrashed,
    Busy,
    TooManySessions,
    Unauthorized,
    HeadersTooLarge,
    ShuttingDown,
    GridUnreachable,
    GridRefused,
    GridFull,
    GridNoCdp,
}

impl ToolCode {
    /// Every code, for documentation and tests.
    pub const ALL: &'static [ToolCode] = &[
        ToolCode::InvalidParams,
        ToolCode::UnknownTool,
        ToolCode::SessionNotFound,
        ToolCode::TabNotFound,
        ToolCode::SnapshotNotFound,
        ToolCode::TargetMismatch,
        ToolCode::CapabilityExpired,
        ToolCode::ProofFailed,
        ToolCode::BrowserActionUnavailable,
        ToolCode::ElementNotInteractive,
        ToolCode::NavigationFailed,
        ToolCode::NotFound,
        ToolCode::DialogOpen,
        ToolCode::BrowserError,
        ToolCode::Cancelled,
        ToolCode::FileRefused,
        ToolCode::ProfileInUse,
        ToolCode::ScriptError,
        ToolCode::ScriptLimit,
        ToolCode::Drift,
        ToolCode::HandedOver,
        ToolCode::HumanTimeout,
        ToolCode::NotHandedOver,
        ToolCode::LiveUnavailable,
        ToolCode::TicketRefused,
        ToolCode::SessionEnded,
        ToolCode::BrowserCrashed,
        ToolCode::Busy,
        ToolCode::TooManySessions,
        ToolCode::Unauthorized,
        ToolCode::HeadersTooLarge,
        ToolCode::ShuttingDown,
        ToolCode::GridUnreachable,
        ToolCode::GridRefused,
        ToolCode::GridFull,
        ToolCode::GridNoCdp,
    ];

    /// The wire string (`data.code` in JSON-RPC, `error.code` over HTTP and MCP).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCode::InvalidParams => "invalid_params",
            ToolCode::UnknownTool => "unknown_tool",
            ToolCode::SessionNotFound => "session_not_found",
            ToolCode::TabNotFound => "tab_not_found",
            ToolCode::SnapshotNotFound => "snapshot_not_found",
            ToolCode::TargetMismatch => "target_mismatch",
            ToolCode::CapabilityExpired => "capability_expired",
            ToolCode::ProofFailed => "proof_failed",
            ToolCode::BrowserActionUnavailable => "browser_action_unavailable",
            ToolCode::ElementNotInteractive => "element_not_interactive",
            ToolCode::NavigationFailed => "navigation_failed",
            ToolCode::NotFound => "not_found",
            ToolCode::DialogOpen => "dialog_open",
            ToolCode::BrowserError => "browser_error",
            ToolCode::Cancelled => "cancelled",
            ToolCode::FileRefused => "file_refused",
            ToolCode::ProfileInUse => "profile_in_use",
            ToolCode::ScriptError => "script_error",
            ToolCode::ScriptLimit => "script_limit",
            ToolCode::Drift => "drift",
            ToolCode::HandedOver => "handed_over",
            ToolCode::HumanTimeout => "human_timeout",
            ToolCode::NotHandedOver => "not_handed_over",
            ToolCode::LiveUnavailable => "live_unavailable",
            ToolCode::TicketRefused => "ticket_refused",
            ToolCode::SessionEnded => "session_ended",
            ToolCode::BrowserCrashed => "browser_crashed",
            ToolCode::Busy => "busy",
            ToolCode::TooManySessions => "too_many_sessions",
            ToolCode::Unauthorized => "unauthorized",
            ToolCode::HeadersTooLarge => "headers_too_large",
            ToolCode::ShuttingDown => "shutting_down",
            ToolCode::GridUnreachable => "grid_unreachable",
            ToolCode::GridRefused => "grid_refused",
            ToolCode::GridFull => "grid_full",
            ToolCode::GridNoCdp => "grid_no_cdp",
        }
    }

    /// The code of a wire string.
    pub fn from_wire(s: &str) -> Option<ToolCode> {
        ToolCode::ALL.iter().copied().find(|c| c.as_str() == s)
    }

    /// The JSON-RPC 2.0 error code that carries it.
    pub fn rpc_code(self) -> i64 {
        match self {
            ToolCode::InvalidParams => -32602,
            ToolCode::UnknownTool => -32601,
            _ => -32000,
        }
    }
}

impl std::fmt::Display for ToolCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ToolCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The cause of a tool error, shared so the error stays `Clone`.
pub type Cause = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// A tool call failed. `code` is stable; match on it, not on the message.
/// The error it came from, if any, is its [`std::error::Error::source`]
/// (equality ignores it: two errors are equal when their code, message and
/// detail are).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolError {
    pub code: ToolCode,
    pub message: String,
    pub detail: Value,
    #[source]
    source: Option<Cause>,
}

impl PartialEq for ToolError {
    fn eq(&self, other: &ToolError) -> bool {
        (self.code, &self.message, &self.detail) == (other.code, &other.message, &other.detail)
    }
}

impl ToolError {
    pub fn new(code: ToolCode, message: impl Into<String>) -> ToolError {
        ToolError { code, message: message.into(), detail: Value::Null, source: None }
    }
    /// The same error with structured detail.
    pub fn with_detail(mut self, detail: Value) -> ToolError {
        self.detail = detail;
        self
    }
    /// The same error caused by `e`.
    pub fn with_source(mut self, e: impl std::error::Error + Send + Sync + 'static) -> ToolError {
        self.source = Some(Arc::new(e));
        self
    }
    /// The error it came from, typed: `e.cause::<BrowserError>()`.
    pub fn cause<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.source.as_deref().and_then(|e| e.downcast_ref::<E>())
    }
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolCode::InvalidParams, message)
    }
    pub fn expired(what: &str, rule: Rule) -> ToolError {
        ToolError::new(ToolCode::CapabilityExpired, format!("{what} is no longer valid: {}", rule.explain()))
            .with_detail(json!({ "rule": rule.as_str() }))
    }
    pub fn proof(proof: Proof, message: impl Into<String>) -> ToolError {
        ToolError::new(ToolCode::ProofFailed, message).with_detail(json!({ "proof": proof.as_str() }))
    }
    pub fn unavailable(reference: &str, action: &str, offered: &[&str]) -> ToolError {
        ToolError::new(
            ToolCode::BrowserActionUnavailable,
            format!("ref {reference} does not support {action}; it offers {}", offered.join(", ")),
        )
        .with_detail(json!({ "ref": reference, "requested": action, "actions": offered }))
    }
    /// A reply that could not be encoded as JSON (a bug, not the caller's fault).
    pub fn encoding(e: serde_json::Error) -> ToolError {
        ToolError::new(ToolCode::BrowserError, format!("encoding the reply: {e}")).with_source(e)
    }
}

// How internal errors become tool codes: by variant, the error kept as the cause.

impl From<BrowserError> for ToolError {
    fn from(e: BrowserError) -> Self {
        use BrowserError as B;
        let error = match &e {
            B::NotInteractive { reason, .. } | B::Refused { reason } => {
                ToolError::new(ToolCode::ElementNotInteractive, format!("the element cannot be used: {reason}"))
            }
            B::NavigationFailed { url, reason } => {
                ToolError::new(ToolCode::NavigationFailed, format!("navigation to {url} failed: {reason}"))
            }
            B::NoMatch { selector } => ToolError::new(ToolCode::NotFound, format!("no element matches {selector:?}")),
            B::Key(k) => ToolError::new(ToolCode::InvalidParams, format!("'key': {k}")),
            B::DialogOpen => ToolError::new(
                ToolCode::DialogOpen,
                "a JavaScript dialog (alert/confirm/prompt) is open and the page is paused: read it with get_state and answer it with act (click its OK or Cancel button)",
            ),
            B::Cdp(CdpError::ProfileInUse { dir, host, pid }) => ToolError::new(ToolCode::ProfileInUse, e.to_string())
                .with_detail(json!({ "profile": dir, "host": host, "pid": pid })),
            // The page's renderer or the browser connection is gone: the session cannot go on.
            B::Crashed | B::Cdp(CdpError::Disconnected) => ToolError::new(ToolCode::BrowserCrashed, e.to_string()),
            _ => ToolError::new(ToolCode::BrowserError, e.to_string()),
        };
        error.with_source(e)
    }
}

impl From<CdpError> for ToolError {
    fn from(e: CdpError) -> Self {
        BrowserError::Cdp(e).into()
    }
}

impl From<crate::EnvError> for ToolError {
    fn from(e: crate::EnvError) -> Self {
        match e {
            crate::EnvError::Browser(b) => b.into(),
        }
    }
}

impl From<DownloadError> for ToolError {
    fn from(e: DownloadError) -> Self {
        match e {
            DownloadError::Browser(b) => b.into(),
            e => ToolError::new(ToolCode::BrowserError, e.to_string()).with_source(e),
        }
    }
}

/// A storage state that is wrong is `invalid_params` naming where (never a
/// value); the browser failing to take or give one is its own error.
impl From<StorageError> for ToolError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Browser(b) => b.into(),
            StorageError::Invalid { ref at, .. } => {
                let at = at.clone();
                ToolError::invalid(format!("storage_state: {e}")).with_detail(json!({ "at": at })).with_source(e)
            }
            e if e.is_bad_input() => ToolError::invalid(format!("storage_state: {e}")).with_source(e),
            e => ToolError::new(ToolCode::BrowserError, e.to_string()).with_source(e),
        }
    }
}

/// A path refusal: `file_refused`, with the reason as a word.
impl From<FileError> for ToolError {
    fn from(e: FileError) -> Self {
        let reason = match &e {
            FileError::NoDirectory => "uploads_off",
            FileError::Outside { .. } => "outside",
            FileError::Missing { .. } => "missing",
            FileError::NotAFile { .. } => "not_a_file",
            FileError::Empty => "empty",
            _ => "unusable",
        };
        ToolError::new(ToolCode::FileRefused, e.to_string()).with_detail(json!({ "reason": reason })).with_source(e)
    }
}

/// A field that fails the protocol's validation: `invalid_params` with its message.
impl From<crate::ValidationError> for ToolError {
    fn from(e: crate::ValidationError) -> Self {
        ToolError::invalid(e.message.clone()).with_source(e)
    }
}

/// The browser's screenshot was not base64.
impl From<base64::DecodeError> for ToolError {
    fn from(e: base64::DecodeError) -> Self {
        ToolError::new(ToolCode::BrowserError, e.to_string()).with_source(e)
    }
}

/// The marks could not be drawn on the screenshot.
impl From<sightline_page::DrawError> for ToolError {
    fn from(e: sightline_page::DrawError) -> Self {
        ToolError::new(ToolCode::BrowserError, e.to_string()).with_source(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_has_one_wire_string_and_an_rpc_code() {
        let mut seen = std::collections::HashSet::new();
        for c in ToolCode::ALL {
            assert!(seen.insert(c.as_str()), "{c} twice");
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
            assert!(c.rpc_code() <= -32000);
        }
        assert_eq!(ToolCode::InvalidParams.rpc_code(), -32602);
        assert_eq!(ToolCode::UnknownTool.rpc_code(), -32601);
        let e: ToolError = sightline_browser::BrowserError::DialogOpen.into();
        assert_eq!(e.code, ToolCode::DialogOpen);
    }

    #[test]
    fn a_crash_is_its_own_code_and_the_cause_is_kept() {
        use std::error::Error;
        let e: ToolError = BrowserError::Cdp(CdpError::Disconnected).into();
        assert_eq!(e.code, ToolCode::BrowserCrashed);
        assert!(matches!(e.cause::<BrowserError>(), Some(BrowserError::Cdp(CdpError::Disconnected))));
        assert!(e.source().is_some());
        let e: ToolError = BrowserError::Crashed.into();
        assert_eq!(e.code, ToolCode::BrowserCrashed);
        let e: ToolError = BrowserError::Unresponsive.into();
        assert_eq!(e.code, ToolCode::BrowserError);
        // Equality is code, message and detail; the cause does not count.
        assert_eq!(e.clone(), ToolError::new(ToolCode::BrowserError, BrowserError::Unresponsive.to_string()));
    }
}
