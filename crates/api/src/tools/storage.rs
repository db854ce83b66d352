//! save_storage_state, and the storage state bind_browser starts from.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use sightline_browser::StorageState;

use super::Api;
use crate::error::ToolError;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveParams {
    /// The driver session name given to bind_browser.
    pub session: String,
}

/// Parse a storage state given as JSON (a tool's `storage_state`, a `POST /v1/sessions` body's):
/// `invalid_params` naming where it is wrong (`detail.at`), never a value.
pub fn parse_state(v: &Value) -> Result<StorageState, ToolError> {
    StorageState::from_value(v).map_err(ToolError::from)
}

impl Api {
    /// `save_storage_state`: the session's cookies and localStorage (Playwright's storageState).
    pub async fn save_storage_state(&self, p: SaveParams) -> Result<StorageState, ToolError> {
        let s = self.registry.session(&p.session).await?;
        let g = s.lock().await;
        Ok(g.browser.save_storage(&g.context, &g.restored_origins).await?)
    }
}
