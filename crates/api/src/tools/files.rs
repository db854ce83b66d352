//! upload_file and list_downloads.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use sightline_browser::{Download, DownloadState};
use sightline_page::semantic::ActionKind;

use super::mutate::prove;
use super::{Api, TabAddress, ToolOutput};
use crate::error::ToolError;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadParams {
    pub session: String,
    pub target_id: String,
    pub tab_id: String,
    /// A ref of a file input, or of the element whose click opened a file chooser.
    #[serde(rename = "ref")]
    pub reference: String,
    /// File names inside the operator's upload directory (`--files DIR`), 1 to 32.
    pub paths: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDownloadsParams {
    pub session: String,
    pub target_id: String,
}

pub(crate) async fn upload_file(api: &Api, p: UploadParams) -> Result<ToolOutput, ToolError> {
    let paths = crate::files::parse_paths(Some(&serde_json::to_value(&p.paths).unwrap_or_default()))
        .map_err(|e| ToolError::invalid(e.message))?;
    let files =
        crate::files::resolve(api.registry.files.uploads.as_deref(), &paths).map_err(crate::files::tool_error)?;
    let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
    let pr = prove(api, &a, &p.reference, ActionKind::Click).await?;
    let before = pr.tab.navigation_count();
    pr.tab.upload_files(&pr.captured, pr.index, &files).await?;
    let names: Vec<String> =
        files.iter().filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned())).collect();
    Ok(ToolOutput::json(json!({
        "status": "ok",
        "files": names,
        "navigated": pr.tab.navigation_count() != before,
    })))
}

fn download_json(d: &Download) -> serde_json::Value {
    let (state, error) = match &d.state {
        DownloadState::InProgress => ("in_progress", None),
        DownloadState::Done => ("done", None),
        DownloadState::Failed { reason } => ("failed", Some(reason.clone())),
    };
    json!({ "name": d.name, "bytes": d.bytes, "state": state, "error": error, "url": d.url })
}

pub(crate) async fn list_downloads(api: &Api, p: ListDownloadsParams) -> Result<ToolOutput, ToolError> {
    let s = api.registry.session(&p.session).await?;
    let g = s.lock().await;
    g.check_target(&p.target_id)?;
    let Some(d) = &g.downloads else {
        return Ok(ToolOutput::json(json!({ "enabled": false, "downloads": [] })));
    };
    let list: Vec<serde_json::Value> = d.list().iter().map(download_json).collect();
    Ok(ToolOutput::json(json!({ "enabled": true, "max_bytes": d.max_bytes(), "downloads": list })))
}
