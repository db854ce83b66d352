//! `--storage-state FILE`, `--save-storage-state FILE` and `--profile DIR`
//! for the commands that open one session (`env`, `state`), and the storage
//! state every session of `rpc`/`mcp` starts from.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use sightline_browser::{Browser, BrowserContextId, StorageState};

/// The state `--storage-state FILE` names, read and checked (the error names the file and what is wrong).
pub fn storage_state(path: Option<&Path>) -> Result<Option<Arc<StorageState>>> {
    let Some(path) = path else { return Ok(None) };
    let state =
        sightline_browser::read_storage_file(path).with_context(|| format!("--storage-state {}", path.display()))?;
    Ok(Some(Arc::new(state)))
}

/// Writes the context's state to `--save-storage-state FILE` at exit.
pub struct Saver {
    context: BrowserContextId,
    to: Option<PathBuf>,
    restored: Vec<String>,
}

/// The context the command's tab goes in (the profile's own with `--profile`),
/// restored from `restore`; and what saves it at exit to `save_to` (`--save-storage-state`).
pub async fn context(
    save_to: Option<PathBuf>,
    browser: &Browser,
    restore: Option<&StorageState>,
) -> Result<(BrowserContextId, Saver)> {
    let context = browser.session_context().await?;
    if let Some(state) = restore {
        browser.restore_storage(&context, state).await.context("restoring --storage-state")?;
    }
    let restored = restore.map(|s| s.origin_names()).unwrap_or_default();
    Ok((context.clone(), Saver { context, to: save_to, restored }))
}

impl Saver {
    pub async fn save(&self, browser: &Browser) -> Result<()> {
        let Some(path) = &self.to else { return Ok(()) };
        let state = browser.save_storage(&self.context, &self.restored).await.context("reading the storage state")?;
        sightline_browser::write_storage_file(path, &state)?;
        tracing::info!(path = %path.display(), cookies = state.cookies.len(), origins = state.origins.len(), "storage state saved");
        Ok(())
    }
}
