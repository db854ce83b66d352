//! The Set-of-Marks pack's `browser` global, on the [`crate::engine`].
//!
//! Every `browser` primitive is checked by the policy, then run on the driver
//! under a [`Cx`], and is synchronous to the script: it returns when the
//! browser has finished the step.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use base64::Engine;
use rquickjs::{Ctx, Exception, Function, Object, Value};
use tokio::runtime::Handle;

use crate::engine::{execute, Console, ScriptError, ScriptOptions, ScriptOutcome, ScriptRun};

use crate::driver::{CancelToken, Cx, Driver, DriverError, Mark};
use crate::policy::{Policy, Request};
use crate::primitives::{Prim, PRIMITIVES};

/// Answers a question about a screenshot (PNG bytes).
pub type Vision =
    Arc<dyn Fn(Vec<u8>, String) -> Pin<Box<dyn Future<Output = Result<String, VisionError>> + Send>> + Send + Sync>;

/// Why a [`Vision`] backend gave no answer. The backend's own error is kept as
/// the source (this crate knows no HTTP client); the script sees its message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VisionError {
    #[error("{0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Why a `browser` primitive failed before or while it ran; the script sees the message.
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error(transparent)]
    Denied(#[from] crate::policy::Denied),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error("no current marks: call browser.mark() first (goto drops them)")]
    NoMarks,
}

/// The browser pack: a driver, a policy and an optional vision callback.
pub struct Pack<D: Driver, P: Policy> {
    driver: Arc<D>,
    policy: Arc<P>,
    vision: Option<Vision>,
    /// The generation of the last `mark()`, dropped by `goto`.
    marks: Mutex<Option<(u64, usize)>>,
    cancel: CancelToken,
}

fn js_err(ctx: &Ctx<'_>, action: &str, msg: impl std::fmt::Display) -> rquickjs::Error {
    Exception::throw_message(ctx, &format!("browser.{action}: {msg}"))
}

impl<D: Driver, P: Policy> Pack<D, P> {
    pub fn new(driver: Arc<D>, policy: P, vision: Option<Vision>) -> Arc<Self> {
        Arc::new(Pack { driver, policy: Arc::new(policy), vision, marks: Mutex::new(None), cancel: CancelToken::new() })
    }

    /// The primitives this pack registers (vision ones only with a vision backend).
    pub fn primitives(&self) -> Vec<&'static Prim> {
        PRIMITIVES.iter().filter(|p| !p.vision || self.vision.is_some()).collect()
    }

    /// A prompt fragment advertising exactly the registered primitives.
    pub fn describe(&self) -> String {
        crate::primitives::describe(&self.primitives())
    }

    /// Cancel whatever browser call a running script is waiting for.
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Run `source`. The browser survives whatever the script does.
    pub async fn run(self: &Arc<Self>, source: &str, opts: ScriptOptions) -> Result<ScriptOutcome, ScriptError> {
        self.run_logged(source, opts).await.result
    }

    /// [`Pack::run`], keeping the console output on an exception or a timeout too.
    pub async fn run_logged(self: &Arc<Self>, source: &str, opts: ScriptOptions) -> ScriptRun {
        let pack = self.clone();
        let source = source.to_string();
        let handle = Handle::current();
        let console = Arc::new(Mutex::new(Console::new(opts.log_limit)));
        let kept = console.clone();
        let result = tokio::task::spawn_blocking(move || pack.run_blocking(handle, source, opts, console))
            .await
            .map_err(|e| ScriptError::Setup(e.to_string()))
            .and_then(|r| r);
        let logs = kept.lock().unwrap().take();
        ScriptRun::new(result, logs)
    }

    fn policy_and_call<T, F, Fut>(
        &self,
        handle: &Handle,
        deadline: Instant,
        action: &'static str,
        url: Option<&str>,
        f: F,
    ) -> Result<T, CallError>
    where
        F: FnOnce(Arc<D>, Cx) -> Fut,
        Fut: Future<Output = Result<T, DriverError>>,
    {
        handle.block_on(async {
            self.policy.check(&Request { tool: "browser", action, url }).await?;
            let cx = Cx { deadline, cancel: self.cancel.clone() };
            Ok(cx.run(action, f(self.driver.clone(), cx.clone())).await?)
        })
    }

    fn current_marks(&self) -> Result<(u64, usize), CallError> {
        self.marks.lock().unwrap().ok_or(CallError::NoMarks)
    }

    fn run_blocking(
        self: Arc<Self>,
        handle: Handle,
        source: String,
        opts: ScriptOptions,
        logs: Arc<Mutex<Console>>,
    ) -> Result<ScriptOutcome, ScriptError> {
        let cancel = self.cancel.clone();
        execute(&source, &opts, cancel, logs, |ctx, limits| self.install(ctx, &handle, limits.deadline))
    }

    fn install<'js>(self: &Arc<Self>, ctx: &Ctx<'js>, handle: &Handle, deadline: Instant) -> rquickjs::Result<()> {
        let browser = Object::new(ctx.clone())?;
        for prim in self.primitives() {
            let f = self.function(ctx, prim.name, handle.clone(), deadline)?;
            browser.set(prim.name, f)?;
        }
        ctx.globals().set("browser", browser)
    }

    fn function<'js>(
        self: &Arc<Self>,
        ctx: &Ctx<'js>,
        name: &'static str,
        h: Handle,
        deadline: Instant,
    ) -> rquickjs::Result<Function<'js>> {
        let p = self.clone();
        let to_js = |ctx: &Ctx<'js>, v: &serde_json::Value| {
            ctx.json_parse(serde_json::to_string(v).unwrap_or_else(|_| "null".into()))
        };
        match name {
            "goto" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, url: String| -> rquickjs::Result<()> {
                let target = url.clone();
                let r = p.policy_and_call(&h, deadline, "goto", Some(&url), |d, cx| async move {
                    d.navigate(&cx, &target).await
                });
                // A navigation drops marks, whether or not it succeeded.
                *p.marks.lock().unwrap() = None;
                r.map_err(|e| js_err(&ctx, "goto", e))
            }),
            "click" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, sel: String| -> rquickjs::Result<()> {
                p.policy_and_call(&h, deadline, "click", None, |d, cx| async move { d.click(&cx, &sel).await })
                    .map_err(|e| js_err(&ctx, "click", e))
            }),
            "type" => {
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, sel: String, text: String| -> rquickjs::Result<()> {
                    p.policy_and_call(
                        &h,
                        deadline,
                        "type",
                        None,
                        |d, cx| async move { d.send_keys(&cx, &sel, &text).await },
                    )
                    .map_err(|e| js_err(&ctx, "type", e))
                })
            }
            "text" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, sel: String| -> rquickjs::Result<String> {
                p.policy_and_call(&h, deadline, "text", None, |d, cx| async move { d.text(&cx, &sel).await })
                    .map_err(|e| js_err(&ctx, "text", e))
            }),
            "value" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, sel: String| -> rquickjs::Result<String> {
                p.policy_and_call(&h, deadline, "value", None, |d, cx| async move { d.value(&cx, &sel).await })
                    .map_err(|e| js_err(&ctx, "value", e))
            }),
            "waitVisible" => {
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, sel: String| -> rquickjs::Result<()> {
                    p.policy_and_call(&h, deadline, "waitVisible", None, |d, cx| async move {
                        d.wait_visible(&cx, &sel).await
                    })
                    .map_err(|e| js_err(&ctx, "waitVisible", e))
                })
            }
            "waitReady" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, sel: String| -> rquickjs::Result<()> {
                p.policy_and_call(&h, deadline, "waitReady", None, |d, cx| async move { d.wait_ready(&cx, &sel).await })
                    .map_err(|e| js_err(&ctx, "waitReady", e))
            }),
            "eval" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, expr: String| -> rquickjs::Result<Value<'js>> {
                let v = p
                    .policy_and_call(&h, deadline, "eval", None, |d, cx| async move { d.eval(&cx, &expr).await })
                    .map_err(|e| js_err(&ctx, "eval", e))?;
                to_js(&ctx, &v)
            }),
            "key" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, text: String| -> rquickjs::Result<()> {
                p.policy_and_call(&h, deadline, "key", None, |d, cx| async move { d.key_event(&cx, &text).await })
                    .map_err(|e| js_err(&ctx, "key", e))
            }),
            "screenshot" => Function::new(ctx.clone(), move |ctx: Ctx<'js>| -> rquickjs::Result<String> {
                let png = p
                    .policy_and_call(&h, deadline, "screenshot", None, |d, cx| async move { d.screenshot(&cx).await })
                    .map_err(|e| js_err(&ctx, "screenshot", e))?;
                Ok(base64::engine::general_purpose::STANDARD.encode(png))
            }),
            "mark" => Function::new(ctx.clone(), move |ctx: Ctx<'js>| -> rquickjs::Result<Value<'js>> {
                let set = p
                    .policy_and_call(&h, deadline, "mark", None, |d, cx| async move { d.marks(&cx, false).await })
                    .map_err(|e| js_err(&ctx, "mark", e))?;
                *p.marks.lock().unwrap() = Some((set.generation, set.marks.len()));
                to_js(&ctx, &serde_json::to_value(&set.marks).unwrap_or_default())
            }),
            "clickMark" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, id: f64| -> rquickjs::Result<()> {
                let id = mark_id(&ctx, "clickMark", id)?;
                let (generation, _) = p.current_marks().map_err(|e| js_err(&ctx, "clickMark", e))?;
                p.policy_and_call(&h, deadline, "clickMark", None, |d, cx| async move {
                    d.click_mark(&cx, generation, id).await
                })
                .map_err(|e| js_err(&ctx, "clickMark", e))
            }),
            "typeMark" => {
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, id: f64, text: String| -> rquickjs::Result<()> {
                    let id = mark_id(&ctx, "typeMark", id)?;
                    let (generation, _) = p.current_marks().map_err(|e| js_err(&ctx, "typeMark", e))?;
                    p.policy_and_call(&h, deadline, "typeMark", None, |d, cx| async move {
                        d.type_mark(&cx, generation, id, &text).await
                    })
                    .map_err(|e| js_err(&ctx, "typeMark", e))
                })
            }
            "uploadMark" => {
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, id: f64, names: Value<'js>| -> rquickjs::Result<()> {
                    let id = mark_id(&ctx, "uploadMark", id)?;
                    let paths = upload_names(&names).map_err(|m| js_err(&ctx, "uploadMark", m))?;
                    let (generation, _) = p.current_marks().map_err(|e| js_err(&ctx, "uploadMark", e))?;
                    p.policy_and_call(&h, deadline, "uploadMark", None, |d, cx| async move {
                        d.upload_mark(&cx, generation, id, &paths).await
                    })
                    .map_err(|e| js_err(&ctx, "uploadMark", e))
                })
            }
            "downloads" => Function::new(ctx.clone(), move |ctx: Ctx<'js>| -> rquickjs::Result<Value<'js>> {
                let list = p
                    .policy_and_call(&h, deadline, "downloads", None, |d, cx| async move { d.downloads(&cx).await })
                    .map_err(|e| js_err(&ctx, "downloads", e))?;
                to_js(&ctx, &serde_json::to_value(&list).unwrap_or_default())
            }),
            "ask" => Function::new(ctx.clone(), move |ctx: Ctx<'js>, question: String| -> rquickjs::Result<String> {
                let vision = p.vision.clone().ok_or_else(|| js_err(&ctx, "ask", "no vision backend"))?;
                let png = p
                    .policy_and_call(&h, deadline, "ask", None, |d, cx| async move { d.screenshot(&cx).await })
                    .map_err(|e| js_err(&ctx, "ask", e))?;
                h.block_on(vision(png, question)).map_err(|e| js_err(&ctx, "ask", e))
            }),
            "askMarks" => {
                Function::new(ctx.clone(), move |ctx: Ctx<'js>, question: String| -> rquickjs::Result<String> {
                    let vision = p.vision.clone().ok_or_else(|| js_err(&ctx, "askMarks", "no vision backend"))?;
                    let set = p
                        .policy_and_call(
                            &h,
                            deadline,
                            "askMarks",
                            None,
                            |d, cx| async move { d.marks(&cx, true).await },
                        )
                        .map_err(|e| js_err(&ctx, "askMarks", e))?;
                    *p.marks.lock().unwrap() = Some((set.generation, set.marks.len()));
                    let png = set.screenshot.clone().unwrap_or_default();
                    let drawn =
                        sightline_page::draw_marks(&png, &set.marks).map_err(|e| js_err(&ctx, "askMarks", e))?;
                    let prompt = format!(
                        "{question}\n\nThe screenshot shows numbered boxes over the page's interactive elements:\n{}",
                        listing(&set.marks)
                    );
                    h.block_on(vision(drawn, prompt)).map_err(|e| js_err(&ctx, "askMarks", e))
                })
            }
            other => Err(Exception::throw_message(ctx, &format!("unknown primitive {other}"))),
        }
    }
}

fn mark_id(ctx: &Ctx<'_>, action: &str, id: f64) -> rquickjs::Result<u32> {
    if id.fract() != 0.0 || id < 1.0 || id > u32::MAX as f64 {
        return Err(js_err(ctx, action, format!("mark id must be a positive integer, got {id}")));
    }
    Ok(id as u32)
}

/// The most files one `uploadMark` may choose (as the tool API's `upload_file`).
pub const MAX_UPLOAD_FILES: usize = 32;

/// `uploadMark`'s names: one string, or an array of 1 to [`MAX_UPLOAD_FILES`]
/// non-empty strings without NUL. Whether each names a file in the upload
/// directory is the driver's check.
fn upload_names(v: &Value<'_>) -> Result<Vec<String>, String> {
    let string = |v: &Value<'_>, what: &str| -> Result<String, String> {
        let s = v.as_string().ok_or(format!("{what} must be a string"))?;
        let s = s.to_string().map_err(|e| format!("{what}: {e}"))?;
        if s.trim().is_empty() {
            return Err(format!("{what} is empty"));
        }
        if s.contains('\0') {
            return Err(format!("{what} contains a NUL character"));
        }
        Ok(s)
    };
    if v.is_string() {
        return Ok(vec![string(v, "the file name")?]);
    }
    let Some(items) = v.as_array() else {
        return Err("the second argument must be an array of file names in the upload directory".into());
    };
    if items.is_empty() || items.len() > MAX_UPLOAD_FILES {
        return Err(format!("choose 1 to {MAX_UPLOAD_FILES} files, got {}", items.len()));
    }
    (0..items.len())
        .map(|i| {
            let item: Value<'_> = items.get(i).map_err(|e| e.to_string())?;
            string(&item, &format!("file name [{i}]"))
        })
        .collect()
}

/// One line per mark: `[3] button "Sign in"`.
pub fn listing(marks: &[Mark]) -> String {
    marks
        .iter()
        .map(|m| {
            let kind = if m.role.is_empty() { &m.tag } else { &m.role };
            format!("[{}] {kind} {:?}", m.id, m.name)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
