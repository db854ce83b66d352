//! `DOMSnapshot`: the capture. The reply is kept raw: the page model parses it once.

use serde::Serialize;
use serde_json::value::RawValue;

use super::{raw_reply, Command};

/// `DOMSnapshot.captureSnapshot`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureSnapshot<'a> {
    pub computed_styles: &'a [&'a str],
    pub include_paint_order: bool,
    #[serde(rename = "includeDOMRects")]
    pub include_dom_rects: bool,
}

impl Command for CaptureSnapshot<'_> {
    const METHOD: &'static str = "DOMSnapshot.captureSnapshot";
    type Response = Box<RawValue>;
    raw_reply!();
}
