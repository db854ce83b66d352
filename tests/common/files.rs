//! Helpers of the file tests (uploads and downloads), shared by `files.rs` and `pack_files.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sightline_browser::{Download, DownloadState, Downloads};

/// A fresh directory of this test's own, under the binary's [`super::test_root`]
/// (removed when the binary exits).
pub fn scratch(name: &str) -> PathBuf {
    super::fresh_dir(&format!("files-{name}"))
}

/// Bytes no text file has: every value, twice.
pub fn binary() -> Vec<u8> {
    (0..512u32).map(|i| (i % 256) as u8).collect()
}

/// The upload directory of a test: `files/` with `report.bin`, `photo.png` and
/// `notes.txt`, a symlink out of it, and a secret beside it.
pub fn upload_dir(name: &str) -> PathBuf {
    let base = scratch(name);
    let files = base.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("report.bin"), binary()).unwrap();
    std::fs::write(files.join("photo.png"), b"not really a png").unwrap();
    std::fs::write(files.join("notes.txt"), b"notes").unwrap();
    std::fs::write(base.join("secret.txt"), b"secret").unwrap();
    std::os::unix::fs::symlink(base.join("secret.txt"), files.join("link.txt")).unwrap();
    files
}

/// Wait until no download is in progress and at least `n` are known (a liveness guard, not a time limit).
pub async fn downloads_settled(d: &Downloads, n: usize) -> Vec<Download> {
    for _ in 0..600 {
        d.wait_idle(Duration::from_millis(100)).await;
        let list = d.list();
        if list.len() >= n && list.iter().all(|x| x.state != DownloadState::InProgress) {
            return list;
        }
    }
    panic!("downloads never settled: {:?}", d.list());
}

/// The bytes the fixture server's `GET /download?bytes=N` sends.
pub fn expected_download(n: u64) -> Vec<u8> {
    (0..n).map(sightline_testkit::download_byte).collect()
}

/// Files in a directory, hidden ones (the staging directory) left out.
pub fn visible_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}
