//! browser_click, browser_type, browser_select, browser_scroll, browser_press_key.
//!
//! Before delivering anything, a semantic ref must declare the action, and the
//! binding, the tab target, the frame's loader identity and the node's
//! liveness are re-proved. dom_refs_v1 refs keep the simple behaviour:
//! resolve, act, report.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sightline_browser::{BackendNodeId, CaptureOptions, Captured, Direction, DragTo, FrameId, Tab};
use sightline_page::semantic::ActionKind;
use sightline_page::ElementIndex;

use super::{Api, Reply, Status, TabAddress};
use crate::error::{Proof, ToolError};
use crate::ids::RefId;
use crate::record::{DragEnd, Step};
use crate::registry::Format;
use crate::snapshot::parse_ref;
use sightline_page::semantic::locate::Locator;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// A ref from the tab's latest snapshot, like `p12:34`.
    #[serde(rename = "ref")]
    pub reference: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub text: String,
    /// Clear the field first.
    #[serde(default)]
    pub overwrite: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    #[serde(rename = "ref")]
    pub reference: String,
    /// The option's visible label or its value.
    pub option: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// Scroll this element's scroll container (else the page under the pointer).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// up, down, left or right.
    pub direction: String,
    /// Default: one viewport.
    pub pixels: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// A key or chord: Enter, Escape, Tab, ArrowDown, PageDown, Control+A, Shift+Enter, or one character.
    pub key: String,
    /// Focus this element first (else the key goes to whatever has focus).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// The element to drag (a slider's handle, a list row, a card).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Drop on this element (a ref of the same snapshot)…
    pub to_ref: Option<String>,
    /// …or this many CSS pixels right (negative: left)…
    pub dx: Option<f64>,
    /// …and down (negative: up).
    pub dy: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
}

/// `browser_click`, `browser_type`, `browser_press_key`: whether the page navigated.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ActedReply {
    pub status: Status,
    pub navigated: bool,
}

/// `browser_select`: the label of the option chosen.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SelectReply {
    pub status: Status,
    pub navigated: bool,
    pub selected: Option<String>,
}

/// `browser_scroll`: the page's scroll offsets after it (`[x, y]`; null when the page does not answer).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScrollReply {
    pub status: Status,
    /// The page's `[scrollX, scrollY]` after the scroll, in CSS pixels (null when the page did not answer).
    pub page_scroll: Option<[serde_json::Number; 2]>,
}

impl Reply for ActedReply {}
impl Reply for SelectReply {}
impl Reply for ScrollReply {}

fn acted(tab: &Tab, before: u64) -> ActedReply {
    ActedReply { status: Status::Ok, navigated: tab.navigation_count() != before }
}

/// A ref resolved and proven: the capture to act on and the element's index in it.
pub(super) struct Proven {
    pub tab: Arc<Tab>,
    pub captured: Arc<Captured>,
    pub index: ElementIndex,
    /// How a recording finds the element again (role, name, place).
    pub locator: Option<Locator>,
}

pub(super) async fn prove(api: &Api, a: &TabAddress, reference: &str, action: ActionKind) -> Result<Proven, ToolError> {
    let RefId { snapshot: snap, index: n } = parse_ref(reference)?;
    let s = api.registry.session(&a.session).await?;
    let mut g = s.lock().await;
    g.check_target(&a.target_id).map_err(|e| {
        if e.code == crate::error::ToolCode::CapabilityExpired {
            e
        } else {
            ToolError::proof(Proof::Binding, e.message)
        }
    })?;
    let entry = g.tab(&a.tab_id)?;
    let tab = entry.tab.clone();
    if tab.is_dead() {
        return Err(ToolError::proof(Proof::TabTarget, format!("tab {} no longer has a live page target", a.tab_id)));
    }
    let tab_id = entry.id.clone();
    let stored = g.snapshot(snap)?;
    if stored.tab_id != tab_id {
        return Err(ToolError::invalid(format!("ref {reference} belongs to another tab")));
    }
    let captured = stored.captured.clone();
    let (node, frame, backend, locator) = match (stored.format, &stored.tree) {
        (Format::SemanticV2, Some(tree)) => {
            let s = stored.node_of_ref(n).ok_or_else(|| {
                ToolError::new(crate::error::ToolCode::SnapshotNotFound, format!("no ref {reference}"))
            })?;
            if !s.actions.contains(&action) {
                let offered: Vec<&str> = s.actions.iter().map(|a| a.as_str()).collect();
                return Err(ToolError::unavailable(reference, action.as_str(), &offered));
            }
            (s.node, s.frame, s.backend_node_id, crate::record::locate(tree, s.frame, s.backend_node_id))
        }
        _ => {
            // dom_refs_v1: the element index.
            let e = captured.view.element(n).ok_or_else(|| {
                ToolError::new(crate::error::ToolCode::SnapshotNotFound, format!("no ref {reference}"))
            })?;
            let locator = crate::record::locate(&crate::record::tree_of(&captured), e.frame, e.backend_node_id);
            (e.node, e.frame, e.backend_node_id, locator)
        }
    };
    if stored.format == Format::SemanticV2 {
        let frame_id = FrameId(captured.view.frame_of(node).unwrap_or_default().to_string());
        let then = stored.frame_generations.get(&frame_id).copied().unwrap_or(0);
        if tab.frame_generation(&frame_id) != then {
            return Err(ToolError::proof(
                Proof::FrameLoader,
                format!("the frame of {reference} loaded a new document since the snapshot"),
            ));
        }
    }
    drop(g);
    let session = captured
        .sessions
        .get(frame)
        .cloned()
        .ok_or_else(|| ToolError::proof(Proof::TabTarget, "the frame's target is gone"))?;
    let node_frame = captured.view.frame_of(node).map(|f| FrameId(f.to_string()));
    if !tab.node_alive(&session, BackendNodeId(backend), node_frame.as_ref()).await? {
        return Err(ToolError::proof(
            Proof::NodeLiveness,
            format!("the element of {reference} was removed from the page"),
        ));
    }
    // Act on the snapshot's own capture when the element is indexed there (visible);
    // otherwise bring it into view and take a fresh capture of exactly that node.
    if let Some(e) = captured.view.elements.iter().find(|e| e.node == node) {
        return Ok(Proven { index: e.index, tab, captured, locator });
    }
    tab.scroll_node_into_view(&session, BackendNodeId(backend)).await?;
    let fresh = Arc::new(tab.capture_with(CaptureOptions::default()).await?);
    let found = fresh
        .view
        .elements
        .iter()
        .find(|e| e.backend_node_id == backend && fresh.sessions.get(e.frame) == Some(&session));
    match found {
        Some(e) => Ok(Proven { index: e.index, tab: tab.clone(), captured: fresh.clone(), locator }),
        None => Err(ToolError::new(
            crate::error::ToolCode::ElementNotInteractive,
            format!("the element of {reference} is not visible or is covered, even after scrolling it into view"),
        )),
    }
}

impl Api {
    /// `browser_click`: click the element of a ref.
    pub async fn browser_click(&self, p: ClickParams) -> Result<ActedReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let pr = prove(api, &a, &p.reference, ActionKind::Click).await?;
        let before = pr.tab.navigation_count();
        pr.tab.click(&pr.captured, pr.index).await?;
        api.record(&a, &pr, Step::Click { target: pr.locator.clone().unwrap_or_default(), count: 1 }).await;
        Ok(acted(&pr.tab, before))
    }

    /// `browser_type`: type text into the element of a ref.
    pub async fn browser_type(&self, p: TypeParams) -> Result<ActedReply, ToolError> {
        let api = self;
        crate::check_text(&p.text).map_err(|e| ToolError::invalid(e.message))?;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let pr = prove(api, &a, &p.reference, ActionKind::Type).await?;
        let before = pr.tab.navigation_count();
        pr.tab.type_text(&pr.captured, pr.index, &p.text, p.overwrite).await?;
        let step = Step::Type { target: pr.locator.clone().unwrap_or_default(), text: p.text, overwrite: p.overwrite };
        api.record(&a, &pr, step).await;
        Ok(acted(&pr.tab, before))
    }

    /// `browser_select`: choose an option of the select of a ref.
    pub async fn browser_select(&self, p: SelectParams) -> Result<SelectReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let pr = prove(api, &a, &p.reference, ActionKind::Select).await?;
        let options: Vec<_> = pr.captured.view.elements.iter().filter(|e| e.select == Some(pr.index)).collect();
        let want = p.option.trim();
        let opt = options
            .iter()
            .find(|o| o.descriptor.text_content.as_deref() == Some(want))
            .or_else(|| options.iter().find(|o| o.descriptor.value.as_deref() == Some(want)))
            .ok_or_else(|| {
                let labels: Vec<String> = options.iter().filter_map(|o| o.descriptor.text_content.clone()).collect();
                ToolError::invalid(format!("no option {want:?}; the options are {labels:?}"))
            })?;
        pr.tab.select_option(&pr.captured, pr.index, opt.index).await?;
        let option = opt.descriptor.text_content.clone().unwrap_or_else(|| want.to_string());
        api.record(&a, &pr, Step::Select { target: pr.locator.clone().unwrap_or_default(), option }).await;
        Ok(SelectReply { status: Status::Ok, navigated: false, selected: opt.descriptor.text_content.clone() })
    }

    /// `browser_scroll`: wheel over the element of a ref, else the page.
    pub async fn browser_scroll(&self, p: ScrollParams) -> Result<ScrollReply, ToolError> {
        let api = self;
        let direction = match p.direction.as_str() {
            "up" => Direction::Up,
            "down" => Direction::Down,
            "left" => Direction::Left,
            "right" => Direction::Right,
            other => {
                return Err(ToolError::invalid(format!("direction must be up, down, left or right, got {other:?}")))
            }
        };
        if p.pixels == Some(0) {
            return Err(ToolError::invalid("pixels must be a positive integer"));
        }
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let (tab, captured, index, locator) = match &p.reference {
            Some(r) => {
                // Any visible element scrolls its container; a declared scroll action is not required for content inside.
                let pr = match prove(api, &a, r, ActionKind::Scroll).await {
                    Err(e) if e.code == crate::error::ToolCode::BrowserActionUnavailable => {
                        prove(api, &a, r, ActionKind::Click).await.map_err(|_| e)?
                    }
                    other => other?,
                };
                (pr.tab, pr.captured, Some(pr.index), pr.locator)
            }
            None => {
                let s = api.locate(&a).await?;
                let tab = s.lock().await.tab(&a.tab_id)?.tab.clone();
                let captured = Arc::new(tab.capture(false).await?);
                (tab, captured, None, None)
            }
        };
        tab.scroll(&captured, direction, p.pixels, index).await?;
        let step = Step::Scroll { direction: p.direction.clone(), pixels: p.pixels.map(u64::from), target: locator };
        api.record_at(&a, &captured.view.url, step).await;
        let y = tab.evaluate("[scrollX, scrollY]").await.ok().and_then(|v| serde_json::from_value(v).ok());
        Ok(ScrollReply { status: Status::Ok, page_scroll: y })
    }

    /// `browser_press_key`: a key or chord on the element of a ref (focused first), else on whatever has focus.
    pub async fn browser_press_key(&self, p: KeyParams) -> Result<ActedReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        sightline_browser::chord(&p.key).map_err(|e| {
            ToolError::invalid(format!(
                "'key': {e}; use one character, a named key ({}) or a chord like Control+A",
                sightline_browser::NAMED_KEYS.join(", ")
            ))
        })?;
        let (tab, captured, index, locator) = match &p.reference {
            Some(r) => {
                let pr = prove(api, &a, r, ActionKind::Click).await?;
                (pr.tab, pr.captured, Some(pr.index), pr.locator)
            }
            None => {
                let s = api.locate(&a).await?;
                let tab = s.lock().await.tab(&a.tab_id)?.tab.clone();
                let captured = Arc::new(tab.capture(false).await?);
                (tab, captured, None, None)
            }
        };
        let before = tab.navigation_count();
        tab.press_key_on(&captured, index, &p.key).await?;
        api.record_at(&a, &captured.view.url, Step::Press { key: p.key, target: locator }).await;
        Ok(acted(&tab, before))
    }

    /// `browser_drag`: press on the element of a ref, move along a path, release on another
    /// element or at an offset (sliders, sortable lists, HTML5 drag and drop).
    pub async fn browser_drag(&self, p: DragParams) -> Result<ActedReply, ToolError> {
        let api = self;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let pr = prove(api, &a, &p.reference, ActionKind::Click).await?;
        let (to, end) = match (p.to_ref, p.dx, p.dy) {
            (Some(t), None, None) => {
                let target = prove(api, &a, &t, ActionKind::Click).await?;
                if !Arc::ptr_eq(&target.captured, &pr.captured) {
                    return Err(ToolError::invalid("to_ref must be of the same snapshot as ref, and both on screen"));
                }
                (DragTo::Element(target.index), DragEnd::On(target.locator.clone().unwrap_or_default()))
            }
            (None, Some(dx), Some(dy)) if dx.is_finite() && dy.is_finite() => {
                let far = crate::action::MAX_DRAG_OFFSET as f64;
                if dx.abs() > far || dy.abs() > far {
                    return Err(ToolError::invalid(format!("dx and dy must be within ±{far} CSS pixels")));
                }
                (DragTo::By(dx, dy), DragEnd::By { dx, dy })
            }
            _ => return Err(ToolError::invalid("browser_drag takes to_ref, or dx and dy (finite numbers), not both")),
        };
        let before = pr.tab.navigation_count();
        pr.tab.drag(&pr.captured, pr.index, to).await?;
        api.record(&a, &pr, Step::Drag { target: pr.locator.clone().unwrap_or_default(), to: end }).await;
        Ok(acted(&pr.tab, before))
    }

    /// `browser_navigate_back`: the previous page of the tab's history, as the browser's button.
    pub async fn browser_navigate_back(&self, p: HistoryParams) -> Result<ActedReply, ToolError> {
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let navigated = self.history(&a, sightline_browser::HistoryStep::Back).await?;
        Ok(ActedReply { status: Status::Ok, navigated })
    }

    /// `browser_navigate_forward`: the next page of the tab's history.
    pub async fn browser_navigate_forward(&self, p: HistoryParams) -> Result<ActedReply, ToolError> {
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let navigated = self.history(&a, sightline_browser::HistoryStep::Forward).await?;
        Ok(ActedReply { status: Status::Ok, navigated })
    }

    /// Record a step the element of `pr` took.
    pub(super) async fn record(&self, a: &TabAddress, pr: &Proven, step: Step) {
        self.record_at(a, &pr.captured.view.url, step).await;
    }

    /// Record a step taken on the page at `url` (nothing when the session is gone).
    pub(super) async fn record_at(&self, a: &TabAddress, url: &str, step: Step) {
        if let Ok(s) = self.registry.session(&a.session).await {
            let mut g = s.lock().await;
            g.collect_recording();
            g.recorder.push(url, step);
        }
    }

    /// Back or forward in the tab's history; whether it navigated.
    pub(super) async fn history(
        &self,
        a: &TabAddress,
        step: sightline_browser::HistoryStep,
    ) -> Result<bool, ToolError> {
        let s = self.locate(a).await?;
        let mut g = s.lock().await;
        let entry = g.tab(&a.tab_id)?;
        let (tab, tab_id) = (entry.tab.clone(), entry.id.clone());
        let url =
            tab.evaluate("location.href").await.ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let before = tab.navigation_count();
        let r = tab.go(step).await;
        let navigated = tab.navigation_count() != before;
        if navigated {
            g.retire_tab_snapshots(&tab_id, crate::error::Rule::Navigation);
        }
        r?;
        g.collect_recording();
        let recorded = match step {
            sightline_browser::HistoryStep::Back => Step::Back,
            sightline_browser::HistoryStep::Forward => Step::Forward,
        };
        g.recorder.push(&url, recorded);
        Ok(navigated)
    }
}
