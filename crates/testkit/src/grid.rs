//! [`LocalGrid`]: a real Selenium Grid 4 standalone on 127.0.0.1, started for the
//! Grid tests and `sightline-bench serve` (Java and chromedriver from Debian, the
//! server jar from npm `@nightwatch/selenium-server`, as `./x` installs them).

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
}

/// Where `./x` installs the Selenium server jar (npm `@nightwatch/selenium-server` 4.20.0), under a checkout.
pub const JAR_IN_CHECKOUT: &str =
    "target/selenium/node_modules/@nightwatch/selenium-server/lib/selenium-server-4.20.0.jar";

/// What to install when a local Grid cannot start.
pub const INSTALL_HINT: &str =
    "install with ./x test (or: apt-get install default-jre-headless chromium chromium-driver; \
npm install --prefix target/selenium @nightwatch/selenium-server@4.20.0), or point SIGHTLINE_SELENIUM_JAR at the jar";

/// A Selenium Grid standalone we started on 127.0.0.1 (tests and `sightline-bench serve`).
/// Dropping it kills its process group (the JVM, chromedriver and browsers).
pub struct LocalGrid {
    child: std::process::Child,
    pub url: String,
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
        let mut cmd = std::process::Command::new("java");
        cmd.arg("-jar")
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
        let mut grid = LocalGrid { child, url: format!("http://127.0.0.1:{port}") };
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
