//! Every action and every error code against real Chromium.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use sightline_api::ErrorCode;

fn code(s: &sightline_api::StateObject) -> Option<ErrorCode> {
    s.error.as_ref().map(|e| e.code)
}

#[test]
fn click_is_a_real_pointer_sequence_with_hover() {
    run(async {
        let mut env = env("/hover.html").await;
        assert!(!texts(env.state()).iter().any(|t| t == "Menu item"), "menu closed before hover");
        let i = by_text(env.state(), "Menu");
        let s = step(&mut env, json!({"action": "click_element", "element_index": i})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let log = eval(&env, "document.getElementById('log').textContent").await;
        let log = log.as_str().unwrap();
        for ev in ["mouseover", "mousemove", "pointerdown", "mousedown", "mouseup", "click"] {
            assert!(log.contains(ev), "{ev} not seen: {log}");
        }
        assert!(!log.contains("untrusted"), "events must be trusted: {log}");
        // The pointer rests on the menu: the hover-opened item is now in the index.
        assert!(texts(&s).iter().any(|t| t == "Menu item"), "{}", s.page_content);
    })
}

#[test]
fn input_text_types_key_by_key_and_overwrites_or_appends() {
    run(async {
        let mut env = env("/form.html").await;
        let q = by_id_name(env.state(), "q");
        let s = step(&mut env, json!({"action": "input_text", "element_index": q, "text": "def"})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(s.element_index.0[q as usize - 1].attributes.value.as_deref(), Some("abcdef"), "appends by default");
        let counts = eval(&env, "window.counts()").await;
        assert_eq!(counts["keys"], 3, "one keydown per character");
        assert_eq!(counts["inputs"], 3, "one input event per character");
        let s = step(&mut env, json!({"action": "input_text", "element_index": q, "text": "new", "overwrite": true}))
            .await
            .state;
        assert_eq!(s.element_index.0[q as usize - 1].attributes.value.as_deref(), Some("new"));
        // Types without selection support (email, number) still append and overwrite.
        let e = by_id_name(&s, "email");
        step(&mut env, json!({"action": "input_text", "element_index": e, "text": "a@b"})).await;
        let s = step(&mut env, json!({"action": "input_text", "element_index": e, "text": ".test"})).await.state;
        assert_eq!(s.element_index.0[e as usize - 1].attributes.value.as_deref(), Some("a@b.test"));
        let n = by_id_name(&s, "num");
        step(&mut env, json!({"action": "input_text", "element_index": n, "text": "12"})).await;
        let s = step(&mut env, json!({"action": "input_text", "element_index": n, "text": "34", "overwrite": true}))
            .await
            .state;
        assert_eq!(s.element_index.0[n as usize - 1].attributes.value.as_deref(), Some("34"));
        // A textarea takes \n as a line break; contenteditable takes text too.
        let ta = by_id_name(&s, "ta");
        let s = step(&mut env, json!({"action": "input_text", "element_index": ta, "text": "\nline2"})).await.state;
        assert_eq!(s.element_index.0[ta as usize - 1].attributes.value.as_deref(), Some("line1\nline2"));
        let ce = find(&s, "contenteditable", |d| d.text_content.as_deref() == Some("start"));
        let s =
            step(&mut env, json!({"action": "input_text", "element_index": ce, "text": "replaced", "overwrite": true}))
                .await
                .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(eval(&env, "document.getElementById('ce').textContent").await, "replaced");
    })
}

#[test]
fn enter_in_a_text_input_submits_the_form() {
    run(async {
        let mut env = env("/form.html").await;
        let q = by_id_name(env.state(), "q");
        let s = step(&mut env, json!({"action": "input_text", "element_index": q, "text": "zz\n", "overwrite": true}))
            .await
            .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.url.contains("/submitted.html?q=zz"), "{}", s.url);
        assert!(s.page_content.contains("# Submitted"), "{}", s.page_content);
    })
}

#[test]
fn select_option_fires_input_and_change_and_adds_on_multiple() {
    run(async {
        let mut env = env("/form.html").await;
        let s0 = env.state().clone();
        let one = by_id_name(&s0, "one");
        let yankee = by_text(&s0, "Yankee");
        let s = step(&mut env, json!({"action": "select_option", "element_index": one, "option_index": yankee}))
            .await
            .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(s.element_index.0[one as usize - 1].attributes.value.as_deref(), Some("y"));
        let log = eval(&env, "document.getElementById('log').textContent").await;
        assert!(log.as_str().unwrap().contains("input:one change:one=y"), "{log}");
        assert!(s.page_content.contains("selected=\"Yankee\""), "{}", s.page_content);
        let many = by_id_name(&s, "many");
        let green = by_text(&s, "Green");
        let s = step(&mut env, json!({"action": "select_option", "element_index": many, "option_index": green}))
            .await
            .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let log = eval(&env, "document.getElementById('log').textContent").await;
        assert!(log.as_str().unwrap().contains("change:many=r+g"), "multiple adds: {log}");
        // An option of another select, a non-option, a disabled option.
        let xray = by_text(&s, "Xray");
        let s2 =
            step(&mut env, json!({"action": "select_option", "element_index": many, "option_index": xray})).await.state;
        assert_eq!(code(&s2), Some(ErrorCode::ElementNotInteractive));
        assert!(s2.error.as_ref().unwrap().message.contains("not an option of the select"), "{:?}", s2.error);
        assert_eq!(s2.state_hash, s.state_hash);
        let s3 =
            step(&mut env, json!({"action": "select_option", "element_index": one, "option_index": one})).await.state;
        assert_eq!(code(&s3), Some(ErrorCode::ElementNotInteractive));
        let zulu = by_text(&s, "Zulu");
        let s4 =
            step(&mut env, json!({"action": "select_option", "element_index": one, "option_index": zulu})).await.state;
        assert_eq!(code(&s4), Some(ErrorCode::ElementNotInteractive));
        assert!(s4.error.as_ref().unwrap().message.contains("disabled"));
        let q = by_id_name(&s, "q");
        let s5 =
            step(&mut env, json!({"action": "select_option", "element_index": q, "option_index": zulu})).await.state;
        assert_eq!(code(&s5), Some(ErrorCode::ElementNotInteractive));
    })
}

#[test]
fn scroll_moves_the_page_or_the_container_under_the_pointer() {
    run(async {
        let mut env = env("/scroll.html").await;
        assert!(texts(env.state()).iter().any(|t| t == "Inner 1"));
        // The page: by one viewport when pixels is absent.
        let s = step(&mut env, json!({"action": "scroll", "direction": "down"})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(env.captured().view.scroll.1, 720.0);
        assert!(!texts(&s).iter().any(|t| t == "Inner 1"));
        let s = step(&mut env, json!({"action": "scroll", "direction": "up", "pixels": 720})).await.state;
        assert_eq!(env.captured().view.scroll.1, 0.0);
        // The container, through an element inside it.
        let inner = by_text(&s, "Inner 2");
        let s = step(&mut env, json!({"action": "scroll", "direction": "down", "pixels": 300, "element_index": inner}))
            .await
            .state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(env.captured().view.scroll.1, 0.0, "the page did not move");
        assert!(!texts(&s).iter().any(|t| t == "Inner 2"), "container scrolled");
        assert!(texts(&s).iter().any(|t| t == "Inner 10"), "{:?}", texts(&s));
        let box_top = eval(&env, "document.getElementById('box').scrollTop").await;
        assert_eq!(box_top, 300);
    })
}

#[test]
fn navigate_loads_pages_and_a_404_is_a_page() {
    run(async {
        let mut env = env("/kinds.html").await;
        let s = step(&mut env, json!({"action": "navigate", "url": url("/form.html")})).await.state;
        assert!(s.error.is_none());
        assert_eq!(s.url, url("/form.html"));
        let s = step(&mut env, json!({"action": "navigate", "url": url("/missing.html")})).await.state;
        assert!(s.error.is_none(), "a 404 page is a page: {:?}", s.error);
        assert!(s.page_content.contains("Not found"));
    })
}

#[test]
fn failed_navigation_keeps_the_state_and_the_page() {
    run(async {
        let mut env = env("/form.html").await;
        let q = by_id_name(env.state(), "q");
        let before = step(&mut env, json!({"action": "input_text", "element_index": q, "text": "typed"})).await.state;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let s = step(&mut env, json!({"action": "navigate", "url": format!("http://127.0.0.1:{port}/")})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::NavigationFailed), "{:?}", s.error);
        assert!(s.error.as_ref().unwrap().message.contains("ERR_CONNECTION_REFUSED"), "{:?}", s.error);
        assert_eq!(s.state_hash, before.state_hash);
        assert_eq!(s.element_index, before.element_index);
        let s = step(&mut env, json!({"action": "navigate", "url": "http://no-such-host.invalid/"})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::NavigationFailed), "{:?}", s.error);
        // The browser really is back on the page.
        let href = eval(&env, "location.pathname").await;
        assert_eq!(href, "/form.html");
        let i = by_text(&s, "Go");
        let after = step(&mut env, json!({"action": "click_element", "element_index": i})).await.state;
        assert!(after.url.contains("/submitted.html"), "the restored page still works: {}", after.url);
    })
}

/// A blank tab's first load is not intercepted (nothing there to keep): when it
/// fails, Chromium's error page that committed in its place is undone, and the
/// tab is blank again, as it was.
#[test]
fn a_failed_first_load_leaves_a_blank_tab_blank() {
    run(async {
        let mut env =
            sightline_api::Env::new(tab().await, sightline_api::EnvOptions { screenshot: false }).await.expect("env");
        let blank = env.state().clone();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dead = format!("http://127.0.0.1:{port}/");
        let s = step(&mut env, json!({"action": "navigate", "url": dead})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::NavigationFailed), "{:?}", s.error);
        assert!(s.error.as_ref().unwrap().message.contains("ERR_CONNECTION_REFUSED"), "{:?}", s.error);
        assert_eq!(s.url, "about:blank");
        assert_eq!(s.state_hash, blank.state_hash);
        assert_eq!(eval(&env, "location.href").await, "about:blank");
        // Not intercepted: the error page committed, then the blank page came back.
        assert!(env.tab().navigation_count() >= 2, "{}", env.tab().navigation_count());
        // The tab loads pages as before; once it shows one, a failed load is
        // intercepted (nothing commits).
        let s = step(&mut env, json!({"action": "navigate", "url": url("/form.html")})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        let loaded = env.tab().navigation_count();
        let s = step(&mut env, json!({"action": "navigate", "url": dead})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::NavigationFailed), "{:?}", s.error);
        assert_eq!(eval(&env, "location.pathname").await, "/form.html");
        assert_eq!(env.tab().navigation_count(), loaded);
        // A tab navigated the moment it is open (no capture first) fails the same way.
        let t = tab().await;
        let failed = t.navigate(&dead).await;
        assert!(matches!(failed, Err(sightline_browser::BrowserError::NavigationFailed { .. })), "{failed:?}");
        assert_eq!(t.evaluate("location.href").await.unwrap(), "about:blank");
        t.navigate(&url("/form.html")).await.expect("a page loads after");
    })
}

#[test]
fn every_error_code_leaves_the_state_unchanged() {
    run(async {
        let mut env = env("/form.html").await;
        let base = env.state().clone();
        let cases = [
            (json!("not an object"), ErrorCode::ActionValidationFailed),
            (json!({"action": "click_element", "element_index": 0}), ErrorCode::InvalidElementIndex),
            (json!({"action": "click_element", "element_index": 500}), ErrorCode::InvalidElementIndex),
            (json!({"action": "click_element", "element_index": -2}), ErrorCode::ActionValidationFailed),
            (json!({"action": "input_text", "element_index": 1}), ErrorCode::ActionValidationFailed),
            (json!({"action": "scroll", "direction": "diagonal"}), ErrorCode::ActionValidationFailed),
            (json!({"action": "navigate", "url": "/relative"}), ErrorCode::ActionValidationFailed),
            (json!({"action": "click_element", "element_index": 1, "force": true}), ErrorCode::ActionValidationFailed),
        ];
        for (action, want) in cases {
            let s = step(&mut env, action.clone()).await.state;
            assert_eq!(code(&s), Some(want), "{action}: {:?}", s.error);
            assert_eq!(s.error.as_ref().unwrap().failed_action, action);
            assert_eq!(s.state_hash, base.state_hash);
            assert_eq!(s.element_index, base.element_index);
            assert_eq!(s.page_content, base.page_content);
        }
        let s = env.step("{not json").await.state;
        assert_eq!(code(&s), Some(ErrorCode::ActionValidationFailed));
        assert_eq!(s.error.as_ref().unwrap().failed_action, json!("{not json"));
        // Not interactive: disabled, read-only, wrong kind.
        let off = by_id_name(&base, "off");
        let s = step(&mut env, json!({"action": "input_text", "element_index": off, "text": "x"})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::ElementNotInteractive));
        assert!(s.error.as_ref().unwrap().message.contains("disabled"));
        let s = step(&mut env, json!({"action": "click_element", "element_index": off})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::ElementNotInteractive));
        let ro = by_id_name(&base, "ro");
        let s = step(&mut env, json!({"action": "input_text", "element_index": ro, "text": "x"})).await.state;
        assert!(s.error.as_ref().unwrap().message.contains("read-only"), "{:?}", s.error);
        let go = by_text(&base, "Go");
        let s = step(&mut env, json!({"action": "input_text", "element_index": go, "text": "x"})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::ElementNotInteractive));
        assert!(s.error.as_ref().unwrap().message.contains("does not support input_text"), "{:?}", s.error);
        assert_eq!(s.state_hash, base.state_hash);
        assert_eq!(eval(&env, "document.querySelector('[name=ro]').value").await, "fixed");
    })
}

#[test]
fn covered_and_removed_targets_are_refused_by_name() {
    run(async {
        let mut env = env("/modal.html").await;
        let s = env.state().clone();
        // Schedule an overlay after the state is taken (1.5 s is a long timer: not waited for).
        let later = by_text(&s, "Cover later");
        let s = step(&mut env, json!({"action": "click_element", "element_index": later})).await.state;
        tokio::time::sleep(Duration::from_millis(1700)).await;
        let target = by_text(&s, "Target");
        let s2 = step(&mut env, json!({"action": "click_element", "element_index": target})).await.state;
        assert_eq!(code(&s2), Some(ErrorCode::ElementNotInteractive), "{:?}", s2.error);
        let msg = &s2.error.as_ref().unwrap().message;
        assert!(msg.contains("covered by <div") && msg.contains("late"), "{msg}");
        assert_eq!(s2.state_hash, s.state_hash);
        assert_eq!(eval(&env, "document.getElementById('out').textContent").await, "", "nothing was clicked");

        let mut env = common::env("/modal.html").await;
        let vanish = by_text(env.state(), "Remove later");
        let s = step(&mut env, json!({"action": "click_element", "element_index": vanish})).await.state;
        tokio::time::sleep(Duration::from_millis(1700)).await;
        let target = by_text(&s, "Target");
        let s2 = step(&mut env, json!({"action": "click_element", "element_index": target})).await.state;
        assert_eq!(code(&s2), Some(ErrorCode::ElementNotInteractive), "{:?}", s2.error);
        assert!(s2.error.as_ref().unwrap().message.contains("removed"), "{:?}", s2.error);
    })
}

#[test]
fn an_open_dialog_hides_what_it_covers() {
    run(async {
        let mut env = env("/modal.html").await;
        assert!(texts(env.state()).iter().any(|t| t == "Link under the modal"));
        let open = by_text(env.state(), "Open dialog");
        let s = step(&mut env, json!({"action": "click_element", "element_index": open})).await.state;
        assert_eq!(texts(&s), vec!["Close".to_string()], "{}", s.page_content);
        assert!(s.page_content.contains("[dialog \"Confirm\"]"), "{}", s.page_content);
        assert!(s.page_content.contains("Are you sure?"));
        assert!(!s.page_content.contains("Link under the modal"), "{}", s.page_content);
        let s = step(&mut env, json!({"action": "click_element", "element_index": 1})).await.state;
        assert!(texts(&s).iter().any(|t| t == "Link under the modal"));
    })
}

#[test]
fn the_wait_covers_debounce_fetch_images_and_animations_but_not_long_timers() {
    run(async {
        let mut env = env("/timing.html").await;
        let s = env.state().clone();
        let search = by_id_name(&s, "search");
        let s = step(&mut env, json!({"action": "input_text", "element_index": search, "text": "rust"})).await.state;
        assert!(s.page_content.contains("Suggestion for rust"), "debounced update: {}", s.page_content);
        let f = by_text(&s, "Fetch later");
        let s = step(&mut env, json!({"action": "click_element", "element_index": f})).await.state;
        assert!(s.page_content.contains("fetched"), "{}", s.page_content);
        let img = by_text(&s, "Load image");
        let s = step(&mut env, json!({"action": "click_element", "element_index": img})).await.state;
        assert!(s.page_content.contains("(image: loaded image)"), "{}", s.page_content);
        assert!(texts(&s).iter().any(|t| t == "After image"));
        let a = by_text(&s, "Animate");
        let s = step(&mut env, json!({"action": "click_element", "element_index": a})).await.state;
        assert!(s.page_content.contains("animated"), "{}", s.page_content);
        // A five-second timer does not hold the state back.
        let long = by_text(&s, "Five second timer");
        let s = step(&mut env, json!({"action": "click_element", "element_index": long})).await.state;
        assert!(s.error.is_none());
        assert_eq!(
            eval(&env, "document.getElementById('out').textContent").await,
            "animated",
            "the 5 s timer has not fired"
        );
    })
}

#[test]
fn finish_and_fail_end_the_task() {
    run(async {
        let mut env = env("/kinds.html").await;
        let before = env.state().clone();
        let t = step(&mut env, json!({"action": "finish_task", "message": "done"})).await;
        assert!(t.ended);
        let task = t.state.task.unwrap();
        assert_eq!(task.status, sightline_api::TaskStatus::Finished);
        assert_eq!(task.message, "done");
        assert_eq!(t.state.state_hash, before.state_hash);
        let t = step(&mut env, json!({"action": "fail_task", "message": "stuck"})).await;
        assert_eq!(t.state.task.unwrap().status, sightline_api::TaskStatus::Failed);
    })
}

#[test]
fn a_navigation_that_times_out_fails_and_restores_the_page() {
    run(async {
        let settle =
            sightline_browser::SettleOptions { load_timeout: Duration::from_millis(800), ..Default::default() };
        let tab = tab_with(sightline_browser::TabOptions { settle, ..Default::default() }).await;
        let mut env = sightline_api::Env::new(tab, sightline_api::EnvOptions { screenshot: false }).await.unwrap();
        let s = step(&mut env, json!({"action": "navigate", "url": url("/form.html")})).await.state;
        assert!(s.error.is_none());
        let slow = step(&mut env, json!({"action": "navigate", "url": url("/kinds.html?delay=5000")})).await.state;
        assert_eq!(code(&slow), Some(ErrorCode::NavigationFailed), "{:?}", slow.error);
        // The navigation gave up at its own limit, before the server answered.
        assert!(slow.error.as_ref().unwrap().message.contains("timed out after 800ms"), "{:?}", slow.error);
        assert_eq!(slow.state_hash, s.state_hash);
        assert_eq!(eval(&env, "location.pathname").await, "/form.html");
    })
}

#[test]
fn a_crashed_page_is_an_internal_browser_error_and_fatal() {
    run(async {
        let mut env = env("/kinds.html").await;
        let before = env.state().clone();
        // Page.crash gets no reply: the renderer is gone.
        let _ = tokio::time::timeout(
            Duration::from_millis(500),
            env.tab().execute(&sightline_cdp::protocol::page::Crash {}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let t = step(&mut env, json!({"action": "click_element", "element_index": 1})).await;
        assert_eq!(code(&t.state), Some(ErrorCode::InternalBrowserError), "{:?}", t.state.error);
        assert!(t.fatal, "the environment must end");
        assert_eq!(t.state.state_hash, before.state_hash);
    })
}

#[test]
fn clicking_after_the_page_scrolled_hits_the_right_element() {
    run(async {
        let mut env = env("/scroll.html").await;
        let s = step(&mut env, json!({"action": "scroll", "direction": "down", "pixels": 1000})).await.state;
        assert!(s.error.is_none());
        let i = by_text(&s, "Outer 30");
        let s = step(&mut env, json!({"action": "click_element", "element_index": i})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert_eq!(eval(&env, "location.hash").await, "#o30");
    })
}

#[test]
fn settle_tells_its_caller_when_it_timed_out() {
    run(async {
        let settle = sightline_browser::SettleOptions { cap: Duration::from_millis(300), ..Default::default() };
        let tab = tab_with(sightline_browser::TabOptions { settle, ..Default::default() }).await;
        tab.navigate(&url("/form.html")).await.unwrap();
        // A request that takes longer than the wait's cap.
        let since = Instant::now();
        tab.evaluate("void fetch('/kinds.html?delay=3000').then(() => { window.fetched = true; })").await.unwrap();
        let r = tab.settle(since).await.unwrap();
        assert!(matches!(r, sightline_browser::Settled::TimedOut { loading: false, .. }), "{r:?}");
        // It gave up before the request ended.
        assert_eq!(tab.evaluate("window.fetched === undefined").await.unwrap(), json!(true));
        // Counting only what starts from now on, the page is at rest.
        let r = tab.settle(Instant::now()).await.unwrap();
        assert_eq!(r, sightline_browser::Settled::Stable);
    })
}

// Issue 35, item 1: keys and history in the protocol.
#[test]
fn press_key_sends_real_keys_to_an_element_or_to_focus() {
    run(async {
        let mut env = env("/keys.html").await;
        let s = env.state().clone();
        // Enter in a text field submits its form.
        let msg = find(&s, "the message field", |d| d.attributes.name.as_deref() == Some("msg"));
        let s = step(&mut env, json!({"action": "press_key", "key": "Enter", "element_index": msg})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("sent: hello"), "{}", s.page_content);
        // Control+A then Backspace on whatever has focus (the field, focused by the last key) clears it.
        step(&mut env, json!({"action": "press_key", "key": "Control+A"})).await;
        let s = step(&mut env, json!({"action": "press_key", "key": "Backspace"})).await.state;
        assert_eq!(s.element_index.0[msg as usize - 1].attributes.value.as_deref(), Some(""), "{}", s.page_content);
        // Arrow keys move a slider.
        let vol = find(&s, "the slider", |d| d.attributes.type_.as_deref() == Some("range"));
        step(&mut env, json!({"action": "press_key", "key": "ArrowRight", "element_index": vol})).await;
        let s = step(&mut env, json!({"action": "press_key", "key": "ArrowRight"})).await.state;
        assert!(s.page_content.contains("volume 7"), "{}", s.page_content);
        assert!(s.page_content.contains("value=\"7\""), "{}", s.page_content);
        // A terminal's helper textarea is transparent and 1 px: listed, and keys reach it.
        assert!(s.page_content.contains("textbox \"Terminal input\""), "{}", s.page_content);
        let ti = find(&s, "the terminal input", |d| d.tag == "textarea");
        for key in ["l", "s", "Enter"] {
            let s = step(&mut env, json!({"action": "press_key", "key": key, "element_index": ti})).await.state;
            assert!(s.error.is_none(), "{key}: {:?}", s.error);
        }
        let screen = eval(&env, "document.getElementById('screen').textContent").await;
        assert_eq!(screen.as_str(), Some("$ ls ⏎"));
        // A key no keyboard has is refused, and the state is what it was.
        let before = env.state().state_hash.clone();
        let s = step(&mut env, json!({"action": "press_key", "key": "Hyper+Q"})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::ActionValidationFailed));
        assert!(s.error.as_ref().unwrap().message.contains("not a modifier"), "{:?}", s.error);
        assert_eq!(s.state_hash, before);
    })
}

#[test]
fn go_back_and_go_forward_walk_the_tabs_history() {
    run(async {
        let mut env = env("/keys.html").await;
        // Nothing before the first page: refused, nothing changes.
        let before = env.state().clone();
        let s = step(&mut env, json!({"action": "go_back"})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::NavigationFailed), "{:?}", s.error);
        assert!(s.error.as_ref().unwrap().message.contains("no earlier page"), "{:?}", s.error);
        assert_eq!((s.url.as_str(), s.state_hash.as_str()), (before.url.as_str(), before.state_hash.as_str()));
        let next = by_text(&s, "Next page");
        let s = step(&mut env, json!({"action": "click_element", "element_index": next})).await.state;
        assert!(s.url.ends_with("/form.html"), "{}", s.url);
        let s = step(&mut env, json!({"action": "go_back"})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.url.ends_with("/keys.html"), "{}", s.url);
        assert!(s.page_content.contains("Terminal input"), "{}", s.page_content);
        let s = step(&mut env, json!({"action": "go_forward"})).await.state;
        assert!(s.url.ends_with("/form.html"), "{}", s.url);
        let s = step(&mut env, json!({"action": "go_forward"})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::NavigationFailed), "{:?}", s.error);
        assert!(s.url.ends_with("/form.html"), "{}", s.url);
    })
}

#[test]
fn drag_moves_a_slider_by_an_offset_and_drops_an_html5_draggable_on_a_target() {
    run(async {
        let mut env = env("/drag.html").await;
        let s = env.state().clone();
        // A custom slider follows the pointer while the button is held.
        let thumb = find(&s, "the slider thumb", |d| d.role.as_deref() == Some("slider"));
        let s = step(&mut env, json!({"action": "drag", "element_index": thumb, "dx": 140, "dy": 0})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("level: 50"), "{}", s.page_content);
        // A draggable="true" card is listed, and an HTML5 drag drops it where it is taken.
        let card = find(&s, "the card", |d| d.text_content.as_deref() == Some("Card A"));
        let bin = find(&s, "the drop zone", |d| d.text_content.as_deref() == Some("Done"));
        let s = step(&mut env, json!({"action": "drag", "element_index": card, "to_element_index": bin})).await.state;
        assert!(s.error.is_none(), "{:?}", s.error);
        assert!(s.page_content.contains("dropped: Card A"), "{}", s.page_content);
        // A drag with no target, or an index the state does not have, changes nothing.
        let before = s.state_hash.clone();
        let s = step(&mut env, json!({"action": "drag", "element_index": card})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::ActionValidationFailed));
        let s = step(&mut env, json!({"action": "drag", "element_index": card, "to_element_index": 999})).await.state;
        assert_eq!(code(&s), Some(ErrorCode::InvalidElementIndex));
        assert_eq!(s.state_hash, before);
    })
}
