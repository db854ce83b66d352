//! `sightline serve`: many agents, one server.
//!
//! - [`Hub`] holds the sessions. Each is its own browser context on a shared
//!   Chromium (launched or attached with `--connect`), or a browser of its own
//!   from Selenium Grid ([`grid`]). Each has a bounded request queue, an idle
//!   timeout, and ends alone when its browser dies.
//! - [`app`] is the HTTP API over the same tool table as `sightline rpc`
//!   (`sightline_api::TOOLS`): pinned paths for the element-index protocol
//!   (`/v1/sessions/{id}/act`, `/state`), every tool at
//!   `/v1/sessions/{id}/tools/{name}`, `/openapi.json`, `/healthz`,
//!   `/metrics`, and MCP Streamable HTTP at `/mcp` ([`SightlineMcp`], on rmcp).
//! - The live view (`/live`, `/live/{id}`): a person watches a session's page
//!   and, once the agent handed it over (`request_human`), clicks and types
//!   into it and hands it back; a single-session ticket in the link is the
//!   credential.
//! - [`Principals`] are the callers `--token-file` names, one bearer token
//!   each. A session belongs to the principal that created it: to any other,
//!   its id answers exactly as an id that never existed.
//! - [`serve`] binds, runs until the stop signal, then ends every session and
//!   closes the browsers.
//!
//! ```
//! use sightline_server::{Principals, ServerError};
//! let team = Principals::parse("alice 0123456789abcdef-alice\nbob 0123456789abcdef-bob\n").unwrap();
//! assert_eq!(team.authenticate(b"0123456789abcdef-bob").unwrap().name(), "bob");
//! assert!(team.authenticate(b"0123456789abcdef-eve").is_none());
//! let e = ServerError::SessionNotFound { id: "s-1".into() };
//! assert_eq!((e.code(), e.status().as_u16()), ("session_not_found", 404));
//! ```

mod auth;
pub mod env_lines;
mod error;
pub mod grid;
mod http;
mod hub;
pub mod jsonrpc;
mod live;
mod mcp;
mod metrics;
mod openapi;

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

pub use auth::{constant_time_eq, Principal, Principals, TokenFileError, MIN_TOKEN_LEN};
pub use error::{EndReason, GridError, ServerError};
pub use grid::GridConfig;
pub use http::{app, HttpConfig, MAX_BODY, MAX_HEADERS};
pub use hub::{
    BrowserSource, Hub, HubConfig, NewSession, Session, DEFAULT_START_LIMIT, TURN, WARM_AUTO_KEEP, WARM_AUTO_MAX,
};
pub use live::serve_live;
pub use mcp::{serve_io, serve_stdio, Handle, HandleError, HandleTool, SightlineMcp, HANDLE_TOOLS};
pub use metrics::Metrics;
pub use openapi::document as openapi_document;

/// Everything `sightline serve` is configured with.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    /// Who may call, by bearer token; none = the anonymous principal alone
    /// (the command line refuses that for a non-loopback `listen`).
    pub principals: Principals,
    pub hub: HubConfig,
}

/// How long shutdown waits for a warm context (or Grid browser) being opened.
const WARMER_STOP: Duration = Duration::from_secs(30);

/// Bind and serve until `stop` resolves; then stop accepting, end every
/// session, close the browsers and return. `ready` gets the bound address.
pub async fn serve(
    cfg: ServeConfig,
    stop: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let hub = Hub::new(cfg.hub.clone());
    hub.warm_up().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(cfg.listen).await?;
    let addr = listener.local_addr()?;
    let mcp_shutdown = tokio_util::sync::CancellationToken::new();
    let router = app(
        hub.clone(),
        HttpConfig {
            principals: cfg.principals.clone(),
            any_host: !cfg.listen.ip().is_loopback(),
            mcp_shutdown: mcp_shutdown.clone(),
            live_base: Some(format!("http://{addr}")),
        },
    );
    let period = (cfg.hub.idle_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(1));
    let keeper = tokio::spawn(hub.clone().housekeeping(period));
    let warmer = tokio::spawn(hub.clone().keep_warm());
    ready(addr);
    let stopping = mcp_shutdown.clone();
    let result = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stop.await;
            // Open MCP streams would hold graceful shutdown forever: end them first.
            stopping.cancel();
        })
        .await;
    keeper.abort();
    hub.shutdown().await;
    // A warm context (or Grid browser) being opened now is closed by its filler,
    // which sees the hub closing; past the bound, one still waiting for the Grid
    // is given back by its claim when dropped.
    let mut warmer = warmer;
    if tokio::time::timeout(WARMER_STOP, &mut warmer).await.is_err() {
        tracing::warn!(bound = ?WARMER_STOP, "a warm context was still opening at shutdown");
        warmer.abort();
    }
    result
}
