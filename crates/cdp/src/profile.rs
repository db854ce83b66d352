//! A persistent profile directory (`--profile DIR`) and whether another
//! Chromium holds it.
//!
//! Chromium marks a profile it runs with by a `SingletonLock` symlink in it,
//! whose target is `HOSTNAME-PID`. A lock of this host whose process is alive
//! (or of another host, which we cannot check) means the profile is in use;
//! a lock whose process is gone is stale, and Chromium takes it over itself.

use std::path::Path;

use crate::CdpError;

/// Who holds a profile, as its `SingletonLock` says: (host, pid).
pub fn lock_holder(dir: &Path) -> Option<(String, i32)> {
    let target = std::fs::read_link(dir.join("SingletonLock")).ok()?;
    let target = target.to_string_lossy();
    let (host, pid) = target.rsplit_once('-')?;
    Some((host.to_string(), pid.parse().ok()?))
}

/// `Err(ProfileInUse)` when a live Chromium (or one on another host) holds `dir`.
pub fn check_profile_free(dir: &Path) -> Result<(), CdpError> {
    let Some((host, pid)) = lock_holder(dir) else { return Ok(()) };
    let ours = hostname();
    if host == ours && !alive(pid) {
        return Ok(());
    }
    Err(CdpError::ProfileInUse { dir: dir.to_path_buf(), host, pid })
}

/// Whether a process with this pid exists (signal 0 succeeds, or is refused for lack of permission).
fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only probes.
    unsafe { libc::kill(pid, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or truncates.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_of_a_live_process_holds_the_profile_and_a_stale_one_does_not() {
        let dir = std::env::temp_dir().join(format!("sightline-lock-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(check_profile_free(&dir).is_ok(), "no lock");
        let me = std::process::id() as i32;
        std::os::unix::fs::symlink(format!("{}-{me}", hostname()), dir.join("SingletonLock")).unwrap();
        assert_eq!(lock_holder(&dir), Some((hostname(), me)));
        match check_profile_free(&dir) {
            Err(CdpError::ProfileInUse { pid, .. }) => assert_eq!(pid, me),
            other => panic!("expected ProfileInUse, got {other:?}"),
        }
        std::fs::remove_file(dir.join("SingletonLock")).unwrap();
        // A pid that cannot exist (above the kernel's pid_max): stale.
        std::os::unix::fs::symlink(format!("{}-{}", hostname(), i32::MAX), dir.join("SingletonLock")).unwrap();
        assert!(check_profile_free(&dir).is_ok(), "a stale lock is Chromium's to take over");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
