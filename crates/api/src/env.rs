//! The element-index protocol environment: one tab, turn by turn.
//!
//! [`Env::step`] takes one line of agent input and returns exactly one State
//! Object. On any error the browser is left as it was and the previous State
//! Object is returned unchanged (same `state_hash`, same `element_index`) with
//! an `error` attached.

use std::time::{Duration, Instant};

use serde_json::Value;
use sightline_browser::{BrowserError, Captured, DragTo, HistoryStep, Refusal, Tab, TargetId};
use sightline_page::ElementIndex;

use crate::action::{Action, DragTarget};
use crate::lines::LineError;
use crate::state::{ErrorCode, ErrorObject, StateObject, TaskEnd, TaskStatus};
use sightline_policy::Egress;

mod hand_off;
mod tabs;
pub(crate) use hand_off::person_code;
pub use hand_off::Human;

/// Options for an environment.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// Attach a base64 PNG screenshot to each state (`--no-screenshot` turns it off).
    pub screenshot: bool,
}

impl Default for EnvOptions {
    fn default() -> Self {
        EnvOptions { screenshot: true }
    }
}

/// Errors that end an environment (the browser is gone).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    #[error("browser error: {0}")]
    Browser(#[from] BrowserError),
}

/// What one turn produced.
pub struct Turn {
    pub state: StateObject,
    /// Set after `finish_task` / `fail_task`.
    pub ended: bool,
    /// The browser is gone; the caller should exit with a failure.
    pub fatal: bool,
    /// Time spent acting (incl. waiting for a stable page) and capturing.
    pub act_time: Duration,
    pub capture_time: Duration,
}

pub struct Env {
    tab: std::sync::Arc<Tab>,
    /// The tabs that opened the current one (popups, `target=_blank`), innermost last.
    /// When the current tab closes, the state returns to the last of them.
    openers: Vec<std::sync::Arc<Tab>>,
    /// Every open tab of this environment, in the order they opened (numbered
    /// from 1 in `page_content`, `switch_tab` and `close_tab`); the current one too.
    tabs: Vec<std::sync::Arc<Tab>>,
    /// Tabs closed since (kept so that closing the environment disposes their context).
    retired: Vec<std::sync::Arc<Tab>>,
    /// Page targets already seen in this context (so a tab is followed once).
    known: std::collections::HashSet<TargetId>,
    opts: EnvOptions,
    egress: Option<std::sync::Arc<Egress>>,
    /// `--files`: where `upload_file` may read (none: refused).
    files: Option<std::sync::Arc<sightline_browser::FileRoot>>,
    downloads: Option<sightline_browser::Downloads>,
    current: Captured,
    state: StateObject,
    /// Marking elements new since the previous state (opt-in).
    fresh: Option<crate::fresh::Fresh>,
    /// The steps taken, as a replayable script (opt-in: [`Env::record`]).
    recorder: Option<crate::record::Recorder>,
    /// Who `request_human` hands the tab to (none: `HUMAN_UNAVAILABLE`).
    human: Option<Human>,
}

impl Env {
    /// Capture the tab as it is (load a page with a `navigate` step).
    pub async fn new(tab: impl Into<std::sync::Arc<Tab>>, opts: EnvOptions) -> Result<Env, EnvError> {
        let tab: std::sync::Arc<Tab> = tab.into();
        let current = tab.capture(opts.screenshot).await?;
        let state = StateObject::from_view(&current.view, current.screenshot.clone());
        let mut known: std::collections::HashSet<TargetId> = std::iter::once(tab.target_id().clone()).collect();
        // Pages already open in this context are not ones this page opened.
        if let Some(ctx) = tab.context_id() {
            if let Ok(pages) = tab.browser().pages_in(ctx).await {
                known.extend(pages.into_iter().map(|(id, _)| id));
            }
        }
        Ok(Env {
            tabs: vec![tab.clone()],
            retired: Vec::new(),
            tab,
            openers: Vec::new(),
            known,
            opts,
            egress: None,
            files: None,
            downloads: None,
            current,
            state,
            fresh: None,
            recorder: None,
            human: None,
        })
    }

    /// Capture the tab as it is now (it may have changed outside this environment).
    pub async fn refresh(&mut self) -> Result<&StateObject, EnvError> {
        let mut c = self.capture().await?;
        self.state = StateObject::from_view(&c.view, c.screenshot.clone());
        if let Some(f) = &mut self.fresh {
            f.mark(&self.tab, &mut c, &mut self.state);
        }
        self.current = c;
        Ok(&self.state)
    }

    /// Mark, in each next state's `page_content`, the elements new since the
    /// previous state with `*` (`*[12]button "Save"`; module `fresh`).
    pub fn set_mark_new(&mut self, on: bool) {
        match (on, &self.fresh) {
            (true, None) => self.fresh = Some(crate::fresh::Fresh::new(&self.tab, &self.current)),
            (false, _) => self.fresh = None,
            (true, Some(_)) => {}
        }
    }

    /// Check every `navigate` against this egress policy first, and name the
    /// proxy's refusal when a load fails.
    pub fn set_egress(&mut self, egress: std::sync::Arc<Egress>) {
        self.egress = Some(egress);
    }

    /// Where `upload_file` may read files from (`--files DIR`), and this
    /// context's downloads (named in page_content). Call once, right after [`Env::new`]:
    /// the current state gains the lines too.
    pub fn set_files(
        &mut self,
        uploads: Option<std::sync::Arc<sightline_browser::FileRoot>>,
        downloads: Option<sightline_browser::Downloads>,
    ) {
        self.files = uploads;
        self.downloads = downloads;
        crate::files::annotate(&self.tab, &mut self.current, self.downloads.as_ref());
        self.state = StateObject::from_view(&self.current.view, self.current.screenshot.clone());
    }

    /// A line of input that could not even be read as text (too long, not
    /// UTF-8, NUL): `ACTION_VALIDATION_FAILED`, state unchanged.
    pub fn reject(&self, e: &LineError) -> Turn {
        self.error(ErrorCode::ActionValidationFailed, format!("the input line was refused: {e}"), Value::Null, false)
    }
    /// Capture the current tab, listing the open tabs in the text when there is more than one.
    async fn capture(&self) -> Result<Captured, BrowserError> {
        let mut c = self.tab.capture(self.opts.screenshot).await?;
        if self.tabs.len() > 1 {
            let line = self.tabs_line().await?;
            c.view.page_content.push_str(&format!("\n{line}"));
        }
        crate::files::annotate(&self.tab, &mut c, self.downloads.as_ref());
        Ok(c)
    }

    /// Record every action that succeeds from now on, for [`crate::record::Recorder::script`].
    pub fn record(&mut self) {
        self.recorder.get_or_insert_with(Default::default);
    }

    /// The recording, when [`Env::record`] started one.
    pub fn recorder_mut(&mut self) -> Option<&mut crate::record::Recorder> {
        self.recorder.as_mut()
    }

    /// Whether the next states carry a screenshot.
    pub fn set_screenshot(&mut self, on: bool) {
        self.opts.screenshot = on;
    }

    /// The last State Object emitted.
    pub fn state(&self) -> &StateObject {
        &self.state
    }

    pub fn captured(&self) -> &Captured {
        &self.current
    }

    pub fn tab(&self) -> &Tab {
        &self.tab
    }

    /// Close every tab of the environment (the first one, which may own the
    /// browser context, last), unless something else still shares them.
    pub async fn close(self) {
        let mut all: Vec<std::sync::Arc<Tab>> = Vec::new();
        let first = self.tabs.first().map(|t| t.target_id().clone());
        for t in std::iter::once(self.tab).chain(self.openers).chain(self.tabs).chain(self.retired) {
            if !all.iter().any(|a| a.target_id() == t.target_id()) {
                all.push(t);
            }
        }
        // Duplicates are dropped by now, so each tab is held once here.
        all.sort_by_key(|t| Some(t.target_id()) == first.as_ref());
        for t in all {
            if let Ok(tab) = std::sync::Arc::try_unwrap(t) {
                tab.close().await;
            }
        }
    }

    /// One turn: parse, validate, act, wait, capture.
    pub async fn step(&mut self, line: &str) -> Turn {
        // Echoed in errors: the action as sent, or (when it is not JSON or longer
        // than 64 KiB) its first 1,000 characters, so a reply stays small.
        let short = || Value::String(sightline_page::cut(line, 1000));
        let raw: Value =
            if line.len() > 64 << 10 { short() } else { serde_json::from_str(line).unwrap_or_else(|_| short()) };
        let action = match Action::parse(line) {
            Ok(a) => a,
            Err(e) => return self.error(ErrorCode::ActionValidationFailed, e.message, raw, false),
        };
        self.step_action(action, raw).await
    }

    /// One turn for an action already parsed as JSON (the `act` tool, HTTP
    /// `act`): validated here, echoed in errors as it came (or, past 64 KiB
    /// of JSON, its first 1,000 characters), exactly as [`Env::step`] does.
    pub async fn step_value(&mut self, v: Value) -> Turn {
        let action = Action::from_value(&v);
        let raw = if json_len(&v) > 64 << 10 { Value::String(sightline_page::cut(&v.to_string(), 1000)) } else { v };
        match action {
            Ok(a) => self.step_action(a, raw).await,
            Err(e) => self.error(ErrorCode::ActionValidationFailed, e.message, raw, false),
        }
    }

    /// One turn for an already validated action (`raw` is echoed in errors).
    pub async fn step_action(&mut self, action: Action, raw: Value) -> Turn {
        let name = action.name();
        let turn = match self.person_turn(&action, &raw).await {
            Some(t) => t,
            None => self.act(action, raw).await,
        };
        self.note_on_desk(name, &turn);
        turn
    }

    async fn act(&mut self, action: Action, raw: Value) -> Turn {
        let started = Instant::now();
        let count = self.current.view.elements.len();
        // The agent's number becomes an element index only if it names an element of this index
        // (0 and numbers past u32 name none; they never wrap around to a small index).
        let check = |i: u64, field: &str| -> Result<ElementIndex, (ErrorCode, String)> {
            match ElementIndex::try_from(i).ok().filter(|e| e.position() < count) {
                Some(e) => Ok(e),
                None => {
                    let range = if count == 0 {
                        "the index is empty".to_string()
                    } else {
                        format!("valid indexes are 1..{count}")
                    };
                    Err((
                        ErrorCode::InvalidElementIndex,
                        format!("Element with index {i} ({field}) not found in the current element index; {range}."),
                    ))
                }
            }
        };
        // What a recording will say of this step, read from the state it acts on.
        let planned = self.recorder.as_ref().map(|_| crate::record::step_of(&action, &self.current));
        let result: Result<(), (ErrorCode, String)> = async {
            match &action {
                Action::ClickElement { element_index, count } => {
                    let i = check(*element_index, "element_index")?;
                    self.tab.click_count(&self.current, i, u32::from(*count)).await.map_err(map_err)
                }
                Action::HoverElement { element_index } => {
                    let i = check(*element_index, "element_index")?;
                    self.tab.hover(&self.current, i).await.map_err(map_err)
                }
                Action::InputText { element_index, text, overwrite } => {
                    let i = check(*element_index, "element_index")?;
                    self.tab.type_text(&self.current, i, text, *overwrite).await.map_err(map_err)
                }
                Action::SelectOption { element_index, option_index } => {
                    let s = check(*element_index, "element_index")?;
                    let o = check(*option_index, "option_index")?;
                    self.tab.select_option(&self.current, s, o).await.map_err(map_err)
                }
                Action::Scroll { direction, pixels, element_index } => {
                    let e = element_index.map(|i| check(i, "element_index")).transpose()?;
                    let d = *direction;
                    let px = pixels.map(|p| p.min(u32::MAX as u64) as u32);
                    self.tab.scroll(&self.current, d, px, e).await.map_err(map_err)
                }
                Action::Navigate { url } => {
                    let seen = self.downloads.as_ref().map(|d| d.seen());
                    let r = async {
                        let Some(egress) = self.egress.clone() else { return self.tab.navigate(url).await.map_err(map_err) };
                        if let Err(refused) = egress.check_navigation(url).await {
                            return Err((
                                ErrorCode::NavigationFailed,
                                format!("Navigation to {url} was refused by the egress policy (rule {}): {refused}. The previous page is still loaded.", refused.rule()),
                            ));
                        }
                        let mark = egress.mark();
                        self.tab.navigate(url).await.map_err(map_err).map_err(|(code, mut message)| {
                            if let Some(why) = egress.explain_since(mark) {
                                message.push_str(&format!(" Cause: {why}."));
                            }
                            (code, message)
                        })
                    }
                    .await;
                    sightline_browser::navigation_outcome(r, self.downloads.as_ref(), seen).await
                }
                Action::UploadFile { element_index, paths } => {
                    let i = check(*element_index, "element_index")?;
                    let files = crate::files::resolve(self.files.as_deref(), paths)
                        .map_err(|e| (ErrorCode::ActionValidationFailed, format!("upload_file refused: {e}.")))?;
                    self.tab.upload_files(&self.current, i, &files).await.map_err(map_err)
                }
                Action::PressKey { key, element_index } => {
                    let e = element_index.map(|i| check(i, "element_index")).transpose()?;
                    self.tab.press_key_on(&self.current, e, key).await.map_err(map_err)
                }
                Action::Drag { element_index, to } => {
                    let i = check(*element_index, "element_index")?;
                    let to = match *to {
                        DragTarget::Element(t) => DragTo::Element(check(t, "to_element_index")?),
                        DragTarget::By { dx, dy } => DragTo::By(dx as f64, dy as f64),
                    };
                    self.tab.drag(&self.current, i, to).await.map_err(map_err)
                }
                Action::SwitchTab { tab } => self.switch_tab(*tab),
                Action::CloseTab { tab } => self.close_tab(*tab).await,
                Action::GoBack => self.tab.go(HistoryStep::Back).await.map_err(map_err),
                Action::GoForward => self.tab.go(HistoryStep::Forward).await.map_err(map_err),
                Action::FinishTask { .. } | Action::FailTask { .. } => Ok(()),
                // Served by the desk of a `Human` when there is one (`Env::person_turn`); else no live view.
                Action::RequestHuman { .. } | Action::WaitForHuman { .. } => Err((
                    ErrorCode::HumanUnavailable,
                    format!(
                        "{} needs a live view for the person: run the session on `sightline serve`, or `sightline env --live ADDR`.",
                        action.name()
                    ),
                )),
            }
        }
        .await;
        // A click that closed its own tab (a popup's "Save") ended well if there is an opener to return to.
        let result = match result {
            Err(_) if self.tab.is_closed() && !self.openers.is_empty() => Ok(()),
            other => other,
        };
        let result = match result {
            Ok(()) if !matches!(action, Action::FinishTask { .. } | Action::FailTask { .. }) => {
                self.follow_tabs().await.map_err(map_err)
            }
            other => other,
        };
        let act_time = started.elapsed();
        if let Err((code, message)) = result {
            let fatal = code == ErrorCode::InternalBrowserError && self.tab_is_gone();
            let mut t = self.error(code, message, raw, fatal);
            t.act_time = act_time;
            return t;
        }
        if let (Some(r), Some(step)) = (self.recorder.as_mut(), planned) {
            r.push(&self.current.view.url, step);
        }
        let task = match &action {
            Action::FinishTask { message } => Some(TaskEnd { status: TaskStatus::Finished, message: message.clone() }),
            Action::FailTask { message } => Some(TaskEnd { status: TaskStatus::Failed, message: message.clone() }),
            _ => None,
        };
        if let Some(task) = task {
            let mut state = self.state.clone();
            state.task = Some(task);
            return Turn { state, ended: true, fatal: false, act_time, capture_time: Duration::ZERO };
        }
        // A download the action started is given the settle cap to finish, so the state can say how it ended.
        if let Some(d) = &self.downloads {
            d.wait_idle(self.tab.options().settle.cap).await;
        }
        self.turn_after(started, raw).await
    }

    /// The state after an action that began at `started`: captured, following
    /// the tabs (an error in it is the turn's).
    async fn turn_after(&mut self, started: Instant, raw: Value) -> Turn {
        let act_time = started.elapsed();
        let t = Instant::now();
        match self.capture_following().await {
            Ok(mut c) => {
                self.state = StateObject::from_view(&c.view, c.screenshot.clone());
                if let Some(f) = &mut self.fresh {
                    f.mark(&self.tab, &mut c, &mut self.state);
                }
                self.current = c;
                Turn { state: self.state.clone(), ended: false, fatal: false, act_time, capture_time: t.elapsed() }
            }
            Err(e) => {
                let fatal = e.is_fatal();
                self.error(ErrorCode::InternalBrowserError, format!("capturing the page failed: {e}"), raw, fatal)
            }
        }
    }

    fn tab_is_gone(&self) -> bool {
        self.tab.browser().client().is_closed() || self.tab.is_dead()
    }

    fn error(&self, code: ErrorCode, message: String, failed_action: Value, fatal: bool) -> Turn {
        Turn {
            state: self.state.with_error(ErrorObject { code, message, failed_action }),
            ended: false,
            fatal,
            act_time: Duration::ZERO,
            capture_time: Duration::ZERO,
        }
    }
}

fn map_err(e: BrowserError) -> (ErrorCode, String) {
    match e {
        BrowserError::NotInteractive { index, reason } => {
            let hint = match &reason {
                Refusal::Covered { .. } => " Close or scroll away what covers it, or pick another element.",
                Refusal::Disabled => " It may become enabled after other fields are filled.",
                _ => "",
            };
            (ErrorCode::ElementNotInteractive, format!("Element {index} cannot be used: {reason}.{hint}"))
        }
        BrowserError::Refused { reason } => {
            (ErrorCode::ElementNotInteractive, format!("The element cannot be used: {reason}."))
        }
        BrowserError::ForeignOption { select, option } => (
            ErrorCode::ElementNotInteractive,
            format!("Element {option} is not an option of the select at element {select}; option_index must be one of that select's options."),
        ),
        BrowserError::NavigationFailed { url, reason } => {
            (ErrorCode::NavigationFailed, format!("Navigation to {url} failed: {reason}. The previous page is still loaded."))
        }
        BrowserError::Key(k) => (ErrorCode::ActionValidationFailed, format!("'key': {k}")),
        BrowserError::DialogOpen => (
            ErrorCode::ElementNotInteractive,
            "A JavaScript dialog is open and the page is paused: answer it first (click its OK or Cancel button).".into(),
        ),
        other => (ErrorCode::InternalBrowserError, other.to_string()),
    }
}

/// The length of `v` as compact JSON, counted without building the text.
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}
