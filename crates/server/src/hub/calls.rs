//! A session's calls into its [`Api`]: the typed `act` and `get_state` of
//! the HTTP paths, and tools by name (HTTP `/tools/{name}`, MCP), with the
//! session's id forced in and its target and tab as defaults where the
//! tool's [`Scope`] takes them. Every call stops when the session ends.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{json, Map, Value};
use sightline_api::{
    decode_params, ActParams, BindParams, BindReply, GetStateParams, Reply, Scope, StateObject, TabId, TargetId,
    ToolError, ToolName, ToolOutput,
};

use super::Session;
use crate::error::{EndReason, ServerError};
use crate::metrics::Metrics;

/// The (target_id, tab_id) a bind answered with: its target and first tab.
pub(super) fn address_of(bound: &BindReply) -> Result<(TargetId, TabId), ServerError> {
    let tab = bound.tabs.first().ok_or_else(|| ServerError::Browser("bind_browser answered without a tab"))?;
    Ok((bound.target_id.clone(), tab.tab_id.clone()))
}

/// The State Object as JSON, with its screenshot back in (fields in the protocol's order).
fn state_json(state: &StateObject) -> Result<Value, ServerError> {
    serde_json::to_value(state).map_err(|e| ServerError::Tool(ToolError::encoding(e)))
}

/// The outcome an action's State Object reports (for the metrics).
fn outcome(state: &StateObject) -> &'static str {
    match (&state.error, &state.task) {
        (Some(e), _) => e.code.as_str(),
        (None, Some(_)) => "task_ended",
        _ => "ok",
    }
}

impl Session {
    /// The target and tab the session's calls address by default, as the wire writes them.
    pub fn target_and_tab(&self) -> (String, String) {
        let (target, tab) = &*self.address.lock().unwrap();
        (target.to_string(), tab.to_string())
    }

    /// The Grid session behind this session, if any.
    pub fn grid_session(&self) -> Option<&str> {
        self.grid.as_ref().map(|g| g.id.as_str())
    }

    fn get_state_params(&self, screenshot: bool) -> GetStateParams {
        let (target_id, tab_id) = self.target_and_tab();
        GetStateParams { session: self.id.clone(), target_id, tab_id, screenshot: Some(screenshot), mark_new: None }
    }

    /// Run `op` unless the session ends first (then its future is dropped).
    async fn guarded<T>(&self, op: impl std::future::Future<Output = Result<T, ToolError>>) -> Result<T, ServerError> {
        tokio::select! {
            r = op => r.map_err(ServerError::from),
            _ = self.gone.cancelled() => Err(match *self.reason.lock().unwrap() {
                Some(EndReason::BrowserCrashed) => ServerError::BrowserCrashed { id: self.id.clone() },
                reason => ServerError::SessionEnded { id: self.id.clone(), reason: reason.unwrap_or(EndReason::Deleted) },
            }),
        }
    }

    /// One Action Object → one State Object (errors inside it), as `sightline env` answers.
    pub async fn act(&self, metrics: &Metrics, action: Value) -> Result<Value, ServerError> {
        let started = Instant::now();
        let (target_id, tab_id) = self.target_and_tab();
        let p = ActParams { session: self.id.clone(), target_id, tab_id, action };
        let state = self.guarded(self.api.act(p)).await?.into_state(true);
        metrics.action(outcome(&state), started.elapsed());
        state_json(&state)
    }

    /// The current State Object. `screenshot: Some(_)` also sets it for the
    /// following actions, as the `get_state` tool does; None keeps the session's.
    pub async fn state(&self, metrics: &Metrics, screenshot: Option<bool>) -> Result<Value, ServerError> {
        let started = Instant::now();
        let on = screenshot.unwrap_or_else(|| self.screenshot.load(Ordering::SeqCst));
        let reply = self.guarded(self.api.get_state(self.get_state_params(on))).await?;
        self.screenshot.store(on, Ordering::SeqCst);
        metrics.capture_latency.observe(started.elapsed());
        state_json(&reply.into_state(on))
    }

    /// A tool by its wire name, with this session's id forced in and its target and tab as defaults.
    pub async fn tool(&self, metrics: &Metrics, name: &str, args: Value) -> Result<ToolOutput, ServerError> {
        let args = match args {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => return Err(ServerError::Tool(ToolError::invalid("params must be a JSON object"))),
        };
        let result = match name.parse::<ToolName>() {
            Ok(tool) => self.call(tool, args).await,
            Err(e) => Err(ServerError::Tool(e)),
        };
        metrics.tool(name, result.as_ref().map(|_| "ok").unwrap_or_else(|e| e.code()));
        result
    }

    /// The `act` tool (an MCP call), counted as an action too.
    pub async fn act_tool(&self, metrics: &Metrics, args: Value) -> Result<ToolOutput, ServerError> {
        let started = Instant::now();
        let tool = ToolName::Act;
        let result = async {
            let p: ActParams = decode_params(self.with_address(tool, args)?)?;
            let reply = self.guarded(self.api.act(p)).await?;
            let outcome = reply.state.error.as_ref().map_or("ok", |e| e.code.as_str());
            Ok::<_, ServerError>((reply.into_output()?, outcome))
        }
        .await;
        metrics.tool(tool.as_str(), result.as_ref().map(|_| "ok").unwrap_or_else(|e| e.code()));
        let (out, outcome) = result?;
        metrics.action(outcome, started.elapsed());
        Ok(out)
    }

    /// A tool's params with this session's id, and its target and tab where the tool takes them and the call left them out.
    fn with_address(&self, tool: ToolName, args: Value) -> Result<Value, ServerError> {
        let mut args = match args {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => return Err(ServerError::Tool(ToolError::invalid("params must be a JSON object"))),
        };
        let (target, tab) = self.target_and_tab();
        args.insert("session".into(), json!(self.id));
        let scope = tool.tool().scope;
        if scope >= Scope::Target {
            args.entry("target_id").or_insert(json!(target));
        }
        if scope == Scope::Tab {
            args.entry("tab_id").or_insert(json!(tab));
        }
        Ok(Value::Object(args))
    }

    async fn call(&self, tool: ToolName, args: Map<String, Value>) -> Result<ToolOutput, ServerError> {
        let args = self.with_address(tool, Value::Object(args))?;
        if tool != ToolName::BindBrowser {
            return self.guarded(self.api.call(tool, args)).await;
        }
        // Boxed: starting a browser is a large future.
        let bound = self.guarded(Box::pin(self.api.bind_browser(decode_params::<BindParams>(args)?))).await?;
        let first_tab = bound.tabs.first().map(|t| (bound.target_id.clone(), t.tab_id.clone()));
        if let Some(address) = first_tab.filter(|a| *a != *self.address.lock().unwrap()) {
            // A new browser: its tab needs a State Object before `act` can refer to it.
            *self.address.lock().unwrap() = address;
            let first = self.get_state_params(self.screenshot.load(Ordering::SeqCst));
            self.guarded(self.api.get_state(first)).await?;
        }
        Ok(bound.into_output()?)
    }

    /// Whether the session has ended (an MCP handler holding it learns so here).
    pub fn is_ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }
}

/// The live view's way in (`live.rs`): a session found by id alone (its
/// ticket, checked by the session's own API, is the credential), the API it
/// drives, and whether a request is in flight.
impl super::Hub {
    /// An open session by id, whoever owns it: only for a request that proves itself otherwise (a live-view ticket).
    pub(crate) fn session_by_ticket_id(&self, id: &str) -> Option<std::sync::Arc<Session>> {
        self.sessions.lock().unwrap().get(id).cloned()
    }
}

impl Session {
    /// The session's API (the live view reads its desk and tab through it).
    pub(crate) fn api(&self) -> &sightline_api::Api {
        &self.api
    }

    /// Whether a request of the agent is in flight or queued.
    pub(crate) fn is_busy(&self) -> bool {
        self.queue.available_permits() < self.queue_limit
    }

    /// A person is using the session: it is not idle.
    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap() = Instant::now();
    }
}
