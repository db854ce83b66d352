//! The page model's modules form layers: each module reads only modules of a
//! lower layer (through `crate::module`), so the rules can be read from the
//! bottom up and no two modules depend on each other.
//!
//! ```text
//! capture geometry index url   the input and plain values
//! arena                        the joined tree, hit test
//! text                         rendered text
//! aria                         roles, states, author-given names
//! facts                        labels, interactive candidates, the AX join
//! interactive                  the element index
//! content marks hash           page text, marks, the state hash
//! dialog draw                  the dialog's view, drawing marks
//! semantic                     semantic_v2 (and `PageView` in lib.rs)
//! delta                        changes between two semantic trees
//! ```

use std::collections::BTreeSet;
use std::path::Path;

const LAYERS: &[&[&str]] = &[
    &["capture", "geometry", "index", "url"],
    &["arena"],
    &["text"],
    &["aria"],
    &["facts"],
    &["interactive"],
    &["content", "marks", "hash"],
    &["dialog", "draw"],
    &["semantic"],
    &["delta"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `crate::name` a source file names, outside comments.
fn crate_paths(src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in src.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            // `crate::{A, B}` reads the crate root.
            let name = if name.is_empty() { "{…}".to_string() } else { name };
            out.insert(name);
        }
    }
    out
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn modules_only_read_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let modules: BTreeSet<String> = all
        .iter()
        .map(|p| {
            p.strip_prefix(&src).unwrap().iter().next().unwrap().to_str().unwrap().trim_end_matches(".rs").to_string()
        })
        .collect();
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for path in all {
        let rel = path.strip_prefix(&src).unwrap();
        let module = rel.iter().next().unwrap().to_str().unwrap().trim_end_matches(".rs").to_string();
        // The crate root, and the test support every module's tests use.
        if module == "lib" || module == "testing" {
            continue;
        }
        let Some(own) = layer(&module) else {
            wrong.push(format!("{}: module `{module}` has no layer in LAYERS", rel.display()));
            continue;
        };
        seen.insert(module.clone());
        let text = std::fs::read_to_string(&path).unwrap();
        for name in crate_paths(&text) {
            if name == module || name == "testing" {
                continue;
            }
            // An item of the crate root (`crate::PageView`, `crate::scroll_hint`): the
            // root builds the `PageView` from the layers up to `content`, so only
            // `semantic` and above may read it.
            if !modules.contains(&name) {
                if own < layer("semantic").unwrap() {
                    wrong.push(format!("{}: `{module}` reads the crate root's `{name}`", rel.display()));
                }
                continue;
            }
            match layer(&name) {
                Some(l) if l < own => {}
                _ => wrong.push(format!("{}: `{module}` reads `crate::{name}`", rel.display())),
            }
        }
    }
    assert!(wrong.is_empty(), "modules reading upwards or sideways:\n{}", wrong.join("\n"));
    assert!(seen.contains("aria") && seen.contains("semantic"), "the walk found the modules: {seen:?}");
}

#[test]
fn the_checker_sees_paths_outside_comments() {
    let found = crate_paths("use crate::aria::{role, state};\n// crate::semantic\nlet x = crate::text::cut(s);");
    assert_eq!(found, BTreeSet::from(["aria".to_string(), "text".to_string()]));
}
