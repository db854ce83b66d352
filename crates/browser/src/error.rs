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
    NavigationFailed { url: String, reason: String },
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
}

impl BrowserError {
    /// True when the browser or the tab is gone and the session cannot go on.
    pub fn is_fatal(&self) -> bool {
        matches!(self, BrowserError::Crashed | BrowserError::Cdp(CdpError::Disconnected))
    }
}
