//! The QuickJS sandbox and its `browser` global.
//!
//! A script runs on a blocking thread in a fresh QuickJS runtime with a memory
//! limit and a deadline (an interrupt handler stops runaway JavaScript; the same
//! deadline bounds every browser call). It has no file, network or process
//! access: no QuickJS std/os modules are loaded. Every `browser` primitive is
//! checked by the policy, then run on the driver under a [`Cx`], and is
//! synchronous to the script: it returns when the browser has finished the step.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use rquickjs::context::EvalOptions;
use rquickjs::function::Rest;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Exception, Function, Object, Runtime, Value};
use tokio::runtime::Handle;

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

#[derive(Debug, Clone)]
pub struct ScriptOptions {
    pub timeout: Duration,
    /// QuickJS heap limit in bytes.
    pub memory_limit: usize,
    /// Shown in error locations.
    pub filename: String,
    /// The most `console.log` output kept, in bytes (default 1 MiB); past it,
    /// lines are counted, not stored, and one last line says how many.
    pub log_limit: usize,
}

impl Default for ScriptOptions {
    fn default() -> Self {
        ScriptOptions {
            timeout: Duration::from_secs(30),
            memory_limit: 64 << 20,
            filename: "script.js".into(),
            log_limit: 1 << 20,
        }
    }
}

/// The longest single console line kept, in bytes; longer ones are cut.
pub const MAX_LOG_LINE: usize = 16 << 10;

/// The script's console: bounded, so logging in a loop cannot grow the process.
#[derive(Debug, Default)]
struct Console {
    lines: Vec<String>,
    bytes: usize,
    limit: usize,
    dropped: usize,
}

impl Console {
    fn full(&self) -> bool {
        self.bytes >= self.limit
    }

    fn push(&mut self, mut line: String) {
        if self.full() {
            self.dropped += 1;
            return;
        }
        if line.len() > MAX_LOG_LINE {
            let mut cut = MAX_LOG_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push_str("… (line cut)");
        }
        self.bytes += line.len();
        self.lines.push(line);
    }

    fn take(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.lines);
        if self.dropped > 0 {
            out.push(format!("… {} more console lines dropped (log limit {} bytes)", self.dropped, self.limit));
        }
        out
    }
}

/// A finished run: its result, and what it logged whether it succeeded or not.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRun {
    pub result: Result<ScriptOutcome, ScriptError>,
    pub logs: Vec<String>,
}

/// What a script produced: its completion value (as JSON) and what it logged.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOutcome {
    pub value: serde_json::Value,
    pub logs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    #[error("{message}{}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    Exception { message: String, line: Option<u32> },
    #[error("the script was stopped at its {after:?} time limit")]
    Timeout { after: Duration },
    #[error("the script ran out of memory (limit {limit} bytes)")]
    OutOfMemory { limit: usize },
    #[error("the sandbox could not start: {0}")]
    Setup(String),
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
        let console = Arc::new(Mutex::new(Console { limit: opts.log_limit, ..Console::default() }));
        let kept = console.clone();
        let result = tokio::task::spawn_blocking(move || pack.run_blocking(handle, source, opts, console))
            .await
            .map_err(|e| ScriptError::Setup(e.to_string()))
            .and_then(|r| r);
        let logs = kept.lock().unwrap().take();
        match result {
            Ok(mut out) => {
                out.logs = logs.clone();
                ScriptRun { result: Ok(out), logs }
            }
            Err(e) => ScriptRun { result: Err(e), logs },
        }
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
        let setup = |e: rquickjs::Error| ScriptError::Setup(e.to_string());
        // The memory cap is the allocator's (see `alloc`), so running out is known for certain.
        let (capped, out_of_memory) = crate::alloc::Capped::new(opts.memory_limit);
        let rt = Runtime::new_with_alloc(capped).map_err(setup)?;
        rt.set_max_stack_size(1 << 20);
        let deadline = Instant::now() + opts.timeout;
        let timed_out = Arc::new(AtomicBool::new(false));
        let flag = timed_out.clone();
        // Cancelling the pack (the binary does on SIGTERM/SIGINT) stops the script too.
        let cancel = self.cancel.clone();
        rt.set_interrupt_handler(Some(Box::new(move || {
            let over = Instant::now() >= deadline;
            if over {
                flag.store(true, Ordering::SeqCst);
            }
            over || cancel.is_cancelled()
        })));
        let ctx = Context::full(&rt).map_err(setup)?;
        ctx.with(|ctx| {
            self.install(&ctx, &handle, deadline, logs.clone()).map_err(setup)?;
            let mut eval = EvalOptions::default();
            eval.global = true;
            eval.strict = false;
            eval.filename = Some(opts.filename.clone());
            let result: Result<Value, _> = ctx.eval_with_options(source.as_bytes().to_vec(), eval).catch(&ctx);
            let out = match result {
                Ok(v) => {
                    let json = ctx.json_stringify(v).ok().flatten().and_then(|s| s.to_string().ok());
                    let value = json.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(serde_json::Value::Null);
                    Ok(ScriptOutcome { value, logs: Vec::new() })
                }
                Err(e) => Err(classify(
                    e,
                    &opts,
                    timed_out.load(Ordering::SeqCst) || Instant::now() >= deadline,
                    out_of_memory.load(Ordering::SeqCst),
                )),
            };
            out
        })
    }

    fn install<'js>(
        self: &Arc<Self>,
        ctx: &Ctx<'js>,
        handle: &Handle,
        deadline: Instant,
        logs: Arc<Mutex<Console>>,
    ) -> rquickjs::Result<()> {
        let browser = Object::new(ctx.clone())?;
        for prim in self.primitives() {
            let f = self.function(ctx, prim.name, handle.clone(), deadline)?;
            browser.set(prim.name, f)?;
        }
        ctx.globals().set("browser", browser)?;
        let console = Object::new(ctx.clone())?;
        let log = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
            if logs.lock().unwrap().full() {
                logs.lock().unwrap().dropped += 1;
                return Ok(());
            }
            let parts: Vec<String> = args
                .0
                .into_iter()
                .map(|v| match v.as_string() {
                    Some(s) => s.to_string().unwrap_or_default(),
                    None => ctx
                        .json_stringify(v)
                        .ok()
                        .flatten()
                        .and_then(|s| s.to_string().ok())
                        .unwrap_or_else(|| "undefined".into()),
                })
                .collect();
            logs.lock().unwrap().push(parts.join(" "));
            Ok(())
        })?;
        console.set("log", log)?;
        ctx.globals().set("console", console)?;
        Ok(())
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

fn classify(e: CaughtError<'_>, opts: &ScriptOptions, timed_out: bool, out_of_memory: bool) -> ScriptError {
    if timed_out {
        return ScriptError::Timeout { after: opts.timeout };
    }
    if out_of_memory || matches!(e, CaughtError::Error(rquickjs::Error::Allocation)) {
        return ScriptError::OutOfMemory { limit: opts.memory_limit };
    }
    let (message, stack) = match &e {
        CaughtError::Exception(ex) => (ex.message().unwrap_or_else(|| "exception".into()), ex.stack()),
        CaughtError::Value(v) => (format!("{v:?}"), None),
        CaughtError::Error(err) => (err.to_string(), None),
    };
    let line = stack.as_deref().and_then(|s| line_of(s, &opts.filename));
    ScriptError::Exception { message, line }
}

/// The first `FILE:LINE` in a QuickJS stack.
fn line_of(stack: &str, file: &str) -> Option<u32> {
    let at = stack.find(&format!("{file}:"))? + file.len() + 1;
    stack[at..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
}
