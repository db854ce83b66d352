//! Uploads: the one directory files may be read from, file inputs, and file
//! choosers opened by a click.
//!
//! A path an agent names is resolved inside the operator's `--files` directory
//! ([`FileRoot::resolve`]): it must stay inside after every symlink is
//! followed, and name an existing regular file. Only the resolved path ever
//! reaches Chromium (`DOM.setFileInputFiles`). Every page session intercepts
//! file choosers (`Page.setInterceptFileChooserDialog`), so no native dialog
//! blocks the page; the tracker remembers the input that asked and the element
//! whose click opened it, and `upload_file` on that element fills the input.

use std::path::{Component, Path, PathBuf};

use sightline_cdp::protocol::dom;
use sightline_cdp::{BackendNodeId, SessionId};
use sightline_page::{Element, ElementIndex};

use crate::actions::{describe_element, DialogIs};
use crate::{BrowserError, Captured, Refusal, Tab};

/// Why a path named for an upload was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// No `--files DIR` was given: uploads are off.
    #[error("uploads are off: the operator named no directory to upload from (sightline … --files DIR)")]
    NoDirectory,
    /// The `--files` directory itself is unusable.
    #[error("the upload directory {dir} cannot be used: {source}")]
    BadDirectory {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("an empty path names no file")]
    Empty,
    /// The path (as written, or once its symlinks are followed) leaves the directory.
    #[error("{path:?} is outside the upload directory")]
    Outside { path: String },
    #[error("{path:?} does not exist in the upload directory")]
    Missing {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path:?} is not a regular file")]
    NotAFile { path: String },
}

/// The directory uploads may come from (`--files DIR`), canonical.
#[derive(Debug, Clone)]
pub struct FileRoot {
    dir: PathBuf,
}

impl FileRoot {
    /// The directory must exist; it is taken with its symlinks resolved.
    pub fn new(dir: impl AsRef<Path>) -> Result<FileRoot, FileError> {
        let d = dir.as_ref();
        let canonical = d.canonicalize().map_err(|source| FileError::BadDirectory { dir: d.to_path_buf(), source })?;
        if !canonical.is_dir() {
            let source = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory");
            return Err(FileError::BadDirectory { dir: d.to_path_buf(), source });
        }
        Ok(FileRoot { dir: canonical })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file `name` names inside the directory (relative to it, or absolute
    /// inside it), with every symlink followed. Refused: a path that leaves the
    /// directory as written (`..`) or once resolved (a symlink out of it), a
    /// missing file, anything but a regular file.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, FileError> {
        if name.trim().is_empty() {
            return Err(FileError::Empty);
        }
        let outside = || FileError::Outside { path: name.to_string() };
        let given = Path::new(name);
        let joined = if given.is_absolute() { given.to_path_buf() } else { self.dir.join(given) };
        // As written: no `..` may climb above the directory.
        let mut depth: Vec<Component> = Vec::new();
        for c in joined.components() {
            match c {
                Component::ParentDir => {
                    if depth.pop().is_none() {
                        return Err(outside());
                    }
                }
                Component::CurDir => {}
                other => depth.push(other),
            }
        }
        let lexical: PathBuf = depth.iter().collect();
        if !lexical.starts_with(&self.dir) {
            return Err(outside());
        }
        // Resolved: symlinks followed, the file must exist and still be inside.
        let real = joined.canonicalize().map_err(|source| FileError::Missing { path: name.to_string(), source })?;
        if !real.starts_with(&self.dir) {
            return Err(outside());
        }
        if !real.is_file() {
            return Err(FileError::NotAFile { path: name.to_string() });
        }
        Ok(real)
    }

    /// Every name resolved, or the first refusal.
    pub fn resolve_all(&self, names: &[String]) -> Result<Vec<PathBuf>, FileError> {
        names.iter().map(|n| self.resolve(n)).collect()
    }
}

/// A file chooser the page opened (intercepted: no dialog is shown).
#[derive(Debug, Clone)]
pub(crate) struct Chooser {
    /// The session of the frame whose input asked, and the input.
    pub session: SessionId,
    pub input: BackendNodeId,
    pub multiple: bool,
    /// The element whose click opened it (its frame session and backend id).
    pub opener: Option<(SessionId, i64)>,
}

/// What a pending file chooser says about the current capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChooserInfo {
    /// The indexed element whose click opened it, when it is in this capture.
    pub opened_by: Option<ElementIndex>,
    pub multiple: bool,
}

fn is_file_input(e: &Element) -> bool {
    e.descriptor.tag == "input" && e.descriptor.type_.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("file"))
}

impl Tab {
    /// The file chooser the page opened and that no upload has answered yet.
    pub fn file_chooser(&self, cap: &Captured) -> Option<ChooserInfo> {
        let st = self.state.lock().unwrap();
        let c = st.dialogs.chooser.as_ref()?;
        let opened_by = c.opener.as_ref().and_then(|(s, backend)| {
            cap.view
                .elements
                .iter()
                .find(|e| e.backend_node_id == *backend && cap.sessions.get(e.frame) == Some(s))
                .map(|e| e.index)
        });
        Some(ChooserInfo { opened_by, multiple: c.multiple })
    }

    /// Remember the element a click is about to be delivered to (a file chooser
    /// it opens is attributed to it), or forget it once the click is over.
    pub(crate) fn note_click_target(&self, target: Option<(SessionId, i64)>) {
        self.state.lock().unwrap().dialogs.clicking = target;
    }

    /// `upload_file`: set the files of the `<input type=file>` at `index`, or of
    /// the input whose chooser the click on `index` opened; then wait for a
    /// stable page (the input's `input` and `change` events run). `files` are
    /// paths already resolved by a [`FileRoot`].
    pub async fn upload_files(
        &self,
        cap: &Captured,
        index: ElementIndex,
        files: &[PathBuf],
    ) -> Result<(), BrowserError> {
        let e = cap.view.element(index).ok_or_else(|| BrowserError::Unexpected(format!("no element {index}")))?;
        if e.disabled {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::Disabled });
        }
        let session = cap
            .sessions
            .get(e.frame)
            .cloned()
            .ok_or(BrowserError::NotInteractive { index, reason: Refusal::Detached })?;
        let (session, input, multiple, chooser) = if is_file_input(e) {
            let multiple = cap.view.node(e.node).is_some_and(|n| n.attr("multiple").is_some());
            (session, BackendNodeId(e.backend_node_id), multiple, false)
        } else {
            let st = self.state.lock().unwrap();
            let opened = st
                .dialogs
                .chooser
                .as_ref()
                .filter(|c| c.opener.as_ref() == Some(&(session.clone(), e.backend_node_id)));
            match opened {
                Some(c) => (c.session.clone(), c.input, c.multiple, true),
                None => {
                    return Err(BrowserError::NotInteractive {
                        index,
                        reason: Refusal::Unsupported {
                            action: "upload_file (it is not a file input, and no click on it opened a file chooser)",
                            element: describe_element(e),
                        },
                    })
                }
            }
        };
        if files.len() > 1 && !multiple {
            return Err(BrowserError::NotInteractive {
                index,
                reason: Refusal::Unsupported {
                    action: "more than one file",
                    element: "a file input without `multiple`".into(),
                },
            });
        }
        let paths: Vec<String> = files.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        self.act(DialogIs::Error, async || {
            let set = dom::SetFileInputFiles { files: &paths, backend_node_id: input };
            match self.cdp(&session, &set).await {
                Ok(_) => {}
                Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) => {
                    return Err(BrowserError::NotInteractive { index, reason: Refusal::Detached })
                }
                Err(e) => return Err(e),
            }
            if chooser {
                self.state.lock().unwrap().dialogs.chooser = None;
            }
            Ok(())
        })
        .await
    }
}

/// Record a chooser the page opened (from `Page.fileChooserOpened`).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_directory() {
        let base = std::env::temp_dir().join(format!("sightline-fileroot-{}", std::process::id()));
        let dir = base.join("files");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.txt"), "a").unwrap();
        std::fs::write(dir.join("sub/b.txt"), "b").unwrap();
        std::fs::write(base.join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(base.join("secret.txt"), dir.join("escape.txt")).unwrap();
        std::os::unix::fs::symlink(dir.join("a.txt"), dir.join("inner.txt")).unwrap();
        let root = FileRoot::new(&dir).unwrap();
        assert_eq!(root.resolve("a.txt").unwrap(), root.dir().join("a.txt"));
        assert_eq!(root.resolve("sub/../sub/b.txt").unwrap(), root.dir().join("sub/b.txt"));
        assert_eq!(root.resolve("inner.txt").unwrap(), root.dir().join("a.txt"));
        let abs = root.dir().join("a.txt");
        assert!(root.resolve(abs.to_str().unwrap()).is_ok());
        assert!(matches!(root.resolve("../secret.txt"), Err(FileError::Outside { .. })));
        assert!(matches!(root.resolve("sub/../../secret.txt"), Err(FileError::Outside { .. })));
        assert!(matches!(root.resolve(base.join("secret.txt").to_str().unwrap()), Err(FileError::Outside { .. })));
        assert!(matches!(root.resolve("/etc/passwd"), Err(FileError::Outside { .. })));
        assert!(matches!(root.resolve("escape.txt"), Err(FileError::Outside { .. })));
        assert!(matches!(root.resolve("nope.txt"), Err(FileError::Missing { .. })));
        assert!(matches!(root.resolve("sub"), Err(FileError::NotAFile { .. })));
        assert!(matches!(root.resolve(""), Err(FileError::Empty)));
        let _ = std::fs::remove_dir_all(&base);
    }
}
