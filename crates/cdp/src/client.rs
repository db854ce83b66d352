//! Transport: one websocket, calls correlated by id, events fanned out.
//!
//! The reader task owns the socket's read half. A call registers a oneshot in
//! `pending` under a fresh id, then sends; a guard removes the entry if the
//! caller's future is dropped first, so abandoned calls leak nothing.
//!
//! Under faults: the closed flag lives under the same lock as the pending
//! table, so a call either registers before the connection is marked closed
//! (and is failed by the shutdown that drains the table) or sees it closed;
//! none can wait for a reply that will never come. On disconnect every
//! pending call fails at once with `Disconnected`; when a target crashes or
//! is detached, the calls sent to its session fail at once with `SessionGone`. A reply that cannot be
//! decoded fails its call at once with `Decode` (its id is recovered from the
//! text) instead of leaving it to time out. Every message is read leniently
//! first: a lone UTF-16 surrogate a page put in a string becomes U+FFFD
//! (`lenient.rs`), so no page text can make a reply undecodable. Events are
//! routed by session to the subscribers that follow it (`route.rs`); each
//! queue is bounded ([`EVENT_QUEUE`] by default): past that, events are dropped,
//! counted ([`Client::dropped_events`]) and the subscriber is told with a
//! [`Routed::Gap`] in order, never buffered without limit.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use crate::protocol::inspector::{Detached, TargetCrashed};
use crate::protocol::target::DetachedFromTarget;
use crate::protocol::{Command, EventParams};
use crate::route::{EventFilter, Router, Subscription, EVENT_QUEUE};
use crate::{CdpError, SessionId};

/// One CDP event, with the session it came from (`None` for the browser).
#[derive(Debug, Clone)]
pub struct Event {
    pub session: Option<SessionId>,
    pub method: String,
    pub params: Arc<RawValue>,
}

impl Event {
    /// The event's params as `E`, when this is `E`'s event and they decode.
    pub fn decode<E: EventParams>(&self) -> Option<E> {
        if self.method != E::METHOD {
            return None;
        }
        serde_json::from_str(self.params.get()).ok()
    }

    /// True when this is `E`'s event.
    pub fn is<E: EventParams>(&self) -> bool {
        self.method == E::METHOD
    }
}

type Reply = Result<Box<RawValue>, CdpError>;

/// Calls waiting for replies, and whether the connection is closed: one lock.
#[derive(Default)]
struct Pending {
    /// Each waiting call, with the session it was sent to.
    calls: HashMap<u64, (Option<SessionId>, oneshot::Sender<Reply>)>,
    closed: bool,
}

struct Inner {
    out: mpsc::UnboundedSender<Message>,
    pending: Mutex<Pending>,
    router: Arc<Mutex<Router>>,
    next_id: AtomicU64,
    /// Mirrors `pending.closed` for lock-free reads.
    closed: AtomicBool,
    timeout: Duration,
}

/// A cheap, clonable handle to one browser connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Serialize)]
struct Request<'a, P> {
    id: u64,
    method: &'a str,
    params: P,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

#[derive(Deserialize)]
struct Incoming<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<ProtocolError>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct ProtocolError {
    code: i64,
    message: String,
    data: Option<String>,
}

/// Removes a pending entry when the awaiting future goes away.
struct PendingGuard<'a> {
    inner: &'a Inner,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.inner.pending.lock().unwrap().calls.remove(&self.id);
    }
}

impl Client {
    /// Open a websocket to a `ws://…/devtools/browser/…` endpoint.
    pub async fn connect(ws_url: &str) -> Result<Client, CdpError> {
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(512 << 20))
            .max_frame_size(Some(512 << 20));
        let (ws, _) = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), true)
            .await
            .map_err(|e| CdpError::Connect { endpoint: ws_url.to_string(), source: Box::new(e) })?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<Message>();
        let inner = Arc::new(Inner {
            out,
            pending: Mutex::new(Pending::default()),
            router: Arc::default(),
            next_id: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            timeout: Duration::from_secs(60),
        });
        tokio::spawn(async move {
            while let Some(msg) = out_rx.recv().await {
                if sink.send(msg).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        let weak = Arc::downgrade(&inner);
        tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Some(inner) = weak.upgrade() else { return };
                let text = match &msg {
                    Message::Text(t) => std::borrow::Cow::Borrowed(t.as_str()),
                    Message::Binary(b) => String::from_utf8_lossy(b),
                    Message::Close(_) => break,
                    _ => continue,
                };
                // A lone UTF-16 surrogate from the page would make the whole message undecodable.
                inner.dispatch(&crate::lenient::replace_lone_surrogates(&text));
            }
            if let Some(inner) = weak.upgrade() {
                inner.shut_down();
            }
        });
        Ok(Client { inner })
    }

    /// A client that is already closed (every call fails with `Disconnected`).
    pub(crate) fn detached() -> Client {
        let (out, _) = mpsc::unbounded_channel();
        Client {
            inner: Arc::new(Inner {
                out,
                pending: Mutex::new(Pending { calls: HashMap::new(), closed: true }),
                router: Arc::new(Mutex::new(Router::closed())),
                next_id: AtomicU64::new(1),
                closed: AtomicBool::new(true),
                timeout: Duration::from_secs(60),
            }),
        }
    }

    /// Send a typed command (to a page or frame session, or to the browser with
    /// `None`) and decode its reply. A reply that does not decode fails with
    /// [`CdpError::Decode`].
    pub async fn execute<C: Command>(&self, session: Option<&SessionId>, cmd: &C) -> Result<C::Response, CdpError> {
        self.execute_within(session, cmd, self.inner.timeout).await
    }

    /// [`Client::execute`] with its own time limit.
    pub async fn execute_within<C: Command>(
        &self,
        session: Option<&SessionId>,
        cmd: &C,
        limit: Duration,
    ) -> Result<C::Response, CdpError> {
        let raw = self.call_raw_within(session, C::METHOD, cmd, limit).await?;
        C::decode(raw).map_err(|e| CdpError::Decode { method: C::METHOD.to_string(), source: e })
    }

    /// Send a command whose reply nobody waits for (releasing remote objects,
    /// turning a domain off). It leaves in call order with every other command
    /// on this connection, so a later command sees its effect; its reply, or
    /// error, is dropped when it comes.
    pub fn send_only<C: Command>(&self, session: Option<&SessionId>, cmd: &C) -> Result<(), CdpError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(CdpError::Disconnected);
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let text = serde_json::to_string(&Request {
            id,
            method: C::METHOD,
            params: cmd,
            session_id: session.map(SessionId::as_str),
        })
        .map_err(|e| CdpError::Decode { method: C::METHOD.to_string(), source: e })?;
        self.inner.out.send(Message::Text(text.into())).map_err(|_| CdpError::Disconnected)?;
        tracing::trace!(method = C::METHOD, "CDP send, reply not awaited");
        Ok(())
    }

    /// Send a command by name and return its result as raw JSON (the transport under
    /// [`Client::execute`]; kept to this crate so every call site is typed).
    #[cfg(test)]
    pub(crate) async fn call_raw(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: impl Serialize,
    ) -> Result<Box<RawValue>, CdpError> {
        self.call_raw_within(session, method, params, self.inner.timeout).await
    }

    /// [`Client::call_raw`] with its own time limit.
    pub(crate) async fn call_raw_within(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: impl Serialize,
        limit: Duration,
    ) -> Result<Box<RawValue>, CdpError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let sent = std::time::Instant::now();
        let text = serde_json::to_string(&Request { id, method, params, session_id: session.map(SessionId::as_str) })
            .map_err(|e| CdpError::Decode { method: method.to_string(), source: e })?;
        let (tx, rx) = oneshot::channel();
        {
            // Checked and registered under one lock: shut_down cannot slip in between.
            let mut pending = self.inner.pending.lock().unwrap();
            if pending.closed {
                return Err(CdpError::Disconnected);
            }
            pending.calls.insert(id, (session.cloned(), tx));
        }
        let _guard = PendingGuard { inner: &self.inner, id };
        if self.inner.out.send(Message::Text(text.into())).is_err() {
            return Err(CdpError::Disconnected);
        }
        let result = match tokio::time::timeout(limit, rx).await {
            Ok(Ok(reply)) => reply.map_err(|e| match e {
                CdpError::Protocol { code, message, .. } => {
                    CdpError::Protocol { method: method.to_string(), code, message }
                }
                CdpError::Decode { source, .. } => CdpError::Decode { method: method.to_string(), source },
                CdpError::SessionGone { reason, .. } => CdpError::SessionGone { method: method.to_string(), reason },
                other => other,
            }),
            Ok(Err(_)) => Err(CdpError::Disconnected),
            Err(_) => Err(CdpError::Timeout { method: method.to_string(), after: limit }),
        };
        match &result {
            Err(e) => tracing::debug!(method, session = session.map(|s| s.0.as_str()), error = %e, "CDP call failed"),
            Ok(reply) => tracing::trace!(method, bytes = reply.get().len(), took = ?sent.elapsed(), "CDP call"),
        }
        result
    }

    /// Receive events: from one session (`Some(Some(s))`), the browser (`Some(None)`),
    /// or every session (`None`). The older spelling of [`Client::subscribe_to`].
    pub fn subscribe(&self, session: Option<Option<SessionId>>) -> Subscription {
        self.subscribe_to(EventFilter::from(session))
    }

    /// Receive the events `filter` lets through, routed here by session. The
    /// subscription ends when the connection closes. At most [`EVENT_QUEUE`]
    /// events wait in it; past that they are missed and a [`Routed::Gap`] says so.
    pub fn subscribe_to(&self, filter: EventFilter) -> Subscription {
        self.subscribe_bounded(filter, EVENT_QUEUE)
    }

    /// [`Client::subscribe_to`] with its own queue bound (at least 1).
    pub fn subscribe_bounded(&self, filter: EventFilter, capacity: usize) -> Subscription {
        Subscription::new(&self.inner.router, filter, capacity)
    }

    /// Events dropped because a subscriber's queue was full (each subscriber was told).
    pub fn dropped_events(&self) -> u64 {
        self.inner.router.lock().unwrap().dropped
    }

    /// True once the socket is gone.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }
}

impl Inner {
    fn dispatch(&self, text: &str) {
        let msg = match serde_json::from_str::<Incoming>(text) {
            Ok(msg) => msg,
            Err(e) => {
                // A reply we cannot read still ends its call, now.
                if let Some((_, tx)) = reply_id(text).and_then(|id| self.pending.lock().unwrap().calls.remove(&id)) {
                    let _ = tx.send(Err(CdpError::Decode { method: String::new(), source: e }));
                }
                return;
            }
        };
        if let Some(id) = msg.id {
            let Some((_, tx)) = self.pending.lock().unwrap().calls.remove(&id) else { return };
            let reply = match (msg.result, msg.error) {
                (_, Some(e)) => Err(CdpError::Protocol {
                    method: String::new(),
                    code: e.code,
                    message: match e.data {
                        Some(d) => format!("{} ({d})", e.message),
                        None => e.message,
                    },
                }),
                (Some(r), None) => Ok(r.to_owned()),
                (None, None) => Ok(RawValue::from_string("{}".into()).unwrap()),
            };
            let _ = tx.send(reply);
        } else if let Some(method) = msg.method {
            // A crashed or detached target never answers: fail its calls now.
            let session = msg.session_id.map(SessionId);
            // A browser-level detach names the session that is gone: its subscribers hear of it too.
            let mut about = None;
            match (method, &session) {
                (TargetCrashed::METHOD, Some(s)) => self.fail_session(s, "crashed"),
                (Detached::METHOD, Some(s)) => self.fail_session(s, "was detached"),
                (DetachedFromTarget::METHOD, None) => {
                    if let Some(d) = msg.params.and_then(|p| serde_json::from_str::<DetachedFromTarget>(p.get()).ok()) {
                        self.fail_session(&d.session_id, "was detached");
                        about = Some(d.session_id);
                    }
                }
                _ => {}
            }
            let params: Arc<RawValue> = match msg.params {
                Some(p) => Arc::from(p.to_owned()),
                None => Arc::from(RawValue::from_string("{}".into()).unwrap()),
            };
            let event = Event { session, method: method.to_string(), params };
            self.router.lock().unwrap().route(event, about.as_ref());
        }
    }

    fn fail_session(&self, session: &SessionId, reason: &'static str) {
        let gone: Vec<oneshot::Sender<Reply>> = {
            let mut pending = self.pending.lock().unwrap();
            let ids: Vec<u64> =
                pending.calls.iter().filter(|(_, (s, _))| s.as_ref() == Some(session)).map(|(id, _)| *id).collect();
            ids.into_iter().filter_map(|id| pending.calls.remove(&id)).map(|(_, tx)| tx).collect()
        };
        for tx in gone {
            let _ = tx.send(Err(CdpError::SessionGone { method: String::new(), reason }));
        }
    }

    fn shut_down(&self) {
        let calls = {
            let mut pending = self.pending.lock().unwrap();
            pending.closed = true;
            self.closed.store(true, Ordering::Release);
            std::mem::take(&mut pending.calls)
        };
        for (_, (_, tx)) in calls {
            let _ = tx.send(Err(CdpError::Disconnected));
        }
        self.router.lock().unwrap().close();
    }
}

/// The `id` of a message that did not decode, read leniently: `{"id":N,…` as
/// Chromium writes replies, or any JSON object with a numeric `id`.
fn reply_id(text: &str) -> Option<u64> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        return v.get("id").and_then(serde_json::Value::as_u64);
    }
    let rest = text.trim_start().strip_prefix('{')?.trim_start().strip_prefix("\"id\"")?.trim_start();
    let digits: String = rest.strip_prefix(':')?.trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Routed;

    /// A scripted CDP peer: answers each request with `reply(id, method)` (None: no answer),
    /// and closes the socket when asked for `Test.close`.
    async fn peer(reply: fn(u64, &str) -> Option<String>, events: usize) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            for i in 0..events {
                let e = format!(r#"{{"method":"Test.event","params":{{"i":{i}}}}}"#);
                ws.send(Message::Text(e.into())).await.unwrap();
            }
            while let Some(Ok(Message::Text(t))) = ws.next().await {
                let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
                let (id, method) = (v["id"].as_u64().unwrap(), v["method"].as_str().unwrap().to_string());
                if method == "Test.close" {
                    return;
                }
                if let Some(r) = reply(id, &method) {
                    ws.send(Message::Text(r.into())).await.unwrap();
                }
            }
        });
        format!("ws://{addr}/")
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    #[test]
    fn an_undecodable_reply_fails_its_call_at_once() {
        rt().block_on(async {
            let ws = peer(
                |id, m| match m {
                    "Test.garbage" => Some(format!(r#"{{"id":{id},"result":{{"x": nope}}"#)),
                    "Test.wrongType" => Some(format!(r#"{{"id":{id},"result":{{"x":"a string"}}}}"#)),
                    _ => Some(format!(r#"{{"id":{id},"result":{{"x":1}}}}"#)),
                },
                0,
            )
            .await;
            let c = Client::connect(&ws).await.unwrap();
            let e = c.call_raw(None, "Test.garbage", serde_json::json!({})).await.unwrap_err();
            assert!(matches!(&e, CdpError::Decode { method, .. } if method == "Test.garbage"), "{e:?}");
            #[derive(Deserialize)]
            struct X {
                #[allow(dead_code)]
                x: u32,
            }
            #[derive(Serialize)]
            struct WrongType {}
            impl Command for WrongType {
                const METHOD: &'static str = "Test.wrongType";
                type Response = X;
            }
            #[derive(Serialize)]
            struct Fine {}
            impl Command for Fine {
                const METHOD: &'static str = "Test.fine";
                type Response = serde_json::Value;
            }
            let e = c.execute(None, &WrongType {}).await.err().unwrap();
            assert!(matches!(e, CdpError::Decode { .. }), "{e:?}");
            // No timing: a call not answered here could only end by its 60 s limit,
            // and that would be `Timeout`, not `Decode`.
            // The connection is still good.
            let ok: serde_json::Value = c.execute(None, &Fine {}).await.unwrap();
            assert_eq!(ok["x"], 1);
        });
    }

    #[test]
    fn a_disconnect_fails_every_pending_call_at_once() {
        rt().block_on(async {
            let ws = peer(|_, _| None, 0).await;
            let c = Client::connect(&ws).await.unwrap();
            let waiting: Vec<_> =
                (0..20).map(|_| c.call_raw(None, "Test.neverAnswered", serde_json::json!({}))).collect();
            let (results, _) = tokio::join!(futures_util::future::join_all(waiting), async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let _ = c.call_raw(None, "Test.close", serde_json::json!({})).await;
            });
            // `Disconnected`, not `Timeout`: they ended with the connection, not by their limit.
            assert!(results.iter().all(|r| matches!(r, Err(CdpError::Disconnected))), "{results:?}");
            assert!(c.is_closed());
            assert!(c.inner.pending.lock().unwrap().calls.is_empty());
            // After the close: refused at once, nothing registered.
            let e = c.call_raw(None, "Test.after", serde_json::json!({})).await.unwrap_err();
            assert!(matches!(e, CdpError::Disconnected));
            assert!(c.inner.pending.lock().unwrap().calls.is_empty());
        });
    }

    #[test]
    fn a_crashed_target_fails_its_calls_at_once_and_only_its_own() {
        rt().block_on(async {
            let ws = peer(
                |id, m| match m {
                    "Test.crashSoon" => {
                        Some(r#"{"method":"Inspector.targetCrashed","params":{},"sessionId":"S1"}"#.into())
                    }
                    "Test.other" => Some(format!(r#"{{"id":{id},"result":{{}}}}"#)),
                    _ => None,
                },
                0,
            )
            .await;
            let c = Client::connect(&ws).await.unwrap();
            let s1 = SessionId("S1".into());
            let s2 = SessionId("S2".into());
            let hung = c.call_raw(Some(&s1), "Test.hangs", serde_json::json!({}));
            let other = c.call_raw(Some(&s2), "Test.hangsToo", serde_json::json!({}));
            let (hung, _, other) = tokio::join!(
                hung,
                async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    // The peer answers this one with the crash event only.
                    let _ = tokio::time::timeout(
                        Duration::from_millis(500),
                        c.call_raw(None, "Test.crashSoon", serde_json::json!({})),
                    )
                    .await;
                },
                tokio::time::timeout(Duration::from_millis(500), other)
            );
            let e = hung.unwrap_err();
            assert!(
                matches!(&e, CdpError::SessionGone { method, reason: "crashed" } if method == "Test.hangs"),
                "{e:?}"
            );
            // `SessionGone`, not `Timeout`: it ended with the crash, not by its limit.
            assert!(other.is_err(), "a call on another session keeps waiting");
        });
    }

    #[test]
    fn event_queues_are_bounded() {
        rt().block_on(async {
            let extra = 50;
            let ws = peer(
                |id, m| match m {
                    // Answered with one more event only (the call itself is left unanswered).
                    "Test.more" => Some(r#"{"method":"Test.event","params":{"i":-1}}"#.into()),
                    _ => Some(format!(r#"{{"id":{id},"result":{{}}}}"#)),
                },
                EVENT_QUEUE + extra,
            )
            .await;
            let c = Client::connect(&ws).await.unwrap();
            let mut rx = c.subscribe(None);
            // A call answered after every event was sent: all events have been dispatched by then.
            let _ = c.call_raw(None, "Test.sync", serde_json::json!({})).await.unwrap();
            assert!(c.dropped_events() >= extra as u64 - 5, "dropped {}", c.dropped_events());
            let mut n = 0;
            while let Some(r) = rx.try_next() {
                assert!(matches!(r, Routed::Event(_)), "no room was made, so no gap yet");
                n += 1;
            }
            assert!(n <= EVENT_QUEUE, "{n}");
            assert_eq!(c.dropped_events() + n as u64, (EVENT_QUEUE + extra) as u64);
            // Room again: the next event comes after the gap that says how many were missed.
            let more = c.call_raw(None, "Test.more", serde_json::json!({}));
            tokio::pin!(more);
            tokio::select! {
                biased;
                _ = &mut more => unreachable!("Test.more is never answered"),
                r = c.call_raw(None, "Test.sync", serde_json::json!({})) => { r.unwrap(); }
            }
            let missed = c.dropped_events();
            assert!(matches!(rx.try_next(), Some(Routed::Gap { missed: m }) if m == missed));
            match rx.try_next() {
                Some(Routed::Event(e)) => assert_eq!(e.params.get(), r#"{"i":-1}"#),
                other => panic!("{other:?}"),
            }
            assert_eq!(rx.gaps(), 1);
        });
    }

    #[test]
    fn reply_ids_are_recovered_from_broken_text() {
        assert_eq!(reply_id(r#"{"id":42,"result":{"x": nope}"#), Some(42));
        assert_eq!(reply_id(r#"{ "id" : 7 , "result""#), Some(7));
        assert_eq!(reply_id(r#"{"method":"x"}"#), None);
        assert_eq!(reply_id("garbage"), None);
    }
}
