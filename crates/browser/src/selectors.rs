//! CSS-selector operations for the Set-of-Marks driver seam: find, wait, read.
//!
//! The selector is passed to the page as a call argument, never spliced into
//! code. These look in the main frame's document only.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use sightline_cdp::protocol::page::CaptureScreenshot;
use sightline_cdp::protocol::runtime::{CallArgument, CallFunctionOn, Evaluate, ExceptionDetails};

use crate::{BrowserError, Tab};

/// What the page reports about a matched element.
#[derive(Debug, Clone, Deserialize)]
pub struct Probe {
    pub visible: bool,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

const DESCRIBE: &str = r#"function () {
  const r = this.getBoundingClientRect();
  const style = getComputedStyle(this);
  const visible = r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none'
    && (typeof this.checkVisibility !== 'function' || this.checkVisibility({ opacityProperty: true, visibilityProperty: true }));
  return { visible, x: r.x, y: r.y, w: r.width, h: r.height };
}"#;

impl Tab {
    /// The first element matching `selector`, as a remote object id.
    pub async fn query(&self, selector: &str) -> Result<Option<String>, BrowserError> {
        let doc = self.eval_isolated(&self.session, Evaluate::new("document")).await?;
        let Some(doc) = doc.result.object_id else { return Ok(None) };
        let r = self
            .call(&CallFunctionOn {
                object_id: &doc,
                function_declaration: "function (s) { return this.querySelector(s); }",
                arguments: &[CallArgument::value(selector)],
                return_by_value: false,
            })
            .await?;
        if let Some(e) = r.exception_details {
            let msg = e.exception.and_then(|x| x.description).unwrap_or_else(|| "invalid selector".into());
            return Err(page_script(&msg));
        }
        Ok(r.result.object_id)
    }

    async fn probe_object(&self, object: &str) -> Result<Probe, BrowserError> {
        let v = self
            .call(&CallFunctionOn {
                object_id: object,
                function_declaration: DESCRIBE,
                arguments: &[],
                return_by_value: true,
            })
            .await?;
        serde_json::from_value(v.result.value.unwrap_or_default()).map_err(|e| BrowserError::Unexpected(e.to_string()))
    }

    /// Wait (polling every 50 ms, until the caller gives up) for a match, visible if asked.
    pub async fn wait_for(&self, selector: &str, visible: bool) -> Result<String, BrowserError> {
        loop {
            if let Some(obj) = self.query(selector).await? {
                if !visible || self.probe_object(&obj).await?.visible {
                    return Ok(obj);
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Click the centre of the first visible match (scrolled into view first).
    pub async fn click_selector(&self, selector: &str) -> Result<(), BrowserError> {
        let obj = self.wait_for(selector, true).await?;
        let mut p = self.probe_object(&obj).await?;
        let (vw, vh) = self.opts.viewport;
        let (cx, cy) = (p.x + p.w / 2.0, p.y + p.h / 2.0);
        if cx < 0.0 || cy < 0.0 || cx >= vw as f64 || cy >= vh as f64 {
            self.call_on(
                &self.session,
                &obj,
                "function () { this.scrollIntoView({ block: 'center', inline: 'center' }); }",
                &[],
            )
            .await?;
            p = self.probe_object(&obj).await?;
        }
        self.click_at(p.x + p.w / 2.0, p.y + p.h / 2.0).await
    }

    /// Focus the first match and type `text`.
    pub async fn type_selector(&self, selector: &str, text: &str) -> Result<(), BrowserError> {
        let obj = self.wait_for(selector, true).await?;
        let session = self.session.clone();
        self.type_into_object(&session, &obj, text, false).await
    }

    /// `innerText` (trimmed) or the `value` property of the first match.
    pub async fn read_selector(&self, selector: &str, value: bool) -> Result<String, BrowserError> {
        let obj =
            self.query(selector).await?.ok_or_else(|| BrowserError::NoMatch { selector: selector.to_string() })?;
        let f = if value {
            "function () { return this.value === undefined || this.value === null ? '' : String(this.value); }"
        } else {
            "function () { return (this.innerText || this.textContent || '').trim(); }"
        };
        self.call_on(&self.session, &obj, f, &[]).await
    }

    /// Evaluate an expression in the main frame; its JSON value (promises awaited).
    pub async fn eval_json(&self, expression: &str) -> Result<Value, BrowserError> {
        let v = self.call(&Evaluate::new(expression).by_value().await_promise(true).user_gesture()).await?;
        if let Some(e) = v.exception_details {
            return Err(page_script(ExceptionDetails::message(&e).unwrap_or("exception")));
        }
        Ok(v.result.value.unwrap_or_default())
    }

    /// The viewport as PNG bytes.
    pub async fn screenshot_png(&self) -> Result<Vec<u8>, BrowserError> {
        use base64::Engine;
        let v = self.call(&CaptureScreenshot::PNG).await?;
        base64::engine::general_purpose::STANDARD
            .decode(v.data)
            .map_err(|e| BrowserError::Unexpected(format!("screenshot: {e}")))
    }
}

/// The first line of what the page's script threw.
fn page_script(message: &str) -> BrowserError {
    BrowserError::PageScript(message.lines().next().unwrap_or_default().to_string())
}
