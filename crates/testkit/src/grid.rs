//! [`LocalGrid`]: a real Selenium Grid 4 standalone on 127.0.0.1, started for the
//! Grid tests and `sightline-bench serve` (Java and chromedriver from Debian, the
//! server jar from npm `@nightwatch/selenium-server`, as `./x` installs them).
//!
//! The Grid, its chromedriver and the browsers it starts keep their temporary
//! files (profiles, Chromium's sockets, the JVM's) in a directory of its own
//! ([`LocalGrid::temp_dir`]), removed when it is dropped.

use std::time::Duration;

use serde_json::Value;

/// Why a local Grid could not start (what is missing, or what the JVM did).
#[derive(Debug, thiserror::Error)]
pub enum GridSetupError {
    #[error("the Selenium server jar is missing ({}); {INSTALL_HINT}", jar.display())]
    JarMissing { jar: std::path::PathBuf },
    #[error("{what} is not on PATH; {INSTALL_HINT}")]
    ToolMissing { what: &'static str },
    #[error("no free loopback port")]
    Port(#[source] std::io::Error),
    #[error("cannot run java; {INSTALL_HINT}")]
    Spawn(#[source] std::io::Error),
    #[error("the Selenium server exited ({status}) before it was ready")]
    Exited { status: std::process::ExitStatus },
    #[error("the Selenium server was not ready within {} s", waited.as_secs())]
    NotReady { waited: Duration },
    #[error("cannot make the Grid's temporary directory {}", dir.display())]
    TempDir {
        dir: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Where `./x` installs the Selenium server jar (npm `@nightwatch/selenium-server` 4.20.0), under a checkout.
pub const JAR_IN_CHECKOUT: &str =
    "target/selenium/node_modules/@nightwatch/selenium-server/lib/selenium-server-4.20.0.jar";

/// What to install when a local Grid cannot start.
pub const INSTALL_HINT: &str =
    "install with ./x test (or: apt-get install default-jre-headless chromium chromium-driver; \
npm install --prefix target/selenium @nightwatch/selenium-server@4.20.0), or point SIGHTLINE_SELENIUM_JAR at the jar";

/// A Selenium Grid standalone we started on 127.0.0.1 (tests and `sightline-bench serve`).
/// Dropping it kills its process group (the JVM, chromedriver and browsers) and
/// removes its temporary directory.
pub struct LocalGrid {
    child: std::process::Child,
    pub url: String,
    tmp: TempDir,
}

/// The longest `TMPDIR` the Grid's browsers can run with: Chromium puts a unix
/// socket at `TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket`, whose path
/// may not pass 107 bytes.
const TMPDIR_MAX: usize = 60;

/// A directory removed (with what it holds) when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    /// `sightline-grid-PID-PORT` in the temp dir, or in `/tmp` when that path is too long.
    fn new(port: u16) -> Result<TempDir, GridSetupError> {
        let name = format!("sightline-grid-{}-{port}", std::process::id());
        let mut dir = std::env::temp_dir().join(&name);
        if dir.as_os_str().len() > TMPDIR_MAX {
            dir = std::path::Path::new("/tmp").join(&name);
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| GridSetupError::TempDir { dir: dir.clone(), source })?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Killed processes may still be going for a moment.
        for _ in 0..80 {
            if std::fs::remove_dir_all(&self.0).is_ok() || !self.0.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl LocalGrid {
    /// The jar: `$SIGHTLINE_SELENIUM_JAR`, else [`JAR_IN_CHECKOUT`] under `root`.
    pub fn find_jar(root: &std::path::Path) -> Result<std::path::PathBuf, GridSetupError> {
        let jar = match std::env::var_os("SIGHTLINE_SELENIUM_JAR").filter(|v| !v.is_empty()) {
            Some(p) => std::path::PathBuf::from(p),
            None => root.join(JAR_IN_CHECKOUT),
        };
        if jar.is_file() {
            Ok(jar)
        } else {
            Err(GridSetupError::JarMissing { jar })
        }
    }

    /// Start `java -jar … standalone` on a free loopback port and wait until it is ready.
    /// `max_sessions` browsers at once; a new-session request waits `request_timeout` for a slot.
    pub fn start(
        jar: &std::path::Path,
        max_sessions: usize,
        request_timeout: Duration,
    ) -> Result<LocalGrid, GridSetupError> {
        for (tool, what) in
            [("java", "Java (default-jre-headless)"), ("chromedriver", "chromedriver (chromium-driver)")]
        {
            let found = std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
                .unwrap_or(false);
            if !found {
                return Err(GridSetupError::ToolMissing { what });
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(GridSetupError::Port)?
            .port();
        let tmp = TempDir::new(port)?;
        let mut cmd = std::process::Command::new("java");
        // Everything the Grid starts writes its temporary files there: chromedriver's
        // profiles and Chromium's sockets (TMPDIR), the JVM's (java.io.tmpdir; no hsperfdata).
        cmd.env("TMPDIR", &tmp.0)
            .arg(format!("-Djava.io.tmpdir={}", tmp.0.display()))
            .arg("-XX:-UsePerfData")
            .arg("-jar")
            .arg(jar)
            .args(["standalone", "--selenium-manager", "false", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--max-sessions", &max_sessions.to_string(), "--override-max-sessions", "true"])
            .args(["--session-request-timeout", &request_timeout.as_secs().max(1).to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(GridSetupError::Spawn)?;
        let mut grid = LocalGrid { child, url: format!("http://127.0.0.1:{port}"), tmp };
        let until = std::time::Instant::now() + Duration::from_secs(120);
        let status = format!("{}/status", grid.url);
        while std::time::Instant::now() < until {
            if let Ok(Some(s)) = grid.child.try_wait() {
                return Err(GridSetupError::Exited { status: s });
            }
            let ready = ureq::Agent::config_builder()
                .timeout_global(Some(Duration::from_secs(2)))
                .http_status_as_error(false)
                .build()
                .new_agent()
                .get(&status)
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|v| v["value"]["ready"] == true);
            if ready {
                return Ok(grid);
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(GridSetupError::NotReady { waited: Duration::from_secs(120) })
    }

    /// The process group (for last-resort cleanup hooks).
    pub fn process_group(&self) -> i32 {
        self.child.id() as i32
    }

    /// Where the Grid and what it starts keep their temporary files (for
    /// last-resort cleanup hooks: removed when the grid is dropped).
    pub fn temp_dir(&self) -> &std::path::Path {
        &self.tmp.0
    }
}

impl Drop for LocalGrid {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this struct created.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}
