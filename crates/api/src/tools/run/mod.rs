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

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sightline_pack::{CancelToken, HostError, ScriptError, ScriptOptions};
use sightline_page::semantic::locate::{self, Drift, Locator};
use sightline_page::semantic::{ActionKind, SemanticTree};

use super::mutate::{prove, ClickParams, DragParams, KeyParams, ScrollParams, SelectParams, TypeParams};
use super::read::StateParams;
use super::tabs::{ListParams, NavigateParams};
use super::{Api, GetStateParams, Reply, Status, TabAddress};
use crate::error::{DriftKind, ErrorDetail, Found, ToolCode, ToolError};
use crate::ids::SnapshotId;
use crate::record::Step;

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

/// A run in progress: the tab it acts on, what it did, the page read it finds in.
struct Runner<'a> {
    api: &'a Api,
    a: TabAddress,
    performed: Vec<Performed>,
    /// The whole-document semantic snapshot of the current page state, once read.
    tree: Option<(SnapshotId, Arc<SemanticTree>)>,
    /// The refs of the last `mark()`, by mark id (a `goto` drops them, as the pack's do).
    marks: Vec<String>,
    deadline: tokio::time::Instant,
}

fn arg<T: serde::de::DeserializeOwned>(args: &[Value], i: usize, what: &str) -> Result<T, ToolError> {
    serde_json::from_value(args.get(i).cloned().unwrap_or(Value::Null))
        .map_err(|e| ToolError::invalid(format!("{what}: {e}")))
}

/// A `browser` action call as the batch op it is.
fn op_of(name: &str, args: &[Value]) -> Result<Op, ToolError> {
    let opts = |i: usize| args.get(i).and_then(Value::as_object).cloned().unwrap_or_default();
    let mut v = serde_json::Map::new();
    v.insert("op".into(), json!(name));
    match name {
        "click" | "hover" | "type" | "select" | "drag" => {
            v.insert("ref".into(), json!(arg::<String>(args, 0, "the first argument (a ref)")?));
        }
        _ => {}
    }
    match name {
        "click" => v.extend(opts(1)),
        "type" => {
            v.insert("text".into(), json!(arg::<String>(args, 1, "the second argument (the text)")?));
            v.extend(opts(2));
        }
        "select" => {
            v.insert("option".into(), json!(arg::<String>(args, 1, "the second argument (the option)")?));
        }
        "press" => {
            v.insert("key".into(), json!(arg::<String>(args, 0, "the first argument (the key)")?));
            if let Some(r) = args.get(1).filter(|r| !r.is_null()) {
                v.insert("ref".into(), r.clone());
            }
        }
        "drag" => match args.get(1) {
            Some(Value::String(to)) => {
                v.insert("to_ref".into(), json!(to));
            }
            Some(Value::Object(by)) => v.extend(by.clone()),
            _ => return Err(ToolError::invalid("browser.drag(ref, to): to is a ref or {dx, dy}")),
        },
        "scroll" => {
            v.insert("direction".into(), json!(arg::<String>(args, 0, "the first argument (the direction)")?));
            v.extend(opts(1));
        }
        "goto" => {
            v.insert("url".into(), json!(arg::<String>(args, 0, "the first argument (the URL)")?));
        }
        "wait" => match args.first() {
            Some(Value::Number(ms)) => {
                v.insert("ms".into(), json!(ms));
            }
            Some(Value::String(text)) => {
                v.insert("text".into(), json!(text));
            }
            Some(Value::Object(o)) => v.extend(o.clone()),
            _ => return Err(ToolError::invalid("browser.wait(condition): milliseconds, text, or {text|gone|url|ms}")),
        },
        _ => {}
    }
    serde_json::from_value(Value::Object(v)).map_err(|e| ToolError::invalid(format!("browser.{name}: {e}")))
}

impl Runner<'_> {
    fn params<T: serde::de::DeserializeOwned>(&self, extra: Value) -> Result<T, ToolError> {
        let mut v = json!({ "session": self.a.session, "target_id": self.a.target_id, "tab_id": self.a.tab_id });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        super::decode_params(v)
    }

    /// One `browser` call.
    async fn call(&mut self, name: &str, args: &[Value]) -> Result<Value, ToolError> {
        match name {
            "state" => {
                let p: GetStateParams = self.params(json!({ "screenshot": false }))?;
                Ok(serde_json::to_value(self.api.get_state(p).await?.state).map_err(ToolError::encoding)?)
            }
            "snapshot" => {
                let mut o = args.first().and_then(Value::as_object).cloned().unwrap_or_default();
                o.entry("snapshot_format").or_insert(json!("semantic_v2"));
                let p: StateParams = self.params(Value::Object(o))?;
                self.tree = None;
                Ok(self.api.get_browser_state(p).await?.into_output()?.value)
            }
            "find" => {
                let l: Locator = arg(args, 0, "browser.find({role, name, near})")?;
                let (id, tree) = self.tree().await?;
                let found: Vec<Value> = locate::find(&tree, &l)
                    .into_iter()
                    .take(20)
                    .map(|i| {
                        let n = &tree.nodes[i];
                        json!({
                            "ref": id.at(i as u32 + 1), "role": n.role.as_str(), "name": n.name, "value": n.value,
                            "near": locate::context(&tree, i), "visibility": n.visibility.as_str(),
                            "actions": n.actions.iter().map(ActionKind::as_str).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                Ok(Value::Array(found))
            }
            "expect" => {
                let step: u64 = arg(args, 0, "browser.expect(step, locator): step")?;
                let l: Locator = arg(args, 1, "browser.expect(step, locator): locator")?;
                let (id, tree) = self.tree().await?;
                let describe = |i: usize| {
                    let n = &tree.nodes[i];
                    Found { role: n.role.as_str().to_string(), name: n.name.clone(), near: locate::context(&tree, i) }
                };
                let said = |l: &Locator| {
                    format!("{} {:?}", l.role.as_deref().unwrap_or("node"), l.name.as_deref().unwrap_or(""))
                };
                match locate::resolve(&tree, &l) {
                    Ok(i) => Ok(json!(id.at(i as u32 + 1))),
                    Err(Drift::Missing { instead }) => {
                        let found: Vec<Found> = instead.iter().map(|&i| describe(i)).collect();
                        let seen = instead
                            .first()
                            .map(|&i| {
                                format!("; found instead {} {:?}", tree.nodes[i].role.as_str(), tree.nodes[i].name)
                            })
                            .unwrap_or_else(|| "; nothing like it is on the page".into());
                        Err(ToolError::new(ToolCode::Drift, format!("step {step}: no {} on the page{seen}", said(&l)))
                            .with_detail(ErrorDetail::Drift { step, kind: DriftKind::Missing, expected: l, found }))
                    }
                    Err(Drift::Ambiguous { matches }) => {
                        let found: Vec<Found> = matches.iter().take(5).map(|&i| describe(i)).collect();
                        Err(ToolError::new(
                            ToolCode::Drift,
                            format!(
                                "step {step}: {} {} match and their place does not tell them apart",
                                matches.len(),
                                said(&l)
                            ),
                        )
                        .with_detail(ErrorDetail::Drift {
                            step,
                            kind: DriftKind::Ambiguous,
                            expected: l,
                            found,
                        }))
                    }
                }
            }
            "mark" => self.mark().await,
            "clickMark" | "typeMark" => {
                let id: u32 = arg(args, 0, "the first argument (a mark id)")?;
                let Some(reference) = (id as usize).checked_sub(1).and_then(|i| self.marks.get(i)).cloned() else {
                    let why = if self.marks.is_empty() {
                        "call browser.mark() first (goto drops the marks)"
                    } else {
                        "no such mark"
                    };
                    return Err(ToolError::invalid(format!("mark {id}: {why}")));
                };
                let op = if name == "clickMark" {
                    Op::Click { reference, count: None }
                } else {
                    let text: String = arg(args, 1, "the second argument (the text)")?;
                    Op::Type { reference, text, overwrite: false }
                };
                self.act(op).await.map(|navigated| json!({ "navigated": navigated }))
            }
            "url" => {
                let tab = self.tab().await?;
                Ok(tab.evaluate("location.href").await?)
            }
            "tabs" => {
                let p: ListParams =
                    super::decode_params(json!({ "session": self.a.session, "target_id": self.a.target_id }))?;
                Ok(self.api.list_tabs(p).await?.into_output()?.value)
            }
            other => {
                let op = op_of(other, args)?;
                self.act(op).await.map(|navigated| json!({ "navigated": navigated }))
            }
        }
    }

    /// The Set-of-Marks pack's marks (the visible interactive elements, numbered in document
    /// order), each with the ref of the element-index snapshot they come from.
    async fn mark(&mut self) -> Result<Value, ToolError> {
        let p: StateParams = self.params(json!({ "snapshot_format": "dom_refs_v1", "node_budget": 1 }))?;
        let snap = self.api.get_browser_state(p).await?.into_output()?.value;
        self.tree = None;
        let id: SnapshotId = snap["snapshot"]["id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ToolError::new(ToolCode::BrowserError, "the snapshot has no id"))?;
        let s = self.api.locate(&self.a).await?;
        let mut g = s.lock().await;
        let marks = g.snapshot(id)?.captured.view.marks();
        self.marks = marks.iter().map(|m| id.at(m.element_index.get())).collect();
        let out: Vec<Value> = marks
            .iter()
            .zip(&self.marks)
            .map(|(m, r)| {
                let mut v = serde_json::to_value(m).unwrap_or_default();
                v["ref"] = json!(r);
                v
            })
            .collect();
        Ok(Value::Array(out))
    }

    async fn tab(&self) -> Result<Arc<sightline_browser::Tab>, ToolError> {
        let s = self.api.locate(&self.a).await?;
        let g = s.lock().await;
        Ok(g.tab(&self.a.tab_id)?.tab.clone())
    }

    /// The current page state's whole-document semantic snapshot (taken now if there is none).
    async fn tree(&mut self) -> Result<(SnapshotId, Arc<SemanticTree>), ToolError> {
        if let Some(t) = &self.tree {
            return Ok(t.clone());
        }
        let s = self.api.locate(&self.a).await?;
        let mut g = s.lock().await;
        let tab_id = g.tab(&self.a.tab_id)?.id.clone();
        let t = crate::snapshot::take_tree(&mut g, &tab_id).await?;
        self.tree = Some(t.clone());
        Ok(t)
    }

    /// One action, recorded in `performed`; whether the page navigated.
    async fn act(&mut self, op: Op) -> Result<bool, ToolError> {
        let (name, reference) = (op.name(), op.reference().map(str::to_string));
        let r = self.perform(op).await;
        if !matches!(name, "wait") {
            self.tree = None;
        }
        if matches!(name, "goto" | "back" | "forward") {
            self.marks.clear();
        }
        self.performed.push(match &r {
            Ok(nav) => Performed { op: name, reference, ok: true, navigated: Some(*nav), error: None },
            Err(e) => Performed {
                op: name,
                reference,
                ok: false,
                navigated: None,
                error: Some(json!({ "code": e.code, "message": e.message })),
            },
        });
        r
    }

    async fn perform(&mut self, op: Op) -> Result<bool, ToolError> {
        let api = self.api;
        match op {
            Op::Click { reference, count: None | Some(1) } => {
                let p: ClickParams = self.params(json!({ "ref": reference }))?;
                Ok(api.browser_click(p).await?.navigated)
            }
            Op::Type { reference, text, overwrite } => {
                let p: TypeParams = self.params(json!({ "ref": reference, "text": text, "overwrite": overwrite }))?;
                Ok(api.browser_type(p).await?.navigated)
            }
            Op::Select { reference, option } => {
                let p: SelectParams = self.params(json!({ "ref": reference, "option": option }))?;
                Ok(api.browser_select(p).await?.navigated)
            }
            Op::Press { key, reference } => {
                let p: KeyParams = self.params(json!({ "key": key, "ref": reference }))?;
                Ok(api.browser_press_key(p).await?.navigated)
            }
            Op::Scroll { direction, reference, pixels } => {
                let p: ScrollParams =
                    self.params(json!({ "direction": direction, "ref": reference, "pixels": pixels }))?;
                api.browser_scroll(p).await?;
                Ok(false)
            }
            Op::Goto { url } => {
                let here = self.tab().await?.evaluate("location.href").await.unwrap_or_default();
                let url = sightline_page::resolve(here.as_str().unwrap_or(""), &url);
                let p: NavigateParams = self.params(json!({ "url": url }))?;
                api.browser_navigate(p).await?;
                Ok(true)
            }
            Op::Back => Ok(api.browser_navigate_back(self.params(json!({}))?).await?.navigated),
            Op::Forward => Ok(api.browser_navigate_forward(self.params(json!({}))?).await?.navigated),
            Op::Click { reference, count: Some(count) } => {
                let pr = prove(api, &self.a, &reference, ActionKind::Click).await?;
                let before = pr.tab.navigation_count();
                pr.tab.click_count(&pr.captured, pr.index, u32::from(count.clamp(1, 3))).await?;
                api.record(&self.a, &pr, Step::Click { target: pr.locator.clone().unwrap_or_default(), count }).await;
                Ok(pr.tab.navigation_count() != before)
            }
            Op::Hover { reference } => {
                let pr = prove(api, &self.a, &reference, ActionKind::Click).await?;
                pr.tab.hover(&pr.captured, pr.index).await?;
                api.record(&self.a, &pr, Step::Hover { target: pr.locator.clone().unwrap_or_default() }).await;
                Ok(false)
            }
            Op::Drag { reference, to_ref, dx, dy } => {
                let p: DragParams = self.params(json!({ "ref": reference, "to_ref": to_ref, "dx": dx, "dy": dy }))?;
                Ok(api.browser_drag(p).await?.navigated)
            }
            Op::Wait { text, gone, url, ms, timeout_ms } => {
                self.wait(text, gone, url, ms, timeout_ms).await?;
                Ok(false)
            }
        }
    }

    async fn wait(
        &mut self,
        text: Option<String>,
        gone: Option<String>,
        url: Option<String>,
        ms: Option<u64>,
        timeout_ms: Option<u64>,
    ) -> Result<(), ToolError> {
        let conditions = [text.is_some(), gone.is_some(), url.is_some(), ms.is_some()].iter().filter(|c| **c).count();
        if conditions != 1 {
            return Err(ToolError::invalid("wait takes exactly one of text, gone, url or ms"));
        }
        if let Some(ms) = ms {
            tokio::time::sleep_until(self.deadline.min(tokio::time::Instant::now() + Duration::from_millis(ms))).await;
            return Ok(());
        }
        let tab = self.tab().await?;
        let limit = Duration::from_millis(timeout_ms.unwrap_or(5000).clamp(1, 300_000));
        let until = self.deadline.min(tokio::time::Instant::now() + limit);
        loop {
            let met = if let Some(u) = &url {
                tab.evaluate("location.href").await?.as_str().is_some_and(|h| h.contains(u.as_str()))
            } else {
                let body = tab.evaluate("document.body ? document.body.innerText : ''").await?;
                let body = body.as_str().unwrap_or("");
                match (&text, &gone) {
                    (Some(t), _) => body.contains(t.as_str()),
                    (_, Some(g)) => !body.contains(g.as_str()),
                    _ => true,
                }
            };
            if met {
                self.tree = None;
                return Ok(());
            }
            if tokio::time::Instant::now() >= until {
                let what = match (&text, &gone, &url) {
                    (Some(t), _, _) => format!("the text {t:?} to appear"),
                    (_, Some(g), _) => format!("the text {g:?} to go"),
                    (_, _, Some(u)) => format!("a URL containing {u:?}"),
                    _ => String::new(),
                };
                return Err(ToolError::new(ToolCode::NotFound, format!("waited {} ms for {what}", limit.as_millis())));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
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
