//! Chromium as the oracle (issue 33, item 1): every page the fixture, MiniWoB++,
//! real-app and document suites load, read by the element index (as `Env`
//! captures it) and semantic_v2 (as the snapshot tool serves it), and compared
//! with Chromium's accessibility tree and hit test (`common::oracle`).
//!
//! One test per suite. Each prints its agreement per view (listed, role, name,
//! states, hit) and writes it to `target/oracle/SUITE.md`; `target/oracle/summary.md`
//! gathers the suites run so far. A divergence fails the test unless
//! `tests/oracle-allowlist.txt` explains it (a choice of ours, with its reason) or
//! `tests/oracle-known.txt` lists it (a bug of ours not fixed yet, counted as
//! disagreeing); the failure lists divergences grouped by cause, most frequent
//! first, with a few pages and elements each.

use crate::common;
use crate::harness;

use std::path::PathBuf;
use std::time::Instant;

use common::oracle::{self, Allowlist, Tally};
use common::{env, run};
use serde_json::json;

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/oracle")
}

/// Print the suite's agreement, write it beside the others, and fail on what the allowlist does not explain.
fn finish(suite: &str, tally: Tally, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    let table = format!("{}\nwall time {secs:.1} s\n", tally.table(suite));
    // Written to the process's stdout itself, past the test harness's capture (which
    // `println!` goes through), so `./x test` shows it for a passing test too.
    {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(format!("\n{table}\n").as_bytes());
    }
    let dir = out_dir();
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{suite}.md")), &table);
    let mut report = if tally.divergences.is_empty() { String::new() } else { tally.report(usize::MAX, 200) };
    let _ = std::fs::write(dir.join(format!("{suite}-divergences.txt")), &report);
    // The summary: every suite's table written so far.
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect())
        .unwrap_or_default();
    names.retain(|p| p.file_name().is_some_and(|n| n != "summary.md"));
    names.sort();
    let mut summary = String::from("# Sightline against Chromium (tests/oracle.rs)\n\n");
    for p in names {
        summary.push_str(&std::fs::read_to_string(p).unwrap_or_default());
        summary.push('\n');
    }
    let _ = std::fs::write(dir.join("summary.md"), summary);
    if !tally.divergences.is_empty() {
        report = tally.report(25, 3);
        panic!(
            "{suite}: {} divergences from Chromium that tests/oracle-allowlist.txt does not explain \
             and tests/oracle-known.txt does not list \
             (all of them: target/oracle/{suite}-divergences.txt):\n{report}",
            tally.divergences.len()
        );
    }
}

/// Load each URL in a fresh `Env` and compare.
async fn pages(urls: &[(String, String)], allow: &Allowlist) -> Tally {
    let mut tally = Tally::default();
    for (name, url) in urls {
        let env = env(url).await;
        tally.add(oracle::check(env.tab(), name, allow).await);
        env.close().await;
    }
    tally
}

/// Every fixture page (`common::fixture_pages()`) and the oracle's own (`tests/fixtures/oracle/`).
#[test]
fn fixture_pages_agree_with_chromium() {
    let started = Instant::now();
    let allow = Allowlist::load();
    let mut names = common::fixture_pages();
    let mut own: Vec<String> = std::fs::read_dir(common::fixtures_dir().join("oracle"))
        .expect("tests/fixtures/oracle")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".html"))
        .map(|n| format!("/oracle/{n}"))
        .collect();
    own.sort();
    names.extend(own);
    let urls: Vec<(String, String)> = names.iter().map(|n| (n.clone(), common::url(n))).collect();
    let tally = run(pages(&urls, &allow));
    finish("fixtures", tally, started);
}

/// Every task page of the MiniWoB++ 1.1.0 wheel, read as its first episode starts (after START).
#[test]
fn miniwob_pages_agree_with_chromium() {
    let started = Instant::now();
    let allow = Allowlist::load();
    let html = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/miniwob/miniwob/html");
    assert!(
        html.join("core/core.js").is_file(),
        "\n\nThe MiniWoB++ pages are missing at {}.\nInstall them with:  ./x miniwob   (./x test installs them too)\n\n",
        html.display()
    );
    let mut tasks: Vec<String> = std::fs::read_dir(html.join("miniwob"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".html").map(str::to_string))
        .collect();
    tasks.sort();
    let tally = run(async {
        let server = sightline_testkit::Server::dir(html.clone()).await.expect("serve MiniWoB++");
        // As the MiniWoB++ suite serves them: `?seed=S` seeds the episodes.
        let mut core = std::fs::read(html.join("core/core.js")).unwrap();
        core.extend_from_slice(b"\nif (core.QueryString.seed) { Math.seedrandom(core.QueryString.seed); }\n");
        server.page("/core/core.js", core);
        let mut tally = Tally::default();
        for task in &tasks {
            let url = server.url(&format!("/miniwob/{task}.html?seed=1"));
            let mut env = env(&url).await;
            // START, as a person (and the MiniWoB++ suite) begins an episode.
            let start = env.state().element_index.0.iter().position(|d| d.text_content.as_deref() == Some("START"));
            if let Some(i) = start {
                common::step(&mut env, json!({"action": "click_element", "element_index": i + 1})).await;
            }
            tally.add(oracle::check(env.tab(), task, &allow).await);
            env.close().await;
        }
        tally
    });
    finish("miniwob", tally, started);
}

/// The real apps' pages (`tests/apps.rs`): Django's admin (login, index, a changelist, an add form),
/// Flask-Admin, Datasette, MkDocs Material and TodoMVC.
#[test]
fn real_app_pages_agree_with_chromium() {
    let started = Instant::now();
    let allow = Allowlist::load();
    let tally = run(async {
        let mut tally = Tally::default();
        let dj = harness::Django::start();
        let mut e = env(&dj.url("/admin/")).await;
        tally.add(oracle::check(e.tab(), "django /admin/login/", &allow).await);
        harness::admin_login(&mut e, &dj).await;
        tally.add(oracle::check(e.tab(), "django /admin/", &allow).await);
        for path in [
            "/admin/polls/question/",
            "/admin/polls/question/add/",
            "/admin/polls/question/1/change/",
            "/admin/polls/question/1/delete/",
            "/admin/auth/user/",
        ] {
            harness::act(&mut e, json!({"action": "navigate", "url": dj.url(path)})).await;
            tally.add(oracle::check(e.tab(), &format!("django {path}"), &allow).await);
        }
        e.close().await;
        drop(dj);

        let fa = harness::FlaskAdmin::start();
        let ds = harness::Datasette::start();
        let site = harness::MkDocs::start();
        let (_todo_server, todo_url) = harness::todomvc().await;
        let urls = vec![
            ("flask-admin /admin/".to_string(), fa.url("/admin/")),
            ("flask-admin /admin/user/".into(), fa.url("/admin/user/")),
            ("flask-admin /admin/post/new/".into(), fa.url("/admin/post/new/")),
            ("flask-admin /admin/user/new/".into(), fa.url("/admin/user/new/")),
            ("flask-admin /admin/post/".into(), fa.url("/admin/post/")),
            ("datasette /library/books".into(), ds.url("/library/books")),
            ("datasette /library/books?genre=Fantasy".into(), ds.url("/library/books?genre=Fantasy")),
            ("datasette /library".into(), ds.url("/library")),
            ("datasette /library?sql=…".into(), ds.url("/library?sql=select+*+from+books")),
            ("datasette /library/add_note".into(), ds.url("/library/add_note")),
            ("mkdocs /".into(), site.url("/")),
            ("mkdocs /reference/command-line/".into(), site.url("/reference/command-line/")),
        ];
        tally.add(pages(&urls, &allow).await);
        // TodoMVC with two todos, one completed.
        let mut e = env(&todo_url).await;
        for todo in ["Buy milk", "Walk the dog"] {
            let s = e.state().clone();
            let field = harness::find(&s, "textbox", "What needs to be done?");
            let text = format!("{todo}\n");
            harness::act(&mut e, json!({"action": "input_text", "element_index": field, "text": text})).await;
        }
        let toggle = harness::find_before(e.state(), "Buy milk", "checkbox", "");
        harness::click(&mut e, toggle).await;
        tally.add(oracle::check(e.tab(), "todomvc", &allow).await);
        e.close().await;
        tally
    });
    finish("apps", tally, started);
}

/// The document pages of `tests/documents.rs`: rustdoc, the Rust book, Python's reference.
#[test]
fn document_pages_agree_with_chromium() {
    let started = Instant::now();
    let allow = Allowlist::load();
    let out = std::process::Command::new("rustc").args(["--print", "sysroot"]).output().expect("run rustc");
    let rust =
        PathBuf::from(String::from_utf8(out.stdout).expect("sysroot is UTF-8").trim()).join("share/doc/rust/html");
    let python = PathBuf::from("/usr/share/doc/python3/html");
    assert!(rust.join("std/index.html").is_file(), "rust-docs missing (rustup component add rust-docs)");
    assert!(
        python.join("library/functions.html").is_file(),
        "python3-doc missing (./x test installs it, or apt-get install python3-doc)"
    );
    let tally = run(async {
        let rs = sightline_testkit::Server::dir(rust).await.expect("serve");
        let py = sightline_testkit::Server::dir(python).await.expect("serve");
        let urls: Vec<(String, String)> = [
            ("rustdoc /std/index.html", rs.url("/std/index.html")),
            ("rustdoc /std/vec/struct.Vec.html", rs.url("/std/vec/struct.Vec.html")),
            ("book /book/ch04-01-what-is-ownership.html", rs.url("/book/ch04-01-what-is-ownership.html")),
            ("python /library/functions.html", py.url("/library/functions.html")),
        ]
        .into_iter()
        .map(|(n, u)| (n.to_string(), u))
        .collect();
        pages(&urls, &allow).await
    });
    finish("documents", tally, started);
}

/// The oracle's own rules, without a browser: the allowlist reads, each entry says why, and
/// the comparisons normalize only what they should.
#[test]
fn the_oracle_s_rules() {
    let allow = Allowlist::load();
    assert!(allow.allows("element_index role: clickable vs non-widget generic"));
    assert!(!allow.allows("element_index role: clickable vs button"), "a widget Chromium sees is never allowlisted");
    assert!(!allow.allows("element_index listed: Chromium's combobox left out"));
    // Whitespace collapses; a no-break space is text; icon-font glyphs are no text.
    assert_eq!(oracle::norm("  Save \n changes "), "Save changes");
    assert_eq!(oracle::norm("No\u{a0}break"), "No\u{a0}break");
    assert!(!oracle::names_agree("No break", "No\u{a0}break"));
    assert_eq!(oracle::norm("\u{f1f8} Delete"), "Delete");
    // A name we cut agrees with the start of Chromium's.
    assert!(oracle::names_agree("Struct Vec Copy…", "Struct Vec Copy item path"));
    assert!(!oracle::names_agree("Struct Vec Copy", "Struct Vec Copy item path"));
    // The role table: our word, Chromium's spelling.
    assert!(oracle::role_agrees("label", "LabelText"));
    assert!(oracle::role_agrees("image", "img"));
    assert!(!oracle::role_agrees("clickable", "generic"), "clickable is a choice of ours: the allowlist says why");
    assert!(!oracle::role_agrees("text", "tabpanel"));
}

/// Look at the page again until it shows an element with this role and name (at most 30 s):
/// these apps draw their widgets after the page loads (over a WebSocket, after a splash screen).
async fn until_shown(e: &mut sightline_api::Env, role: &str, name: &str) {
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    while !harness::has(e.state(), role, name) && Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        common::step(e, json!({"action": "scroll", "direction": "up"})).await;
    }
}

/// The component-library apps' pages (`tests/component_apps.rs`): NiceGUI's Quasar form and
/// its date picker, Streamlit's widgets, Wagtail's admin and its Draftail page editor,
/// JupyterLab's launcher and a terminal.
#[test]
fn component_app_pages_agree_with_chromium() {
    use harness::components::{JUPYTER, NICEGUI, STREAMLIT, WAGTAIL};
    use harness::AppServer;
    let started = Instant::now();
    let allow = Allowlist::load();
    let tally = run(async {
        let mut tally = Tally::default();

        let app = AppServer::start(&NICEGUI);
        let mut e = env(&app.url("/")).await;
        until_shown(&mut e, "textbox", "Guest name").await;
        tally.add(oracle::check(e.tab(), "nicegui /", &allow).await);
        let calendar = harness::components::next_on_line(e.state(), "textbox", "Check-in date", "button");
        harness::click(&mut e, calendar).await;
        tally.add(oracle::check(e.tab(), "nicegui / (date picker open)", &allow).await);
        e.close().await;
        drop(app);

        let app = AppServer::start(&STREAMLIT);
        let mut e = env(&app.url("/")).await;
        until_shown(&mut e, "radio", "Itemised").await;
        tally.add(oracle::check(e.tab(), "streamlit /", &allow).await);
        e.close().await;
        drop(app);

        let app = AppServer::start(&WAGTAIL);
        let mut e = env(&app.url("/admin/login/")).await;
        tally.add(oracle::check(e.tab(), "wagtail /admin/login/", &allow).await);
        let s = e.state().clone();
        let s = harness::type_into(&mut e, harness::find(&s, "textbox", "Username*"), harness::ADMIN_USER).await;
        let s = harness::type_into(&mut e, harness::find(&s, "textbox", "Password*"), harness::ADMIN_PASSWORD).await;
        harness::click(&mut e, harness::find(&s, "button", "Sign in")).await;
        tally.add(oracle::check(e.tab(), "wagtail /admin/", &allow).await);
        harness::click_named(&mut e, "button", "Pages").await;
        let s = e.state().clone();
        harness::click(&mut e, harness::find(&s, "link", "Welcome to your new Wagtail site!")).await;
        tally.add(oracle::check(e.tab(), "wagtail page explorer", &allow).await);
        let s = e.state().clone();
        harness::click(&mut e, harness::find(&s, "link", "Add child page")).await;
        tally.add(oracle::check(e.tab(), "wagtail page editor", &allow).await);
        e.close().await;
        drop(app);

        let app = AppServer::start(&JUPYTER);
        let mut e = env(&app.url("/lab")).await;
        until_shown(&mut e, "button", "Terminal").await;
        tally.add(oracle::check(e.tab(), "jupyterlab /lab", &allow).await);
        harness::click_named(&mut e, "button", "Terminal").await;
        until_shown(&mut e, "textbox", "Terminal input").await;
        tally.add(oracle::check(e.tab(), "jupyterlab terminal", &allow).await);
        e.close().await;
        drop(app);
        tally
    });
    finish("component-apps", tally, started);
}
