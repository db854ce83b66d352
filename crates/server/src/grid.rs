//! Browsers from Selenium Grid 4: a W3C WebDriver new session per Sightline
//! session, driven over CDP through the `se:cdp` websocket the Grid returns,
//! deleted when the Sightline session ends.
//!
//! The WebDriver calls are three plain JSON requests; they run on `ureq`
//! (already in the build for the model providers) on the blocking pool.
//!
//! **No slot is left held.** The Grid cannot take back a new-session request
//! it has queued, and it does not notice that the client hung up: whatever
//! request is still queued is handed a browser when a slot frees. So every
//! request runs to its answer on a thread of its own, and a browser it gets
//! after its caller stopped waiting is given back on that thread. These
//! requests and give-backs are counted in an [`Outstanding`] the hub waits
//! on at shutdown, so none is cut off by the process exiting. A request the
//! server stops listening to (its HTTP time limit, `GridConfig::timeout`)
//! carries a tag capability ([`TAG`]): the Grid is watched until the tagged
//! request is neither queued nor holding a browser, and a browser it got is
//! given back.

use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Past it, the request is watched by its tag ([`TAG`]) as long again.
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
    /// Where giving it back is counted.
    outstanding: Outstanding,
}

impl GridSession {
    /// Count work on this browser (giving it back) until the ticket is dropped:
    /// the hub's shutdown waits for it.
    pub fn counted(&self) -> Ticket {
        self.outstanding.enter()
    }
}

/// The extension capability each new-session request carries, with a value
/// of its own: the Grid lists it with the request while queued, and with the
/// browser it got, so a request whose answer never arrived can be found.
pub const TAG: &str = "sightline:request";

/// How long a tagged request that left the Grid's queue unanswered is
/// watched for the browser it may be getting (a Node starting Chromium and
/// chromedriver on a loaded machine).
pub const CREATE_GRACE: Duration = Duration::from_secs(60);

/// Grid work under way for one hub: new-session requests waiting for the
/// Grid's answer and browsers being given back. Each holds a [`Ticket`];
/// [`Outstanding::settled`] waits until none is left (shutdown).
#[derive(Clone)]
pub struct Outstanding(Arc<tokio::sync::watch::Sender<usize>>);

impl Default for Outstanding {
    fn default() -> Self {
        Outstanding(Arc::new(tokio::sync::watch::channel(0).0))
    }
}

impl std::fmt::Debug for Outstanding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Outstanding({})", self.count())
    }
}

impl Outstanding {
    /// Count one piece of work until the ticket is dropped.
    pub fn enter(&self) -> Ticket {
        self.0.send_modify(|n| *n += 1);
        Ticket(self.0.clone())
    }

    /// Requests and give-backs under way now.
    pub fn count(&self) -> usize {
        *self.0.borrow()
    }

    /// Wait until nothing is under way.
    pub async fn settled(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

/// One request or give-back counted in an [`Outstanding`].
pub struct Ticket(Arc<tokio::sync::watch::Sender<usize>>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
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

/// The new-session body: W3C capabilities with `goog:chromeOptions`, and
/// this request's `tag` ([`TAG`]).
pub fn new_session_body(cfg: &GridConfig, tag: &str) -> Value {
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
                TAG: tag,
            }
        }
    })
}

/// A fresh tag value: 128 random bits in hex.
fn new_tag() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut a = std::collections::hash_map::RandomState::new().build_hasher();
    a.write_u64(0x5167_6874);
    let mut b = std::collections::hash_map::RandomState::new().build_hasher();
    b.write_u64(0x6c69_6e65);
    format!("{:016x}{:016x}", a.finish(), b.finish())
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

    /// Give the browser back on this (blocking) thread.
    fn give_back_here(mut self) {
        if let Some(s) = self.0.take() {
            tracing::info!(grid_session = %s.id, "giving back a Grid browser its request no longer waited for");
            delete_blocking(&s);
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            tracing::info!(grid_session = %s.id, "giving back a Grid browser nobody took");
            // A plain thread: drop may run outside the runtime (or while it shuts down).
            // Counted, so shutdown waits for it.
            let ticket = s.outstanding.enter();
            std::thread::spawn(move || {
                delete_blocking(&s);
                drop(ticket);
            });
        }
    }
}

/// Ask the Grid for a browser, waiting until `by` at most for a free slot
/// ([`GridError::Full`] after that, or at once when `by` has passed).
/// Refusals (capabilities it cannot meet, its own queue timeout) are
/// [`GridError::Refused`].
///
/// The request runs detached, counted in `outstanding`, and goes on after
/// the caller stops waiting (or is dropped): the Grid cannot take a queued
/// request back, so whatever browser it hands out late is given back by the
/// request's own thread.
/// A warm pool's own request (`warm`) carries a [`WARM_TAG`] tag.
pub async fn new_session(
    cfg: &GridConfig,
    outstanding: &Outstanding,
    by: Instant,
    warm: bool,
) -> Result<Claim, GridError> {
    let left = by.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(GridError::Full { waited: cfg.wait, retry_after: cfg.retry_after() });
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (detached, counted) = (cfg.clone(), outstanding.clone());
    let ticket = outstanding.enter();
    tokio::task::spawn_blocking(move || {
        let answer = request_blocking(&detached, &counted, warm).map(|s| Claim(Some(s)));
        // A send to a dropped receiver hands the value back: nobody waits for this browser.
        if let Err(Ok(claim)) = tx.send(answer) {
            claim.give_back_here();
        }
        drop(ticket);
    });
    match tokio::time::timeout(left, rx).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(GridError::Unreachable { url: cfg.url.clone(), detail: "the request was lost".into() }),
        Err(_) => Err(GridError::Full { waited: cfg.wait, retry_after: cfg.retry_after() }),
    }
}

fn request_blocking(cfg: &GridConfig, outstanding: &Outstanding, warm: bool) -> Result<GridSession, GridError> {
    let url = format!("{}/session", base(&cfg.url));
    let unreachable = |detail: String| GridError::Unreachable { url: cfg.url.clone(), detail };
    let tag = if warm { format!("{WARM_TAG}{}", new_tag()) } else { new_tag() };
    let sent = agent(cfg.timeout.max(cfg.wait)).post(&url).send_json(new_session_body(cfg, &tag));
    let mut resp = match sent {
        Ok(r) => r,
        Err(e) => {
            // Unless it never left (no connection), it may be queued with no answer
            // heard: the Grid may still hand it a browser.
            let unsent = match &e {
                ureq::Error::Io(io) => io.kind() == std::io::ErrorKind::ConnectionRefused,
                ureq::Error::Timeout(t) => matches!(t, ureq::Timeout::Resolve | ureq::Timeout::Connect),
                _ => matches!(e, ureq::Error::HostNotFound | ureq::Error::ConnectionFailed | ureq::Error::BadUri(_)),
            };
            if !unsent {
                reap_unanswered(cfg, &tag, outstanding);
            }
            return Err(unreachable(e.to_string()));
        }
    };
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
    let session =
        |id: String, cdp: String| GridSession { grid: base(&cfg.url), id, cdp, outstanding: outstanding.clone() };
    match (id, cdp) {
        (Some(id), Some(cdp)) => Ok(session(id, cdp)),
        (Some(id), None) => {
            delete_blocking(&session(id.clone(), String::new()));
            Err(GridError::NoCdp { session: id })
        }
        // No session to drive, and none to delete.
        (None, _) => Err(GridError::Refused { status, error: "no session id".into(), message: text }),
    }
}

/// Where the request tagged `tag` is, as the Grid's GraphQL says: (still
/// queued, the browser it got). None when the Grid cannot be read.
fn find_tagged(cfg: &GridConfig, tag: &str) -> Option<(bool, Option<String>)> {
    let query = json!({ "query": "{ sessionsInfo { sessionQueueRequests sessions { id capabilities } } }" });
    let mut r = agent(Duration::from_secs(10)).post(&format!("{}/graphql", base(&cfg.url))).send_json(query).ok()?;
    let v: Value = serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()?;
    let info = &v["data"]["sessionsInfo"];
    // Capabilities come as JSON text.
    let tagged =
        |caps: &Value| caps.as_str().and_then(|t| serde_json::from_str::<Value>(t).ok()).is_some_and(|c| c[TAG] == tag);
    let queued = info["sessionQueueRequests"].as_array()?.iter().any(tagged);
    let session = info["sessions"]
        .as_array()?
        .iter()
        .find(|s| tagged(&s["capabilities"]))
        .and_then(|s| s["id"].as_str().map(str::to_string));
    Some((queued, session))
}

/// A request sent whose answer never came: watch the Grid until it is
/// neither queued nor holding a browser, and give back a browser it got.
/// Once out of the queue it is watched [`CREATE_GRACE`] more (a Node may be
/// starting its browser); the whole watch lasts `cfg.timeout` at most, and
/// ends when the Grid cannot be read three times in a row.
fn reap_unanswered(cfg: &GridConfig, tag: &str, outstanding: &Outstanding) {
    let until = Instant::now() + cfg.timeout.max(cfg.wait);
    let mut dequeued: Option<Instant> = None;
    let mut unread = 0;
    while Instant::now() < until && unread < 3 {
        let found = find_tagged(cfg, tag);
        unread = if found.is_some() { 0 } else { unread + 1 };
        match found {
            Some((_, Some(id))) => {
                tracing::info!(grid_session = %id, "giving back a Grid browser whose request went unanswered");
                let s = GridSession { grid: base(&cfg.url), id, cdp: String::new(), outstanding: outstanding.clone() };
                delete_blocking(&s);
                return;
            }
            Some((false, None)) => {
                let since = *dequeued.get_or_insert_with(Instant::now);
                if since.elapsed() >= CREATE_GRACE {
                    return;
                }
            }
            Some((true, None)) => dequeued = None,
            None => {}
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    tracing::warn!(tag, "stopped watching a Grid request that went unanswered");
}

fn delete_blocking(s: &GridSession) {
    let _ = agent(Duration::from_secs(30)).delete(&format!("{}/session/{}", s.grid, s.id)).call();
}

/// Give the browser back (WebDriver `DELETE /session/{id}`); errors are ignored:
/// the Grid reaps a session whose browser is gone by itself. Counted until
/// done, even when the caller stops waiting.
pub async fn delete_session(s: GridSession) {
    let ticket = s.outstanding.enter();
    let _ = tokio::task::spawn_blocking(move || {
        delete_blocking(&s);
        drop(ticket);
    })
    .await;
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

/// Whether the Grid still runs a session's WebDriver session: one WebDriver
/// read answered (`Some(true)`), answered with an error (`Some(false)`: the
/// driver behind it is gone, or the Grid forgot the session), or no answer
/// from the Grid at all (`None`).
pub async fn held(s: GridSession) -> Option<bool> {
    tokio::task::spawn_blocking(move || {
        let r = agent(Duration::from_secs(10)).get(&format!("{}/session/{}/timeouts", s.grid, s.id)).call().ok()?;
        Some(r.status().is_success())
    })
    .await
    .ok()
    .flatten()
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

/// What a Grid has room for now, for Chromium (its GraphQL nodes and queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    /// Chrome slots no session holds, on nodes that are up, under each node's
    /// session cap: a new-session request now is served at once.
    pub free: usize,
    /// New-session requests waiting in the Grid's queue that a Chrome slot could
    /// serve, anyone's but a warm pool's own ([`WARM_TAG`]).
    pub queued: usize,
}

/// The prefix of the [`TAG`] a warm pool's own new-session requests carry.
pub const WARM_TAG: &str = "warm-";

const LOAD_QUERY: &str =
    "{ nodesInfo { nodes { status maxSession sessionCount stereotypes sessions { capabilities } } } \
     sessionsInfo { sessionQueueRequests } }";

/// The Grid's [`Load`], or None when it cannot be read.
pub async fn load(url: &str) -> Option<Load> {
    let url = format!("{}/graphql", base(url));
    tokio::task::spawn_blocking(move || {
        let mut r = agent(Duration::from_secs(10)).post(&url).send_json(json!({ "query": LOAD_QUERY })).ok()?;
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()?;
        load_of(&v["data"])
    })
    .await
    .ok()
    .flatten()
}

/// Capabilities the Grid gives as JSON text.
fn caps(v: &Value) -> Value {
    v.as_str().and_then(|t| serde_json::from_str(t).ok()).unwrap_or(Value::Null)
}

/// Whether capabilities ask for (or describe) Chrome: `browserName` chrome, or none.
fn chrome(c: &Value) -> bool {
    c["browserName"].as_str().is_none_or(|b| b.eq_ignore_ascii_case("chrome"))
}

/// A [`Load`] from the GraphQL answer's `data`.
fn load_of(data: &Value) -> Option<Load> {
    let mut free = 0;
    for node in data["nodesInfo"]["nodes"].as_array()? {
        if node["status"] != "UP" {
            continue;
        }
        let n = |k: &str| node[k].as_u64().map(|n| n as usize);
        let cap = n("maxSession")?.saturating_sub(n("sessionCount")?);
        let slots: usize = caps(&node["stereotypes"])
            .as_array()
            .map(|st| {
                st.iter()
                    .filter(|s| {
                        s["stereotype"]["browserName"].as_str().is_some_and(|b| b.eq_ignore_ascii_case("chrome"))
                    })
                    .filter_map(|s| s["slots"].as_u64())
                    .sum::<u64>() as usize
            })
            .unwrap_or(0);
        let busy =
            node["sessions"].as_array().map_or(0, |ss| ss.iter().filter(|s| chrome(&caps(&s["capabilities"]))).count());
        free += cap.min(slots.saturating_sub(busy));
    }
    let queued = data["sessionsInfo"]["sessionQueueRequests"]
        .as_array()?
        .iter()
        .map(caps)
        .filter(|c| chrome(c) && !c[TAG].as_str().is_some_and(|t| t.starts_with(WARM_TAG)))
        .count();
    Some(Load { free, queued })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_counts_free_chrome_slots_under_each_nodes_cap_and_others_queued_chrome_requests() {
        let st = |chrome: u64, firefox: u64| {
            json!([
                { "slots": chrome, "stereotype": { "browserName": "chrome" } },
                { "slots": firefox, "stereotype": { "browserName": "firefox" } },
            ])
            .to_string()
        };
        let session = |b: &str| json!({ "capabilities": json!({ "browserName": b }).to_string() });
        let request = |c: Value| Value::String(c.to_string());
        let data = json!({
            "nodesInfo": { "nodes": [
                // Two Chrome slots, one held; the cap leaves one.
                { "status": "UP", "maxSession": 3, "sessionCount": 2, "stereotypes": st(2, 2),
                  "sessions": [session("chrome"), session("firefox")] },
                // Free Firefox slots only: no room for Chrome.
                { "status": "UP", "maxSession": 2, "sessionCount": 0, "stereotypes": st(0, 2), "sessions": [] },
                // A node that is down counts for nothing.
                { "status": "DOWN", "maxSession": 4, "sessionCount": 0, "stereotypes": st(4, 0), "sessions": [] },
                // Chrome slots free, but the node's cap is reached.
                { "status": "UP", "maxSession": 1, "sessionCount": 1, "stereotypes": st(2, 1),
                  "sessions": [session("firefox")] },
            ] },
            "sessionsInfo": { "sessionQueueRequests": [
                request(json!({ "browserName": "chrome", TAG: "abc" })),
                request(json!({ "browserName": "firefox" })),
                request(json!({ "browserName": "chrome", TAG: "warm-abc" })),
                request(json!({ "platformName": "linux" })),
            ] },
        });
        assert_eq!(load_of(&data), Some(Load { free: 1, queued: 2 }));
        assert_eq!(load_of(&json!({ "nodesInfo": {} })), None);
    }
}
