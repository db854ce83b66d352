//! save_storage_state, and the storage state bind_browser starts from.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use sightline_browser::{StorageError, StorageState};

use super::{Api, ToolOutput};
use crate::error::ToolError;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveParams {
    /// The driver session name given to bind_browser.
    pub session: String,
}

/// A storage state that is wrong is `invalid_params` naming where (never a
/// value); the browser failing to take or give one is its own error.
pub(crate) fn storage_error(e: StorageError) -> ToolError {
    match e {
        StorageError::Browser(b) => ToolError::from(b),
        StorageError::Invalid { ref at, .. } => {
            ToolError { detail: json!({ "at": at }), ..ToolError::invalid(format!("storage_state: {e}")) }
        }
        e if e.is_bad_input() => ToolError::invalid(format!("storage_state: {e}")),
        e => ToolError::browser(e),
    }
}

pub(crate) fn parse_state(v: &Value) -> Result<StorageState, ToolError> {
    StorageState::from_value(v).map_err(storage_error)
}

pub(crate) async fn save_storage_state(api: &Api, p: SaveParams) -> Result<ToolOutput, ToolError> {
    let s = api.registry.session(&p.session).await?;
    let g = s.lock().await;
    let state = g.browser.save_storage(&g.context, &g.restored_origins).await.map_err(storage_error)?;
    let value = serde_json::to_value(&state).map_err(|e| ToolError::browser(format!("encoding the state: {e}")))?;
    Ok(ToolOutput::json(value))
}
