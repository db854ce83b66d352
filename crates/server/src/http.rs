//! The HTTP API: pinned paths over the hub, the bearer-token and header-size
//! guards, `/openapi.json`, `/healthz`, `/metrics`, and MCP at `/mcp`.
//!
//! The guard puts the caller's [`Principal`] in the request's extensions; each
//! handler passes it to the hub, which answers another principal's session as
//! an unknown one. At `/mcp`, each `Mcp-Session-Id` is bound to the principal
//! that opened it ([`McpOwners`]); a request of another principal on that id is
//! answered as for an id the server never issued.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Extension, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::{json, Value};
use sightline_api::ToolName;
use tokio_util::sync::CancellationToken;

use crate::auth::{Principal, Principals};
use crate::error::{EndReason, ServerError};
use crate::hub::{Hub, NewSession};
use crate::mcp::SightlineMcp;

/// Request bodies larger than this are refused (413).
pub const MAX_BODY: usize = 1 << 20;
/// Request heads (all header names and values) larger than this are refused (431).
pub const MAX_HEADERS: usize = 16 << 10;

/// The MCP Streamable HTTP session header.
const MCP_SESSION_ID: &str = "mcp-session-id";

/// What a request on another principal's MCP session is rewritten to: an id
/// rmcp never issues (its ids are UUIDs), so rmcp answers exactly as for any
/// unknown session.
const NEVER_ISSUED: &str = "not-a-session";

/// What the router needs besides the hub.
#[derive(Clone, Default)]
pub struct HttpConfig {
    /// Whose bearer tokens are accepted (`Authorization: Bearer …`); none = no
    /// check, every caller is the anonymous principal.
    pub principals: Principals,
    /// Accept any `Host` on `/mcp` (needed for a non-loopback bind; the token guards it then).
    pub any_host: bool,
    /// Cancelled when the server stops: MCP sessions and live frame streams end.
    pub mcp_shutdown: CancellationToken,
    /// Where the live views are (`http://host:port`), for the links `request_human` answers
    /// (an HTTP request's own `Host` takes precedence); none = MCP sessions get none.
    pub live_base: Option<String>,
}

#[derive(Clone)]
struct AppState {
    hub: Arc<Hub>,
    live_base: Option<String>,
}

impl AppState {
    /// Tell a session where its live view is: this request's `Host`, else the configured base.
    fn live_here(&self, s: &crate::hub::Session, headers: &HeaderMap) {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).filter(|h| !h.is_empty());
        match (host, &self.live_base) {
            (Some(h), _) => s.api().set_live_base(&format!("http://{h}")),
            (None, Some(b)) => s.api().set_live_base(b),
            (None, None) => {}
        }
    }
}

/// Which principal opened each MCP session.
#[derive(Clone)]
struct McpOwners {
    owners: Arc<StdMutex<HashMap<String, Principal>>>,
    sessions: Arc<LocalSessionManager>,
}

impl McpOwners {
    /// Bind a new MCP session to its principal; forget the sessions rmcp closed.
    async fn bind(&self, id: String, owner: Principal) {
        let live = self.sessions.sessions.read().await;
        let mut owners = self.owners.lock().unwrap();
        owners.retain(|id, _| live.contains_key(id.as_str()));
        owners.insert(id, owner);
    }

    fn owner(&self, id: &str) -> Option<Principal> {
        self.owners.lock().unwrap().get(id).cloned()
    }
}

/// The whole service as a router (tests call it without a socket).
pub fn app(hub: Arc<Hub>, cfg: HttpConfig) -> Router {
    let mut mcp_cfg = StreamableHttpServerConfig::default()
        .with_cancellation_token(cfg.mcp_shutdown.clone())
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(MAX_BODY);
    if cfg.any_host {
        mcp_cfg = mcp_cfg.disable_allowed_hosts();
    }
    let mcp_hub = hub.clone();
    let mcp_sessions = Arc::new(LocalSessionManager::default());
    let mcp_live = cfg.live_base.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(SightlineMcp::over_hub(mcp_hub.clone()).with_live_base(mcp_live.clone())),
        mcp_sessions.clone(),
        mcp_cfg,
    );
    let owners = McpOwners { owners: Arc::default(), sessions: mcp_sessions };
    let principals = cfg.principals.clone();
    let owner_cookies = crate::live::OwnerCookies::default();
    let live = crate::live::hub_routes(hub.clone(), cfg.mcp_shutdown.clone());
    Router::new()
        .route("/v1/sessions", post(create_session).get(list_sessions))
        .route("/v1/sessions/{id}", axum::routing::delete(delete_session))
        .route("/v1/sessions/{id}/act", post(act))
        .route("/v1/sessions/{id}/state", get(state))
        .route("/v1/sessions/{id}/tools/{tool}", post(tool))
        .route("/v1/sessions/{id}/script", get(script))
        .route("/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .merge(live)
        .merge(
            Router::new()
                .nest_service("/mcp", mcp)
                .layer(middleware::from_fn(move |req: Request, next: Next| mcp_front(owners.clone(), req, next))),
        )
        .fallback(|| async { ServerError::BadRequest("no such path; see /openapi.json".into()).into_response() })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            guard(principals.clone(), owner_cookies.clone(), req, next)
        }))
        .with_state(AppState { hub, live_base: cfg.live_base })
}

/// In front of rmcp at `/mcp`: an MCP session answers only the principal that
/// opened it (anyone else's request goes on as one on an id never issued, so
/// it gets rmcp's own unknown-session answer), and a session DELETE gets 204:
/// rmcp answers it with 202, and clients (the official Python one among them)
/// expect 200 or 204 for a terminated session.
async fn mcp_front(owners: McpOwners, mut req: Request, next: Next) -> Response {
    let caller = req.extensions().get::<Principal>().cloned().unwrap_or_else(Principal::anonymous);
    let delete = req.method() == axum::http::Method::DELETE;
    let session = req.headers().get(MCP_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_string);
    if let Some(id) = &session {
        if owners.owner(id).is_some_and(|owner| owner != caller) {
            req.headers_mut().insert(MCP_SESSION_ID, HeaderValue::from_static(NEVER_ISSUED));
        }
    }
    let mut r = next.run(req).await;
    if session.is_none() {
        // An initialize opened a session: it is the caller's, before the client learns its id.
        if let Some(id) = r.headers().get(MCP_SESSION_ID).and_then(|v| v.to_str().ok()) {
            owners.bind(id.to_string(), caller).await;
        }
    }
    if delete && r.status() == StatusCode::ACCEPTED {
        *r.status_mut() = StatusCode::NO_CONTENT;
    }
    r
}

/// Bounded heads, then the bearer token (compared in constant time with every
/// principal's). The caller's [`Principal`] goes into the request's extensions.
async fn guard(principals: Principals, cookies: crate::live::OwnerCookies, mut req: Request, next: Next) -> Response {
    let head: usize =
        req.headers().iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum::<usize>() + req.uri().to_string().len();
    if head > MAX_HEADERS {
        return ServerError::HeadersTooLarge { limit: MAX_HEADERS }.into_response();
    }
    // A live-view link carries its own credential, checked by the session it names.
    if crate::live::has_ticket(req.uri().path(), req.uri().query()) {
        return next.run(req).await;
    }
    // The owner's browser on a live page: its cookie, or `?token=` exchanged for one.
    match crate::live::browser_owner(&principals, &cookies, &req) {
        crate::live::BrowserOwner::NotMine => {}
        crate::live::BrowserOwner::Caller(caller) => {
            req.extensions_mut().insert(caller);
            return next.run(req).await;
        }
        crate::live::BrowserOwner::Answer(r) => return r,
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    let Some(caller) = principals.authenticate(given.as_bytes()) else {
        return ServerError::Unauthorized.into_response();
    };
    req.extensions_mut().insert(caller);
    next.run(req).await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    url: Option<String>,
    viewport: Option<String>,
    screenshot: Option<bool>,
    /// Playwright's storageState JSON the session starts from.
    storage_state: Option<Value>,
}

fn parse_viewport(s: &str) -> Result<(u32, u32), ServerError> {
    sightline_browser::parse_viewport(s).map_err(|e| ServerError::BadRequest(format!("viewport {e}")))
}

fn json_body<T: serde::de::DeserializeOwned + Default>(body: &Bytes) -> Result<T, ServerError> {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ServerError::BadRequest(format!("invalid JSON body: {e}")))
}

async fn create_session(
    State(st): State<AppState>,
    Extension(caller): Extension<Principal>,
    body: Bytes,
) -> Result<Response, ServerError> {
    let b: CreateBody = json_body(&body)?;
    if let Some(url) = &b.url {
        sightline_api::check_url(url).map_err(|e| ServerError::BadRequest(e.to_string()))?;
    }
    let viewport = b.viewport.as_deref().map(parse_viewport).transpose()?;
    let storage_state = b.storage_state.as_ref().map(sightline_api::parse_state).transpose()?.map(Arc::new);
    let new = NewSession { url: b.url, viewport, screenshot: b.screenshot.unwrap_or(true), storage_state };
    let (s, state) = st.hub.create(&caller, new).await?;
    let mut out = json!({ "session_id": s.id });
    if let Some(state) = state {
        out["state"] = state;
    }
    if let Some(g) = s.grid_session() {
        out["grid_session"] = json!(g);
    }
    Ok((StatusCode::CREATED, Json(out)).into_response())
}

async fn list_sessions(State(st): State<AppState>, Extension(caller): Extension<Principal>) -> Json<Value> {
    Json(json!({ "sessions": st.hub.ids(&caller) }))
}

async fn delete_session(
    State(st): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<StatusCode, ServerError> {
    st.hub.end(&caller, &id, EndReason::Deleted).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn act(
    State(st): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ServerError> {
    let s = st.hub.enter(&caller, &id)?;
    st.live_here(&s, &headers);
    // Like `env`: a body that is not JSON is echoed as a string in ACTION_VALIDATION_FAILED.
    let action = serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
    match s.act(&st.hub.metrics, action).await {
        Ok(v) => Ok(Json(v)),
        Err(e) => Err(st.hub.classify(&s, e).await),
    }
}

#[derive(Deserialize)]
struct StateQuery {
    screenshot: Option<bool>,
}

async fn state(
    State(st): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    Query(q): Query<StateQuery>,
) -> Result<Json<Value>, ServerError> {
    let s = st.hub.enter(&caller, &id)?;
    match s.state(&st.hub.metrics, q.screenshot).await {
        Ok(v) => Ok(Json(v)),
        Err(e) => Err(st.hub.classify(&s, e).await),
    }
}

async fn tool(
    State(st): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path((id, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ServerError> {
    let args: Value = json_body(&body)?;
    if name.parse::<ToolName>() == Ok(ToolName::EndSession) {
        st.hub.end(&caller, &id, EndReason::Deleted).await?;
        return Ok(Json(json!({ "status": "ok", "session": id })).into_response());
    }
    let s = st.hub.enter(&caller, &id)?;
    st.live_here(&s, &headers);
    let out = match s.tool(&st.hub.metrics, &name, args).await {
        Ok(out) => out,
        Err(e) => return Err(st.hub.classify(&s, e).await),
    };
    // As `rpc` returns it: the value, with an image as {mime_type, data}.
    let mut v = out.value;
    if let Some(png) = out.image {
        v["image"] = json!({ "mime_type": "image/png", "data": png });
    }
    Ok(Json(v).into_response())
}

/// What the session did, as a `run` script (JavaScript; `sightline script FILE --url URL` replays it).
async fn script(
    State(st): State<AppState>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ServerError> {
    let s = st.hub.enter(&caller, &id)?;
    let out = match s.tool(&st.hub.metrics, ToolName::GetScript.as_str(), json!({})).await {
        Ok(out) => out,
        Err(e) => return Err(st.hub.classify(&s, e).await),
    };
    let text = out.value["script"].as_str().unwrap_or_default().to_string();
    let mut h = HeaderMap::new();
    h.insert(header::CONTENT_TYPE, "text/javascript; charset=utf-8".parse().expect("static"));
    Ok((h, text).into_response())
}

async fn healthz(State(st): State<AppState>) -> Json<Value> {
    Json(json!({ "status": "ok", "sessions": st.hub.open_count(), "max_sessions": st.hub.config().max_sessions }))
}

async fn metrics(State(st): State<AppState>) -> Response {
    let mut h = HeaderMap::new();
    h.insert(header::CONTENT_TYPE, "text/plain; version=0.0.4".parse().expect("static"));
    st.hub.metrics.warm_ready.store(st.hub.warm_count() as u64, std::sync::atomic::Ordering::Relaxed);
    (h, st.hub.metrics.render()).into_response()
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewports() {
        assert_eq!(parse_viewport("800x600").unwrap(), (800, 600));
        assert!(parse_viewport("5x5").is_err());
        assert!(parse_viewport("800").is_err());
    }
}
