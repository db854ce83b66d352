//! The faults the soak injects (a full disk, signals to processes found under /proc, the Grid's slots) and what is left after it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{download, Order, Outcome, Soak, FIRST, GRACE, KINDS, STALL};
use crate::serve::{call, processes};

/// A small download shows which directory is this session's; a 64 KiB tmpfs goes
/// on its staging directory (where Chromium writes), and a 1 MiB download must
/// fail, typed, with the session still answering. Without root the staging
/// directory is made read-only instead.
pub(super) fn full_disk(soak: &Soak, agent: &ureq::Agent, s: &str) -> Outcome {
    let (o, state) = download(soak, agent, s, 16);
    if state.as_deref() != Some("done") {
        return o;
    }
    let Outcome::Ok(v) = &o else { return o };
    let Some(staging) = staging_of(v) else {
        soak.tally.lock().unwrap().skipped.push("full disk: the session's download directory was not found".into());
        return o;
    };
    let mounted = if soak.root {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&staging)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            soak.tally.lock().unwrap().skipped.push("full disk: mount -t tmpfs failed (no CAP_SYS_ADMIN?)".into());
            return o;
        }
        true
    } else {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o555));
        false
    };
    let (o, state) = download(soak, agent, s, 1 << 20);
    soak.log(&format!("full disk: a 1 MiB download into a full {}: {state:?}", staging.display()));
    if state.as_deref() == Some("done") {
        soak.tally
            .lock()
            .unwrap()
            .causes
            .push(format!("full disk: a 1 MiB download into {} succeeded", staging.display()));
    }
    if mounted {
        unmount(&staging);
    } else {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o755));
    }
    o
}

/// The staging directory (`.sightline-partial-*`) beside the session's finished download.
pub(super) fn staging_of(list: &Value) -> Option<PathBuf> {
    let name = list["downloads"].as_array()?.iter().rev().find(|d| d["state"] == "done")?["name"].as_str()?.to_string();
    // The finished file's directory: found under the soak's TMPDIR (the browser's profile is there).
    let file = find_file(&std::env::temp_dir(), &name, 6)?;
    let dir = file.parent()?;
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(".sightline-partial-"))
        .map(|e| e.path())
}

pub(super) fn find_file(dir: &Path, name: &str, depth: usize) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let ft = e.file_type().ok()?;
        if ft.is_file() && e.file_name() == name {
            return Some(p);
        }
        if ft.is_dir() && depth > 0 {
            if let Some(f) = find_file(&p, name, depth - 1) {
                return Some(f);
            }
        }
    }
    None
}

pub(super) fn unmount(dir: &Path) {
    for _ in 0..20 {
        if std::process::Command::new("umount").arg(dir).status().is_ok_and(|s| s.success()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = std::process::Command::new("umount").arg("-l").arg(dir).status();
}

/// The command line of a process, as its arguments.
pub(super) fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
        })
        .unwrap_or_default()
}

/// Every descendant of `root`.
pub(super) fn descendants(root: i32) -> Vec<i32> {
    let procs = processes();
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for (pid, (ppid, _)) in &procs {
            if *ppid == p {
                out.push(*pid);
                stack.push(*pid);
            }
        }
    }
    out
}

/// The browser the launched sessions run in: a child of this process without `--type=`.
pub(super) fn launched_browser() -> Option<i32> {
    let me = std::process::id() as i32;
    processes().into_iter().filter(|(_, (ppid, _))| *ppid == me).map(|(pid, _)| pid).find(|pid| {
        let c = cmdline(*pid);
        c.iter().any(|a| a.starts_with("--user-data-dir")) && !c.iter().any(|a| a.starts_with("--type="))
    })
}

pub(super) fn signal(pid: i32, sig: &str) -> bool {
    std::process::Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().is_ok_and(|s| s.success())
}

/// The injector: one fault every `period`, round robin over the kinds.
pub(super) fn inject(soak: &Soak, period: Duration, launched: usize, grid: Option<i32>, only: &[String]) {
    let mut kinds =
        vec!["renderer crash", "client disconnect", "cdp stall", "event flood", "browser killed", "full disk"];
    if grid.is_some() {
        kinds.push("grid slot lost");
    }
    if !only.is_empty() {
        kinds.retain(|k| only.iter().any(|o| KINDS.iter().any(|(short, long)| short == o && long == k)));
    }
    if kinds.is_empty() {
        return;
    }
    let mut n = 0usize;
    std::thread::sleep(FIRST);
    loop {
        if Instant::now() + GRACE >= soak.end {
            return;
        }
        let kind = kinds[n % kinds.len()];
        let target = n % launched.max(1);
        n += 1;
        let period = period.saturating_sub(if kind == "cdp stall" { STALL } else { Duration::ZERO });
        let start = Instant::now();
        let skip = |why: &str| soak.tally.lock().unwrap().skipped.push(format!("{kind}: {why}"));
        match kind {
            "renderer crash" => {
                // A zygote's children rewrite their command line as one string: search it whole.
                let renderers: Vec<i32> = launched_browser()
                    .map(descendants)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|p| cmdline(*p).join(" ").contains("--type=renderer"))
                    .collect();
                let r = renderers.get(n % renderers.len().max(1)).copied();
                match r {
                    Some(r) if signal(r, "KILL") => soak.note(kind, None, start),
                    _ => skip("no renderer found"),
                }
            }
            "browser killed" => match launched_browser() {
                Some(b) if signal(b, "KILL") => soak.note(kind, None, start),
                _ => skip("no browser running"),
            },
            "cdp stall" => match launched_browser() {
                Some(b) if signal(b, "STOP") => {
                    std::thread::sleep(STALL);
                    signal(b, "CONT");
                    soak.note(kind, None, start);
                }
                _ => skip("no browser running"),
            },
            "grid slot lost" => {
                let driver = grid.and_then(|g| {
                    descendants(g)
                        .into_iter()
                        .find(|p| cmdline(*p).first().is_some_and(|c| c.ends_with("chromedriver")))
                });
                match driver {
                    Some(d) if signal(d, "KILL") => {
                        for &w in &soak.grid_workers {
                            soak.note(kind, Some(w), start);
                        }
                    }
                    _ => skip("no chromedriver running"),
                }
            }
            other => {
                let order = match other {
                    "client disconnect" => Order::Disconnect,
                    "event flood" => Order::Flood,
                    _ => Order::FullDisk,
                };
                *soak.orders[target].lock().unwrap() = Some(order);
            }
        }
        std::thread::sleep(period);
    }
}

/// Chromium processes in the Grid's process group.
pub(super) fn grid_browsers(group: i32) -> Vec<String> {
    processes()
        .into_keys()
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let fields: Vec<&str> =
                stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
            fields.get(2) == Some(&group.to_string().as_str()) && fields.first() != Some(&"Z")
        })
        .map(|p| (p, cmdline(p).join(" ")))
        .filter(|(_, c)| c.contains("chromium") || c.contains("chrome "))
        .map(|(p, c)| format!("Grid browser process {p}: {c}"))
        .collect()
}

/// Slots the Grid holds (its `/status`), or None when it cannot be read.
pub(super) fn held_slots(url: &str) -> Option<usize> {
    let (_, v) = call(&Soak::agent(Duration::from_secs(10)), "GET", url, None).ok()?;
    let nodes = v["value"]["nodes"].as_array()?;
    Some(
        nodes
            .iter()
            .flat_map(|n| n["slots"].as_array().cloned().unwrap_or_default())
            .filter(|s| !s["session"].is_null())
            .count(),
    )
}

pub(super) fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

/// Entries of `dir`, and tmpfs mounts still under it.
pub(super) fn left_in(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> =
        std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path().display().to_string()).collect();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let d = dir.display().to_string();
    out.extend(
        mounts
            .lines()
            .filter_map(|l| l.split_whitespace().nth(4))
            .filter(|m| m.starts_with(&d))
            .map(|m| format!("mount {m}")),
    );
    out
}
