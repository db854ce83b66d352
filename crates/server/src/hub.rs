//! Sessions: creation (a browser context on the shared browser, or a browser
//! from the Grid), the per-session request queue, idle timeout, crash
//! detection and shutdown.
//!
//! Each session owns its own [`Api`] with exactly one driver session in it,
//! named by the session id, so the tool vocabulary is the one `rpc` speaks and
//! a session can never reach another's tabs: every call's `session` argument is
//! overwritten with the session's own id.
//!
//! Each session belongs to the [`Principal`] that created it. Every lookup by
//! id ([`Hub::enter`], [`Hub::end`]) takes the caller's principal, and a
//! session (open or ended) of another principal is answered exactly as an id
//! that never existed: `session_not_found`, so ids cannot be probed.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sightline_api::{Api, TabId, TargetId, ToolCode};
use sightline_browser::{Browser, BrowserOptions, TabOptions};
use sightline_cdp::LaunchOptions;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::auth::Principal;
use crate::error::{EndReason, ServerError};
use crate::grid::{self, GridConfig, GridSession};
use crate::metrics::Metrics;

mod calls;
mod open;

mod ending;
use ending::{alive, endpoint_of, finish, Unclaimed};

/// Where sessions get their browsers.
#[derive(Debug, Clone)]
pub enum BrowserSource {
    /// One Chromium launched by the server; each session is a browser context in it.
    Launch(LaunchOptions),
    /// A running browser (`ws://`, `wss://` or `http://host:port`); each session is a context in it.
    Connect(String),
    /// Selenium Grid 4: each session is a browser of its own.
    Grid(GridConfig),
}

/// How the hub runs.
#[derive(Debug, Clone)]
pub struct HubConfig {
    pub source: BrowserSource,
    pub max_sessions: usize,
    pub idle_timeout: Duration,
    /// Requests one session may have in flight or waiting; more get `busy`.
    pub queue_limit: usize,
    /// Tab options (viewport, settle) for new sessions.
    pub tab: TabOptions,
    /// The egress policy every session's navigations are checked against (and,
    /// for a launched browser, the proxy its requests go through).
    pub egress: Option<std::sync::Arc<sightline_policy::Egress>>,
    /// Uploads from, downloads to (each session in a directory of its own).
    pub files: sightline_api::FileAccess,
    /// Session starts (browser context, tab, first page) under way at once;
    /// more wait their turn, first come first served. Starts are CPU-bound in
    /// the browser: run all at once, they share the CPU and all finish together
    /// at the end; admitted a few at a time, the first ones finish early.
    pub start_limit: usize,
    /// Browser contexts (each with its blank tab) kept open ahead of demand,
    /// so a session start only loads its page (see `hub/open.rs`); with a Grid,
    /// Grid browsers, each holding a slot.
    pub warm: usize,
    /// With `warm` 0: size the pool by demand (`serve --warm auto`, the default): as
    /// many contexts as the largest burst of session starts lately, kept this long
    /// after the last start, then closed; none on a server that has not started a
    /// session for that long. Over a Grid, warm browsers are held only while no
    /// request waits in the Grid's queue: one is given back for each that does.
    pub warm_auto: Option<Duration>,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            source: BrowserSource::Launch(LaunchOptions::default()),
            max_sessions: 32,
            idle_timeout: Duration::from_secs(300),
            queue_limit: 4,
            tab: TabOptions::default(),
            egress: None,
            files: sightline_api::FileAccess {
                downloads: Some(Default::default()),
                dir_per_session: true,
                ..Default::default()
            },
            start_limit: DEFAULT_START_LIMIT,
            warm: 0,
            warm_auto: None,
        }
    }
}

/// [`HubConfig::start_limit`] by default.
pub const DEFAULT_START_LIMIT: usize = 4;

/// How long `serve --warm auto` keeps its pool after the last session start ([`HubConfig::warm_auto`]).
pub const WARM_AUTO_KEEP: Duration = Duration::from_secs(600);

/// The most contexts a pool by demand holds.
pub const WARM_AUTO_MAX: usize = 32;

/// The longest a session start holds its turn ([`HubConfig::start_limit`]):
/// past it, the next start in line goes ahead while this one goes on.
pub const TURN: Duration = Duration::from_secs(2);

/// `POST /v1/sessions` options.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    pub url: Option<String>,
    pub viewport: Option<(u32, u32)>,
    /// Screenshots in State Objects (default true).
    pub screenshot: bool,
    /// Cookies and localStorage the session's context starts from (Playwright's storageState), parsed at the edge.
    pub storage_state: Option<Arc<sightline_browser::StorageState>>,
}

/// One Sightline session.
pub struct Session {
    pub id: String,
    /// The principal that created it; no other may reach it.
    pub owner: Principal,
    api: Api,
    /// (target_id, tab_id) the HTTP paths address by default.
    address: StdMutex<(TargetId, TabId)>,
    queue: Arc<Semaphore>,
    queue_limit: usize,
    last_used: StdMutex<Instant>,
    /// A handle whose connection dies with the session's browser.
    watch: Browser,
    grid: Option<GridSession>,
    ended: AtomicBool,
    /// Why it ended; requests in flight stop when `gone` fires and report this.
    reason: StdMutex<Option<EndReason>>,
    gone: CancellationToken,
    /// Consecutive liveness probes that went unanswered.
    strikes: AtomicU64,
    /// A Grid session's WebDriver probes ([`GRID_PROBE`]): when last asked, and
    /// how many answers in a row said the Grid no longer runs it.
    probed: StdMutex<Option<Instant>>,
    driver_misses: AtomicU64,
    /// Whether State Objects carry a screenshot (set at creation and by `state`).
    screenshot: AtomicBool,
    _slot: OwnedSemaphorePermit,
}

/// A request admitted to a session's queue.
pub struct Entered {
    pub session: Arc<Session>,
    _permit: OwnedSemaphorePermit,
}

impl std::ops::Deref for Entered {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        *self.session.last_used.lock().unwrap() = Instant::now();
    }
}

/// All sessions of one server.
pub struct Hub {
    cfg: HubConfig,
    sessions: StdMutex<HashMap<String, Arc<Session>>>,
    /// Ended ids, whose they were and why (the most recent 10,000).
    ended: StdMutex<Tombstones>,
    slots: Arc<Semaphore>,
    /// Admission of session starts ([`HubConfig::start_limit`]; tokio's semaphore is first come first served).
    starts: Semaphore,
    /// Contexts opened ahead of demand ([`HubConfig::warm`]).
    pool: open::Pool,
    /// Grid requests and give-backs under way; shutdown waits for them.
    grid_work: grid::Outstanding,
    shared: Mutex<Option<Browser>>,
    pub metrics: Metrics,
    closing: AtomicBool,
    counter: AtomicU64,
    salt: u64,
}

const TOMBSTONES: usize = 10_000;

/// What is remembered of an ended session: its owner and why it ended.
#[derive(Default)]
struct Tombstones {
    by_id: HashMap<String, (Principal, EndReason)>,
    /// Oldest first, so the map stays bounded.
    order: VecDeque<String>,
}

impl Hub {
    pub fn new(cfg: HubConfig) -> Arc<Hub> {
        let salt = std::collections::hash_map::RandomState::new().build_hasher().finish();
        Arc::new(Hub {
            slots: Arc::new(Semaphore::new(cfg.max_sessions)),
            starts: Semaphore::new(cfg.start_limit.max(1)),
            pool: open::Pool::default(),
            grid_work: grid::Outstanding::default(),
            cfg,
            sessions: StdMutex::default(),
            ended: StdMutex::default(),
            shared: Mutex::new(None),
            metrics: Metrics::default(),
            closing: AtomicBool::new(false),
            counter: AtomicU64::new(0),
            salt,
        })
    }

    pub fn config(&self) -> &HubConfig {
        &self.cfg
    }

    /// An unguessable session id.
    fn new_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut a = std::collections::hash_map::RandomState::new().build_hasher();
        a.write_u64(n ^ self.salt);
        let mut b = std::collections::hash_map::RandomState::new().build_hasher();
        b.write_u64(n.rotate_left(17) ^ self.salt);
        format!("s-{:016x}{:016x}", a.finish(), b.finish())
    }

    /// Ids of the open sessions of `owner`.
    pub fn ids(&self, owner: &Principal) -> Vec<String> {
        let mut v: Vec<String> =
            self.sessions.lock().unwrap().values().filter(|s| s.owner == *owner).map(|s| s.id.clone()).collect();
        v.sort();
        v
    }

    /// Ids of every open session, whoever owns it (for shutdown).
    fn all_ids(&self) -> Vec<String> {
        self.sessions.lock().unwrap().keys().cloned().collect()
    }

    pub fn open_count(&self) -> usize {
        self.sessions.lock().unwrap().len()
    }

    /// The shared browser's endpoint (launch/connect), (re)starting it when it is gone.
    async fn shared_browser(&self) -> Result<(String, Browser), ServerError> {
        let mut g = self.shared.lock().await;
        if let Some(b) = g.as_ref().filter(|b| !b.client().is_closed()) {
            return Ok((endpoint_of(&self.cfg.source, b)?, b.clone()));
        }
        let restarted = g.take().is_some();
        let opts = match &self.cfg.source {
            BrowserSource::Launch(l) => BrowserOptions { launch: l.clone(), connect: None },
            BrowserSource::Connect(url) => {
                BrowserOptions { launch: LaunchOptions::default(), connect: Some(url.clone()) }
            }
            BrowserSource::Grid(_) => unreachable!("grid sessions have their own browsers"),
        };
        // Launched from a runtime worker (they live as long as the process: PR_SET_PDEATHSIG follows the thread).
        let b = tokio::spawn(async move { Browser::start(&opts).await })
            .await
            .map_err(ServerError::LaunchTask)?
            .map_err(ServerError::Launch)?;
        if restarted {
            self.metrics.browser_restarts.fetch_add(1, Ordering::Relaxed);
        }
        *g = Some(b.clone());
        Ok((endpoint_of(&self.cfg.source, &b)?, b))
    }

    /// Start the shared browser and fill the warm pool now (so the first sessions do not pay for them).
    pub async fn warm_up(&self) -> Result<(), ServerError> {
        if !matches!(self.cfg.source, BrowserSource::Grid(_)) {
            self.shared_browser().await?;
        }
        self.fill_pool().await
    }

    /// Create a session owned by `owner`; with a URL, also load it and return its State Object.
    pub async fn create(
        self: &Arc<Self>,
        owner: &Principal,
        req: NewSession,
    ) -> Result<(Arc<Session>, Option<Value>), ServerError> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(ServerError::ShuttingDown);
        }
        let slot = self
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| ServerError::TooManySessions { max: self.cfg.max_sessions })?;
        let asked = Instant::now();
        self.note_start(asked);
        // Wait for a turn to start, held until the first page is loaded, or for
        // TURN at most (a page that is slow to load must not hold up the queue).
        let mut turn = Some(self.starts.acquire().await.map_err(|_| ServerError::ShuttingDown)?);
        let waited = asked.elapsed();
        if self.closing.load(Ordering::SeqCst) {
            return Err(ServerError::ShuttingDown);
        }
        let start = self.start(owner, req, slot, asked, waited);
        tokio::pin!(start);
        tokio::select! {
            r = &mut start => r,
            _ = tokio::time::sleep(TURN) => {
                turn.take();
                start.await
            }
        }
    }

    /// The rest of [`Hub::create`], under a start turn.
    async fn start(
        self: &Arc<Self>,
        owner: &Principal,
        req: NewSession,
        slot: OwnedSemaphorePermit,
        asked: Instant,
        waited: Duration,
    ) -> Result<(Arc<Session>, Option<Value>), ServerError> {
        let admitted = Instant::now();
        let opened = match self.take_warm(&req).await? {
            Some(w) => w,
            None => {
                // The Grid wait counts from the request's arrival, its wait for a start turn included.
                let by = self.grid_deadline(asked);
                self.open(self.new_id(), req.viewport, req.storage_state, req.screenshot, by, false).await?
            }
        };
        let opened_at = Instant::now();
        let open::Opened { id, api, target, tab: tab_id, watch, claim } = opened;
        let session = Arc::new(Session {
            id: id.clone(),
            owner: owner.clone(),
            api,
            address: StdMutex::new((target, tab_id)),
            queue: Arc::new(Semaphore::new(self.cfg.queue_limit)),
            queue_limit: self.cfg.queue_limit,
            last_used: StdMutex::new(Instant::now()),
            watch,
            grid: claim.map(grid::Claim::take),
            ended: AtomicBool::new(false),
            reason: StdMutex::new(None),
            gone: CancellationToken::new(),
            strikes: AtomicU64::new(0),
            probed: StdMutex::new(None),
            driver_misses: AtomicU64::new(0),
            screenshot: AtomicBool::new(req.screenshot),
            _slot: slot,
        });
        self.sessions.lock().unwrap().insert(id.clone(), session.clone());
        // Until the caller has the id, dropping this future (the client hung up) ends the session.
        let mut unclaimed = Unclaimed { hub: self.clone(), id: Some(id.clone()) };
        self.metrics.sessions_created.fetch_add(1, Ordering::Relaxed);
        self.metrics.sessions_open.fetch_add(1, Ordering::Relaxed);
        if self.closing.load(Ordering::SeqCst) {
            // Shutdown began while this browser was starting: it must not outlive the server.
            self.end_any(&id, EndReason::Shutdown).await;
            return Err(ServerError::ShuttingDown);
        }
        let state = match req.url {
            Some(url) => {
                let first = match self.enter(owner, &id) {
                    Ok(entered) => entered.act(&self.metrics, json!({ "action": "navigate", "url": url })).await,
                    Err(e) => Err(e),
                };
                match first {
                    Ok(state) => Some(state),
                    Err(e) => {
                        // The caller never learns the id: do not leave the session behind.
                        self.end_any(&id, EndReason::Deleted).await;
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        unclaimed.id = None;
        tracing::debug!(
            session = %id,
            waited_ms = waited.as_millis() as u64,
            open_ms = opened_at.duration_since(admitted).as_millis() as u64,
            load_ms = opened_at.elapsed().as_millis() as u64,
            warm_left = self.pool.len(),
            "session started"
        );
        Ok((session, state))
    }

    /// Admit one request of `caller` to a session's queue. Another
    /// principal's session, open or ended, is `session_not_found`.
    pub fn enter(&self, caller: &Principal, id: &str) -> Result<Entered, ServerError> {
        let s = self.sessions.lock().unwrap().get(id).filter(|s| s.owner == *caller).cloned();
        let Some(s) = s else {
            return Err(match self.ended.lock().unwrap().by_id.get(id) {
                Some((owner, _)) if owner != caller => ServerError::SessionNotFound { id: id.to_string() },
                Some((_, EndReason::BrowserCrashed)) => ServerError::BrowserCrashed { id: id.to_string() },
                Some((_, r)) => ServerError::SessionEnded { id: id.to_string(), reason: *r },
                None => ServerError::SessionNotFound { id: id.to_string() },
            });
        };
        if s.watch.client().is_closed() {
            let hub_id = s.id.clone();
            self.forget(&hub_id, EndReason::BrowserCrashed);
            tokio::spawn(finish(s));
            return Err(ServerError::BrowserCrashed { id: hub_id });
        }
        match s.queue.clone().try_acquire_owned() {
            Ok(permit) => {
                *s.last_used.lock().unwrap() = Instant::now();
                Ok(Entered { session: s, _permit: permit })
            }
            Err(_) => {
                self.metrics.busy_rejections.fetch_add(1, Ordering::Relaxed);
                Err(ServerError::Busy { id: id.to_string(), limit: s.queue_limit })
            }
        }
    }

    /// A crash (the tool error's code, set from the browser error's variant)
    /// ends the session, and the caller is told so. A Grid browser can also
    /// vanish behind a websocket proxy that stays open, where no error
    /// variant can tell: there a browser error asks the browser once.
    pub async fn classify(&self, s: &Session, e: ServerError) -> ServerError {
        let crashed = match e.tool_code() {
            ToolCode::BrowserCrashed => true,
            ToolCode::BrowserError => s.grid.is_some() && !alive(&s.watch).await,
            _ => false,
        };
        if !crashed {
            return e;
        }
        if let Some(s) = self.forget(&s.id, EndReason::BrowserCrashed) {
            tokio::spawn(finish(s));
        }
        ServerError::BrowserCrashed { id: s.id.clone() }
    }

    /// Remove a session from the table and remember why.
    fn forget(&self, id: &str, reason: EndReason) -> Option<Arc<Session>> {
        let s = self.sessions.lock().unwrap().remove(id)?;
        s.ended.store(true, Ordering::SeqCst);
        *s.reason.lock().unwrap() = Some(reason);
        s.gone.cancel();
        let mut t = self.ended.lock().unwrap();
        t.by_id.insert(id.to_string(), (s.owner.clone(), reason));
        t.order.push_back(id.to_string());
        while t.order.len() > TOMBSTONES {
            if let Some(old) = t.order.pop_front() {
                t.by_id.remove(&old);
            }
        }
        self.metrics.sessions_open.fetch_sub(1, Ordering::Relaxed);
        self.metrics.ended(reason.as_str());
        // Room for a warm context again (the pool and the sessions stay within max_sessions).
        self.pool.kick.notify_one();
        Some(s)
    }

    /// End a session of `caller`: close its context (or give its Grid browser
    /// back). Another principal's session is `session_not_found` and stays open.
    pub async fn end(&self, caller: &Principal, id: &str, reason: EndReason) -> Result<(), ServerError> {
        let owned = self.sessions.lock().unwrap().get(id).is_some_and(|s| s.owner == *caller);
        if !owned {
            return self.enter(caller, id).map(|_| ());
        }
        self.end_any(id, reason).await;
        Ok(())
    }

    /// End a session whoever owns it (housekeeping, shutdown).
    async fn end_any(&self, id: &str, reason: EndReason) {
        if let Some(s) = self.forget(id, reason) {
            finish(s).await;
        }
    }

    /// One pass of housekeeping: end idle sessions and sessions whose browser is gone.
    pub async fn sweep(&self) {
        let now = Instant::now();
        let mut doomed = Vec::new();
        // A Grid browser can vanish behind a websocket proxy that stays open: ask each one.
        let grid: Vec<Arc<Session>> =
            self.sessions.lock().unwrap().values().filter(|s| s.grid.is_some()).cloned().collect();
        let answers = futures_util::future::join_all(
            grid.iter().map(|s| async { alive(&s.watch).await && !s.driver_gone().await }),
        )
        .await;
        for (s, ok) in grid.iter().zip(answers) {
            // Two misses in a row: one slow answer on a loaded machine is not a crash.
            let strikes = if ok { 0 } else { s.strikes.load(Ordering::Relaxed) + 1 };
            s.strikes.store(strikes, Ordering::Relaxed);
            if strikes >= 2 {
                doomed.push((s.id.clone(), EndReason::BrowserCrashed));
            }
        }
        for s in self.sessions.lock().unwrap().values() {
            if s.watch.client().is_closed() {
                doomed.push((s.id.clone(), EndReason::BrowserCrashed));
            } else if s.queue.available_permits() == s.queue_limit
                && now.duration_since(*s.last_used.lock().unwrap()) >= self.cfg.idle_timeout
            {
                doomed.push((s.id.clone(), EndReason::IdleTimeout));
            }
        }
        for (id, reason) in doomed {
            if let Some(s) = self.forget(&id, reason) {
                if reason == EndReason::BrowserCrashed {
                    tracing::warn!(session = %id, "session ended: its browser crashed or disconnected");
                } else {
                    tracing::info!(session = %id, ?reason, "session ended");
                }
                tokio::spawn(finish(s));
            }
        }
        self.drop_dead_warm().await;
        let held: Vec<GridSession> = self.sessions.lock().unwrap().values().filter_map(|s| s.grid.clone()).collect();
        self.touch_grid(held).await;
        // A crashed shared browser is started again right away, so new sessions do not wait for it.
        if !matches!(self.cfg.source, BrowserSource::Grid(_)) && !self.closing.load(Ordering::SeqCst) {
            let dead = self.shared.lock().await.as_ref().is_some_and(|b| b.client().is_closed());
            if dead {
                tracing::warn!("the browser is gone; starting a new one");
                if let Err(e) = self.shared_browser().await {
                    tracing::error!(error = %e, "restarting the browser failed");
                }
            }
        }
    }

    /// Run [`Hub::sweep`] every `period` until the hub closes.
    pub async fn housekeeping(self: Arc<Self>, period: Duration) {
        while !self.closing.load(Ordering::SeqCst) {
            tokio::time::sleep(period).await;
            self.sweep().await;
        }
    }

    /// Until when a session start asked for at `asked` waits for a Grid slot.
    fn grid_deadline(&self, asked: Instant) -> Instant {
        match &self.cfg.source {
            BrowserSource::Grid(g) => asked + g.wait,
            _ => asked,
        }
    }

    /// Stop creating sessions, end every session, close the shared browser.
    /// With a Grid, then wait for the new-session requests still queued there
    /// (the slots just freed serve them) and give back what they get: the
    /// Grid cannot take a queued request back, and would otherwise hand its
    /// browser to nobody once the server is gone.
    pub async fn shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let ids = self.all_ids();
        let ends = ids.iter().map(|id| self.end_any(id, EndReason::Shutdown));
        futures_util::future::join_all(ends).await;
        self.pool.kick.notify_one();
        self.drain_pool().await;
        if let BrowserSource::Grid(g) = &self.cfg.source {
            let left = self.grid_work.count();
            if left > 0 {
                tracing::info!(left, "waiting for Grid requests still under way, to give back the browsers they get");
            }
            // Each request ends within its own time limits; this bound only guards against a bug.
            let bound = g.timeout.max(g.wait) * 2 + grid::CREATE_GRACE + Duration::from_secs(60);
            if tokio::time::timeout(bound, self.grid_work.settled()).await.is_err() {
                tracing::warn!(left = self.grid_work.count(), "Grid requests still under way at shutdown");
            }
        }
        if let Some(b) = self.shared.lock().await.take() {
            b.shutdown().await;
        }
    }
}
