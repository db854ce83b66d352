//! Model providers: OpenAI-compatible chat completions and the Anthropic
//! Messages API. Both are asked for exactly one action through tool calling
//! (one tool per protocol action); a plain JSON reply is accepted too.
//! Keys come from the environment and are never logged.

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::prompt::action_tools;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    OpenAi,
    Anthropic,
}

/// A configured model endpoint.
#[derive(Clone)]
pub struct Provider {
    pub kind: Kind,
    pub model: String,
    pub base_url: String,
    api_key: Option<String>,
    pub timeout: Duration,
    /// First retry delay; doubles each time (429 and 5xx, up to 4 attempts).
    pub retry_base: Duration,
    /// Use tool calling (default) or ask for plain JSON.
    pub tools: bool,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.kind)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    #[error("unknown provider {0:?}: use openai:MODEL or anthropic:MODEL")]
    UnknownProvider(String),
    #[error("no API key: set {0}")]
    MissingKey(&'static str),
    #[error("the model endpoint refused the API key (HTTP {status}); check the key in the environment")]
    Unauthorized { status: u16 },
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("cannot reach the model endpoint: {0}")]
    Transport(String),
    #[error("the model's reply is not what the API promises: {0}")]
    Reply(String),
}

/// One question to the model.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub system: String,
    /// Alternating user / assistant texts, user first and last.
    pub messages: Vec<(String, String)>,
    /// A PNG to show with the last user message.
    pub image: Option<Vec<u8>>,
}

/// What came back.
#[derive(Debug, Clone)]
pub struct ModelReply {
    /// The raw response body.
    pub raw: String,
    /// The action as JSON (`{"action": …, …}`), when one could be read.
    pub action: Option<Value>,
    /// Why not, when not.
    pub problem: Option<String>,
}

impl Provider {
    /// `openai:MODEL` or `anthropic:MODEL`; the key from the environment.
    pub fn from_spec(spec: &str, base_url: Option<&str>) -> Result<Provider, ProviderError> {
        let (kind, model) = spec.split_once(':').ok_or_else(|| ProviderError::UnknownProvider(spec.into()))?;
        let (kind, default_base, key_vars): (Kind, &str, &[&'static str]) = match kind {
            "openai" => (Kind::OpenAi, "https://api.openai.com/v1", &["SIGHTLINE_API_KEY", "OPENAI_API_KEY"]),
            "anthropic" => {
                (Kind::Anthropic, "https://api.anthropic.com/v1", &["SIGHTLINE_API_KEY", "ANTHROPIC_API_KEY"])
            }
            other => return Err(ProviderError::UnknownProvider(other.into())),
        };
        let api_key = key_vars.iter().find_map(|v| std::env::var(v).ok().filter(|k| !k.is_empty()));
        let base = base_url.unwrap_or(default_base).trim_end_matches('/').to_string();
        // Local OpenAI-compatible servers (llama.cpp, vLLM, Ollama) often need no key.
        if api_key.is_none() && (kind == Kind::Anthropic || base_url.is_none()) {
            return Err(ProviderError::MissingKey(key_vars[key_vars.len() - 1]));
        }
        Ok(Provider {
            kind,
            model: model.to_string(),
            base_url: base,
            api_key,
            timeout: Duration::from_secs(120),
            retry_base: Duration::from_millis(500),
            tools: true,
        })
    }

    /// The request body for this provider.
    pub fn body(&self, req: &ModelRequest) -> Value {
        let png = req.image.as_ref().map(|p| base64::engine::general_purpose::STANDARD.encode(p));
        let last = req.messages.len().saturating_sub(1);
        match self.kind {
            Kind::OpenAi => {
                let mut messages = vec![json!({ "role": "system", "content": req.system })];
                for (i, (user, assistant)) in req.messages.iter().enumerate() {
                    let content = match (&png, i == last) {
                        (Some(b64), true) => json!([
                            { "type": "text", "text": user },
                            { "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{b64}") } }
                        ]),
                        _ => json!(user),
                    };
                    messages.push(json!({ "role": "user", "content": content }));
                    if !assistant.is_empty() {
                        messages.push(json!({ "role": "assistant", "content": assistant }));
                    }
                }
                let mut body = json!({ "model": self.model, "messages": messages });
                if self.tools {
                    body["tools"] = Value::Array(
                        action_tools()
                            .into_iter()
                            .map(|(name, desc, params)| json!({ "type": "function", "function": { "name": name, "description": desc, "parameters": params } }))
                            .collect(),
                    );
                    body["tool_choice"] = json!("required");
                } else {
                    body["response_format"] = json!({ "type": "json_object" });
                }
                body
            }
            Kind::Anthropic => {
                let mut messages = Vec::new();
                for (i, (user, assistant)) in req.messages.iter().enumerate() {
                    let mut content = vec![json!({ "type": "text", "text": user })];
                    if let (Some(b64), true) = (&png, i == last) {
                        content.push(json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": b64 } }));
                    }
                    messages.push(json!({ "role": "user", "content": content }));
                    if !assistant.is_empty() {
                        messages.push(json!({ "role": "assistant", "content": assistant }));
                    }
                }
                let mut body =
                    json!({ "model": self.model, "max_tokens": 1024, "system": req.system, "messages": messages });
                if self.tools {
                    body["tools"] = Value::Array(
                        action_tools().into_iter().map(|(name, desc, params)| json!({ "name": name, "description": desc, "input_schema": params })).collect(),
                    );
                    body["tool_choice"] = json!({ "type": "any" });
                }
                body
            }
        }
    }

    fn endpoint(&self) -> String {
        match self.kind {
            Kind::OpenAi => format!("{}/chat/completions", self.base_url),
            Kind::Anthropic => format!("{}/messages", self.base_url),
        }
    }

    /// Ask once (blocking), with retries on 429 and 5xx.
    pub fn ask(&self, req: &ModelRequest) -> Result<ModelReply, ProviderError> {
        let body = self.body(req).to_string();
        let agent: ureq::Agent =
            ureq::Agent::config_builder().timeout_global(Some(self.timeout)).http_status_as_error(false).build().into();
        let mut delay = self.retry_base;
        let attempts = 4;
        for attempt in 1..=attempts {
            let mut r = agent.post(&self.endpoint()).header("Content-Type", "application/json");
            match (&self.kind, &self.api_key) {
                (Kind::OpenAi, Some(k)) => r = r.header("Authorization", &format!("Bearer {k}")),
                (Kind::Anthropic, Some(k)) => r = r.header("x-api-key", k).header("anthropic-version", "2023-06-01"),
                _ => {}
            }
            let result = r.send(body.as_str());
            let (status, text, retry_after) = match result {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<f64>().ok());
                    let text = resp.body_mut().read_to_string().map_err(|e| ProviderError::Transport(e.to_string()))?;
                    (status, text, retry_after)
                }
                Err(e) if attempt < attempts => {
                    let _ = e;
                    std::thread::sleep(delay);
                    delay *= 2;
                    continue;
                }
                Err(e) => return Err(ProviderError::Transport(e.to_string())),
            };
            match status {
                200..=299 => return Ok(self.read(text)),
                401 | 403 => return Err(ProviderError::Unauthorized { status }),
                429 | 500..=599 if attempt < attempts => {
                    let wait = retry_after.map(|s| Duration::from_secs_f64(s.clamp(0.0, 30.0))).unwrap_or(delay);
                    std::thread::sleep(wait);
                    delay *= 2;
                }
                _ => return Err(ProviderError::Http { status, body: sightline_page::cut(&text, 300) }),
            }
        }
        Err(ProviderError::Transport("no attempt was made".into()))
    }

    /// Pull the action out of a reply body.
    pub fn read(&self, raw: String) -> ModelReply {
        let v: Value = match serde_json::from_str(&raw) {
            Ok(v) => v,
            Err(e) => return ModelReply { raw, action: None, problem: Some(format!("the reply is not JSON: {e}")) },
        };
        let (call, text) = match self.kind {
            Kind::OpenAi => {
                let msg = &v["choices"][0]["message"];
                let call = msg["tool_calls"][0]["function"].as_object().map(|f| {
                    let args = f.get("arguments").and_then(Value::as_str).unwrap_or("{}");
                    (
                        f.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                        serde_json::from_str::<Value>(args),
                    )
                });
                (call, msg["content"].as_str().map(str::to_string))
            }
            Kind::Anthropic => {
                let blocks = v["content"].as_array().cloned().unwrap_or_default();
                let call = blocks
                    .iter()
                    .find(|b| b["type"] == "tool_use")
                    .map(|b| (b["name"].as_str().unwrap_or("").to_string(), Ok(b["input"].clone())));
                let text = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                (call, (!text.is_empty()).then_some(text))
            }
        };
        match (call, text) {
            (Some((name, Ok(mut args))), _) => {
                if !args.is_object() {
                    return ModelReply {
                        raw,
                        action: None,
                        problem: Some(format!("the {name} call's arguments are not an object")),
                    };
                }
                args["action"] = Value::String(name);
                ModelReply { raw, action: Some(args), problem: None }
            }
            (Some((name, Err(e))), _) => ModelReply {
                raw,
                action: None,
                problem: Some(format!("the {name} call's arguments are not valid JSON: {e}")),
            },
            (None, Some(text)) => match extract_json(&text) {
                Some(v) => ModelReply { raw, action: Some(v), problem: None },
                None => ModelReply {
                    raw,
                    action: None,
                    problem: Some("the reply has neither a tool call nor a JSON action".into()),
                },
            },
            (None, None) => ModelReply { raw, action: None, problem: Some("the reply is empty".into()) },
        }
    }
}

/// The first JSON object in a text (code fences allowed).
fn extract_json(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    serde_json::from_str(&text[start..=end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai() -> Provider {
        Provider {
            kind: Kind::OpenAi,
            model: "m".into(),
            base_url: "http://x".into(),
            api_key: None,
            timeout: Duration::from_secs(1),
            retry_base: Duration::from_millis(1),
            tools: true,
        }
    }

    #[test]
    fn reads_tool_calls_and_plain_json() {
        let p = openai();
        let r = p.read(r#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"click_element","arguments":"{\"element_index\":3}"}}]}}]}"#.into());
        assert_eq!(r.action, Some(json!({"action": "click_element", "element_index": 3})));
        let r = p.read(
            r#"{"choices":[{"message":{"content":"```json\n{\"action\":\"finish_task\",\"message\":\"ok\"}\n```"}}]}"#
                .into(),
        );
        assert_eq!(r.action, Some(json!({"action": "finish_task", "message": "ok"})));
        let r = p.read("not json".into());
        assert!(r.problem.unwrap().contains("not JSON"));
        let a = Provider { kind: Kind::Anthropic, ..openai() };
        let r = a.read(r#"{"content":[{"type":"text","text":"thinking"},{"type":"tool_use","name":"scroll","input":{"direction":"down"}}]}"#.into());
        assert_eq!(r.action, Some(json!({"action": "scroll", "direction": "down"})));
    }
}
