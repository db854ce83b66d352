//! upload_file and list_downloads.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sightline_browser::{Download, DownloadState};
use sightline_page::semantic::ActionKind;

use super::mutate::prove;
use super::{Api, Reply, Status, TabAddress};
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

/// `upload_file`: the names of the files chosen.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UploadReply {
    pub status: Status,
    pub files: Vec<String>,
    pub navigated: bool,
}

/// One download of the session.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DownloadInfo {
    /// Its name in the operator's download directory.
    pub name: String,
    pub bytes: u64,
    /// `in_progress`, `done` or `failed`.
    pub state: &'static str,
    /// Why it failed.
    pub error: Option<String>,
    pub url: String,
}

/// `list_downloads`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DownloadsReply {
    /// False when the operator gave no download directory.
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    pub downloads: Vec<DownloadInfo>,
}

impl Reply for UploadReply {}
impl Reply for DownloadsReply {}

impl Api {
    /// `upload_file`: choose files for the file input of a ref.
    pub async fn upload_file(&self, p: UploadParams) -> Result<UploadReply, ToolError> {
        let api = self;
        let paths = crate::files::check_paths(p.paths).map_err(ToolError::from)?;
        let files = crate::files::resolve(api.registry.files.uploads.as_deref(), &paths).map_err(ToolError::from)?;
        let a = TabAddress { session: p.session, target_id: p.target_id, tab_id: p.tab_id };
        let pr = prove(api, &a, &p.reference, ActionKind::Click).await?;
        let before = pr.tab.navigation_count();
        pr.tab.upload_files(&pr.captured, pr.index, &files).await?;
        let names: Vec<String> =
            files.iter().filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned())).collect();
        Ok(UploadReply { status: Status::Ok, files: names, navigated: pr.tab.navigation_count() != before })
    }

    /// `list_downloads`: the session's downloads.
    pub async fn list_downloads(&self, p: ListDownloadsParams) -> Result<DownloadsReply, ToolError> {
        let api = self;
        let s = api.registry.session(&p.session).await?;
        let g = s.lock().await;
        g.check_target(&p.target_id)?;
        let Some(d) = &g.downloads else {
            return Ok(DownloadsReply { enabled: false, max_bytes: None, downloads: Vec::new() });
        };
        let downloads = d.list().iter().map(download_info).collect();
        Ok(DownloadsReply { enabled: true, max_bytes: Some(d.max_bytes()), downloads })
    }
}

fn download_info(d: &Download) -> DownloadInfo {
    let (state, error) = match &d.state {
        DownloadState::InProgress => ("in_progress", None),
        DownloadState::Done => ("done", None),
        DownloadState::Failed { reason } => ("failed", Some(reason.clone())),
    };
    DownloadInfo { name: d.name.clone(), bytes: d.bytes, state, error, url: d.url.clone() }
}
