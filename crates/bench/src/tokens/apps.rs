//! The real apps of `bench tokens`: those `./x apps` installs under `.cache/apps`,
//! started as `tests/apps.rs` and `tests/component_apps.rs` start them. Each
//! Python app's `tests/apps/NAME/serve.py` makes its data (`--prepare`: a
//! migrated and seeded SQLite database, a built site, a seed file) in a
//! scratch directory of this run, then serves it (`--ready`) on `127.0.0.1`
//! with a port the OS picks and prints `PORT <n>`. Each server leads a process
//! group of its own (what it starts, Streamlit or Jupyter, goes with it), which
//! is killed by its id on the way out, and its scratch directory removed.
//! TodoMVC's site is files, served by the fixture server.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sightline_testkit::Server;

/// One app: where `./x apps` installs it, how it starts, and the pages read, each with the text
/// every reader waits for first when the app draws after it loads (over a WebSocket).
pub struct Spec {
    pub name: &'static str,
    /// Its directory under `.cache/apps` (on `PYTHONPATH` for a Python app).
    packages: &'static str,
    /// A file in that directory once it is installed.
    installed: &'static str,
    /// `serve.py` under `tests/apps/`, or `None` for a site of files served as they are.
    script: Option<&'static str>,
    /// The data's file name in the scratch directory (`SIGHTLINE_APPS_DB`).
    data: &'static str,
    pub pages: &'static [(&'static str, Option<&'static str>)],
}

/// Every app `./x apps` installs, the pages read of each (no login: each reader is a browser of
/// its own, so only pages a first visit sees).
pub const APPS: [Spec; 9] = [
    Spec {
        name: "TodoMVC",
        packages: "todomvc",
        installed: "examples/react/index.html",
        script: None,
        data: "",
        pages: &[("/examples/react/index.html", None)],
    },
    Spec {
        name: "MkDocs",
        packages: "mkdocs",
        installed: "material/__init__.py",
        script: Some("mkdocs/serve.py"),
        data: "site",
        pages: &[("/", None), ("/guide/installation/", None), ("/reference/command-line/", None)],
    },
    Spec {
        name: "Django",
        packages: "django",
        installed: "django/__init__.py",
        script: Some("django/serve.py"),
        data: "db.sqlite3",
        pages: &[("/admin/login/", None)],
    },
    Spec {
        name: "Flask-Admin",
        packages: "flask-admin",
        installed: "flask_admin/__init__.py",
        script: Some("flask_admin/serve.py"),
        data: "db.sqlite3",
        pages: &[("/admin/", None), ("/admin/user/", None), ("/admin/post/new/", None)],
    },
    Spec {
        name: "Datasette",
        packages: "datasette",
        installed: "datasette/__init__.py",
        script: Some("datasette/serve.py"),
        data: "library.sqlite3",
        pages: &[("/", None), ("/library", None), ("/library/books", None)],
    },
    Spec {
        name: "Wagtail",
        packages: "wagtail",
        installed: "wagtail/__init__.py",
        script: Some("wagtail/serve.py"),
        data: "db.sqlite3",
        pages: &[("/", None), ("/about-us/", None), ("/admin/login/", None)],
    },
    Spec {
        name: "NiceGUI",
        packages: "nicegui",
        installed: "nicegui/__init__.py",
        script: Some("nicegui/serve.py"),
        data: "bookings.json",
        pages: &[("/", Some("Book a room"))],
    },
    Spec {
        name: "Streamlit",
        packages: "streamlit",
        installed: "streamlit/__init__.py",
        script: Some("streamlit/serve.py"),
        data: "received.jsonl",
        pages: &[("/", Some("Include archived items"))],
    },
    Spec {
        name: "JupyterLab",
        packages: "jupyterlab",
        installed: "jupyterlab/__init__.py",
        script: Some("jupyter/serve.py"),
        data: "README.txt",
        pages: &[("/lab", Some("Markdown File"))],
    },
];

/// How long an app may take to prepare its data and then to listen.
const START_LIMIT: Duration = Duration::from_secs(180);

fn repo() -> Result<PathBuf> {
    std::env::current_dir().context("the working directory")
}

/// Every app installed, and `python3` there; else what to run.
pub fn check() -> Result<&'static [Spec]> {
    let cache = repo()?.join(".cache/apps");
    for spec in &APPS {
        let marker = cache.join(spec.packages).join(spec.installed);
        anyhow::ensure!(
            marker.is_file(),
            "{} is not installed (no {}); install the real apps with:  ./x apps",
            spec.name,
            marker.display()
        );
    }
    Command::new("python3").arg("--version").output().context("python3 is needed to start the apps")?;
    Ok(&APPS)
}

/// A running app: a fixture server, or a `serve.py` process group and its scratch directory.
pub struct Running {
    pub spec: &'static Spec,
    base: String,
    _files: Option<Server>,
    child: Option<Child>,
    scratch: Option<PathBuf>,
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            // SIGKILL to the group this bench started (the server leads it), by its id.
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Start every app, the Python ones side by side (each prepares its data, then listens).
pub async fn start(specs: &'static [Spec]) -> Result<Vec<Running>> {
    let handles: Vec<_> = specs
        .iter()
        .filter(|s| s.script.is_some())
        .map(|spec| (spec, tokio::task::spawn_blocking(move || start_script(spec))))
        .collect();
    let mut running = Vec::new();
    for spec in specs.iter().filter(|s| s.script.is_none()) {
        let root = repo()?.join(".cache/apps").join(spec.packages);
        let files = Server::dir(root).await?;
        let base = files.url("");
        running.push(Running { spec, base, _files: Some(files), child: None, scratch: None });
    }
    let mut failed = Vec::new();
    for (spec, handle) in handles {
        match handle.await {
            Ok(Ok(r)) => running.push(r),
            Ok(Err(e)) => failed.push(format!("{}: {e:#}", spec.name)),
            Err(e) => failed.push(format!("{}: {e}", spec.name)),
        }
    }
    if !failed.is_empty() {
        drop(running);
        bail!("an app did not start:\n{}", failed.join("\n"));
    }
    running.sort_by_key(|r| specs.iter().position(|s| std::ptr::eq(s, r.spec)));
    Ok(running)
}

fn start_script(spec: &'static Spec) -> Result<Running> {
    let repo = repo()?;
    let script = repo.join("tests/apps").join(spec.script.unwrap_or_default());
    let scratch = std::env::temp_dir().join(format!("sightline-bench-tokens-{}-{}", std::process::id(), spec.packages));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let mut running = Running { spec, base: String::new(), _files: None, child: None, scratch: Some(scratch.clone()) };
    let data = scratch.join(spec.data);
    let command = || {
        let mut cmd = Command::new("python3");
        cmd.arg(&script)
            .env("PYTHONPATH", repo.join(".cache/apps").join(spec.packages))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("SIGHTLINE_APPS_DB", &data)
            .env("HISTFILE", "/dev/null")
            .current_dir(&scratch);
        cmd
    };
    let out = command().arg("--prepare").output().context("python3")?;
    if !out.status.success() {
        bail!("serve.py --prepare failed:\n{}", tail(&String::from_utf8_lossy(&out.stderr)));
    }
    let log = scratch.join("server.log");
    let mut cmd = command();
    cmd.arg("--ready")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log)?)
        .process_group(0);
    let mut child = cmd.spawn().context("python3")?;
    let stdout = child.stdout.take().context("piped stdout")?;
    running.child = Some(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(START_LIMIT).unwrap_or_default();
    let Some(port) = line.trim().strip_prefix("PORT ").and_then(|p| p.parse::<u16>().ok()) else {
        bail!("serve.py --ready printed {line:?}, not PORT <n>; its log:\n{}", tail(&std::fs::read_to_string(&log)?));
    };
    running.base = format!("http://127.0.0.1:{port}");
    Ok(running)
}

/// The last lines of a log.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
