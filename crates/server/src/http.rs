//! The HTTP API: pinned paths over the hub, the bearer-token and header-size
//! guards, `/openapi.json`, `/healthz`, `/metrics`, and MCP at `/mcp`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::{EndReason, ServerError};
use crate::hub::{Hub, NewSession};
use crate::mcp::SightlineMcp;

/// Request bodies larger than this are refused (413).
pub const MAX_BODY: usize = 1 << 20;
/// Request heads (all header names and values) larger than this are refused (431).
pub const MAX_HEADERS: usize = 16 << 10;

/// What the router needs besides the hub.
#[derive(Clone, Default)]
pub struct HttpConfig {
    /// Bearer token every request must carry (`Authorization: Bearer …`); None = no check.
    pub token: Option<String>,
    /// Accept any `Host` on `/mcp` (needed for a non-loopback bind; the token guards it then).
    pub any_host: bool,
    /// Cancelled when the server stops: MCP sessions end.
    pub mcp_shutdown: CancellationToken,
}

#[derive(Clone)]
struct AppState {
    hub: Arc<Hub>,
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
    let mcp = StreamableHttpService::new(
        move || Ok(SightlineMcp::over_hub(mcp_hub.clone())),
        Arc::new(LocalSessionManager::default()),
        mcp_cfg,
    );
    let token = cfg.token.clone();
    Router::new()
        .route("/v1/sessions", post(create_session).get(list_sessions))
        .route("/v1/sessions/{id}", axum::routing::delete(delete_session))
        .route("/v1/sessions/{id}/act", post(act))
        .route("/v1/sessions/{id}/state", get(state))
        .route("/v1/sessions/{id}/tools/{tool}", post(tool))
        .route("/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .merge(Router::new().nest_service("/mcp", mcp).layer(middleware::from_fn(mcp_delete_no_content)))
        .fallback(|| async { ServerError::BadRequest("no such path; see /openapi.json".into()).into_response() })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn(move |req: Request, next: Next| guard(token.clone(), req, next)))
        .with_state(AppState { hub })
}

/// rmcp answers a session DELETE with 202; clients (the official Python one
/// among them) expect 200 or 204 for a terminated session.
async fn mcp_delete_no_content(req: Request, next: Next) -> Response {
    let delete = req.method() == axum::http::Method::DELETE;
    let mut r = next.run(req).await;
    if delete && r.status() == StatusCode::ACCEPTED {
        *r.status_mut() = StatusCode::NO_CONTENT;
    }
    r
}

/// Bounded heads, then the bearer token (compared in constant time).
async fn guard(token: Option<String>, req: Request, next: Next) -> Response {
    let head: usize =
        req.headers().iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum::<usize>() + req.uri().to_string().len();
    if head > MAX_HEADERS {
        return ServerError::HeadersTooLarge { limit: MAX_HEADERS }.into_response();
    }
    if let Some(expected) = token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            return ServerError::Unauthorized.into_response();
        }
    }
    next.run(req).await
}

/// Equal in time independent of where the bytes first differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u8 | ((a.len() ^ b.len()) >> 8) as u8;
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0xff);
        diff |= x ^ y;
    }
    diff == 0 && a.len() == b.len()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    url: Option<String>,
    viewport: Option<String>,
    screenshot: Option<bool>,
}

fn parse_viewport(s: &str) -> Result<(u32, u32), ServerError> {
    let bad = || ServerError::BadRequest(format!("viewport expects WIDTHxHEIGHT (100..8000), got {s:?}"));
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if !(100..=8000).contains(&w) || !(100..=8000).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

fn json_body<T: serde::de::DeserializeOwned + Default>(body: &Bytes) -> Result<T, ServerError> {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ServerError::BadRequest(format!("invalid JSON body: {e}")))
}

async fn create_session(State(st): State<AppState>, body: Bytes) -> Result<Response, ServerError> {
    let b: CreateBody = json_body(&body)?;
    if let Some(url) = &b.url {
        sightline_api::check_url(url).map_err(|e| ServerError::BadRequest(e.to_string()))?;
    }
    let viewport = b.viewport.as_deref().map(parse_viewport).transpose()?;
    let (s, state) =
        st.hub.create(NewSession { url: b.url, viewport, screenshot: b.screenshot.unwrap_or(true) }).await?;
    let mut out = json!({ "session_id": s.id });
    if let Some(state) = state {
        out["state"] = state;
    }
    if let Some(g) = s.grid_session() {
        out["grid_session"] = json!(g);
    }
    Ok((StatusCode::CREATED, Json(out)).into_response())
}

async fn list_sessions(State(st): State<AppState>) -> Json<Value> {
    Json(json!({ "sessions": st.hub.ids() }))
}

async fn delete_session(State(st): State<AppState>, Path(id): Path<String>) -> Result<StatusCode, ServerError> {
    st.hub.end(&id, EndReason::Deleted).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn act(State(st): State<AppState>, Path(id): Path<String>, body: Bytes) -> Result<Json<Value>, ServerError> {
    let s = st.hub.enter(&id)?;
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
    Path(id): Path<String>,
    Query(q): Query<StateQuery>,
) -> Result<Json<Value>, ServerError> {
    let s = st.hub.enter(&id)?;
    match s.state(&st.hub.metrics, q.screenshot).await {
        Ok(v) => Ok(Json(v)),
        Err(e) => Err(st.hub.classify(&s, e).await),
    }
}

async fn tool(
    State(st): State<AppState>,
    Path((id, name)): Path<(String, String)>,
    body: Bytes,
) -> Result<Response, ServerError> {
    let args: Value = json_body(&body)?;
    if name == "end_session" {
        st.hub.end(&id, EndReason::Deleted).await?;
        return Ok(Json(json!({ "status": "ok", "session": id })).into_response());
    }
    let s = st.hub.enter(&id)?;
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

async fn healthz(State(st): State<AppState>) -> Json<Value> {
    Json(json!({ "status": "ok", "sessions": st.hub.open_count(), "max_sessions": st.hub.config().max_sessions }))
}

async fn metrics(State(st): State<AppState>) -> Response {
    let mut h = HeaderMap::new();
    h.insert(header::CONTENT_TYPE, "text/plain; version=0.0.4".parse().expect("static"));
    (h, st.hub.metrics.render()).into_response()
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_compare() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(!constant_time_eq(b"x", b""));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn viewports() {
        assert_eq!(parse_viewport("800x600").unwrap(), (800, 600));
        assert!(parse_viewport("5x5").is_err());
        assert!(parse_viewport("800").is_err());
    }
}
