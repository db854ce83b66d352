//! Pointer actions: click, hover, select and scroll, each on an element
//! re-checked at the moment of acting ([`Tab::verify_hit`]).

use sightline_cdp::protocol::dom;
use sightline_cdp::protocol::input::{DispatchMouseEvent, MouseEventKind};
use sightline_cdp::protocol::runtime::{CallArgument, Evaluate};
use sightline_cdp::BackendNodeId;
use sightline_page::{DialogControl, Element, ElementIndex};

use super::{describe_element, DialogIs};
use crate::capture::Captured;
use crate::{BrowserError, Refusal, Tab};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

const SELECT_OPTION: &str = r#"function () {
  if (!this.isConnected) return 'detached';
  const s = this.closest('select');
  if (!s) return 'no-select';
  this.selected = true;
  s.dispatchEvent(new Event('input', { bubbles: true }));
  s.dispatchEvent(new Event('change', { bubbles: true }));
  return 'ok';
}"#;

/// Whether `this` (or what it contains) is what a pointer at viewport point
/// `(x, y)` of the top document hits, through open shadow roots.
const ON_TOP: &str = r#"function (x, y) {
  if (this.ownerDocument !== document) return 'no';
  let h = document.elementFromPoint(x, y);
  while (h && h.shadowRoot) { const inner = h.shadowRoot.elementFromPoint(x, y); if (!inner || inner === h) break; h = inner; }
  for (let n = h; n; n = n.parentNode || n.host) if (n === this) return 'yes';
  return 'no';
}"#;

/// A point inside an SVG shape's fill (or stroke) where the shape itself is on top,
/// as `"x,y"` in viewport pixels, else `""`. The capture knows a shape only by its
/// box; overlapping shapes (a pie's slices) share one, so the point is found here.
const SHAPE_POINT: &str = r#"function () {
  if (this.ownerDocument !== document || typeof this.isPointInFill !== 'function') return '';
  const m = this.getScreenCTM(); if (!m) return '';
  const inv = m.inverse(), r = this.getBoundingClientRect();
  for (let fy = 0.5, i = 0; i < 9; i++, fy = 0.5 + (i % 2 ? 1 : -1) * Math.ceil(i / 2) * 0.1) {
    for (let fx = 0.5, j = 0; j < 9; j++, fx = 0.5 + (j % 2 ? 1 : -1) * Math.ceil(j / 2) * 0.1) {
      const x = r.left + r.width * fx, y = r.top + r.height * fy;
      const p = new DOMPoint(x, y).matrixTransform(inv);
      if (!this.isPointInFill(p) && !(this.isPointInStroke && this.isPointInStroke(p))) continue;
      const h = document.elementFromPoint(x, y);
      if (h === this || (h && this.contains(h))) return x + ',' + y;
    }
  }
  return '';
}"#;

/// Elements the capture knows only by their boxes: SVG shapes.
fn is_svg_shape(tag: &str) -> bool {
    matches!(tag, "path" | "circle" | "ellipse" | "polygon" | "polyline" | "rect" | "line")
}

impl Tab {
    /// Check, at the moment of acting, that the element is still what is on top at its click point.
    pub(crate) async fn verify_hit(&self, cap: &Captured, e: &Element) -> Result<(), BrowserError> {
        let (x, y) = e.click_point;
        let r = self
            .cdp(
                &self.session,
                // DOM.getNodeForLocation takes main-document coordinates, not viewport ones.
                &dom::GetNodeForLocation {
                    x: (x + cap.view.scroll.0).round() as i64,
                    y: (y + cap.view.scroll.1).round() as i64,
                    include_user_agent_shadow_dom: false,
                    ignore_pointer_events_none: false,
                },
            )
            .await;
        let hit = match r {
            Ok(v) => v.backend_node_id,
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => {
                return Err(BrowserError::NotInteractive { index: e.index, reason: Refusal::Hidden })
            }
            Err(err) => return Err(err),
        };
        let view = &cap.view;
        // Hits in the main session are reported for frame 0 and its same-process frames.
        let found = view.node_by_backend(0, hit.0);
        if let Some(h) = found {
            // The click lands on the element or inside it; an ancestor (the page's <body>)
            // under the point means the element is not there any more.
            // A hidden control is clicked through what stands for it (its label, its widget).
            let inside = view.contains(e.node, h) || e.proxy.is_some_and(|p| view.contains(p, h));
            // A transparent control on top (a styled file input, a custom checkbox) takes the click for the element.
            if inside || view.node(h).is_some_and(|n| n.opacity_hidden()) {
                return Ok(());
            }
        }
        // Not on top: gone, or covered by something.
        let session = &cap.sessions[e.frame];
        let object = self.object_id(cap, e).await?;
        if self.call_on(session, &object, "function(){return this.isConnected ? 'yes' : 'no'}", &[]).await? != "yes" {
            return Err(BrowserError::NotInteractive { index: e.index, reason: Refusal::Detached });
        }
        if found.is_none() && e.frame == 0 {
            // A node the capture has no id for: the viewport capture gives none to
            // pseudo-elements (`::after` of the target). Ask the page which element
            // is on top there, as a pointer sees it.
            let args = [CallArgument::value(x), CallArgument::value(y)];
            if self.call_on(session, &object, ON_TOP, &args).await? == "yes" {
                return Ok(());
            }
        }
        let by = match found {
            // What is under the point holds the element: it moved or was hidden since the state.
            Some(h) if view.contains(h, e.node) => {
                return Err(BrowserError::NotInteractive { index: e.index, reason: Refusal::Hidden })
            }
            Some(h) => view.node(h).map(node_label).unwrap_or_default(),
            None => self.describe_backend(hit).await,
        };
        Err(BrowserError::NotInteractive { index: e.index, reason: Refusal::Covered { by } })
    }

    /// A point inside an SVG shape's fill where the shape itself is on top (`SHAPE_POINT`).
    async fn shape_point(&self, cap: &Captured, e: &Element) -> Result<Option<(f64, f64)>, BrowserError> {
        let object = self.object_id(cap, e).await?;
        let at = self.call_on(&cap.sessions[e.frame], &object, SHAPE_POINT, &[]).await?;
        Ok(at.split_once(',').and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?))))
    }

    async fn describe_backend(&self, backend: BackendNodeId) -> String {
        match self.call(&dom::DescribeNode::backend(backend)).await {
            Ok(v) => {
                let node = v.node;
                let mut n = format!("<{}", node.local_name.as_deref().unwrap_or("?"));
                for pair in node.attributes.chunks(2) {
                    if matches!(pair[0].as_str(), "id" | "class" | "role") {
                        n.push_str(&format!(" {}=\"{}\"", pair[0], pair.get(1).map(String::as_str).unwrap_or("")));
                    }
                }
                n + ">"
            }
            Err(_) => "another element".into(),
        }
    }

    /// `click_element`.
    pub async fn click(&self, cap: &Captured, index: ElementIndex) -> Result<(), BrowserError> {
        self.click_count(cap, index, 1).await
    }

    /// `click_element` with `count` clicks (2 = double click).
    pub async fn click_count(&self, cap: &Captured, index: ElementIndex, count: u32) -> Result<(), BrowserError> {
        self.revive().await?;
        let e = self.element(cap, index)?;
        if e.disabled {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::Disabled });
        }
        // A JavaScript dialog's buttons answer it.
        match e.dialog {
            Some(DialogControl::Accept) => return self.answer_dialog(true).await,
            Some(DialogControl::Dismiss) => return self.answer_dialog(false).await,
            Some(DialogControl::Prompt) => return Ok(()),
            None => {}
        }
        // Clicking an option of a closed select means choosing it.
        if let Some(select) = e.select {
            return self.select_option(cap, select, index).await;
        }
        let (x, y) = if e.frame == 0 {
            match self.verify_hit(cap, e).await {
                Ok(()) => e.click_point,
                // An SVG shape is known by its box: aim at its fill where it is on top.
                Err(err) if is_svg_shape(&e.descriptor.tag) => self.shape_point(cap, e).await?.ok_or(err)?,
                Err(err) => return Err(err),
            }
        } else {
            self.object_id(cap, e).await?;
            e.click_point
        };
        // A file chooser this click opens is attributed to this element.
        self.note_click_target(cap.sessions.get(e.frame).map(|s| (s.clone(), e.backend_node_id)));
        let r = self.click_at_count(x, y, count).await;
        self.note_click_target(None);
        r
    }

    /// A real left click at a viewport point (pointer moved there in steps), then the wait.
    pub async fn click_at(&self, x: f64, y: f64) -> Result<(), BrowserError> {
        self.click_at_count(x, y, 1).await
    }

    /// `count` clicks in a row at a viewport point (2 = a double click).
    pub async fn click_at_count(&self, x: f64, y: f64, count: u32) -> Result<(), BrowserError> {
        self.act(DialogIs::Outcome, async || {
            self.move_pointer(x, y).await?;
            for n in 1..=count.max(1) {
                self.button(MouseEventKind::MousePressed, x, y, n).await?;
                self.button(MouseEventKind::MouseReleased, x, y, n).await?;
            }
            Ok(())
        })
        .await
    }

    /// `hover_element`: move the pointer onto the element and wait, so hover menus and
    /// hover-only controls appear.
    pub async fn hover(&self, cap: &Captured, index: ElementIndex) -> Result<(), BrowserError> {
        self.revive().await?;
        let e = self.element(cap, index)?;
        if e.dialog.is_some() || e.select.is_some() {
            return Err(BrowserError::NotInteractive {
                index,
                reason: Refusal::Unsupported { action: "hover_element", element: describe_element(e) },
            });
        }
        if e.frame == 0 {
            self.verify_hit(cap, e).await?;
        } else {
            self.object_id(cap, e).await?;
        }
        self.act(DialogIs::Outcome, async || self.move_pointer(e.click_point.0, e.click_point.1).await).await
    }

    /// `select_option`: choose `option` of `select`, firing `input` and `change`.
    pub async fn select_option(
        &self,
        cap: &Captured,
        select: ElementIndex,
        option: ElementIndex,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
        let s = self.element(cap, select)?;
        if s.descriptor.tag != "select" {
            return Err(BrowserError::NotInteractive {
                index: select,
                reason: Refusal::Unsupported { action: "select_option", element: describe_element(s) },
            });
        }
        let o = self.element(cap, option)?;
        if o.select != Some(select) {
            return Err(BrowserError::ForeignOption { select, option });
        }
        if s.disabled {
            return Err(BrowserError::NotInteractive { index: select, reason: Refusal::Disabled });
        }
        if o.disabled {
            return Err(BrowserError::NotInteractive { index: option, reason: Refusal::Disabled });
        }
        let session = &cap.sessions[o.frame];
        let object = self.object_id(cap, o).await?;
        self.act(DialogIs::Error, async || {
            if self.call_on(session, &object, SELECT_OPTION, &[]).await? != "ok" {
                return Err(BrowserError::NotInteractive { index: option, reason: Refusal::Detached });
            }
            Ok(())
        })
        .await
    }

    /// `scroll`: a wheel turn at the pointer (or over `element`), by `pixels` or one viewport.
    pub async fn scroll(
        &self,
        cap: &Captured,
        direction: Direction,
        pixels: Option<u32>,
        element: Option<ElementIndex>,
    ) -> Result<(), BrowserError> {
        let (vw, vh) = self.opts.viewport;
        let amount = match direction {
            Direction::Up | Direction::Down => pixels.unwrap_or(vh) as f64,
            Direction::Left | Direction::Right => pixels.unwrap_or(vw) as f64,
        };
        let (dx, dy) = match direction {
            Direction::Up => (0.0, -amount),
            Direction::Down => (0.0, amount),
            Direction::Left => (-amount, 0.0),
            Direction::Right => (amount, 0.0),
        };
        self.act(DialogIs::Error, async || {
            let (x, y) = match element {
                Some(i) => {
                    let e = self.element(cap, i)?;
                    self.move_pointer(e.click_point.0, e.click_point.1).await?;
                    e.click_point
                }
                None => self.state.lock().unwrap().input.pointer,
            };
            let wheel = DispatchMouseEvent {
                delta_x: Some(dx),
                delta_y: Some(dy),
                ..DispatchMouseEvent::at(MouseEventKind::MouseWheel, x, y)
            };
            self.input(&wheel).await?;
            // The wheel is applied on the next frames.
            // A background tab gets no animation frames: a timer ends the wait there.
            const NEXT_FRAMES: &str =
                "new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(r)); setTimeout(r, 100); })";
            self.eval_isolated(&self.session, Evaluate::new(NEXT_FRAMES).await_promise(true)).await?;
            Ok(())
        })
        .await
    }
}

fn node_label(n: sightline_page::NodeRef) -> String {
    let mut s = format!("<{}", if n.tag().is_empty() { "#text" } else { n.tag() });
    for k in ["id", "class", "role"] {
        if let Some(v) = n.attr(k) {
            s.push_str(&format!(" {k}=\"{}\"", sightline_page::cut(v, 40)));
        }
    }
    s + ">"
}
