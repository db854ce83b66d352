//! The vision backend: an OpenAI-compatible chat-completions endpoint with image input.
//!
//! `POST {base}/chat/completions` with the question and the screenshot as a
//! `data:image/png;base64,…` image part; the answer is the first choice's text.
//! The API key comes from `SIGHTLINE_VISION_API_KEY` or `OPENAI_API_KEY` and is
//! never logged.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};
use sightline_pack::Vision;

#[derive(Debug, Clone)]
pub struct OpenAiVision {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

impl OpenAiVision {
    pub fn from_env(base_url: &str, model: &str) -> OpenAiVision {
        let api_key = std::env::var("SIGHTLINE_VISION_API_KEY")
            .or_else(|_| std::env::var("OPENAI_API_KEY"))
            .ok()
            .filter(|k| !k.is_empty());
        OpenAiVision {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
            timeout: Duration::from_secs(60),
        }
    }

    /// The request body for one question about one PNG.
    pub fn body(&self, png: &[u8], question: &str) -> Value {
        let image = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png));
        json!({
            "model": self.model,
            "messages": [{
                "role": "user",
                "content": [
                    { "type": "text", "text": question },
                    { "type": "image_url", "image_url": { "url": image } }
                ]
            }]
        })
    }

    /// Ask (blocking).
    pub fn ask(&self, png: &[u8], question: &str) -> Result<String, String> {
        let agent: ureq::Agent =
            ureq::Agent::config_builder().timeout_global(Some(self.timeout)).http_status_as_error(false).build().into();
        let mut req =
            agent.post(&format!("{}/chat/completions", self.base_url)).header("Content-Type", "application/json");
        if let Some(k) = &self.api_key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp =
            req.send(self.body(png, question).to_string()).map_err(|e| format!("vision request failed: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().map_err(|e| format!("vision reply unreadable: {e}"))?;
        if status == 401 || status == 403 {
            return Err(format!("vision endpoint refused the API key (HTTP {status})"));
        }
        if !(200..300).contains(&status) {
            return Err(format!("vision endpoint answered HTTP {status}: {}", sightline_page::cut(&text, 200)));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("vision reply is not JSON: {e}"))?;
        v["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "vision reply has no choices[0].message.content".to_string())
    }

    pub fn into_callback(self) -> Vision {
        let me = Arc::new(self);
        Arc::new(move |png: Vec<u8>, question: String| {
            let me = me.clone();
            Box::pin(async move {
                tokio::task::spawn_blocking(move || me.ask(&png, &question)).await.map_err(|e| e.to_string())?
            })
        })
    }
}
