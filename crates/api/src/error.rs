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

/// A tool call failed. `code` is stable; match on it, not on the message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub detail: Value,
}

impl ToolError {
    pub fn new(code: &'static str, message: impl Into<String>) -> ToolError {
        ToolError { code, message: message.into(), detail: Value::Null }
    }
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new("invalid_params", message)
    }
    pub fn expired(what: &str, rule: Rule) -> ToolError {
        ToolError {
            code: "capability_expired",
            message: format!("{what} is no longer valid: {}", rule.explain()),
            detail: json!({ "rule": rule.as_str() }),
        }
    }
    pub fn proof(proof: Proof, message: impl Into<String>) -> ToolError {
        ToolError { code: "proof_failed", message: message.into(), detail: json!({ "proof": proof.as_str() }) }
    }
    pub fn unavailable(reference: &str, action: &str, offered: &[&str]) -> ToolError {
        ToolError {
            code: "browser_action_unavailable",
            message: format!("ref {reference} does not support {action}; it offers {}", offered.join(", ")),
            detail: json!({ "ref": reference, "requested": action, "actions": offered }),
        }
    }
    pub fn browser(e: impl std::fmt::Display) -> ToolError {
        ToolError::new("browser_error", e.to_string())
    }
}

impl From<sightline_browser::BrowserError> for ToolError {
    fn from(e: sightline_browser::BrowserError) -> Self {
        use sightline_browser::BrowserError as B;
        match e {
            B::NotInteractive { reason, .. } => {
                ToolError::new("element_not_interactive", format!("the element cannot be used: {reason}"))
            }
            B::NavigationFailed { url, reason } => {
                ToolError::new("navigation_failed", format!("navigation to {url} failed: {reason}"))
            }
            B::NoMatch { selector } => ToolError::new("not_found", format!("no element matches {selector:?}")),
            B::DialogOpen => ToolError::new(
                "dialog_open",
                "a JavaScript dialog (alert/confirm/prompt) is open and the page is paused: read it with get_state and answer it with act (click its OK or Cancel button)",
            ),
            other => ToolError::browser(other),
        }
    }
}
