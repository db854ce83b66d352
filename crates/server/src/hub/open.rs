//! Opening a session's browser side (a browser context and its tab on the
//! shared browser, or a browser from the Grid), and the warm pool: contexts
//! (or Grid browsers) opened ahead of demand ([`HubConfig::warm`]), so a start
//! is "take one, load the page".
//!
//! The pool is filled only while the hub is quiet: no session start waiting or
//! under way and no request in flight for [`QUIET`]; one context at a time,
//! under a start turn, so it never competes with a start or a live session's
//! actions for the CPU. It never holds more than `max_sessions` contexts
//! together with the open sessions. Only requests with the server's own
//! viewport and no storage state are served from it (those two are set before
//! the tab exists); a warm context has never loaded a page.
//!
//! Its size is [`HubConfig::warm`], or with [`HubConfig::warm_auto`] the largest
//! burst of session starts (asked for within [`BURST`] of each other) since the
//! hub was last without starts for the keep time, less the sessions open: after a
//! burst of 25 has ended, the next 25 find their contexts open; once no session
//! has started for the keep time, the pool is closed and the hub holds nothing
//! ahead of demand. Over a Grid, a pool by demand holds slots only while nobody
//! waits for one ([`GridShare`]): it gives a warm browser back for each request
//! in the Grid's queue, and takes one only from a free slot.
//!
//! With a Grid, each warm entry is a Grid browser holding a slot. The Grid
//! ends a session that has had no WebDriver command for its session timeout
//! (CDP traffic does not count): every [`GRID_TOUCH`] the hub sends each Grid
//! browser it holds, warm or in a session, one WebDriver read. A warm Grid
//! browser is asked whether it answers before it is handed out (its CDP proxy
//! can stay open after the browser is gone), and shutdown gives each back.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use sightline_api::{Api, ApiOptions, BindParams, GetStateParams, TabAddress, TabId, TargetId, ToolCode};
use sightline_browser::{Browser, BrowserOptions, StorageState};
use sightline_cdp::LaunchOptions;

use super::calls::address_of;
use super::{BrowserSource, Hub, NewSession};
use crate::error::ServerError;
use crate::grid;

/// How long the hub must have been without requests before the pool is refilled.
pub const QUIET: Duration = Duration::from_millis(300);

/// Session starts asked for within this of each other are one burst ([`HubConfig::warm_auto`]).
pub const BURST: Duration = Duration::from_secs(5);

/// How often an automatic pool looks whether its demand is gone.
const DEMAND_CHECK: Duration = Duration::from_secs(1);

/// How often each Grid browser the hub holds gets a WebDriver read, so the
/// Grid (default session timeout: 300 s) does not end it as inactive.
pub const GRID_TOUCH: Duration = Duration::from_secs(60);

/// A session's browser side, ready: its own [`Api`] with one driver session
/// bound (named by the session id) and its blank tab's first State Object taken.
pub(super) struct Opened {
    pub id: String,
    pub api: Api,
    pub target: TargetId,
    pub tab: TabId,
    /// A handle whose connection dies with the session's browser.
    pub watch: Browser,
    pub claim: Option<grid::Claim>,
}

/// Contexts opened ahead of demand, oldest first.
#[derive(Default)]
pub(super) struct Pool {
    ready: StdMutex<VecDeque<Opened>>,
    /// Woken when a warm context is taken or the hub may have become quiet.
    pub kick: tokio::sync::Notify,
    /// Recent session starts, for an automatic pool's size.
    demand: StdMutex<Demand>,
    /// When the Grid browsers were last touched ([`GRID_TOUCH`]).
    touched: StdMutex<Option<Instant>>,
}

impl Pool {
    pub fn len(&self) -> usize {
        self.ready.lock().unwrap().len()
    }
}

impl Hub {
    /// Open a session's browser side: a context and tab (viewport and storage
    /// state as asked), its first State Object taken (screenshot as asked).
    /// A shared browser found dead on the way (it crashed an instant before
    /// the hub noticed) is started again and the session opened on the new one.
    /// A Grid browser is waited for until `grid_by`; `warm`: for the pool.
    pub(super) async fn open(
        &self,
        id: String,
        viewport: Option<(u32, u32)>,
        storage_state: Option<Arc<StorageState>>,
        screenshot: bool,
        grid_by: Instant,
        warm: bool,
    ) -> Result<Opened, ServerError> {
        match self.open_once(id.clone(), viewport, storage_state.clone(), screenshot, grid_by, warm).await {
            Err(e) if self.shared_browser_died(&e).await => {
                tracing::warn!(error = %e, "the browser died while a session opened; opening it on a new one");
                self.open_once(id, viewport, storage_state, screenshot, grid_by, warm).await
            }
            r => r,
        }
    }

    /// Whether `e` came from a shared browser that is gone (its connection
    /// closes within a moment of the failure).
    async fn shared_browser_died(&self, e: &ServerError) -> bool {
        if matches!(self.cfg.source, BrowserSource::Grid(_))
            || !matches!(e.tool_code(), ToolCode::BrowserError | ToolCode::BrowserCrashed)
        {
            return false;
        }
        let until = Instant::now() + Duration::from_millis(500);
        loop {
            let dead = self.shared.lock().await.as_ref().is_some_and(|b| b.client().is_closed());
            if dead {
                return true;
            }
            if Instant::now() > until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn open_once(
        &self,
        id: String,
        viewport: Option<(u32, u32)>,
        storage_state: Option<Arc<StorageState>>,
        screenshot: bool,
        grid_by: Instant,
        warm: bool,
    ) -> Result<Opened, ServerError> {
        // A Grid browser stays in its claim (given back if this future is
        // dropped: the client hung up) until the session holds it.
        let (endpoint, watch, claim) = match &self.cfg.source {
            BrowserSource::Grid(g) => {
                let claim = grid::new_session(g, &self.grid_work, grid_by, warm).await?;
                let cdp = claim.session().cdp.clone();
                let watch =
                    Browser::start(&BrowserOptions { launch: LaunchOptions::default(), connect: Some(cdp.clone()) })
                        .await
                        .map_err(ServerError::Launch)?;
                (cdp, watch, Some(claim))
            }
            _ => {
                let (e, b) = self.shared_browser().await?;
                (e, b, None)
            }
        };
        let mut tab = self.cfg.tab.clone();
        if let Some(v) = viewport {
            tab.viewport = v;
        }
        let api = Api::new(ApiOptions {
            browser: BrowserOptions { launch: LaunchOptions::default(), connect: Some(endpoint) },
            tab,
            storage_state: None,
        });
        let api = match &self.cfg.egress {
            Some(e) => api.with_egress(e.clone()),
            None => api,
        };
        // A Grid browser's disk is not ours: no downloads there, nor uploads.
        let api = match claim {
            Some(_) => api,
            None => api.with_files(self.cfg.files.clone()),
        };
        let started = async {
            let bind = BindParams { session: id.clone(), reconnect: false, storage_state: None };
            let (target, tab_id) = address_of(&Box::pin(api.bind_with_state(bind, storage_state.as_deref())).await?)?;
            let first = GetStateParams {
                session: id.clone(),
                target_id: target.to_string(),
                tab_id: tab_id.to_string(),
                screenshot: Some(screenshot),
                mark_new: None,
            };
            api.get_state(first).await?;
            Ok::<_, ServerError>((target, tab_id))
        }
        .await;
        match started {
            Ok((target, tab)) => Ok(Opened { id, api, target, tab, watch, claim }),
            Err(e) => {
                api.shutdown().await;
                if let Some(c) = claim {
                    grid::delete_session(c.take()).await;
                }
                Err(e)
            }
        }
    }

    /// A warm context for `req`, if the pool has one that fits and is alive.
    pub(super) async fn take_warm(&self, req: &NewSession) -> Result<Option<Opened>, ServerError> {
        let fits = req.storage_state.is_none() && req.viewport.is_none_or(|v| v == self.cfg.tab.viewport);
        if !fits {
            return Ok(None);
        }
        loop {
            let Some(w) = self.pool.ready.lock().unwrap().pop_front() else { return Ok(None) };
            self.pool.kick.notify_one();
            // Its browser was restarted since (that context is gone), or a Grid
            // browser no longer answers behind a proxy that stayed open.
            if w.watch.client().is_closed() || (w.claim.is_some() && !super::alive(&w.watch).await) {
                discard(w).await;
                continue;
            }
            w.api.mark_egress_now(&w.id).await?;
            // Warm contexts took their first state without a screenshot.
            if req.screenshot {
                let at =
                    TabAddress { session: w.id.clone(), target_id: w.target.to_string(), tab_id: w.tab.to_string() };
                w.api.set_screenshot(at, true).await?;
            }
            return Ok(Some(w));
        }
    }

    /// Whether nothing is going on: no session start waiting or under way, no
    /// request in flight, none for [`QUIET`].
    fn quiet(&self) -> bool {
        if self.starts.available_permits() < self.cfg.start_limit.max(1) {
            return false;
        }
        let now = Instant::now();
        self.sessions.lock().unwrap().values().all(|s| {
            s.queue.available_permits() == s.queue_limit && now.duration_since(*s.last_used.lock().unwrap()) >= QUIET
        })
    }

    /// A session start was asked for at `at` (an automatic pool's demand).
    pub(super) fn note_start(&self, at: Instant) {
        if self.cfg.warm == 0 && self.cfg.warm_auto.is_some() {
            self.pool.demand.lock().unwrap().record(at);
            self.pool.kick.notify_one();
        }
    }

    /// How many warm contexts the pool should hold now.
    fn warm_target(&self) -> usize {
        if self.cfg.warm > 0 {
            return self.cfg.warm;
        }
        match self.cfg.warm_auto {
            // Contexts for the next burst as big as the largest, counting the sessions
            // open now: a pool by demand never holds more than the burst itself did.
            Some(keep) => {
                let peak = self.pool.demand.lock().unwrap().size(Instant::now(), keep).min(super::WARM_AUTO_MAX);
                peak.saturating_sub(self.open_count())
            }
            _ => 0,
        }
    }

    /// Keep the pool at its size ([`HubConfig::warm`](super::HubConfig::warm), or by
    /// demand) until the hub closes.
    pub async fn keep_warm(self: Arc<Self>) {
        if self.cfg.warm == 0 && self.cfg.warm_auto.is_none() {
            return;
        }
        let mut grid = GridShare::default();
        while !self.closing.load(Ordering::SeqCst) {
            let target = self.warm_target();
            let mut room = true;
            if let Some(url) = self.grid_by_demand() {
                let give_back;
                (give_back, room) = grid.share(url, target > 0 || self.pool.len() > 0).await;
                if self.closing.load(Ordering::SeqCst) {
                    break;
                }
                if give_back > 0 {
                    let given_back = self.shrink_pool(self.pool.len().saturating_sub(give_back)).await;
                    tracing::info!(given_back, "warm Grid browsers given back to requests in the Grid's queue");
                    grid.gave(given_back);
                }
            }
            self.shrink_pool(target).await;
            let wanted =
                room && self.pool.len() < target && self.open_count() + self.pool.len() < self.cfg.max_sessions;
            if !wanted {
                if self.cfg.warm > 0 {
                    self.pool.kick.notified().await;
                } else {
                    // Demand also ends with time: looked at again now and then.
                    let _ = tokio::time::timeout(DEMAND_CHECK, self.pool.kick.notified()).await;
                }
                continue;
            }
            if !self.quiet() {
                tokio::time::sleep(QUIET / 3).await;
                continue;
            }
            if let Err(e) = self.fill_one(false).await {
                tracing::warn!(error = %e, "opening a warm browser context failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            // The slot it took: the Grid's load is read afresh.
            grid.looked = None;
        }
    }

    /// The Grid's URL when the pool is by demand over a Grid: it holds slots
    /// only while nobody waits for one ([`GridShare`]).
    fn grid_by_demand(&self) -> Option<&str> {
        match &self.cfg.source {
            BrowserSource::Grid(g) if self.cfg.warm == 0 && self.cfg.warm_auto.is_some() => Some(&g.url),
            _ => None,
        }
    }

    /// Open one warm context under a start turn; without `wait`, none when starts hold every turn.
    async fn fill_one(&self, wait: bool) -> Result<(), ServerError> {
        let _turn = match wait {
            true => self.starts.acquire().await.map_err(|_| ServerError::ShuttingDown)?,
            false => match self.starts.try_acquire() {
                Ok(t) => t,
                Err(_) => return Ok(()),
            },
        };
        if self.closing.load(Ordering::SeqCst) {
            return Ok(());
        }
        // A Grid browser being opened now is counted: shutdown waits until
        // this filler has given it back (it sees the hub closing).
        let _counted = matches!(self.cfg.source, BrowserSource::Grid(_)).then(|| self.grid_work.enter());
        let w = self.open(self.new_id(), None, None, false, self.grid_deadline(Instant::now()), true).await?;
        if self.closing.load(Ordering::SeqCst) {
            discard(w).await;
            return Ok(());
        }
        self.pool.ready.lock().unwrap().push_back(w);
        Ok(())
    }

    /// Fill the pool now (before the server listens, so the first sessions
    /// find it full), as many at once as session starts may be.
    pub(super) async fn fill_pool(&self) -> Result<(), ServerError> {
        let need = self.cfg.warm.min(self.cfg.max_sessions).saturating_sub(self.pool.len());
        let filled = futures_util::future::join_all((0..need).map(|_| self.fill_one(true))).await;
        filled.into_iter().collect()
    }

    /// Close the warm contexts past `target`, oldest first; how many were closed.
    async fn shrink_pool(&self, target: usize) -> usize {
        let extra: Vec<Opened> = {
            let mut ready = self.pool.ready.lock().unwrap();
            let n = ready.len().saturating_sub(target);
            ready.drain(..n).collect()
        };
        let closed = extra.len();
        if closed > 0 {
            tracing::debug!(closed, target, "the warm pool shrank");
        }
        futures_util::future::join_all(extra.into_iter().map(discard)).await;
        closed
    }

    /// Forget the warm contexts whose browser is gone (it crashed, or its connection did).
    pub(super) async fn drop_dead_warm(&self) {
        let dead: VecDeque<Opened> = {
            let mut ready = self.pool.ready.lock().unwrap();
            let (dead, alive): (VecDeque<Opened>, VecDeque<Opened>) =
                ready.drain(..).partition(|w| w.watch.client().is_closed());
            *ready = alive;
            dead
        };
        if !dead.is_empty() {
            self.pool.kick.notify_one();
        }
        for w in dead {
            discard(w).await;
        }
    }

    /// Every [`GRID_TOUCH`], one WebDriver read for each Grid browser the hub
    /// holds (warm, or in `live` sessions), so the Grid keeps them.
    pub(super) async fn touch_grid(&self, live: Vec<grid::GridSession>) {
        if !matches!(self.cfg.source, BrowserSource::Grid(_)) {
            return;
        }
        {
            let mut touched = self.pool.touched.lock().unwrap();
            match *touched {
                Some(t) if t.elapsed() < GRID_TOUCH => return,
                _ => *touched = Some(Instant::now()),
            }
        }
        let warm: Vec<grid::GridSession> = self
            .pool
            .ready
            .lock()
            .unwrap()
            .iter()
            .filter_map(|w| w.claim.as_ref().map(|c| c.session().clone()))
            .collect();
        let touches = warm.into_iter().chain(live).map(grid::touch);
        futures_util::future::join_all(touches).await;
    }

    /// Close every warm context and give every warm Grid browser back (shutdown).
    pub(super) async fn drain_pool(&self) {
        let warm: Vec<Opened> = self.pool.ready.lock().unwrap().drain(..).collect();
        futures_util::future::join_all(warm.into_iter().map(discard)).await;
    }

    /// Warm contexts ready now.
    pub fn warm_count(&self) -> usize {
        self.pool.len()
    }
}

/// Close a warm context (10 s at most), and give its Grid browser back.
async fn discard(w: Opened) {
    let _ = tokio::time::timeout(Duration::from_secs(10), w.api.shutdown()).await;
    if let Some(c) = w.claim {
        grid::delete_session(c.take()).await;
    }
}

/// A pool by demand over a Grid shares it: a warm browser is given back for
/// each Chrome new-session request waiting in the Grid's queue that a free slot
/// or a browser given back lately does not already answer (anyone's: another
/// client's, or one of ours the pool cannot serve; not the pool's own), and one
/// is taken only from a free Chrome slot with nobody queued, never by queueing
/// for it. The Grid's load is read at most every [`GRID_LOOK`] ([`GRID_UNREAD`]
/// when it cannot be read: then nothing is taken). After a give-back nothing is
/// taken for [`GRID_YIELD_HOLD`] (the request served may still be starting its
/// browser, its slot not yet counted as held).
#[derive(Default)]
struct GridShare {
    looked: Option<(Instant, Option<grid::Load>)>,
    /// When each browser given back lately was.
    given: VecDeque<Instant>,
    /// Whether an unreadable Grid was reported.
    unread_said: bool,
}

/// How often a pool by demand over a Grid reads the Grid's load.
const GRID_LOOK: Duration = Duration::from_millis(500);

/// How long a Grid whose load cannot be read is left before it is asked again.
const GRID_UNREAD: Duration = Duration::from_secs(30);

/// How long a browser given back counts as answering a queued request, and the
/// pool takes none.
const GRID_YIELD_HOLD: Duration = Duration::from_secs(10);

impl GridShare {
    /// How many warm browsers to give back now, and whether the pool may take
    /// one; `wanted`: whether it holds or wants any.
    async fn share(&mut self, url: &str, wanted: bool) -> (usize, bool) {
        if !wanted {
            return (0, false);
        }
        let load = match self.looked {
            Some((at, Some(load))) if at.elapsed() < GRID_LOOK => Some(load),
            Some((at, None)) if at.elapsed() < GRID_UNREAD => None,
            _ => {
                let load = grid::load(url).await;
                self.looked = Some((Instant::now(), load));
                load
            }
        };
        while self.given.front().is_some_and(|t| t.elapsed() >= GRID_YIELD_HOLD) {
            self.given.pop_front();
        }
        let recent = self.given.len();
        match load {
            Some(l) => (l.queued.saturating_sub(l.free + recent), l.free > 0 && l.queued == 0 && recent == 0),
            None => {
                if !std::mem::replace(&mut self.unread_said, true) {
                    tracing::warn!(
                        url,
                        "the Grid's load cannot be read (GraphQL): the warm pool takes no Grid browser"
                    );
                }
                (0, false)
            }
        }
    }

    /// `n` browsers were given back now.
    fn gave(&mut self, n: usize) {
        self.given.extend(std::iter::repeat_n(Instant::now(), n));
    }
}

/// Session starts lately: the largest burst since the hub was last without
/// starts for the keep time.
#[derive(Default)]
struct Demand {
    /// Starts within [`BURST`] of the latest.
    recent: VecDeque<Instant>,
    peak: usize,
    last: Option<Instant>,
}

impl Demand {
    fn record(&mut self, now: Instant) {
        while self.recent.front().is_some_and(|t| now.saturating_duration_since(*t) > BURST) {
            self.recent.pop_front();
        }
        self.recent.push_back(now);
        self.peak = self.peak.max(self.recent.len());
        self.last = Some(now);
    }

    /// The pool's size at `now`: the peak, or 0 (and forgotten) once no start came for `keep`.
    fn size(&mut self, now: Instant, keep: Duration) -> usize {
        if self.last.is_none_or(|l| now.saturating_duration_since(l) >= keep) {
            *self = Demand::default();
        }
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demand_is_the_largest_burst_until_starts_stop_for_the_keep_time() {
        let keep = Duration::from_secs(600);
        let t0 = Instant::now();
        let mut d = Demand::default();
        assert_eq!(d.size(t0, keep), 0, "a hub that never started a session holds nothing");
        for i in 0..25 {
            d.record(t0 + Duration::from_millis(10 * i));
        }
        assert_eq!(d.size(t0 + Duration::from_secs(1), keep), 25);
        // Starts one at a time, far apart, are bursts of one: the peak stays.
        d.record(t0 + Duration::from_secs(60));
        d.record(t0 + Duration::from_secs(120));
        assert_eq!(d.size(t0 + Duration::from_secs(121), keep), 25);
        // Ten minutes without a start: nothing is kept, and the next burst sizes it anew.
        let later = t0 + Duration::from_secs(120) + keep;
        assert_eq!(d.size(later, keep), 0);
        d.record(later + Duration::from_secs(1));
        d.record(later + Duration::from_secs(2));
        assert_eq!(d.size(later + Duration::from_secs(3), keep), 2);
    }
}
