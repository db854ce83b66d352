//! Model providers: OpenAI-compatible chat completions and the Anthropic
//! Messages API, both over the shared [`ChatClient`]. Both are asked for exactly
//! one action through tool calling (one tool per protocol action); a plain JSON
//! reply is accepted too. Keys come from the environment and are never logged.

use base64::Engine;
use serde_json::{json, Value};

pub use crate::chat::Kind;
use crate::chat::{image_part, ChatClient, ChatError};
use crate::prompt::action_tools;

/// A configured model: an endpoint and a model name.
#[derive(Debug, Clone)]
pub struct Provider {
    pub model: String,
    /// The endpoint, its key, time limit and retries (429 and 5xx, up to 4 attempts).
    pub chat: ChatClient,
    /// Use tool calling (default) or ask for plain JSON.
    pub tools: bool,
    /// Offer the hand-off actions (`request_human`, `wait_for_human`): the run has a live view.
    pub person: bool,
}

/// Why no reply came back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    #[error("unknown provider {name:?}: use openai:MODEL or anthropic:MODEL")]
    UnknownProvider { name: String },
    #[error("no API key: set {var}")]
    MissingKey { var: &'static str },
    #[error(transparent)]
    Chat(#[from] ChatError),
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
        let (kind, model) = spec.split_once(':').ok_or_else(|| ProviderError::UnknownProvider { name: spec.into() })?;
        let (kind, default_base, key_vars): (Kind, &str, &[&'static str]) = match kind {
            "openai" => (Kind::OpenAi, "https://api.openai.com/v1", &["SIGHTLINE_API_KEY", "OPENAI_API_KEY"]),
            "anthropic" => {
                (Kind::Anthropic, "https://api.anthropic.com/v1", &["SIGHTLINE_API_KEY", "ANTHROPIC_API_KEY"])
            }
            other => return Err(ProviderError::UnknownProvider { name: other.into() }),
        };
        let api_key = key_vars.iter().find_map(|v| std::env::var(v).ok().filter(|k| !k.is_empty()));
        // Local OpenAI-compatible servers (llama.cpp, vLLM, Ollama) often need no key.
        if api_key.is_none() && (kind == Kind::Anthropic || base_url.is_none()) {
            return Err(ProviderError::MissingKey { var: key_vars[key_vars.len() - 1] });
        }
        Ok(Provider {
            model: model.to_string(),
            chat: ChatClient::new(kind, base_url.unwrap_or(default_base), api_key),
            tools: true,
            person: false,
        })
    }

    /// Which API the endpoint speaks.
    pub fn kind(&self) -> Kind {
        self.chat.kind
    }

    /// The request body for this provider.
    pub fn body(&self, req: &ModelRequest) -> Value {
        let last = req.messages.len().saturating_sub(1);
        match self.kind() {
            Kind::OpenAi => {
                let mut messages = vec![json!({ "role": "system", "content": req.system })];
                for (i, (user, assistant)) in req.messages.iter().enumerate() {
                    let content = match (&req.image, i == last) {
                        (Some(png), true) => json!([{ "type": "text", "text": user }, image_part(png)]),
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
                        action_tools(self.person)
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
                let png = req.image.as_ref().map(|p| base64::engine::general_purpose::STANDARD.encode(p));
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
                        action_tools(self.person).into_iter().map(|(name, desc, params)| json!({ "name": name, "description": desc, "input_schema": params })).collect(),
                    );
                    body["tool_choice"] = json!({ "type": "any" });
                }
                body
            }
        }
    }

    /// Ask once (blocking), with the client's retries.
    pub fn ask(&self, req: &ModelRequest) -> Result<ModelReply, ProviderError> {
        Ok(self.read(self.chat.send(&self.body(req).to_string())?))
    }

    /// Pull the action out of a reply body.
    pub fn read(&self, raw: String) -> ModelReply {
        let v: Value = match serde_json::from_str(&raw) {
            Ok(v) => v,
            Err(e) => return ModelReply { raw, action: None, problem: Some(format!("the reply is not JSON: {e}")) },
        };
        let (call, text) = match self.kind() {
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
            model: "m".into(),
            chat: ChatClient::new(Kind::OpenAi, "http://x", None),
            tools: true,
            person: false,
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
        let a = Provider { chat: ChatClient::new(Kind::Anthropic, "http://x", None), ..openai() };
        let r = a.read(r#"{"content":[{"type":"text","text":"thinking"},{"type":"tool_use","name":"scroll","input":{"direction":"down"}}]}"#.into());
        assert_eq!(r.action, Some(json!({"action": "scroll", "direction": "down"})));
    }
}
