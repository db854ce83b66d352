//! Events routed by session to their subscribers, never silently lost.
//!
//! The [`Router`] keeps, per subscriber, a typed [`EventFilter`] (the browser's
//! own events, every event, or a growing set of sessions) and indexes the
//! subscribers by session, so an event reaches only those that asked for its
//! session; nobody filters the whole connection's traffic under a lock of its own.
//! A browser-level `Target.detachedFromTarget` also reaches the subscribers of
//! the session it names: that session is gone, and they are the ones to know.
//!
//! Each subscriber's queue is bounded. When it is full the event is not
//! buffered: the subscriber's miss count grows, and before its next event it
//! receives [`Routed::Gap`] with that count, in order. A subscriber that fell
//! behind is told so, and re-reads what the lost events would have told it.
//! The events in [`NEVER_DROPPED`] are the exception: they wait for an answer
//! or tell what no read can recover, so they are queued past the bound, in order.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::mpsc;

use crate::{Event, SessionId};

/// Events a subscriber may have queued before further ones are missed (see [`Routed::Gap`]).
pub const EVENT_QUEUE: usize = 8192;

/// Events queued even past a subscriber's bound: a paused request or an auth
/// challenge that nobody answers hangs its load, a dialog or file chooser holds
/// the page, and a target attached, detached or crashed cannot be read again
/// later. They are few per page (each waits for an answer or ends a target).
pub const NEVER_DROPPED: &[&str] = &[
    "Fetch.requestPaused",
    "Fetch.authRequired",
    "Page.javascriptDialogOpening",
    "Page.javascriptDialogClosed",
    "Page.fileChooserOpened",
    "Target.attachedToTarget",
    "Target.detachedFromTarget",
    "Target.targetCrashed",
    "Inspector.targetCrashed",
    "Inspector.detached",
];

/// Which events a subscriber receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventFilter {
    /// Every event on the connection, whatever its session.
    All,
    /// The browser's own events (no session).
    Browser,
    /// The events of these sessions (grown with [`Subscription::add_session`]), and
    /// the browser's `Target.detachedFromTarget` for one of them.
    Sessions(BTreeSet<SessionId>),
}

impl EventFilter {
    /// The events of one session.
    pub fn session(s: SessionId) -> EventFilter {
        EventFilter::Sessions(BTreeSet::from([s]))
    }

    /// Whether an event from `session` (`None`: the browser) passes, or a
    /// browser event that concerns the session `about`.
    pub fn wants(&self, session: Option<&SessionId>, about: Option<&SessionId>) -> bool {
        match self {
            EventFilter::All => true,
            EventFilter::Browser => session.is_none(),
            EventFilter::Sessions(set) => [session, about].into_iter().flatten().any(|s| set.contains(s)),
        }
    }
}

impl From<Option<Option<SessionId>>> for EventFilter {
    /// The older spelling: `None` every session, `Some(None)` the browser, `Some(Some(s))` one session.
    fn from(v: Option<Option<SessionId>>) -> EventFilter {
        match v {
            None => EventFilter::All,
            Some(None) => EventFilter::Browser,
            Some(Some(s)) => EventFilter::session(s),
        }
    }
}

/// What a subscription delivers, in the order it happened.
#[derive(Debug, Clone)]
pub enum Routed {
    Event(Event),
    /// `missed` events for this subscriber were dropped here because its queue
    /// was full: whatever they would have told is unknown now.
    Gap {
        missed: u64,
    },
}

struct Subscriber {
    filter: EventFilter,
    tx: mpsc::UnboundedSender<Routed>,
    /// What is queued and not yet received; ordinary events stop at `capacity`.
    queued: Arc<AtomicUsize>,
    capacity: usize,
    /// Events dropped since the last one delivered (reported as a gap first).
    missed: u64,
}

impl Subscriber {
    /// Queue one item, past the bound or not (the caller decided).
    fn send(&self, item: Routed) -> bool {
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.tx.send(item).is_ok()
    }

    fn full(&self) -> bool {
        self.queued.load(Ordering::Acquire) >= self.capacity
    }
}

/// The routing table: subscribers by id, and by the session they follow.
#[derive(Default)]
pub(crate) struct Router {
    next_id: u64,
    subs: HashMap<u64, Subscriber>,
    /// Subscribers of [`EventFilter::All`].
    all: BTreeSet<u64>,
    /// Subscribers of [`EventFilter::Browser`].
    browser: BTreeSet<u64>,
    by_session: HashMap<SessionId, BTreeSet<u64>>,
    /// Events dropped on full queues, over all subscribers.
    pub(crate) dropped: u64,
    pub(crate) closed: bool,
}

impl Router {
    /// A table for a connection that is already closed.
    pub(crate) fn closed() -> Router {
        Router { closed: true, ..Router::default() }
    }

    fn add(
        &mut self,
        filter: EventFilter,
        tx: mpsc::UnboundedSender<Routed>,
        queued: Arc<AtomicUsize>,
        capacity: usize,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        match &filter {
            EventFilter::All => {
                self.all.insert(id);
            }
            EventFilter::Browser => {
                self.browser.insert(id);
            }
            EventFilter::Sessions(set) => {
                for s in set {
                    self.by_session.entry(s.clone()).or_default().insert(id);
                }
            }
        }
        self.subs.insert(id, Subscriber { filter, tx, queued, capacity, missed: 0 });
        id
    }

    fn remove(&mut self, id: u64) {
        let Some(sub) = self.subs.remove(&id) else { return };
        self.all.remove(&id);
        self.browser.remove(&id);
        if let EventFilter::Sessions(set) = sub.filter {
            for s in set {
                self.unindex(&s, id);
            }
        }
    }

    fn unindex(&mut self, s: &SessionId, id: u64) {
        if let Some(ids) = self.by_session.get_mut(s) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_session.remove(s);
            }
        }
    }

    fn add_session(&mut self, id: u64, s: SessionId) {
        let Some(sub) = self.subs.get_mut(&id) else { return };
        if let EventFilter::Sessions(set) = &mut sub.filter {
            if set.insert(s.clone()) {
                self.by_session.entry(s).or_default().insert(id);
            }
        }
    }

    fn remove_session(&mut self, id: u64, s: &SessionId) {
        let Some(sub) = self.subs.get_mut(&id) else { return };
        if let EventFilter::Sessions(set) = &mut sub.filter {
            if set.remove(s) {
                self.unindex(s, id);
            }
        }
    }

    /// Deliver one event to the subscribers that want it. `about`: the session
    /// a browser-level event concerns (a detach), whose subscribers get it too.
    pub(crate) fn route(&mut self, event: Event, about: Option<&SessionId>) {
        let mut ids: BTreeSet<u64> = self.all.clone();
        match &event.session {
            None => ids.extend(&self.browser),
            Some(s) => ids.extend(self.by_session.get(s).into_iter().flatten()),
        }
        if let Some(s) = about.filter(|_| event.session.is_none()) {
            ids.extend(self.by_session.get(s).into_iter().flatten());
        }
        let mut gone = Vec::new();
        for id in ids {
            let Some(sub) = self.subs.get_mut(&id) else { continue };
            match deliver(sub, &event) {
                Delivery::Sent => {}
                Delivery::Missed => self.dropped += 1,
                Delivery::Closed => gone.push(id),
            }
        }
        for id in gone {
            self.remove(id);
        }
    }

    /// The connection closed: every subscription ends.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.subs.clear();
        self.all.clear();
        self.browser.clear();
        self.by_session.clear();
    }
}

enum Delivery {
    Sent,
    Missed,
    Closed,
}

/// A pending gap first (it needs a slot too), then the event. An event of
/// [`NEVER_DROPPED`] is queued with its gap whatever the bound.
fn deliver(sub: &mut Subscriber, event: &Event) -> Delivery {
    let must = NEVER_DROPPED.contains(&event.method.as_str());
    if sub.missed > 0 {
        if !must && sub.full() {
            sub.missed += 1;
            return Delivery::Missed;
        }
        if !sub.send(Routed::Gap { missed: sub.missed }) {
            return Delivery::Closed;
        }
        sub.missed = 0;
    }
    if !must && sub.full() {
        sub.missed += 1;
        return Delivery::Missed;
    }
    if sub.send(Routed::Event(event.clone())) {
        Delivery::Sent
    } else {
        Delivery::Closed
    }
}

/// One subscriber's end: its events in order, a [`Routed::Gap`] where it fell
/// behind. Dropping it unsubscribes. It ends when the connection closes.
pub struct Subscription {
    rx: mpsc::UnboundedReceiver<Routed>,
    queued: Arc<AtomicUsize>,
    id: u64,
    router: Weak<Mutex<Router>>,
    gaps: u64,
}

/// The older name of [`Subscription`].
pub type EventReceiver = Subscription;

impl Subscription {
    pub(crate) fn new(router: &Arc<Mutex<Router>>, filter: EventFilter, capacity: usize) -> Subscription {
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let mut r = router.lock().unwrap();
        // After the close nobody sends: the receiver ends at once.
        let id = if r.closed { u64::MAX } else { r.add(filter, tx, queued.clone(), capacity.max(1)) };
        Subscription { rx, queued, id, router: Arc::downgrade(router), gaps: 0 }
    }

    /// The next event or gap; `None` once the connection closed.
    pub async fn next(&mut self) -> Option<Routed> {
        let r = self.rx.recv().await;
        self.received(&r);
        r
    }

    fn received(&mut self, r: &Option<Routed>) {
        match r {
            Some(Routed::Gap { .. }) => self.gaps += 1,
            Some(Routed::Event(_)) => {}
            None => return,
        }
        self.queued.fetch_sub(1, Ordering::AcqRel);
    }

    /// The next event, for a caller whose state does not hang on every event:
    /// a gap is logged (and counted in [`Subscription::gaps`]) and skipped.
    pub async fn recv(&mut self) -> Option<Event> {
        loop {
            match self.next().await? {
                Routed::Event(e) => return Some(e),
                Routed::Gap { missed } => tracing::warn!(missed, "events missed: this subscriber fell behind"),
            }
        }
    }

    /// What is already queued, without waiting.
    pub fn try_next(&mut self) -> Option<Routed> {
        let r = self.rx.try_recv().ok();
        self.received(&r);
        r
    }

    /// Also receive the events of session `s` (a frame attached to a page).
    /// Only for an [`EventFilter::Sessions`] subscription.
    pub fn add_session(&self, s: SessionId) {
        if let Some(r) = self.router.upgrade() {
            r.lock().unwrap().add_session(self.id, s);
        }
    }

    /// Stop receiving the events of session `s` (the frame detached).
    pub fn remove_session(&self, s: &SessionId) {
        if let Some(r) = self.router.upgrade() {
            r.lock().unwrap().remove_session(self.id, s);
        }
    }

    /// A handle that can add and remove sessions while another task reads the events.
    pub fn sessions(&self) -> SessionsHandle {
        SessionsHandle { id: self.id, router: self.router.clone() }
    }

    /// What this subscription receives now (`None` once the connection closed).
    pub fn filter(&self) -> Option<EventFilter> {
        let router = self.router.upgrade()?;
        let r = router.lock().unwrap();
        r.subs.get(&self.id).map(|s| s.filter.clone())
    }

    /// Gaps received so far.
    pub fn gaps(&self) -> u64 {
        self.gaps
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(r) = self.router.upgrade() {
            r.lock().unwrap().remove(self.id);
        }
    }
}

/// Changes which sessions a [`Subscription`] follows, from anywhere.
#[derive(Clone)]
pub struct SessionsHandle {
    id: u64,
    router: Weak<Mutex<Router>>,
}

impl SessionsHandle {
    /// See [`Subscription::add_session`].
    pub fn add(&self, s: SessionId) {
        if let Some(r) = self.router.upgrade() {
            r.lock().unwrap().add_session(self.id, s);
        }
    }

    /// See [`Subscription::remove_session`].
    pub fn remove(&self, s: &SessionId) {
        if let Some(r) = self.router.upgrade() {
            r.lock().unwrap().remove_session(self.id, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn ev(session: Option<&str>, i: u32) -> Event {
        Event {
            session: session.map(SessionId::from),
            method: "Test.event".into(),
            params: Arc::from(RawValue::from_string(format!(r#"{{"i":{i}}}"#)).unwrap()),
        }
    }

    fn drain(s: &mut Subscription) -> Vec<String> {
        std::iter::from_fn(|| s.try_next())
            .map(|r| match r {
                Routed::Event(e) => format!("{}:{}", e.session.map(|s| s.0).unwrap_or_default(), &e.params.get()[5..]),
                Routed::Gap { missed } => format!("gap {missed}"),
            })
            .collect()
    }

    #[test]
    fn each_subscriber_gets_only_the_sessions_it_follows() {
        let router = Arc::new(Mutex::new(Router::default()));
        let mut all = Subscription::new(&router, EventFilter::All, 16);
        let mut browser = Subscription::new(&router, EventFilter::Browser, 16);
        let mut a = Subscription::new(&router, EventFilter::session("A".into()), 16);
        let mut b = Subscription::new(&router, EventFilter::session("B".into()), 16);
        let mut r = router.lock().unwrap();
        r.route(ev(Some("A"), 1), None);
        r.route(ev(None, 2), None);
        r.route(ev(Some("B"), 3), None);
        r.route(ev(Some("C"), 4), None);
        drop(r);
        assert_eq!(drain(&mut all), ["A:1}", ":2}", "B:3}", "C:4}"]);
        assert_eq!(drain(&mut browser), [":2}"]);
        assert_eq!(drain(&mut a), ["A:1}"]);
        assert_eq!(drain(&mut b), ["B:3}"]);
    }

    #[test]
    fn a_session_added_later_is_routed_and_a_removed_one_is_not() {
        let router = Arc::new(Mutex::new(Router::default()));
        let mut page = Subscription::new(&router, EventFilter::session("P".into()), 16);
        router.lock().unwrap().route(ev(Some("F"), 1), None);
        page.add_session("F".into());
        router.lock().unwrap().route(ev(Some("F"), 2), None);
        page.sessions().remove(&"F".into());
        router.lock().unwrap().route(ev(Some("F"), 3), None);
        router.lock().unwrap().route(ev(Some("P"), 4), None);
        assert_eq!(drain(&mut page), ["F:2}", "P:4}"]);
        assert_eq!(page.filter(), Some(EventFilter::session("P".into())));
    }

    #[test]
    fn a_browser_detach_reaches_the_subscribers_of_the_session_it_names() {
        let router = Arc::new(Mutex::new(Router::default()));
        let mut page = Subscription::new(&router, EventFilter::session("P".into()), 16);
        let mut other = Subscription::new(&router, EventFilter::session("Q".into()), 16);
        let mut browser = Subscription::new(&router, EventFilter::Browser, 16);
        router.lock().unwrap().route(ev(None, 1), Some(&"P".into()));
        assert_eq!(drain(&mut page), [":1}"]);
        assert_eq!(drain(&mut browser), [":1}"], "once, though it is both a browser event and about P");
        assert!(drain(&mut other).is_empty());
    }

    #[test]
    fn a_subscriber_that_falls_behind_is_told_in_order() {
        let router = Arc::new(Mutex::new(Router::default()));
        let mut slow = Subscription::new(&router, EventFilter::session("P".into()), 2);
        let mut fast = Subscription::new(&router, EventFilter::All, 64);
        for i in 0..5 {
            router.lock().unwrap().route(ev(Some("P"), i), None);
        }
        // Two fit; three are missed. The gap needs a slot: it comes once one is free.
        assert_eq!(drain(&mut slow), ["P:0}", "P:1}"]);
        router.lock().unwrap().route(ev(Some("P"), 5), None);
        router.lock().unwrap().route(ev(Some("P"), 6), None);
        assert_eq!(drain(&mut slow), ["gap 3", "P:5}"]);
        // 6 was missed behind 5 (the gap took a slot): told before 7.
        router.lock().unwrap().route(ev(Some("P"), 7), None);
        router.lock().unwrap().route(ev(Some("P"), 8), None);
        assert_eq!(drain(&mut slow), ["gap 1", "P:7}"]);
        assert_eq!(slow.gaps(), 2);
        assert_eq!(drain(&mut fast).len(), 9, "another subscriber's queue is its own");
        assert_eq!(router.lock().unwrap().dropped, 5);
    }

    #[test]
    fn an_event_that_waits_for_an_answer_is_queued_past_the_bound_in_order() {
        let router = Arc::new(Mutex::new(Router::default()));
        let mut slow = Subscription::new(&router, EventFilter::session("P".into()), 2);
        for i in 0..4 {
            router.lock().unwrap().route(ev(Some("P"), i), None);
        }
        let mut paused = ev(Some("P"), 9);
        paused.method = "Fetch.requestPaused".into();
        router.lock().unwrap().route(paused, None);
        router.lock().unwrap().route(ev(Some("P"), 10), None);
        // Two fit, two are missed, the paused request comes after its gap; 10 is missed again.
        assert_eq!(drain(&mut slow), ["P:0}", "P:1}", "gap 2", "P:9}"]);
        router.lock().unwrap().route(ev(Some("P"), 11), None);
        assert_eq!(drain(&mut slow), ["gap 1", "P:11}"], "the bound holds again once drained");
    }

    #[test]
    fn a_dropped_subscription_is_unrouted_and_the_close_ends_the_rest() {
        let router = Arc::new(Mutex::new(Router::default()));
        let a = Subscription::new(&router, EventFilter::session("A".into()), 4);
        let mut b = Subscription::new(&router, EventFilter::session("A".into()), 4);
        drop(a);
        assert_eq!(router.lock().unwrap().by_session[&SessionId::from("A")].len(), 1);
        router.lock().unwrap().close();
        assert!(router.lock().unwrap().by_session.is_empty());
        assert!(b.try_next().is_none());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert!(rt.block_on(b.next()).is_none(), "ended, not waiting");
        let mut late = Subscription::new(&router, EventFilter::All, 4);
        assert!(rt.block_on(late.next()).is_none(), "a subscription after the close ends at once");
    }
}
