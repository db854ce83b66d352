//! The page model's input: what one capture of a tab holds.
//!
//! The snapshot types mirror `DOMSnapshot.captureSnapshot`'s reply closely enough
//! to deserialize it directly, so a recorded capture (JSON) is a unit-test input.

use serde::{Deserialize, Serialize};

/// The computed styles the model needs, in the order it reads them. The browser
/// layer passes exactly this list to `DOMSnapshot.captureSnapshot`.
pub const COMPUTED_STYLES: &[&str] = &[
    "display",
    "visibility",
    "opacity",
    "cursor",
    "pointer-events",
    "overflow-x",
    "overflow-y",
    "position",
    "white-space",
    "background-color",
    "background-image",
];

pub(crate) const S_DISPLAY: usize = 0;
pub(crate) const S_VISIBILITY: usize = 1;
pub(crate) const S_OPACITY: usize = 2;
pub(crate) const S_CURSOR: usize = 3;
pub(crate) const S_POINTER_EVENTS: usize = 4;
pub(crate) const S_OVERFLOW_X: usize = 5;
pub(crate) const S_OVERFLOW_Y: usize = 6;
pub(crate) const S_POSITION: usize = 7;
pub(crate) const S_WHITE_SPACE: usize = 8;
pub(crate) const S_BACKGROUND_COLOR: usize = 9;
pub(crate) const S_BACKGROUND_IMAGE: usize = 10;

/// One capture of a tab: the main frame's snapshot plus one per out-of-process frame.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capture {
    /// Layout viewport size in CSS pixels.
    pub viewport: Viewport,
    /// `frames[0]` is the page target; the others are OOPIF targets.
    pub frames: Vec<FrameCapture>,
    /// A JavaScript dialog (`alert`, `confirm`, `prompt`, `beforeunload`) that
    /// blocks the page: while it is open it is all an agent can act on.
    #[serde(default)]
    pub dialog: Option<JsDialog>,
}

/// An open JavaScript dialog, as `Page.javascriptDialogOpening` reports it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct JsDialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    pub message: String,
    /// The URL of the frame that opened it.
    pub url: String,
    /// For `prompt`: the text typed so far (starts as the page's default).
    pub prompt_text: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Viewport {
    pub width: f64,
    pub height: f64,
}

/// One `captureSnapshot` reply from one target session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameCapture {
    pub snapshot: Snapshot,
    /// For an OOPIF: the `<iframe>` element that owns it, in an earlier frame capture.
    pub owner: Option<FrameOwner>,
    /// Backend node ids of elements known to have pointer listeners the snapshot
    /// cannot report (`pointerdown`, `pointerup`, `touchstart`).
    #[serde(default)]
    pub pointer_listeners: Vec<i64>,
    /// `Accessibility.getFullAXTree` nodes of this target, when the view needs them
    /// (semantic snapshots do; the element-index protocol does not).
    #[serde(default)]
    pub ax: Option<Vec<AxNode>>,
    /// Backend node id of the element that has focus in this target, if any.
    #[serde(default)]
    pub focused: Option<i64>,
}

/// One accessibility node, as `Accessibility.getFullAXTree` reports it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AxNode {
    pub ignored: bool,
    pub ignored_reasons: Vec<AxProperty>,
    pub role: Option<AxValue>,
    pub name: Option<AxValue>,
    pub properties: Vec<AxProperty>,
    #[serde(rename = "backendDOMNodeId")]
    pub backend_dom_node_id: Option<i64>,
}

/// An `AXValue`: any JSON as Chromium sends it (a string, a flag, a number,
/// a node list…), read through the typed accessors below.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AxValue {
    value: serde_json::Value,
}

impl AxValue {
    /// A string value.
    pub fn string(s: String) -> AxValue {
        AxValue { value: serde_json::Value::String(s) }
    }
    pub fn as_str(&self) -> Option<&str> {
        self.value.as_str()
    }
    pub fn as_bool(&self) -> Option<bool> {
        self.value.as_bool()
    }
    pub fn as_u64(&self) -> Option<u64> {
        self.value.as_u64()
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AxProperty {
    pub name: String,
    pub value: AxValue,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct FrameOwner {
    /// Index into [`Capture::frames`] of the capture holding the iframe element.
    pub frame: usize,
    pub backend_node_id: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    pub documents: Vec<DocumentSnapshot>,
    pub strings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentSnapshot {
    #[serde(rename = "documentURL")]
    pub document_url: i64,
    pub title: i64,
    #[serde(rename = "baseURL")]
    pub base_url: i64,
    pub frame_id: i64,
    pub nodes: NodeTree,
    pub layout: LayoutTree,
    #[serde(default)]
    pub text_boxes: TextBoxes,
    #[serde(default)]
    pub scroll_offset_x: f64,
    #[serde(default)]
    pub scroll_offset_y: f64,
    #[serde(default)]
    pub content_width: f64,
    #[serde(default)]
    pub content_height: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeTree {
    pub parent_index: Vec<i64>,
    pub node_type: Vec<i64>,
    pub shadow_root_type: RareString,
    pub node_name: Vec<i64>,
    pub node_value: Vec<i64>,
    pub backend_node_id: Vec<i64>,
    pub attributes: Vec<Vec<i64>>,
    pub text_value: RareString,
    pub input_value: RareString,
    pub input_checked: RareBool,
    pub option_selected: RareBool,
    pub content_document_index: RareInt,
    pub is_clickable: RareBool,
    /// `::before`, `::after`, `::marker`… for pseudo-element nodes.
    pub pseudo_type: RareString,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LayoutTree {
    pub node_index: Vec<usize>,
    pub styles: Vec<Vec<i64>>,
    pub bounds: Vec<Vec<f64>>,
    pub text: Vec<i64>,
    pub paint_orders: Vec<i64>,
    pub client_rects: Vec<Vec<f64>>,
    /// `[scrollLeft, scrollTop, scrollWidth, scrollHeight]` per layout node.
    pub scroll_rects: Vec<Vec<f64>>,
}

/// Line fragments of laid-out text, indexed by layout node.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TextBoxes {
    pub layout_index: Vec<usize>,
    pub bounds: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RareString {
    pub index: Vec<usize>,
    pub value: Vec<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RareBool {
    pub index: Vec<usize>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RareInt {
    pub index: Vec<usize>,
    pub value: Vec<i64>,
}

impl Snapshot {
    /// The string at `i`, or `""` for the protocol's `-1`.
    pub fn str(&self, i: i64) -> &str {
        if i < 0 {
            ""
        } else {
            self.strings.get(i as usize).map(String::as_str).unwrap_or("")
        }
    }
}

/// One element whose DOM rects the page model reads (see [`Snapshot::rects_needed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RectRequest {
    /// Index into [`Snapshot::documents`].
    pub doc: usize,
    /// Index into that document's layout tree.
    pub layout: usize,
    pub backend_node_id: i64,
}

/// An element's DOM rects, as `DOMSnapshot.captureSnapshot` reports them with
/// `includeDOMRects`: `[clientLeft, clientTop, clientWidth, clientHeight]` and
/// `[scrollLeft, scrollTop, scrollWidth, scrollHeight]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DomRects {
    pub client: [f64; 4],
    pub scroll: [f64; 4],
}

/// Tags whose element can hold a document of its own (a frame owner).
const FRAME_OWNERS: &[&str] = &["IFRAME", "FRAME", "OBJECT", "EMBED", "FENCEDFRAME", "PORTAL"];

impl Snapshot {
    /// The elements whose client box or scroll extent the model reads: frame
    /// owners (where their document starts, what clips it) and boxes that scroll
    /// vertically (the `[scroll box: …]` hint). Asking the browser for the DOM
    /// rects of every node costs as much as the rest of the snapshot; these are
    /// usually a handful. A snapshot that already has rects needs none.
    pub fn rects_needed(&self) -> Vec<RectRequest> {
        let overflow_y = COMPUTED_STYLES.iter().position(|s| *s == "overflow-y");
        let mut out = Vec::new();
        for (d, doc) in self.documents.iter().enumerate() {
            let lt = &doc.layout;
            if !lt.client_rects.is_empty() {
                continue;
            }
            let owns_doc: std::collections::HashSet<usize> =
                doc.nodes.content_document_index.index.iter().copied().collect();
            for (li, &ni) in lt.node_index.iter().enumerate() {
                if doc.nodes.node_type.get(ni) != Some(&1) {
                    continue;
                }
                let name = doc.nodes.node_name.get(ni).map(|&s| self.str(s)).unwrap_or("");
                let scrolls = overflow_y
                    .and_then(|i| lt.styles.get(li)?.get(i).copied())
                    .is_some_and(|v| matches!(self.str(v), "auto" | "scroll"));
                let frame = owns_doc.contains(&ni) || FRAME_OWNERS.iter().any(|t| name.eq_ignore_ascii_case(t));
                if scrolls || frame {
                    if let Some(&b) = doc.nodes.backend_node_id.get(ni) {
                        out.push(RectRequest { doc: d, layout: li, backend_node_id: b });
                    }
                }
            }
        }
        out
    }

    /// Put rects fetched for [`Snapshot::rects_needed`] where the model reads them.
    pub fn fill_rects(&mut self, found: &[(RectRequest, DomRects)]) {
        for (r, rects) in found {
            let Some(doc) = self.documents.get_mut(r.doc) else { continue };
            let lt = &mut doc.layout;
            let n = lt.node_index.len();
            if r.layout >= n {
                continue;
            }
            lt.client_rects.resize(n, Vec::new());
            lt.scroll_rects.resize(n, Vec::new());
            lt.client_rects[r.layout] = rects.client.to_vec();
            lt.scroll_rects[r.layout] = rects.scroll.to_vec();
        }
    }
}
