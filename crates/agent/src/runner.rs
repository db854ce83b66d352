//! The loop: state → prompt → one validated, non-repeated action → state.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use sightline_api::{Action, Env, EnvOptions, StateObject};
use sightline_browser::Tab;

use crate::chat::ChatError;
use crate::prompt::{estimate_tokens, turn_message, SYSTEM};
use crate::provider::{ModelReply, ModelRequest, Provider, ProviderError};
use crate::trace::{Record, TraceWriter, Turn};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// One readable line per turn on stderr.
    Lines,
    Quiet,
    /// One JSON object per turn on stderr.
    Json,
}

/// A person the run may hand the browser to (`sightline run --human`); see [`sightline_api::Human`].
pub use sightline_api::Human;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub task: String,
    pub url: String,
    pub provider: Provider,
    pub max_steps: usize,
    pub vision: bool,
    pub trace: Option<PathBuf>,
    /// The egress policy every `navigate` is checked against (the proxy checks the rest).
    pub egress: Option<std::sync::Arc<sightline_api::Egress>>,
    pub progress: Progress,
    /// Hand-offs to a person: the tab is this session's (see [`Human`]).
    pub human: Option<Human>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Finished(String),
    Failed(String),
    Error(String),
}

impl Ending {
    pub fn status(&self) -> &'static str {
        match self {
            Ending::Finished(_) => "finished",
            Ending::Failed(_) => "failed",
            Ending::Error(_) => "error",
        }
    }
    pub fn message(&self) -> &str {
        match self {
            Ending::Finished(m) | Ending::Failed(m) | Ending::Error(m) => m,
        }
    }
    /// 0 finished, 1 failed, 3 error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Ending::Finished(_) => 0,
            Ending::Failed(_) => 1,
            Ending::Error(_) => 3,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Report {
    pub ending: Ending,
    pub steps: usize,
    pub prompt_tokens: usize,
    pub elapsed: Duration,
}

async fn ask(provider: &Provider, req: ModelRequest) -> Result<(ModelReply, u64), ProviderError> {
    let p = provider.clone();
    let t = Instant::now();
    let reply = tokio::task::spawn_blocking(move || p.ask(&req))
        .await
        .map_err(|source| ProviderError::Chat(ChatError::Stopped { source }))??;
    Ok((reply, t.elapsed().as_millis() as u64))
}

/// Why a model's reply is not a valid action (the text is shown to the model in the repair turn).
#[derive(Debug, thiserror::Error)]
enum Invalid {
    /// No action could be read from the reply.
    #[error("{problem}")]
    Unreadable { problem: String },
    #[error("no action")]
    Missing,
    /// An action that fails the action schema.
    #[error(transparent)]
    Schema(#[from] sightline_api::ValidationError),
}

/// Validate a reply into an action, or say why not.
fn validate(reply: &ModelReply) -> Result<(Action, Value), Invalid> {
    let v = match (&reply.action, &reply.problem) {
        (Some(v), _) => v.clone(),
        (None, Some(problem)) => return Err(Invalid::Unreadable { problem: problem.clone() }),
        (None, None) => return Err(Invalid::Missing),
    };
    let a = Action::from_value(&v)?;
    Ok((a, v))
}

fn describe(v: &Value) -> String {
    let mut parts = vec![v["action"].as_str().unwrap_or("?").to_string()];
    if let Some(o) = v.as_object() {
        for (k, val) in o.iter().filter(|(k, _)| k.as_str() != "action") {
            parts.push(format!("{k}={}", sightline_page::cut(&val.to_string(), 60)));
        }
    }
    parts.join(" ")
}

/// The viewport with each indexed element boxed and numbered by its index.
fn marked_png(env: &Env) -> Option<Vec<u8>> {
    let b64 = env.captured().screenshot.as_ref()?;
    let png = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    sightline_page::draw_marks(&png, &env.captured().view.index_marks()).ok()
}

fn target_box(env: &Env, action: &Action) -> Option<[f64; 4]> {
    let i = match action {
        Action::ClickElement { element_index, .. }
        | Action::HoverElement { element_index }
        | Action::InputText { element_index, .. }
        | Action::SelectOption { element_index, .. }
        | Action::UploadFile { element_index, .. } => *element_index,
        Action::Scroll { element_index: Some(i), .. } | Action::PressKey { element_index: Some(i), .. } => *i,
        _ => return None,
    };
    let e = env.captured().view.element(sightline_page::ElementIndex::try_from(i).ok()?)?;
    Some([e.visible.x, e.visible.y, e.visible.w, e.visible.h])
}

/// Run a task to its end in `tab` (with [`RunConfig::human`], the session's tab).
pub async fn run(tab: impl Into<std::sync::Arc<Tab>>, cfg: RunConfig) -> Result<Report, sightline_api::EnvError> {
    let started = Instant::now();
    let tab: std::sync::Arc<Tab> = tab.into();
    let viewport = tab.options().viewport;
    let mut provider = cfg.provider.clone();
    provider.person = cfg.human.is_some();
    let screenshots = cfg.vision || cfg.trace.is_some();
    let mut env = Env::new(tab, EnvOptions { screenshot: screenshots }).await?;
    if let Some(egress) = &cfg.egress {
        env.set_egress(egress.clone());
    }
    if let Some(h) = &cfg.human {
        env.set_human(h.clone());
    }
    let mut trace = match &cfg.trace {
        Some(dir) => Some(TraceWriter::create(dir).map_err(|e| {
            sightline_api::EnvError::Browser(sightline_browser::BrowserError::Unexpected(format!("trace: {e}")))
        })?),
        None => None,
    };
    let now_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    if let Some(t) = trace.as_mut() {
        let _ = t.record(&Record::Run {
            task: cfg.task.clone(),
            url: cfg.url.clone(),
            model: format!("{:?}:{}", cfg.provider.kind(), cfg.provider.model).to_lowercase(),
            max_steps: cfg.max_steps,
            vision: cfg.vision,
            started_unix_ms: now_ms,
        });
    }
    let first = env
        .step_action(Action::Navigate { url: cfg.url.clone() }, json!({ "action": "navigate", "url": cfg.url }))
        .await;
    let mut state: StateObject = first.state;
    let mut history: HashSet<(String, String)> = HashSet::new();
    let mut recent: Vec<String> = Vec::new();
    let mut total_tokens = 0;
    let mut steps = 0;
    let ending = loop {
        if steps >= cfg.max_steps {
            let msg = format!("step limit of {} reached without finishing the task", cfg.max_steps);
            env.step_action(
                Action::FailTask { message: msg.clone() },
                json!({ "action": "fail_task", "message": msg }),
            )
            .await;
            break Ending::Failed(msg);
        }
        steps += 1;
        let step = steps;
        let message = turn_message(&cfg.task, step, cfg.max_steps, &state, &recent, cfg.vision);
        let marks = if cfg.vision { marked_png(&env) } else { None };
        let prompt_tokens =
            estimate_tokens(SYSTEM) + estimate_tokens(&message) + if marks.is_some() { 1000 } else { 0 };
        total_tokens += prompt_tokens;
        let mut messages = vec![(message.clone(), String::new())];
        let mut replies = Vec::new();
        let mut model_ms = 0;
        // Ask; one bounded repair of an invalid action; one retry of a repeated one.
        let mut repaired = false;
        let mut re_asked = false;
        let chosen: Result<(Action, Value), (String, String)> = loop {
            let req = ModelRequest { system: SYSTEM.to_string(), messages: messages.clone(), image: marks.clone() };
            let (reply, ms) = match ask(&provider, req).await {
                Ok(r) => r,
                Err(e) => break Err(("error".into(), e.to_string())),
            };
            model_ms += ms;
            replies.push(sightline_page::cut(&reply.raw, 20_000));
            match validate(&reply) {
                Err(problem) if !repaired => {
                    repaired = true;
                    let said = reply.action.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "(no action)".into());
                    messages.last_mut().unwrap().1 = said;
                    messages.push((
                        format!("That action is invalid: {problem}. Reply with exactly one valid action."),
                        String::new(),
                    ));
                }
                Err(problem) => {
                    break Err((
                        "invalid".into(),
                        format!("the model gave no valid action after a repair attempt: {problem}"),
                    ))
                }
                Ok((action, v)) => {
                    let key = (state.state_hash.clone(), v.to_string());
                    if !history.contains(&key) {
                        break Ok((action, v));
                    }
                    if re_asked {
                        break Err((
                            "refused".into(),
                            format!("no viable action: the model repeated {} on an unchanged page", describe(&v)),
                        ));
                    }
                    re_asked = true;
                    messages.last_mut().unwrap().1 = v.to_string();
                    messages.push((
                        format!("You already sent {} on this exact page state and it did not help. Choose a different action, or fail_task if none is viable.", describe(&v)),
                        String::new(),
                    ));
                }
            }
        };
        let screenshot = match (trace.as_mut(), env.captured().screenshot.as_ref()) {
            (Some(t), Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .ok()
                .and_then(|png| t.image(&format!("step-{step:03}.png"), &png).ok()),
            _ => None,
        };
        let marks_file = match (trace.as_mut(), &marks) {
            (Some(t), Some(png)) => t.image(&format!("step-{step:03}-marks.png"), png).ok(),
            _ => None,
        };
        let mut turn = Turn {
            step,
            url: state.url.clone(),
            state_hash: state.state_hash.clone(),
            page_content: state.page_content.clone(),
            element_index: serde_json::to_value(&state.element_index).unwrap_or_default(),
            shown_error: state.error.as_ref().map(|e| serde_json::to_value(e).unwrap_or_default()),
            screenshot,
            marks_screenshot: marks_file,
            prompt_chars: message.len(),
            prompt_tokens,
            replies,
            action: None,
            target_box: None,
            viewport: [viewport.0, viewport.1],
            outcome: String::new(),
            outcome_message: None,
            model_ms,
            act_ms: 0,
            capture_ms: 0,
        };
        let ending = match chosen {
            Err((kind, message)) => {
                turn.outcome = kind.clone();
                turn.outcome_message = Some(message.clone());
                if kind == "error" {
                    Some(Ending::Error(message))
                } else {
                    env.step_action(
                        Action::FailTask { message: message.clone() },
                        json!({ "action": "fail_task", "message": message }),
                    )
                    .await;
                    Some(Ending::Failed(message))
                }
            }
            Ok((action, v)) => {
                turn.action = Some(v.clone());
                turn.target_box = target_box(&env, &action);
                history.insert((state.state_hash.clone(), v.to_string()));
                {
                    let result = env.step_action(action.clone(), v.clone()).await;
                    turn.act_ms = result.act_time.as_millis() as u64;
                    turn.capture_ms = result.capture_time.as_millis() as u64;
                    let outcome =
                        result.state.error.as_ref().map(|e| {
                            serde_json::to_value(e.code).unwrap_or_default().as_str().unwrap_or("").to_string()
                        });
                    turn.outcome = outcome.clone().unwrap_or_else(|| "ok".into());
                    turn.outcome_message = result.state.error.as_ref().map(|e| e.message.clone());
                    recent.push(format!("step {step}: {} → {}", describe(&v), turn.outcome));
                    if recent.len() > 6 {
                        recent.remove(0);
                    }
                    let ending = if result.fatal {
                        Some(Ending::Error(format!(
                            "the browser is gone: {}",
                            turn.outcome_message.clone().unwrap_or_default()
                        )))
                    } else {
                        match (&action, result.ended) {
                            (Action::FinishTask { message }, true) => Some(Ending::Finished(message.clone())),
                            (Action::FailTask { message }, true) => Some(Ending::Failed(message.clone())),
                            _ => None,
                        }
                    };
                    // The person may have changed the page: actions of the old state may be sent again.
                    if matches!(action, Action::WaitForHuman { .. }) && result.state.error.is_none() {
                        history.clear();
                    }
                    state = result.state;
                    ending
                }
            }
        };
        if let Some(t) = trace.as_mut() {
            let _ = t.record(&Record::Turn(Box::new(turn.clone())));
        }
        progress(&cfg, &turn);
        if let Some(e) = ending {
            break e;
        }
    };
    if let Some(t) = trace.as_mut() {
        let _ = t.record(&Record::End {
            status: ending.status().into(),
            message: ending.message().into(),
            steps,
            total_ms: started.elapsed().as_millis() as u64,
            prompt_tokens: total_tokens,
        });
    }
    env.close().await;
    Ok(Report { ending, steps, prompt_tokens: total_tokens, elapsed: started.elapsed() })
}

/// The turn lines `sightline run` shows (they are its output, not diagnostics).
#[allow(clippy::print_stderr, reason = "RunConfig::progress asks for these lines on stderr")]
fn progress(cfg: &RunConfig, t: &Turn) {
    match cfg.progress {
        Progress::Quiet => {}
        Progress::Json => eprintln!(
            "{}",
            json!({ "step": t.step, "action": t.action, "outcome": t.outcome, "message": t.outcome_message, "model_ms": t.model_ms, "act_ms": t.act_ms, "tokens": t.prompt_tokens })
        ),
        Progress::Lines => {
            let action = t.action.as_ref().map(describe).unwrap_or_else(|| "-".into());
            eprintln!(
                "step {:>2}  {:<44} → {:<24} {:>6} ms  ~{} tok",
                t.step,
                sightline_page::cut(&action, 44),
                t.outcome,
                t.model_ms + t.act_ms + t.capture_ms,
                t.prompt_tokens
            );
        }
    }
}
