//! The one HTTP client for model APIs, shared by the runner's providers and the
//! `script` command's vision backend.
//!
//! It speaks OpenAI-compatible chat completions (`POST {base}/chat/completions`,
//! bearer key) and the Anthropic Messages API (`POST {base}/messages`,
//! `x-api-key`), over `ureq` (blocking: callers run it on `spawn_blocking`).
//! 429 and 5xx answers and failed connections are retried with doubling delays
//! (a `Retry-After` header wins, capped at 30 s) up to [`ChatClient::attempts`].
//! Keys are sent, never logged: `Debug` leaves them out.

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

/// Which API an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, Ollama, …).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

/// Why a model call gave no reply body.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    /// 401 or 403: never retried.
    #[error("the model endpoint refused the API key (HTTP {status}); check the key in the environment")]
    Unauthorized { status: u16 },
    /// Any other non-2xx answer, after the retries.
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// No answer: connection, TLS, time limit, or a body that could not be read.
    #[error("cannot reach the model endpoint: {source}")]
    Transport {
        #[source]
        source: ureq::Error,
    },
    /// The blocking call was stopped before it answered (its task panicked or was cancelled).
    #[error("the model call stopped: {source}")]
    Stopped {
        #[source]
        source: tokio::task::JoinError,
    },
    /// A 2xx answer that does not have the shape the API promises.
    #[error("the model's reply is not what the API promises: {detail}")]
    Reply { detail: String },
}

/// A configured model endpoint (no model name: one client can serve several).
#[derive(Clone)]
pub struct ChatClient {
    pub kind: Kind,
    /// Without the trailing slash, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    api_key: Option<String>,
    /// The most one HTTP exchange may take.
    pub timeout: Duration,
    /// First retry delay; doubles each time.
    pub retry_base: Duration,
    /// How many times one request is sent at most (1: no retries).
    pub attempts: u32,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("timeout", &self.timeout)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// An OpenAI content part showing a PNG inline.
pub fn image_part(png: &[u8]) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD.encode(png);
    json!({ "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{b64}") } })
}

impl ChatClient {
    /// An endpoint with a 120 s time limit and 4 attempts starting at 500 ms.
    pub fn new(kind: Kind, base_url: &str, api_key: Option<String>) -> ChatClient {
        ChatClient {
            kind,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: api_key.filter(|k| !k.is_empty()),
            timeout: Duration::from_secs(120),
            retry_base: Duration::from_millis(500),
            attempts: 4,
        }
    }

    /// Whether a key will be sent.
    pub fn has_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// Where requests go.
    pub fn endpoint(&self) -> String {
        match self.kind {
            Kind::OpenAi => format!("{}/chat/completions", self.base_url),
            Kind::Anthropic => format!("{}/messages", self.base_url),
        }
    }

    /// Send one request body (blocking, with retries); the 2xx reply body as text.
    pub fn send(&self, body: &str) -> Result<String, ChatError> {
        let agent: ureq::Agent =
            ureq::Agent::config_builder().timeout_global(Some(self.timeout)).http_status_as_error(false).build().into();
        let endpoint = self.endpoint();
        let attempts = self.attempts.max(1);
        let mut delay = self.retry_base;
        let mut attempt = 1;
        loop {
            let mut r = agent.post(&endpoint).header("Content-Type", "application/json");
            match (self.kind, &self.api_key) {
                (Kind::OpenAi, Some(k)) => r = r.header("Authorization", &format!("Bearer {k}")),
                (Kind::Anthropic, Some(k)) => r = r.header("x-api-key", k).header("anthropic-version", "2023-06-01"),
                _ => {}
            }
            let started = std::time::Instant::now();
            let (status, text, retry_after) = match r.send(body) {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<f64>().ok());
                    let text = resp.body_mut().read_to_string().map_err(|source| ChatError::Transport { source })?;
                    (status, text, retry_after)
                }
                Err(source) if attempt < attempts => {
                    tracing::debug!(%endpoint, attempt, error = %source, "model request failed; retrying");
                    std::thread::sleep(delay);
                    delay *= 2;
                    attempt += 1;
                    continue;
                }
                Err(source) => return Err(ChatError::Transport { source }),
            };
            tracing::debug!(%endpoint, attempt, status, took = ?started.elapsed(), bytes = text.len(), "model answered");
            match status {
                200..=299 => return Ok(text),
                401 | 403 => return Err(ChatError::Unauthorized { status }),
                429 | 500..=599 if attempt < attempts => {
                    let wait = retry_after.map_or(delay, |s| Duration::from_secs_f64(s.clamp(0.0, 30.0)));
                    tracing::debug!(%endpoint, status, ?wait, "model endpoint busy; retrying");
                    std::thread::sleep(wait);
                    delay *= 2;
                    attempt += 1;
                }
                _ => return Err(ChatError::Http { status, body: sightline_page::cut(&text, 300) }),
            }
        }
    }

    /// Ask an OpenAI-compatible model one question about one PNG (blocking);
    /// the answer is the first choice's text.
    pub fn ask_image(&self, model: &str, png: &[u8], question: &str) -> Result<String, ChatError> {
        let text = self.send(&image_question(model, png, question).to_string())?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| ChatError::Reply { detail: format!("the reply is not JSON: {e}") })?;
        v["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ChatError::Reply { detail: "the reply has no choices[0].message.content".into() })
    }
}

/// The chat-completions body for one question about one PNG.
pub fn image_question(model: &str, png: &[u8], question: &str) -> Value {
    json!({
        "model": model,
        "messages": [{
            "role": "user",
            "content": [{ "type": "text", "text": question }, image_part(png)]
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_stays_out_of_debug_and_the_image_is_inline() {
        let c = ChatClient::new(Kind::OpenAi, "http://x.test/v1/", Some("sk-secret".into()));
        assert_eq!(c.endpoint(), "http://x.test/v1/chat/completions");
        assert!(!format!("{c:?}").contains("sk-secret"));
        let body = image_question("m", b"\x89PNG", "what?");
        assert_eq!(body["messages"][0]["content"][0]["text"], "what?");
        assert!(body["messages"][0]["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,"));
    }

    #[test]
    fn a_refused_connection_is_a_transport_error() {
        let mut c = ChatClient::new(Kind::OpenAi, "http://127.0.0.1:9/v1", None);
        c.attempts = 1;
        let e = c.ask_image("m", b"", "q").unwrap_err();
        assert!(matches!(e, ChatError::Transport { .. }), "{e:?}");
        assert!(e.to_string().starts_with("cannot reach the model endpoint"), "{e}");
    }
}
