//! Browsers from Selenium Grid 4: a W3C WebDriver new session per Sightline
//! session, driven over CDP through the `se:cdp` websocket the Grid returns,
//! deleted when the Sightline session ends.
//!
//! The WebDriver calls are three plain JSON requests; they run on `ureq`
//! (already in the build for the model providers) on the blocking pool.

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::GridError;

/// Where the Grid is and what to ask it for.
#[derive(Debug, Clone)]
pub struct GridConfig {
    /// The Grid's base URL, e.g. `http://127.0.0.1:4444` (a trailing `/wd/hub` is fine too).
    pub url: String,
    /// `goog:chromeOptions.binary`: the Chromium the node should start (Debian's `/usr/bin/chromium`).
    pub chrome_binary: Option<String>,
    /// How long a new-session request waits for a free slot before the
    /// client gets `503 grid_full` (`--grid-wait`).
    pub wait: Duration,
    /// How long the server keeps listening for the Grid's answer to one
    /// new-session request (at least `wait`): a browser the Grid hands out
    /// after its client gave up is deleted at once, not left holding a slot.
    pub timeout: Duration,
}

impl GridConfig {
    /// `Retry-After` seconds for a `grid_full` answer: the wait bound, 1 to 60 s.
    pub fn retry_after(&self) -> u64 {
        self.wait.as_secs_f64().ceil().clamp(1.0, 60.0) as u64
    }
}

/// One browser held in the Grid.
#[derive(Debug, Clone)]
pub struct GridSession {
    pub grid: String,
    pub id: String,
    /// The CDP websocket (`se:cdp`) for this browser.
    pub cdp: String,
}

/// The flags the Grid's chromedriver passes to Chromium: our own launcher's
/// ([`sightline_cdp::BASE_FLAGS`]) minus what chromedriver sets itself (the
/// debugging port, the start page), plus `--no-sandbox` (Grid nodes commonly run
/// Chromium as root, where its sandbox cannot start).
pub fn chromium_args() -> Vec<String> {
    sightline_cdp::BASE_FLAGS
        .iter()
        .filter(|f| !f.starts_with("--remote-debugging-port") && f.starts_with("--"))
        .map(|f| f.to_string())
        .chain(std::iter::once("--no-sandbox".to_string()))
        .collect()
}

/// The new-session body: W3C capabilities with `goog:chromeOptions`.
pub fn new_session_body(cfg: &GridConfig) -> Value {
    let mut chrome = json!({ "args": chromium_args() });
    if let Some(b) = &cfg.chrome_binary {
        chrome["binary"] = json!(b);
    }
    json!({
        "capabilities": {
            "alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": chrome,
                "se:cdpEnabled": true,
            }
        }
    })
}

fn base(url: &str) -> String {
    url.trim_end_matches('/').to_string()
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().into()
}

/// A Grid browser nobody has taken yet: given back (`DELETE /session/{id}`)
/// when dropped, so a creating request that goes away (the client hung up,
/// the wait ran out, a later step failed) never leaves a slot held.
#[derive(Debug)]
pub struct Claim(Option<GridSession>);

impl Claim {
    pub fn session(&self) -> &GridSession {
        self.0.as_ref().expect("a claim holds its session until taken")
    }

    /// Keep the browser: from now on its owner gives it back.
    pub fn take(mut self) -> GridSession {
        self.0.take().expect("a claim holds its session until taken")
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            tracing::info!(grid_session = %s.id, "giving back a Grid browser nobody took");
            // A plain thread: drop may run outside the runtime (or while it shuts down).
            std::thread::spawn(move || delete_blocking(&s));
        }
    }
}

/// Ask the Grid for a browser, waiting at most `cfg.wait` for a free slot
/// ([`GridError::Full`] after that). Refusals (capabilities it cannot meet,
/// its own queue timeout) are [`GridError::Refused`].
///
/// The request runs detached and goes on after the caller stops waiting (or
/// is dropped): the Grid cannot take a queued request back, so whatever
/// browser it hands out late arrives in a [`Claim`] nobody holds, and is
/// deleted at once.
pub async fn new_session(cfg: &GridConfig) -> Result<Claim, GridError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let detached = cfg.clone();
    tokio::task::spawn_blocking(move || {
        // A send to a dropped receiver hands the value back, and dropping it deletes the browser.
        let _ = tx.send(request_blocking(&detached).map(|s| Claim(Some(s))));
    });
    match tokio::time::timeout(cfg.wait, rx).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(GridError::Unreachable { url: cfg.url.clone(), detail: "the request was lost".into() }),
        Err(_) => Err(GridError::Full { waited: cfg.wait, retry_after: cfg.retry_after() }),
    }
}

fn request_blocking(cfg: &GridConfig) -> Result<GridSession, GridError> {
    let url = format!("{}/session", base(&cfg.url));
    let unreachable = |detail: String| GridError::Unreachable { url: cfg.url.clone(), detail };
    let mut resp = agent(cfg.timeout.max(cfg.wait))
        .post(&url)
        .send_json(new_session_body(cfg))
        .map_err(|e| unreachable(e.to_string()))?;
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().map_err(|e| unreachable(e.to_string()))?;
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let value = &v["value"];
    if !(200..300).contains(&status) || value.get("error").is_some() {
        return Err(GridError::Refused {
            status,
            error: value["error"].as_str().unwrap_or("unknown error").to_string(),
            message: value["message"]
                .as_str()
                .map(|m| m.lines().next().unwrap_or_default().to_string())
                .unwrap_or(text),
        });
    }
    let id = value["sessionId"].as_str().filter(|id| !id.is_empty()).map(str::to_string);
    let cdp = value["capabilities"]["se:cdp"].as_str().map(str::to_string);
    match (id, cdp) {
        (Some(id), Some(cdp)) => Ok(GridSession { grid: base(&cfg.url), id, cdp }),
        (Some(id), None) => {
            let s = GridSession { grid: base(&cfg.url), id: id.clone(), cdp: String::new() };
            delete_blocking(&s);
            Err(GridError::NoCdp { session: id })
        }
        // No session to drive, and none to delete.
        (None, _) => Err(GridError::Refused { status, error: "no session id".into(), message: text }),
    }
}

fn delete_blocking(s: &GridSession) {
    let _ = agent(Duration::from_secs(30)).delete(&format!("{}/session/{}", s.grid, s.id)).call();
}

/// Give the browser back (WebDriver `DELETE /session/{id}`); errors are ignored:
/// the Grid reaps a session whose browser is gone by itself.
pub async fn delete_session(s: GridSession) {
    let _ = tokio::task::spawn_blocking(move || delete_blocking(&s)).await;
}

/// One WebDriver read (`GET /session/{id}/timeouts`, answered by the driver
/// without the page), which the Grid counts as activity: CDP traffic through
/// its proxy does not, and an inactive session is ended after the Grid's
/// session timeout. Errors are ignored (the liveness probes see a dead browser).
pub async fn touch(s: GridSession) {
    let _ = tokio::task::spawn_blocking(move || {
        agent(Duration::from_secs(10)).get(&format!("{}/session/{}/timeouts", s.grid, s.id)).call()
    })
    .await;
}

/// Sessions the Grid holds now (its `/status`), or None when it cannot be read.
pub async fn busy_slots(url: &str) -> Option<usize> {
    let url = format!("{}/status", base(url));
    tokio::task::spawn_blocking(move || {
        let mut r = agent(Duration::from_secs(10)).get(&url).call().ok()?;
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()?;
        let nodes = v["value"]["nodes"].as_array()?;
        Some(
            nodes
                .iter()
                .flat_map(|n| n["slots"].as_array().cloned().unwrap_or_default())
                .filter(|s| !s["session"].is_null())
                .count(),
        )
    })
    .await
    .ok()
    .flatten()
}
