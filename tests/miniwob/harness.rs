//! The MiniWoB++ harness: the wheel's task pages on 127.0.0.1, one `sightline env` process per
//! task (the real binary, JSON lines over a pipe), and what a policy may read of a State Object:
//! `page_content` and `element_index`, nothing else.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{LazyLock, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Errors

/// Why an episode could not be played to its end.
#[derive(Debug)]
pub enum HarnessError {
    /// The wheel's pages are not installed.
    NotInstalled { dir: PathBuf },
    /// `sightline env` could not be started, or its pipe broke.
    Process { what: &'static str, source: std::io::Error },
    /// `sightline env` wrote no State Object within the limit.
    Silent { after: Duration, stderr: String },
    /// `sightline env` wrote a line that is not a State Object.
    BadLine { line: String, source: serde_json::Error },
    /// Sightline answered an action with an error object.
    Action { action: Value, code: String, message: String },
    /// The policy found no element it needs in the current state.
    NotFound { what: String, page_content: String },
    /// The instruction does not read as the policy expects.
    Instruction { task: &'static str, query: String },
    /// The reward display did not report the episode's end.
    NoReward { episodes_done: Option<u32>, page_content: String },
}

impl std::fmt::Display for HarnessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HarnessError::NotInstalled { dir } => write!(
                f,
                "the MiniWoB++ pages are not installed at {} (run `./x miniwob`, which installs PyPI's miniwob==1.1.0 there)",
                dir.display()
            ),
            HarnessError::Process { what, source } => write!(f, "sightline env: {what}: {source}"),
            HarnessError::Silent { after, stderr } => {
                write!(f, "sightline env wrote no state within {after:?}; stderr:\n{stderr}")
            }
            HarnessError::BadLine { line, source } => write!(f, "not a State Object ({source}): {line}"),
            HarnessError::Action { action, code, message } => write!(f, "{action} failed: {code}: {message}"),
            HarnessError::NotFound { what, page_content } => {
                write!(f, "no {what} in the current state; page_content:\n{page_content}")
            }
            HarnessError::Instruction { task, query } => write!(f, "{task}: unexpected instruction {query:?}"),
            HarnessError::NoReward { episodes_done, page_content } => write!(
                f,
                "the reward display did not report the episode (episodes done: {episodes_done:?}); page_content:\n{page_content}"
            ),
        }
    }
}

impl std::error::Error for HarnessError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HarnessError::Process { source, .. } => Some(source),
            HarnessError::BadLine { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub type Result<T, E = HarnessError> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------------------------
// The task pages

/// Where `./x miniwob` installs the wheel (`pip install --target .cache/miniwob miniwob==1.1.0`).
pub fn wheel_html() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/miniwob/miniwob/html")
}

static RT: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
});

static SITE: OnceLock<sightline_testkit::Server> = OnceLock::new();

/// The one line the harness adds to what the wheel serves, at the end of `core/core.js` (which
/// defines `Math.seedrandom`, as the MiniWoB++ Python environment uses it): `?seed=S` in a task's
/// URL makes its episodes reproducible. Nothing else of the pages changes.
const SEED_LINE: &str = "\nif (core.QueryString.seed) { Math.seedrandom(core.QueryString.seed); }\n";

/// The wheel's `miniwob/html` on `127.0.0.1:0`; `task` is the page's name without `.html`.
pub fn task_url(task: &str, seed: u32) -> Result<String> {
    let dir = wheel_html();
    let core = dir.join("core/core.js");
    let Ok(mut core_js) = std::fs::read(&core) else { return Err(HarnessError::NotInstalled { dir }) };
    let site = SITE.get_or_init(|| {
        let server = RT.block_on(sightline_testkit::Server::dir(dir.clone())).expect("serve the MiniWoB++ pages");
        core_js.extend_from_slice(SEED_LINE.as_bytes());
        server.page("/core/core.js", core_js);
        server
    });
    Ok(site.url(&format!("/miniwob/{task}.html?seed={seed}")))
}

// ---------------------------------------------------------------------------------------------
// State Objects as a policy reads them

/// One `[N]role "name"` marker of `page_content`, with its `element_index` descriptor.
#[derive(Debug, Clone)]
pub struct Element {
    pub index: u64,
    /// The role page_content shows.
    pub role: String,
    /// The name page_content shows ("" when none).
    pub name: String,
    /// The hint page_content shows for an unnamed control (`[7]clickable hint:"star"`): what a
    /// person sees of it (an icon's file name, an SVG title, a class token), "" when none.
    pub hint: String,
    /// The rest of the marker's text in page_content up to the next marker (`value="…"`, `checked`).
    pub extra: String,
    /// page_content line number (0-based).
    pub line: usize,
    /// The descriptor from element_index.
    pub desc: Value,
}

impl Element {
    pub fn value(&self) -> Option<&str> {
        self.desc["attributes"]["value"].as_str()
    }
    pub fn checked(&self) -> Option<bool> {
        self.desc["attributes"]["checked"].as_bool()
    }
    pub fn tag(&self) -> &str {
        self.desc["tag"].as_str().unwrap_or_default()
    }
}

#[derive(Debug, Clone)]
pub struct State {
    pub raw: Value,
    pub page_content: String,
    pub elements: Vec<Element>,
}

impl State {
    fn parse(line: &str) -> Result<State> {
        let raw: Value =
            serde_json::from_str(line).map_err(|source| HarnessError::BadLine { line: line.to_string(), source })?;
        let page_content = raw["page_content"].as_str().unwrap_or_default().to_string();
        let elements = markers(&page_content)
            .into_iter()
            .map(|Marker { index, role, name, hint, extra, line }| {
                let desc = raw["element_index"][index.to_string()].clone();
                Element { index, role, name, hint, extra, line, desc }
            })
            .collect();
        Ok(State { raw, page_content, elements })
    }

    pub fn error(&self) -> Option<(String, String)> {
        let e = self.raw.get("error")?;
        Some((
            e["code"].as_str().unwrap_or_default().to_string(),
            e["message"].as_str().unwrap_or_default().to_string(),
        ))
    }

    /// Elements with this role (as page_content shows it).
    pub fn with_role<'a>(&'a self, role: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.elements.iter().filter(move |e| e.role == role)
    }

    /// The first element with this role and exactly this name.
    pub fn find(&self, role: &str, name: &str) -> Option<&Element> {
        self.elements.iter().find(|e| e.role == role && e.name == name)
    }

    /// The first element with this role and exactly this name, or a `NotFound` error.
    pub fn get(&self, role: &str, name: &str) -> Result<&Element> {
        self.find(role, name).ok_or_else(|| self.not_found(format!("{role} {name:?}")))
    }

    pub fn not_found(&self, what: String) -> HarnessError {
        HarnessError::NotFound { what, page_content: self.page_content.clone() }
    }

    /// The page_content line an element's marker is on.
    pub fn line_of(&self, e: &Element) -> &str {
        self.page_content.lines().nth(e.line).unwrap_or_default()
    }

    /// The text on an element's line before its marker, other markers left out.
    pub fn text_before(&self, e: &Element) -> String {
        let line = self.line_of(e);
        let marker = format!("[{}]", e.index);
        let upto = line.find(&marker).map_or(line, |at| &line[..at]);
        strip_markers(upto)
    }

    /// The instruction: the text of the yellow `#query` box, page_content's first line (the
    /// reward display's first entry can follow it on that line when the task area above it is
    /// empty).
    pub fn query(&self) -> String {
        let first = self.page_content.lines().next().unwrap_or_default();
        let first = first.split(" Last reward:").next().unwrap_or_default();
        first.trim().to_string()
    }

    /// page_content without the reward display (which starts at `Last reward:`).
    pub fn task_text(&self) -> &str {
        let end = self.page_content.rfind("Last reward:").unwrap_or(self.page_content.len());
        &self.page_content[..end]
    }

    /// The reward display: (`Last reward`, `Episodes done`).
    pub fn reward(&self) -> (Option<f64>, Option<u32>) {
        let last = number_after(&self.page_content, "Last reward:");
        let done = number_after(&self.page_content, "Episodes done:").map(|v| v as u32);
        (last, done)
    }
}

/// `text` without its `[N]role "name" hint:"…"` markers (and the state words after them).
pub fn strip_markers(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        match marker_at(&rest[open..]) {
            Some(m) => rest = &rest[open + m.len..],
            None => {
                out.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The number right after `label` in `text` (spaces and newlines between them skipped).
fn number_after(text: &str, label: &str) -> Option<f64> {
    let at = text.rfind(label)? + label.len();
    let rest = text[at..].trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// One marker of page_content.
struct Marker {
    index: u64,
    role: String,
    name: String,
    hint: String,
    /// The text up to the next marker.
    extra: String,
    /// 0-based line number.
    line: usize,
}

/// A marker's parts at the start of `text`, and its length in bytes.
struct Parsed {
    index: u64,
    role: String,
    name: String,
    hint: String,
    len: usize,
}

/// The quoted string (`\"` escapes) at the start of `text`, which starts right after the
/// opening quote: its content and the bytes up to and including the closing quote.
fn quoted_at(text: &str) -> (String, usize) {
    let mut content = String::new();
    let mut chars = text.char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    content.push(n);
                }
            }
            '"' => return (content, k + 1),
            c => content.push(c),
        }
    }
    (content, text.len())
}

/// `[N]role`, then an optional ` "name"`, then an optional ` hint:"…"`, at the start of `text`.
fn marker_at(text: &str) -> Option<Parsed> {
    let b = text.as_bytes();
    if b.first() != Some(&b'[') {
        return None;
    }
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || b.get(1 + digits) != Some(&b']') {
        return None;
    }
    let index: u64 = text[1..1 + digits].parse().ok()?;
    let mut j = 2 + digits;
    let role_len = b[j..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'-').count();
    if role_len == 0 {
        return None;
    }
    let role = text[j..j + role_len].to_string();
    j += role_len;
    let mut name = String::new();
    if text[j..].starts_with(" \"") {
        let (n, len) = quoted_at(&text[j + 2..]);
        name = n;
        j += 2 + len;
    }
    let mut hint = String::new();
    if text[j..].starts_with(" hint:\"") {
        let (h, len) = quoted_at(&text[j + 7..]);
        hint = h;
        j += 7 + len;
    }
    Some(Parsed { index, role, name, hint, len: j })
}

/// Every `[N]role "name" hint:"…"` marker in page_content.
fn markers(text: &str) -> Vec<Marker> {
    let mut out: Vec<Marker> = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let mut i = 0;
        let mut last_end: Option<usize> = None;
        while i < line.len() {
            let Some(m) = line[i..].starts_with('[').then(|| marker_at(&line[i..])).flatten() else {
                i += line[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            if let (Some(prev), Some(last)) = (last_end, out.last_mut()) {
                last.extra = line[prev..i].trim().to_string();
            }
            let end = i + m.len;
            out.push(Marker {
                index: m.index,
                role: m.role,
                name: m.name,
                hint: m.hint,
                extra: String::new(),
                line: line_no,
            });
            last_end = Some(end.min(line.len()));
            i = end.max(i + 1);
        }
        if let (Some(prev), Some(last)) = (last_end, out.last_mut()) {
            last.extra = line[prev..].trim().to_string();
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// `sightline env` over a pipe

/// How long one State Object may take before the harness gives up on the process.
const LINE_LIMIT: Duration = Duration::from_secs(60);

pub struct Env {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    pub state: State,
    /// Actions sent so far (the START clicks included).
    pub actions: usize,
    /// Actions sent again on a fresh state after `ELEMENT_NOT_INTERACTIVE` (see [`Env::act_on`]).
    pub retries: usize,
    /// Every State Object read so far, as it came (the opening one first), its `screenshot`
    /// left out: what the policy was given to read (`tests/miniwob.rs` writes each episode's
    /// share to `target/miniwob/TASK.reads.jsonl` for `./x bench tokens`).
    pub reads: Vec<Value>,
}

impl Env {
    /// Start `sightline env URL --no-screenshot` and read its first State Object.
    pub fn open(url: &str) -> Result<Env> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["env", url, "--no-screenshot"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| HarnessError::Process { what: "spawn", source })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(std::result::Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let err_pipe = child.stderr.take().expect("piped stderr");
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err_pipe).lines().map_while(std::result::Result::ok) {
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let stdin = child.stdin.take();
        let placeholder = State { raw: Value::Null, page_content: String::new(), elements: Vec::new() };
        let mut env =
            Env { child, stdin, lines, stderr, state: placeholder, actions: 0, retries: 0, reads: Vec::new() };
        env.state = env.read()?;
        Ok(env)
    }

    fn read(&mut self) -> Result<State> {
        let started = Instant::now();
        match self.lines.recv_timeout(LINE_LIMIT) {
            Ok(line) => {
                let state = State::parse(&line)?;
                let mut read = state.raw.clone();
                if let Some(o) = read.as_object_mut() {
                    o.remove("screenshot");
                }
                self.reads.push(read);
                Ok(state)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                Err(HarnessError::Silent { after: started.elapsed(), stderr: self.stderr.lock().unwrap().clone() })
            }
        }
    }

    /// Send one action; the new state, or the error Sightline answered with.
    #[allow(clippy::print_stderr, reason = "MINIWOB_TRACE=1 prints each action and the page_content it led to")]
    pub fn act(&mut self, action: Value) -> Result<&State> {
        let stdin = self.stdin.as_mut().expect("stdin open while the env runs");
        writeln!(stdin, "{action}")
            .and_then(|_| stdin.flush())
            .map_err(|source| HarnessError::Process { what: "write an action", source })?;
        self.actions += 1;
        self.state = self.read()?;
        if std::env::var_os("MINIWOB_TRACE").is_some() {
            eprintln!("--> {action}\n{}\n", self.state.page_content);
        }
        if let Some((code, message)) = self.state.error() {
            return Err(HarnessError::Action { action, code, message });
        }
        Ok(&self.state)
    }

    /// Act on the element `pick` chooses in the current state. When Sightline answers
    /// `ELEMENT_NOT_INTERACTIVE` (the page moved after the state was captured: an animation
    /// still running when the wait for a stable page ended), look again and choose again, once.
    /// `retries` counts these.
    pub fn act_on(&mut self, pick: impl Fn(&State) -> Result<u64>, action: impl Fn(u64) -> Value) -> Result<&State> {
        let index = pick(&self.state)?;
        match self.act(action(index)) {
            Err(HarnessError::Action { code, .. }) if code == "ELEMENT_NOT_INTERACTIVE" => {
                self.retries += 1;
                std::thread::sleep(Duration::from_millis(300));
                self.look()?;
                let index = pick(&self.state)?;
                self.act(action(index))
            }
            Err(e) => Err(e),
            Ok(_) => Ok(&self.state),
        }
    }

    /// Click the element `pick` chooses (see [`Env::act_on`]).
    pub fn click_by(&mut self, pick: impl Fn(&State) -> Result<u64>) -> Result<&State> {
        self.act_on(pick, |i| json!({"action": "click_element", "element_index": i}))
    }

    /// Type into the element `pick` chooses, replacing its value (see [`Env::act_on`]).
    pub fn type_by(&mut self, pick: impl Fn(&State) -> Result<u64>, text: &str) -> Result<&State> {
        self.act_on(pick, |i| json!({"action": "input_text", "element_index": i, "text": text, "overwrite": true}))
    }

    pub fn click(&mut self, index: u64) -> Result<&State> {
        self.act(json!({"action": "click_element", "element_index": index}))
    }

    pub fn select(&mut self, select: u64, option: u64) -> Result<&State> {
        self.act(json!({"action": "select_option", "element_index": select, "option_index": option}))
    }

    /// Press a key (`"ArrowRight"`, `"PageUp"`, `"Shift+Tab"`, a character) on the element,
    /// focusing it first; `None` sends it to whatever has focus.
    pub fn press_key(&mut self, index: Option<u64>, key: &str) -> Result<&State> {
        match index {
            Some(i) => self.act(json!({"action": "press_key", "key": key, "element_index": i})),
            None => self.act(json!({"action": "press_key", "key": key})),
        }
    }

    /// Drag the element onto another (released at the target's click point).
    pub fn drag_to(&mut self, index: u64, to: u64) -> Result<&State> {
        self.act(json!({"action": "drag", "element_index": index, "to_element_index": to}))
    }

    /// Drag the element by an offset in CSS pixels (released there).
    pub fn drag_by(&mut self, index: u64, dx: i64, dy: i64) -> Result<&State> {
        self.act(json!({"action": "drag", "element_index": index, "dx": dx, "dy": dy}))
    }

    /// Look again without changing anything: scroll the page up by one pixel (it is at the top).
    pub fn look(&mut self) -> Result<&State> {
        self.act(json!({"action": "scroll", "direction": "up", "pixels": 1}))
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // EOF on stdin ends `sightline env` (exit 0), which kills its browser.
        drop(self.stdin.take());
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SIGTERM (it then kills its browser group), then the wait.
        // SAFETY: kill(2) on the process this harness started.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}
