//! The vision backend: an OpenAI-compatible chat-completions endpoint with image
//! input, on the agent's shared [`ChatClient`].
//!
//! `POST {base}/chat/completions` with the question and the screenshot as a
//! `data:image/png;base64,…` image part; the answer is the first choice's text.
//! The API key comes from `SIGHTLINE_VISION_API_KEY` or `OPENAI_API_KEY` and is
//! never logged. One attempt per question: a script's deadline does not bound
//! the vision call, so retries would outlast it.

use std::sync::Arc;
use std::time::Duration;

use sightline_agent::{ChatClient, ChatError, Kind};
use sightline_pack::{Vision, VisionError};

#[derive(Debug, Clone)]
pub struct OpenAiVision {
    pub chat: ChatClient,
    pub model: String,
}

impl OpenAiVision {
    pub fn from_env(base_url: &str, model: &str) -> OpenAiVision {
        let api_key = std::env::var("SIGHTLINE_VISION_API_KEY")
            .or_else(|_| std::env::var("OPENAI_API_KEY"))
            .ok()
            .filter(|k| !k.is_empty());
        let mut chat = ChatClient::new(Kind::OpenAi, base_url, api_key);
        chat.timeout = Duration::from_secs(60);
        chat.attempts = 1;
        OpenAiVision { chat, model: model.to_string() }
    }

    /// The pack's vision callback: each question asked on the blocking pool.
    pub fn into_callback(self) -> Vision {
        let me = Arc::new(self);
        Arc::new(move |png: Vec<u8>, question: String| {
            let me = me.clone();
            Box::pin(async move {
                tokio::task::spawn_blocking(move || me.chat.ask_image(&me.model, &png, &question))
                    .await
                    .unwrap_or_else(|source| Err(ChatError::Stopped { source }))
                    .map_err(|e| VisionError::Backend(Box::new(e)))
            })
        })
    }
}
