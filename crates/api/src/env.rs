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

    /// `[tabs: 1 "Shop" · 2 "Checkout" (current); switch_tab or close_tab by number]`.
    async fn tabs_line(&self) -> Result<String, BrowserError> {
        let titles = self.tab.browser().page_titles().await?;
        let current = self.tab.target_id();
        let listed: Vec<String> = self
            .tabs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (title, url) = titles
                    .iter()
                    .find(|(id, _, _)| id == t.target_id())
                    .map(|(_, title, url)| (title.as_str(), url.as_str()))
                    .unwrap_or_default();
                let name = if title.trim().is_empty() { url } else { title };
                let here = if t.target_id() == current { " (current)" } else { "" };
                format!("{} \"{}\"{here}", i + 1, sightline_page::cut(&sightline_page::collapse(name), 40))
            })
            .collect();
        Ok(format!("[tabs: {}; switch_tab or close_tab by number]", listed.join(" · ")))
    }

    /// The number (from 1) of an open tab, or the error that says which numbers there are.
    fn tab_number(&self, n: u64) -> Result<usize, (ErrorCode, String)> {
        match usize::try_from(n).ok().filter(|n| (1..=self.tabs.len()).contains(n)) {
            Some(n) => Ok(n - 1),
            None => Err((
                ErrorCode::ActionValidationFailed,
                format!("There is no tab {n}: the open tabs are 1..{}.", self.tabs.len()),
            )),
        }
    }

    /// `switch_tab`: make tab `n` current; the others wait, in the order they opened.
    fn switch_tab(&mut self, n: u64) -> Result<(), (ErrorCode, String)> {
        let i = self.tab_number(n)?;
        let target = self.tabs[i].clone();
        self.openers = self.tabs.iter().filter(|t| t.target_id() != target.target_id()).cloned().collect();
        self.tab = target;
        Ok(())
    }

    /// `close_tab`: close tab `n` (never the only one); closing the current tab
    /// returns to the tab that opened it, else the last one opened.
    async fn close_tab(&mut self, n: u64) -> Result<(), (ErrorCode, String)> {
        let i = self.tab_number(n)?;
        if self.tabs.len() == 1 {
            return Err((
                ErrorCode::ActionValidationFailed,
                "Tab 1 is the only tab and cannot be closed; end the task with finish_task or fail_task instead."
                    .into(),
            ));
        }
        let closing = self.tabs[i].clone();
        closing.close_page().await.map_err(map_err)?;
        let id = closing.target_id().clone();
        self.openers.retain(|t| t.target_id() != &id);
        if self.tab.target_id() == &id {
            if self.openers.is_empty() {
                self.openers = self.tabs.iter().filter(|t| t.target_id() != &id).cloned().collect();
            }
            self.follow_tabs().await.map_err(map_err)?;
        }
        self.forget_closed();
        Ok(())
    }

    /// Move closed tabs out of the numbered list.
    fn forget_closed(&mut self) {
        let (open, closed): (Vec<_>, Vec<_>) = std::mem::take(&mut self.tabs).into_iter().partition(|t| !t.is_dead());
        self.tabs = open;
        self.retired.extend(closed);
    }

    /// Capture, and when the tab closes under the capture (a popup that closes
    /// itself once its save has loaded), return to its opener and capture that.
    async fn capture_following(&mut self) -> Result<Captured, BrowserError> {
        loop {
            match self.capture().await {
                Err(_) if self.tab.is_closed() && !self.openers.is_empty() => self.follow_tabs().await?,
                other => return other,
            }
        }
    }

    /// Follow the page a user's browser would show: a tab the current page opened
    /// becomes current; when the current tab closes, its opener is current again.
    async fn follow_tabs(&mut self) -> Result<(), BrowserError> {
        while self.tab.is_closed() {
            let Some(opener) = self.openers.pop() else { break };
            let closed = std::mem::replace(&mut self.tab, opener);
            if let Ok(t) = std::sync::Arc::try_unwrap(closed) {
                drop(t);
            }
            // The opener may still be settling from what the popup did (Django's
            // popup writes its choice into the opener as it closes).
            // A wait that times out still returns to the opener: it is the page there is.
            let _settled = self.tab.settle(std::time::Instant::now()).await?;
        }
        let Some(context) = self.tab.context_id().cloned() else { return Ok(()) };
        let pages = self.tab.browser().pages_in(&context).await?;
        let current = self.tab.target_id().clone();
        // A page opened by the current one, else any new page in this context.
        let opened = pages
            .iter()
            .filter(|(id, _)| !self.known.contains(id))
            .max_by_key(|(_, opener)| opener.as_ref() == Some(&current))
            .map(|(id, _)| id.clone());
        for (id, _) in &pages {
            self.known.insert(id.clone());
        }
        if let Some(target) = opened {
            let tab = std::sync::Arc::new(
                Tab::attach(self.tab.browser().clone(), &target, self.tab.options().clone()).await?,
            );
            // A popup still loading past the limit is followed as it is.
            let _settled = tab.wait_loaded().await?;
            self.tabs.push(tab.clone());
            let previous = std::mem::replace(&mut self.tab, tab);
            self.openers.push(previous);
        }
        self.forget_closed();
        Ok(())
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
                // Served by the tool API on `serve` (`Api::act`); a bare environment has no live view.
                Action::RequestHuman { .. } | Action::WaitForHuman { .. } => Err((
                    ErrorCode::HumanUnavailable,
                    format!("{} needs a live view for the person: run the session on `sightline serve`.", action.name()),
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
