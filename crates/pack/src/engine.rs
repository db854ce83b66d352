//! The QuickJS engine every script runs in, whoever supplies its `browser`.
//!
//! A script runs on a blocking thread in a fresh QuickJS runtime with a memory
//! limit, a stack limit and a deadline (an interrupt handler stops runaway
//! JavaScript; the same deadline bounds every host call). It has no file,
//! network or process access: no QuickJS std/os modules are loaded; its only
//! way out is the `browser` object its host installs, and a bounded `console`.
//!
//! Two hosts use it: the Set-of-Marks [`crate::Pack`] (a [`crate::Driver`]
//! behind each primitive) and [`run_hosted`], whose `browser` calls travel as
//! [`HostCall`]s over a channel to an async caller that answers them (the tool
//! API's `run`), so the caller keeps its own borrows and locks.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::function::Rest;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Exception, Function, Object, Promise, Runtime, Value};
use serde_json::Value as Json;
use tokio::sync::{mpsc, oneshot};

use crate::driver::CancelToken;

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
    /// The source is the body of an async function: `await` works and `return`
    /// gives the value (else it is a script whose last expression is the value).
    pub async_body: bool,
    /// The most `browser` calls the script may make (none: no limit).
    pub max_calls: Option<u32>,
}

impl Default for ScriptOptions {
    fn default() -> Self {
        ScriptOptions {
            timeout: Duration::from_secs(30),
            memory_limit: 64 << 20,
            filename: "script.js".into(),
            log_limit: 1 << 20,
            async_body: false,
            max_calls: None,
        }
    }
}

/// The longest single console line kept, in bytes; longer ones are cut.
pub const MAX_LOG_LINE: usize = 16 << 10;

/// The script's console: bounded, so logging in a loop cannot grow the process.
#[derive(Debug, Default)]
pub(crate) struct Console {
    lines: Vec<String>,
    bytes: usize,
    limit: usize,
    dropped: usize,
}

impl Console {
    pub(crate) fn new(limit: usize) -> Console {
        Console { limit, ..Console::default() }
    }

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

    pub(crate) fn take(&mut self) -> Vec<String> {
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

impl ScriptRun {
    pub(crate) fn new(result: Result<ScriptOutcome, ScriptError>, logs: Vec<String>) -> ScriptRun {
        match result {
            Ok(mut out) => {
                out.logs = logs.clone();
                ScriptRun { result: Ok(out), logs }
            }
            Err(e) => ScriptRun { result: Err(e), logs },
        }
    }
}

/// What a script produced: its completion value (as JSON) and what it logged.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOutcome {
    pub value: Json,
    pub logs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptError {
    #[error("{message}{}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    Exception { message: String, line: Option<u32> },
    /// A `browser` call failed with a host error the script did not catch.
    #[error("{message}{}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    Call { code: String, message: String, detail: Json, line: Option<u32> },
    #[error("the script was stopped at its {after:?} time limit")]
    Timeout { after: Duration },
    #[error("the script ran out of memory (limit {limit} bytes)")]
    OutOfMemory { limit: usize },
    #[error("the script made more than its {limit} browser calls")]
    TooManyCalls { limit: u32 },
    #[error("the sandbox could not start: {0}")]
    Setup(String),
}

/// What stops a script besides its own end: the deadline, cancellation, the call budget.
pub(crate) struct Limits {
    pub deadline: Instant,
    pub cancel: CancelToken,
    calls: AtomicU32,
    over_calls: AtomicBool,
    max_calls: Option<u32>,
}

impl Limits {
    /// Count one `browser` call; false (and the script is stopped) past the budget.
    pub(crate) fn count_call(&self) -> bool {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.max_calls.is_some_and(|m| n > m) {
            self.over_calls.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }
}

/// The wrapper that makes the source an async function body (one line before it).
const ASYNC_HEAD: &str = "(async function () {\n";
const ASYNC_TAIL: &str = "\n})()";

/// Run `source` in a fresh runtime; `install` adds the host's globals (the
/// `console` is installed here).
pub(crate) fn execute(
    source: &str,
    opts: &ScriptOptions,
    cancel: CancelToken,
    logs: Arc<Mutex<Console>>,
    install: impl for<'js> FnOnce(&Ctx<'js>, &Arc<Limits>) -> rquickjs::Result<()>,
) -> Result<ScriptOutcome, ScriptError> {
    let setup = |e: rquickjs::Error| ScriptError::Setup(e.to_string());
    // The memory cap is the allocator's (see `alloc`), so running out is known for certain.
    let (capped, out_of_memory) = crate::alloc::Capped::new(opts.memory_limit);
    let rt = Runtime::new_with_alloc(capped).map_err(setup)?;
    rt.set_max_stack_size(1 << 20);
    let limits = Arc::new(Limits {
        deadline: Instant::now() + opts.timeout,
        cancel,
        calls: AtomicU32::new(0),
        over_calls: AtomicBool::new(false),
        max_calls: opts.max_calls,
    });
    let timed_out = Arc::new(AtomicBool::new(false));
    let (flag, l) = (timed_out.clone(), limits.clone());
    // Cancelling (the binary does on SIGTERM/SIGINT; a caller that goes away) stops the script too.
    rt.set_interrupt_handler(Some(Box::new(move || {
        let over = Instant::now() >= l.deadline;
        if over {
            flag.store(true, Ordering::SeqCst);
        }
        over || l.cancel.is_cancelled() || l.over_calls.load(Ordering::SeqCst)
    })));
    let ctx = Context::full(&rt).map_err(setup)?;
    ctx.with(|ctx| {
        install_console(&ctx, logs).map_err(setup)?;
        install(&ctx, &limits).map_err(setup)?;
        let mut eval = EvalOptions::default();
        eval.global = true;
        eval.strict = false;
        eval.filename = Some(opts.filename.clone());
        let code = if opts.async_body { format!("{ASYNC_HEAD}{source}{ASYNC_TAIL}") } else { source.to_string() };
        let result: Result<Value, _> = ctx
            .eval_with_options(code.into_bytes(), eval)
            .and_then(|v: Value| match v.as_promise() {
                // Host calls answer synchronously, so the job queue settles the promise.
                Some(p) => Promise::finish::<Value>(p),
                None => Ok(v),
            })
            .catch(&ctx);
        match result {
            Ok(v) => {
                let json = ctx.json_stringify(v).ok().flatten().and_then(|s| s.to_string().ok());
                let value = json.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(Json::Null);
                Ok(ScriptOutcome { value, logs: Vec::new() })
            }
            Err(e) => {
                if limits.over_calls.load(Ordering::SeqCst) {
                    return Err(ScriptError::TooManyCalls { limit: opts.max_calls.unwrap_or_default() });
                }
                let over = timed_out.load(Ordering::SeqCst) || Instant::now() >= limits.deadline;
                Err(classify(e, opts, over, out_of_memory.load(Ordering::SeqCst)))
            }
        }
    })
}

fn install_console<'js>(ctx: &Ctx<'js>, logs: Arc<Mutex<Console>>) -> rquickjs::Result<()> {
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
    console.set("log", log.clone())?;
    console.set("info", log.clone())?;
    console.set("warn", log.clone())?;
    console.set("error", log)?;
    ctx.globals().set("console", console)
}

fn classify(e: CaughtError<'_>, opts: &ScriptOptions, timed_out: bool, out_of_memory: bool) -> ScriptError {
    if timed_out {
        return ScriptError::Timeout { after: opts.timeout };
    }
    if out_of_memory || matches!(e, CaughtError::Error(rquickjs::Error::Allocation)) {
        return ScriptError::OutOfMemory { limit: opts.memory_limit };
    }
    let (message, stack, code, detail) = match &e {
        CaughtError::Exception(ex) => {
            let code: Option<String> = ex.as_object().get("code").ok().flatten();
            let detail: Option<Value> = ex.as_object().get("detail").ok();
            let detail = detail
                .and_then(|d| ex.ctx().json_stringify(d).ok().flatten())
                .and_then(|s| s.to_string().ok())
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Json::Null);
            (ex.message().unwrap_or_else(|| "exception".into()), ex.stack(), code, detail)
        }
        CaughtError::Value(v) => (format!("{v:?}"), None, None, Json::Null),
        CaughtError::Error(err) => (err.to_string(), None, None, Json::Null),
    };
    let head = if opts.async_body { 1 } else { 0 };
    let line = stack.as_deref().and_then(|s| line_of(s, &opts.filename)).map(|l| l.saturating_sub(head).max(1));
    match code {
        Some(code) => ScriptError::Call { code, message, detail, line },
        None => ScriptError::Exception { message, line },
    }
}

/// The first `FILE:LINE` in a QuickJS stack.
fn line_of(stack: &str, file: &str) -> Option<u32> {
    let at = stack.find(&format!("{file}:"))? + file.len() + 1;
    stack[at..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().ok()
}

/// A host's answer to a failed call: a stable code, a message, structured detail.
/// The script sees an `Error` with `code` and `detail` properties.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct HostError {
    pub code: String,
    pub message: String,
    pub detail: Json,
}

/// One `browser.NAME(args…)` call of a hosted script, waiting for its answer.
#[derive(Debug)]
pub struct HostCall {
    pub name: &'static str,
    /// The call's arguments, as JSON (`undefined` is null).
    pub args: Vec<Json>,
    reply: oneshot::Sender<Result<Json, HostError>>,
}

impl HostCall {
    /// Answer the script (it is waiting); a script that is gone ignores it.
    pub fn answer(self, r: Result<Json, HostError>) {
        let _ = self.reply.send(r);
    }
}

/// Run `source` with a `browser` object of `names`, each call sent to the
/// returned receiver as a [`HostCall`] for the caller to answer. The run
/// future ends when the script does; dropping it (or cancelling `cancel`)
/// stops the script at its next interrupt check.
pub fn run_hosted(
    names: &'static [&'static str],
    source: String,
    opts: ScriptOptions,
    cancel: CancelToken,
) -> (tokio::task::JoinHandle<ScriptRun>, mpsc::Receiver<HostCall>) {
    let (tx, rx) = mpsc::channel::<HostCall>(1);
    let console = Arc::new(Mutex::new(Console::new(opts.log_limit)));
    let run = tokio::task::spawn_blocking(move || {
        let kept = console.clone();
        let result = execute(&source, &opts, cancel, console, |ctx, limits| install_host(ctx, names, tx, limits));
        let logs = kept.lock().unwrap().take();
        ScriptRun::new(result, logs)
    });
    (run, rx)
}

fn install_host<'js>(
    ctx: &Ctx<'js>,
    names: &'static [&'static str],
    tx: mpsc::Sender<HostCall>,
    limits: &Arc<Limits>,
) -> rquickjs::Result<()> {
    let browser = Object::new(ctx.clone())?;
    for &name in names {
        let (tx, limits) = (tx.clone(), limits.clone());
        let f =
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<Value<'js>> {
                if !limits.count_call() {
                    return Err(Exception::throw_message(&ctx, "the script's browser-call budget is spent"));
                }
                let args = args
                    .0
                    .into_iter()
                    .map(|v| {
                        ctx.json_stringify(v)
                            .ok()
                            .flatten()
                            .and_then(|s| s.to_string().ok())
                            .and_then(|s| serde_json::from_str(&s).ok())
                            .unwrap_or(Json::Null)
                    })
                    .collect();
                let (reply, answer) = oneshot::channel();
                let fail = |ctx: &Ctx<'js>, e: HostError| throw_host(ctx, name, e);
                if tx.blocking_send(HostCall { name, args, reply }).is_err() {
                    return Err(fail(&ctx, gone()));
                }
                match answer.blocking_recv() {
                    Ok(Ok(v)) => ctx.json_parse(serde_json::to_string(&v).unwrap_or_else(|_| "null".into())),
                    Ok(Err(e)) => Err(fail(&ctx, e)),
                    Err(_) => Err(fail(&ctx, gone())),
                }
            })?;
        browser.set(name, f)?;
    }
    ctx.globals().set("browser", browser)
}

fn gone() -> HostError {
    HostError { code: "cancelled".into(), message: "the caller went away".into(), detail: Json::Null }
}

/// Throw `browser.NAME: message` as an `Error` carrying `code` and `detail`.
fn throw_host(ctx: &Ctx<'_>, name: &str, e: HostError) -> rquickjs::Error {
    let message = format!("browser.{name}: {}", e.message);
    let built = Exception::from_message(ctx.clone(), &message).and_then(|ex| {
        ex.as_object().set("code", e.code.as_str())?;
        let detail = ctx.json_parse(serde_json::to_string(&e.detail).unwrap_or_else(|_| "null".into()))?;
        ex.as_object().set("detail", detail)?;
        Ok(ex)
    });
    match built {
        Ok(ex) => ctx.throw(ex.into_value()),
        Err(err) => err,
    }
}
