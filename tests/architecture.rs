//! The dependency rules of ARCHITECTURE.md, read from the crates' manifests.

use std::collections::BTreeSet;
use std::path::Path;

/// The `sightline-*` crates a manifest depends on (normal dependencies only).
fn deps_of(krate: &str) -> BTreeSet<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates").join(krate).join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut section = String::new();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if section == "[dependencies]" {
            if let Some(name) = line.split(['=', '.', ' ']).next().filter(|n| n.starts_with("sightline-")) {
                out.insert(name.trim_start_matches("sightline-").to_string());
            }
        }
    }
    out
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn dependencies_point_one_way() {
    for leaf in ["page", "cdp", "policy", "serve"] {
        assert_eq!(deps_of(leaf), set(&[]), "{leaf} depends on no crate of ours");
    }
    // The page model is pure (no browser, no I/O): the pack takes its Mark type and drawing from it.
    assert_eq!(deps_of("pack"), set(&["page", "policy"]), "pack knows no browser crate");
    for krate in ["api", "agent"] {
        assert!(!deps_of(krate).contains("pack"), "{krate} does not link the pack's JavaScript engine to draw marks");
    }
    assert_eq!(deps_of("browser"), set(&["cdp", "page"]));
    assert!(!deps_of("api").contains("cdp"), "api reaches the browser only through browser");
    for krate in ["api", "browser", "chrome", "agent", "server"] {
        assert!(!deps_of(krate).contains("serve"), "{krate} does not use the fixture server");
    }
}

#[test]
fn every_crate_applies_the_workspace_lints() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(text.contains("[lints]\nworkspace = true"), "{} applies [lints] workspace = true", manifest.display());
    }
}

/// Every `Runtime.evaluate` the browser layer sends that is not in the
/// isolated world (`eval_isolated`), as `(file, first argument)`: ARCHITECTURE.md's
/// table of scripts lists each, with why it needs the page's main world.
#[test]
fn scripts_run_in_the_isolated_world_except_the_listed_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/browser/src");
    let mut main_world = BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let name = entry.file_name().into_string().unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for (at, _) in text.match_indices("Evaluate::new(") {
            let before = &text[text[..at].rfind(';').unwrap_or(0)..at];
            if before.contains("eval_isolated(") {
                continue;
            }
            let arg: String = text[at + "Evaluate::new(".len()..].chars().take_while(|c| *c != ')').collect();
            main_world.insert(format!("{name}: {arg}"));
        }
    }
    let allowed = set(&[
        "capture.rs: COUNT",
        "capture.rs: \"window.__sightline.pointerElements(",
        "settle.rs: \"window.__sightline && window.__sightline.mark(",
        "settle.rs: expression",
        "settle.rs: \"0\"",
        "selectors.rs: expression",
        "storage.rs: script",
        "walk.rs: COUNT",
        "walk.rs: \"window.__sightline.clickElementsInView(",
    ]);
    assert_eq!(main_world, allowed, "main-world scripts: add a new one to ARCHITECTURE.md's table, and here");
}

/// The `.rs` files under a folder of the repository, with their text.
fn sources(dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out
}

/// The runner acts only through `Env`, like an external agent: it calls no
/// action or capture of the browser layer itself.
#[test]
fn the_runner_acts_only_through_env() {
    let direct = [
        ".click_count(",
        ".click_at(",
        ".type_text(",
        ".select_option(",
        ".hover(",
        ".navigate(",
        ".capture(",
        ".capture_with(",
        ".eval_json(",
        ".scroll(",
    ];
    for (file, text) in sources("crates/agent/src") {
        for d in direct {
            assert!(!text.contains(d), "{file} calls the browser layer directly ({d}); go through Env");
        }
    }
}

/// URLs that policy and routing decide on are parsed with the `url` crate,
/// never split by hand (a hand split disagrees with the browser on `\`, tabs,
/// userinfo and dot segments).
#[test]
fn urls_are_never_split_by_hand() {
    let by_hand = ["split(\"://\")", "split_once(\"://\")", "find(\"://\")", "split_once('@')"];
    for dir in
        ["crates/policy/src", "crates/api/src", "crates/server/src", "crates/browser/src", "crates/page/src", "src"]
    {
        for (file, text) in sources(dir) {
            for h in by_hand {
                assert!(!text.contains(h), "{file} splits a URL by hand ({h}); parse it with the url crate");
            }
        }
    }
}

/// Error codes come from matching on typed variants, never from reading messages.
#[test]
fn error_codes_are_not_read_from_messages() {
    for dir in ["crates/api/src", "crates/server/src"] {
        for (file, text) in sources(dir) {
            for h in ["message.contains(", "to_string().contains(", "msg.contains("] {
                assert!(!text.contains(h), "{file} decides on an error's text ({h}); match its variant");
            }
        }
    }
}

/// The page model does no I/O and nothing async: no runtime, no files, no sockets.
#[test]
fn the_page_model_is_pure() {
    for (file, text) in sources("crates/page/src") {
        for h in ["tokio", "async fn", "std::fs", "std::net", "std::process", "std::env"] {
            assert!(!text.contains(h), "{file} uses {h}: the page model is pure");
        }
    }
}
