//! Transport: one websocket, calls correlated by id, events fanned out.
//!
//! The reader task owns the socket's read half. A call registers a oneshot in
//! `pending` under a fresh id, then sends; a guard removes the entry if the
//! caller's future is dropped first, so abandoned calls leak nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use crate::CdpError;

/// A flattened target session id (`Target.attachToTarget {flatten: true}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId(pub String);

/// One CDP event, with the session it came from (`None` for the browser).
#[derive(Debug, Clone)]
pub struct Event {
    pub session: Option<SessionId>,
    pub method: String,
    pub params: Arc<RawValue>,
}

impl Event {
    /// Decode the event's params.
    pub fn parse<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(self.params.get()).ok()
    }
}

type Reply = Result<Box<RawValue>, CdpError>;

struct Subscriber {
    session: Option<Option<SessionId>>,
    tx: mpsc::UnboundedSender<Event>,
}

struct Inner {
    out: mpsc::UnboundedSender<Message>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    subscribers: Mutex<Vec<Subscriber>>,
    next_id: AtomicU64,
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
        self.inner.pending.lock().unwrap().remove(&self.id);
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
            .map_err(|e| CdpError::Connect { endpoint: ws_url.to_string(), detail: e.to_string() })?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<Message>();
        let inner = Arc::new(Inner {
            out,
            pending: Mutex::new(HashMap::new()),
            subscribers: Mutex::new(Vec::new()),
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
                    Message::Text(t) => t.as_str(),
                    Message::Binary(b) => match std::str::from_utf8(b) {
                        Ok(t) => t,
                        Err(_) => continue,
                    },
                    Message::Close(_) => break,
                    _ => continue,
                };
                inner.dispatch(text);
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
                pending: Mutex::new(HashMap::new()),
                subscribers: Mutex::new(Vec::new()),
                next_id: AtomicU64::new(1),
                closed: AtomicBool::new(true),
                timeout: Duration::from_secs(60),
            }),
        }
    }

    /// Send a command and decode its result.
    pub async fn call<T: DeserializeOwned>(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: impl Serialize,
    ) -> Result<T, CdpError> {
        let raw = self.call_raw(session, method, params).await?;
        serde_json::from_str(raw.get())
            .map_err(|e| CdpError::Decode { method: method.to_string(), detail: e.to_string() })
    }

    /// Send a command and return its result as raw JSON (no `Value` tree is built).
    pub async fn call_raw(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: impl Serialize,
    ) -> Result<Box<RawValue>, CdpError> {
        self.call_raw_within(session, method, params, self.inner.timeout).await
    }

    /// [`Client::call_raw`] with its own time limit.
    pub async fn call_raw_within(
        &self,
        session: Option<&SessionId>,
        method: &str,
        params: impl Serialize,
        limit: Duration,
    ) -> Result<Box<RawValue>, CdpError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(CdpError::Disconnected);
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let text = serde_json::to_string(&Request { id, method, params, session_id: session.map(|s| s.0.as_str()) })
            .map_err(|e| CdpError::Decode { method: method.to_string(), detail: e.to_string() })?;
        let (tx, rx) = oneshot::channel();
        self.inner.pending.lock().unwrap().insert(id, tx);
        let _guard = PendingGuard { inner: &self.inner, id };
        if self.inner.out.send(Message::Text(text.into())).is_err() {
            return Err(CdpError::Disconnected);
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(reply)) => reply.map_err(|e| match e {
                CdpError::Protocol { code, message, .. } => {
                    CdpError::Protocol { method: method.to_string(), code, message }
                }
                other => other,
            }),
            Ok(Err(_)) => Err(CdpError::Disconnected),
            Err(_) => Err(CdpError::Timeout { method: method.to_string(), after: limit }),
        }
    }

    /// Receive events: from one session (`Some(Some(s))`), the browser (`Some(None)`),
    /// or every session (`None`). The receiver ends when the connection closes.
    pub fn subscribe(&self, session: Option<Option<SessionId>>) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        if !self.inner.closed.load(Ordering::Acquire) {
            self.inner.subscribers.lock().unwrap().push(Subscriber { session, tx });
        }
        rx
    }

    /// True once the socket is gone.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }
}

impl Inner {
    fn dispatch(&self, text: &str) {
        let Ok(msg) = serde_json::from_str::<Incoming>(text) else { return };
        if let Some(id) = msg.id {
            let Some(tx) = self.pending.lock().unwrap().remove(&id) else { return };
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
            let session = msg.session_id.map(SessionId);
            let params: Arc<RawValue> = match msg.params {
                Some(p) => Arc::from(p.to_owned()),
                None => Arc::from(RawValue::from_string("{}".into()).unwrap()),
            };
            let mut subs = self.subscribers.lock().unwrap();
            subs.retain(|s| {
                let wanted = match &s.session {
                    None => true,
                    Some(want) => want.as_ref() == session.as_ref(),
                };
                if !wanted {
                    return !s.tx.is_closed();
                }
                s.tx.send(Event { session: session.clone(), method: method.to_string(), params: params.clone() })
                    .is_ok()
            });
        }
    }

    fn shut_down(&self) {
        self.closed.store(true, Ordering::Release);
        for (_, tx) in self.pending.lock().unwrap().drain() {
            let _ = tx.send(Err(CdpError::Disconnected));
        }
        self.subscribers.lock().unwrap().clear();
    }
}
