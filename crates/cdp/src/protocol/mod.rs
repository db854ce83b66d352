//! The commands and events Sightline uses, written by hand (no generated
//! protocol crate): each command is a struct that serializes to its params,
//! names its method and its reply type, so `Client::execute(&cmd)` is typed
//! end to end and a misspelled method or field does not compile.
//!
//! Only the fields we send or read are declared; unknown reply fields are
//! ignored. Replies that the page model parses itself (the multi-megabyte
//! `DOMSnapshot.captureSnapshot` and `Accessibility.getFullAXTree`) come back
//! as [`RawValue`], so they are parsed once, by their reader.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub mod accessibility;
pub mod browser;
pub mod dom;
pub mod dom_snapshot;
pub mod emulation;
pub mod fetch;
pub mod input;
pub mod inspector;
pub mod network;
pub mod page;
pub mod runtime;
pub mod storage;
pub mod target;

/// A CDP command: the struct is its params.
pub trait Command: Serialize {
    /// `Domain.method`.
    const METHOD: &'static str;
    /// What the reply's `result` decodes to.
    type Response: DeserializeOwned;

    /// Decode the reply's `result`. Raw replies override this to skip the parse
    /// (and hand the box back as is, hence the box here).
    #[allow(clippy::boxed_local)]
    fn decode(raw: Box<RawValue>) -> Result<Self::Response, serde_json::Error> {
        serde_json::from_str(raw.get())
    }
}

/// The params of a CDP event we listen to.
pub trait EventParams: DeserializeOwned {
    /// `Domain.event`.
    const METHOD: &'static str;
}

/// The reply of a command that returns nothing we read.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Empty {}

/// Declare a command with no params and no reply we read.
macro_rules! unit_command {
    ($(#[$doc:meta])* $name:ident = $method:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, serde::Serialize)]
        pub struct $name {}

        impl $crate::protocol::Command for $name {
            const METHOD: &'static str = $method;
            type Response = $crate::protocol::Empty;
        }
    };
}
pub(crate) use unit_command;

/// Declare a command whose reply is kept raw (parsed once by its reader).
macro_rules! raw_reply {
    () => {
        fn decode(raw: Box<serde_json::value::RawValue>) -> Result<Self::Response, serde_json::Error> {
            Ok(raw)
        }
    };
}
pub(crate) use raw_reply;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_serialize_to_their_protocol_params() {
        let v = serde_json::to_value(dom::GetNodeForLocation {
            x: 3,
            y: 4,
            include_user_agent_shadow_dom: false,
            ignore_pointer_events_none: true,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({ "x": 3, "y": 4, "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": true })
        );
        let v = serde_json::to_value(dom_snapshot::CaptureSnapshot {
            computed_styles: &["display"],
            include_paint_order: true,
            include_dom_rects: true,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({ "computedStyles": ["display"], "includePaintOrder": true, "includeDOMRects": true })
        );
        let v = serde_json::to_value(runtime::Evaluate::new("1").by_value()).unwrap();
        assert_eq!(v, serde_json::json!({ "expression": "1", "returnByValue": true }));
        let v = serde_json::to_value(target::CreateTarget { url: "about:blank", browser_context_id: None }).unwrap();
        assert_eq!(v, serde_json::json!({ "url": "about:blank" }));
        assert_eq!(serde_json::to_value(page::Enable {}).unwrap(), serde_json::json!({}));
    }

    #[test]
    fn events_decode_from_their_protocol_params() {
        let e: target::AttachedToTarget = serde_json::from_str(
            r#"{"sessionId":"S","targetInfo":{"targetId":"T","type":"iframe","url":"x"},"waitingForDebugger":true}"#,
        )
        .unwrap();
        assert_eq!(
            (e.session_id.as_str(), e.target_info.target_id.as_str(), e.target_info.kind.as_str()),
            ("S", "T", "iframe")
        );
        let e: page::FrameNavigated =
            serde_json::from_str(r#"{"frame":{"id":"F","loaderId":"L","url":"u"},"type":"Navigation"}"#).unwrap();
        assert!(e.frame.parent_id.is_none());
    }
}
