//! The live view: a person watches a session's page and, while the agent has
//! handed it over (`request_human`), clicks and types into it, then hands it
//! back.
//!
//! - `GET /live`: the caller's sessions (URL, title, state) for its bearer token.
//! - `GET /live/{session}`: one self-contained page ([`PAGE`]: inline script
//!   and style, no outside asset) that uses the endpoints below.
//! - `GET /live/{session}/status`, `GET /live/{session}/frames` (server-sent
//!   events, one base64 JPEG each, as Chromium paints: `Page.startScreencast`),
//!   `GET /live/{session}/frame` (one JPEG of the viewport: the page's fallback,
//!   polled every 500 ms), `POST /live/{session}/input` (`{"type": "click", "x", "y"}`,
//!   `wheel`, `text`, `key`, in viewport CSS pixels), `POST
//!   /live/{session}/hand_back` (`{"note"}`).
//!
//! Each takes `?ticket=…` (the link `request_human` answered: that session
//! only, until the hand-back, `cancel_human` or [`sightline_api::human::TICKET_TTL`];
//! checked by the session's own desk) or, without a ticket, the owner's bearer
//! token, or the owner's browser cookie that `GET /live?token=…` gives once for it
//! ([`OwnerCookies`]: a browser cannot send the header). `GET /live` asked for HTML
//! is the owner's list page ([`LIST_PAGE`]). A ticket for a session that does not exist is refused exactly as a
//! wrong one, so ids cannot be probed with made-up tickets.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use sightline_api::human::{Access, Holder, PersonInput};
use sightline_api::{Api, ToolCode, ToolError};

use axum::routing::{get, post};
use axum::Router;
use base64::Engine;
use tokio_util::sync::CancellationToken;

use crate::auth::Principal;
use crate::error::ServerError;
use crate::hub::{Hub, Session};

/// Whose sessions the live routes show: `serve`'s hub, or the one API of
/// `rpc`/`mcp` over stdio (`--live ADDR`: tickets only, there is no bearer token).
#[derive(Clone)]
pub(crate) enum Backend {
    Hub(Arc<Hub>),
    Api(Arc<Api>),
}

/// What the live routes hold: the sessions, and the server's stop (frame streams end with it,
/// so graceful shutdown does not wait on them).
#[derive(Clone)]
pub(crate) struct LiveState {
    pub backend: Backend,
    pub stop: CancellationToken,
}

/// The session a live request reached.
#[derive(Clone)]
pub(crate) enum Held {
    Hub(Arc<Session>),
    Api(Arc<Api>),
}

impl Held {
    fn api(&self) -> &Api {
        match self {
            Held::Hub(s) => s.api(),
            Held::Api(a) => a,
        }
    }

    /// A person is using the session: it is not idle.
    fn touch(&self) {
        if let Held::Hub(s) = self {
            s.touch();
        }
    }

    fn is_busy(&self) -> bool {
        matches!(self, Held::Hub(s) if s.is_busy())
    }
}

/// The live routes of `serve`, on its hub (the bearer guard and the listener are the caller's).
pub(crate) fn hub_routes<S: Clone + Send + Sync + 'static>(hub: Arc<Hub>, stop: CancellationToken) -> Router<S> {
    Router::new()
        .route("/live", get(list))
        .merge(session_routes())
        .with_state(LiveState { backend: Backend::Hub(hub), stop })
}

fn session_routes() -> Router<LiveState> {
    Router::new()
        .route("/live/{id}", get(page))
        .route("/live/{id}/status", get(status))
        .route("/live/{id}/frame", get(frame))
        .route("/live/{id}/frames", get(frames))
        .route("/live/{id}/input", post(input))
        .route("/live/{id}/hand_back", post(hand_back))
}

/// `--live ADDR` of `rpc` and `mcp` over stdio: the live views of `api`'s sessions on a
/// loopback listener of their own (tickets only). Sets where `request_human` links point; the
/// listener serves until the process ends. Answers the bound address.
pub async fn serve_live(api: Arc<Api>, listen: std::net::SocketAddr) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    api.set_live_base(&format!("http://{addr}"));
    let app = session_routes()
        .fallback(|| async {
            ServerError::BadRequest("no such path: the live views are at /live/{session}".into()).into_response()
        })
        .layer(axum::extract::DefaultBodyLimit::max(crate::http::MAX_BODY))
        .with_state(LiveState { backend: Backend::Api(api), stop: CancellationToken::new() });
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the live-view listener stopped");
        }
    });
    Ok(addr)
}

/// The live page, served as is (its script reads the session and ticket from its own URL).
pub const PAGE: &str = include_str!("live.html");

#[derive(Deserialize)]
pub(crate) struct TicketQuery {
    ticket: Option<String>,
}

/// Whether a request carries a live-view ticket (then the bearer-token guard lets it through to the ticket check).
pub(crate) fn has_ticket(path: &str, query: Option<&str>) -> bool {
    path.starts_with("/live/")
        && query.is_some_and(|q| q.split('&').any(|kv| kv.starts_with("ticket=") && kv.len() > "ticket=".len()))
}

/// The cookie an owner's browser holds after `GET /live?token=…` (see [`OwnerCookies`]).
pub(crate) const OWNER_COOKIE: &str = "sightline_live";

/// How long an owner's browser stays signed in to the live views.
const OWNER_COOKIE_TTL: Duration = Duration::from_secs(12 * 3600);

/// The owners' browsers signed in to the live views: a browser cannot add an
/// `Authorization` header to a page it opens, so `GET /live?token=T` (or
/// `/live/{id}?token=T`) exchanges the bearer token once for a random cookie
/// (`HttpOnly`, `SameSite=Strict`, `Path=/live`, 12 h) and redirects to the same
/// path without the token, so it leaves the address bar and the history. The
/// cookie names its principal here only (it is not the token), is accepted on
/// `/live` paths only, and never on a cross-site request with a body (`Origin`
/// must be this server's own, which `SameSite=Strict` already implies).
#[derive(Clone, Default)]
pub(crate) struct OwnerCookies {
    signed_in: Arc<std::sync::Mutex<std::collections::HashMap<String, (Principal, std::time::Instant)>>>,
}

impl OwnerCookies {
    /// A new cookie value for `who`: 32 bytes from the OS's random source, base64url.
    fn mint(&self, who: Principal) -> std::io::Result<String> {
        use std::io::Read;
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes))?;
        let value = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let now = std::time::Instant::now();
        let mut m = self.signed_in.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.retain(|_, (_, until)| *until > now);
        m.insert(value.clone(), (who, now + OWNER_COOKIE_TTL));
        Ok(value)
    }

    fn principal(&self, value: &str) -> Option<Principal> {
        let m = self.signed_in.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (who, until) = m.get(value)?;
        (*until > std::time::Instant::now()).then(|| who.clone())
    }
}

/// What the bearer guard does with a request to a live path from a browser.
pub(crate) enum BrowserOwner {
    /// Not a browser's owner request: the bearer token decides.
    NotMine,
    /// Signed in by its cookie: this principal.
    Caller(Principal),
    /// Answered here: the token exchanged for a cookie (a redirect), or refused.
    Answer(Response),
}

/// The owner's browser on a live path: `?token=` exchanged for the cookie, or the cookie.
pub(crate) fn browser_owner(
    principals: &crate::auth::Principals,
    cookies: &OwnerCookies,
    req: &axum::extract::Request,
) -> BrowserOwner {
    let path = req.uri().path();
    if path != "/live" && !path.starts_with("/live/") {
        return BrowserOwner::NotMine;
    }
    let query = req.uri().query().unwrap_or("");
    let token = query.split('&').find_map(|kv| kv.strip_prefix("token="));
    if let Some(token) = token {
        if req.method() != axum::http::Method::GET {
            return BrowserOwner::Answer(
                ServerError::BadRequest("?token= is taken by GET only (it signs a browser in)".into()).into_response(),
            );
        }
        let token = percent_decode(token);
        let Some(who) = principals.authenticate(token.as_bytes()).filter(|_| !token.is_empty()) else {
            return BrowserOwner::Answer(ServerError::Unauthorized.into_response());
        };
        let rest: Vec<&str> = query.split('&').filter(|kv| !kv.starts_with("token=") && !kv.is_empty()).collect();
        let to = if rest.is_empty() { path.to_string() } else { format!("{path}?{}", rest.join("&")) };
        let value = match cookies.mint(who) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(error = %e, "reading /dev/urandom for a live-view cookie");
                return BrowserOwner::Answer(StatusCode::INTERNAL_SERVER_ERROR.into_response());
            }
        };
        let cookie = format!(
            "{OWNER_COOKIE}={value}; Path=/live; HttpOnly; SameSite=Strict; Max-Age={}",
            OWNER_COOKIE_TTL.as_secs()
        );
        let mut r = StatusCode::SEE_OTHER.into_response();
        let h = r.headers_mut();
        if let (Ok(to), Ok(cookie)) = (HeaderValue::from_str(&to), HeaderValue::from_str(&cookie)) {
            h.insert(header::LOCATION, to);
            h.insert(header::SET_COOKIE, cookie);
        }
        return BrowserOwner::Answer(private(r));
    }
    if req.headers().contains_key(header::AUTHORIZATION) {
        return BrowserOwner::NotMine;
    }
    let value = req
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(OWNER_COOKIE).and_then(|c| c.strip_prefix('=')));
    let Some(who) = value.and_then(|v| cookies.principal(v)) else { return BrowserOwner::NotMine };
    if req.method() != axum::http::Method::GET && !same_origin(req) {
        return BrowserOwner::Answer(ServerError::Unauthorized.into_response());
    }
    BrowserOwner::Caller(who)
}

/// A request with a body came from a page of this server (`Origin` is this `Host`).
fn same_origin(req: &axum::extract::Request) -> bool {
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok());
    let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok());
    match (host, origin) {
        (Some(h), Some(o)) => o.strip_prefix("http://").or_else(|| o.strip_prefix("https://")) == Some(h),
        _ => false,
    }
}

/// `%XX` escapes of a query value (`+` is a space there, and no token has one).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The session a live request addresses, and how it proved itself.
fn admit<'a>(
    backend: &Backend,
    id: &str,
    ticket: &'a Option<String>,
    caller: Option<&Principal>,
) -> Result<(Held, Access<'a>), ServerError> {
    let found = match backend {
        Backend::Hub(hub) => hub.session_by_ticket_id(id).map(Held::Hub),
        Backend::Api(api) => api.desk(id).is_ok().then(|| Held::Api(api.clone())),
    };
    match (ticket, caller, found) {
        (Some(t), _, Some(s)) => Ok((s, Access::Ticket(t))),
        (Some(_), _, None) => Err(ServerError::Tool(ToolError::new(
            ToolCode::TicketRefused,
            "the live-view ticket is refused: no session of that id is handed over",
        ))),
        (None, Some(caller), Some(Held::Hub(s))) if s.owner == *caller => Ok((Held::Hub(s), Access::Owner)),
        (None, Some(_), _) => Err(ServerError::SessionNotFound { id: id.to_string() }),
        (None, None, _) => Err(ServerError::Unauthorized),
    }
}

/// Headers of every live answer: never cached, never a referrer (the ticket is in the URL).
fn private(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    r
}

fn state_word(s: &Held, holder: Holder) -> &'static str {
    match holder {
        Holder::HandedOver => "handed_over",
        Holder::HandedBack => "handed_back",
        Holder::Agent if s.is_busy() => "running",
        Holder::Agent => "idle",
    }
}

pub(crate) async fn page(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    Path(id): Path<String>,
    Query(q): Query<TicketQuery>,
) -> Result<Response, ServerError> {
    let (s, access) = admit(&st.backend, &id, &q.ticket, caller.as_deref())?;
    // The page is served only to whoever may read the session now.
    s.api().person_status(&id, access).await?;
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response();
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src blob: data:; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    Ok(private(r))
}

pub(crate) async fn status(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    Path(id): Path<String>,
    Query(q): Query<TicketQuery>,
) -> Result<Response, ServerError> {
    let (s, access) = admit(&st.backend, &id, &q.ticket, caller.as_deref())?;
    let st = s.api().person_status(&id, access).await?;
    if st.state == Holder::HandedOver {
        s.touch();
    }
    let mut v = serde_json::to_value(&st).map_err(|e| ServerError::Tool(ToolError::encoding(e)))?;
    v["state"] = json!(state_word(&s, st.state));
    Ok(private(Json(v).into_response()))
}

pub(crate) async fn frame(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    Path(id): Path<String>,
    Query(q): Query<TicketQuery>,
) -> Result<Response, ServerError> {
    let (s, access) = admit(&st.backend, &id, &q.ticket, caller.as_deref())?;
    let jpeg = s.api().person_frame(&id, access).await?;
    Ok(private(([(header::CONTENT_TYPE, "image/jpeg")], jpeg).into_response()))
}

/// `GET /live/{id}/frames`: server-sent events, one base64 JPEG each, as the page paints.
/// A stream opened with a ticket ends when the person hands back (or the agent takes the session back).
pub(crate) async fn frames(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    Path(id): Path<String>,
    Query(q): Query<TicketQuery>,
) -> Result<Response, ServerError> {
    let (s, access) = admit(&st.backend, &id, &q.ticket, caller.as_deref())?;
    let by_ticket = matches!(access, Access::Ticket(_));
    let (desk, mut cast) = s.api().person_screencast(&id, access).await?;
    // The screencast is pumped by its own task, so a frame is always acknowledged
    // whole (Chromium sends the next only then); it stops when the stream is gone.
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(2);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                f = cast.next() => match f {
                    Some(f) => if tx.send(f).await.is_err() { break },
                    None => break,
                },
                _ = tx.closed() => break,
            }
        }
    });
    let stop = st.stop.clone();
    let stream = futures_util::stream::unfold(rx, move |mut rx| {
        let (desk, s, stop) = (desk.clone(), s.clone(), stop.clone());
        async move {
            loop {
                tokio::select! {
                    f = rx.recv() => {
                        let f = f?;
                        if by_ticket {
                            s.touch();
                        }
                        let data = base64::engine::general_purpose::STANDARD.encode(f);
                        return Some((Ok::<_, Infallible>(Event::default().data(data)), rx));
                    }
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {
                        if by_ticket && desk.holder() != Holder::HandedOver {
                            return None;
                        }
                    }
                    _ = stop.cancelled() => return None,
                }
            }
        }
    });
    Ok(private(Sse::new(stream).keep_alive(KeepAlive::default()).into_response()))
}

pub(crate) async fn input(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    Path(id): Path<String>,
    Query(q): Query<TicketQuery>,
    body: Bytes,
) -> Result<Response, ServerError> {
    let (s, access) = admit(&st.backend, &id, &q.ticket, caller.as_deref())?;
    let input: PersonInput = serde_json::from_slice(&body).map_err(|e| {
        ServerError::BadRequest(format!("an input is {{\"type\": \"click\"|\"wheel\"|\"text\"|\"key\", …}}: {e}"))
    })?;
    s.touch();
    s.api().person_input(&id, access, input).await?;
    Ok(private(Json(json!({ "status": "ok" })).into_response()))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HandBack {
    note: Option<String>,
}

pub(crate) async fn hand_back(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    Path(id): Path<String>,
    Query(q): Query<TicketQuery>,
    body: Bytes,
) -> Result<Response, ServerError> {
    let (s, access) = admit(&st.backend, &id, &q.ticket, caller.as_deref())?;
    let b: HandBack = if body.iter().all(u8::is_ascii_whitespace) {
        HandBack::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| ServerError::BadRequest(format!("invalid JSON body: {e}")))?
    };
    if b.note.as_ref().is_some_and(|n| n.len() > 10_000) {
        return Err(ServerError::BadRequest("the note is longer than 10000 bytes".into()));
    }
    s.touch();
    s.api().hand_back(&id, access, b.note).await?;
    Ok(private(Json(json!({ "status": "ok" })).into_response()))
}

/// The owner's list of live sessions in a browser (`GET /live` asking for HTML): thumbnails and links.
pub const LIST_PAGE: &str = include_str!("live_list.html");

/// `GET /live`: the caller's sessions, each with its page and who holds it
/// (JSON; a browser that asks for HTML gets [`LIST_PAGE`], which reads the JSON).
pub(crate) async fn list(
    State(st): State<LiveState>,
    caller: Option<Extension<Principal>>,
    headers: HeaderMap,
) -> Result<Response, ServerError> {
    let caller = caller.ok_or(ServerError::Unauthorized)?;
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.split(',').next().is_some_and(|first| first.trim().starts_with("text/html")));
    if wants_html {
        let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], LIST_PAGE).into_response();
        r.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'",
            ),
        );
        return Ok(private(r));
    }
    let Backend::Hub(hub) = &st.backend else { return Err(ServerError::Unauthorized) };
    let mut out: Vec<Value> = Vec::new();
    for id in hub.ids(&caller) {
        let Some(s) = hub.session_by_ticket_id(&id).map(Held::Hub) else { continue };
        let st = s.api().person_status(&id, Access::Owner).await;
        let (url, title, holder, reason) = match st {
            Ok(st) => (st.url, st.title, st.state, st.reason),
            Err(_) => (None, None, Holder::Agent, None),
        };
        out.push(json!({
            "session_id": id,
            "url": url,
            "title": title,
            "state": state_word(&s, holder),
            "reason": reason,
            "live": format!("/live/{id}"),
        }));
    }
    let mut h = HeaderMap::new();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok((StatusCode::OK, h, Json(json!({ "sessions": out }))).into_response())
}
