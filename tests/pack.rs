//! The Set-of-Marks pack against real Chromium: scripts, marks, policy, limits.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use sightline_chrome::ChromeDriver;
use sightline_pack::{CancelToken, Cx, DefaultPolicy, Driver, DriverError, Pack, ScriptError, ScriptOptions};
use sightline_page::{draw_marks, mark_box, mark_color};

async fn driver_at(path: &str) -> Arc<ChromeDriver> {
    let d = Arc::new(ChromeDriver::new(tab().await));
    d.navigate(&Cx::new(Duration::from_secs(20)), &url(path)).await.expect("load fixture");
    d
}

fn local() -> DefaultPolicy {
    DefaultPolicy { url_allow_prefixes: vec![], allow_private: true }
}

fn opts(secs: u64) -> ScriptOptions {
    ScriptOptions { timeout: Duration::from_secs(secs), ..ScriptOptions::default() }
}

#[test]
fn a_script_signs_in_through_marks() {
    run(async {
        let d = driver_at("/signin.html").await;
        let pack = Pack::new(d.clone(), DefaultPolicy::default(), None);
        let out = pack
            .run(
                r##"
                var m = browser.mark();
                console.log(m.length + " marks");
                var email = m.find(x => x.name === "Email Address");
                var pw = m.find(x => x.name === "Enter your password");
                var keep = m.find(x => x.role === "checkbox");
                browser.typeMark(email.id, "ada@example.com");
                browser.typeMark(pw.id, "secret");
                browser.clickMark(keep.id);
                var checked = browser.eval("document.querySelector('[name=remember]').checked");
                browser.clickMark(m.find(x => x.role === "button" && x.name === "Sign In").id);
                browser.waitVisible("#hello");
                ({ title: browser.text("h1"), who: browser.text("#who"), checked: checked, keep: keep.name })
                "##,
                opts(20),
            )
            .await
            .expect("script runs");
        assert_eq!(out.value["title"], "Welcome back");
        assert_eq!(out.value["who"], "ada@example.com");
        assert_eq!(out.value["checked"], true);
        assert_eq!(out.value["keep"], "Keep me signed in", "an unnamed checkbox is named by its label");
        // email, password, the checkbox (its label is not listed twice), Sign In, Elsewhere.
        assert_eq!(out.logs, vec!["5 marks".to_string()]);
    })
}

#[test]
fn stale_marks_are_refused_never_clicked() {
    run(async {
        let d = driver_at("/signin.html").await;
        let pack = Pack::new(d.clone(), local(), None);
        // The page navigates itself through a mark; the old ids are gone.
        let e = pack
            .run(
                r#"
                var m = browser.mark();
                browser.clickMark(m.find(x => x.name === "Elsewhere").id);
                browser.clickMark(m[0].id);
                "#,
                opts(20),
            )
            .await
            .unwrap_err();
        let ScriptError::Exception { message, line } = e else { panic!("{e:?}") };
        assert!(message.contains("browser.clickMark") && message.contains("navigated since mark()"), "{message}");
        assert_eq!(line, Some(4));
        // goto drops marks in the pack itself.
        let e = pack
            .run(
                &format!("var m = browser.mark(); browser.goto({:?}); browser.clickMark(1);", url("/signin.html")),
                opts(20),
            )
            .await
            .unwrap_err();
        assert!(e.to_string().contains("no current marks"), "{e}");
        // An id from an older mark() is refused too.
        let gen1 = d.marks(&Cx::new(Duration::from_secs(10)), false).await.unwrap().generation;
        d.marks(&Cx::new(Duration::from_secs(10)), false).await.unwrap();
        let e = d.click_mark(&Cx::new(Duration::from_secs(10)), gen1, 1).await.unwrap_err();
        assert!(matches!(e, DriverError::StaleMarks(_)), "{e:?}");
        let e = d.click_mark(&Cx::new(Duration::from_secs(10)), gen1 + 1, 99).await.unwrap_err();
        assert!(matches!(e, DriverError::NoSuchMark { id: 99, .. }), "{e:?}");
    })
}

#[test]
fn the_policy_refuses_with_its_reason() {
    run(async {
        let d = driver_at("/signin.html").await;
        let strict = Pack::new(d.clone(), DefaultPolicy::default(), None);
        let e = strict.run(&format!("browser.goto({:?})", url("/kinds.html")), opts(10)).await.unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("refused by policy") && msg.contains("loopback"), "{msg}");
        let e = strict.run(r#"browser.goto("http://localhost:1/")"#, opts(10)).await.unwrap_err();
        assert!(e.to_string().contains("rule private_address"), "{e}");
        let e = strict.run(r#"browser.goto("http://169.254.169.254/latest/meta-data/")"#, opts(10)).await.unwrap_err();
        assert!(e.to_string().contains("cloud metadata"), "{e}");
        let prefixed =
            Pack::new(d.clone(), DefaultPolicy { url_allow_prefixes: vec![url("/kinds")], allow_private: true }, None);
        let e = prefixed.run(&format!("browser.goto({:?})", url("/form.html")), opts(10)).await.unwrap_err();
        assert!(e.to_string().contains("not under an allowed prefix"), "{e}");
        let ok = prefixed
            .run(&format!("browser.goto({:?}); browser.text('h1')", url("/kinds.html")), opts(10))
            .await
            .unwrap();
        assert_eq!(ok.value, "Every interactive kind");
    })
}

#[test]
fn runaway_scripts_stop_and_the_browser_survives() {
    run(async {
        let d = driver_at("/signin.html").await;
        let pack = Pack::new(d.clone(), local(), None);
        let e = pack
            .run("while (true) {}", ScriptOptions { timeout: Duration::from_millis(800), ..Default::default() })
            .await
            .unwrap_err();
        // Stopped by its own 800 ms deadline: a time-out, not the test harness.
        assert!(matches!(e, ScriptError::Timeout { .. }), "{e:?}");
        // A browser call that would wait forever is bounded by the same deadline.
        let e = pack
            .run(
                "browser.waitVisible('#never')",
                ScriptOptions { timeout: Duration::from_millis(800), ..Default::default() },
            )
            .await
            .unwrap_err();
        assert!(matches!(e, ScriptError::Timeout { .. }) || e.to_string().contains("timed out"), "{e:?}");
        let e = pack
            .run(
                "var a = []; while (true) a.push(new Array(100000).fill(1));",
                ScriptOptions { memory_limit: 16 << 20, ..opts(20) },
            )
            .await
            .unwrap_err();
        assert!(matches!(e, ScriptError::OutOfMemory { .. }), "{e:?}");
        let e = pack.run("var x = 1;\nvar y = 2;\nthrow new Error('boom');", opts(5)).await.unwrap_err();
        assert_eq!(e, ScriptError::Exception { message: "boom".into(), line: Some(3) });
        // The same driver and page still work.
        let ok = pack.run("browser.text('h1')", opts(10)).await.unwrap();
        assert_eq!(ok.value, "Sign in");
    })
}

#[test]
fn cancelling_a_call_aborts_it_and_keeps_the_browser() {
    run(async {
        let d = driver_at("/signin.html").await;
        let token = CancelToken::new();
        let cx = Cx::with_cancel(Duration::from_secs(30), token.clone());
        let t = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            t.cancel();
        });
        // Cancelled, not timed out: the cancel ended it before the 30 s deadline.
        let e = cx.run("wait_visible", d.wait_visible(&cx, "#never")).await.unwrap_err();
        assert_eq!(e, DriverError::Cancelled { op: "wait_visible" });
        let cx = Cx::new(Duration::from_secs(10));
        assert_eq!(d.text(&cx, "h1").await.unwrap(), "Sign in");
        assert!(matches!(d.text(&cx, "#nope").await, Err(DriverError::NotFound { .. })));
    })
}

#[test]
fn the_marks_png_has_the_viewport_size_and_a_box_per_mark() {
    run(async {
        let d = driver_at("/signin.html").await;
        let set = d.marks(&Cx::new(Duration::from_secs(10)), true).await.unwrap();
        assert_eq!(set.marks.len(), 5);
        let png = draw_marks(set.screenshot.as_deref().unwrap(), &set.marks).unwrap();
        let img = image::load_from_memory(&png).unwrap().to_rgba8();
        assert_eq!((img.width(), img.height()), (1280, 720));
        for m in &set.marks {
            let (x, y, w, h) = mark_box(m);
            let [r, g, b] = mark_color(m.id);
            // Every side of the box carries the mark's colour (labels may sit on part of a side).
            let want = [r, g, b, 255];
            let px = |x: i64, y: i64| img.get_pixel(x.clamp(0, 1279) as u32, y.clamp(0, 719) as u32).0;
            let left = (y..y + h).any(|yy| px(x, yy) == want);
            let right = (y..y + h).any(|yy| px(x + w - 1, yy) == want);
            let top = (x..x + w).any(|xx| px(xx, y) == want);
            let bottom = (x..x + w).any(|xx| px(xx, y + h - 1) == want);
            assert!(left && right && top && bottom, "box of mark {} ({}): {left} {right} {top} {bottom}", m.id, m.name);
        }
        // Marks are the element index minus select options: same elements, same order.
        let names: Vec<&str> = set.marks.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["Email Address", "Enter your password", "Keep me signed in", "Sign In", "Elsewhere"]);
    })
}

#[test]
fn describe_advertises_exactly_what_is_registered() {
    run(async {
        let d = driver_at("/signin.html").await;
        let pack = Pack::new(d.clone(), local(), None);
        let keys = pack.run("Object.keys(browser).sort()", opts(5)).await.unwrap().value;
        let mut described: Vec<String> = pack.primitives().iter().map(|p| p.name.to_string()).collect();
        described.sort();
        assert_eq!(keys, serde_json::json!(described));
        assert!(!described.contains(&"ask".to_string()) && !described.contains(&"askMarks".to_string()));
        assert!(!pack.describe().contains("ask("));
        let vision: sightline_pack::Vision = Arc::new(|_, _| Box::pin(async { Ok("yes".to_string()) }));
        let seeing = Pack::new(d.clone(), local(), Some(vision));
        assert!(seeing.describe().contains("browser.askMarks(question)"));
        let answer = seeing.run("browser.askMarks('where is the button?')", opts(10)).await.unwrap();
        assert_eq!(answer.value, "yes");
    })
}

/// Scripts have no dialog primitive: a dialog an action opens is answered as an
/// unattended browser would (confirm dismissed, alert accepted) and the script goes on.
#[test]
fn javascript_dialogs_never_hang_a_script() {
    run(async {
        let d = driver_at("/fidelity/jsdialog.html").await;
        let pack = Pack::new(d.clone(), local(), None);
        let out = pack
            .run(
                r##"
                var m = browser.mark();
                browser.clickMark(m.find(x => x.name === "Delete").id);
                var afterConfirm = browser.text("#out");
                browser.clickMark(browser.mark().find(x => x.name === "Save").id);
                ({ afterConfirm: afterConfirm, afterAlert: browser.text("#out") })
                "##,
                opts(30),
            )
            .await
            .expect("the script runs to its end");
        assert_eq!(out.value["afterConfirm"], "kept", "confirm() was dismissed");
        assert_eq!(out.value["afterAlert"], "alerted", "alert() was accepted");
    })
}
