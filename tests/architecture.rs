//! The dependency rules of ARCHITECTURE.md, read from the crates' manifests.

use std::collections::BTreeSet;
use std::path::Path;

/// The `sightline-*` crates a manifest depends on (normal dependencies only);
/// `""` is the product's own manifest, the root one.
fn deps_of(krate: &str) -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest =
        if krate.is_empty() { root.join("Cargo.toml") } else { root.join("crates").join(krate).join("Cargo.toml") };
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
    for leaf in ["page", "cdp", "policy", "testkit"] {
        assert_eq!(deps_of(leaf), set(&[]), "{leaf} depends on no crate of ours");
    }
    // The page model is pure (no browser, no I/O): the pack takes its Mark type and drawing from it.
    assert_eq!(deps_of("pack"), set(&["page", "policy"]), "pack knows no browser crate");
    // One sandbox: the tool API's `run` runs its scripts on the pack's engine (its
    // `run_hosted`), never a second JavaScript engine; the agent draws marks with the page model.
    assert!(deps_of("api").contains("pack"), "api's run tool uses the pack's sandbox");
    assert!(!deps_of("agent").contains("pack"), "agent does not link the pack's JavaScript engine to draw marks");
    assert_eq!(deps_of("browser"), set(&["cdp", "page"]));
    assert!(!deps_of("api").contains("cdp"), "api reaches the browser only through browser");
    // Test support and the benchmark ship in no product crate: the fixture server
    // and LocalGrid reach the product only as its dev-dependency, the bench never.
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let krate = entry.file_name().into_string().unwrap();
        if krate != "bench" {
            assert!(!deps_of(&krate).contains("testkit"), "{krate} does not use the test-support crate");
            assert!(!deps_of(&krate).contains("bench"), "{krate} does not use the benchmark");
        }
    }
    assert!(!deps_of("").contains("testkit"), "the sightline binary uses testkit only in its tests");
    assert!(!deps_of("").contains("bench"), "the sightline binary has no benchmark in it");
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

/// The `.rs` files of every crate (`crates/*/src`) and of the binary (`src`),
/// as (path from the repository root, text without the unit-test module).
fn all_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec!["src".to_string()];
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        dirs.push(format!("crates/{}/src", entry.file_name().into_string().unwrap()));
    }
    let mut out: Vec<(String, String)> = dirs
        .iter()
        .flat_map(|d| sources(d))
        .map(|(p, mut t)| {
            // The code, without its unit tests (a test module sits at the end).
            t.truncate(t.find("\n#[cfg(test)]\nmod ").unwrap_or(t.len()));
            (p.strip_prefix(&format!("{}/", root.display())).unwrap_or(&p).to_string(), t)
        })
        .collect();
    out.sort();
    out
}

/// The text of the expression starting at `from`, up to the first `,` or
/// unmatched closing bracket outside string literals.
fn expression_at(text: &str, from: usize) -> String {
    let (mut depth, mut in_str, mut escaped) = (0i32, false, false);
    for (i, c) in text[from..].char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return text[from..from + i].trim().to_string(),
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return text[from..from + i].trim().to_string(),
            _ => {}
        }
    }
    text[from..].trim().to_string()
}

/// Every `Runtime.evaluate` any crate sends that is not in the isolated world
/// (`eval_isolated`), as `(file, first argument)`, is one of the list below:
/// each needs the page's main world (the probe's reads, the liveness check).
#[test]
fn scripts_run_in_the_isolated_world_except_the_listed_ones() {
    let mut main_world = BTreeSet::new();
    for (file, text) in all_sources() {
        for (at, _) in text.match_indices("Evaluate::new(") {
            let before = &text[text[..at].rfind(';').unwrap_or(0)..at];
            if before.contains("eval_isolated(") {
                continue;
            }
            let arg: String = text[at + "Evaluate::new(".len()..].chars().take_while(|c| *c != ')').collect();
            main_world.insert(format!("{file}: {arg}"));
        }
    }
    let allowed = set(&[
        "crates/browser/src/capture.rs: &pointer_list",
        "crates/browser/src/settle.rs: \"window.__sightline && window.__sightline.mark(",
        "crates/browser/src/settle.rs: expression",
        "crates/browser/src/liveness.rs: \"0\"",
        "crates/browser/src/selectors.rs: expression",
        "crates/browser/src/storage.rs: script",
        "crates/browser/src/walk.rs: COUNT",
        "crates/browser/src/walk.rs: &read",
        "crates/browser/src/walk.rs: ORDINALS",
        // The bench's floor of a viewport read: one plain evaluate, as any tool would send it.
        "crates/bench/src/measure.rs: WALK_FLOOR",
    ]);
    assert_eq!(main_world, allowed, "main-world scripts: add a new one here, with why it needs the page's main world");
}

/// `Runtime.callFunctionOn` runs in the world of the object it is called on.
/// Every function Sightline calls that way, in any crate, is one of these fixed
/// functions (a constant or a literal, never a caller's text), listed below
/// with its world.
#[test]
fn functions_called_on_page_objects_are_the_listed_ones() {
    let mut called = BTreeSet::new();
    for (file, text) in all_sources() {
        if file.starts_with("crates/cdp/src/protocol") {
            continue; // the command's definition
        }
        for (at, _) in text.match_indices("CallFunctionOn {") {
            let body = &text[at..];
            let Some(f) = body.find("function_declaration:") else { continue };
            called.insert(format!("{file}: {}", expression_at(body, f + "function_declaration:".len())));
        }
        // `Tab::call_on(session, object, function, args)`: its third argument.
        for (at, _) in text.match_indices(".call_on(") {
            let mut from = at + ".call_on(".len();
            for _ in 0..2 {
                from += expression_at(&text, from).len();
                from += text[from..].find(',').unwrap() + 1;
            }
            called.insert(format!("{file}: call_on {}", expression_at(&text, from)));
        }
    }
    let allowed = set(&[
        // isolated: `document` comes from `eval_isolated`, the element from that query
        "crates/browser/src/selectors.rs: \"function (s) { return this.querySelector(s); }\"",
        "crates/browser/src/selectors.rs: DESCRIBE",
        "crates/browser/src/selectors.rs: call_on f", // one of two literals, chosen by a bool
        "crates/browser/src/selectors.rs: call_on \"function () { this.scrollIntoView({ block: 'center', inline: 'center' }); }\"",
        // isolated; a node of a cross-origin same-process frame: its frame's main world
        "crates/browser/src/capture.rs: READ",
        "crates/browser/src/tab/mod.rs: \"function(){return this.isConnected}\"",
        "crates/browser/src/actions/mod.rs: f", // `call_on` itself, below
        "crates/browser/src/actions/pointer.rs: call_on \"function(){return this.isConnected ? 'yes' : 'no'}\"",
        "crates/browser/src/actions/pointer.rs: call_on ON_TOP",
        "crates/browser/src/actions/pointer.rs: call_on SHAPE_POINT",
        "crates/browser/src/press.rs: call_on FOCUS",
        "crates/browser/src/actions/typing.rs: call_on PREPARE_TYPING",
        "crates/browser/src/actions/pointer.rs: call_on SELECT_OPTION",
    ]);
    assert_eq!(called, allowed, "functions called on page objects: add a new one here, with its world");
}

/// Nothing agent-supplied is evaluated in the page, except the pack's
/// `browser.eval(code)`: the main-world `Tab::eval_json` is called with a
/// caller's text only by the pack's driver, and `Tab::evaluate` (the same, for
/// the tool API's fixed reads) only with string literals.
#[test]
fn only_the_pack_evaluates_a_callers_text() {
    for (file, text) in all_sources() {
        if file.starts_with("crates/browser/src") {
            continue; // where both are defined
        }
        for (at, _) in text.match_indices(".eval_json(") {
            assert_eq!(file, "crates/chrome/src/lib.rs", "{file} calls eval_json at {at}: only the pack's eval may");
        }
        for (at, _) in text.match_indices(".evaluate(") {
            let arg = expression_at(&text, at + ".evaluate(".len());
            assert!(arg.starts_with('"'), "{file} evaluates {arg} in the page: only string literals");
        }
    }
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
    for (file, text) in all_sources() {
        for h in by_hand {
            assert!(!text.contains(h), "{file} splits a URL by hand ({h}); parse it with the url crate");
        }
    }
}

/// Error codes come from matching on typed variants, never from reading
/// messages, in every crate (the script sandbox knows it ran out of memory
/// from its own allocator, `pack::alloc`, not from QuickJS's words).
#[test]
fn error_codes_are_not_read_from_messages() {
    let reads = [
        "message.contains(",
        "to_string().contains(",
        "msg.contains(",
        "to_string().starts_with(",
        "reason.starts_with(",
        "\"out of memory\")",
    ];
    // (Unit tests are left out: they may throw the words on purpose.)
    for (file, text) in all_sources() {
        for h in reads {
            let hits = text.lines().filter(|l| l.contains(h) && !l.trim_start().starts_with("//")).count();
            assert!(hits == 0, "{file} decides on an error's text ({h}); match its variant");
        }
    }
}

/// The CDP client keeps an error's cause as its `#[source]`, never as text
/// (`detail: e.to_string()`), so a caller can still ask what went wrong.
#[test]
fn cdp_errors_keep_their_cause() {
    for (file, text) in sources("crates/cdp/src") {
        assert!(!text.contains("detail: e.to_string()"), "{file} turns a cause into text; keep it as #[source]");
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

/// ARCHITECTURE.md cites limits by name (`settle::UNRESPONSIVE_AFTER`), not by
/// value, so it cannot drift: every `module::NAME` it names in backticks, with
/// `NAME` in capitals, is a `const` or `static` of a `module.rs` in some crate.
#[test]
fn constants_the_map_names_exist() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).unwrap();
    let sources = all_sources();
    let mut named = 0;
    for quoted in doc.split('`').skip(1).step_by(2) {
        let Some((module, name)) = quoted.rsplit_once("::") else { continue };
        let module = module.rsplit("::").next().unwrap();
        let is_const =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !is_const || module.is_empty() || !module.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            continue;
        }
        named += 1;
        let found = sources.iter().any(|(file, text)| {
            (file.ends_with(&format!("/{module}.rs")) || file.ends_with(&format!("/{module}/mod.rs")))
                && (text.contains(&format!("const {name}:")) || text.contains(&format!("static {name}:")))
        });
        assert!(found, "ARCHITECTURE.md names `{module}::{name}`, which no {module}.rs defines");
    }
    assert!(named >= 10, "ARCHITECTURE.md cites its limits by name ({named} found)");
}

/// Every `.rs` file of the repository's own code and tests, with its whole text
/// (unit tests included: the map may name one).
fn code_and_tests() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec!["src".to_string(), "tests".to_string()];
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let krate = entry.file_name().into_string().unwrap();
        for sub in ["src", "tests"] {
            if root.join("crates").join(&krate).join(sub).is_dir() {
                dirs.push(format!("crates/{krate}/{sub}"));
            }
        }
    }
    dirs.iter().flat_map(|d| sources(d)).collect()
}

fn is_type_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric())
        && s.chars().any(|c| c.is_ascii_lowercase())
}

fn is_snake(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// ARCHITECTURE.md names only what exists: every path in backticks is a file or
/// folder of the repository; every type (`PageView`, `Tab::settle`'s `Tab`) is
/// defined by some crate; every `x::y` names a function, module, type or test
/// that exists; every macro (`tools!`) is defined. And it cites no limit by value
/// (a number with a unit), only by its constant's name.
#[test]
fn the_map_names_only_what_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let lines = doc.lines().count();
    assert!(lines <= 250, "ARCHITECTURE.md is a map one reads in a sitting: {lines} lines");
    let code = code_and_tests();
    let defines_type = |name: &str| {
        ["struct ", "enum ", "trait ", "type ", "union "].iter().any(|k| {
            let needle = format!("{k}{name}");
            code.iter().any(|(_, t)| {
                t.match_indices(&needle)
                    .any(|(at, _)| !t[at + needle.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
            })
        })
    };
    let defines_item = |name: &str| {
        [format!("fn {name}("), format!("fn {name}<"), format!("mod {name};"), format!("mod {name} {{")]
            .iter()
            .any(|n| code.iter().any(|(_, t)| t.contains(n.as_str())))
            || code.iter().any(|(f, _)| f.ends_with(&format!("/{name}.rs")) || f.ends_with(&format!("/{name}/mod.rs")))
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    // Code blocks hold pictures, not names.
    let prose: String = doc.split("```").step_by(2).collect::<Vec<_>>().join("\n");
    for quoted in prose.split('`').skip(1).step_by(2) {
        let q = quoted.trim();
        if q.contains(' ') || q.starts_with('-') || q.starts_with('.') {
            continue; // a command line, a flag, a method of CDP's
        }
        let ok = if q.contains('/') || [".rs", ".js", ".html", ".txt", ".md", ".toml"].iter().any(|e| q.ends_with(e)) {
            root.join(q).exists()
        } else if let Some(name) = q.strip_suffix('!') {
            code.iter().any(|(_, t)| t.contains(&format!("macro_rules! {name}")))
        } else if q.contains("::") {
            let last = q.rsplit("::").next().unwrap();
            let first = q.split("::").next().unwrap();
            if last.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
                continue; // a constant: `constants_the_map_names_exist`
            }
            let head_ok = !is_type_name(first) || defines_type(first);
            let last_ok = if is_type_name(last) {
                defines_type(last)
                    || code.iter().any(|(_, t)| {
                        t.contains(&format!("{last},"))
                            || t.contains(&format!("{last} {{"))
                            || t.contains(&format!("{last}("))
                    })
            } else if is_snake(last) {
                defines_item(last)
            } else {
                true
            };
            head_ok && last_ok
        } else if is_type_name(q) {
            defines_type(q)
        } else {
            continue;
        };
        checked += 1;
        if !ok {
            wrong.push(q.to_string());
        }
    }
    assert!(wrong.is_empty(), "ARCHITECTURE.md names what does not exist: {wrong:?}");
    assert!(checked >= 60, "ARCHITECTURE.md names its parts ({checked} checked)");
    // Limits by name only: no number with a unit of time or size in the prose.
    let units = ["ms", "s", "KiB", "MiB", "GiB", "KB", "MB", "px", "minutes", "seconds"];
    let words: Vec<&str> = prose.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',').collect();
    for w in words.windows(2) {
        let number = w[0].trim_end_matches(['.', ';']);
        if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '_' || c == '.') {
            let unit = w[1].trim_end_matches(['.', ';', ':']);
            assert!(
                !units.contains(&unit),
                "ARCHITECTURE.md cites a limit by value: `{} {}`; name its constant",
                w[0],
                w[1]
            );
        }
    }
    for w in words {
        let digits = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_' || c == '.');
        let glued = digits.len() < w.len() && units.contains(&digits.trim_end_matches(['.', ';', ':']));
        assert!(!glued, "ARCHITECTURE.md cites a limit by value: `{w}`; name its constant");
    }
}

/// One owner per concern, in modules one reads in a sitting: no source file's
/// code (its unit tests left out) is over 600 lines.
#[test]
fn no_source_file_is_over_600_lines() {
    let long: Vec<String> = all_sources()
        .into_iter()
        .filter(|(_, text)| text.lines().count() > 600)
        .map(|(file, text)| format!("{file}: {}", text.lines().count()))
        .collect();
    assert!(long.is_empty(), "split by topic: {long:?}");
}
