//! `--files DIR`, `--downloads DIR` and `--download-limit SIZE` → [`FileAccess`].

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use sightline_api::FileAccess;
use sightline_browser::{DownloadConfig, FileRoot, DEFAULT_MAX_BYTES};

use crate::cli::FileOpts;

/// `123`, `64K`, `100M`, `2G` (binary units) → bytes.
pub fn size(s: &str) -> Result<u64> {
    let t = s.trim();
    let (n, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 =
        n.trim().parse().with_context(|| format!("expected a size like 1048576, 512K, 100M or 2G, got {s:?}"))?;
    let bytes = n.checked_mul(mult).with_context(|| format!("size {s:?} is too large"))?;
    if bytes == 0 {
        bail!("the size must be positive, got {s:?}");
    }
    Ok(bytes)
}

/// What the operator allowed. `serve` gives each session its own directory
/// under `--downloads` (`dir_per_session`); a Grid browser's disk is not ours,
/// so it gets neither.
pub fn file_access(a: &FileOpts, grid: bool, dir_per_session: bool) -> Result<FileAccess> {
    if grid && (a.files.is_some() || a.downloads.is_some()) {
        bail!("--files/--downloads need a browser on this machine; they cannot be used with --grid");
    }
    let uploads = match &a.files {
        Some(d) => Some(Arc::new(FileRoot::new(d).with_context(|| format!("--files {}", d.display()))?)),
        None => None,
    };
    let max_bytes = match &a.download_limit {
        Some(s) => size(s).context("--download-limit")?,
        None => DEFAULT_MAX_BYTES,
    };
    if let Some(d) = &a.downloads {
        std::fs::create_dir_all(d).with_context(|| format!("--downloads {}", d.display()))?;
    }
    let downloads = (!grid).then(|| DownloadConfig { dir: a.downloads.clone(), max_bytes });
    Ok(FileAccess { uploads, downloads, dir_per_session })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(size("1048576").unwrap(), 1 << 20);
        assert_eq!(size("512K").unwrap(), 512 << 10);
        assert_eq!(size("100m").unwrap(), 100 << 20);
        assert_eq!(size("2G").unwrap(), 2 << 30);
        assert!(size("0").is_err());
        assert!(size("lots").is_err());
        assert!(size("99999999999999G").is_err());
    }
}
