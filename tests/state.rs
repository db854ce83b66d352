//! The State Object against real Chromium: which elements are indexed, what
//! their descriptors say, what page_content shows, how state_hash behaves.

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn indexes_every_interactive_kind_in_document_order() {
    run(async {
        let env = env("/kinds.html").await;
        let s = env.state();
        let t = texts(s);
        let want = [
            "Relative link",
            "Absolute link",
            "Native button",
            "Disabled button",
            "Alpha",
            "Beta",
            "Role button",
            "Role link",
            "Role checkbox",
            "Editable",
            "Onclick div",
            "Listener div",
            "Mousedown div",
            "Pointerdown div",
            "Summary toggle",
        ];
        for w in want {
            assert!(t.iter().any(|x| x.starts_with(w)), "{w} missing from {t:?}");
        }
        // Document order: the relative link comes before the native button, which comes before the summary.
        let pos = |w: &str| t.iter().position(|x| x.starts_with(w)).unwrap();
        assert!(pos("Relative link") < pos("Native button") && pos("Native button") < pos("Summary toggle"));
        assert!(t.iter().any(|x| x.starts_with("Cursor span")), "cursor:pointer span is indexed");
        // A label tied to an indexed control names it, and is an entry of its own
        // (the seed lists it as interactive), shown as a marker beside the control.
        assert!(s.page_content.contains("]textbox \"Label for text\""), "{}", s.page_content);
        let label = s
            .element_index
            .0
            .iter()
            .position(|d| d.tag == "label" && d.text_content.as_deref() == Some("Label for text"));
        let label = label.unwrap_or_else(|| panic!("no label entry in {t:?}")) + 1;
        assert!(s.page_content.contains(&format!("[{label}]label [")), "{}", s.page_content);
        assert_eq!(s.page_content.matches("Label for text").count(), 1, "{}", s.page_content);
        // Inherited cursor, plain text and hidden inputs are not.
        assert!(
            !t.iter().any(|x| x == "inherited bold" || x == "Plain div" || x.starts_with("Plain paragraph")),
            "{t:?}"
        );
        assert!(!s.element_index.0.iter().any(|d| d.attributes.name.as_deref() == Some("secret")));
        // Keys are "1".."N".
        let v = serde_json::to_value(s).unwrap();
        let keys: Vec<String> = v["element_index"].as_object().unwrap().keys().cloned().collect();
        assert!(keys.contains(&"1".to_string()) && keys.contains(&s.element_index.0.len().to_string()));
    })
}

#[test]
fn descriptors_follow_the_seed_schema() {
    run(async {
        let env = env("/kinds.html").await;
        let s = env.state();
        let v = serde_json::to_value(s).unwrap();
        for (_, d) in v["element_index"].as_object().unwrap() {
            for k in ["tag", "role", "aria-label", "text_content", "attributes"] {
                assert!(d.get(k).is_some(), "{k} missing in {d}");
            }
            for k in ["name", "value", "placeholder", "type", "href", "checked"] {
                assert!(d["attributes"].get(k).is_some(), "attributes.{k} missing in {d}");
            }
        }
        let link = &s.element_index.0[by_text(s, "Relative link") as usize - 1];
        assert_eq!(link.role.as_deref(), Some("link"));
        assert_eq!(link.attributes.href.as_deref(), Some(url("/next.html?x=1").as_str()), "href is absolute");
        assert_eq!(link.attributes.checked, None);
        let text = &s.element_index.0[by_id_name(s, "q") as usize - 1];
        assert_eq!(text.tag, "input");
        assert_eq!(text.role.as_deref(), Some("textbox"));
        assert_eq!(text.attributes.value.as_deref(), Some("live value"), "value is the live value, not the attribute");
        assert_eq!(text.attributes.placeholder.as_deref(), Some("Search here"));
        assert_eq!(text.attributes.type_.as_deref(), Some("text"));
        assert_eq!(text.text_content, None);
        let agree = &s.element_index.0[by_id_name(s, "agree") as usize - 1];
        assert_eq!(agree.attributes.checked, Some(true));
        assert_eq!(agree.attributes.type_.as_deref(), Some("checkbox"));
        let radio = &s.element_index.0[by_id_name(s, "size") as usize - 1];
        assert_eq!(radio.attributes.checked, Some(false));
        let role_cb = &s.element_index.0[by_text(s, "Role checkbox") as usize - 1];
        assert_eq!(role_cb.attributes.checked, Some(true));
        let select = &s.element_index.0[by_id_name(s, "pick") as usize - 1];
        assert_eq!(select.attributes.value.as_deref(), Some("b"));
        assert_eq!(select.role.as_deref(), Some("combobox"));
        let close = find(s, "aria-labelled link", |d| d.aria_label.as_deref() == Some("Close dialog"));
        assert!(close > 0);
        let ta = &s.element_index.0[by_id_name(s, "notes") as usize - 1];
        assert_eq!(ta.attributes.value.as_deref(), Some("note text"));
        let submit = find(s, "submit input", |d| d.tag == "input" && d.attributes.type_.as_deref() == Some("submit"));
        assert_eq!(s.element_index.0[submit as usize - 1].attributes.value.as_deref(), Some("Send it"));
    })
}

#[test]
fn page_content_marks_elements_and_state() {
    run(async {
        let env = env("/kinds.html").await;
        let s = env.state();
        let pc = &s.page_content;
        assert!(pc.contains("# Every interactive kind"), "{pc}");
        assert!(pc.contains("Plain paragraph text that is not interactive."));
        let b = by_text(s, "Native button");
        assert!(pc.contains(&format!("[{b}]button \"Native button\"")), "{pc}");
        let d = by_text(s, "Disabled button");
        assert!(pc.contains(&format!("[{d}]button \"Disabled button\" disabled")), "{pc}");
        let agree = by_id_name(s, "agree");
        assert!(pc.contains(&format!("[{agree}]checkbox")) && pc.contains("checked"), "{pc}");
        assert!(pc.contains("value=\"live value\""), "{pc}");
        assert!(pc.contains("collapsed"), "summary state shown: {pc}");
        assert!(!pc.contains("<script") && !pc.contains("addEventListener"), "{pc}");
        assert!(pc.len() < 3000, "compact: {} chars", pc.len());
    })
}

#[test]
fn hidden_offscreen_clipped_and_covered_elements_are_not_indexed() {
    run(async {
        let env = env("/hidden.html").await;
        let s = env.state();
        let t = texts(s);
        // A transparent button is still there: a click at its place reaches it, and
        // Chromium's accessibility tree lists it (custom widgets put their real input so).
        // It shows no text (its descriptor's text_content is empty); its name is Chromium's.
        assert_eq!(
            t,
            vec!["Visible control".to_string(), String::new(), "Under click-through layer".to_string()],
            "{}",
            s.page_content
        );
        let pc = &s.page_content;
        assert!(pc.contains("[2]button \"Opacity zero\""), "{pc}");
        assert!(pc.contains("Visible text"));
        for hidden in ["hidden text", "invisible text", "noscript text", "Below the fold", "cover sheet"] {
            if hidden == "cover sheet" {
                continue;
            }
            assert!(!pc.contains(hidden), "{hidden} leaked into page_content: {pc}");
        }
        assert!(pc.contains("[scroll: 0px above,"), "scroll hint: {pc}");
    })
}

#[test]
fn iframes_and_shadow_roots_are_indexed() {
    run(async {
        let other_port = world().other.addr().port();
        let env = env(&format!("/frames.html?other={other_port}")).await;
        // The cross-site frame is attached paused and watched from its start: the first
        // stable state already has it.
        let mut env = env;
        let mut s = env.state().clone();
        let t = texts(&s);
        for w in ["Top button", "Button in same", "Button in cross", "Shadow button"] {
            assert!(t.iter().any(|x| x == w), "{w} missing: {t:?}\n{}", s.page_content);
        }
        assert!(s.page_content.contains("Shadow text"), "{}", s.page_content);
        let framed = s.element_index.0.iter().filter(|d| d.attributes.name.as_deref() == Some("framed")).count();
        assert_eq!(framed, 2, "inputs of both frames");
        // Acting inside each frame works.
        for who in ["same", "cross"] {
            let i = by_text(&s, &format!("Button in {who}"));
            s = step(&mut env, json!({"action": "click_element", "element_index": i})).await.state;
            assert!(s.error.is_none(), "{:?}", s.error);
            assert!(texts(&s).iter().any(|x| x == &format!("Clicked in {who}")), "{who}: {:?}", texts(&s));
        }
        let i = by_text(&s, "Shadow button");
        s = step(&mut env, json!({"action": "click_element", "element_index": i})).await.state;
        assert!(s.page_content.contains("Shadow clicked"), "{}", s.page_content);
        let i = find(&s, "cross frame input", |d| d.attributes.name.as_deref() == Some("framed"));
        let s2 = step(&mut env, json!({"action": "input_text", "element_index": i, "text": "hi"})).await.state;
        assert!(s2.error.is_none(), "{:?}", s2.error);
    })
}

#[test]
fn state_hash_is_stable_and_changes_with_what_is_seen() {
    run(async {
        let mut env = env("/scroll.html").await;
        let a = env.state().clone();
        assert_eq!(a.state_hash.len(), 64);
        // Nothing changes: the same hash.
        let again = env.tab().capture(false).await.unwrap();
        let b = sightline_api::StateObject::from_view(&again.view, None);
        assert_eq!(a.state_hash, b.state_hash);
        assert_eq!(a.page_content, b.page_content);
        // Two scrolls in a row give two different states.
        let s1 = step(&mut env, json!({"action": "scroll", "direction": "down", "pixels": 200})).await.state;
        let s2 = step(&mut env, json!({"action": "scroll", "direction": "down", "pixels": 200})).await.state;
        assert_ne!(a.state_hash, s1.state_hash);
        assert_ne!(s1.state_hash, s2.state_hash);
        // And the canonical form includes the scroll offsets.
        let canon = sightline_page::canonical(
            &env.captured().view.url,
            &env.captured().view.page_content,
            env.captured().view.scroll,
            &env.captured().view.elements,
        );
        assert!(canon.contains("\nscroll 0 400\n"), "{}", &canon[..200]);
    })
}

#[test]
fn screenshot_has_the_viewport_size() {
    run(async {
        use base64::Engine;
        let opts = sightline_browser::TabOptions { viewport: (800, 500), ..Default::default() };
        let tab = tab_with(opts).await;
        let mut env = sightline_api::Env::new(tab, sightline_api::EnvOptions { screenshot: true }).await.unwrap();
        let s = env.step(&json!({"action": "navigate", "url": url("/kinds.html")}).to_string()).await.state;
        let png = base64::engine::general_purpose::STANDARD.decode(&s.screenshot).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((w, h), (800, 500));
        // --no-screenshot gives "".
        let env2 = env_with("/kinds.html", sightline_api::EnvOptions { screenshot: false }).await;
        assert_eq!(env2.state().screenshot, "");
    })
}

/// The viewport walk searches long runs of rows for the ones in view; a fixed
/// bar inside a row far from them is in view all the same. The state has it
/// (the walk leaves such a page to the full snapshot), and once the bar is
/// hidden the walk takes the page again.
#[test]
fn a_fixed_bar_inside_a_far_row_of_a_long_run_is_in_the_state() {
    run(async {
        let env = env("/nested-out-of-flow.html").await;
        eval(&env, "scrollTo(0, 3000)").await;
        let tab = env.tab();
        let page_content = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["page_content"].to_string();
        let (state, walked) = state_walked(tab, false).await;
        let content = page_content(&state);
        assert!(content.contains(r#"link \"Home\""#) && content.contains(r#"button \"Account\""#), "{content}");
        assert!(!walked, "the walk would have left the bar out");
        eval(&env, "document.getElementById('bar').style.display = 'none'").await;
        let (state, walked) = state_walked(tab, false).await;
        let content = page_content(&state);
        assert!(!content.contains("Account") && content.contains("Section 38"), "{content}");
        assert!(walked, "a page whose fixed boxes are hidden is walked");
        env.close().await;
    })
}

/// 3,000 buttons more: past the walk's threshold.
const GROW: &str =
    "for (let i = 0; i < 3000; i++) document.body.append(Object.assign(document.createElement('button'), { textContent: 'B' + i }))";

/// A settled document last seen small sends its size check together with the
/// full snapshot; when the check finds it has grown, that capture is the walk's
/// all the same, and states agree either way. A new document is asked its size
/// alone first.
#[test]
fn a_small_page_sends_its_size_check_with_the_snapshot_and_a_grown_one_is_walked() {
    run(async {
        let env = env("/form.html").await;
        let tab = env.tab();
        let default = sightline_browser::CaptureOptions::default;
        assert!(!tab.capture_with(default()).await.unwrap().walked, "a small page: the full snapshot");
        let before = tab.size_checks_with_snapshot();
        assert!(!tab.capture_with(default()).await.unwrap().walked);
        assert_eq!(tab.size_checks_with_snapshot(), before + 1, "a settled small page: check and snapshot together");
        eval(&env, GROW).await;
        let first = tab.capture_with(default()).await.unwrap();
        assert_eq!(tab.size_checks_with_snapshot(), before + 2);
        assert!(first.walked, "the check saw it grow: this capture is the walk's");
        let next = tab.capture_with(default()).await.unwrap();
        assert!(next.walked);
        assert_eq!(tab.size_checks_with_snapshot(), before + 2, "a big page is not pipelined");
        assert_eq!(
            sightline_api::StateObject::from_view(&first.view, None).to_json_line(),
            sightline_api::StateObject::from_view(&next.view, None).to_json_line(),
            "either way the same state"
        );
        // A new document: its first capture asks its size alone.
        tab.navigate(&url("/form.html?again")).await.unwrap();
        let n = tab.size_checks_with_snapshot();
        assert!(!tab.capture_with(default()).await.unwrap().walked);
        assert_eq!(tab.size_checks_with_snapshot(), n, "a new document's first capture checks its size alone");
        env.close().await;
    })
}

/// Every element of a capture by its backend id: (tag, its `data-k`, which
/// [`NUMBER`] gives each element).
fn by_backend(c: &sightline_browser::Captured) -> std::collections::HashMap<i64, (String, String)> {
    (0..c.view.node_count())
        .filter_map(|i| c.view.node(i as _))
        .filter(|n| n.backend_id() > 0 && !n.tag().is_empty())
        .map(|n| (n.backend_id(), (n.tag().to_string(), n.attr("data-k").unwrap_or_default().to_string())))
        .collect()
}

/// Each element numbered in its `data-k`.
const NUMBER: &str = "document.querySelectorAll('*').forEach((e, i) => e.dataset.k = i)";

/// Backend ids are described once per element: a walk of an unchanged page
/// is handed the last walk's ids and describes nothing, and after the page
/// changes (elements added in view, one moved) the ids are asked again. Every
/// walk's ids name the nodes the full snapshot gives them.
#[test]
fn the_walk_describes_each_element_once_and_its_ids_are_the_full_snapshots() {
    run(async {
        let env = env("/form.html").await;
        let tab = env.tab();
        eval(&env, GROW).await;
        eval(&env, NUMBER).await;
        let walk = || tab.capture_with(sightline_browser::CaptureOptions::default());
        let full = || tab.capture_with(sightline_browser::CaptureOptions { all_rects: true, ..Default::default() });
        let check = |walked: &sightline_browser::Captured, full: &sightline_browser::Captured, when: &str| {
            assert!(walked.walked && !full.walked, "{when}: a walk and a full snapshot");
            let (w, f) = (by_backend(walked), by_backend(full));
            assert!(w.len() > 20, "{when}: {} elements walked", w.len());
            for (id, node) in &w {
                assert_eq!(f.get(id), Some(node), "{when}: backend id {id}");
            }
        };
        let known = tab.walks_with_ids_known();
        let first = walk().await.unwrap();
        check(&first, &full().await.unwrap(), "first walk");
        let second = walk().await.unwrap();
        assert_eq!(tab.walks_with_ids_known(), known + 1, "the second walk knew every id");
        let (a, b) = (by_backend(&first), by_backend(&second));
        let differ = a.iter().filter(|(id, n)| b.get(id) != Some(n)).count();
        assert!(differ == 0 && a.len() == b.len(), "{differ} of {} elements differ on the second walk", a.len());
        check(&second, &full().await.unwrap(), "second walk");
        // New elements in view, one moved: their ids are asked for, then known.
        eval(
            &env,
            "document.body.prepend(Object.assign(document.createElement('button'), { textContent: 'New one', id: 'new' })); \
             document.body.prepend(document.querySelectorAll('button')[40])",
        )
        .await;
        let changed = walk().await.unwrap();
        assert_eq!(tab.walks_with_ids_known(), known + 1, "a new element's id is described");
        check(&changed, &full().await.unwrap(), "after the change");
        let new = (0..changed.view.node_count())
            .filter_map(|i| changed.view.node(i as _))
            .find(|n| n.attr("id") == Some("new"));
        assert!(new.is_some_and(|n| n.backend_id() > 0), "the new button was walked");
        let again = walk().await.unwrap();
        assert_eq!(tab.walks_with_ids_known(), known + 2);
        check(&again, &full().await.unwrap(), "after the change, ids known");
        // A new document starts over.
        tab.navigate(&url("/form.html?again")).await.unwrap();
        eval(&env, GROW).await;
        eval(&env, NUMBER).await;
        let fresh = walk().await.unwrap();
        assert_eq!(tab.walks_with_ids_known(), known + 2, "a new document's ids are described");
        check(&fresh, &full().await.unwrap(), "a new document");
        env.close().await;
    })
}

/// The State Object of one capture (screenshot left out), as the agent gets it.
async fn state_of(tab: &sightline_browser::Tab, all_rects: bool) -> String {
    state_walked(tab, all_rects).await.0
}

/// The state of a capture, and whether the viewport walk took it.
async fn state_walked(tab: &sightline_browser::Tab, all_rects: bool) -> (String, bool) {
    // The fixtures are small: the walk is asked for although the full snapshot would be cheaper.
    let opts = sightline_browser::CaptureOptions { all_rects, walk_small_pages: true, ..Default::default() };
    let c = tab.capture_with(opts).await.expect("capture");
    (sightline_api::StateObject::from_view(&c.view, None).to_json_line(), c.walked)
}

/// DOM rects are fetched only for the elements the model reads them for (frame
/// owners, scroll boxes); the state is the same as with every node's rects.
#[test]
fn rects_on_demand_give_the_state_of_a_full_capture() {
    run(async {
        let other_port = world().other.addr().port();
        let mut pages: Vec<(String, &str)> = vec![
            (format!("/frames.html?other={other_port}"), ""),
            ("/scroll.html".into(), "document.getElementById('box').scrollTop = 70; scrollTo(0, 40)"),
            ("/fidelity/targets.html".into(), "document.getElementById('box').scrollTop = 15"),
            // Long runs of children, searched for the ones in view: a list, a table, cards.
            ("/long.html".into(), "scrollTo(0, 3000)"),
            ("/long.html".into(), "scrollTo(0, 9011)"),
            ("/long.html".into(), "scrollTo(0, document.body.scrollHeight)"),
            // A fixed bar and a menu inside sections of a long run, far from the ones in view.
            ("/nested-out-of-flow.html".into(), "scrollTo(0, 3000)"),
            ("/nested-out-of-flow.html".into(), "scrollTo(0, 3500)"),
            (
                "/nested-out-of-flow.html".into(),
                "document.getElementById('bar').style.display = 'none'; scrollTo(0, 3000)",
            ),
            // A page that lies to scripts in its own world about boxes and styles.
            ("/hostile/liar.html".into(), ""),
        ];
        pages.extend(fixture_pages().into_iter().map(|p| (p, "")));
        let mut compared = 0;
        let mut differ = Vec::new();
        let mut walked = Vec::new();
        for (path, setup) in &pages {
            let env = env(path).await;
            if !setup.is_empty() {
                eval(&env, setup).await;
            }
            let tab = env.tab();
            // A page that changes by itself (timers, animations) is compared once it holds still.
            for attempt in 0..4 {
                let full = state_of(tab, true).await;
                let (needed, was_walked) = state_walked(tab, false).await;
                let again = state_of(tab, true).await;
                if full != again {
                    assert!(attempt < 3, "{path} never held still");
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    continue;
                }
                if was_walked {
                    walked.push(path.clone());
                }
                if needed != full {
                    differ.push(format!("{path}:\n  full: {full}\n  walk: {needed}"));
                }
                compared += 1;
                break;
            }
            env.close().await;
        }
        assert_eq!(compared, pages.len());
        // The walk is taken on every page without a frame in view (frames take the full snapshot).
        for (path, _) in &pages {
            let file = path.split('?').next().unwrap_or(path).trim_start_matches('/');
            let html = std::fs::read_to_string(fixtures_dir().join(file)).unwrap_or_default();
            assert_eq!(walked.contains(path), !html.contains("<iframe"), "{path}: walked {walked:?}");
        }
        assert!(
            differ.is_empty(),
            "the viewport capture changed the state on {} pages:\n{}",
            differ.len(),
            differ.join("\n")
        );
    })
}
