//! States that say what changed (issue 21, part 4), against real Chromium:
//! `get_browser_state {changes: true}` checked against full snapshots over a
//! multi-step task, and the element index's `*[N]` marks for new elements.

use crate::common;

use std::collections::{HashMap, HashSet};

use common::*;
use serde_json::{json, Value};
use sightline_api::Api;

struct Bound {
    session: String,
    target: String,
    tab: String,
}

impl Bound {
    fn with(&self, extra: Value) -> Value {
        let mut v = json!({ "session": self.session, "target_id": self.target, "tab_id": self.tab });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    }
}

async fn bind(api: &Api, session: &str, path: &str) -> Bound {
    let b = ok(api, "bind_browser", json!({ "session": session })).await;
    let bound = Bound {
        session: session.into(),
        target: b["target_id"].as_str().unwrap().into(),
        tab: b["tabs"][0]["tab_id"].as_str().unwrap().into(),
    };
    ok(api, "browser_navigate", bound.with(json!({ "url": url(path) }))).await;
    bound
}

/// One line of an outline: its ref number, its parent's, and its text with the ref left out
/// (ref numbers differ between a change read's chain and a fresh full snapshot).
#[derive(Debug, Clone)]
struct Line {
    num: u32,
    parent: Option<u32>,
    text: String,
}

fn ref_num(r: &str) -> u32 {
    r.rsplit_once(':').unwrap().1.parse().unwrap()
}

/// `- button "Add" [ref=p3:7]` → (`- button "Add" [ref]`, 7).
fn strip_ref(line: &str) -> (String, u32) {
    let start = line.find(" [ref=").unwrap_or_else(|| panic!("no ref in {line:?}"));
    let end = start + line[start..].find(']').unwrap();
    let text = format!("{} [ref]{}", &line[..start], &line[end + 1..]);
    (text, ref_num(&line[start + 6..end]))
}

fn parse(outline: &str) -> Vec<Line> {
    let mut stack: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for l in outline.lines() {
        let depth = (l.len() - l.trim_start().len()) / 2;
        let (text, num) = strip_ref(l.trim_start());
        stack.truncate(depth);
        out.push(Line { num, parent: stack.last().copied(), text });
        stack.push(num);
    }
    out
}

/// The outline text of a model, indented by its parent links (as the server indents).
fn render(lines: &[Line]) -> Vec<String> {
    let parent: HashMap<u32, Option<u32>> = lines.iter().map(|l| (l.num, l.parent)).collect();
    lines
        .iter()
        .map(|l| {
            let mut depth = 0;
            let mut cur = l.parent;
            while let Some(p) = cur {
                depth += 1;
                cur = parent[&p];
            }
            format!("{}{}", "  ".repeat(depth.min(12)), l.text)
        })
        .collect()
}

/// Apply one page of a change read to a model, as a client would.
fn apply(model: &mut Vec<Line>, page: &Value) {
    let ch = &page["changes"];
    let removed: HashSet<u32> =
        ch["removed"].as_array().unwrap().iter().map(|r| ref_num(r.as_str().unwrap())).collect();
    model.retain(|l| !removed.contains(&l.num));
    let num_of = |v: &Value| v.as_str().map(ref_num);
    let mut pending: Vec<(Line, Option<u32>)> = Vec::new();
    for c in ch["changed"].as_array().unwrap() {
        let num = ref_num(c["ref"].as_str().unwrap());
        let at = model.iter().position(|l| l.num == num).unwrap_or_else(|| panic!("changed {c} is not in the model"));
        model[at].text = strip_ref(c["line"].as_str().unwrap()).0;
        if c["moved"] == true {
            let mut l = model.remove(at);
            l.parent = num_of(&c["parent"]);
            pending.push((l, num_of(&c["after"])));
        }
    }
    for a in ch["added"].as_array().unwrap() {
        let (text, num) = strip_ref(a["line"].as_str().unwrap());
        assert_eq!(num, ref_num(a["ref"].as_str().unwrap()));
        assert!(model.iter().all(|l| l.num != num), "added {a} is already in the model");
        pending.push((Line { num, parent: num_of(&a["parent"]), text }, num_of(&a["after"])));
    }
    // Each goes right after its `after`, which is in the model or another pending entry.
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|(line, after)| {
            let at = match after {
                None => Some(0),
                Some(n) => model.iter().position(|l| l.num == *n).map(|p| p + 1),
            };
            match at {
                Some(at) => {
                    model.insert(at, line.clone());
                    false
                }
                None => true,
            }
        });
        assert!(pending.len() < before, "entries whose `after` is nowhere: {pending:?}");
    }
}

/// A full semantic_v2 snapshot, all of it in one answer.
async fn full(api: &Api, b: &Bound) -> Value {
    let s =
        ok(api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "node_budget": 2000 }))).await;
    assert_eq!(s["snapshot"]["complete"], true, "{}", s["snapshot"]);
    s
}

/// A change read, every page of it (`budget` entries a page), applied to `model` page by page.
/// Returns the pages.
async fn changes_into(api: &Api, b: &Bound, budget: u64, model: &mut Vec<Line>) -> Vec<Value> {
    let mut pages = vec![
        ok(
            api,
            "get_browser_state",
            b.with(json!({ "snapshot_format": "semantic_v2", "changes": true, "node_budget": budget })),
        )
        .await,
    ];
    assert!(pages[0]["snapshot"]["since"].is_string(), "a change read, not a full one: {}", pages[0]["snapshot"]);
    apply(model, &pages[0]);
    while let Some(token) = pages.last().unwrap()["snapshot"]["continuation"].as_str().map(str::to_string) {
        let next =
            ok(api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "continuation": token })))
                .await;
        assert!(next["changes"]["removed"].as_array().unwrap().is_empty(), "removals come in the first page");
        assert!(next["snapshot"]["selected_nodes"].as_u64().unwrap() <= budget);
        apply(model, &next);
        pages.push(next);
    }
    let total: u64 = pages.iter().map(|p| p["snapshot"]["selected_nodes"].as_u64().unwrap()).sum();
    assert_eq!(total, pages[0]["snapshot"]["total_nodes"].as_u64().unwrap());
    pages
}

fn entries<'a>(pages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    pages.iter().flat_map(|p| p["changes"][kind].as_array().unwrap()).collect()
}

fn has_line(entries: &[&Value], needle: &str) -> bool {
    entries.iter().any(|e| e["line"].as_str().unwrap().contains(needle))
}

/// The ref of the node whose line contains `needle`, in a full snapshot.
fn ref_in(snap: &Value, needle: &str) -> String {
    let line = snap["outline"]
        .as_str()
        .unwrap()
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in\n{}", snap["outline"].as_str().unwrap()));
    format!("{}:{}", snap["snapshot"]["id"].as_str().unwrap(), strip_ref(line.trim_start()).1)
}

/// The ref of the node whose text contains `needle`, in a model, under snapshot `id`.
fn ref_in_model(model: &[Line], id: &str, needle: &str) -> String {
    let l = model.iter().find(|l| l.text.contains(needle)).unwrap_or_else(|| panic!("no {needle:?} in {model:?}"));
    format!("{id}:{}", l.num)
}

/// After a change read applied to `model`, a full snapshot must show the same outline.
async fn check_against_full(api: &Api, b: &Bound, model: &[Line], step: &str) -> Value {
    let f = full(api, b).await;
    let expected = render(&parse(f["outline"].as_str().unwrap()));
    let got = render(model);
    if got != expected {
        panic!(
            "step {step}: the change applied to the previous outline is not the new outline\n--- applied\n{}\n--- full\n{}",
            got.join("\n"),
            expected.join("\n")
        );
    }
    f
}

#[test]
fn the_change_read_checked_against_full_snapshots_over_a_multi_step_task() {
    run(async {
        let api = api();
        let b = bind(&api, "changes-task", "/changes.html").await;
        // With nothing to compare with, a change read is the full snapshot, saying why.
        let first =
            ok(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "changes": true }))).await;
        assert_eq!(first["snapshot"]["full_because"], "no_previous_snapshot", "{}", first["snapshot"]);
        assert!(first["changes"].is_null() && first["outline"].as_str().unwrap().contains("Tasks"));

        let mut snap = full(&api, &b).await;
        let mut model = parse(snap["outline"].as_str().unwrap());

        // Nothing happened: nothing changed, and every kept node keeps its number.
        let pages = changes_into(&api, &b, 300, &mut model).await;
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0]["changes"], json!({ "added": [], "changed": [], "removed": [] }));
        assert_eq!(pages[0]["outline"], "");
        assert_eq!(pages[0]["snapshot"]["complete"], true);
        snap = check_against_full(&api, &b, &model, "nothing").await;
        model = parse(snap["outline"].as_str().unwrap());

        // Each step acts with a ref of the latest full snapshot, reads the change in pages of
        // two entries, and checks it against the next full snapshot.
        let page_budget = 2;
        // 1. Typing changes the textbox's value.
        ok(&api, "browser_type", b.with(json!({ "ref": ref_in(&snap, "textbox \"New task\""), "text": "Tea" }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        let changed = entries(&pages, "changed");
        assert!(changed.iter().any(|c| c["value"] == "Tea"), "{changed:?}");
        snap = check_against_full(&api, &b, &model, "type").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 2. Add: a new item (listitem, checkbox, text, button), the value emptied, the count renamed.
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in(&snap, "button \"Add\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        assert!(pages.len() > 1, "more entries than the budget: a continuation");
        let added = entries(&pages, "added");
        assert!(has_line(&added, "button \"Delete Tea\""), "{added:?}");
        assert!(has_line(&added, "checkbox \"Done: Tea\""), "{added:?}");
        for a in &added {
            let r = a["ref"].as_str().unwrap();
            let in_refs = pages.iter().any(|p| {
                p["refs"].as_array().unwrap().iter().chain(p["content_refs"].as_array().unwrap()).any(|x| x["ref"] == r)
            });
            assert!(in_refs, "added {r} has its entry in refs or content_refs");
        }
        assert!(entries(&pages, "changed").iter().any(|c| c["name"] == "4 tasks"), "{pages:?}");
        snap = check_against_full(&api, &b, &model, "add").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 3. A checkbox is checked: its states change.
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in(&snap, "checkbox \"Done: Milk\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        let changed = entries(&pages, "changed");
        assert!(changed.iter().any(|c| c["states"]["checked"] == true), "{changed:?}");
        assert!(entries(&pages, "added").is_empty() && pages[0]["changes"]["removed"].as_array().unwrap().is_empty());
        snap = check_against_full(&api, &b, &model, "check").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 4. Reverse: the same nodes in another order (moves, nothing added or removed).
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in(&snap, "button \"Reverse\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        assert!(entries(&pages, "changed").iter().any(|c| c["moved"] == true), "{pages:?}");
        assert!(entries(&pages, "added").is_empty() && pages[0]["changes"]["removed"].as_array().unwrap().is_empty());
        snap = check_against_full(&api, &b, &model, "reverse").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 5. Group: a new region, and the list moves under it (new parent).
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in(&snap, "button \"Group\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        assert!(has_line(&entries(&pages, "added"), "region \"Today\""), "{pages:?}");
        snap = check_against_full(&api, &b, &model, "group").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 6. Details: a state change and a paragraph that was hidden.
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in(&snap, "button \"Details\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        assert!(has_line(&entries(&pages, "added"), "kept in this browser only"), "{pages:?}");
        assert!(entries(&pages, "changed").iter().any(|c| c["states"]["expanded"] == true), "{pages:?}");
        snap = check_against_full(&api, &b, &model, "details").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 7. A change read's refs carry on: delete an item with the ref the *change read's*
        // snapshot gives the kept button (its number from the full snapshot before it).
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in(&snap, "button \"Details\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        let id = pages[0]["snapshot"]["id"].as_str().unwrap();
        assert!(pages[0]["changes"]["removed"].as_array().unwrap().len() == 1, "the paragraph hides again");
        ok(&api, "browser_click", b.with(json!({ "ref": ref_in_model(&model, id, "button \"Delete Bread\"") }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        assert!(pages[0]["changes"]["removed"].as_array().unwrap().len() >= 3, "the Bread item: {pages:?}");
        assert!(model.iter().all(|l| !l.text.contains("Bread")), "the carried ref deleted Bread, nothing else");
        assert!(
            model.iter().any(|l| l.text.contains("Delete Milk"))
                && model.iter().any(|l| l.text.contains("Delete Eggs"))
        );
        snap = check_against_full(&api, &b, &model, "carried refs").await;
        model = parse(snap["outline"].as_str().unwrap());

        // 8. Scrolling: nodes enter and leave the viewport scope, others change visibility.
        ok(&api, "browser_scroll", b.with(json!({ "direction": "down", "pixels": 900 }))).await;
        let pages = changes_into(&api, &b, page_budget, &mut model).await;
        assert!(!pages[0]["changes"]["removed"].as_array().unwrap().is_empty(), "{pages:?}");
        assert!(!entries(&pages, "added").is_empty(), "{pages:?}");
        snap = check_against_full(&api, &b, &model, "scroll").await;
        let _ = snap;

        // 9. Navigation: a new document, so the answer is the full snapshot, saying why.
        ok(&api, "browser_navigate", b.with(json!({ "url": url("/changes.html?again") }))).await;
        let s =
            ok(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "changes": true }))).await;
        assert_eq!(s["snapshot"]["full_because"], "navigation", "{}", s["snapshot"]);
        assert!(s["snapshot"]["since"].is_null() && s["changes"].is_null());
        assert!(s["outline"].as_str().unwrap().contains("Delete Bread"), "a fresh page, in full");
    })
}

#[test]
fn change_reads_refuse_what_they_cannot_combine_with() {
    run(async {
        let api = api();
        let b = bind(&api, "changes-bad", "/changes.html").await;
        ok(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2" }))).await;
        for bad in [
            json!({ "changes": true }),
            json!({ "changes": true, "snapshot_format": "dom_refs_v1" }),
            json!({ "changes": true, "snapshot_format": "semantic_v2", "query": "Add" }),
            json!({ "changes": true, "snapshot_format": "semantic_v2", "changes_since": "p1" }),
        ] {
            let e = fails(&api, "get_browser_state", b.with(bad.clone())).await;
            assert_eq!(e.code.as_str(), "invalid_params", "{bad}: {e:?}");
        }
        // The session and the snapshot survive: a change read still compares with it.
        let s =
            ok(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "changes": true }))).await;
        assert_eq!(s["changes"], json!({ "added": [], "changed": [], "removed": [] }), "{s}");
        // After a dom_refs_v1 snapshot there is no outline to compare with.
        ok(&api, "get_browser_state", b.with(json!({}))).await;
        let s =
            ok(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "changes": true }))).await;
        assert_eq!(s["snapshot"]["full_because"], "previous_not_semantic", "{}", s["snapshot"]);
    })
}

#[test]
fn the_element_index_marks_elements_new_since_the_previous_state() {
    run(async {
        let mut env = env("/changes.html").await;
        env.set_mark_new(true);
        let s0 = env.refresh().await.unwrap().clone();
        assert!(!s0.page_content.contains('*'), "nothing is new yet:\n{}", s0.page_content);
        let input = find(&s0, "textbox", |d| d.tag == "input" && d.attributes.type_.as_deref() == Some("text"));
        step(&mut env, json!({ "action": "input_text", "element_index": input, "text": "Tea" })).await;
        let add = by_text(env.state(), "Add");
        let s1 = step(&mut env, json!({ "action": "click_element", "element_index": add })).await.state;
        assert!(s1.error.is_none(), "{:?}", s1.error);
        let marked: Vec<&str> = s1.page_content.split_whitespace().filter(|w| w.starts_with("*[")).collect();
        assert_eq!(marked.len(), 2, "the new checkbox and button, nothing else:\n{}", s1.page_content);
        let del = by_text(&s1, "Delete Tea");
        assert!(s1.page_content.contains(&format!("*[{del}]button \"Delete Tea\"")), "{}", s1.page_content);
        // The hash is the page's: the unmarked text of the same capture has the same hash.
        let view = &env.captured().view;
        assert_eq!(view.page_content, s1.page_content.replace("*[", "["));
        assert_eq!(view.state_hash(), s1.state_hash, "marks do not change state_hash");
        // An action that changes nothing: the marks are gone, the hash is the same.
        let s2 = step(&mut env, json!({ "action": "scroll", "direction": "up" })).await.state;
        assert!(s2.error.is_none(), "{:?}", s2.error);
        assert!(!s2.page_content.contains("*["), "{}", s2.page_content);
        assert_eq!(s2.state_hash, s1.state_hash);
        // Without the option, nothing is ever marked.
        env.set_mark_new(false);
        let s3 = step(&mut env, json!({ "action": "click_element", "element_index": by_text(&s2, "Add") })).await.state;
        assert!(!s3.page_content.contains("*["), "{}", s3.page_content);
        env.close().await;
    })
}

// =============================================================================================
// What an agent receives over real-app tasks (the apps of tests/apps.rs), full vs changes.

use crate::harness;

/// The ref of the last line containing `needle` at or before the first line containing `anchor`.
fn ref_before(snap: &Value, anchor: &str, needle: &str) -> String {
    let lines: Vec<&str> = snap["outline"].as_str().unwrap().lines().collect();
    let at = lines.iter().position(|l| l.contains(anchor)).unwrap_or_else(|| panic!("no {anchor:?}"));
    let line = lines[..=at].iter().rev().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle:?}"));
    format!("{}:{}", snap["snapshot"]["id"].as_str().unwrap(), strip_ref(line.trim_start()).1)
}

/// One step of a task: a tool call whose ref is found in the latest full snapshot.
enum Do {
    Click(&'static str),
    ClickBefore(&'static str, &'static str),
    Type(&'static str, &'static str),
}

/// Drive a task; after each step read what changed (applied to the previous outline and
/// checked against the full snapshot read right after it). Returns, per step, the bytes of the
/// answer to a change read and of a full snapshot (both with node_budget 2000).
async fn measure(api: &Api, b: &Bound, steps: &[Do]) -> Vec<(usize, usize)> {
    let mut snap = full(api, b).await;
    let mut sizes = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        match s {
            Do::Click(needle) => ok(api, "browser_click", b.with(json!({ "ref": ref_in(&snap, needle) }))).await,
            Do::ClickBefore(anchor, needle) => {
                ok(api, "browser_click", b.with(json!({ "ref": ref_before(&snap, anchor, needle) }))).await
            }
            Do::Type(needle, text) => {
                ok(api, "browser_type", b.with(json!({ "ref": ref_in(&snap, needle), "text": text }))).await
            }
        };
        let mut model = parse(snap["outline"].as_str().unwrap());
        let c = ok(
            api,
            "get_browser_state",
            b.with(json!({ "snapshot_format": "semantic_v2", "changes": true, "node_budget": 2000 })),
        )
        .await;
        let exact = c["snapshot"]["since"].is_string();
        if exact {
            apply(&mut model, &c);
        }
        let f = full(api, b).await;
        if exact {
            assert_eq!(render(&model), render(&parse(f["outline"].as_str().unwrap())), "step {n}");
        } else {
            assert_eq!(c["snapshot"]["full_because"], "navigation", "step {n}: {}", c["snapshot"]);
        }
        sizes.push((c.to_string().len(), f.to_string().len()));
        snap = f;
    }
    sizes
}

/// Totals (changes, full) and a line saying them.
fn report(app: &str, sizes: &[(usize, usize)]) -> (usize, usize, String) {
    let (c, f) = sizes.iter().fold((0, 0), |(a, b), (c, f)| (a + c, b + f));
    let line = format!(
        "{app}: {} steps; full states {f} bytes (~{} tokens), changes {c} bytes (~{} tokens), {:.0}% of full; per step (changes/full bytes): {}",
        sizes.len(),
        f / 4,
        c / 4,
        100.0 * c as f64 / f as f64,
        sizes.iter().map(|(c, f)| format!("{c}/{f}")).collect::<Vec<_>>().join(" ")
    );
    (c, f, line)
}

#[test]
fn tokens_an_agent_receives_over_real_app_tasks_full_and_changes() {
    run(async {
        let api = api();
        // TodoMVC: add three, complete one, filter, complete another, all, clear completed.
        let (_server, todo_url) = harness::todomvc().await;
        let b = bind(&api, "tokens-todo", "/changes.html").await;
        ok(&api, "browser_navigate", b.with(json!({ "url": todo_url }))).await;
        let field = "textbox \"What needs to be done?\"";
        let todo = measure(
            &api,
            &b,
            &[
                Do::Type(field, "Buy milk\n"),
                Do::Type(field, "Walk the dog\n"),
                Do::Type(field, "Read a book\n"),
                Do::ClickBefore("Buy milk", "checkbox"),
                Do::Click("link \"Active\""),
                Do::ClickBefore("Read a book", "checkbox"),
                Do::Click("link \"All\""),
                Do::Click("button \"Clear completed"),
            ],
        )
        .await;
        let (tc, tf, line) = report("TodoMVC", &todo);
        eprintln!("{line}");
        // Django admin: log in, open Questions, add a question with a choice.
        let dj = harness::Django::start();
        let b = bind(&api, "tokens-django", "/changes.html").await;
        ok(&api, "browser_navigate", b.with(json!({ "url": dj.url("/admin/") }))).await;
        let django = measure(
            &api,
            &b,
            &[
                Do::Type("textbox \"Username", harness::ADMIN_USER),
                Do::Type("textbox \"Password", harness::ADMIN_PASSWORD),
                Do::Click("button \"Log in\""),
                Do::Click("link \"Questions\""),
                Do::Click("link \"ADD QUESTION\""),
                Do::Type("textbox \"Question text", "Tea or coffee?"),
                Do::Click("link \"Today\""),
                Do::Click("link \"Now\""),
                Do::Click("checkbox \"Published"),
                Do::Type("textbox \"Choice text", "Tea"),
                Do::Click("button \"Save\""),
            ],
        )
        .await;
        let (dc, df, line) = report("Django admin", &django);
        eprintln!("{line}");
        eprintln!(
            "both: full {} bytes (~{} tokens), changes {} bytes (~{} tokens)",
            tf + df,
            (tf + df) / 4,
            tc + dc,
            (tc + dc) / 4
        );
        assert!(tc < tf && dc < df, "changes cost less than full states");
        let q = dj.scalar("SELECT count(*) FROM polls_question WHERE question_text = 'Tea or coffee?'");
        assert_eq!(q, json!(1), "the task was done");
    })
}
