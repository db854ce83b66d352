//! The protocol's actions, delivered as a user would: real mouse, wheel and key
//! events through `Input.*`, each followed by a wait for a stable page. Every
//! action re-checks its target right before acting, and refuses (changing
//! nothing) when the element is disabled, gone, hidden or covered.

use std::time::Instant;

use sightline_cdp::protocol::input::{
    DispatchKeyEvent, DispatchMouseEvent, InsertText, KeyEventKind, MouseButton, MouseEventKind,
};
use sightline_cdp::protocol::runtime::{CallArgument, CallFunctionOn, Evaluate};
use sightline_cdp::protocol::{dom, fetch, page, Command};
use sightline_cdp::{BackendNodeId, FrameId, SessionId};
use sightline_page::{DialogControl, Element, ElementIndex};

use crate::capture::Captured;
pub use crate::keys::NAMED_KEYS;
use crate::keys::{key_events, named};
use crate::{BrowserError, Refusal, Tab};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

const PREPARE_TYPING: &str = r#"function (overwrite) {
  if (!this.isConnected) return 'detached';
  this.focus();
  if (this.isContentEditable) {
    const r = document.createRange();
    r.selectNodeContents(this);
    if (!overwrite) r.collapse(false);
    const s = getSelection(); s.removeAllRanges(); s.addRange(r);
    return overwrite && this.textContent.length > 0 ? 'delete-editable' : 'ok';
  }
  try {
    const n = this.value.length;
    if (overwrite) this.setSelectionRange(0, n); else this.setSelectionRange(n, n);
  } catch (e) {
    if (overwrite) this.select(); else return 'end';
  }
  return overwrite && this.value.length > 0 ? 'delete' : 'ok';
}"#;

const SELECT_OPTION: &str = r#"function () {
  if (!this.isConnected) return 'detached';
  const s = this.closest('select');
  if (!s) return 'no-select';
  this.selected = true;
  s.dispatchEvent(new Event('input', { bubbles: true }));
  s.dispatchEvent(new Event('change', { bubbles: true }));
  return 'ok';
}"#;

/// An action that opened a JavaScript dialog has done its part: the dialog is the next state.
pub(crate) fn dialog_is_outcome(r: Result<(), BrowserError>) -> Result<(), BrowserError> {
    match r {
        Err(BrowserError::DialogOpen) => Ok(()),
        other => other,
    }
}

/// How long one input event's handlers may run before they are stopped.
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

const HANDLER_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) fn describe_element(e: &Element) -> String {
    let d = &e.descriptor;
    match &d.type_ {
        Some(t) if d.tag == "input" => format!("<input type={t}>"),
        _ => format!("<{}>", d.tag),
    }
}

impl Tab {
    pub(crate) fn element<'a>(&self, cap: &'a Captured, index: ElementIndex) -> Result<&'a Element, BrowserError> {
        cap.view.element(index).ok_or_else(|| BrowserError::Unexpected(format!("no element {index}")))
    }

    /// The element's node as an object of Sightline's isolated world in the
    /// element's own frame (a same-process cross-origin frame has a world of its own).
    pub(crate) async fn object_id(&self, cap: &Captured, e: &Element) -> Result<String, BrowserError> {
        let (session, backend, index) = (&cap.sessions[e.frame], e.backend_node_id, e.index);
        let frame = cap.view.frame_of(e.node).map(|f| FrameId(f.to_string()));
        let r = self.resolve_isolated(session, BackendNodeId(backend), None, frame.as_ref()).await;
        match r {
            Ok(v) => v.object.object_id.ok_or(BrowserError::NotInteractive { index, reason: Refusal::Detached }),
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => {
                Err(BrowserError::NotInteractive { index, reason: Refusal::Detached })
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn call_on(
        &self,
        session: &SessionId,
        object: &str,
        f: &str,
        args: &[CallArgument],
    ) -> Result<String, BrowserError> {
        let call =
            CallFunctionOn { object_id: object, function_declaration: f, arguments: args, return_by_value: true };
        let v = self.cdp(session, &call).await?;
        Ok(v.result.value.as_ref().and_then(|v| v.as_str()).unwrap_or_default().to_string())
    }

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

    /// A left-button press or release at a viewport point.
    pub(crate) async fn button(
        &self,
        kind: MouseEventKind,
        x: f64,
        y: f64,
        click_count: u32,
    ) -> Result<(), BrowserError> {
        let pressed = u32::from(kind == MouseEventKind::MousePressed);
        let event = DispatchMouseEvent {
            button: Some(MouseButton::Left),
            buttons: Some(pressed),
            click_count: Some(click_count),
            ..DispatchMouseEvent::at(kind, x, y)
        };
        self.input(&event).await
    }

    /// One input event. Chromium answers once the page has handled it; a handler
    /// that never returns (an endless loop) is stopped after [`HANDLER_LIMIT`]
    /// with `Runtime.terminateExecution`, so the page lives on, and the action fails.
    pub(crate) async fn input<C: Command>(&self, event: &C) -> Result<(), BrowserError> {
        self.check_responsive()?;
        match self.cdp_within(&self.session, event, HANDLER_LIMIT).await {
            Ok(_) => Ok(()),
            Err(BrowserError::Cdp(sightline_cdp::CdpError::Timeout { .. })) => {
                if self.hung().await {
                    return Err(BrowserError::Unresponsive);
                }
                Err(BrowserError::PageScript(format!(
                    "the page's event handler ran for more than {} s and was stopped",
                    HANDLER_LIMIT.as_secs()
                )))
            }
            Err(e) => Err(e),
        }
    }

    /// Move the pointer in a few steps, so hover effects and menus react.
    pub(crate) async fn move_pointer(&self, x: f64, y: f64) -> Result<(), BrowserError> {
        // Straight onto the target, then a step or two inside it: the pointer moves
        // more than once (a menu that opens under a resting pointer defers its first
        // hover to the next move) but never crosses the elements on the way (a menu
        // bar's neighbours would open their own menus).
        for (px, py) in [(x - 2.0, y - 1.0), (x - 1.0, y), (x, y)] {
            self.input(&DispatchMouseEvent::at(MouseEventKind::MouseMoved, px, py)).await?;
        }
        self.state.lock().unwrap().pointer = (x, y);
        Ok(())
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
        self.revive().await?;
        let since = self.mark().await;
        let r = async {
            self.move_pointer(x, y).await?;
            for n in 1..=count.max(1) {
                self.button(MouseEventKind::MousePressed, x, y, n).await?;
                self.button(MouseEventKind::MouseReleased, x, y, n).await?;
            }
            self.wait_after(since).await
        }
        .await;
        dialog_is_outcome(r)
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
        let since = self.mark().await;
        let r = async {
            self.move_pointer(e.click_point.0, e.click_point.1).await?;
            self.wait_after(since).await
        }
        .await;
        dialog_is_outcome(r)
    }

    pub(crate) async fn press(&self, events: impl IntoIterator<Item = DispatchKeyEvent>) -> Result<(), BrowserError> {
        for ev in events {
            self.input(&ev).await?;
        }
        Ok(())
    }

    /// `input_text`: focus, then type key by key (`overwrite` clears first).
    pub async fn type_text(
        &self,
        cap: &Captured,
        index: ElementIndex,
        text: &str,
        overwrite: bool,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
        let e = self.element(cap, index)?;
        if e.dialog == Some(DialogControl::Prompt) {
            let (line, submit) = match text.strip_suffix('\n') {
                Some(t) => (t, true),
                None => (text, false),
            };
            let before = if overwrite {
                String::new()
            } else {
                self.open_dialog().and_then(|d| d.prompt_text).unwrap_or_default()
            };
            self.set_prompt_text(&format!("{before}{line}"));
            return if submit { self.answer_dialog(true).await } else { Ok(()) };
        }
        if e.disabled {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::Disabled });
        }
        if !e.accepts_text {
            // Code editors (CodeMirror, Ace, Monaco) show one element and type through a
            // hidden textarea or a focus proxy: click the visible element, then type into
            // whatever the click focused, if that takes text.
            let proxy = !matches!(
                e.descriptor.tag.as_str(),
                "a" | "button" | "select" | "option" | "input" | "summary" | "label"
            ) && !matches!(
                e.descriptor.role.as_ref().map(sightline_page::Role::as_str),
                Some("button" | "link" | "checkbox" | "radio" | "switch" | "option" | "tab" | "menuitem" | "slider")
            );
            if proxy && e.frame == 0 {
                self.verify_hit(cap, e).await?;
                return self.type_through_focus(e, text, overwrite).await;
            }
            return Err(BrowserError::NotInteractive {
                index,
                reason: Refusal::Unsupported { action: "input_text", element: describe_element(e) },
            });
        }
        if e.readonly {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::ReadOnly });
        }
        let session = &cap.sessions[e.frame];
        let object = self.object_id(cap, e).await?;
        self.type_into_object(session, &object, text, overwrite).await.map_err(|e| match e {
            BrowserError::NotInteractive { reason, .. } | BrowserError::Refused { reason } => {
                BrowserError::NotInteractive { index, reason }
            }
            other => other,
        })
    }

    /// Focus a resolved element, place the caret (or clear it), type `text` key by key, wait.
    pub async fn type_into_object(
        &self,
        session: &SessionId,
        object: &str,
        text: &str,
        overwrite: bool,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
        let since = self.mark().await;
        match self.call_on(session, object, PREPARE_TYPING, &[CallArgument::value(overwrite)]).await?.as_str() {
            "detached" => return Err(BrowserError::Refused { reason: Refusal::Detached }),
            "delete" => self.press(named("Backspace", 8, None)).await?,
            "delete-editable" => {
                // A rich-text editor (Draft.js, ProseMirror) learns of the selection from
                // `selectionchange` a moment later: give it two frames before the Backspace.
                const SELECTION_SEEN: &str = "Promise.race([new Promise(r => requestAnimationFrame(() => \
                    requestAnimationFrame(() => setTimeout(r, 30)))), new Promise(r => setTimeout(r, 150))])";
                self.eval_isolated(session, Evaluate::new(SELECTION_SEEN).await_promise(true)).await?;
                self.press(named("Backspace", 8, None)).await?
            }
            "end" => self.press(named("End", 35, None)).await?,
            _ => {}
        }
        let r = async {
            self.send_keys_now(text).await?;
            self.wait_after(since).await
        }
        .await;
        dialog_is_outcome(r)
    }

    /// Click an editor's visible element and type into the text field the click focused.
    async fn type_through_focus(&self, e: &Element, text: &str, overwrite: bool) -> Result<(), BrowserError> {
        const FOCUS_TAKES_TEXT: &str = "(() => { let a = document.activeElement; \
            while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; \
            if (!a || a === document.body) return false; \
            if (a.isContentEditable || a.tagName === 'TEXTAREA') return true; \
            return a.tagName === 'INPUT' && /^(text|search|email|url|tel|password|number|)$/.test(a.type) })()";
        self.click_at(e.click_point.0, e.click_point.1).await?;
        let v = self.eval_isolated(&self.session, Evaluate::new(FOCUS_TAKES_TEXT).by_value()).await?;
        if v.result.value.and_then(|v| v.as_bool()) != Some(true) {
            return Err(BrowserError::NotInteractive {
                index: e.index,
                reason: Refusal::Unsupported { action: "input_text", element: describe_element(e) },
            });
        }
        let since = self.mark().await;
        let r = async {
            if overwrite {
                let select_all = DispatchKeyEvent {
                    modifiers: Some(2),
                    commands: vec!["selectAll".into()],
                    ..DispatchKeyEvent::key(KeyEventKind::KeyDown, "a", "KeyA", 65)
                };
                let up = DispatchKeyEvent {
                    modifiers: Some(2),
                    ..DispatchKeyEvent::key(KeyEventKind::KeyUp, "a", "KeyA", 65)
                };
                self.press([select_all, up]).await?;
                self.press(named("Backspace", 8, None)).await?;
            }
            self.send_keys_now(text).await?;
            self.wait_after(since).await
        }
        .await;
        dialog_is_outcome(r)
    }

    /// Press one named key (`Enter`, `Escape`, `ArrowDown`, …) on whatever has focus, then wait.
    pub async fn press_key(&self, key: &str) -> Result<bool, BrowserError> {
        self.revive().await?;
        let Some(events) = crate::keys::key_by_name(key) else { return Ok(false) };
        let since = self.mark().await;
        self.press(events).await?;
        self.wait_after(since).await?;
        Ok(true)
    }

    /// Type `text` into whatever has focus, then wait.
    pub async fn keys(&self, text: &str) -> Result<(), BrowserError> {
        self.revive().await?;
        let since = self.mark().await;
        self.send_keys_now(text).await?;
        self.wait_after(since).await
    }

    async fn send_keys_now(&self, text: &str) -> Result<(), BrowserError> {
        // Pipelined: each call is written to the socket in order on its first poll, and
        // Chromium handles one session's commands in order, so the page sees the keys in order.
        let pieces = typing_plan(text);
        let calls = pieces.iter().map(|piece| async move {
            // Each call keeps the long limit: pipelined keys of a long text wait in line.
            let limit = std::time::Duration::from_secs(60);
            match piece {
                Typed::Keys(events) => {
                    let sent = futures_util::future::join_all(
                        events.iter().map(|ev| self.cdp_within(&self.session, ev, limit)),
                    )
                    .await;
                    sent.into_iter().try_for_each(|r| r.map(|_| ()))
                }
                Typed::Insert(text) => self.cdp_within(&self.session, &InsertText { text }, limit).await.map(|_| ()),
            }
        });
        futures_util::future::join_all(calls).await.into_iter().collect()
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
        let since = self.mark().await;
        if self.call_on(session, &object, SELECT_OPTION, &[]).await? != "ok" {
            return Err(BrowserError::NotInteractive { index: option, reason: Refusal::Detached });
        }
        self.wait_after(since).await
    }

    /// `scroll`: a wheel turn at the pointer (or over `element`), by `pixels` or one viewport.
    pub async fn scroll(
        &self,
        cap: &Captured,
        direction: Direction,
        pixels: Option<u32>,
        element: Option<ElementIndex>,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
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
        let since = self.mark().await;
        let (x, y) = match element {
            Some(i) => {
                let e = self.element(cap, i)?;
                self.move_pointer(e.click_point.0, e.click_point.1).await?;
                e.click_point
            }
            None => self.state.lock().unwrap().pointer,
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
        self.wait_after(since).await
    }

    /// `navigate`: load `url`. A URL that cannot be loaded leaves the current
    /// document exactly as it was (the failed load is aborted before Chromium
    /// commits its error page) and returns `NavigationFailed`.
    pub async fn navigate(&self, url: &str) -> Result<(), BrowserError> {
        // Going elsewhere dismisses a dialog the page left open. A `beforeunload`
        // dialog is answered "Stay" (the navigation that raised it is not the
        // agent's): the agent's own navigation below asks again and leaves.
        if self.open_dialog().is_some() {
            self.answer_dialog(false).await?;
        }
        // A page whose script never yields would hold the navigation away from it
        // (the new document commits on that thread): stop the script first, and
        // freeze the page so that nothing restarts it before the commit (a timer,
        // an observer); the next document is thawed as soon as it commits.
        let stopped = self.unstick().await?;
        let frozen = stopped || self.is_frozen();
        if frozen && !self.is_frozen() {
            self.freeze().await;
        }
        self.navigate_from(url, frozen).await
    }

    async fn navigate_from(&self, url: &str, frozen: bool) -> Result<(), BrowserError> {
        // Unavailable when the current page is itself an error page: then there is nothing to restore.
        let before = self.call(&page::GetNavigationHistory {}).await.ok();
        {
            let mut st = self.state.lock().unwrap();
            st.nav_error = None;
            st.proxy_failure = None;
        }
        // A document that fails to load is held at its response and aborted, so
        // Chromium's error page never replaces the page the tab shows. A blank tab
        // has nothing to keep: interception (which costs the browser and the page
        // a loader swap each time it is turned on or off) is skipped, and a failed
        // load there is undone afterwards (see `undo_in_blank`).
        let blank = self.state.lock().unwrap().blank;
        let documents =
            [fetch::RequestPattern { url_pattern: "*", resource_type: "Document", request_stage: "Response" }];
        let intercept = !blank && self.call(&fetch::Enable { patterns: &documents }).await.is_ok();
        let since = self.mark().await;
        let nav = tokio::time::timeout(self.opts.settle.load_timeout, self.navigate_leaving(url)).await;
        if frozen || self.is_frozen() {
            // Committed (or failed): whichever document is there now runs again.
            self.thaw().await;
        }
        let mut loader = None;
        let failure = match nav {
            Ok(Ok(v)) => {
                loader = v.loader_id;
                v.error_text.filter(|t| !t.is_empty()).map(crate::LoadFailure::Other)
            }
            Ok(Err(e)) => match e {
                // The page opened another dialog while unloading: that dialog is the next state.
                BrowserError::DialogOpen => {
                    let _ = self.client.execute(Some(&self.session), &fetch::Disable {}).await;
                    return Ok(());
                }
                BrowserError::Cdp(sightline_cdp::CdpError::Protocol { message, .. }) => {
                    Some(crate::LoadFailure::Other(message))
                }
                other => {
                    if intercept {
                        let _ = self.client.execute(Some(&self.session), &fetch::Disable {}).await;
                    }
                    return Err(other);
                }
            },
            Err(_) => {
                let _ = self.call(&page::StopLoading {}).await;
                Some(crate::LoadFailure::TimedOut(self.opts.settle.load_timeout))
            }
        };
        if blank {
            return self.undo_in_blank(url, before.as_ref(), failure, loader, since).await;
        }
        let aborted = self.state.lock().unwrap().nav_error.take();
        if intercept {
            let _ = self.call(&fetch::Disable {}).await;
        }
        if let Some(reason) = failure {
            match aborted {
                // Aborted by us: nothing was committed; the old document is still live.
                Some(why) => return Err(BrowserError::NavigationFailed { url: url.to_string(), reason: why }),
                None => {
                    if let Some(before) = &before {
                        self.restore_history(before).await?;
                    }
                    return Err(BrowserError::NavigationFailed { url: url.to_string(), reason });
                }
            }
        }
        self.wait_after(since).await
    }

    /// The end of a navigation from a blank tab, not intercepted: a load that
    /// failed (Chromium's error page, or the egress proxy's answer, committed in
    /// its place) is undone, so the tab is blank again, and reported.
    /// `loader`: the new document's, from `Page.navigate`'s reply.
    async fn undo_in_blank(
        &self,
        url: &str,
        before: Option<&page::NavigationHistory>,
        failure: Option<crate::LoadFailure>,
        loader: Option<String>,
        since: Instant,
    ) -> Result<(), BrowserError> {
        let failure = match failure {
            Some(f) => Some(f),
            None => {
                // The proxy's answer is read from its response event, which comes
                // before the reply to `Page.navigate`: once the page is stable it
                // has been seen. Only this navigation's own document counts (not
                // one the page went on to load by itself meanwhile).
                self.wait_after(since).await?;
                let proxied = self.state.lock().unwrap().proxy_failure.take();
                proxied.filter(|(l, _)| loader.as_ref() == Some(l)).map(|(_, f)| f)
            }
        };
        let Some(reason) = failure else { return Ok(()) };
        self.blank_again(before).await?;
        Err(BrowserError::NavigationFailed { url: url.to_string(), reason })
    }

    /// Back to the blank page a failed first load replaced: its history entry
    /// if it is still there, else a new blank page (Chromium may have replaced
    /// the entry of a tab's initial blank page). The tab counts as blank again.
    async fn blank_again(&self, before: Option<&page::NavigationHistory>) -> Result<(), BrowserError> {
        let now = self.call(&page::GetNavigationHistory {}).await.ok();
        let kept = match (before.and_then(|b| b.current()), &now) {
            (Some(id), Some(now)) => now.entries.iter().any(|e| e.id == id),
            _ => false,
        };
        match before {
            Some(before) if kept => self.restore_history(before).await?,
            _ => {
                let since = Instant::now();
                self.call(&page::Navigate { url: "about:blank" }).await?;
                self.wait_after(since).await?;
            }
        }
        self.state.lock().unwrap().blank = true;
        Ok(())
    }

    /// `Page.navigate`, answering "Leave" to the `beforeunload` dialog the page
    /// raises on the way out: an explicit navigation by the agent is the user's
    /// decision to leave, so no page can keep the agent on it. Any other dialog
    /// opened meanwhile ends the wait with `DialogOpen`.
    async fn navigate_leaving(&self, url: &str) -> Result<page::NavigateReply, BrowserError> {
        self.check_alive()?;
        let nav = page::Navigate { url };
        // The caller bounds the navigation by the load timeout; this is the call limit.
        let call = self.client.execute_within(Some(&self.session), &nav, std::time::Duration::from_secs(60));
        tokio::pin!(call);
        let mut dialog = self.dialog.clone();
        let mut dead = self.dead.clone();
        loop {
            tokio::select! {
                r = &mut call => return Ok(r?),
                _ = async { dead.wait_for(|d| *d).await.map(|_| ()) } => {
                    return Err(if self.is_closed() { BrowserError::TabClosed } else { BrowserError::Crashed })
                }
                // The watch guard is dropped before the branch awaits.
                _ = async { dialog.wait_for(|d| *d).await.map(|_| ()) } => {
                    if self.open_dialog().is_none_or(|d| d.kind != "beforeunload") {
                        return Err(BrowserError::DialogOpen);
                    }
                    tracing::debug!(url, "navigate: leaving a page that asked to stay (beforeunload)");
                    self.close_dialog(true).await?;
                }
                // A page that hangs while we leave it holds the commit: freeze it
                // (the caller thaws whatever document is there afterwards).
                _ = tokio::time::sleep(crate::settle::LEAVING_CHECK_EVERY) => {
                    if !self.is_frozen() && !self.answers(self.hang_limit()).await {
                        tracing::warn!(url, "navigate: the page stopped answering while being left");
                        let _frozen = self.hung().await;
                    }
                }
            }
        }
    }

    /// Go back to the history entry that was current in `before`, if an error page replaced it.
    async fn restore_history(&self, before: &page::NavigationHistory) -> Result<(), BrowserError> {
        let target = before.current();
        // The error page commits shortly after `Page.navigate` reports the failure;
        // until then the frame is in transition and Page calls are refused.
        let since = Instant::now();
        self.wait_after(since).await?;
        let deadline = Instant::now() + std::time::Duration::from_secs(3);
        loop {
            if let Ok(after) = self.call(&page::GetNavigationHistory {}).await {
                if after.current() == target {
                    return Ok(());
                }
            }
            let Some(entry_id) = target else { return Ok(()) };
            let since = Instant::now();
            match self.call(&page::NavigateToHistoryEntry { entry_id }).await {
                Ok(_) => {
                    self.state.lock().unwrap().main_loading = true;
                    return self.wait_after(since).await;
                }
                Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) if Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Characters typed key by key at the start of a text; the rest is inserted.
pub const KEYED_PREFIX: usize = 64;

/// One part of a text to type.
#[derive(Debug, PartialEq)]
enum Typed {
    /// Key events (down with text, up) for each character.
    Keys(Vec<DispatchKeyEvent>),
    /// One `Input.insertText`: what an input method commits.
    Insert(String),
}

/// How a text is typed, in bounded time and memory however long it is: the
/// first [`KEYED_PREFIX`] characters key by key (keydown/keypress/keyup
/// handlers see real keys), then every Enter, Tab and Backspace as a key
/// (they submit, move focus, delete) and the last character as a key (a
/// handler on keyup sees the whole value), and each run of other characters
/// between them as one `Input.insertText` (one trusted `beforeinput` and
/// `input` event; `change` fires on blur as for typed text).
fn typing_plan(text: &str) -> Vec<Typed> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<Typed> = Vec::new();
    let last = chars.len().saturating_sub(1);
    for (i, c) in chars.iter().enumerate() {
        let keyed = i < KEYED_PREFIX || i == last || matches!(c, '\n' | '\r' | '\t' | '\u{8}');
        match (keyed, out.last_mut()) {
            (true, Some(Typed::Keys(events))) => events.extend(key_events(*c)),
            (true, _) => out.push(Typed::Keys(key_events(*c).to_vec())),
            (false, Some(Typed::Insert(run))) => run.push(*c),
            (false, _) => out.push(Typed::Insert(c.to_string())),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(plan: &[Typed]) -> Vec<(char, usize)> {
        plan.iter()
            .map(|p| match p {
                Typed::Keys(e) => ('k', e.len() / 2),
                Typed::Insert(t) => ('i', t.chars().count()),
            })
            .collect()
    }

    #[test]
    fn long_text_is_keyed_at_the_start_and_inserted_after() {
        assert_eq!(shape(&typing_plan("")), vec![]);
        assert_eq!(shape(&typing_plan("short")), vec![('k', 5)]);
        let long = "x".repeat(8000);
        assert_eq!(shape(&typing_plan(&long)), vec![('k', KEYED_PREFIX), ('i', 8000 - KEYED_PREFIX - 1), ('k', 1)]);
        // Enter, Tab and Backspace stay keys wherever they are.
        let text = format!("{}a\nb\tc", "y".repeat(KEYED_PREFIX));
        assert_eq!(shape(&typing_plan(&text)), vec![('k', KEYED_PREFIX), ('i', 1), ('k', 1), ('i', 1), ('k', 2)]);
        // Characters outside the BMP count once.
        let emoji = "😀".repeat(KEYED_PREFIX + 10);
        assert_eq!(shape(&typing_plan(&emoji)), vec![('k', KEYED_PREFIX), ('i', 9), ('k', 1)]);
        let Typed::Insert(run) = &typing_plan(&emoji)[1] else { panic!() };
        assert_eq!(run, &"😀".repeat(9));
    }
}
