//! A person in the loop: the hand-off desk of one session.
//!
//! `request_human` parks the session: a [`Desk`] moves from the agent to a
//! person, who holds a single-session ticket (32 random bytes, base64url)
//! that opens the live view. While parked, agent actions answer
//! `handed_over` and change nothing; reads still work. The person's input
//! reaches the parked tab through [`Api::person_input`]; "Hand back" (with an
//! optional note) ends the hand-off, the ticket stops working, and
//! `wait_for_human` collects the note, what the person visited, and a fresh
//! State Object. `cancel_human` takes the session back without the person.
//!
//! The desk lives in the API's registry beside the session (one per driver
//! session, keyed by its name), outside the session's lock: a gate check, a
//! live frame or a hand-back never waits for an action in flight.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde::{Deserialize, Serialize};
use sightline_browser::Tab;

use crate::error::{ErrorDetail, ToolCode, ToolError};
use crate::ids::{TabId, TargetId};
use crate::tools::Api;

/// How long a live-view ticket opens the page (unless revoked or used up first).
pub const TICKET_TTL: Duration = Duration::from_secs(30 * 60);
/// How many of the agent's recent actions the live view shows.
pub const RECENT_ACTIONS: usize = 20;
/// How many distinct pages a hand-off remembers.
pub const MAX_VISITS: usize = 100;

/// One page seen while the person had the tab.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Visit {
    pub url: String,
    pub title: String,
}

/// A form field the person typed into (its name, never what was typed: it may be a password or a code).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Touched {
    pub url: String,
    /// The field's `name`, else its `id`, `aria-label` or `placeholder`, else its tag.
    pub field: String,
}

/// One recent agent action, as the live view lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Recent {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The tool (`act` actions as `act:click_element`).
    pub tool: String,
    /// `ok`, or the error code.
    pub outcome: String,
}

/// Who holds a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Holder {
    /// The agent (nothing asked, or the hand-back was taken).
    Agent,
    /// A person: agent actions answer `handed_over`.
    HandedOver,
    /// The person handed back; `wait_for_human` has not collected it yet.
    HandedBack,
}

/// What a hand-back gives the agent.
#[derive(Debug, Clone)]
pub(crate) struct Returned {
    pub note: Option<String>,
    pub visited: Vec<Visit>,
    pub fields: Vec<Touched>,
    pub inputs: u64,
    pub held: Duration,
    pub target_id: TargetId,
    pub tab_id: TabId,
}

impl Returned {
    /// What `wait_for_human` tells the agent in a State Object's `human`.
    pub(crate) fn reply(&self) -> serde_json::Value {
        serde_json::json!({
            "note": self.note,
            "visited": self.visited,
            "fields": self.fields,
            "inputs": self.inputs,
            "held_s": (self.held.as_secs_f64() * 10.0).round() / 10.0,
        })
    }
}

struct Parked {
    ticket: String,
    reason: String,
    since: Instant,
    expires: Instant,
    tab: Arc<Tab>,
    target_id: TargetId,
    tab_id: TabId,
    visited: Vec<Visit>,
    fields: Vec<Touched>,
    inputs: u64,
}

#[derive(Default)]
enum Phase {
    #[default]
    Agent,
    Parked(Box<Parked>),
    Returned(Returned),
    Ended,
}

#[derive(Default)]
struct Inner {
    phase: Phase,
    recent: VecDeque<Recent>,
}

/// The hand-off state of one session.
#[derive(Default)]
pub struct Desk {
    inner: StdMutex<Inner>,
    changed: tokio::sync::Notify,
}

/// How the person side proves itself: the ticket, or the session owner's
/// credential already checked by the front end.
#[derive(Debug, Clone, Copy)]
pub enum Access<'a> {
    Ticket(&'a str),
    Owner,
}

/// One input of the person, at a viewport point in CSS pixels (the page scales its picture).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PersonInput {
    Click {
        x: f64,
        y: f64,
    },
    Wheel {
        x: f64,
        y: f64,
        dx: f64,
        dy: f64,
    },
    /// Text typed into whatever has focus.
    Text {
        text: String,
    },
    /// A named key or chord (`Enter`, `Backspace`, `Tab`, `Control+A`).
    Key {
        key: String,
    },
}

/// What the live page shows besides the picture.
#[derive(Debug, Clone, Serialize)]
pub struct LiveStatus {
    pub state: Holder,
    pub reason: Option<String>,
    pub url: Option<String>,
    pub title: Option<String>,
    /// The viewport in CSS pixels (the picture is scaled to it for input).
    pub viewport: (u32, u32),
    /// Seconds the ticket still opens the page (while handed over).
    pub expires_in_s: Option<u64>,
    pub visited: Vec<Visit>,
    pub recent: Vec<Recent>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// 32 bytes from the OS's random source, base64url without padding.
fn new_ticket() -> Result<String, ToolError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(|e| {
        ToolError::new(ToolCode::BrowserError, format!("reading /dev/urandom for a ticket: {e}")).with_source(e)
    })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Equal strings, compared in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn refused(why: &str) -> ToolError {
    ToolError::new(ToolCode::TicketRefused, format!("the live-view ticket is refused: {why}"))
}

impl Desk {
    /// Who holds the session now.
    pub fn holder(&self) -> Holder {
        match &self.inner.lock().unwrap().phase {
            Phase::Parked(_) => Holder::HandedOver,
            Phase::Returned(_) => Holder::HandedBack,
            Phase::Agent | Phase::Ended => Holder::Agent,
        }
    }

    /// `handed_over` while a person has the session.
    pub(crate) fn check_agent(&self) -> Result<(), ToolError> {
        match &self.inner.lock().unwrap().phase {
            Phase::Parked(p) => Err(ToolError::new(
                ToolCode::HandedOver,
                format!(
                    "the session is handed over to a person ({}); call wait_for_human, or cancel_human to take it back",
                    p.reason
                ),
            )
            .with_detail(ErrorDetail::HandedOver { reason: p.reason.clone(), since_s: p.since.elapsed().as_secs() })),
            _ => Ok(()),
        }
    }

    pub(crate) fn note_action(&self, tool: String, outcome: &str) {
        let mut g = self.inner.lock().unwrap();
        g.recent.push_back(Recent { at_ms: now_ms(), tool, outcome: outcome.to_string() });
        while g.recent.len() > RECENT_ACTIONS {
            g.recent.pop_front();
        }
    }

    /// Park with a fresh ticket (a previous one is revoked); the ticket.
    pub(crate) fn park(
        &self,
        reason: String,
        tab: Arc<Tab>,
        target_id: TargetId,
        tab_id: TabId,
    ) -> Result<String, ToolError> {
        let ticket = new_ticket()?;
        let mut g = self.inner.lock().unwrap();
        let (since, visited, fields, inputs) = match std::mem::take(&mut g.phase) {
            Phase::Parked(p) => (p.since, p.visited, p.fields, p.inputs),
            Phase::Ended => return Err(ToolError::new(ToolCode::SessionEnded, "the session ended")),
            _ => (Instant::now(), Vec::new(), Vec::new(), 0),
        };
        let now = Instant::now();
        g.phase = Phase::Parked(Box::new(Parked {
            ticket: ticket.clone(),
            reason,
            since,
            expires: now + TICKET_TTL,
            tab,
            target_id,
            tab_id,
            visited,
            fields,
            inputs,
        }));
        drop(g);
        self.changed.notify_waiters();
        Ok(ticket)
    }

    /// Take the session back; what it was.
    pub(crate) fn cancel(&self) -> Holder {
        let mut g = self.inner.lock().unwrap();
        let was = match std::mem::take(&mut g.phase) {
            Phase::Parked(_) => Holder::HandedOver,
            Phase::Returned(_) => Holder::HandedBack,
            Phase::Ended => {
                g.phase = Phase::Ended;
                Holder::Agent
            }
            Phase::Agent => Holder::Agent,
        };
        drop(g);
        self.changed.notify_waiters();
        was
    }

    /// The session ended: waiters wake, tickets stop working.
    pub(crate) fn end(&self) {
        self.inner.lock().unwrap().phase = Phase::Ended;
        self.changed.notify_waiters();
    }

    /// The hand-back, once the person gave it (within `timeout`).
    pub(crate) async fn wait(&self, timeout: Duration) -> Result<Returned, ToolError> {
        let until = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut g = self.inner.lock().unwrap();
                match std::mem::take(&mut g.phase) {
                    Phase::Returned(r) => return Ok(r),
                    Phase::Parked(p) => g.phase = Phase::Parked(p),
                    Phase::Agent => {
                        return Err(ToolError::new(
                            ToolCode::NotHandedOver,
                            "the session is not handed over: call request_human first (a hand-back is collected once)",
                        ))
                    }
                    Phase::Ended => {
                        g.phase = Phase::Ended;
                        return Err(ToolError::new(ToolCode::SessionEnded, "the session ended"));
                    }
                }
            }
            if tokio::time::timeout_at(until, changed).await.is_err() {
                return Err(ToolError::new(
                    ToolCode::HumanTimeout,
                    format!(
                        "no hand-back within {} s; the session stays handed over (wait again, or cancel_human)",
                        timeout.as_secs_f64()
                    ),
                )
                .with_detail(ErrorDetail::Waited { timeout_s: timeout.as_secs_f64() }));
            }
        }
    }

    /// The parked tab, if `access` may reach it: a ticket must be the current one and unexpired.
    fn admit(&self, access: Access<'_>) -> Result<Option<Arc<Tab>>, ToolError> {
        let g = self.inner.lock().unwrap();
        match (&g.phase, access) {
            (Phase::Parked(p), Access::Ticket(t)) => {
                if !same(&p.ticket, t) {
                    return Err(refused("it is not this session's current ticket"));
                }
                if Instant::now() >= p.expires {
                    return Err(refused("it expired; the agent can ask again (request_human)"));
                }
                Ok(Some(p.tab.clone()))
            }
            (_, Access::Ticket(_)) => Err(refused("the session is not handed over (handed back, or taken back)")),
            (Phase::Parked(p), Access::Owner) => Ok(Some(p.tab.clone())),
            (_, Access::Owner) => Ok(None),
        }
    }

    fn visit(&self, v: Visit) {
        let mut g = self.inner.lock().unwrap();
        if let Phase::Parked(p) = &mut g.phase {
            if p.visited.last() != Some(&v) && p.visited.len() < MAX_VISITS {
                p.visited.push(v);
            }
        }
    }

    fn touched(&self, t: Touched) {
        let mut g = self.inner.lock().unwrap();
        if let Phase::Parked(p) = &mut g.phase {
            if !p.fields.contains(&t) && p.fields.len() < MAX_VISITS {
                p.fields.push(t);
            }
        }
    }

    fn count_input(&self) {
        if let Phase::Parked(p) = &mut self.inner.lock().unwrap().phase {
            p.inputs += 1;
        }
    }

    fn hand_back(&self, access: Access<'_>, note: Option<String>) -> Result<(), ToolError> {
        self.admit(access)?;
        let mut g = self.inner.lock().unwrap();
        let Phase::Parked(p) = std::mem::take(&mut g.phase) else {
            return Err(refused("the session is not handed over"));
        };
        g.phase = Phase::Returned(Returned {
            note: note.filter(|n| !n.trim().is_empty()),
            visited: p.visited,
            fields: p.fields,
            inputs: p.inputs,
            held: p.since.elapsed(),
            target_id: p.target_id,
            tab_id: p.tab_id,
        });
        drop(g);
        self.changed.notify_waiters();
        Ok(())
    }

    fn status_parts(&self) -> (Holder, Option<String>, Option<u64>, Vec<Visit>, Vec<Recent>) {
        let g = self.inner.lock().unwrap();
        let recent = g.recent.iter().cloned().collect();
        match &g.phase {
            Phase::Parked(p) => (
                Holder::HandedOver,
                Some(p.reason.clone()),
                Some(p.expires.saturating_duration_since(Instant::now()).as_secs()),
                p.visited.clone(),
                recent,
            ),
            Phase::Returned(r) => (Holder::HandedBack, None, None, r.visited.clone(), recent),
            _ => (Holder::Agent, None, None, Vec::new(), recent),
        }
    }
}

/// The page's URL and title (null when it does not answer).
async fn where_is(tab: &Tab) -> Option<Visit> {
    let v = tab.evaluate("[location.href, document.title]").await.ok()?;
    Some(Visit { url: v[0].as_str()?.to_string(), title: v[1].as_str().unwrap_or_default().to_string() })
}

/// The person side of the hand-off (the live view's endpoints).
impl Api {
    /// Where live views are served (`http://host:port`); `request_human` answers `live_unavailable` until set.
    pub fn set_live_base(&self, base: &str) {
        let mut g = self.registry.live_base.lock().unwrap();
        if g.as_deref() != Some(base) {
            *g = Some(base.trim_end_matches('/').to_string());
        }
    }

    /// The desk of a session (`session_not_found` for one this API does not hold).
    pub fn desk(&self, session: &str) -> Result<Arc<Desk>, ToolError> {
        self.registry
            .desk_if(session)
            .ok_or_else(|| ToolError::new(ToolCode::SessionNotFound, format!("no driver session {session:?}")))
    }

    /// The first tab of a driver session: `sightline run --human` drives it with an
    /// [`crate::Env`] of its own while this session's desk and live view see the same tab.
    pub async fn session_tab(&self, session: &str) -> Result<Arc<Tab>, ToolError> {
        let s = self.registry.session(session).await?;
        let g = s.lock().await;
        g.tabs
            .first()
            .map(|t| t.tab.clone())
            .ok_or_else(|| ToolError::new(ToolCode::SessionNotFound, format!("driver session {session:?} has no tab")))
    }

    /// The tab a live view shows: the handed-over one, else (to the owner) the session's first tab.
    async fn live_tab(&self, session: &str, access: Access<'_>) -> Result<(Arc<Desk>, Option<Arc<Tab>>), ToolError> {
        let desk = self.desk(session)?;
        if let Some(tab) = desk.admit(access)? {
            return Ok((desk, Some(tab)));
        }
        let s = self.registry.session(session).await?;
        // An action in flight holds the session: the view then shows no picture this time.
        let tab = s.try_lock().ok().and_then(|g| g.tabs.first().map(|t| t.tab.clone()));
        Ok((desk, tab))
    }

    /// What the live page shows besides the picture; notes the page the person is on.
    pub async fn person_status(&self, session: &str, access: Access<'_>) -> Result<LiveStatus, ToolError> {
        let (desk, tab) = self.live_tab(session, access).await?;
        let here = match &tab {
            Some(t) => where_is(t).await,
            None => None,
        };
        if let Some(v) = &here {
            desk.visit(v.clone());
        }
        let (state, reason, expires_in_s, visited, recent) = desk.status_parts();
        Ok(LiveStatus {
            state,
            reason,
            url: here.as_ref().map(|v| v.url.clone()),
            title: here.map(|v| v.title),
            viewport: tab.as_ref().map_or(self.registry.opts.tab.viewport, |t| t.options().viewport),
            expires_in_s,
            visited,
            recent,
        })
    }

    /// The tab's viewport as a JPEG.
    pub async fn person_frame(&self, session: &str, access: Access<'_>) -> Result<Vec<u8>, ToolError> {
        let (_, tab) = self.live_tab(session, access).await?;
        let Some(tab) = tab else {
            return Err(ToolError::new(ToolCode::Busy, "the agent is acting on the page; ask again in a moment"));
        };
        Ok(tab.live_frame(60).await?)
    }

    /// The tab's frames as it paints (JPEG), for the live view's stream; the session's desk beside them.
    pub async fn person_screencast(
        &self,
        session: &str,
        access: Access<'_>,
    ) -> Result<(Arc<Desk>, sightline_browser::Screencast), ToolError> {
        let (desk, tab) = self.live_tab(session, access).await?;
        let Some(tab) = tab else {
            return Err(ToolError::new(ToolCode::Busy, "the agent is acting on the page; ask again in a moment"));
        };
        let viewport = tab.options().viewport;
        Ok((desk, tab.screencast(60, viewport).await?))
    }

    /// Forward one input of the person to the handed-over tab.
    pub async fn person_input(&self, session: &str, access: Access<'_>, input: PersonInput) -> Result<(), ToolError> {
        let desk = self.desk(session)?;
        let Some(tab) = desk.admit(access)? else {
            return Err(ToolError::new(
                ToolCode::NotHandedOver,
                "input is forwarded only while the session is handed over (request_human)",
            ));
        };
        let (w, h) = tab.options().viewport;
        let inside = |x: f64, y: f64| (0.0..w as f64).contains(&x) && (0.0..h as f64).contains(&y);
        let r = match &input {
            PersonInput::Click { x, y } | PersonInput::Wheel { x, y, .. } if !inside(*x, *y) => {
                return Err(ToolError::invalid(format!("({x}, {y}) is outside the {w}x{h} viewport")))
            }
            PersonInput::Click { x, y } => tab.person_click(*x, *y).await,
            PersonInput::Wheel { x, y, dx, dy } => tab.person_wheel(*x, *y, *dx, *dy).await,
            PersonInput::Text { text } => {
                // Which field the text goes to, read before it is typed (Enter may leave the page).
                // A fixed read: the focused field's name as [`Touched::field`] says (null when nothing editable has focus).
                let focused = tab.evaluate(
                    "(() => { const e = document.activeElement; if (!e || e === document.body) return null; \
                     const editable = e.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName); \
                     if (!editable) return null; return [location.href, e.getAttribute('name') || e.id || \
                     e.getAttribute('aria-label') || e.getAttribute('placeholder') || e.tagName.toLowerCase()]; })()",
                );
                if let Ok(v) = focused.await {
                    if let (Some(url), Some(field)) = (v[0].as_str(), v[1].as_str()) {
                        desk.touched(Touched { url: url.to_string(), field: field.to_string() });
                    }
                }
                tab.person_text(text).await
            }
            PersonInput::Key { key } => tab.person_key(key).await,
        };
        desk.count_input();
        if let Some(v) = where_is(&tab).await {
            desk.visit(v);
        }
        r.map_err(ToolError::from)
    }

    /// "Hand back": the person is done; the ticket stops working and `wait_for_human` wakes.
    pub async fn hand_back(&self, session: &str, access: Access<'_>, note: Option<String>) -> Result<(), ToolError> {
        let desk = self.desk(session)?;
        if let Some(tab) = desk.admit(access)? {
            if let Some(v) = where_is(&tab).await {
                desk.visit(v);
            }
        }
        desk.hand_back(access, note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_long_random_and_url_safe() {
        let (a, b) = (new_ticket().unwrap(), new_ticket().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'), "{a}");
        assert!(same(&a, &a.clone()) && !same(&a, &b) && !same(&a, "short"));
    }
}
