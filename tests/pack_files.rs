//! Files in the Set-of-Marks pack against real Chromium and the fixture server:
//! `browser.uploadMark` (confined to the upload directory) and downloads that
//! land without hanging a script; also through `sightline script`.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::files::*;
use common::*;
use sightline_browser::{DownloadConfig, DownloadState, Downloads, FileRoot};
use sightline_chrome::ChromeDriver;
use sightline_pack::{Cx, DefaultPolicy, Driver, DriverError, FileRefusal, Pack, ScriptOptions};

fn local() -> DefaultPolicy {
    DefaultPolicy { url_allow_prefixes: vec![], allow_private: true }
}

fn opts() -> ScriptOptions {
    ScriptOptions { timeout: Duration::from_secs(60), ..ScriptOptions::default() }
}

/// A driver on a fixture page, with uploads from `files` and downloads per `downloads`.
async fn driver(
    path: &str,
    files: Option<&Path>,
    downloads: Option<DownloadConfig>,
) -> (Arc<ChromeDriver>, Option<Downloads>) {
    let tab = tab().await;
    let ctx = tab.context_id().cloned().expect("own context");
    let d = match downloads {
        Some(cfg) => Some(Downloads::enable(&world().browser, &ctx, &cfg).await.expect("downloads")),
        None => None,
    };
    let uploads = files.map(|f| Arc::new(FileRoot::new(f).unwrap()));
    let driver = Arc::new(ChromeDriver::new(tab).with_files(uploads, d.clone()));
    driver.navigate(&Cx::new(Duration::from_secs(20)), &url(path)).await.expect("load fixture");
    (driver, d)
}

#[test]
fn a_script_uploads_through_marks_and_the_server_gets_the_bytes() {
    run(async {
        let files = upload_dir("pack-upload");
        let (d, _) = driver("/files/upload.html", Some(&files), None).await;
        let pack = Pack::new(d.clone(), local(), None);
        let before = world().site.uploads().len();
        let out = pack
            .run(
                r#"
                var m = browser.mark();
                var report = m.find(x => x.name === "Report");
                var many = m.find(x => x.name === "Attachments");
                browser.uploadMark(report.id, ["report.bin"]);
                browser.uploadMark(many.id, ["notes.txt", "photo.png"]);
                // The hidden input is no mark: the button that opens its chooser is the target.
                var pick = m.find(x => x.name === "Choose photo");
                browser.clickMark(pick.id);
                browser.uploadMark(pick.id, "photo.png");
                var chosen = browser.text("p#chosen");
                browser.clickMark(m.find(x => x.name === "Send").id);
                ({ chosen: chosen, page: browser.text("body") })
                "#,
                opts(),
            )
            .await
            .expect("script runs");
        assert_eq!(out.value["chosen"], "Photo: photo.png 16");
        assert!(out.value["page"].as_str().unwrap().contains("report.bin (512 bytes)"), "{}", out.value["page"]);
        let got = world().site.uploads();
        let got = &got[before..];
        let report = got.iter().find(|u| u.field == "report").expect("the report was posted");
        assert_eq!((report.filename.as_str(), &report.bytes), ("report.bin", &binary()), "byte for byte");
        let names: Vec<&str> = got.iter().filter(|u| u.field == "attachments").map(|u| u.filename.as_str()).collect();
        assert_eq!(names, ["notes.txt", "photo.png"]);
        let photo = got.iter().find(|u| u.field == "photo").expect("the chooser's input was posted");
        assert_eq!(photo.bytes, b"not really a png");
    })
}

#[test]
fn a_refused_upload_throws_and_the_script_goes_on() {
    run(async {
        let files = upload_dir("pack-refused");
        std::fs::create_dir_all(files.join("folder")).unwrap();
        let outside = files.parent().unwrap().join("secret.txt");
        let (d, _) = driver("/files/upload.html", Some(&files), None).await;
        let pack = Pack::new(d.clone(), local(), None);
        let script = format!(
            r#"
            var m = browser.mark();
            var report = m.find(x => x.name === "Report").id;
            var errors = [];
            function attempt(id, names) {{
                try {{ browser.uploadMark(id, names); errors.push("no error"); }}
                catch (e) {{ errors.push(e.message); }}
            }}
            attempt(report, ["../secret.txt"]);
            attempt(report, [{outside:?}]);
            attempt(report, ["link.txt"]);
            attempt(report, ["nope.txt"]);
            attempt(report, ["folder"]);
            attempt(report, []);
            attempt(report, ["report.bin", "notes.txt"]);
            attempt(m.find(x => x.name === "Send").id, ["report.bin"]);
            attempt(99, ["report.bin"]);
            var value = browser.eval("document.getElementById('report').files.length");
            browser.uploadMark(report, ["report.bin"]);
            ({{ errors: errors, before: value, after: browser.eval("document.getElementById('report').files[0].name") }})
            "#,
            outside = outside.to_str().unwrap()
        );
        let out = pack.run(&script, opts()).await.expect("the script survives every refusal");
        let errors: Vec<&str> = out.value["errors"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
        let expect = [
            "outside the upload directory",
            "outside the upload directory",
            "outside the upload directory",
            "does not exist in the upload directory",
            "is not a regular file",
            "choose 1 to 32 files, got 0",
            "more than one file",
            "does not support upload_file (it is not a file input, and no click on it opened a file chooser)",
            "no mark 99",
        ];
        assert_eq!(errors.len(), expect.len(), "{errors:?}");
        for (got, want) in errors.iter().zip(expect) {
            assert!(got.starts_with("browser.uploadMark: ") && got.contains(want), "{got:?} should say {want:?}");
        }
        assert_eq!(out.value["before"], 0, "no refusal chose a file");
        assert_eq!(out.value["after"], "report.bin", "the script and the browser go on");

        // The refusal is typed at the seam; stale marks are refused as for clickMark.
        let cx = Cx::new(Duration::from_secs(20));
        let set = d.marks(&cx, false).await.unwrap();
        // A chosen file's value ("C:\\fakepath\\report.bin") is no name: the mark keeps its label's.
        let id = set.marks.iter().find(|m| m.name == "Report").unwrap_or_else(|| panic!("{:?}", set.marks)).id;
        let e = d.upload_mark(&cx, set.generation, id, &["link.txt".into()]).await.unwrap_err();
        assert!(matches!(e, DriverError::FileRefused { reason: FileRefusal::Outside, .. }), "{e:?}");
        d.marks(&cx, false).await.unwrap();
        let e = d.upload_mark(&cx, set.generation, id, &["report.bin".into()]).await.unwrap_err();
        assert!(matches!(e, DriverError::StaleMarks(_)), "{e:?}");

        // Without an upload directory, uploads are off.
        let (off, _) = driver("/files/upload.html", None, None).await;
        let set = off.marks(&cx, false).await.unwrap();
        let e = off.upload_mark(&cx, set.generation, id, &["report.bin".into()]).await.unwrap_err();
        assert!(matches!(e, DriverError::FileRefused { reason: FileRefusal::UploadsOff, .. }), "{e:?}");
        assert!(e.to_string().contains("uploads are off"), "{e}");
    })
}

#[test]
fn a_download_clicked_in_a_script_lands_byte_for_byte_and_the_script_goes_on() {
    run(async {
        let dir = scratch("pack-download");
        let cfg = DownloadConfig { dir: Some(dir.clone()), max_bytes: 1 << 20 };
        let (d, downloads) = driver("/files/download.html", None, Some(cfg)).await;
        let downloads = downloads.unwrap();
        let pack = Pack::new(d.clone(), local(), None);
        let out = pack
            .run(
                &format!(
                    r#"
                    var m = browser.mark();
                    browser.clickMark(m.find(x => x.name === "Get the report").id);
                    var after = browser.downloads();
                    browser.clickMark(m.find(x => x.name === "Count").id);
                    browser.goto({direct:?});
                    ({{ after: after, count: browser.text("button#count"), title: browser.eval("document.title") }})
                    "#,
                    direct = url("/download?bytes=10&name=direct.txt")
                ),
                opts(),
            )
            .await
            .expect("a download never hangs a script");
        assert_eq!(out.value["count"], "Clicked 1", "the marks stay valid: the page did not navigate");
        assert_eq!(out.value["title"], "Downloads", "a goto that is a download keeps the page");
        let list = downloads_settled(&downloads, 2).await;
        assert_eq!(list[0].state, DownloadState::Done, "{list:?}");
        assert_eq!(std::fs::read(dir.join("report.csv")).unwrap(), expected_download(300_000), "byte for byte");
        assert_eq!(std::fs::read(dir.join("direct.txt")).unwrap(), expected_download(10));
        assert_eq!(visible_files(&dir), ["direct.txt", "report.csv"], "nothing else is written");
        // The click waited for its download (the settle cap), so the script saw it finished.
        let after = &out.value["after"];
        assert_eq!(after[0]["name"], "report.csv", "{after}");
        assert_eq!((after[0]["bytes"].as_u64(), after[0]["state"].as_str()), (Some(300_000), Some("done")), "{after}");

        // Over the cap: cancelled, reported failed, nothing kept.
        let out = pack
            .run(
                r#"
                var m = browser.mark();
                browser.clickMark(m.find(x => x.name === "Get the big file").id);
                browser.text("h1")
                "#,
                opts(),
            )
            .await
            .expect("script runs");
        assert_eq!(out.value, "Files");
        let list = downloads_settled(&downloads, 3).await;
        assert!(matches!(&list[2].state, DownloadState::Failed { reason } if reason.contains("1,048,576-byte limit")));
        let seen = pack.run("browser.downloads()", opts()).await.unwrap().value;
        assert_eq!(seen[2]["state"], "failed", "{seen}");
        assert!(seen[2]["error"].as_str().unwrap().contains("limit"), "{seen}");
        assert_eq!(visible_files(&dir), ["direct.txt", "report.csv"]);
    })
}

fn sightline(args: &[&str], script: &str) -> std::process::Output {
    let file = scratch("pack-cli-script").join("task.js");
    std::fs::write(&file, script).unwrap();
    Command::new(env!("CARGO_BIN_EXE_sightline")).arg("script").arg(&file).args(args).output().unwrap()
}

#[test]
fn sightline_script_takes_files_and_downloads() {
    world();
    let files = upload_dir("pack-cli-files");
    let dl = scratch("pack-cli-downloads").join("got");
    let before = world().site.uploads().len();
    let script = format!(
        r#"
        var m = browser.mark();
        try {{ browser.uploadMark(m.find(x => x.name === "Report").id, ["../secret.txt"]); }}
        catch (e) {{ console.log(e.message); }}
        browser.uploadMark(m.find(x => x.name === "Report").id, ["report.bin"]);
        browser.clickMark(m.find(x => x.name === "Send").id);
        browser.goto({download:?});
        var m = browser.mark();
        browser.clickMark(m.find(x => x.name === "Get the report").id);
        browser.downloads()
        "#,
        download = url("/files/download.html")
    );
    let out = sightline(
        &[
            "--url",
            &url("/files/upload.html"),
            "--allow-private",
            "--files",
            files.to_str().unwrap(),
            "--downloads",
            dl.to_str().unwrap(),
        ],
        &script,
    );
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("browser.uploadMark: upload refused: \"../secret.txt\" is outside the upload directory\n"),
        "{stdout}"
    );
    let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last, serde_json::json!([{"name": "report.csv", "bytes": 300000, "state": "done"}]), "{stdout}");
    assert!(stderr.contains("sightline script: Downloaded: report.csv (300,000 bytes, done)"), "{stderr}");
    let got = world().site.uploads();
    let report = got[before..].iter().find(|u| u.field == "report").expect("posted");
    assert_eq!(report.bytes, binary());
    assert_eq!(std::fs::read(dl.join("report.csv")).unwrap(), expected_download(300_000));
    assert_eq!(visible_files(&dl), ["report.csv"]);

    // Without --files, uploads are off; without --downloads, files land in a
    // temporary directory that is gone when the command ends.
    let script = format!(
        r#"
        browser.goto({download:?});
        browser.clickMark(browser.mark().find(x => x.name === "Get the report").id);
        browser.goto({upload:?});
        browser.uploadMark(browser.mark().find(x => x.name === "Report").id, ["report.bin"])
        "#,
        download = url("/files/download.html"),
        upload = url("/files/upload.html")
    );
    let file = scratch("pack-cli-off").join("task.js");
    std::fs::write(&file, script).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("script")
        .arg(&file)
        .arg("--allow-private")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("browser.uploadMark: upload refused: uploads are off"), "{stderr}");
    assert!(
        stderr.contains("Downloaded: report.csv (300,000 bytes, done) (in a temporary directory, removed now;"),
        "{stderr}"
    );
    let prefix = format!("sightline-downloads-{pid}-");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "the temporary download directory is removed at exit: {left:?}");
    // It was inside the run's temporary profile, which is gone too.
    assert_no_leftovers(pid);
}
