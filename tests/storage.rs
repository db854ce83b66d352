//! Signed-in sessions (issue 21, part 3): cookies and localStorage saved in
//! Playwright's storageState format and restored into a fresh context, per
//! session in `serve`; persistent `--profile` directories and their lock.
//!
//! The fixture `account.html` is signed in when it has both a `sid` cookie
//! and a `token` in localStorage (its button sets them).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};
use sightline_browser::{Browser, BrowserOptions, StorageState, TabOptions};
use sightline_cdp::{CdpError, LaunchOptions};
use sightline_server::{BrowserSource, HubConfig};

const SIGNED_IN: &str = "Signed in as ada with tok-ada";

fn temp(name: &str) -> std::path::PathBuf {
    // Under the test binary's own root, removed at exit.
    let dir = common::test_root().join("storage");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// What account.html says in a tab of `context`.
async fn status_in(browser: &Browser, context: &sightline_browser::BrowserContextId) -> String {
    let tab = browser.new_tab_in(context, TabOptions::default()).await.unwrap();
    tab.navigate(&url("/account.html")).await.unwrap();
    let v = tab.evaluate("document.getElementById('status').textContent").await.unwrap();
    tab.close().await;
    v.as_str().unwrap().to_string()
}

#[test]
fn a_sign_in_saved_in_one_context_lands_signed_in_in_a_fresh_one() {
    run(async {
        let mut env = env("/account.html").await;
        assert!(env.state().page_content.contains("Signed out"), "{}", env.state().page_content);
        let button = by_text(env.state(), "Sign in");
        let s = step(&mut env, json!({ "action": "click_element", "element_index": button })).await;
        assert!(s.state.page_content.contains(SIGNED_IN), "{}", s.state.page_content);
        let browser = &world().browser;
        let context = env.tab().context_id().unwrap().clone();
        let saved = browser.save_storage(&context, &[]).await.unwrap();
        let file = temp("signed-in.json");
        let _ = std::fs::remove_file(&file);
        sightline_browser::write_storage_file(&file, &saved).unwrap();
        assert_eq!(mode(&file), 0o600, "a storage file holds secrets");
        // Playwright's format, field for field.
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let sid = v["cookies"].as_array().unwrap().iter().find(|c| c["name"] == "sid").expect("the sid cookie");
        for k in ["name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite"] {
            assert!(sid.get(k).is_some(), "cookie field {k} missing: {sid}");
        }
        assert_eq!(v["origins"][0]["origin"], url("").trim_end_matches('/'));
        assert_eq!(v["origins"][0]["localStorage"], json!([{ "name": "token", "value": "tok-ada" }]));

        let restored = sightline_browser::read_storage_file(&file).unwrap();
        let fresh = browser.new_context().await.unwrap();
        browser.restore_storage(&fresh, &restored).await.unwrap();
        assert_eq!(status_in(browser, &fresh).await, SIGNED_IN);
        // A context without it is signed out: the state, not the browser, carries the sign-in.
        let other = browser.new_context().await.unwrap();
        assert_eq!(status_in(browser, &other).await, "Signed out");
        let _ = std::fs::remove_file(&file);
    })
}

#[test]
fn a_file_that_existed_with_wider_permissions_is_narrowed_to_0600() {
    let file = temp("wide.json");
    std::fs::write(&file, "{}").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    sightline_browser::write_storage_file(&file, &StorageState::default()).unwrap();
    assert_eq!(mode(&file), 0o600);
    assert_eq!(sightline_browser::read_storage_file(&file).unwrap(), StorageState::default());
    let _ = std::fs::remove_file(&file);
}

#[test]
fn the_tool_api_saves_a_state_and_a_new_session_starts_from_it() {
    run(async {
        let api = api();
        let a = ok(&api, "bind_browser", json!({ "session": "a" })).await;
        let addr =
            |s: &str, b: &Value| json!({ "session": s, "target_id": b["target_id"], "tab_id": b["tabs"][0]["tab_id"] });
        ok(&api, "get_state", addr("a", &a)).await;
        let mut act = addr("a", &a);
        act["action"] = json!({ "action": "navigate", "url": url("/account.html") });
        let s = ok(&api, "act", act.clone()).await;
        assert!(s["page_content"].as_str().unwrap().contains("Signed out"));
        act["action"] = json!({ "action": "click_element", "element_index": 1 });
        let s = ok(&api, "act", act).await;
        assert!(s["page_content"].as_str().unwrap().contains(SIGNED_IN), "{s}");
        let state = ok(&api, "save_storage_state", json!({ "session": "a" })).await;
        assert_eq!(state["origins"][0]["localStorage"][0]["value"], "tok-ada");

        // A session started from it lands signed in; one started without it does not see a's.
        let b = ok(&api, "bind_browser", json!({ "session": "b", "storage_state": state })).await;
        let c = ok(&api, "bind_browser", json!({ "session": "c" })).await;
        for (name, bound, want) in [("b", &b, SIGNED_IN), ("c", &c, "Signed out")] {
            ok(&api, "get_state", addr(name, bound)).await;
            let mut nav = addr(name, bound);
            nav["action"] = json!({ "action": "navigate", "url": url("/account.html") });
            let s = ok(&api, "act", nav).await;
            assert!(s["page_content"].as_str().unwrap().contains(want), "session {name}: {s}");
        }
        // What b saves includes the restored origin even after its tab left it.
        let mut away = addr("b", &b);
        away["action"] = json!({ "action": "navigate", "url": url("/kinds.html") });
        ok(&api, "act", away).await;
        let again = ok(&api, "save_storage_state", json!({ "session": "b" })).await;
        assert_eq!(again["origins"], state["origins"]);

        // Bad input: typed, naming where; the sessions are untouched.
        let e =
            fails(&api, "bind_browser", json!({ "session": "d", "storage_state": { "cookies": [{ "name": "x" }] } }))
                .await;
        assert_eq!(
            (e.code.as_str(), e.detail_json()["at"].as_str()),
            ("invalid_params", Some("cookies[0].value")),
            "{e:?}"
        );
        let e = fails(&api, "bind_browser", json!({ "session": "b", "storage_state": state })).await;
        assert_eq!(e.code.as_str(), "invalid_params", "a live session's context is not replaced without reconnect");
        assert!(e.message.contains("reconnect=true"), "{}", e.message);
        let e = fails(&api, "save_storage_state", json!({ "session": "d" })).await;
        assert_eq!(e.code.as_str(), "session_not_found");
        api.shutdown().await;
    })
}

#[test]
fn serve_sessions_start_from_their_own_state_and_never_see_anothers() {
    let srv = InProcServer::start(
        HubConfig { source: BrowserSource::Connect(browser_endpoint()), ..HubConfig::default() },
        None,
    );
    let post = |path: &str, body: Value| {
        let (s, v, _) = http("POST", &srv.url(path), Some(&body.to_string()), &[]);
        (s, v)
    };
    let content = |v: &Value| v["page_content"].as_str().unwrap_or_default().to_string();
    let (status, a) = post("/v1/sessions", json!({ "url": url("/account.html"), "screenshot": false }));
    assert_eq!(status, 201, "{a}");
    let a = a["session_id"].as_str().unwrap().to_string();
    let (_, signed) = post(&format!("/v1/sessions/{a}/act"), json!({ "action": "click_element", "element_index": 1 }));
    assert!(content(&signed).contains(SIGNED_IN), "{signed}");
    let (status, state) = post(&format!("/v1/sessions/{a}/tools/save_storage_state"), json!({}));
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["cookies"].as_array().map(Vec::len), Some(1), "{state}");

    // A second session does not see the first's cookies or storage.
    let (_, b) = post("/v1/sessions", json!({ "url": url("/account.html"), "screenshot": false }));
    assert!(content(&b["state"]).contains("Signed out"), "B sees A's sign-in: {b}");
    let b = b["session_id"].as_str().unwrap().to_string();
    let (_, b_state) = post(&format!("/v1/sessions/{b}/tools/save_storage_state"), json!({}));
    assert_eq!(b_state, json!({ "cookies": [], "origins": [] }));
    // A third one, started from A's state, lands signed in.
    let (status, c) =
        post("/v1/sessions", json!({ "url": url("/account.html"), "screenshot": false, "storage_state": state }));
    assert_eq!(status, 201, "{c}");
    assert!(content(&c["state"]).contains(SIGNED_IN), "{c}");
    // A malformed one is refused, naming what is wrong.
    let (status, bad) =
        post("/v1/sessions", json!({ "storage_state": { "origins": [{ "origin": "ftp://x", "localStorage": [] }] } }));
    assert_eq!((status, bad["error"]["code"].as_str()), (400, Some("invalid_params")), "{bad}");
    assert_eq!(bad["error"]["detail"]["at"], "origins[0].origin");
}

fn sightline(args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn env_saves_at_exit_and_state_starts_from_the_file() {
    world();
    let file = temp("env.json");
    let _ = std::fs::remove_file(&file);
    let page = url("/account.html");
    let f = file.to_str().unwrap();
    let click = "{\"action\":\"click_element\",\"element_index\":1}\n";
    let out = sightline(&["env", &page, "--no-screenshot", "--save-storage-state", f], click);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains(SIGNED_IN));
    assert_eq!(mode(&file), 0o600);
    let text = std::fs::read_to_string(&file).unwrap();
    // Never logged: the secrets are in the file only.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("tok-ada"));
    assert!(text.contains("tok-ada"));
    let out = sightline(&["state", &page, "--no-screenshot", "--storage-state", f], "");
    assert!(String::from_utf8_lossy(&out.stdout).contains(SIGNED_IN), "{}", String::from_utf8_lossy(&out.stdout));
    let out = sightline(&["state", &page, "--no-screenshot"], "");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Signed out"));

    // Malformed files: refused before any browser starts, naming what is wrong and no value.
    std::fs::write(&file, r#"{"cookies":[{"name":"sid","value":"s3cret","domain":"x","sameSite":"Sometimes"}]}"#)
        .unwrap();
    let out = sightline(&["state", &page, "--storage-state", f], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("cookies[0].sameSite") && err.contains("Sometimes") && !err.contains("s3cret"), "{err}");
    std::fs::write(&file, "{\"cookies\": [").unwrap();
    let out = sightline(&["state", &page, "--storage-state", f], "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not JSON"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = sightline(&["rpc", "--storage-state", "/nonexistent/state.json"], "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the storage state /nonexistent/state.json"));
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_profile_is_kept_and_refused_while_a_running_chromium_holds_it() {
    let dir = temp("profile");
    let _ = std::fs::remove_dir_all(&dir);
    let opts = |profile: &std::path::Path| BrowserOptions {
        launch: LaunchOptions { profile: Some(profile.to_path_buf()), ..Default::default() },
        connect: None,
    };
    run(async {
        // Sign in with the profile, close the browser: the profile stays, with the sign-in.
        let first = Browser::start(&opts(&dir)).await.unwrap();
        let ctx = first.session_context().await.unwrap();
        let tab = first.new_tab_in(&ctx, TabOptions::default()).await.unwrap();
        tab.navigate(&url("/account.html")).await.unwrap();
        tab.evaluate("document.getElementById('signin').click()").await.unwrap();
        tab.close().await;
        first.shutdown().await;
        assert!(dir.join("Default").is_dir(), "the profile was removed at exit");

        let second = Browser::start(&opts(&dir)).await.unwrap();
        let ctx = second.session_context().await.unwrap();
        assert_eq!(status_in(&second, &ctx).await, SIGNED_IN);

        // While it runs, the profile is refused, naming the process that holds it.
        let (_, holder) = sightline_cdp::lock_holder(&dir).expect("Chromium's SingletonLock");
        match Browser::start(&opts(&dir)).await {
            Err(sightline_browser::BrowserError::Cdp(CdpError::ProfileInUse { pid, .. })) => assert_eq!(pid, holder),
            Err(e) => panic!("expected ProfileInUse, got {e}"),
            Ok(_) => panic!("a held profile was launched twice"),
        }
        // SAFETY: signal 0 only probes.
        assert_eq!(unsafe { libc::kill(holder, 0) }, 0, "the lock names a live process");
        let out = sightline(&["state", &url("/account.html"), "--profile", dir.to_str().unwrap()], "");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(&format!("is in use by Chromium process {holder}")), "{err}");
        // Through the tool API it is a typed error.
        let api = sightline_api::Api::new(sightline_api::ApiOptions {
            browser: opts(&dir),
            tab: TabOptions::default(),
            storage_state: None,
        });
        let e = fails(&api, "bind_browser", json!({ "session": "p" })).await;
        assert_eq!(
            (e.code.as_str(), e.detail_json()["pid"].as_i64()),
            ("profile_in_use", Some(holder as i64)),
            "{e:?}"
        );
        second.shutdown().await;
        // Once it closed, the profile is free again.
        assert!(sightline_cdp::check_profile_free(&dir).is_ok());
    });
    let out = sightline(
        &["state", "http://127.0.0.1:1/", "--profile", dir.to_str().unwrap(), "--connect", "http://127.0.0.1:1"],
        "",
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--profile applies to a browser Sightline launches"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--profile` session downloads like any other: into `--downloads`, byte for byte.
#[test]
fn env_with_a_profile_downloads_into_the_named_directory() {
    world();
    let profile = temp("profile-downloads");
    let downloads = temp("profile-downloads-to");
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_dir_all(&downloads);
    std::fs::create_dir_all(&downloads).unwrap();
    let page = url("/files/download.html");
    let click = "{\"action\":\"click_element\",\"element_index\":1}\n";
    let args = [
        "env",
        &page,
        "--no-screenshot",
        "--profile",
        profile.to_str().unwrap(),
        "--downloads",
        downloads.to_str().unwrap(),
    ];
    let out = sightline(&args, click);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Downloaded: report.csv (300,000 bytes, done)"), "{stdout}");
    assert_eq!(files::visible_files(&downloads), ["report.csv"]);
    assert_eq!(std::fs::read(downloads.join("report.csv")).unwrap(), files::expected_download(300_000));
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_dir_all(&downloads);
}
