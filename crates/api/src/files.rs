//! File access of every front end: the upload directory (`--files DIR`), the
//! download directory and cap (`--downloads DIR`), `upload_file`'s `paths`, and
//! the lines page_content gains for a pending file chooser and for downloads.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use sightline_browser::{Browser, BrowserContextId, Captured, DownloadConfig, Downloads, FileError, FileRoot, Tab};

use crate::action::ValidationError;

/// The most files one `upload_file` may choose.
pub const MAX_UPLOAD_FILES: usize = 32;

/// What the operator allowed: where uploads may come from and where downloads go.
#[derive(Debug, Clone, Default)]
pub struct FileAccess {
    /// `--files DIR`; `None`: `upload_file` is refused.
    pub uploads: Option<Arc<FileRoot>>,
    /// `None`: Chromium's own download behaviour is left alone (a Grid browser,
    /// whose disk is not ours).
    pub downloads: Option<DownloadConfig>,
    /// Each session downloads into a directory of its own under `downloads.dir`
    /// (named by the session), as `sightline serve` does.
    pub dir_per_session: bool,
}

impl FileAccess {
    /// Set up the downloads of a session's browser context.
    pub async fn enable_downloads(
        &self,
        browser: &Browser,
        context: &BrowserContextId,
        session: &str,
    ) -> Result<Option<Downloads>, sightline_browser::DownloadError> {
        let Some(cfg) = &self.downloads else { return Ok(None) };
        let mut cfg = cfg.clone();
        if self.dir_per_session {
            cfg.dir = cfg.dir.map(|d| d.join(sightline_browser::sanitize_file_name(session)));
        }
        Downloads::enable(browser, context, &cfg).await.map(Some)
    }
}

/// `upload_file`'s `paths`: 1 to [`MAX_UPLOAD_FILES`] non-empty strings without NUL.
pub(crate) fn parse_paths(v: Option<&Value>) -> Result<Vec<String>, ValidationError> {
    let fail = |m: String| Err(ValidationError { message: m });
    let Some(v) = v else {
        return fail("upload_file requires 'paths' (an array of file names in the upload directory)".into());
    };
    let Value::Array(items) = v else {
        return fail("'paths' must be an array of strings".into());
    };
    if items.is_empty() || items.len() > MAX_UPLOAD_FILES {
        return fail(format!("'paths' must hold 1 to {MAX_UPLOAD_FILES} file names, got {}", items.len()));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => {
                check_path(i, s)?;
                out.push(s.clone());
            }
            _ => return fail(format!("'paths'[{i}] must be a string")),
        }
    }
    Ok(out)
}

/// The `paths` of the `upload_file` tool (already strings), checked as [`parse_paths`] checks them.
pub(crate) fn check_paths(paths: Vec<String>) -> Result<Vec<String>, ValidationError> {
    if paths.is_empty() || paths.len() > MAX_UPLOAD_FILES {
        return Err(ValidationError {
            message: format!("'paths' must hold 1 to {MAX_UPLOAD_FILES} file names, got {}", paths.len()),
        });
    }
    for (i, s) in paths.iter().enumerate() {
        check_path(i, s)?;
    }
    Ok(paths)
}

fn check_path(i: usize, s: &str) -> Result<(), ValidationError> {
    let fail = |m: String| Err(ValidationError { message: m });
    if s.trim().is_empty() {
        return fail(format!("'paths'[{i}] is empty"));
    }
    if s.contains('\0') {
        return fail(format!("'paths'[{i}] contains a NUL character"));
    }
    if s.len() > 4096 {
        return fail(format!("'paths'[{i}] is longer than 4096 bytes"));
    }
    Ok(())
}

/// Resolve every path inside the upload directory, or say why not.
pub(crate) fn resolve(root: Option<&FileRoot>, paths: &[String]) -> Result<Vec<PathBuf>, FileError> {
    root.ok_or(FileError::NoDirectory)?.resolve_all(paths)
}

/// The lines page_content gains: a file chooser waiting for `upload_file`, and the downloads.
pub(crate) fn annotate(tab: &Tab, captured: &mut Captured, downloads: Option<&Downloads>) {
    let chooser = tab.file_chooser(captured);
    let content = &mut captured.view.page_content;
    if let Some(c) = chooser {
        let files = if c.multiple { "files" } else { "a file" };
        match c.opened_by {
            Some(i) => content.push_str(&format!(
                "\n[file chooser open for {files}: send upload_file with element_index {i} and the paths]"
            )),
            None => content
                .push_str(&format!("\n[file chooser open for {files}; the element that opened it is not in view]")),
        }
    }
    if let Some(line) = downloads.and_then(Downloads::summary) {
        content.push('\n');
        content.push_str(&line);
    }
}
