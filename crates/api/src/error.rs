//! Tool errors: a stable code string, a message, and structured detail.

use serde_json::{json, Value};

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
    GridSetup,
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
        ToolCode::GridSetup,
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
            ToolCode::GridSetup => "grid_setup",
        }
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

impl PartialEq<&str> for ToolCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for ToolCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// A tool call failed. `code` is stable; match on it, not on the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolError {
    pub code: ToolCode,
    pub message: String,
    pub detail: Value,
}

impl ToolError {
    pub fn new(code: ToolCode, message: impl Into<String>) -> ToolError {
        ToolError { code, message: message.into(), detail: Value::Null }
    }
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolCode::InvalidParams, message)
    }
    pub fn expired(what: &str, rule: Rule) -> ToolError {
        ToolError {
            code: ToolCode::CapabilityExpired,
            message: format!("{what} is no longer valid: {}", rule.explain()),
            detail: json!({ "rule": rule.as_str() }),
        }
    }
    pub fn proof(proof: Proof, message: impl Into<String>) -> ToolError {
        ToolError { code: ToolCode::ProofFailed, message: message.into(), detail: json!({ "proof": proof.as_str() }) }
    }
    pub fn unavailable(reference: &str, action: &str, offered: &[&str]) -> ToolError {
        ToolError {
            code: ToolCode::BrowserActionUnavailable,
            message: format!("ref {reference} does not support {action}; it offers {}", offered.join(", ")),
            detail: json!({ "ref": reference, "requested": action, "actions": offered }),
        }
    }
    pub fn browser(e: impl std::fmt::Display) -> ToolError {
        ToolError::new(crate::error::ToolCode::BrowserError, e.to_string())
    }
}

impl From<sightline_browser::BrowserError> for ToolError {
    fn from(e: sightline_browser::BrowserError) -> Self {
        use sightline_browser::BrowserError as B;
        match e {
            B::NotInteractive { reason, .. } | B::Refused { reason } => {
                ToolError::new(crate::error::ToolCode::ElementNotInteractive, format!("the element cannot be used: {reason}"))
            }
            B::NavigationFailed { url, reason } => {
                ToolError::new(crate::error::ToolCode::NavigationFailed, format!("navigation to {url} failed: {reason}"))
            }
            B::NoMatch { selector } => ToolError::new(crate::error::ToolCode::NotFound, format!("no element matches {selector:?}")),
            B::DialogOpen => ToolError::new(
                crate::error::ToolCode::DialogOpen,
                "a JavaScript dialog (alert/confirm/prompt) is open and the page is paused: read it with get_state and answer it with act (click its OK or Cancel button)",
            ),
            B::Cdp(sightline_browser::CdpError::ProfileInUse { dir, host, pid }) => ToolError {
                code: crate::error::ToolCode::ProfileInUse,
                message: sightline_browser::CdpError::ProfileInUse { dir: dir.clone(), host: host.clone(), pid }.to_string(),
                detail: json!({ "profile": dir, "host": host, "pid": pid }),
            },
            other => ToolError::browser(other),
        }
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
}
