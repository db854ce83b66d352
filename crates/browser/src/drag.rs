//! `drag`: press on an element, move along a path, release on another element
//! or at an offset, as a person drags with a mouse. A page that starts an HTML5
//! drag (`draggable`, `dragstart`) gets it through Chromium's drag interception
//! (headless Chromium has no native drag loop): enter, over and drop at the target.

use std::time::Instant;

use sightline_cdp::protocol::input::{
    DispatchDragEvent, DispatchMouseEvent, DragEventKind, MouseButton, MouseEventKind, SetInterceptDrags,
};
use sightline_page::ElementIndex;

use crate::actions::DialogIs;
use crate::capture::Captured;
use crate::error::{BrowserError, Refusal};
use crate::Tab;

/// Where a drag ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DragTo {
    /// On another element of the same state, at its click point.
    Element(ElementIndex),
    /// This many CSS pixels right and down from where it started.
    By(f64, f64),
}

/// Pointer moves between the press and the release (sliders and sortable lists
/// follow the pointer; some start a drag only past a few pixels).
const DRAG_STEPS: u32 = 12;

/// The most a drag onto an element lets go past its click point, in CSS pixels.
const PAST_MAX: f64 = 6.0;

/// Where a drag onto `target` lets go: a little past its click point in the direction of
/// travel (a quarter of its visible box, at most [`PAST_MAX`] px, still inside it), as a hand
/// does: a sortable list moves a row only once the pointer is over the far half of the row
/// it passes; a box dropped into a box stays well inside it.
fn onto(target: &sightline_page::Element, (x, y): (f64, f64)) -> (f64, f64) {
    let (cx, cy) = target.click_point;
    let v = target.visible;
    let past = |from: f64, to: f64, size: f64, lo: f64, hi: f64| {
        let step = (size / 4.0).min(PAST_MAX);
        let d = if to > from {
            step
        } else if to < from {
            -step
        } else {
            0.0
        };
        (to + d).clamp(lo + 1.0, (hi - 1.0).max(lo + 1.0))
    };
    if v.w < 4.0 || v.h < 4.0 {
        return (cx, cy);
    }
    (past(x, cx, v.w, v.x, v.x + v.w), past(y, cy, v.h, v.y, v.y + v.h))
}

impl Tab {
    /// `drag`: the source is re-checked as a click would be; the pointer goes down
    /// on it, moves in [`DRAG_STEPS`] steps to the target and goes up there.
    pub async fn drag(&self, cap: &Captured, index: ElementIndex, to: DragTo) -> Result<(), BrowserError> {
        self.revive().await?;
        let e = self.element(cap, index)?;
        if e.disabled {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::Disabled });
        }
        if e.frame == 0 {
            self.verify_hit(cap, e).await?;
        }
        let (x, y) = e.click_point;
        let (tx, ty) = match to {
            DragTo::Element(t) => onto(self.element(cap, t)?, (x, y)),
            DragTo::By(dx, dy) => (x + dx, y + dy),
        };
        self.state.lock().unwrap().input.drag = None;
        self.call(&SetInterceptDrags { enabled: true }).await?;
        self.act(DialogIs::OutcomeOfWait, async || {
            let r = self.drag_path((x, y), (tx, ty)).await;
            let off = self.call(&SetInterceptDrags { enabled: false }).await;
            r?;
            off.map(|_| ())
        })
        .await
    }

    async fn drag_path(&self, (x, y): (f64, f64), (tx, ty): (f64, f64)) -> Result<(), BrowserError> {
        let held = |kind, x, y| DispatchMouseEvent {
            button: Some(MouseButton::Left),
            buttons: Some(1),
            ..DispatchMouseEvent::at(kind, x, y)
        };
        self.move_pointer(x, y).await?;
        self.button(MouseEventKind::MousePressed, x, y, 1).await?;
        let mut html5 = None;
        for i in 1..=DRAG_STEPS {
            let t = f64::from(i) / f64::from(DRAG_STEPS);
            let (px, py) = (x + (tx - x) * t, y + (ty - y) * t);
            self.input(&held(MouseEventKind::MouseMoved, px, py)).await?;
            if html5.is_none() {
                html5 = self.state.lock().unwrap().input.drag.take();
            }
        }
        self.state.lock().unwrap().input.pointer = (tx, ty);
        if html5.is_none() {
            // The interception event may trail the move that started the drag.
            let until = Instant::now() + std::time::Duration::from_millis(50);
            while html5.is_none() && Instant::now() < until {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                html5 = self.state.lock().unwrap().input.drag.take();
            }
        }
        if let Some(data) = html5 {
            for kind in [DragEventKind::DragEnter, DragEventKind::DragOver, DragEventKind::Drop] {
                self.input(&DispatchDragEvent { kind, x: tx, y: ty, data: data.clone() }).await?;
            }
        }
        self.button(MouseEventKind::MouseReleased, tx, ty, 1).await
    }
}
