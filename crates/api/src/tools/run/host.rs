//! The host side of `run`: each `browser` call of a script (or op of a batch)
//! answered by the tool API's own typed methods, proofs and errors, and recorded.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use sightline_page::semantic::locate::{self, Drift, Locator};
use sightline_page::semantic::{ActionKind, SemanticTree};

use super::super::mutate::{prove, ClickParams, DragParams, KeyParams, ScrollParams, SelectParams, TypeParams};
use super::super::read::StateParams;
use super::super::tabs::{ListParams, NavigateParams};
use super::super::{Api, GetStateParams, Reply, TabAddress};
use super::{Op, Performed};
use crate::error::{DriftKind, ErrorDetail, Found, ToolCode, ToolError};
use crate::ids::SnapshotId;
use crate::record::Step;

/// A run in progress: the tab it acts on, what it did, the page read it finds in.
pub(super) struct Runner<'a> {
    pub(super) api: &'a Api,
    pub(super) a: TabAddress,
    pub(super) performed: Vec<Performed>,
    /// The whole-document semantic snapshot of the current page state, once read.
    pub(super) tree: Option<(SnapshotId, Arc<SemanticTree>)>,
    /// The refs of the last `mark()`, by mark id (a `goto` drops them, as the pack's do).
    pub(super) marks: Vec<String>,
    pub(super) deadline: tokio::time::Instant,
}

pub(super) fn arg<T: serde::de::DeserializeOwned>(args: &[Value], i: usize, what: &str) -> Result<T, ToolError> {
    serde_json::from_value(args.get(i).cloned().unwrap_or(Value::Null))
        .map_err(|e| ToolError::invalid(format!("{what}: {e}")))
}

/// A `browser` action call as the batch op it is.
pub(super) fn op_of(name: &str, args: &[Value]) -> Result<Op, ToolError> {
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
    pub(super) fn params<T: serde::de::DeserializeOwned>(&self, extra: Value) -> Result<T, ToolError> {
        let mut v = json!({ "session": self.a.session, "target_id": self.a.target_id, "tab_id": self.a.tab_id });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        super::super::decode_params(v)
    }

    /// One `browser` call.
    pub(super) async fn call(&mut self, name: &str, args: &[Value]) -> Result<Value, ToolError> {
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
                    super::super::decode_params(json!({ "session": self.a.session, "target_id": self.a.target_id }))?;
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
    pub(super) async fn mark(&mut self) -> Result<Value, ToolError> {
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

    pub(super) async fn tab(&self) -> Result<Arc<sightline_browser::Tab>, ToolError> {
        let s = self.api.locate(&self.a).await?;
        let g = s.lock().await;
        Ok(g.tab(&self.a.tab_id)?.tab.clone())
    }

    /// The current page state's whole-document semantic snapshot (taken now if there is none).
    pub(super) async fn tree(&mut self) -> Result<(SnapshotId, Arc<SemanticTree>), ToolError> {
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
    pub(super) async fn act(&mut self, op: Op) -> Result<bool, ToolError> {
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

    pub(super) async fn perform(&mut self, op: Op) -> Result<bool, ToolError> {
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

    pub(super) async fn wait(
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
