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
