//! Faithful reading: what the agent reads is what a person sees, and what it is
//! offered it can really do. One fixture page per rule, against real Chromium.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use sightline_api::{ErrorCode, StateObject};

/// The index of the token `[N]role "name"` in page_content (so it must be there).
fn token(s: &StateObject, role: &str, name: &str) -> u64 {
    let needle = format!("]{role} \"{name}\"");
    let content = &s.page_content;
    let at = content.find(&needle).unwrap_or_else(|| panic!("no {role} {name:?} in page_content:\n{content}"));
    let open = content[..at].rfind('[').expect("token start");
    content[open + 1..at].parse().expect("token index")
}

fn line_with<'a>(s: &'a StateObject, needle: &str) -> &'a str {
    s.page_content
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{}", s.page_content))
}

fn ok(s: &StateObject) {
    assert!(s.error.is_none(), "unexpected error {:?}\n{}", s.error, s.page_content);
}

#[test]
fn text_joins_inline_boxes_as_rendered() {
    run(async {
        let env = env("/fidelity/text.html").await;
        let s = env.state();
        let lines: Vec<&str> = s.page_content.lines().collect();
        for want in [
            "Enter \"Deneen\" into the box",
            "$42.99",
            "e-mail H2O Select Paris, then",
            // A no-break space stays one (Chromium's text and names keep it).
            "a\u{a0}b",
            "XY Z",
            "def f():",
            "    return  1",
            "First block",
            "Second",
            "line",
            "- one",
            "- two bold",
        ] {
            assert!(lines.contains(&want), "missing line {want:?} in:\n{}", s.page_content);
        }
        // A table row is one line, cells separated, block links inside a cell included.
        let users = line_with(s, "Users");
        assert!(users.starts_with("Users | ["), "{users}");
        assert!(users.contains("]link \"Add\"") && users.contains("]link \"Change\""), "{users}");
        assert!(line_with(s, "Groups").contains("]link \"Add\""));
        assert!(lines.contains(&"Model | Actions"), "{}", s.page_content);
        // A transparent box over a text does not hide it (its links are listed in line);
        // an opaque one does.
        assert!(line_with(s, "2 items left").contains("]link \"All\""), "{}", s.page_content);
        assert!(!s.page_content.contains("Hidden under an overlay"), "{}", s.page_content);
    })
}

#[test]
fn every_target_is_in_the_text_named_and_usable() {
    run(async {
        let mut env = env("/fidelity/targets.html").await;
        let s = env.state().clone();
        // Each indexed element appears in page_content exactly once.
        for i in 1..=s.element_index.0.len() {
            assert_eq!(s.page_content.matches(&format!("[{i}]")).count(), 1, "[{i}] in:\n{}", s.page_content);
        }
        token(&s, "clickable", "Column menu");
        assert!(s.page_content.contains("]textbox \"Comment body\" value=\"draft\""), "{}", s.page_content);
        let close = token(&s, "button", "×");
        token(&s, "button", "Settings");
        // No DOM rule names it; Chromium's accessibility tree does.
        token(&s, "button", "Close panel");
        token(&s, "textbox", "Due date");
        // The closed <details> hides its select, which no longer covers what follows.
        assert!(!s.element_index.0.iter().any(|d| d.attributes.name.as_deref() == Some("hidden-in-details")));
        token(&s, "button", "After details");
        token(&s, "clickable", "Focusable card");
        // The delegating <ul> is not a target; its items are.
        let apple = token(&s, "clickable", "Apple");
        assert!(!s.page_content.contains("\"Apple Banana\""), "{}", s.page_content);
        token(&s, "clickable", "Rename me");
        assert!(s.page_content.contains("]slider value=\"3\" min=0 max=10"), "{}", s.page_content);
        assert!(s.page_content.contains("]spinbutton value=\"2\" min=1 max=5"), "{}", s.page_content);
        assert!(s.page_content.contains(" no-file"), "{}", s.page_content);
        token(&s, "link", "Home page");
        assert!(s.page_content.contains("focused"), "autofocus shown: {}", s.page_content);
        assert!(s.page_content.contains("[scroll box: 0px above,"), "{}", s.page_content);

        let s2 = step(&mut env, json!({"action": "click_element", "element_index": apple})).await.state;
        ok(&s2);
        assert_eq!(eval(&env, "window.picked").await, "Apple");
        let dbl = token(&s2, "clickable", "Rename me");
        let s3 = step(&mut env, json!({"action": "click_element", "element_index": dbl, "count": 2})).await.state;
        ok(&s3);
        assert!(s3.page_content.contains("Renamed"), "{}", s3.page_content);
        let close = token(&s3, "button", "×").min(close.max(1));
        let s4 = step(&mut env, json!({"action": "click_element", "element_index": close})).await.state;
        ok(&s4);
        assert!(!s4.page_content.contains("\"×\""));
        let svg = token(&s4, "clickable", "Column menu");
        ok(&step(&mut env, json!({"action": "click_element", "element_index": svg})).await.state);
        assert_eq!(eval(&env, "window.svgClicked").await, 1);
        // Bad count values are validation errors.
        let e = step(&mut env, json!({"action": "click_element", "element_index": svg, "count": 3})).await.state;
        assert_eq!(e.error.as_ref().map(|e| e.code), Some(ErrorCode::ActionValidationFailed));
    })
}

#[test]
fn modal_dialog_and_inert_content_are_not_offered() {
    run(async {
        let mut env = env("/fidelity/modal.html").await;
        let s = env.state().clone();
        assert!(!s.page_content.contains("]button \"Behind\""), "{}", s.page_content);
        assert!(!s.page_content.contains("Inert button\""), "{}", s.page_content);
        assert!(!s.page_content.contains("Inert link\""), "{}", s.page_content);
        let close = token(&s, "button", "Close dialog");
        let s = step(&mut env, json!({"action": "click_element", "element_index": close})).await.state;
        ok(&s);
        let behind = token(&s, "button", "Behind");
        assert!(!s.page_content.contains("Inert button\""), "inert stays inert: {}", s.page_content);
        ok(&step(&mut env, json!({"action": "click_element", "element_index": behind})).await.state);
        assert_eq!(eval(&env, "window.behind").await, 1);
    })
}

#[test]
fn javascript_dialogs_are_part_of_the_state() {
    run(async {
        let mut env = env("/fidelity/jsdialog.html").await;
        let delete = token(env.state(), "button", "Delete");
        // A confirm() must not hang the click (a hang guard, not a measure).
        let click = step(&mut env, json!({"action": "click_element", "element_index": delete}));
        let s = tokio::time::timeout(Duration::from_secs(60), click).await.expect("the click answers").state;
        ok(&s);
        assert!(s.page_content.contains("[confirm dialog"), "{}", s.page_content);
        assert!(s.page_content.contains("Delete item 3?"), "{}", s.page_content);
        assert_eq!(s.element_index.0.len(), 2, "only the dialog's buttons: {}", s.page_content);
        // Anything else waits for the answer, with a typed error and the state unchanged.
        let e = step(&mut env, json!({"action": "scroll", "direction": "down"})).await.state;
        assert_eq!(e.error.as_ref().map(|e| e.code), Some(ErrorCode::ElementNotInteractive));
        assert_eq!(e.state_hash, s.state_hash);
        let cancel = token(&s, "button", "Cancel");
        let s = step(&mut env, json!({"action": "click_element", "element_index": cancel})).await.state;
        ok(&s);
        assert!(s.page_content.contains("kept"), "{}", s.page_content);
        // confirm → OK
        let delete = token(&s, "button", "Delete");
        let s = step(&mut env, json!({"action": "click_element", "element_index": delete})).await.state;
        let okb = token(&s, "button", "OK");
        let s = step(&mut env, json!({"action": "click_element", "element_index": okb})).await.state;
        assert!(s.page_content.contains("deleted"), "{}", s.page_content);
        // alert
        let save = token(&s, "button", "Save");
        let s = step(&mut env, json!({"action": "click_element", "element_index": save})).await.state;
        assert!(s.page_content.contains("[alert dialog") && s.page_content.contains("Saved!"), "{}", s.page_content);
        let okb = token(&s, "button", "OK");
        let s = step(&mut env, json!({"action": "click_element", "element_index": okb})).await.state;
        assert!(s.page_content.contains("alerted"), "{}", s.page_content);
        // prompt: type, then OK
        let ask = token(&s, "button", "Ask");
        let s = step(&mut env, json!({"action": "click_element", "element_index": ask})).await.state;
        assert!(s.page_content.contains("value=\"anon\""), "{}", s.page_content);
        let field = s.page_content.find("]textbox").map(|_| 1).unwrap();
        let s =
            step(&mut env, json!({"action": "input_text", "element_index": field, "text": "Ada", "overwrite": true}))
                .await
                .state;
        ok(&s);
        assert!(s.page_content.contains("value=\"Ada\""), "{}", s.page_content);
        let okb = token(&s, "button", "OK");
        let s = step(&mut env, json!({"action": "click_element", "element_index": okb})).await.state;
        assert!(s.page_content.contains("name=Ada"), "{}", s.page_content);
    })
}

#[test]
fn popups_become_the_current_page_and_return_to_their_opener() {
    run(async {
        let mut env = env("/fidelity/popup.html").await;
        let add = token(env.state(), "link", "Add another author");
        let s = step(&mut env, json!({"action": "click_element", "element_index": add})).await.state;
        ok(&s);
        assert!(s.url.ends_with("/fidelity/popup-child.html"), "{}", s.url);
        assert!(s.page_content.contains("[tabs: 1 \"Opener\" · 2 "), "{}", s.page_content);
        assert!(s.page_content.contains(" (current); switch_tab or close_tab by number]"), "{}", s.page_content);
        let name = by_id_name(&s, "author-name");
        ok(&step(&mut env, json!({"action": "input_text", "element_index": name, "text": "Ursula"})).await.state);
        let save = token(env.state(), "button", "Save");
        let s = step(&mut env, json!({"action": "click_element", "element_index": save})).await.state;
        ok(&s);
        assert!(s.url.ends_with("/fidelity/popup.html"), "back on the opener: {}", s.url);
        assert!(!s.page_content.contains("[tabs: "), "{}", s.page_content);
        assert!(
            s.page_content.contains("selected=\"Ursula\""),
            "the opener shows what the popup did: {}",
            s.page_content
        );
    })
}

// Issue 35: tabs by number: switch between them, close one; the only tab stays.
#[test]
fn tabs_are_numbered_switched_and_closed() {
    run(async {
        let mut env = env("/fidelity/popup.html").await;
        let add = token(env.state(), "link", "Add another author");
        let s = step(&mut env, json!({"action": "click_element", "element_index": add})).await.state;
        assert!(s.url.ends_with("/fidelity/popup-child.html"), "{}", s.url);
        // Back to the first tab: its page, with both tabs listed.
        let s = step(&mut env, json!({"action": "switch_tab", "tab": 1})).await.state;
        ok(&s);
        assert!(s.url.ends_with("/fidelity/popup.html"), "{}", s.url);
        assert!(s.page_content.contains("1 \"Opener\" (current) · 2 "), "{}", s.page_content);
        // No tab 3; the state is what it was.
        let e = step(&mut env, json!({"action": "switch_tab", "tab": 3})).await.state;
        assert_eq!(e.error.as_ref().map(|e| e.code), Some(ErrorCode::ActionValidationFailed), "{:?}", e.error);
        assert!(e.error.as_ref().unwrap().message.contains("the open tabs are 1..2"), "{:?}", e.error);
        assert_eq!(e.state_hash, s.state_hash);
        // Close the popup from the opener: one tab left, no tab line.
        let s = step(&mut env, json!({"action": "close_tab", "tab": 2})).await.state;
        ok(&s);
        assert!(s.url.ends_with("/fidelity/popup.html"), "{}", s.url);
        assert!(!s.page_content.contains("[tabs: "), "{}", s.page_content);
        let e = step(&mut env, json!({"action": "close_tab", "tab": 1})).await.state;
        assert_eq!(e.error.as_ref().map(|e| e.code), Some(ErrorCode::ActionValidationFailed), "{:?}", e.error);
        assert!(e.error.as_ref().unwrap().message.contains("only tab"), "{:?}", e.error);
        // Open it again and close the current one: the state returns to its opener.
        let add = token(&e, "link", "Add another author");
        step(&mut env, json!({"action": "click_element", "element_index": add})).await;
        let s = step(&mut env, json!({"action": "close_tab", "tab": 2})).await.state;
        ok(&s);
        assert!(s.url.ends_with("/fidelity/popup.html"), "{}", s.url);
    })
}

#[test]
fn editors_take_text_through_their_focus_proxy() {
    run(async {
        let mut env = env("/fidelity/editor.html").await;
        let code = token(env.state(), "textbox", "Code");
        let s =
            step(&mut env, json!({"action": "input_text", "element_index": code, "text": " let y = 2;"})).await.state;
        ok(&s);
        assert_eq!(eval(&env, "document.getElementById('ta').value").await, " let y = 2;");
        assert!(s.page_content.contains("let y = 2;"), "{}", s.page_content);
    })
}

#[test]
fn hover_reveals_hover_only_controls() {
    run(async {
        let mut env = env("/fidelity/hover-only.html").await;
        assert!(!env.state().page_content.contains("\"Delete\""), "{}", env.state().page_content);
        // Hovering the row's checkbox puts the pointer on the row: its delete button appears.
        let toggle = token(env.state(), "checkbox", "Done");
        let s = step(&mut env, json!({"action": "hover_element", "element_index": toggle})).await.state;
        ok(&s);
        let del = token(&s, "button", "Delete");
        let s = step(&mut env, json!({"action": "click_element", "element_index": del})).await.state;
        ok(&s);
        assert!(!s.page_content.contains("Buy milk"), "{}", s.page_content);
    })
}

#[test]
fn a_failed_navigation_leaves_the_live_page_as_it_was() {
    run(async {
        let mut env = env("/form.html").await;
        let q = by_id_name(env.state(), "q");
        let s = step(&mut env, json!({"action": "input_text", "element_index": q, "text": "kept", "overwrite": true}))
            .await
            .state;
        ok(&s);
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let e = step(&mut env, json!({"action": "navigate", "url": format!("http://{dead}/")})).await.state;
        assert_eq!(e.error.as_ref().map(|e| e.code), Some(ErrorCode::NavigationFailed), "{:?}", e.error);
        assert!(e.error.as_ref().unwrap().message.contains("ERR_CONNECTION_REFUSED"), "{:?}", e.error);
        assert_eq!(e.state_hash, s.state_hash);
        // The same live document: its elements still work and typed values are kept.
        let s2 = step(&mut env, json!({"action": "input_text", "element_index": q, "text": "!"})).await.state;
        ok(&s2);
        assert_eq!(s2.element_index.0[q as usize - 1].attributes.value.as_deref(), Some("kept!"));
    })
}

#[test]
fn a_click_that_lands_outside_its_target_is_refused() {
    run(async {
        let mut env = env("/fidelity/targets.html").await;
        let after = token(env.state(), "button", "After details");
        eval(&env, "document.getElementById('after-details').style.visibility = 'hidden'").await;
        let e = step(&mut env, json!({"action": "click_element", "element_index": after})).await.state;
        assert_eq!(e.error.as_ref().map(|e| e.code), Some(ErrorCode::ElementNotInteractive), "{:?}", e.error);
    })
}

#[test]
fn a_page_with_a_worker_settles_quickly() {
    run(async {
        // With a long settle cap, waiting on the worker would show as many seconds.
        let opts = sightline_browser::TabOptions {
            settle: sightline_browser::SettleOptions { cap: Duration::from_secs(20), ..Default::default() },
            ..Default::default()
        };
        let mut env = sightline_api::Env::new(tab_with(opts).await, sightline_api::EnvOptions { screenshot: false })
            .await
            .unwrap();
        let u = url("/fidelity/worker.html");
        ok(&step(&mut env, json!({"action": "navigate", "url": u})).await.state);
        let start = token(env.state(), "button", "Start worker");
        let s = step(&mut env, json!({"action": "click_element", "element_index": start})).await.state;
        ok(&s);
        assert!(s.page_content.contains("started"));
        // A second worker started the same way: the wait ends as stable, not at its 20 s cap.
        let since = Instant::now();
        env.tab().evaluate("window.w2 = new Worker('/fidelity/worker.js'), 1").await.unwrap();
        let r = env.tab().settle(since).await.unwrap();
        assert_eq!(r, sightline_browser::Settled::Stable, "settle waited for the worker");
    })
}

// Issue 17, item 1: covering follows the painting order. A text painted after
// (above) something opaque is seen; only a box painted later and opaque hides it.
#[test]
fn text_painted_above_a_canvas_is_read() {
    run(async {
        let env = env("/fidelity/painted.html").await;
        let s = env.state();
        ok(s);
        let c = &s.page_content;
        // MiniWoB++'s reward display: a positioned div painted after a positioned canvas.
        assert!(c.contains("Last reward: -"), "{c}");
        assert!(c.contains("Episodes done: 3"), "{c}");
        // A higher z-index is painted later whatever the tree order.
        assert!(c.contains("Raised above its cover"), "{c}");
        assert!(c.contains("Caption over a picture"), "{c}");
        // Opaque boxes painted later do hide: after it in tree order, or a higher
        // stacking context than the one the text's own z-index lives in.
        assert!(!c.contains("Hidden below a later box"), "{c}");
        assert!(!c.contains("Inside a lower context"), "{c}");
        // Elements follow the same rule.
        token(s, "button", "Go");
        token(s, "button", "Over the canvas");
        assert!(c.starts_with("Click the button."), "{c}");
    })
}

// Issue 17, item 2: the seed lists a `<label>` tied to a form control as interactive.
#[test]
fn labels_have_entries_of_their_own() {
    run(async {
        let mut env = env("/fidelity/labels.html").await;
        let s = env.state().clone();
        let c = &s.page_content;
        let label = |text: &str| {
            let at = s
                .element_index
                .0
                .iter()
                .position(|d| d.tag == "label" && d.text_content.as_deref() == Some(text))
                .unwrap_or_else(|| panic!("no label entry {text:?} in:\n{c}"));
            at as u64 + 1
        };
        // A label whose text names its control is a marker beside the control's token.
        let for_x = label("Label for input");
        let x = token(&s, "textbox", "Label for input");
        assert!(c.contains(&format!("[{for_x}]label [{x}]textbox \"Label for input\"")), "{c}");
        let wrapping = label("Wrapping label");
        let boxed = token(&s, "checkbox", "Wrapping label");
        assert!(c.contains(&format!("[{wrapping}]label [{boxed}]checkbox \"Wrapping label\"")), "{c}");
        let far = label("Far label");
        assert!(c.contains(&format!("[{far}]label [")), "{c}");
        // The text is not said twice.
        assert_eq!(c.matches("Label for input").count(), 1, "{c}");
        // A label that is not its control's name shows its text.
        let shown = token(&s, "label", "Shown label");
        token(&s, "textbox", "Named otherwise");
        // A hidden checkbox that its label draws is listed once, as the checkbox
        // Chromium lists, and clicked through its label.
        let custom = token(&s, "checkbox", "Custom box");
        assert!(!c.contains("label \"Custom box\""), "{c}");
        // A label tied to nothing is text.
        assert!(c.contains("Label of nothing"), "{c}");
        assert!(!s.element_index.0.iter().any(|d| d.text_content.as_deref() == Some("Label of nothing")), "{c}");
        // Every entry once in the text.
        for i in 1..=s.element_index.0.len() {
            assert_eq!(c.matches(&format!("[{i}]")).count(), 1, "[{i}] in:\n{c}");
        }
        assert_eq!(s.element_index.0[shown as usize - 1].tag, "label");
        // Clicking a label does what a click on the label does: it reaches the
        // label's listeners and toggles (or focuses) its control.
        let s = step(&mut env, json!({"action": "click_element", "element_index": wrapping})).await.state;
        ok(&s);
        assert!(s.page_content.contains("label clicks: 1"), "{}", s.page_content);
        assert!(
            s.page_content.contains(&format!("[{boxed}]checkbox \"Wrapping label\" checked")),
            "{}",
            s.page_content
        );
        let s = step(&mut env, json!({"action": "click_element", "element_index": custom})).await.state;
        ok(&s);
        assert!(s.page_content.contains("label clicks: 2"), "{}", s.page_content);
        let checked: bool =
            env.tab().evaluate("document.getElementById('hidden-box').checked").await.unwrap().as_bool().unwrap();
        assert!(checked, "the custom box's label toggles its hidden checkbox");
        let s = step(&mut env, json!({"action": "click_element", "element_index": for_x})).await.state;
        ok(&s);
        assert!(s.page_content.contains(&format!("[{x}]textbox \"Label for input\" focused")), "{}", s.page_content);
    })
}

// Issue 17, item 3: names a person would read.
#[test]
fn icon_buttons_are_named_as_chromium_names_them() {
    run(async {
        let env = env("/fidelity/icons.html").await;
        let s = env.state();
        ok(s);
        // An icon font's private-use glyph is no name: the title is.
        token(s, "button", "Delete Record");
        token(s, "link", "Edit Record");
        token(s, "button", "Show details");
        // TodoMVC's toggle-all: a transparent 1px checkbox that its label draws (an
        // arrow from ::before, the text at font-size 0). It is listed once, as the
        // checkbox with the name Chromium gives it, and clicked through its label.
        let toggle = token(s, "checkbox", "❯ Mark all as complete");
        assert!(
            s.page_content.contains(&format!("[{toggle}]checkbox \"❯ Mark all as complete\" unchecked")),
            "{}",
            s.page_content
        );
        assert!(!s.page_content.chars().any(|c| ('\u{e000}'..='\u{f8ff}').contains(&c)), "{}", s.page_content);
    })
}

// Issue 20, item 5: form fields are named from what their author wrote, never
// from content, so the fields the DOM rules leave unnamed are not asked about
// one by one; every name Chromium gives here is still there (its names, read
// from its accessibility tree for this page, are the ones asserted).
#[test]
fn form_fields_are_named_as_chromium_names_them() {
    run(async {
        let env = env("/fidelity/field-names.html").await;
        let s = env.state();
        ok(s);
        for (role, name) in [
            ("textbox", "Title only"),
            ("textbox", "Placeholder only"),
            ("textbox", "Aria placeholder"),
            ("textbox", "Textarea title"),
            ("combobox", "Select title"),
            ("checkbox", "Checkbox title"),
            ("textbox", "For label"),
            ("textbox", "Labelled by"),
        ] {
            token(s, role, name);
        }
        // Chromium names neither the slider nor the plain fields.
        assert!(s.page_content.contains("]slider value=\"50\""), "{}", s.page_content);
        // The plain fields stay unnamed; a file input's name is Chromium's own (asked).
        assert!(s.page_content.contains("[12]textbox [13]textbox [14]input \"Choose File\""), "{}", s.page_content);
    })
}

// Issue 17, item 5 (and issue 18, item 4): frames nested deep, each on another
// site than its parent, are all read, and the deepest one's button is usable.
#[test]
fn cross_site_frames_nested_deep_are_read() {
    run(async {
        let (a, b) = (world().site.addr().port(), world().other.addr().port());
        for depth in [4, 20] {
            let mut env = env(&format!("/hostile/sites.html?d={depth}&a={a}&b={b}")).await;
            let s = env.state().clone();
            for level in 0..=depth {
                assert!(
                    s.page_content.contains(&format!("Level {level} on ")),
                    "level {level} of {depth}:\n{}",
                    s.page_content
                );
            }
            let deepest = token(&s, "button", "Deepest button");
            let s = step(&mut env, json!({"action": "click_element", "element_index": deepest})).await.state;
            ok(&s);
            assert!(s.page_content.contains("]button \"Deepest button\" focused"), "{}", s.page_content);
            env.close().await;
        }
    })
}

// Issue 17, item 7: a just-started worker's first answer is part of settling.
#[test]
fn a_workers_first_answer_is_in_the_state() {
    run(async {
        for _ in 0..4 {
            let mut env = env("/fidelity/worker-hello.html").await;
            let s = env.state().clone();
            assert!(s.page_content.contains("worker says hello"), "{}", s.page_content);
            let again = token(&s, "button", "Ask again");
            let s = step(&mut env, json!({"action": "click_element", "element_index": again})).await.state;
            assert!(s.page_content.contains("worker says again"), "{}", s.page_content);
            env.close().await;
        }
    })
}

// Issue 17, item 7: React delegates handlers to its root; the handler a
// `<label onDoubleClick>` has lives in React's props, the evidence we read.
#[test]
fn a_react_label_with_a_delegated_double_click_can_be_double_clicked() {
    run(async {
        let mut env = env("/fidelity/react-todo.html").await;
        let s = env.state().clone();
        let milk = token(&s, "clickable", "Buy milk");
        token(&s, "clickable", "Walk the dog");
        let s = step(&mut env, json!({"action": "click_element", "element_index": milk, "count": 2})).await.state;
        ok(&s);
        assert!(s.page_content.contains("]textbox \"Edit todo\" value=\"Buy milk\""), "{}", s.page_content);
    })
}

// A panel animated from a fast interval (jQuery 1.x) is read when it has opened,
// and the control below it is where the next state says it is.
#[test]
fn an_interval_animation_is_waited_for() {
    run(async {
        let mut env = env("/fidelity/interval.html").await;
        let s = env.state().clone();
        let open = token(&s, "button", "Open");
        let s = step(&mut env, json!({"action": "click_element", "element_index": open})).await.state;
        ok(&s);
        assert!(s.page_content.contains("Panel content"), "{}", s.page_content);
        let next = token(&s, "button", "Next");
        let s = step(&mut env, json!({"action": "click_element", "element_index": next})).await.state;
        ok(&s);
        assert!(s.page_content.contains("Next clicked"), "{}", s.page_content);
    })
}

// Issue 33: SVG shapes are known to the capture by their boxes only. A pie's wedges
// overlap box for box and each box's centre is under the wedge's label; a click
// on a wedge is aimed at its own fill, where it is on top.
#[test]
fn overlapping_svg_shapes_are_clicked_inside_their_own_fill() {
    run(async {
        let mut env = env("/fidelity/pie.html").await;
        // The wedges, in document order: A, B, C.
        let wedges: Vec<u64> = env
            .state()
            .element_index
            .0
            .iter()
            .enumerate()
            .filter(|(_, d)| d.tag == "path")
            .map(|(i, _)| i as u64 + 1)
            .collect();
        assert_eq!(wedges.len(), 3, "{}", env.state().page_content);
        for (at, want) in wedges.into_iter().zip(["A", "B", "C"]) {
            let s = step(&mut env, json!({"action": "click_element", "element_index": at})).await.state;
            ok(&s);
            assert!(s.page_content.contains(&format!("picked: {want}")), "wedge {want}:\n{}", s.page_content);
        }
    })
}

// A rich-text editor keeps its own selection, told of the DOM's a moment after
// `selectionchange` (Draft.js under React): an overwrite must not delete at the stale caret.
#[test]
fn overwrite_in_a_rich_text_editor_waits_for_its_selection() {
    run(async {
        let mut env = env("/fidelity/async-selection.html").await;
        let body = token(env.state(), "textbox", "Body");
        let s =
            step(&mut env, json!({"action": "input_text", "element_index": body, "text": "Elm", "overwrite": true}))
                .await
                .state;
        ok(&s);
        assert_eq!(eval(&env, "document.getElementById('e').textContent").await, "Elm", "{}", s.page_content);
    })
}
