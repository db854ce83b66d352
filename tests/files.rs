//! Uploads and downloads against real Chromium and the fixture server
//! (`POST /upload` keeps what it receives, `GET /download` generates bytes).

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::files::*;
use common::*;
use serde_json::{json, Value};
use sightline_api::{Action, Env, EnvOptions, ErrorCode, FileAccess, StateObject};
use sightline_browser::{DownloadConfig, DownloadState, Downloads, FileRoot};

/// An environment on a fixture page with uploads from `files` and downloads per `downloads`.
async fn files_env(path: &str, files: Option<&Path>, downloads: Option<DownloadConfig>) -> (Env, Option<Downloads>) {
    let tab = tab().await;
    let ctx = tab.context_id().cloned().expect("own context");
    let d = match downloads {
        Some(cfg) => Some(Downloads::enable(&world().browser, &ctx, &cfg).await.expect("downloads")),
        None => None,
    };
    let mut env = Env::new(tab, EnvOptions { screenshot: false }).await.expect("env");
    env.set_files(files.map(|f| Arc::new(FileRoot::new(f).unwrap())), d.clone());
    let target = url(path);
    let first =
        env.step_action(Action::Navigate { url: target.clone() }, json!({"action": "navigate", "url": target})).await;
    assert!(first.state.error.is_none(), "{:?}", first.state.error);
    (env, d)
}

fn error_code(s: &StateObject) -> Option<ErrorCode> {
    s.error.as_ref().map(|e| e.code)
}

fn by_label(s: &StateObject, name: &str) -> u64 {
    find(s, &format!("input named {name:?}"), |d| d.tag == "input" && d.attributes.name.as_deref() == Some(name))
}

#[test]
fn an_upload_reaches_the_server_byte_for_byte() {
    run(async {
        let files = upload_dir("upload");
        let (mut env, _) = files_env("/files/upload.html", Some(&files), None).await;
        let report = by_label(env.state(), "report");
        assert!(env.state().page_content.contains("no-file"), "{}", env.state().page_content);
        let s = step(&mut env, json!({"action": "upload_file", "element_index": report, "paths": ["report.bin"]}))
            .await
            .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains(r#"file="report.bin""#), "the state shows the choice:\n{}", s.page_content);
        // Several files for a `multiple` input.
        let many = by_label(&s, "attachments");
        let s = step(
            &mut env,
            json!({"action": "upload_file", "element_index": many, "paths": ["notes.txt", "photo.png"]}),
        )
        .await
        .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let before = world().site.uploads().len();
        let send = by_text(&s, "Send");
        let s = step(&mut env, json!({"action": "click_element", "element_index": send})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("report.bin (512 bytes)"), "{}", s.page_content);
        let got = world().site.uploads();
        let got = &got[before..];
        let report = got.iter().find(|u| u.field == "report").expect("the report was posted");
        assert_eq!(report.filename, "report.bin");
        assert_eq!(report.bytes, binary(), "byte for byte");
        let names: Vec<&str> = got.iter().filter(|u| u.field == "attachments").map(|u| u.filename.as_str()).collect();
        assert_eq!(names, ["notes.txt", "photo.png"]);
    })
}

#[test]
fn refused_paths_and_elements_leave_the_state_unchanged() {
    run(async {
        let files = upload_dir("refused");
        let (mut env, _) = files_env("/files/upload.html", Some(&files), None).await;
        let report = by_label(env.state(), "report");
        let hash = env.state().state_hash.clone();
        let outside = files.parent().unwrap().join("secret.txt");
        for (paths, says) in [
            (json!(["../secret.txt"]), "outside the upload directory"),
            (json!([outside.to_str().unwrap()]), "outside the upload directory"),
            (json!(["/etc/passwd"]), "outside the upload directory"),
            (json!(["link.txt"]), "outside the upload directory"),
            (json!(["missing.pdf"]), "does not exist"),
            (json!(["report.bin", "../secret.txt"]), "outside the upload directory"),
        ] {
            let s =
                step(&mut env, json!({"action": "upload_file", "element_index": report, "paths": paths})).await.state;
            assert_eq!(error_code(&s), Some(ErrorCode::ActionValidationFailed), "{paths}: {:?}", s.error);
            assert!(s.error.as_ref().unwrap().message.contains(says), "{paths}: {:?}", s.error);
            assert_eq!(s.state_hash, hash, "state unchanged");
        }
        // Malformed paths are refused by validation.
        for bad in [json!([]), json!("report.bin"), json!([""]), json!([1])] {
            let s = step(&mut env, json!({"action": "upload_file", "element_index": report, "paths": bad})).await.state;
            assert_eq!(error_code(&s), Some(ErrorCode::ActionValidationFailed), "{bad}");
        }
        // Not a file input, and no chooser opened by it.
        let send = by_text(env.state(), "Send");
        let s = step(&mut env, json!({"action": "upload_file", "element_index": send, "paths": ["report.bin"]}))
            .await
            .state;
        assert_eq!(error_code(&s), Some(ErrorCode::ElementNotInteractive), "{:?}", s.error);
        assert!(s.error.as_ref().unwrap().message.contains("not a file input"), "{:?}", s.error);
        // Two files for an input that takes one.
        let s = step(
            &mut env,
            json!({"action": "upload_file", "element_index": report, "paths": ["report.bin", "notes.txt"]}),
        )
        .await
        .state;
        assert_eq!(error_code(&s), Some(ErrorCode::ElementNotInteractive), "{:?}", s.error);
        let s =
            step(&mut env, json!({"action": "upload_file", "element_index": 999, "paths": ["report.bin"]})).await.state;
        assert_eq!(error_code(&s), Some(ErrorCode::InvalidElementIndex));
        // Nothing was chosen, in the page either.
        assert_eq!(s.state_hash, hash);
        assert_eq!(eval(&env, "document.getElementById('report').files.length").await, 0);
        // The session goes on: a good upload still works.
        let s = step(&mut env, json!({"action": "upload_file", "element_index": report, "paths": ["report.bin"]}))
            .await
            .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        // Without --files, uploads are off.
        let (mut off, _) = files_env("/files/upload.html", None, None).await;
        let r = by_label(off.state(), "report");
        let s =
            step(&mut off, json!({"action": "upload_file", "element_index": r, "paths": ["report.bin"]})).await.state;
        assert_eq!(error_code(&s), Some(ErrorCode::ActionValidationFailed));
        assert!(s.error.as_ref().unwrap().message.contains("uploads are off"), "{:?}", s.error);
    })
}

#[test]
fn a_click_that_opens_a_file_chooser_does_not_block_and_the_agent_then_uploads() {
    run(async {
        let files = upload_dir("chooser");
        let (mut env, _) = files_env("/files/upload.html", Some(&files), None).await;
        let pick = by_text(env.state(), "Choose photo");
        let s = step(&mut env, json!({"action": "click_element", "element_index": pick})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let line = format!("[file chooser open for a file: send upload_file with element_index {pick} and the paths]");
        assert!(s.page_content.contains(&line), "{}", s.page_content);
        // The page is not blocked: it still answers and takes actions.
        assert_eq!(eval(&env, "1 + 1").await, 2);
        let s =
            step(&mut env, json!({"action": "upload_file", "element_index": pick, "paths": ["photo.png"]})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("Photo: photo.png 16"), "{}", s.page_content);
        assert!(!s.page_content.contains("file chooser open"), "answered: {}", s.page_content);
        // Answered once: the button opened no chooser now.
        let s2 =
            step(&mut env, json!({"action": "upload_file", "element_index": pick, "paths": ["photo.png"]})).await.state;
        assert_eq!(error_code(&s2), Some(ErrorCode::ElementNotInteractive));
        let before = world().site.uploads().len();
        let send = by_text(&s, "Send");
        let s = step(&mut env, json!({"action": "click_element", "element_index": send})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let got = world().site.uploads();
        let photo = got[before..].iter().find(|u| u.field == "photo").expect("photo posted");
        assert_eq!(photo.bytes, b"not really a png");
    })
}

#[test]
fn a_download_lands_in_the_directory_byte_for_byte_and_the_session_goes_on() {
    run(async {
        let dir = scratch("download");
        let cfg = DownloadConfig { dir: Some(dir.clone()), max_bytes: 1 << 20 };
        let (mut env, d) = files_env("/files/download.html", None, Some(cfg)).await;
        let d = d.unwrap();
        let link = by_text(env.state(), "Get the report");
        let s = step(&mut env, json!({"action": "click_element", "element_index": link})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let list = downloads_settled(&d, 1).await;
        assert_eq!(list[0].state, DownloadState::Done, "{list:?}");
        assert_eq!(list[0].name, "report.csv");
        assert_eq!(list[0].bytes, 300_000);
        assert_eq!(std::fs::read(dir.join("report.csv")).unwrap(), expected_download(300_000), "byte for byte");
        assert_eq!(visible_files(&dir), ["report.csv"], "nothing else is written");
        // The page is still the page, and the next state says what was downloaded.
        let s = env.refresh().await.unwrap().clone();
        assert!(s.url.ends_with("/files/download.html"), "{}", s.url);
        assert!(s.page_content.ends_with("\nDownloaded: report.csv (300,000 bytes, done)"), "{}", s.page_content);
        let count = by_text(&s, "Count");
        let s = step(&mut env, json!({"action": "click_element", "element_index": count})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("Clicked 1"), "the session goes on: {}", s.page_content);
        // A second download of the same name never replaces the first; a name that
        // tries to climb out of the directory stays in it.
        step(&mut env, json!({"action": "click_element", "element_index": link})).await;
        let odd = by_text(env.state(), "Get the odd one");
        step(&mut env, json!({"action": "click_element", "element_index": odd})).await;
        let list = downloads_settled(&d, 3).await;
        assert!(list.iter().all(|x| x.state == DownloadState::Done), "{list:?}");
        assert_eq!(list[1].name, "report (1).csv");
        let files = visible_files(&dir);
        assert_eq!(files.len(), 3, "{files:?}");
        assert!(!list[2].name.contains('/') && !list[2].name.starts_with('.'), "{:?}", list[2].name);
        assert!(dir.join(&list[2].name).is_file());
        assert!(!dir.parent().unwrap().join("escape.txt").exists());
        // Navigating to a download is no failed navigation: the page stays, the file lands.
        let s =
            step(&mut env, json!({"action": "navigate", "url": url("/download?bytes=10&name=direct.txt")})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.url.ends_with("/files/download.html"), "{}", s.url);
        let list = downloads_settled(&d, 4).await;
        assert_eq!((list[3].name.as_str(), &list[3].state), ("direct.txt", &DownloadState::Done));
        assert_eq!(std::fs::read(dir.join("direct.txt")).unwrap(), expected_download(10));
    })
}

#[test]
fn a_download_over_the_cap_is_cancelled_and_reported_failed() {
    run(async {
        let dir = scratch("cap");
        let cfg = DownloadConfig { dir: Some(dir.clone()), max_bytes: 1 << 20 };
        let (mut env, d) = files_env("/files/download.html", None, Some(cfg)).await;
        let d = d.unwrap();
        let big = by_text(env.state(), "Get the big file");
        let s = step(&mut env, json!({"action": "click_element", "element_index": big})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let list = downloads_settled(&d, 1).await;
        match &list[0].state {
            DownloadState::Failed { reason } => assert!(reason.contains("1,048,576-byte limit"), "{reason}"),
            other => panic!("expected failed, got {other:?}"),
        }
        assert!(visible_files(&dir).is_empty(), "nothing kept: {:?}", visible_files(&dir));
        let s = env.refresh().await.unwrap().clone();
        assert!(
            s.page_content.ends_with("\nDownloaded: big.bin (failed: larger than the 1,048,576-byte limit, cancelled)"),
            "{}",
            s.page_content
        );
        // The session survives.
        let count = by_text(&s, "Count");
        let s = step(&mut env, json!({"action": "click_element", "element_index": count})).await.state;
        assert!(s.page_content.contains("Clicked 1"), "{}", s.page_content);
    })
}

#[test]
fn each_context_keeps_its_own_downloads_and_a_temporary_directory_goes_with_it() {
    run(async {
        let (mut a, da) = files_env("/files/download.html", None, Some(DownloadConfig::default())).await;
        let (b, db) = files_env("/files/download.html", None, Some(DownloadConfig::default())).await;
        let (da, db) = (da.unwrap(), db.unwrap());
        let temp = da.dir().to_path_buf();
        assert!(temp.starts_with(std::env::temp_dir().canonicalize().unwrap()), "{}", temp.display());
        assert_ne!(temp, db.dir());
        let link = by_text(a.state(), "Get the report");
        step(&mut a, json!({"action": "click_element", "element_index": link})).await;
        downloads_settled(&da, 1).await;
        assert!(temp.join("report.csv").is_file());
        assert!(db.list().is_empty(), "the other context saw no download: {:?}", db.list());
        assert!(!b.state().page_content.contains("Downloaded:"));
        a.close().await;
        drop(da);
        assert!(!temp.exists(), "the temporary download directory is removed with its session");
    })
}

async fn tool_bind(api: &sightline_api::Api, session: &str, path: &str) -> Value {
    let b = ok(api, "bind_browser", json!({ "session": session })).await;
    let addr = json!({ "session": session, "target_id": b["target_id"], "tab_id": b["tabs"][0]["tab_id"] });
    let mut nav = addr.clone();
    nav["url"] = json!(url(path));
    ok(api, "browser_navigate", nav).await;
    addr
}

fn with(addr: &Value, extra: Value) -> Value {
    let mut v = addr.clone();
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    v
}

#[test]
fn the_tool_api_uploads_by_ref_and_lists_downloads() {
    run(async {
        let files = upload_dir("tools");
        let dir = scratch("tools-downloads");
        let access = FileAccess {
            uploads: Some(Arc::new(FileRoot::new(&files).unwrap())),
            downloads: Some(DownloadConfig { dir: Some(dir.clone()), max_bytes: 1 << 20 }),
            dir_per_session: false,
        };
        let api = api().with_files(access);
        assert!(api.tools().iter().any(|t| t.name == "upload_file" && !t.read_only));
        assert!(api.tools().iter().any(|t| t.name == "list_downloads" && t.read_only));
        let addr = tool_bind(&api, "files", "/files/upload.html").await;
        // dom_refs_v1
        let snap = ok(&api, "get_browser_state", addr.clone()).await;
        let report = snap["refs"].as_array().unwrap().iter().find(|r| r["tag"] == "input" && r["name"] == "Report");
        let report = report.unwrap_or_else(|| panic!("{snap}"))["ref"].as_str().unwrap().to_string();
        let e = fails(&api, "upload_file", with(&addr, json!({"ref": report, "paths": ["../secret.txt"]}))).await;
        assert_eq!(e.code, sightline_api::ToolCode::FileRefused);
        assert_eq!(e.detail_json()["reason"], "outside");
        let e = fails(&api, "upload_file", with(&addr, json!({"ref": report, "paths": ["link.txt"]}))).await;
        assert_eq!(e.detail_json()["reason"], "outside");
        let e = fails(&api, "upload_file", with(&addr, json!({"ref": report, "paths": ["gone.txt"]}))).await;
        assert_eq!(e.detail_json()["reason"], "missing");
        let out = ok(&api, "upload_file", with(&addr, json!({"ref": report, "paths": ["report.bin"]}))).await;
        assert_eq!(out["files"], json!(["report.bin"]));
        // semantic_v2: the chooser button, clicked, then given the file.
        let snap = ok(&api, "get_browser_state", with(&addr, json!({"snapshot_format": "semantic_v2"}))).await;
        let refs = snap["refs"].as_array().unwrap();
        let pick = refs.iter().find(|r| r["name"] == "Choose photo").unwrap()["ref"].as_str().unwrap().to_string();
        let send = refs.iter().find(|r| r["name"] == "Send").unwrap()["ref"].as_str().unwrap().to_string();
        let e = fails(&api, "upload_file", with(&addr, json!({"ref": send, "paths": ["photo.png"]}))).await;
        assert_eq!(e.code, sightline_api::ToolCode::ElementNotInteractive);
        ok(&api, "browser_click", with(&addr, json!({"ref": pick}))).await;
        ok(&api, "upload_file", with(&addr, json!({"ref": pick, "paths": ["photo.png"]}))).await;
        let before = world().site.uploads().len();
        ok(&api, "browser_click", with(&addr, json!({"ref": send}))).await;
        let got = world().site.uploads();
        let fields: Vec<(&str, &[u8])> = got[before..].iter().map(|u| (u.field.as_str(), u.bytes.as_slice())).collect();
        assert!(fields.contains(&("report", binary().as_slice())), "{:?}", got[before..].len());
        assert!(fields.contains(&("photo", b"not really a png".as_slice())));
        // Downloads.
        let listed = ok(&api, "list_downloads", json!({"session": "files", "target_id": addr["target_id"]})).await;
        assert_eq!(listed["downloads"], json!([]));
        let mut nav = addr.clone();
        nav["url"] = json!(url("/files/download.html"));
        ok(&api, "browser_navigate", nav).await;
        let snap = ok(&api, "get_browser_state", addr.clone()).await;
        let big = snap["refs"].as_array().unwrap().iter().find(|r| r["text"] == "Get the big file").unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        let report = snap["refs"].as_array().unwrap().iter().find(|r| r["text"] == "Get the report").unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        ok(&api, "browser_click", with(&addr, json!({"ref": report}))).await;
        ok(&api, "browser_click", with(&addr, json!({"ref": big}))).await;
        let mut listed = Value::Null;
        for _ in 0..600 {
            listed = ok(&api, "list_downloads", json!({"session": "files", "target_id": addr["target_id"]})).await;
            let l = listed["downloads"].as_array().unwrap();
            if l.len() == 2 && l.iter().all(|d| d["state"] != "in_progress") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let l = listed["downloads"].as_array().unwrap();
        assert_eq!(l[0]["name"], "report.csv", "{listed}");
        assert_eq!(l[0]["state"], "done");
        assert_eq!(l[0]["bytes"], 300_000);
        assert_eq!(l[1]["name"], "big.bin");
        assert_eq!(l[1]["state"], "failed", "{listed}");
        assert!(l[1]["error"].as_str().unwrap().contains("limit"));
        assert_eq!(std::fs::read(dir.join("report.csv")).unwrap(), expected_download(300_000));
        // The element-index protocol of the same session says so too.
        let st = ok(&api, "get_state", with(&addr, json!({"screenshot": false}))).await;
        assert!(
            st["page_content"]
                .as_str()
                .unwrap()
                .contains("Downloaded: report.csv (300,000 bytes, done); big.bin (failed"),
            "{st}"
        );
        ok(&api, "end_session", json!({"session": "files"})).await;
    })
}

/// The element index (as JSON) of the first element matching `pred`.
fn index_where(state: &Value, pred: impl Fn(&Value) -> bool) -> u64 {
    let map = state["element_index"].as_object().unwrap_or_else(|| panic!("no element_index in {state}"));
    let (k, _) = map.iter().find(|(_, d)| pred(d)).unwrap_or_else(|| panic!("no such element in {state}"));
    k.parse().unwrap()
}

#[test]
fn serve_sessions_upload_and_download_each_in_a_directory_of_their_own() {
    let files = upload_dir("serve");
    let dir = scratch("serve-downloads");
    world();
    let hub = sightline_server::HubConfig {
        source: sightline_server::BrowserSource::Connect(browser_endpoint()),
        files: FileAccess {
            uploads: Some(Arc::new(FileRoot::new(&files).unwrap())),
            downloads: Some(DownloadConfig { dir: Some(dir.clone()), max_bytes: 1 << 20 }),
            dir_per_session: true,
        },
        ..sightline_server::HubConfig::default()
    };
    let srv = InProcServer::start(hub, None);
    let post = |path: &str, body: Value| {
        let (s, v, _) = http("POST", &srv.url(path), Some(&body.to_string()), &[]);
        (s, v)
    };
    let (s, created) = post("/v1/sessions", json!({ "url": url("/files/upload.html"), "screenshot": false }));
    assert_eq!(s, 201, "{created}");
    let id = created["session_id"].as_str().unwrap().to_string();
    let state = created["state"].clone();
    let report = index_where(&state, |d| d["tag"] == "input" && d["attributes"]["name"] == "report");
    // Refused, typed, over HTTP too.
    let (s, v) = post(
        &format!("/v1/sessions/{id}/act"),
        json!({"action": "upload_file", "element_index": report, "paths": ["link.txt"]}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["error"]["code"], "ACTION_VALIDATION_FAILED", "{v}");
    let (_, v) = post(
        &format!("/v1/sessions/{id}/act"),
        json!({"action": "upload_file", "element_index": report, "paths": ["report.bin"]}),
    );
    assert!(v["error"].is_null(), "{v}");
    assert!(v["page_content"].as_str().unwrap().contains(r#"file="report.bin""#), "{v}");
    // A download through the tools path, listed by list_downloads.
    let (_, v) =
        post(&format!("/v1/sessions/{id}/act"), json!({"action": "navigate", "url": url("/files/download.html")}));
    let link = index_where(&v, |d| d["text_content"] == "Get the report");
    post(&format!("/v1/sessions/{id}/act"), json!({"action": "click_element", "element_index": link}));
    let mut listed = Value::Null;
    for _ in 0..600 {
        let (s, v) = post(&format!("/v1/sessions/{id}/tools/list_downloads"), json!({}));
        assert_eq!(s, 200, "{v}");
        listed = v;
        if listed["downloads"].as_array().is_some_and(|l| l.len() == 1 && l[0]["state"] == "done") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(listed["downloads"][0]["name"], "report.csv", "{listed}");
    let saved = dir.join(&id).join("report.csv");
    assert_eq!(std::fs::read(&saved).unwrap(), expected_download(300_000), "in the session's own directory");
    let (s, v, _) = http("DELETE", &srv.url(&format!("/v1/sessions/{id}")), None, &[]);
    assert!(s < 300, "{s} {v}");
}
