use sightline_cdp::CdpError;
use sightline_page::ElementIndex;

/// Why an element cannot take the requested action.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    Disabled,
    ReadOnly,
    /// Removed from the document since the state was captured.
    Detached,
    /// No longer laid out in the viewport.
    Hidden,
    /// Another element is on top at the click point.
    Covered {
        by: String,
    },
    /// The element does not support the action (e.g. typing into a button).
    Unsupported {
        action: &'static str,
        element: String,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Disabled => write!(f, "it is disabled"),
            Refusal::ReadOnly => write!(f, "it is read-only"),
            Refusal::Detached => write!(f, "it was removed from the page"),
            Refusal::Hidden => write!(f, "it is no longer visible"),
            Refusal::Covered { by } => write!(f, "it is covered by {by}"),
            Refusal::Unsupported { action, element } => write!(f, "{element} does not support {action}"),
        }
    }
}

/// Why a navigation did not commit a document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadFailure {
    /// A network error, as Chromium names it (`net::ERR_CONNECTION_REFUSED`).
    Net(String),
    /// Sightline's egress policy refused the request; `rule` names the rule.
    Refused { rule: String },
    /// The load did not finish within the tab's load timeout.
    TimedOut(std::time::Duration),
    /// Chromium's own words (a protocol error or `Page.navigate`'s `errorText`).
    Other(String),
}

impl LoadFailure {
    /// `Fetch.ErrorReason` (`ConnectionRefused`) as Chromium's net error name (`net::ERR_CONNECTION_REFUSED`).
    pub fn from_fetch_reason(reason: &str) -> LoadFailure {
        let mut out = String::from("net::ERR_");
        for (i, c) in reason.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        }
        LoadFailure::Net(out)
    }

    /// The failure Sightline's egress proxy reports in its own answer's headers
    /// (a connection it could not make, or a request its policy refused), if any.
    pub fn from_proxy_headers<'a>(header: impl Fn(&str) -> Option<&'a str>) -> Option<LoadFailure> {
        header("x-sightline-egress-error")
            .map(|e| LoadFailure::Net(format!("net::{e}")))
            .or_else(|| header("x-sightline-refused").map(|r| LoadFailure::Refused { rule: r.to_string() }))
    }
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadFailure::Net(name) | LoadFailure::Other(name) => f.write_str(name),
            LoadFailure::Refused { rule } => write!(f, "refused by the egress policy (rule {rule})"),
            LoadFailure::TimedOut(after) => write!(f, "timed out after {after:?}"),
        }
    }
}

/// Errors of the browser layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    #[error(transparent)]
    Cdp(#[from] CdpError),
    #[error("element {index} cannot be used: {reason}")]
    NotInteractive { index: ElementIndex, reason: Refusal },
    /// An element found by a CSS selector (it has no element index) cannot be used.
    #[error("the element cannot be used: {reason}")]
    Refused { reason: Refusal },
    #[error("option {option} does not belong to select {select}")]
    ForeignOption { select: ElementIndex, option: ElementIndex },
    #[error("navigation to {url} failed: {reason}")]
    NavigationFailed { url: String, reason: LoadFailure },
    #[error("no element matches {selector:?}")]
    NoMatch { selector: String },
    #[error("the page's script threw: {0}")]
    PageScript(String),
    #[error(
        "the page is not responding: its scripts kept the page busy without end, so it was frozen; navigate elsewhere"
    )]
    Unresponsive,
    #[error("the page crashed")]
    Crashed,
    /// The page closed itself (`window.close()`) or its target was closed.
    #[error("the tab was closed")]
    TabClosed,
    /// A JavaScript dialog is open; the page is paused until it is answered.
    #[error("a JavaScript dialog is open; answer it first")]
    DialogOpen,
    #[error("unexpected reply from the browser: {0}")]
    Unexpected(String),
    /// A key or chord `press_key` cannot press.
    #[error(transparent)]
    Key(#[from] crate::keys::KeyError),
}

impl BrowserError {
    /// True when the browser or the tab is gone and the session cannot go on.
    pub fn is_fatal(&self) -> bool {
        matches!(self, BrowserError::Crashed | BrowserError::Cdp(CdpError::Disconnected))
    }
}

#[cfg(test)]
mod tests {
    use super::LoadFailure;

    #[test]
    fn load_failures_read_as_chromium_and_the_policy_word_them() {
        assert_eq!(LoadFailure::from_fetch_reason("ConnectionRefused").to_string(), "net::ERR_CONNECTION_REFUSED");
        assert_eq!(LoadFailure::from_fetch_reason("Failed").to_string(), "net::ERR_FAILED");
        assert_eq!(
            LoadFailure::Refused { rule: "block-private".into() }.to_string(),
            "refused by the egress policy (rule block-private)"
        );
    }
}
