//! `run`: a script (or a batch of ref actions) in the sandbox, over one tab.
//!
//! The script is the body of an async function in QuickJS ([`sightline_pack::run_hosted`]):
//! no file, network or process access, a time, memory and browser-call budget.
//! Its `browser` object is this module's [`BROWSER`] table; every call is
//! answered here by the same methods, proofs and typed errors as the single
//! tools (a click re-proves its ref like `browser_click`), and every action is
//! recorded like theirs. `browser.find` and `browser.expect` read a
//! whole-document semantic snapshot, taken once per page state (after an
//! action the next read takes a new one), so refs found together stay valid.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sightline_pack::{CancelToken, HostError, ScriptError, ScriptOptions};

use super::read::StateParams;
use super::{Api, GetStateParams, Reply, Status, TabAddress};
use crate::error::{ErrorDetail, ToolCode, ToolError};

mod host;
#[cfg(test)]
use host::op_of;
use host::Runner;

/// The `browser` object of a `run` script: one name per call it can make.
pub const BROWSER: &[&str] = &[
    "state",
    "snapshot",
    "find",
    "expect",
    "click",
    "hover",
    "type",
    "select",
    "press",
    "drag",
    "scroll",
    "goto",
    "back",
    "forward",
    "wait",
    "url",
    "tabs",
    "mark",
    "clickMark",
    "typeMark",
];

/// The longest script accepted, in bytes.
pub const MAX_CODE: usize = 1 << 20;
/// The most actions one batch may hold.
pub const MAX_BATCH: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// JavaScript, the body of an async function: `await` works, `return` gives the value. It sees
    /// `browser` (state, snapshot, find, expect, click, hover, type, select, press, drag, scroll, goto,
    /// back, forward, wait, url, tabs, and the Set-of-Marks mark, clickMark, typeMark) and
    /// `console.log`; nothing else outside the sandbox.
    pub code: Option<String>,
    /// Instead of code: ref actions done in order (`{"op":"click","ref":"p3:4"}`, `{"op":"type","ref":…,"text":…}`,
    /// select, press, drag, scroll, hover, goto, back, forward, wait); the first failure stops the batch.
    pub actions: Option<Vec<Op>>,
    /// Wall time in seconds (0.1 to 300; default 30).
    pub timeout_s: Option<f64>,
    /// The script's heap in MiB (1 to 512; default 64).
    pub memory_mb: Option<u32>,
    /// The most browser calls (1 to 10000; default 1000).
    pub max_steps: Option<u32>,
    /// What to answer with besides the value: `state` (the State Object, no screenshot; default),
    /// `snapshot` (semantic_v2) or `none`.
    pub result: Option<String>,
}

/// One ref action of a batch (and what each `browser` action call becomes).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    Click {
        #[serde(rename = "ref")]
        reference: String,
        /// 2 is a double click.
        count: Option<u8>,
    },
    Hover {
        #[serde(rename = "ref")]
        reference: String,
    },
    Type {
        #[serde(rename = "ref")]
        reference: String,
        text: String,
        #[serde(default)]
        overwrite: bool,
    },
    Select {
        #[serde(rename = "ref")]
        reference: String,
        /// The option's label or value.
        option: String,
    },
    Press {
        /// A key or chord: Enter, Escape, Tab, ArrowDown, PageDown, Control+A, Shift+Enter, …
        key: String,
        /// Focus this element first (else the key goes to whatever has focus).
        #[serde(rename = "ref")]
        reference: Option<String>,
    },
    Drag {
        #[serde(rename = "ref")]
        reference: String,
        /// Drop on this element…
        to_ref: Option<String>,
        /// …or this many CSS pixels right and down.
        dx: Option<f64>,
        dy: Option<f64>,
    },
    Scroll {
        /// up, down, left or right.
        direction: String,
        #[serde(rename = "ref")]
        reference: Option<String>,
        pixels: Option<u32>,
    },
    Goto {
        /// Absolute, or relative to the current page.
        url: String,
    },
    Back,
    Forward,
    Wait {
        /// Until the page's text contains this…
        text: Option<String>,
        /// …or no longer contains this…
        gone: Option<String>,
        /// …or the URL contains this…
        url: Option<String>,
        /// …or just this many milliseconds.
        ms: Option<u64>,
        /// How long to wait for a condition (default 5000 ms).
        timeout_ms: Option<u64>,
    },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Click { .. } => "click",
            Op::Hover { .. } => "hover",
            Op::Type { .. } => "type",
            Op::Select { .. } => "select",
            Op::Press { .. } => "press",
            Op::Drag { .. } => "drag",
            Op::Scroll { .. } => "scroll",
            Op::Goto { .. } => "goto",
            Op::Back => "back",
            Op::Forward => "forward",
            Op::Wait { .. } => "wait",
        }
    }

    fn reference(&self) -> Option<&str> {
        match self {
            Op::Click { reference, .. }
            | Op::Hover { reference }
            | Op::Type { reference, .. }
            | Op::Select { reference, .. }
            | Op::Drag { reference, .. } => Some(reference),
            Op::Press { reference, .. } | Op::Scroll { reference, .. } => reference.as_deref(),
            _ => None,
        }
    }
}

/// One action the script or batch performed, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Performed {
    pub op: &'static str,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub navigated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// `run`: the script's value, its console, the actions it performed, and the page after.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunReply {
    pub status: Status,
    pub value: Value,
    pub console: Vec<String>,
    pub actions: Vec<Performed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<crate::StateObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<crate::snapshot_reply::Snapshot>,
}

impl Reply for RunReply {}

/// `get_script`: what the session did, as a `run` script that finds its targets again by role and name.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScriptReply {
    pub status: Status,
    pub steps: usize,
    pub script: String,
}

impl Reply for ScriptReply {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptParams {
    pub session: String,
}

fn host_error(e: ToolError) -> HostError {
    let detail = e.detail_json();
    HostError { code: e.code.as_str().to_string(), message: e.message, detail }
}

/// Validated limits and the answer wanted.
fn options(p: &RunParams) -> Result<ScriptOptions, ToolError> {
    let timeout = p.timeout_s.unwrap_or(30.0);
    if !(0.1..=300.0).contains(&timeout) {
        return Err(ToolError::invalid(format!("timeout_s must be 0.1 to 300, got {timeout}")));
    }
    let memory = p.memory_mb.unwrap_or(64);
    if !(1..=512).contains(&memory) {
        return Err(ToolError::invalid(format!("memory_mb must be 1 to 512, got {memory}")));
    }
    let steps = p.max_steps.unwrap_or(1000);
    if !(1..=10_000).contains(&steps) {
        return Err(ToolError::invalid(format!("max_steps must be 1 to 10000, got {steps}")));
    }
    Ok(ScriptOptions {
        timeout: Duration::from_secs_f64(timeout),
        memory_limit: (memory as usize) << 20,
        filename: "run.js".into(),
        log_limit: 64 << 10,
        async_body: true,
        max_calls: Some(steps),
    })
}

impl Api {
    /// `run`: a script or a batch of ref actions on one tab, in the sandbox.
    pub async fn run(&self, p: RunParams) -> Result<RunReply, ToolError> {
        let opts = options(&p)?;
        let result = p.result.clone().unwrap_or_else(|| "state".into());
        if !matches!(result.as_str(), "state" | "snapshot" | "none") {
            return Err(ToolError::invalid(format!("result must be state, snapshot or none, got {result:?}")));
        }
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        self.locate(&a).await?;
        let deadline = tokio::time::Instant::now() + opts.timeout;
        let mut runner = Runner { api: self, a, performed: Vec::new(), tree: None, marks: Vec::new(), deadline };
        let (value, console) = match (p.code, p.actions) {
            (Some(code), None) => {
                if code.trim().is_empty() || code.len() > MAX_CODE {
                    return Err(ToolError::invalid(format!("code must be 1 to {MAX_CODE} bytes of JavaScript")));
                }
                run_code(&mut runner, code, opts).await?
            }
            (None, Some(actions)) => {
                if actions.is_empty() || actions.len() > MAX_BATCH {
                    return Err(ToolError::invalid(format!("actions must hold 1 to {MAX_BATCH} actions")));
                }
                for (i, op) in actions.into_iter().enumerate() {
                    if tokio::time::Instant::now() >= deadline {
                        return Err(limit_error(
                            &runner,
                            "time",
                            format!("the batch ran past its {:?}", opts.timeout),
                            Vec::new(),
                        ));
                    }
                    if let Err(e) = runner.act(op).await {
                        let step = i + 1;
                        let detail =
                            ErrorDetail::Step { step, actions: runner.performed.clone(), cause: e.detail.clone() };
                        return Err(ToolError::new(e.code, format!("action {step}: {}", e.message)).with_detail(detail));
                    }
                }
                (Value::Null, Vec::new())
            }
            _ => return Err(ToolError::invalid("run takes code or actions (one of them)")),
        };
        let (state, snapshot) = match result.as_str() {
            "state" => {
                let p: GetStateParams = runner.params(json!({ "screenshot": false }))?;
                (Some(self.get_state(p).await?.state), None)
            }
            "snapshot" => {
                let p: StateParams = runner.params(json!({ "snapshot_format": "semantic_v2" }))?;
                (None, Some(self.get_browser_state(p).await?.snapshot))
            }
            _ => (None, None),
        };
        Ok(RunReply { status: Status::Ok, value, console, actions: runner.performed, state, snapshot })
    }

    /// `get_script`: the session's recording as a `run` script.
    pub async fn get_script(&self, p: ScriptParams) -> Result<ScriptReply, ToolError> {
        let s = self.registry.session(&p.session).await?;
        let mut g = s.lock().await;
        g.collect_recording();
        Ok(ScriptReply { status: Status::Ok, steps: g.recorder.steps().len(), script: g.recorder.script() })
    }
}

fn limit_error(r: &Runner<'_>, limit: &str, message: String, console: Vec<String>) -> ToolError {
    ToolError::new(ToolCode::ScriptLimit, message).with_detail(ErrorDetail::Limit {
        limit: limit.into(),
        console,
        actions: r.performed.clone(),
    })
}

/// Run `code`, answering its browser calls until it ends.
async fn run_code(r: &mut Runner<'_>, code: String, opts: ScriptOptions) -> Result<(Value, Vec<String>), ToolError> {
    let cancel = CancelToken::new();
    // Whatever ends this call (a client that goes away included) stops the script.
    struct Stop(CancelToken);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.cancel();
        }
    }
    let _stop = Stop(cancel.clone());
    let (run, mut calls) = sightline_pack::run_hosted(BROWSER, code, opts.clone(), cancel.clone());
    let mut run = std::pin::pin!(run);
    let done = loop {
        tokio::select! {
            biased;
            done = &mut run => break done,
            Some(call) = calls.recv() => {
                let answer = match tokio::time::timeout_at(r.deadline, r.call(call.name, &call.args)).await {
                    Ok(a) => a.map_err(host_error),
                    Err(_) => {
                        cancel.cancel();
                        Err(HostError { code: "script_limit".into(), message: "the script's time is up".into(), detail: Value::Null })
                    }
                };
                call.answer(answer);
            }
        }
    };
    let run = done.map_err(|e| ToolError::new(ToolCode::BrowserError, format!("the sandbox thread failed: {e}")))?;
    let console = run.logs;
    let err = match run.result {
        Ok(out) => return Ok((out.value, console)),
        Err(e) => e,
    };
    let detail = |line: Option<u32>, cause: Value| ErrorDetail::Script {
        line,
        console: console.clone(),
        actions: r.performed.clone(),
        cause: Some(cause).filter(|c| !c.is_null()),
    };
    Err(match err {
        ScriptError::Call { code, message, detail: cause, line } => {
            let code = ToolCode::from_wire(&code).unwrap_or(ToolCode::ScriptError);
            let at = line.map(|l| format!(" (line {l})")).unwrap_or_default();
            ToolError::new(code, format!("{message}{at}")).with_detail(detail(line, cause))
        }
        ScriptError::Exception { message, line } => {
            let at = line.map(|l| format!(" (line {l})")).unwrap_or_default();
            ToolError::new(ToolCode::ScriptError, format!("the script threw: {message}{at}"))
                .with_detail(detail(line, Value::Null))
        }
        e @ ScriptError::Timeout { .. } => limit_error(r, "time", e.to_string(), console),
        e @ ScriptError::OutOfMemory { .. } => limit_error(r, "memory", e.to_string(), console),
        e @ ScriptError::TooManyCalls { .. } => limit_error(r, "steps", e.to_string(), console),
        e => ToolError::new(ToolCode::BrowserError, e.to_string()).with_source(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_calls_become_the_batch_ops_they_are() {
        let op = op_of("type", &[json!("p1:2"), json!("hi"), json!({ "overwrite": true })]).unwrap();
        assert!(
            matches!(op, Op::Type { ref reference, ref text, overwrite: true } if reference == "p1:2" && text == "hi")
        );
        let op = op_of("drag", &[json!("p1:2"), json!({ "dx": 10, "dy": 0 })]).unwrap();
        assert!(matches!(op, Op::Drag { dx: Some(_), dy: Some(_), to_ref: None, .. }));
        assert!(matches!(op_of("wait", &[json!(200)]).unwrap(), Op::Wait { ms: Some(200), .. }));
        assert!(matches!(op_of("press", &[json!("Enter")]).unwrap(), Op::Press { reference: None, .. }));
        // A misspelt option is refused by name, never ignored.
        let e = op_of("click", &[json!("p1:2"), json!({ "cuont": 2 })]).unwrap_err();
        assert_eq!(e.code, ToolCode::InvalidParams);
        assert!(e.message.contains("cuont"), "{e}");
        assert_eq!(op_of("type", &[json!("p1:2")]).unwrap_err().code, ToolCode::InvalidParams);
    }

    #[test]
    fn a_batch_is_strict_about_its_fields() {
        let ops: Result<Vec<Op>, _> = serde_json::from_value(json!([{ "op": "click", "ref": "p1:1", "x": 1 }]));
        assert!(ops.is_err());
        let ops: Vec<Op> = serde_json::from_value(json!([{ "op": "back" }, { "op": "goto", "url": "/a" }])).unwrap();
        assert_eq!(ops.len(), 2);
    }
}
