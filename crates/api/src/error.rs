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

use serde_json::Value;
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

/// The table: `Variant => "wire", rpc CODE, http STATUS, "what it means"`. It generates
/// [`ToolCode`], [`ToolCode::ALL`] and each code's wire string, JSON-RPC code, HTTP status
/// (`serve`) and meaning (`sightline skills`), so a code cannot be added without all four.
macro_rules! tool_codes {
    ($( $(#[$doc:meta])* $variant:ident => $wire:literal, rpc $rpc:literal, http $http:literal, $meaning:literal; )*) => {
        /// The stable code of a tool error: one row of the `tool_codes!` table each.
        /// Front ends choose statuses by matching on it, never on messages.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ToolCode { $( $(#[$doc])* $variant, )* }

        impl ToolCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [ToolCode] = &[ $( ToolCode::$variant, )* ];

            /// The wire string (`data.code` in JSON-RPC, `error.code` over HTTP and MCP).
            pub fn as_str(self) -> &'static str {
                match self { $( ToolCode::$variant => $wire, )* }
            }

            /// The JSON-RPC 2.0 error code that carries it.
            pub fn rpc_code(self) -> i64 {
                match self { $( ToolCode::$variant => $rpc, )* }
            }

            /// The HTTP status `sightline serve` answers it with.
            pub fn http_status(self) -> u16 {
                match self { $( ToolCode::$variant => $http, )* }
            }

            /// What it means and what to do, for a model (`sightline skills`).
            pub fn meaning(self) -> &'static str {
                match self { $( ToolCode::$variant => $meaning, )* }
            }
        }
    };
}

tool_codes! {
    InvalidParams => "invalid_params", rpc -32602, http 400, "the params do not fit the tool; the message names the field";
    UnknownTool => "unknown_tool", rpc -32601, http 404, "no tool of that name";
    SessionNotFound => "session_not_found", rpc -32000, http 404, "no session of yours by that id (never issued, ended long ago, or another principal's)";
    TabNotFound => "tab_not_found", rpc -32000, http 404, "no such tab in the session (closed, or another session's)";
    SnapshotNotFound => "snapshot_not_found", rpc -32000, http 404, "no such snapshot or ref in the session";
    TargetMismatch => "target_mismatch", rpc -32000, http 422, "the target_id is not the session's current browser";
    CapabilityExpired => "capability_expired", rpc -32000, http 422, "the snapshot, ref or continuation was retired; `detail.rule` says by what: take a new snapshot";
    ProofFailed => "proof_failed", rpc -32000, http 422, "a re-proof before the action failed (`detail.proof`); nothing was delivered: take a new snapshot";
    BrowserActionUnavailable => "browser_action_unavailable", rpc -32000, http 422, "the ref does not offer that action (`detail.actions` lists what it offers)";
    ElementNotInteractive => "element_not_interactive", rpc -32000, http 422, "covered, disabled, removed or not visible; the message says which";
    NavigationFailed => "navigation_failed", rpc -32000, http 422, "the URL could not be loaded (or the egress policy refused it); the previous page is still there";
    NotFound => "not_found", rpc -32000, http 422, "what was asked for is not there (or a wait ran out)";
    DialogOpen => "dialog_open", rpc -32000, http 422, "a JavaScript dialog is open; answer it through get_state/act";
    BrowserError => "browser_error", rpc -32000, http 502, "the browser failed to do it";
    Cancelled => "cancelled", rpc -32000, http 422, "the client cancelled the call";
    /// A path named for an upload is outside the upload directory, missing, or uploads are off.
    FileRefused => "file_refused", rpc -32000, http 422, "a path outside the operator's --files directory, missing, or uploads are off";
    ProfileInUse => "profile_in_use", rpc -32000, http 422, "another Chromium holds the --profile directory";
    /// A `run` script threw (its line in the detail).
    ScriptError => "script_error", rpc -32000, http 422, "the run script threw; `detail.line` is its line, `detail.console` and `detail.actions` what it did";
    /// A `run` script hit its time, memory or browser-call limit and was stopped.
    ScriptLimit => "script_limit", rpc -32000, http 422, "the run script was stopped at its limit (`detail.limit`: time, memory or steps); raise timeout_s, memory_mb or max_steps, or do less";
    /// A replayed step's target is missing, ambiguous or no longer what was recorded.
    Drift => "drift", rpc -32000, http 422, "a replayed step's target is missing or ambiguous (`detail.cause`: step, kind, expected, found): the page changed";
    /// The session is handed over to a person (`request_human`): agent actions wait for the hand-back.
    HandedOver => "handed_over", rpc -32000, http 409, "a person has the session (request_human): wait_for_human, or cancel_human";
    /// `wait_for_human` ran out of time; the session stays handed over.
    HumanTimeout => "human_timeout", rpc -32000, http 408, "no hand-back yet; the session stays handed over: wait again or cancel_human";
    /// `wait_for_human` on a session nobody was asked to help (or whose hand-back was already collected).
    NotHandedOver => "not_handed_over", rpc -32000, http 409, "nobody was asked (request_human first), or the hand-back was already collected";
    /// No live view here: `request_human` needs `sightline serve`.
    LiveUnavailable => "live_unavailable", rpc -32000, http 501, "a person can take over only on `sightline serve`";
    /// A live-view ticket that is wrong, expired, revoked or already used up by a hand-back.
    TicketRefused => "ticket_refused", rpc -32000, http 403, "the live link is wrong, expired, revoked or already handed back";
    // Codes of the server front end (`sightline serve`), in the same vocabulary.
    SessionEnded => "session_ended", rpc -32000, http 404, "the session ended (`detail.reason`: deleted, idle_timeout, shutdown)";
    BrowserCrashed => "browser_crashed", rpc -32000, http 404, "the page or browser crashed or disconnected; open a new session";
    Busy => "busy", rpc -32000, http 429, "too many requests queued on the session; retry when one finishes";
    TooManySessions => "too_many_sessions", rpc -32000, http 503, "the server runs its maximum of sessions; close one";
    Unauthorized => "unauthorized", rpc -32000, http 401, "missing or wrong bearer token";
    HeadersTooLarge => "headers_too_large", rpc -32000, http 431, "the request's headers are too large";
    ShuttingDown => "shutting_down", rpc -32000, http 503, "the server is stopping";
    GridUnreachable => "grid_unreachable", rpc -32000, http 503, "Selenium Grid could not be reached";
    GridRefused => "grid_refused", rpc -32000, http 503, "Selenium Grid refused the new session (or its queue timed out)";
    GridFull => "grid_full", rpc -32000, http 503, "Selenium Grid has no free slot within --grid-wait; retry after `Retry-After`";
    GridNoCdp => "grid_no_cdp", rpc -32000, http 503, "the Grid's browser offers no CDP endpoint (se:cdp)";
}

impl ToolCode {
    /// The code of a wire string.
    pub fn from_wire(s: &str) -> Option<ToolCode> {
        ToolCode::ALL.iter().copied().find(|c| c.as_str() == s)
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

/// What a failed call's `detail` says: one shape per kind of error, as the wire
/// carries it (an object, its keys in order; `null` when there is nothing to add). Its JSON Schema is
/// the `detail` of every error the front ends document.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ErrorDetail {
    /// `capability_expired` (the rule that retired the id); `navigation_failed` by
    /// the egress policy (the rule that refused it).
    Rule { rule: String },
    /// `proof_failed`: the re-proof that failed.
    Proof { proof: String },
    /// `browser_action_unavailable`: what the ref offers instead.
    Unavailable {
        actions: Vec<String>,
        #[serde(rename = "ref")]
        reference: String,
        requested: String,
    },
    /// `profile_in_use`: the profile and who holds it.
    ProfileInUse { host: String, pid: i32, profile: String },
    /// `invalid_params` in a storage state: where, never the value.
    At { at: String },
    /// `file_refused`, `session_ended`, `browser_crashed`: the reason as a word.
    Reason { reason: String },
    /// `handed_over`: why, and how long ago.
    HandedOver { reason: String, since_s: u64 },
    /// `human_timeout`: how long the call waited.
    Waited { timeout_s: f64 },
    /// `drift`: the replayed step, missing or ambiguous, what it expected and what is there.
    Drift { expected: sightline_page::semantic::locate::Locator, found: Vec<Found>, kind: DriftKind, step: u64 },
    /// A `run` batch's action failed: which, what ran before, and its own error's detail.
    Step {
        actions: Vec<crate::tools::Performed>,
        /// The failed action's own detail (any shape above).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        cause: Option<Box<ErrorDetail>>,
        step: usize,
    },
    /// A `run` script threw or was stopped: its line, console and actions, and the
    /// detail of the error it threw (the script's own value when it threw one).
    Script {
        actions: Vec<crate::tools::Performed>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cause: Option<Value>,
        console: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
    },
    /// `script_limit`: which limit (time, memory, steps), with what the script did.
    Limit { actions: Vec<crate::tools::Performed>, console: Vec<String>, limit: String },
    /// `busy`: the session's queue bound.
    Busy { queue_limit: usize },
    /// `too_many_sessions`: the server's bound.
    MaxSessions { max_sessions: usize },
    /// `grid_refused`: the Grid's status and error.
    GridRefused { error: String, status: u16 },
    /// `grid_full`: how long the request waited and when to try again.
    GridFull { retry_after_s: u64, waited_ms: u64 },
    /// A session handle that is missing or not the caller's: the caller's open handles.
    Handles {
        #[serde(skip_serializing_if = "Option::is_none")]
        needs: Option<String>,
        open: Vec<String>,
    },
}

/// How a replayed step drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    Missing,
    Ambiguous,
}

/// A node a drift found instead of the expected one.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Found {
    pub name: String,
    pub near: Option<String>,
    pub role: String,
}

impl ErrorDetail {
    /// The detail as JSON, for a reader that goes by key.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
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
    pub detail: Option<Box<ErrorDetail>>,
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
        ToolError { code, message: message.into(), detail: None, source: None }
    }
    /// The same error with structured detail.
    pub fn with_detail(mut self, detail: ErrorDetail) -> ToolError {
        self.detail = Some(Box::new(detail));
        self
    }
    /// The same error with this detail, if any.
    pub fn with_detail_opt(mut self, detail: Option<Box<ErrorDetail>>) -> ToolError {
        self.detail = detail;
        self
    }
    /// The detail as JSON (`null` without one), for a reader that goes by key.
    pub fn detail_json(&self) -> Value {
        self.detail.as_deref().map(ErrorDetail::to_json).unwrap_or(Value::Null)
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
            .with_detail(ErrorDetail::Rule { rule: rule.as_str().into() })
    }
    pub fn proof(proof: Proof, message: impl Into<String>) -> ToolError {
        ToolError::new(ToolCode::ProofFailed, message).with_detail(ErrorDetail::Proof { proof: proof.as_str().into() })
    }
    pub fn unavailable(reference: &str, action: &str, offered: &[&str]) -> ToolError {
        ToolError::new(
            ToolCode::BrowserActionUnavailable,
            format!("ref {reference} does not support {action}; it offers {}", offered.join(", ")),
        )
        .with_detail(ErrorDetail::Unavailable {
            reference: reference.into(),
            requested: action.into(),
            actions: offered.iter().map(|s| s.to_string()).collect(),
        })
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
                .with_detail(ErrorDetail::ProfileInUse {
                    profile: dir.display().to_string(),
                    host: host.clone(),
                    pid: *pid,
                }),
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
                ToolError::invalid(format!("storage_state: {e}")).with_detail(ErrorDetail::At { at }).with_source(e)
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
        ToolError::new(ToolCode::FileRefused, e.to_string())
            .with_detail(ErrorDetail::Reason { reason: reason.into() })
            .with_source(e)
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
        for c in ToolCode::ALL {
            assert!((400..600).contains(&c.http_status()), "{c}: an HTTP error status");
            assert!(!c.meaning().is_empty(), "{c} says what it means");
            assert_eq!(ToolCode::from_wire(c.as_str()), Some(*c));
        }
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
