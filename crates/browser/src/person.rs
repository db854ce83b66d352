//! A person's input, forwarded from the live view (`sightline serve`'s
//! `/live/{session}` page): clicks, wheel turns, keys and text at viewport
//! points the page scaled from its picture. The same events an agent's
//! actions send (real mouse and key events through CDP `Input`), with no
//! element to re-check: the person sees the page and points at it.

use base64::Engine;
use sightline_cdp::protocol::input::{DispatchMouseEvent, MouseEventKind};
use sightline_cdp::protocol::page::{
    CaptureScreenshot, ScreencastFrame, ScreencastFrameAck, StartScreencast, StopScreencast,
};
use sightline_cdp::{Client, EventFilter, SessionId, Subscription};

use crate::actions::DialogIs;
use crate::{BrowserError, Tab};

/// The page's frames as Chromium paints them (`Page.startScreencast`), JPEG,
/// each acknowledged as it is taken; stopped when dropped. A page that does
/// not paint sends nothing: the last frame is still the page.
pub struct Screencast {
    events: Subscription,
    client: Client,
    session: SessionId,
}

impl Screencast {
    /// The next frame, or `None` once the tab is gone.
    pub async fn next(&mut self) -> Option<Vec<u8>> {
        loop {
            let ev = self.events.recv().await?;
            let Some(frame) = ev.decode::<ScreencastFrame>() else { continue };
            let ack = ScreencastFrameAck { session_id: frame.session_id };
            if self.client.execute(Some(&self.session), &ack).await.is_err() {
                return None;
            }
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(frame.data) {
                return Some(bytes);
            }
        }
    }
}

impl Drop for Screencast {
    fn drop(&mut self) {
        let (client, session) = (self.client.clone(), self.session.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = client.execute(Some(&session), &StopScreencast {}).await;
            });
        }
    }
}

impl Tab {
    /// A left click at a viewport point (pointer moved there first, so hover reacts), then a wait for a stable page.
    pub async fn person_click(&self, x: f64, y: f64) -> Result<(), BrowserError> {
        self.act(DialogIs::Error, async || {
            self.move_pointer(x, y).await?;
            self.button(MouseEventKind::MousePressed, x, y, 1).await?;
            self.button(MouseEventKind::MouseReleased, x, y, 1).await
        })
        .await
    }

    /// A wheel turn of `dx`, `dy` CSS pixels over a viewport point.
    pub async fn person_wheel(&self, x: f64, y: f64, dx: f64, dy: f64) -> Result<(), BrowserError> {
        self.revive().await?;
        let wheel = DispatchMouseEvent {
            delta_x: Some(dx),
            delta_y: Some(dy),
            ..DispatchMouseEvent::at(MouseEventKind::MouseWheel, x, y)
        };
        self.input(&wheel).await
    }

    /// Text typed into whatever has focus (key events; `\n` is Enter).
    pub async fn person_text(&self, text: &str) -> Result<(), BrowserError> {
        self.keys(text).await
    }

    /// A named key or chord (`Enter`, `Backspace`, `Control+A`, …) on whatever has focus.
    pub async fn person_key(&self, key: &str) -> Result<(), BrowserError> {
        let events = crate::keys::chord(key)?;
        self.act(DialogIs::Error, async || self.press(events).await).await
    }

    /// The page's frames as it paints (JPEG at `quality`, at most `max` CSS pixels each way), until dropped.
    pub async fn screencast(&self, quality: u32, max: (u32, u32)) -> Result<Screencast, BrowserError> {
        let client = self.browser().client().clone();
        let events = client.subscribe_to(EventFilter::session(self.session().clone()));
        let start = StartScreencast {
            format: "jpeg",
            quality: Some(quality.min(100)),
            max_width: Some(max.0),
            max_height: Some(max.1),
        };
        self.call(&start).await?;
        Ok(Screencast { events, client, session: self.session().clone() })
    }

    /// The viewport as a JPEG (quality 0..=100), for the live view.
    pub async fn live_frame(&self, quality: u32) -> Result<Vec<u8>, BrowserError> {
        let v = self.call(&CaptureScreenshot::jpeg(quality)).await?;
        base64::engine::general_purpose::STANDARD
            .decode(v.data)
            .map_err(|e| BrowserError::Unexpected(format!("screenshot: {e}")))
    }
}
