//! Identity newtypes for the protocol's ids, so a target id cannot be passed
//! where a session id or a frame id is expected. Each serializes exactly as
//! the bare id (`#[serde(transparent)]`).

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as the protocol spells it.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }
    };
}

string_id!(
    /// A target (page, iframe, worker): `Target.TargetID`.
    TargetId
);
string_id!(
    /// A flattened target session (`Target.attachToTarget {flatten: true}`): `Target.SessionID`.
    SessionId
);
string_id!(
    /// A frame: `Page.FrameId`.
    FrameId
);
string_id!(
    /// A browser context (its own cookies and storage): `Browser.BrowserContextID`.
    BrowserContextId
);

/// A DOM node's stable id in its renderer: `DOM.BackendNodeId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BackendNodeId(pub i64);

impl fmt::Display for BackendNodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A JavaScript execution context (a frame's main world, or an isolated world):
/// `Runtime.ExecutionContextId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExecutionContextId(pub i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_bare_protocol_values_on_the_wire() {
        assert_eq!(serde_json::to_string(&TargetId::from("T1")).unwrap(), r#""T1""#);
        assert_eq!(serde_json::to_string(&BackendNodeId(7)).unwrap(), "7");
        let s: SessionId = serde_json::from_str(r#""S""#).unwrap();
        assert_eq!(s, SessionId::from("S"));
    }
}
