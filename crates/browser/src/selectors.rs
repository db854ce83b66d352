//! CSS-selector operations for the Set-of-Marks driver seam: find, wait, read.
//!
//! The selector is passed to the page as a call argument, never spliced into
//! code. These look in the main frame's document only.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

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
        let doc: Value = self.eval_isolated(&self.session, json!({ "expression": "document" })).await?;
        let Some(doc) = doc["result"]["objectId"].as_str() else { return Ok(None) };
        let r: Value = self
            .call(
                "Runtime.callFunctionOn",
                json!({ "objectId": doc, "functionDeclaration": "function (s) { return this.querySelector(s); }", "arguments": [{ "value": selector }] }),
            )
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            let msg = e["exception"]["description"].as_str().unwrap_or("invalid selector");
            return Err(BrowserError::PageScript(msg.lines().next().unwrap_or_default().to_string()));
        }
        Ok(r["result"]["objectId"].as_str().map(str::to_string))
    }

    async fn probe_object(&self, object: &str) -> Result<Probe, BrowserError> {
        let v: Value = self
            .call(
                "Runtime.callFunctionOn",
                json!({ "objectId": object, "functionDeclaration": DESCRIBE, "returnByValue": true }),
            )
            .await?;
        serde_json::from_value(v["result"]["value"].clone()).map_err(|e| BrowserError::Unexpected(e.to_string()))
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
                json!([]),
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
        self.call_on(&self.session, &obj, f, json!([])).await
    }

    /// Evaluate an expression in the main frame; its JSON value (promises awaited).
    pub async fn eval_json(&self, expression: &str) -> Result<Value, BrowserError> {
        let v: Value = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true, "userGesture": true }),
            )
            .await?;
        if let Some(e) = v.get("exceptionDetails") {
            let msg = e["exception"]["description"].as_str().or(e["text"].as_str()).unwrap_or("exception");
            return Err(BrowserError::PageScript(msg.lines().next().unwrap_or_default().to_string()));
        }
        Ok(v["result"]["value"].clone())
    }

    /// The viewport as PNG bytes.
    pub async fn screenshot_png(&self) -> Result<Vec<u8>, BrowserError> {
        use base64::Engine;
        let v: Value = self.call("Page.captureScreenshot", json!({ "format": "png" })).await?;
        base64::engine::general_purpose::STANDARD
            .decode(v["data"].as_str().unwrap_or_default())
            .map_err(|e| BrowserError::Unexpected(format!("screenshot: {e}")))
    }
}
