//! Chromium's own judgement of a page, for the test suite's oracle
//! (`tests/oracle.rs`): its accessibility tree of every frame, and what a real
//! pointer hits at a point. Nothing in the product reads these; the tests
//! compare the element index and semantic_v2 with them.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;
use sightline_cdp::protocol::accessibility::{self, GetFullAxTreeOfFrame};
use sightline_cdp::protocol::dom::{GetContentQuads, GetNodeForLocation};
use sightline_cdp::BackendNodeId;
use sightline_cdp::FrameId;

use crate::{BrowserError, Captured, Tab};

/// One node of Chromium's accessibility tree, as `Accessibility.getFullAXTree` gives it.
#[derive(Debug, Clone, Default)]
pub struct AxRow {
    /// The capture frame (`Captured::sessions[frame]`) whose session answered.
    pub frame: usize,
    /// The DOM node it stands for (absent for nodes Chromium made up).
    pub backend_node_id: Option<i64>,
    pub ignored: bool,
    /// Why it is ignored (`notRendered`, `ariaHiddenElement`, `uninteresting`…).
    pub ignored_reasons: Vec<String>,
    /// Chromium's role (`button`, `generic`, `StaticText`, `LabelText`…).
    pub role: String,
    pub name: String,
    /// Its value (a text field's text, a slider's number), as a string.
    pub value: Option<String>,
    /// Its properties (`checked`, `expanded`, `focused`, `disabled`, `valuemin`…) as JSON values.
    pub properties: Vec<(String, Value)>,
}

impl AxRow {
    /// A property's value, if reported.
    pub fn property(&self, name: &str) -> Option<&Value> {
        self.properties.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

#[derive(Deserialize)]
struct Tree {
    nodes: Vec<RawNode>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawNode {
    ignored: bool,
    ignored_reasons: Vec<RawProperty>,
    role: Option<RawValue>,
    name: Option<RawValue>,
    value: Option<RawValue>,
    properties: Vec<RawProperty>,
    #[serde(rename = "backendDOMNodeId")]
    backend_dom_node_id: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawProperty {
    name: String,
    value: RawValue,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawValue {
    value: Value,
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Tab {
    /// Chromium's full accessibility tree of every document of a capture: each
    /// frame's tree asked of the session that holds it (the page's session for
    /// its same-process iframes, its own for an out-of-process one). Chromium is
    /// then told to drop the tree, as after a capture that read it.
    pub async fn oracle_ax_tree(&self, captured: &Captured) -> Result<Vec<AxRow>, BrowserError> {
        let frames: Vec<FrameId> = captured.view.frame_ids().map(|f| FrameId(f.to_string())).collect();
        let mut done: HashSet<&FrameId> = HashSet::new();
        let mut rows = Vec::new();
        // Out-of-process frames first: their own session answers for them.
        for (i, session) in captured.sessions.iter().enumerate().rev() {
            for frame in &frames {
                if done.contains(frame) {
                    continue;
                }
                let Ok(raw) = self.cdp(session, &GetFullAxTreeOfFrame { frame_id: frame }).await else { continue };
                let Ok(tree) = serde_json::from_str::<Tree>(raw.get()) else { continue };
                done.insert(frame);
                rows.extend(tree.nodes.into_iter().map(|n| AxRow {
                    frame: i,
                    backend_node_id: n.backend_dom_node_id,
                    ignored: n.ignored,
                    ignored_reasons: n.ignored_reasons.into_iter().map(|r| r.name).collect(),
                    role: n.role.and_then(|r| text_of(&r.value)).unwrap_or_default(),
                    name: n.name.and_then(|r| text_of(&r.value)).unwrap_or_default(),
                    value: n.value.and_then(|r| text_of(&r.value)),
                    properties: n.properties.into_iter().map(|p| (p.name, p.value.value)).collect(),
                }));
            }
        }
        for s in &captured.sessions {
            let _ = self.client.send_only(Some(s), &accessibility::Disable {});
        }
        Ok(rows)
    }

    /// What a real pointer at viewport point `(x, y)` of the page hits
    /// (`DOM.getNodeForLocation` with `ignorePointerEventsNone: false`: an element
    /// with `pointer-events: none` is passed through, as a mouse passes through
    /// it): the backend node id in the page's session (a
    /// point over an out-of-process frame hits its `<iframe>`), or `None` where
    /// nothing is hit. `scroll` is the page's scroll offset (the call takes
    /// document coordinates).
    pub async fn oracle_hit(&self, x: f64, y: f64, scroll: (f64, f64)) -> Result<Option<i64>, BrowserError> {
        let at = GetNodeForLocation {
            x: (x + scroll.0).floor() as i64,
            y: (y + scroll.1).floor() as i64,
            include_user_agent_shadow_dom: false,
            ignore_pointer_events_none: false,
        };
        match self.call(&at).await {
            Ok(v) => Ok(Some(v.backend_node_id.0)),
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The box Chromium lays a node of the page's session out in, after its transforms
    /// (`DOM.getContentQuads`, all quads' bounds), in viewport pixels: `(x, y, w, h)`. For
    /// an SVG shape this is its own box where a capture may know only an ancestor's.
    pub async fn oracle_box(&self, backend: i64) -> Result<Option<(f64, f64, f64, f64)>, BrowserError> {
        let quads = match self.call(&GetContentQuads { backend_node_id: BackendNodeId(backend) }).await {
            Ok(v) => v.quads,
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => return Ok(None),
            Err(e) => return Err(e),
        };
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for q in &quads {
            for p in q.chunks(2).filter(|p| p.len() == 2) {
                x0 = x0.min(p[0]);
                x1 = x1.max(p[0]);
                y0 = y0.min(p[1]);
                y1 = y1.max(p[1]);
            }
        }
        Ok((x1 > x0 && y1 > y0).then_some((x0, y0, x1 - x0, y1 - y0)))
    }
}
