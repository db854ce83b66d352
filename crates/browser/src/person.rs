//! A person's input, forwarded from the live view (`sightline serve`'s
//! `/live/{session}` page): clicks, wheel turns, keys and text at viewport
//! points the page scaled from its picture. The same events an agent's
//! actions send (real mouse and key events through CDP `Input`), with no
//! element to re-check: the person sees the page and points at it.

use sightline_cdp::protocol::input::{DispatchMouseEvent, MouseEventKind};
use sightline_cdp::protocol::page::CaptureScreenshot;

use crate::{BrowserError, Tab};

impl Tab {
    /// A left click at a viewport point (pointer moved there first, so hover reacts), then a wait for a stable page.
    pub async fn person_click(&self, x: f64, y: f64) -> Result<(), BrowserError> {
        self.revive().await?;
        let since = self.mark().await;
        self.move_pointer(x, y).await?;
        self.button(MouseEventKind::MousePressed, x, y, 1).await?;
        self.button(MouseEventKind::MouseReleased, x, y, 1).await?;
        self.wait_after(since).await
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
        self.revive().await?;
        let since = self.mark().await;
        self.press(events).await?;
        self.wait_after(since).await
    }

    /// The viewport as a JPEG (quality 0..=100), for the live view.
    pub async fn live_frame(&self, quality: u32) -> Result<Vec<u8>, BrowserError> {
        use base64::Engine;
        let v = self.call(&CaptureScreenshot::jpeg(quality)).await?;
        base64::engine::general_purpose::STANDARD
            .decode(v.data)
            .map_err(|e| BrowserError::Unexpected(format!("screenshot: {e}")))
    }
}
