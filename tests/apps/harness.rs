//! The real apps of `tests/apps.rs` and the agent-side helpers its tasks use.
//!
//! - [`AppServer`]: one of the Python apps of `tests/apps/` (Django's admin, a Flask-Admin
//!   site, Datasette, a MkDocs Material site), started by its `serve.py` on 127.0.0.1 (a port
//!   the OS picks) with its own data: a copy of a SQLite database migrated and seeded once per
//!   run, or the site built once per run. Its backend is read with Python's `sqlite3`
//!   ([`AppServer::query`]) and its request log ([`AppServer::requests`]).
//! - [`todomvc`]: TodoMVC's site from npm, served by the project's fixture server.
//! - [`find`] and friends: targets chosen the way a model would choose them, by role and name
//!   as `page_content` shows them (`[N]role "name"`), never by a number.
//!
//! The apps are installed by `./x apps` (and `./x test`) into `.cache/apps/`; a missing one
//! fails the test with that command.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};
use sightline_api::{Env, StateObject};

use crate::common::step;

pub const ADMIN_USER: &str = "admin";
pub const ADMIN_PASSWORD: &str = "sightline-pass";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cache() -> PathBuf {
    repo().join(".cache/apps")
}

fn missing(what: &str) -> ! {
    panic!(
        "\n\n{what} is not installed; the real-app tests need it.\n\
         Install the real apps with:  ./x apps   (./x test installs them too)\n\n"
    )
}

// ---------------------------------------------------------------------------------------------
// Apps served by a Python script: Django, Flask-Admin, Datasette, MkDocs Material

/// One Python app of `tests/apps/`: its `serve.py`, the `pip --target` directory `./x` installs
/// it into, and what its data is. Every `serve.py` speaks the same small protocol:
/// `--prepare` makes the data at `$SIGHTLINE_APPS_DB` (a SQLite file, or a built site) and
/// exits; `--ready` serves already prepared data on 127.0.0.1, port 0, prints `PORT <n>` on
/// stdout once it listens, and logs each request on stderr.
pub struct AppKind {
    /// What a person calls it (in messages).
    pub name: &'static str,
    /// `serve.py`, relative to `tests/apps/`.
    script: &'static str,
    /// The directory under `.cache/apps/` that goes on `PYTHONPATH`.
    packages: &'static str,
    /// A file in that directory that exists once the app is installed.
    installed: &'static str,
    /// The data's file name in each server's directory.
    data: &'static str,
    /// Whether each server gets its own copy of the prepared data (writable apps), or all
    /// serve the prepared data itself (a read-only site).
    copy: bool,
    prepared: OnceLock<PathBuf>,
}

pub static DJANGO: AppKind = AppKind {
    name: "Django",
    script: "django/serve.py",
    packages: "django",
    installed: "django/__init__.py",
    data: "db.sqlite3",
    copy: true,
    prepared: OnceLock::new(),
};

pub static FLASK_ADMIN: AppKind = AppKind {
    name: "Flask-Admin",
    script: "flask_admin/serve.py",
    packages: "flask-admin",
    installed: "flask_admin/__init__.py",
    data: "db.sqlite3",
    copy: true,
    prepared: OnceLock::new(),
};

pub static DATASETTE: AppKind = AppKind {
    name: "Datasette",
    script: "datasette/serve.py",
    packages: "datasette",
    installed: "datasette/__init__.py",
    data: "library.sqlite3",
    copy: true,
    prepared: OnceLock::new(),
};

pub static MKDOCS: AppKind = AppKind {
    name: "MkDocs Material",
    script: "mkdocs/serve.py",
    packages: "mkdocs",
    installed: "material/__init__.py",
    data: "site",
    copy: false,
    prepared: OnceLock::new(),
};

static NEXT: AtomicU32 = AtomicU32::new(0);
/// Prepared data of this test binary, removed when it exits.
static PREPARED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_prepared() {
    if let Ok(all) = PREPARED.lock() {
        for p in all.iter() {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

impl AppKind {
    fn site_packages(&self) -> PathBuf {
        let dir = cache().join(self.packages);
        if !dir.join(self.installed).is_file() {
            missing(&format!("{} (expected in {})", self.name, dir.display()));
        }
        dir
    }

    fn command(&self, data: &Path) -> Command {
        let mut cmd = Command::new("python3");
        cmd.arg(repo().join("tests/apps").join(self.script))
            .env("PYTHONPATH", self.site_packages())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("SIGHTLINE_APPS_DB", data)
            // A shell the app opens (JupyterLab's terminal) writes no history into the app's
            // directory after it was removed.
            .env("HISTFILE", "/dev/null");
        cmd
    }

    /// The prepared data (a migrated and seeded database, a built site), made once per test
    /// binary.
    fn prepared(&self) -> &Path {
        self.prepared.get_or_init(|| {
            let data = std::env::temp_dir().join(format!(
                "sightline-apps-{}-{}-{}",
                self.packages,
                std::process::id(),
                self.data
            ));
            let _ = std::fs::remove_file(&data);
            let _ = std::fs::remove_dir_all(&data);
            let out = self
                .command(&data)
                .arg("--prepare")
                .output()
                .unwrap_or_else(|e| panic!("could not run python3 for {}: {e}", self.name));
            assert!(
                out.status.success(),
                "preparing {}'s data failed:\n{}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
            );
            let mut all = PREPARED.lock().unwrap();
            if all.is_empty() {
                // SAFETY: registering a plain extern "C" fn.
                unsafe {
                    libc::atexit(remove_prepared);
                }
            }
            all.push(data.clone());
            data
        })
    }
}

/// A running app with its own data. Dropping it kills the server (by the PID this test
/// started) and removes its directory; the server also dies with the test thread.
pub struct AppServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    data: PathBuf,
}

impl AppServer {
    pub fn start(kind: &'static AppKind) -> AppServer {
        let template = kind.prepared();
        let dir = std::env::temp_dir().join(format!(
            "sightline-apps-{}-{}-{}",
            kind.packages,
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let data = if kind.copy {
            let data = dir.join(kind.data);
            std::fs::copy(template, &data).unwrap();
            data
        } else {
            template.to_path_buf()
        };
        let log = std::fs::File::create(dir.join("server.log")).unwrap();
        let mut cmd = kind.command(&data);
        cmd.arg("--ready").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log);
        // SAFETY: prctl in the forked child before exec; async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // Its own process group, so what it starts (kernels, terminals) goes with it.
                libc::setpgid(0, 0);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("could not run python3 for {}: {e}", kind.name));
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let _ = out.read_line(&mut line);
        let port = line.trim().strip_prefix("PORT ").and_then(|p| p.parse().ok());
        let mut app = AppServer { child, port: 0, dir, data };
        match port {
            Some(p) => app.port = p,
            None => panic!("{} did not start (got {line:?}); its log:\n{}", kind.name, app.log()),
        }
        app
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.port, path)
    }

    /// The server's stderr so far (request lines and tracebacks).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The request lines of the server's log that ask for this path (and query), e.g.
    /// `"GET /library/books?genre=Fantasy"`: what the browser asked the backend for.
    pub fn requests(&self, method_and_target: &str) -> usize {
        let line = format!("\"{method_and_target} HTTP/");
        self.log().lines().filter(|l| l.contains(&line)).count()
    }

    /// Rows of a query on the app's database, read with Python's `sqlite3` (the backend, not
    /// the page).
    pub fn query(&self, sql: &str) -> Vec<Vec<Value>> {
        let out = Command::new("python3")
            .args([
                "-c",
                "import sqlite3, json, sys\n\
                 c = sqlite3.connect(sys.argv[1])\n\
                 print(json.dumps(c.execute(sys.argv[2]).fetchall()))",
            ])
            .arg(&self.data)
            .arg(sql)
            .output()
            .expect("python3 for a database query");
        assert!(out.status.success(), "query {sql:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        let rows: Vec<Vec<Value>> = serde_json::from_slice(&out.stdout).expect("query output is JSON");
        rows
    }

    /// One column of one row, or panics.
    pub fn scalar(&self, sql: &str) -> Value {
        let rows = self.query(sql);
        assert_eq!(rows.len(), 1, "{sql:?} should give one row, gave {rows:?}");
        rows[0][0].clone()
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this test started (the server leads it).
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Django admin site (`tests/apps/django`): a superuser and three seeded questions.
pub struct Django(AppServer);

impl Django {
    pub fn start() -> Django {
        Django(AppServer::start(&DJANGO))
    }
}

impl std::ops::Deref for Django {
    type Target = AppServer;
    fn deref(&self) -> &AppServer {
        &self.0
    }
}

// ---------------------------------------------------------------------------------------------
// TodoMVC

/// The TodoMVC site from npm, served on 127.0.0.1 by the project's fixture server. Returns the
/// URL of its React example.
pub async fn todomvc() -> (sightline_testkit::Server, String) {
    let root = cache().join("todomvc");
    if !root.join("examples/react/index.html").is_file() {
        missing(&format!("TodoMVC (expected in {})", root.display()));
    }
    let server = sightline_testkit::Server::dir(root).await.expect("serve TodoMVC");
    let url = server.url("/examples/react/index.html");
    (server, url)
}

/// The React example's store: the todos it keeps in localStorage under `react-todos`,
/// read through CDP in a fresh evaluation (not from the page's DOM).
pub async fn stored_todos(env: &Env) -> Vec<(String, bool)> {
    let raw = env.tab().evaluate("localStorage.getItem('react-todos')").await.expect("read localStorage");
    let Some(text) = raw.as_str() else { return Vec::new() };
    let todos: Vec<Value> = serde_json::from_str(text).expect("react-todos is JSON");
    todos
        .iter()
        .map(|t| (t["title"].as_str().unwrap_or_default().to_string(), t["completed"].as_bool().unwrap_or(false)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Choosing targets as a model would

/// One `[N]role "name"` token of `page_content`.
#[derive(Debug, Clone)]
pub struct Token {
    pub index: u64,
    pub role: String,
    pub name: String,
    /// The page_content line it is on (0-based) and that line's text.
    pub line: usize,
    pub line_text: String,
}

/// Every element token in `page_content`, in order.
pub fn tokens(s: &StateObject) -> Vec<Token> {
    let mut out = Vec::new();
    for (line_no, line) in s.page_content.lines().enumerate() {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'[' {
                i += 1;
                continue;
            }
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 || b.get(i + 1 + digits) != Some(&b']') {
                i += 1;
                continue;
            }
            let index: u64 = line[i + 1..i + 1 + digits].parse().unwrap();
            let mut j = i + 2 + digits;
            let role_len = b[j..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'-').count();
            if role_len == 0 {
                i += 1;
                continue;
            }
            let role = line[j..j + role_len].to_string();
            j += role_len;
            let mut name = String::new();
            if line[j..].starts_with(" \"") {
                j += 2;
                let mut chars = line[j..].char_indices();
                while let Some((k, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, n)) = chars.next() {
                                name.push(n);
                            }
                        }
                        '"' => {
                            j += k + 1;
                            break;
                        }
                        c => name.push(c),
                    }
                }
            }
            out.push(Token { index, role, name, line: line_no, line_text: line.to_string() });
            i = j.max(i + 1);
        }
    }
    out
}

fn check(s: &StateObject, t: &Token) -> u64 {
    let d = s
        .element_index
        .0
        .get(t.index as usize - 1)
        .unwrap_or_else(|| panic!("page_content names [{}] but element_index has no such element", t.index));
    let role = d.role.clone().unwrap_or_else(|| d.tag.clone());
    assert!(
        role == t.role || d.role.is_none(),
        "[{}] reads as {} in page_content but has role {role} in element_index",
        t.index,
        t.role
    );
    t.index
}

fn same(shown: &str, wanted: &str) -> bool {
    // Case aside, and white space as a reader sees it: a name keeps the no-break
    // space an app puts after a label ("Is Admin&nbsp;"), as Chromium's does.
    let norm = |s: &str| s.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ");
    norm(shown) == norm(wanted)
}

fn listing(s: &StateObject) -> String {
    format!("url: {}\npage_content:\n{}", s.url, s.page_content)
}

/// The element with this role and this name (the first if several). Names compare without
/// regard to case: CSS `text-transform` shows Django's "Add question" as "ADD QUESTION", and a
/// person reads past that; spacing and every other character must match.
pub fn find(s: &StateObject, role: &str, name: &str) -> u64 {
    find_nth(s, role, name, 1)
}

/// The `n`th (1-based) element with this role and exactly this name, in reading order.
pub fn find_nth(s: &StateObject, role: &str, name: &str, n: usize) -> u64 {
    let all: Vec<Token> = tokens(s).into_iter().filter(|t| t.role == role && same(&t.name, name)).collect();
    match all.get(n - 1) {
        Some(t) => check(s, t),
        None => panic!("no {role} {name:?} (number {n}; {} found) in the current state\n{}", all.len(), listing(s)),
    }
}

/// How many elements have this role and name.
pub fn count(s: &StateObject, role: &str, name: &str) -> usize {
    tokens(s).iter().filter(|t| t.role == role && same(&t.name, name)).count()
}

/// The element with this role and name on the line of `page_content` that also reads `anchor`:
/// "the checkbox in the row of 'Buy milk'", "the Add link in the Questions row".
pub fn find_on_line(s: &StateObject, anchor: &str, role: &str, name: &str) -> u64 {
    let all: Vec<Token> = tokens(s)
        .into_iter()
        .filter(|t| t.role == role && same(&t.name, name) && t.line_text.contains(anchor))
        .collect();
    match all.as_slice() {
        [t] => check(s, t),
        [] => panic!("no {role} {name:?} on a line that reads {anchor:?}\n{}", listing(s)),
        many => panic!(
            "{} elements {role} {name:?} on lines reading {anchor:?}: {:?}\n{}",
            many.len(),
            many.iter().map(|t| t.index).collect::<Vec<_>>(),
            listing(s)
        ),
    }
}

/// The element whose token comes right before the text `anchor` in page_content, with no other
/// element between them: "the checkbox in front of 'Buy milk'". It must have this role and name.
pub fn find_before(s: &StateObject, anchor: &str, role: &str, name: &str) -> u64 {
    let text = &s.page_content;
    let Some(at) = text.find(anchor) else { panic!("the page does not read {anchor:?}\n{}", listing(s)) };
    let before = &text[..at];
    let Some(open) = before.match_indices('[').rev().map(|(i, _)| i).find(|&i| {
        let rest = &before[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(']')
    }) else {
        panic!("no element before {anchor:?}\n{}", listing(s))
    };
    let line_start = before[..open].rfind('\n').map_or(0, |i| i + 1);
    let line_no = before[..line_start].matches('\n').count();
    let line_offset = open - line_start;
    // The token at that place, parsed with the rest of its line.
    let tok = tokens(s)
        .into_iter()
        .filter(|t| t.line == line_no)
        .find(|t| t.line_text[line_offset..].starts_with(&format!("[{}]", t.index)))
        .unwrap_or_else(|| panic!("no element token right before {anchor:?}\n{}", listing(s)));
    assert!(
        tok.role == role && same(&tok.name, name),
        "the element right before {anchor:?} is [{}]{} {:?}, not {role} {name:?}\n{}",
        tok.index,
        tok.role,
        tok.name,
        listing(s)
    );
    check(s, &tok)
}

/// The element whose token comes right after the text `anchor` in page_content, with no other
/// element between them: "the ✖ button after 'Walk the dog'". It must have this role and name.
pub fn find_after(s: &StateObject, anchor: &str, role: &str, name: &str) -> u64 {
    let text = &s.page_content;
    let Some(at) = text.find(anchor) else { panic!("the page does not read {anchor:?}\n{}", listing(s)) };
    let end = at + anchor.len();
    let line_no = text[..end].matches('\n').count();
    let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
    let offset = end - line_start;
    // The first token after the anchor: later on its line, else on the lines below.
    let tok = tokens(s)
        .into_iter()
        .find(|t| {
            t.line > line_no
                || (t.line == line_no && t.line_text.match_indices(&format!("[{}]", t.index)).any(|(i, _)| i >= offset))
        })
        .unwrap_or_else(|| panic!("no element after {anchor:?}\n{}", listing(s)));
    assert!(
        tok.role == role && same(&tok.name, name),
        "the element right after {anchor:?} is [{}]{} {:?}, not {role} {name:?}\n{}",
        tok.index,
        tok.role,
        tok.name,
        listing(s)
    );
    check(s, &tok)
}

/// Scroll the page down, a screen at a time, until an element with this role and name is in
/// the index (at most ten screens). Returns its index.
pub async fn scroll_to(env: &mut Env, role: &str, name: &str) -> u64 {
    for _ in 0..10 {
        if has(env.state(), role, name) {
            return find(env.state(), role, name);
        }
        act(env, json!({"action": "scroll", "direction": "down"})).await;
    }
    find(env.state(), role, name)
}

/// Whether page_content has any element token with this role and name.
pub fn has(s: &StateObject, role: &str, name: &str) -> bool {
    count(s, role, name) > 0
}

/// Send one action; it must succeed. Returns the new state.
pub async fn act(env: &mut Env, action: Value) -> StateObject {
    let s = step(env, action.clone()).await.state;
    if let Some(e) = &s.error {
        panic!("{action} failed: {:?} {}\n{}", e.code, e.message, listing(&s));
    }
    s
}

pub async fn click(env: &mut Env, index: u64) -> StateObject {
    act(env, json!({"action": "click_element", "element_index": index})).await
}

/// Click the element with this role and name in the current state.
pub async fn click_named(env: &mut Env, role: &str, name: &str) -> StateObject {
    let i = find(env.state(), role, name);
    click(env, i).await
}

pub async fn type_into(env: &mut Env, index: u64, text: &str) -> StateObject {
    act(env, json!({"action": "input_text", "element_index": index, "text": text, "overwrite": true})).await
}

/// Log in to the admin through its login form, choosing the fields by name.
pub async fn admin_login(env: &mut Env, django: &Django) -> StateObject {
    let s = act(env, json!({"action": "navigate", "url": django.url("/admin/")})).await;
    assert!(s.url.contains("/admin/login/"), "the admin asks for a login first: {}", s.url);
    let user = find(&s, "textbox", "Username:");
    let s = type_into(env, user, ADMIN_USER).await;
    let password = find(&s, "textbox", "Password:");
    let s = type_into(env, password, ADMIN_PASSWORD).await;
    click(env, find(&s, "button", "Log in")).await
}

// ---------------------------------------------------------------------------------------------
// Flask-Admin, Datasette, MkDocs Material

/// A Flask-Admin site (`tests/apps/flask_admin`): `User` and `Post` models, three of each.
pub struct FlaskAdmin(AppServer);

impl FlaskAdmin {
    pub fn start() -> FlaskAdmin {
        FlaskAdmin(AppServer::start(&FLASK_ADMIN))
    }
}

impl std::ops::Deref for FlaskAdmin {
    type Target = AppServer;
    fn deref(&self) -> &AppServer {
        &self.0
    }
}

/// Datasette on `tests/apps/datasette`'s `library` database: eight `books`, faceted by genre
/// and author; `notes`, filled by the writable canned query `add_note`.
pub struct Datasette(AppServer);

impl Datasette {
    pub fn start() -> Datasette {
        Datasette(AppServer::start(&DATASETTE))
    }
}

impl std::ops::Deref for Datasette {
    type Target = AppServer;
    fn deref(&self) -> &AppServer {
        &self.0
    }
}

/// The MkDocs Material site of `tests/apps/mkdocs`, built once per test binary and served
/// statically (with a request log).
pub struct MkDocs(AppServer);

impl MkDocs {
    pub fn start() -> MkDocs {
        MkDocs(AppServer::start(&MKDOCS))
    }
}

impl std::ops::Deref for MkDocs {
    type Target = AppServer;
    fn deref(&self) -> &AppServer {
        &self.0
    }
}

/// The element with this role whose name starts with `prefix` (the first if several): a
/// search result reads its title first, then an excerpt.
pub fn find_starting(s: &StateObject, role: &str, prefix: &str) -> u64 {
    let all: Vec<Token> = tokens(s)
        .into_iter()
        .filter(|t| t.role == role && t.name.to_lowercase().starts_with(&prefix.to_lowercase()))
        .collect();
    match all.first() {
        Some(t) => check(s, t),
        None => panic!("no {role} whose name starts with {prefix:?} in the current state\n{}", listing(s)),
    }
}

/// A value this page keeps in localStorage, read through CDP in a fresh evaluation (not
/// from the page's DOM): the first key that ends with `suffix`, parsed as JSON.
pub async fn stored(env: &Env, suffix: &str) -> Option<Value> {
    let expr = format!(
        "(() => {{ for (let i = 0; i < localStorage.length; i++) {{ const k = localStorage.key(i); \
         if (k.endsWith({suffix:?})) return localStorage.getItem(k); }} return null; }})()"
    );
    let raw = env.tab().evaluate(&expr).await.expect("read localStorage");
    raw.as_str().map(|t| serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.to_string())))
}

// ---------------------------------------------------------------------------------------------
// Component-library apps (tests/component_apps.rs): NiceGUI (Vue + Quasar), Streamlit (React),
// Wagtail (Django CMS, Draftail rich text), JupyterLab (xterm.js terminals)

/// The apps of `tests/component_apps.rs`, each run by its `serve.py` with the same protocol as
/// the apps above. Their backends: the JSON file a NiceGUI form writes, the JSON lines a
/// Streamlit script writes, Wagtail's SQLite database, the files a Jupyter terminal makes in
/// the server's directory.
#[allow(dead_code)]
pub mod components {
    use super::*;

    pub static NICEGUI: AppKind = AppKind {
        name: "NiceGUI",
        script: "nicegui/serve.py",
        packages: "nicegui",
        installed: "nicegui/__init__.py",
        data: "bookings.json",
        copy: true,
        prepared: OnceLock::new(),
    };

    pub static STREAMLIT: AppKind = AppKind {
        name: "Streamlit",
        script: "streamlit/serve.py",
        packages: "streamlit",
        installed: "streamlit/__init__.py",
        data: "received.jsonl",
        copy: true,
        prepared: OnceLock::new(),
    };

    pub static WAGTAIL: AppKind = AppKind {
        name: "Wagtail",
        script: "wagtail/serve.py",
        packages: "wagtail",
        installed: "wagtail/__init__.py",
        data: "db.sqlite3",
        copy: true,
        prepared: OnceLock::new(),
    };

    pub static JUPYTER: AppKind = AppKind {
        name: "JupyterLab",
        script: "jupyter/serve.py",
        packages: "jupyterlab",
        installed: "jupyterlab/__init__.py",
        data: "README.txt",
        copy: true,
        prepared: OnceLock::new(),
    };

    impl AppServer {
        /// The directory of this server's own data (its copy of the prepared data, its log;
        /// a Jupyter terminal starts in it).
        pub fn dir(&self) -> &Path {
            &self.dir
        }

        /// This server's data file as text (empty if it is missing).
        pub fn data_text(&self) -> String {
            std::fs::read_to_string(&self.data).unwrap_or_default()
        }
    }

    /// The element token that follows the token of the element with this role and name on its
    /// page_content line, if it has role `role`, whatever its name: "the button next to the
    /// Check-in date field" (an icon button whose name is only its icon).
    pub fn next_on_line(s: &StateObject, field_role: &str, field_name: &str, role: &str) -> u64 {
        let all = tokens(s);
        let Some(at) = all.iter().position(|t| t.role == field_role && same(&t.name, field_name)) else {
            panic!("no {field_role} {field_name:?} in the current state\n{}", listing(s))
        };
        match all.get(at + 1) {
            Some(t) if t.line == all[at].line && t.role == role => check(s, t),
            other => panic!(
                "the element after {field_role} {field_name:?} on its line is {:?}, not a {role}\n{}",
                other.map(|t| (t.index, &t.role, &t.name)),
                listing(s)
            ),
        }
    }

    /// Send one action and return the state whatever happened (for steps whose failure is
    /// reported, not fatal at once).
    pub async fn try_act(env: &mut Env, action: Value) -> StateObject {
        step(env, action).await.state
    }

    /// The current state, as a message for a failed assertion.
    pub fn shown(s: &StateObject) -> String {
        listing(s)
    }
}
