//! Sightline as users install it: the artifacts `./x dist` writes to `target/dist`
//! (from one release build), each installed into a fresh folder and run.
//!
//! - The wheel, `pip install`ed into a new venv (with Gymnasium from the wheels
//!   `./x test` keeps in `.cache/dist-wheels`, no network): `sightline --version`,
//!   then `python/tests/check_wheel.py` drives a fixture page through
//!   `sightline.Env`, `sightline.Client` (over `sightline.Server`) and
//!   `gymnasium.make("sightline/Browser-v0")`.
//! - The two npm tarballs, installed offline into a new prefix: the official MCP
//!   Python client runs `npx sightline mcp` and reads a fixture page through it.
//! - `cargo install --locked --path .`, which `./x dist` ran into
//!   `target/dist-stage/cargo-root` against the same build: it installed the
//!   `sightline` binary and nothing else.
//!
//! `./x test` runs `./x dist` first. A missing artifact or tool fails with the
//! command that provides it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use serde_json::Value;
use sightline_testkit::Server;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const HOW: &str = "build them with `./x dist` (`./x test` does it before the tests)";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn dist_dir() -> PathBuf {
    repo().join("target/dist")
}

/// The one file of `target/dist` named `sightline-…` that `pred` accepts.
fn artifact(what: &str, pred: impl Fn(&str) -> bool) -> PathBuf {
    let dir = dist_dir();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("\n\n{} is missing ({e}): {HOW}\n\n", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| pred(n))
        .collect();
    match names.as_slice() {
        [one] => dir.join(one),
        [] => panic!("\n\nno {what} for version {VERSION} in {}: {HOW}\n\n", dir.display()),
        many => panic!("more than one {what} in {}: {many:?}", dir.display()),
    }
}

/// The npm platform word of this machine (the platform package's name part).
fn npm_platform() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "linux-x64",
        "aarch64" => "linux-arm64",
        other => panic!("no npm platform package is built for {other}"),
    }
}

/// A fresh folder for one test under cargo's temporary directory for tests.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dist-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `cmd`; its output when it succeeded, else a panic with both streams and `hint`.
fn run(cmd: &mut Command, hint: &str) -> Output {
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("\n\ncould not run {shown}: {e}\n{hint}\n\n"));
    if !out.status.success() {
        panic!(
            "\n\n{shown} failed ({}):\n--- stdout\n{}\n--- stderr\n{}\n{hint}\n\n",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fixture pages (`tests/fixtures`) on 127.0.0.1:0, served by a runtime that lives as long as the test.
fn fixture_site() -> (tokio::runtime::Runtime, Server) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let site = rt.block_on(Server::dir(repo().join("tests/fixtures"))).expect("fixture server");
    (rt, site)
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_its_python_client_and_gymnasium_env_drive_a_page() {
    let wheel = artifact("wheel", |n| {
        n.starts_with(&format!("sightline-{VERSION}-py3-none-manylinux_2_")) && n.ends_with(".whl")
    });
    let wheels = repo().join(".cache/dist-wheels");
    assert!(
        wheels.join("STAMP").exists(),
        "\n\n{} is missing: Gymnasium's wheels for the venv; `./x test` downloads them (pinned) from PyPI\n\n",
        wheels.display()
    );
    let dir = fresh_dir("wheel");
    let venv = dir.join("venv");
    let started = Instant::now();
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        "this test needs Python's venv module: sudo apt-get install -y python3-venv (./x test installs it)",
    );
    let python = venv.join("bin/python");
    run(
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--find-links"])
            .arg(&wheels)
            .arg(format!("{}[gymnasium]", wheel.display())),
        "pip could not install the wheel with Gymnasium from .cache/dist-wheels (./x test fills it)",
    );
    let installed = started.elapsed();

    // The binary is the wheel's, in the venv's scripts directory.
    let bin = venv.join("bin/sightline");
    let version = run(Command::new(&bin).arg("--version"), "the wheel did not install bin/sightline");
    assert_eq!(stdout(&version).trim(), format!("sightline {VERSION}"));

    let (_rt, site) = fixture_site();
    let base = site.url("");
    let script = repo().join("python/tests/check_wheel.py");
    // Run from the fresh folder, so `import sightline` can only be the installed package.
    let out = run(
        Command::new(&python).arg(&script).arg(&base).current_dir(&dir).env_remove("SIGHTLINE_BIN"),
        "the installed Python client failed (Chromium: sudo apt-get install -y chromium, or SIGHTLINE_CHROME)",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    eprintln!("dist wheel: venv + pip install {installed:.1?}, whole test {:.1?}", started.elapsed());

    let site_packages = v["module"].as_str().unwrap();
    assert!(site_packages.starts_with(venv.to_str().unwrap()), "imported {site_packages}, not the venv's");
    assert_eq!(v["version"], VERSION);
    assert_eq!(v["binary"], bin.to_str().unwrap(), "the package found another binary than the wheel's");
    assert_eq!(v["binary_version"], format!("sightline {VERSION}"));

    // sightline.Env
    assert_eq!(v["env_first_url"], format!("{base}/signin.html"));
    let first = v["env_first_content"].as_str().unwrap();
    assert!(first.starts_with("# Sign in\n") && first.contains("[1]textbox \"Email Address\""), "{first}");
    assert_eq!(v["env_typed_value"], "ada@example.com");
    assert_eq!(v["env_bad_index"]["code"], "INVALID_ELEMENT_INDEX");
    assert_eq!(v["env_bad_index"]["type"], "InvalidElementIndex");
    assert_eq!(v["env_bad_index"]["is_protocol_error"], true);
    assert_eq!(v["env_bad_index"]["state_unchanged"], true);
    assert_eq!(v["env_not_json"], "ACTION_VALIDATION_FAILED");
    assert!(v["env_after_click_url"].as_str().unwrap().contains("/welcome-back.html?email=ada%40example.com"));
    assert_eq!(v["env_after_click_content"], "# Welcome back\nada@example.com");
    assert_eq!(v["env_task"]["status"], "finished");
    assert_eq!(v["env_task"]["message"], "signed in");
    assert_eq!(v["env_after_end"], "TaskEnded");
    assert_eq!(v["env_exit"], 0);
    assert_eq!(v["env_closed_on_exception"], true);

    // sightline.Client over sightline.Server
    assert_eq!(v["serve_health"], "ok");
    assert_eq!(v["serve_first_url"], format!("{base}/signin.html"));
    assert_eq!(v["serve_typed_value"], "grace@example.com");
    assert_eq!(v["serve_bad_index"], "INVALID_ELEMENT_INDEX");
    assert_eq!(v["serve_outline_has_email"], true);
    assert_eq!(v["serve_sessions"], true);
    assert_eq!(v["serve_after_delete"]["status"], 404);
    assert_eq!(v["serve_after_delete"]["code"], "session_ended");
    assert_eq!(v["serve_after_delete"]["detail"]["reason"], "deleted");
    assert_eq!(v["serve_exit"], 0);

    // gymnasium.make("sightline/Browser-v0")
    assert_eq!(
        v["gym_obs_keys"],
        serde_json::json!(["element_index", "page_content", "screenshot", "state_hash", "url"])
    );
    assert_eq!(v["gym_obs_in_space"], true);
    assert_eq!(v["gym_reset_content"], v["env_first_content"]);
    assert_eq!(v["gym_info_state"], "State");
    assert_eq!(v["gym_step"]["value"], "gym@example.com");
    assert_eq!(v["gym_step"]["terminated"], false);
    assert_eq!(v["gym_step"]["truncated"], false);
    assert_eq!(v["gym_error"], "INVALID_ELEMENT_INDEX");
    assert_eq!(v["gym_finish"]["terminated"], true);
    assert_eq!(v["gym_finish"]["truncated"], false);
    assert_eq!(v["gym_finish"]["task"]["status"], "finished");

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_npm_tarballs_install_offline_and_npx_sightline_mcp_answers_the_official_mcp_client() {
    let platform = npm_platform();
    let launcher = artifact("npm package `sightline`", |n| n == format!("sightline-{VERSION}.tgz"));
    let binary = artifact(&format!("npm package `@sightline/{platform}`"), |n| {
        n == format!("sightline-{platform}-{VERSION}.tgz")
    });
    let dir = fresh_dir("npm");
    let started = Instant::now();
    run(
        Command::new("npm")
            .args(["install", "--offline", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(&binary)
            .arg(&launcher),
        "this test needs npm: sudo apt-get install -y npm (./x test installs it)",
    );
    let installed = started.elapsed();

    // No install script anywhere, and the platform package says where it runs.
    let modules = dir.join("node_modules");
    let manifest = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(modules.join(p).join("package.json")).unwrap()).unwrap()
    };
    let main = manifest("sightline");
    let plat = manifest(&format!("@sightline/{platform}"));
    for m in [&main, &plat] {
        for hook in ["preinstall", "install", "postinstall"] {
            assert!(m["scripts"][hook].is_null(), "{} has a {hook} script", m["name"]);
        }
    }
    assert_eq!(main["bin"]["sightline"], "bin/sightline.js");
    assert_eq!(main["optionalDependencies"][format!("@sightline/{platform}")], VERSION);
    assert_eq!(plat["os"], serde_json::json!(["linux"]));
    assert_eq!(plat["cpu"], serde_json::json!([platform.trim_start_matches("linux-")]));
    assert_eq!(plat["libc"], serde_json::json!(["glibc"]));

    let version = run(
        Command::new(modules.join(".bin/sightline")).arg("--version").env_remove("SIGHTLINE_BIN"),
        "the npm launcher did not run the platform package's binary",
    );
    assert_eq!(stdout(&version).trim(), format!("sightline {VERSION}"));

    let (_rt, site) = fixture_site();
    let script = repo().join("python/tests/check_npm_mcp.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&dir)
        .arg(site.url("/signin.html"))
        .env_remove("SIGHTLINE_BIN")
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'mcp'") {
        panic!("this test needs the official MCP client: python3 -m pip install mcp (./x test installs it)");
    }
    assert!(out.status.success(), "npx sightline mcp with the MCP client failed:\n{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    eprintln!("dist npm: npm install {installed:.1?}, whole test {:.1?}", started.elapsed());
    assert_eq!(v["server"], "sightline");
    let tools: Vec<&str> = v["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for t in ["get_browser_state", "browser_navigate", "browser_click"] {
        assert!(tools.contains(&t), "{t} missing from {tools:?}");
    }
    let outline = v["outline"].as_str().unwrap();
    assert!(outline.contains("textbox \"Email Address\"") && outline.contains("button \"Sign In\""), "{outline}");

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cargo_install_installs_the_sightline_binary_only_and_the_lock_file_is_committed() {
    // `./x dist` ran `cargo install --locked --offline --path . --root target/dist-stage/cargo-root`
    // after its release build (same profile, so it only copies the binary).
    let root = repo().join("target/dist-stage/cargo-root");
    let bins: Vec<String> = std::fs::read_dir(root.join("bin"))
        .unwrap_or_else(|e| panic!("\n\n{}/bin is missing ({e}): {HOW}\n\n", root.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    assert_eq!(bins, ["sightline"], "cargo install --path . installed more than the sightline binary");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(root.join(".crates2.json")).unwrap()).unwrap();
    let installs = record["installs"].as_object().unwrap();
    assert_eq!(installs.len(), 1, "{installs:?}");
    let (id, entry) = installs.iter().next().unwrap();
    assert!(id.starts_with(&format!("sightline {VERSION} (path+file://")), "{id}");
    assert_eq!(entry["bins"], serde_json::json!(["sightline"]));
    let version = run(Command::new(root.join("bin/sightline")).arg("--version"), "the installed binary does not run");
    assert_eq!(stdout(&version).trim(), format!("sightline {VERSION}"));

    // The root package: one binary target, and test support and the bench are no dependency of it.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let meta = run(
        Command::new(cargo)
            .args(["metadata", "--no-deps", "--format-version", "1", "--offline", "--manifest-path"])
            .arg(repo().join("Cargo.toml")),
        "cargo metadata failed",
    );
    let meta: Value = serde_json::from_slice(&meta.stdout).unwrap();
    let pkg = meta["packages"].as_array().unwrap().iter().find(|p| p["name"] == "sightline").expect("root package");
    let bin_targets: Vec<&str> = pkg["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bin_targets, ["sightline"]);
    for dep in pkg["dependencies"].as_array().unwrap() {
        let name = dep["name"].as_str().unwrap();
        if name == "sightline-testkit" || name == "sightline-bench" {
            assert_eq!(dep["kind"], "dev", "{name} must stay out of the installed binary");
        }
    }

    // `--locked` needs the lock file in the repository.
    run(
        Command::new("git").args(["ls-files", "--error-unmatch", "Cargo.lock"]).current_dir(repo()),
        "Cargo.lock is not committed: `cargo install --locked` would have nothing to hold to",
    );
}
