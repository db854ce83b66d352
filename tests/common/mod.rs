//! Shared test harness: one Chromium per test binary, a fresh browser context
//! per test, fixture pages served from `tests/fixtures` on two loopback ports
//! (the second one, addressed as `localhost`, is cross-site for OOPIF tests).
//!
//! A missing Chromium fails the run with the command that installs it.
//!
//! Every file a test writes goes under [`test_root`], this binary's own
//! temporary directory, removed when the binary exits: a run leaves nothing in
//! the temp dir.

#![allow(dead_code)]

pub mod files;
pub mod gate;
pub mod oracle;
pub mod proc;
pub mod reads;

#[allow(unused_imports)] // not every test binary drives the binary through pipes
pub use proc::{bin, Proc, ACT};

use std::future::Future;
use std::sync::{LazyLock, OnceLock};

use serde_json::{json, Value};
use sightline_api::{Action, Env, EnvOptions, StateObject, Turn};
use sightline_browser::{Browser, BrowserOptions, Tab, TabOptions};
use sightline_cdp::LaunchOptions;
use sightline_testkit::Server;

static RT: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
});

pub struct World {
    pub browser: Browser,
    pub site: Server,
    pub other: Server,
}

static WORLD: OnceLock<World> = OnceLock::new();
static GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static PROFILE: OnceLock<std::path::PathBuf> = OnceLock::new();

extern "C" fn kill_browser() {
    let g = GROUP.load(std::sync::atomic::Ordering::SeqCst);
    if g > 0 {
        // SAFETY: kill(2) on the process group we launched.
        unsafe {
            libc::kill(-g, libc::SIGKILL);
        }
        if let Some(p) = PROFILE.get() {
            for _ in 0..40 {
                if std::fs::remove_dir_all(p).is_ok() || !p.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
        }
    }
}

static ROOT: OnceLock<std::path::PathBuf> = OnceLock::new();

extern "C" fn remove_test_root() {
    if let Some(p) = ROOT.get() {
        let _ = std::fs::remove_dir_all(p);
    }
}

/// This test binary's own temporary directory (`sightline-test-PID` in the temp
/// dir), created on first use and removed (with what it holds) when the binary
/// exits, whether its tests passed or not.
pub fn test_root() -> &'static std::path::Path {
    ROOT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("sightline-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the test binary's temporary directory");
        // SAFETY: registering a plain extern "C" fn.
        unsafe {
            libc::atexit(remove_test_root);
        }
        dir
    })
}

/// A fresh, empty directory under [`test_root`].
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let d = test_root().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every fixture page (`/name.html`, then `/fidelity/name.html`), sorted, as served.
pub fn fixture_pages() -> Vec<String> {
    let mut pages = Vec::new();
    for (dir, prefix) in [(fixtures_dir(), "/"), (fixtures_dir().join("fidelity"), "/fidelity/")] {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("fixtures")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".html"))
            .collect();
        names.sort();
        pages.extend(names.into_iter().map(|n| format!("{prefix}{n}")));
    }
    pages
}

pub fn fixtures_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn world() -> &'static World {
    WORLD.get_or_init(|| {
        RT.block_on(async {
            // Launched from a runtime worker thread, which lives as long as the process
            // (PR_SET_PDEATHSIG follows the spawning thread).
            let browser = RT
                .spawn(async {
                    let opts = BrowserOptions {
                        launch: LaunchOptions { extra_args: vec!["--site-per-process".into()], ..Default::default() },
                        connect: None,
                    };
                    Browser::start(&opts).await
                })
                .await
                .expect("launch task");
            let browser = match browser {
                Ok(b) => b,
                Err(e) => panic!(
                    "\n\nThese tests need a real Chromium and could not start one: {e}\n\
                     Install it with:  sudo apt-get install -y chromium\n\
                     (or point SIGHTLINE_CHROME at a Chromium binary)\n\n"
                ),
            };
            if let Some(p) = browser.profile_dir() {
                let _ = PROFILE.set(p.to_path_buf());
            }
            if let Some(g) = browser.process_group() {
                GROUP.store(g, std::sync::atomic::Ordering::SeqCst);
                // SAFETY: registering a plain extern "C" fn.
                unsafe {
                    libc::atexit(kill_browser);
                }
            }
            let site = RT.spawn(Server::dir(fixtures_dir())).await.unwrap().expect("fixture server");
            let other = RT.spawn(Server::dir(fixtures_dir())).await.unwrap().expect("second fixture server");
            World { browser, site, other }
        })
    })
}

/// The tool API, attached to this binary's shared browser (each session gets its own context).
pub fn api() -> sightline_api::Api {
    let port_file = world().browser.profile_dir().expect("launched").join("DevToolsActivePort");
    let port = std::fs::read_to_string(port_file).unwrap().lines().next().unwrap().trim().to_string();
    let opts = sightline_api::ApiOptions {
        browser: BrowserOptions { launch: LaunchOptions::default(), connect: Some(format!("http://127.0.0.1:{port}")) },
        tab: TabOptions::default(),
        storage_state: None,
    };
    sightline_api::Api::new(opts)
}

/// Call a tool that must succeed.
pub async fn ok(api: &sightline_api::Api, tool: &str, args: Value) -> Value {
    match api.dispatch(tool, args.clone()).await {
        Ok(out) => out.value,
        Err(e) => panic!("{tool}({args}) failed: {e:?}"),
    }
}

/// Call a tool that must fail; returns the error.
pub async fn fails(api: &sightline_api::Api, tool: &str, args: Value) -> sightline_api::ToolError {
    match api.dispatch(tool, args.clone()).await {
        Ok(out) => panic!("{tool}({args}) should fail, got {}", out.value),
        Err(e) => e,
    }
}

/// Read one HTTP request (head and Content-Length body) from a test server's connection.
pub fn read_http_request(s: &mut std::net::TcpStream) -> (String, Value) {
    use std::io::Read;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let (head, start) = loop {
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "connection closed before a full request");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break (String::from_utf8_lossy(&buf[..i]).to_string(), i + 4);
        }
    };
    let len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .unwrap_or(0);
    while buf.len() < start + len {
        let n = s.read(&mut chunk).unwrap();
        buf.extend_from_slice(&chunk[..n]);
    }
    (head, serde_json::from_slice(&buf[start..start + len]).unwrap_or(Value::Null))
}

/// Run an async test body on the shared runtime.
pub fn run<F: Future>(f: F) -> F::Output {
    world();
    reads::begin();
    let out = RT.block_on(f);
    reads::finish();
    out
}

/// URL of a fixture on the main server.
pub fn url(path: &str) -> String {
    world().site.url(path)
}

/// Same fixture tree, other port, addressed by name: a different site.
pub fn other_url(path: &str) -> String {
    format!("http://localhost:{}{}", world().other.addr().port(), path)
}

pub async fn tab() -> Tab {
    tab_with(TabOptions::default()).await
}

pub async fn tab_with(opts: TabOptions) -> Tab {
    world().browser.new_tab(opts).await.expect("new tab")
}

/// An environment on a fixture page; panics if the page does not load.
pub async fn env(path: &str) -> Env {
    env_with(path, EnvOptions { screenshot: false }).await
}

pub async fn env_with(path: &str, opts: EnvOptions) -> Env {
    let target = if path.starts_with("http") { path.to_string() } else { url(path) };
    let mut env = Env::new(tab().await, opts).await.expect("env");
    let first =
        env.step_action(Action::Navigate { url: target.clone() }, json!({"action": "navigate", "url": target})).await;
    assert!(first.state.error.is_none(), "loading {path}: {:?}", first.state.error);
    reads::note(&first.state, false);
    env
}

/// One step with a JSON action.
pub async fn step(env: &mut Env, action: Value) -> Turn {
    let turn = env.step(&action.to_string()).await;
    reads::note(&turn.state, true);
    turn
}

/// Index of the first element matching `pred`, panicking with the index when none does.
pub fn find(s: &StateObject, what: &str, pred: impl Fn(&sightline_api::ElementDescriptor) -> bool) -> u64 {
    match s.element_index.0.iter().position(pred) {
        Some(i) => i as u64 + 1,
        None => panic!("no element {what} in index:\n{}", s.page_content),
    }
}

pub fn by_text(s: &StateObject, text: &str) -> u64 {
    find(s, &format!("with text {text:?}"), |d| d.text_content.as_deref() == Some(text))
}

pub fn by_id_name(s: &StateObject, name: &str) -> u64 {
    find(s, &format!("named {name:?}"), |d| d.attributes.name.as_deref() == Some(name))
}

pub fn texts(s: &StateObject) -> Vec<String> {
    s.element_index.0.iter().map(|d| d.text_content.clone().unwrap_or_default()).collect()
}

/// Evaluate an expression in the page (test-side inspection only).
pub async fn eval(env: &Env, expr: &str) -> Value {
    env.tab().evaluate(expr).await.expect("evaluate")
}

/// No process still runs with the profile directory of sightline process `pid`,
/// and its directories are gone (waits up to 5 s): the profile in the temp dir,
/// and Chromium's `TMPDIR` where a long temp dir sends it (`/tmp`).
pub fn assert_no_leftovers(pid: u32) {
    assert_no_leftovers_in(pid, &std::env::temp_dir());
}

/// [`assert_no_leftovers`] for a run whose `TMPDIR` was `tmp`.
pub fn assert_no_leftovers_in(pid: u32, tmp: &std::path::Path) {
    let marker = format!("sightline-profile-{pid}-");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let mut alive = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
                if String::from_utf8_lossy(&cmd).contains(&marker) {
                    alive.push(entry.file_name().to_string_lossy().to_string());
                }
            }
        }
        let dirs: Vec<std::path::PathBuf> = [tmp, std::path::Path::new("/tmp")]
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&marker))
            .map(|e| e.path())
            .collect();
        if alive.is_empty() && dirs.is_empty() {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "left behind: processes {alive:?}, directories {dirs:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// What a directory holds (names), sorted.
pub fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The shared browser's DevTools endpoint (`http://127.0.0.1:PORT`), for servers under test that attach to it.
pub fn browser_endpoint() -> String {
    let port_file = world().browser.profile_dir().expect("launched").join("DevToolsActivePort");
    let port = std::fs::read_to_string(port_file).unwrap().lines().next().unwrap().trim().to_string();
    format!("http://127.0.0.1:{port}")
}

/// One HTTP request from a test: (status, JSON body or Null, headers as lowercase "name: value" lines).
pub fn http(method: &str, url: &str, body: Option<&str>, headers: &[(&str, &str)]) -> (u16, Value, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .allow_non_standard_methods(true)
        .build()
        .into();
    let mut req = ureq::http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = match body {
        Some(b) => agent.run(req.header("content-type", "application/json").body(b.to_string()).unwrap()),
        None => agent.run(req.body(()).unwrap()),
    };
    let mut resp = resp.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = resp.status().as_u16();
    let head: String =
        resp.headers().iter().map(|(k, v)| format!("{}: {}\n", k.as_str(), v.to_str().unwrap_or(""))).collect();
    let text = resp.body_mut().with_config().limit(64 << 20).read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null), head)
}

/// Two principals' bearer tokens for the multi-tenant tests.
pub const ALICE: &str = "alice-0123456789abcdef";
pub const BOB: &str = "bob-0123456789abcdef-0";

/// A `--token-file` with these lines and file mode, under [`test_root`].
pub fn token_file(name: &str, lines: &str, mode: u32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let f = fresh_dir(&format!("tokens-{name}")).join("tokens");
    std::fs::write(&f, lines).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
    f
}

/// A page that stores `?value` in a cookie and localStorage, and shows both.
pub const JAR: &str = r#"<!doctype html><html><body>
<script>
if (location.search) { document.cookie = "who=" + location.search.slice(1) + "; path=/"; localStorage.setItem("who", location.search.slice(1)); }
document.write("<p>cookie=[" + document.cookie + "] storage=[" + (localStorage.getItem("who") || "") + "]</p>");
</script>
<input name="q" aria-label="Query">
</body></html>"#;

/// A `sightline serve` process; SIGKILLed (with its browser's group) if a test panics.
pub struct ServeProc {
    pub child: std::process::Child,
    pub base: String,
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl ServeProc {
    /// Start `sightline serve ARGS` and wait until it listens.
    pub fn start(args: &[&str]) -> ServeProc {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .arg("serve")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("sightline serve");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap());
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_string());
                }
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let addr = match rx.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                panic!("sightline serve did not start; stderr:\n{}", stderr.lock().unwrap());
            }
        };
        ServeProc { child, base: format!("http://{addr}"), stderr }
    }

    /// `sightline serve` on a loopback port, on the shared browser, with a token file and `extra` options.
    pub fn with_tokens(tokens: &std::path::Path, extra: &[&str]) -> ServeProc {
        let endpoint = browser_endpoint();
        let mut args =
            vec!["--listen", "127.0.0.1:0", "--connect", &endpoint, "--token-file", tokens.to_str().unwrap()];
        args.extend_from_slice(extra);
        ServeProc::start(&args)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Direct children of the server (its launched Chromium).
    pub fn children(&self) -> Vec<i32> {
        children_of(self.child.id() as i32)
    }

    /// SIGTERM, then the exit status (within `secs`).
    pub fn terminate(&mut self, secs: u64) -> Option<std::process::ExitStatus> {
        // SAFETY: kill(2) on the process this test started.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while std::time::Instant::now() < until {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }
}

impl Drop for ServeProc {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            for pid in self.children() {
                // SAFETY: kill(2) on the browser group our server started.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Pids whose parent is `pid` (from /proc).
pub fn children_of(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else { continue };
        // pid (comm) state ppid …; comm may contain spaces, so split after the last ')'.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
        if ppid == Some(pid) {
            out.push(p);
        }
    }
    out
}

/// Whether any process of a process group is left.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only probes.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// `POST` a JSON body: the status and the JSON answer.
pub fn post(url: &str, body: Value) -> (u16, Value) {
    let (s, v, _) = http("POST", url, Some(&body.to_string()), &[]);
    (s, v)
}

/// `POST /v1/sessions` that must succeed: the session id and the whole answer.
pub fn new_session(srv: &InProcServer, body: Value) -> (String, Value) {
    let (status, v) = post(&srv.url("/v1/sessions"), body);
    assert_eq!(status, 201, "{v}");
    (v["session_id"].as_str().expect("session_id").to_string(), v)
}

/// `sightline_server::serve` in this process on 127.0.0.1:0; `stop` (or drop) ends its sessions and waits.
pub struct InProcServer {
    pub base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl InProcServer {
    pub fn start(hub: sightline_server::HubConfig, token: Option<&str>) -> InProcServer {
        let principals = match token {
            Some(t) => sightline_server::Principals::single(t).expect("a valid token"),
            None => sightline_server::Principals::anonymous(),
        };
        InProcServer::start_with(hub, principals)
    }

    /// With the principals of a token file.
    pub fn start_with(hub: sightline_server::HubConfig, principals: sightline_server::Principals) -> InProcServer {
        let cfg = sightline_server::ServeConfig { listen: "127.0.0.1:0".parse().unwrap(), principals, hub };
        run(async move {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let (ready, addr) = tokio::sync::oneshot::channel();
            let done = tokio::spawn(sightline_server::serve(
                cfg,
                async move {
                    let _ = stopped.await;
                },
                move |a| {
                    let _ = ready.send(a);
                },
            ));
            let addr = addr.await.expect("server started");
            InProcServer { base: format!("http://{addr}"), stop: Some(stop), done: Some(done) }
        })
    }

    /// Warm contexts (or Grid browsers) its pool holds now (`sightline_warm_ready`).
    pub fn warm_ready(&self) -> usize {
        let text = ureq::get(&self.url("/metrics")).call().unwrap().body_mut().read_to_string().unwrap();
        let line = text.lines().find_map(|l| l.strip_prefix("sightline_warm_ready ")).expect("the warm gauge");
        line.trim().parse().unwrap()
    }

    /// Poll until its pool holds at least `n` (a hang guard, not a time limit).
    pub fn until_warm(&self, n: usize, what: &str) {
        let guard = std::time::Instant::now() + std::time::Duration::from_secs(300);
        while self.warm_ready() < n {
            assert!(std::time::Instant::now() < guard, "hung waiting for {what}: {} warm", self.warm_ready());
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Stop the server; whether its task ended by itself (not cut off at the 60 s safety bound).
    pub fn stop(&mut self) -> bool {
        let _ = self.stop.take().map(|s| s.send(()));
        match self.done.take() {
            Some(d) => {
                let ended = run(async { tokio::time::timeout(std::time::Duration::from_secs(60), d).await });
                matches!(ended, Ok(Ok(Ok(()))))
            }
            None => true,
        }
    }
}

impl Drop for InProcServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The semantic tree of a capture as one line per node (what the model is shown of it).
fn semantic_lines(view: &mut sightline_page::PageView) -> (Vec<String>, String) {
    use sightline_page::semantic;
    let tree = semantic::build(view, semantic::SemanticOptions::default());
    let lines = tree
        .nodes
        .iter()
        .map(|s| {
            let states: Vec<String> = s.states.iter().map(|st| format!("{}={}", st.name(), st.value())).collect();
            let actions: Vec<&str> = s.actions.iter().map(|a| a.as_str()).collect();
            format!(
                "{} {:?} v={:?} [{}] ({}) {} p={} parent={:?}",
                s.role,
                s.name,
                s.value,
                states.join(","),
                actions.join(","),
                s.visibility.as_str(),
                s.priority,
                s.parent
            )
        })
        .collect();
    let plan = semantic::plan(&tree, &semantic::Scope::Viewport);
    (lines, format!("{:?} css_hidden={}", plan.omitted, tree.css_hidden))
}

/// How the semantic tree semantic_v2 serves (roles, names and states from the
/// DOM) differs from the one joined with Chromium's full accessibility tree,
/// node by node; `None` when they agree. The two captures are taken one after
/// the other, so a page that changed in between (rustdoc adds its sidebar
/// resizer's pointer listener after it has settled) is compared once more; a
/// difference that stays is reported.
pub async fn semantic_against_the_ax_tree(tab: &Tab) -> Option<String> {
    semantic_against_the_ax_tree_once(tab).await?;
    semantic_against_the_ax_tree_once(tab).await
}

async fn semantic_against_the_ax_tree_once(tab: &Tab) -> Option<String> {
    let mut with_ax = tab
        .capture_with(sightline_browser::CaptureOptions { accessibility: true, ..Default::default() })
        .await
        .expect("capture");
    let (mut served, _) = sightline_api::capture_semantic(tab, false, None, false).await.expect("semantic capture");
    let (a, ao) = semantic_lines(&mut with_ax.view);
    let (d, dd) = semantic_lines(&mut served.view);
    if a == d && ao == dd {
        return None;
    }
    let mut diff = String::new();
    for i in 0..a.len().max(d.len()) {
        let (x, y) = (a.get(i).map(String::as_str).unwrap_or("-"), d.get(i).map(String::as_str).unwrap_or("-"));
        if x != y {
            diff.push_str(&format!("\n  ax:  {x}\n  dom: {y}"));
        }
    }
    if ao != dd {
        diff.push_str(&format!("\n  omitted ax: {ao}\n  omitted dom: {dd}"));
    }
    Some(diff)
}
