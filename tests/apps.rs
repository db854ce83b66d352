//! Real apps, end to end (issue 8, section 4): a Django admin site and TodoMVC's React
//! example, both installed from the package registries by `./x apps` / `./x test` and started
//! here on 127.0.0.1.
//!
//! Each task drives Sightline through the element-index protocol (`Env`, as `sightline env`
//! does) and plays a model's part: every target is chosen from the *current* state by role and
//! name as `page_content` shows them (`harness::find` and friends), never by a number. Every
//! outcome is checked in the app's backend (the SQLite database, the app's localStorage), not
//! by reading the page.
//!
//! Two groups:
//! - **Everyday tasks** (above the first `Needs:` line): log in, add with inlines, edit, delete
//!   through the confirmation page, filter and bulk-delete; add, complete, filter todos. They
//!   passed before issue 8's fixes.
//! - **Tasks that need an issue 8 feature**: each test is named after what it needs
//!   (`django_add_related_popup`, `django_confirm_dialog`, `todomvc_delete_via_hover`, …),
//!   under a `Needs:` line that says which, and fails while that is missing.

use crate::ax_names;
use crate::common;
use crate::harness;

use common::{env, run, semantic_against_the_ax_tree};
use harness::*;
use serde_json::json;

fn questions(dj: &Django) -> Vec<(String, bool)> {
    dj.query("SELECT question_text, published FROM polls_question ORDER BY id")
        .into_iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1] == json!(1)))
        .collect()
}

fn choices_of(dj: &Django, question: &str) -> Vec<String> {
    let q = question.replace('\'', "''");
    dj.query(&format!(
        "SELECT c.choice_text FROM polls_choice c JOIN polls_question q ON q.id = c.question_id \
         WHERE q.question_text = '{q}' ORDER BY c.id"
    ))
    .into_iter()
    .map(|r| r[0].as_str().unwrap().to_string())
    .collect()
}

fn owned(v: &[(&str, bool)]) -> Vec<(String, bool)> {
    v.iter().map(|(t, b)| (t.to_string(), *b)).collect()
}

const SEEDED: [(&str, bool); 3] =
    [("What's up?", true), ("Which editor do you use?", false), ("Favourite colour?", true)];

/// Log in, then open the Questions changelist from the admin index by its link.
async fn open_questions(env: &mut sightline_api::Env, dj: &Django) {
    let s = admin_login(env, dj).await;
    let s = click(env, find(&s, "link", "Questions")).await;
    assert!(s.url.ends_with("/admin/polls/question/"), "{}", s.url);
}

// =============================================================================================
// Works today

#[test]
fn django_login() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        assert_eq!(dj.scalar("SELECT last_login IS NULL FROM auth_user WHERE username = 'admin'"), json!(1));
        let s = admin_login(&mut env, &dj).await;
        assert!(s.url.ends_with("/admin/"), "{}", s.url);
        assert_eq!(dj.scalar("SELECT last_login IS NOT NULL FROM auth_user WHERE username = 'admin'"), json!(1));
        assert_eq!(dj.scalar("SELECT count(*) FROM django_session"), json!(1), "one session row for the login");
    })
}

/// Issue 21: a Django sign-in saved (Playwright's storageState) and restored into a new
/// session lands signed in: the admin index, not the login page. Restoring asks nothing of the
/// site (no request for its root document); a session without the state is sent to log in.
#[test]
fn django_sign_in_saved_and_restored_lands_signed_in() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        admin_login(&mut env, &dj).await;
        let browser = env.tab().browser().clone();
        let saved = browser.save_storage(env.tab().context_id().unwrap(), &[]).await.unwrap();
        let session = saved.cookies.iter().find(|c| c.name == "sessionid").expect("Django's session cookie");
        assert!(session.http_only, "sessionid is HttpOnly: only the browser's cookie store has it");
        let text = serde_json::to_string(&saved).unwrap();
        let state = sightline_browser::StorageState::parse(&text).unwrap();
        let roots = dj.requests("GET /");
        let fresh = browser.new_context().await.unwrap();
        browser.restore_storage(&fresh, &state).await.unwrap();
        assert_eq!(dj.requests("GET /"), roots, "restoring reached the site");
        let tab = browser.new_tab_in(&fresh, Default::default()).await.unwrap();
        let mut restored = sightline_api::Env::new(tab, sightline_api::EnvOptions { screenshot: false }).await.unwrap();
        let s = act(&mut restored, json!({"action": "navigate", "url": dj.url("/admin/")})).await;
        assert!(s.url.ends_with("/admin/") && !s.url.contains("login"), "not signed in: {}", s.url);
        find(&s, "link", "Questions");
        // Without the state, the same admin asks for a login.
        let mut plain = common::env(&dj.url("/admin/")).await;
        let s = act(&mut plain, json!({"action": "navigate", "url": dj.url("/admin/")})).await;
        assert!(s.url.contains("/admin/login/"), "{}", s.url);
    })
}

#[test]
fn django_add_question_with_two_choices() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        let s = click_named(&mut env, "link", "Add question").await;
        assert!(s.url.ends_with("/admin/polls/question/add/"), "{}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "Question text:"), "Tea or coffee?").await;
        // The date and time shortcuts of Django's split date-time widget (JavaScript links).
        let s = click(&mut env, find(&s, "link", "Today")).await;
        let s = click(&mut env, find(&s, "link", "Now")).await;
        let s = click(&mut env, find(&s, "checkbox", "Published")).await;
        let s = type_into(&mut env, find_nth(&s, "textbox", "Choice text:", 1), "Tea").await;
        type_into(&mut env, find_nth(&s, "textbox", "Choice text:", 2), "Coffee").await;
        let save = scroll_to(&mut env, "button", "Save").await;
        let s = click(&mut env, save).await;
        assert!(s.url.ends_with("/admin/polls/question/"), "saved and back on the list: {}", s.url);

        let mut want = owned(&SEEDED);
        want.push(("Tea or coffee?".into(), true));
        assert_eq!(questions(&dj), want);
        assert_eq!(choices_of(&dj, "Tea or coffee?"), ["Tea", "Coffee"]);
        let today =
            dj.scalar("SELECT date(pub_date) = date('now') FROM polls_question WHERE question_text = 'Tea or coffee?'");
        assert_eq!(today, json!(1), "'Today' and 'Now' filled the date published");
    })
}

#[test]
fn django_edit_question() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        let s = click_named(&mut env, "link", "Which editor do you use?").await;
        let s = type_into(&mut env, find(&s, "textbox", "Question text:"), "Which editor do you prefer?").await;
        let s = click(&mut env, find(&s, "checkbox", "Published")).await;
        // Rename the second choice, "Emacs".
        let emacs = find_on_line(&s, "value=\"Emacs\"", "textbox", "Choice text:");
        type_into(&mut env, emacs, "Helix").await;
        let save = scroll_to(&mut env, "button", "Save").await;
        click(&mut env, save).await;

        assert_eq!(
            questions(&dj),
            owned(&[("What's up?", true), ("Which editor do you prefer?", true), ("Favourite colour?", true)])
        );
        assert_eq!(choices_of(&dj, "Which editor do you prefer?"), ["Vim", "Helix"]);
    })
}

#[test]
fn django_delete_with_confirmation_page() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        click_named(&mut env, "link", "Favourite colour?").await;
        let delete = scroll_to(&mut env, "link", "Delete").await;
        let s = click(&mut env, delete).await;
        assert!(s.url.ends_with("/delete/"), "the confirmation page: {}", s.url);
        assert_eq!(questions(&dj).len(), 3, "nothing is deleted before confirming");
        click(&mut env, find(&s, "button", "Yes, I’m sure")).await;

        assert_eq!(questions(&dj), owned(&[("What's up?", true), ("Which editor do you use?", false)]));
        assert_eq!(dj.scalar("SELECT count(*) FROM polls_choice"), json!(4), "its two choices went with it");
        assert!(choices_of(&dj, "Favourite colour?").is_empty());
    })
}

#[test]
fn django_filter_then_bulk_delete() {
    run(async {
        let dj = Django::start();
        // One more unpublished question, so the filter has two rows to select.
        let mut env = env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        let s = click_named(&mut env, "link", "Add question").await;
        let s = type_into(&mut env, find(&s, "textbox", "Question text:"), "Draft question").await;
        let s = click(&mut env, find(&s, "link", "Today")).await;
        click(&mut env, find(&s, "link", "Now")).await;
        let save = scroll_to(&mut env, "button", "Save").await;
        let s = click(&mut env, save).await;
        assert_eq!(questions(&dj).len(), 4);

        // Filter "By published: No", select all on the page, action "Delete selected questions".
        let s = click(&mut env, find(&s, "link", "No")).await;
        assert!(s.url.contains("published__exact=0"), "{}", s.url);
        let s = click(&mut env, find(&s, "checkbox", "Select all objects on this page for an action")).await;
        let action = find(&s, "combobox", "Action:");
        let s = act(
            &mut env,
            json!({"action": "select_option", "element_index": action,
                   "option_index": find(&s, "option", "Delete selected questions")}),
        )
        .await;
        let s = click(&mut env, find(&s, "button", "Go")).await;
        assert_eq!(questions(&dj).len(), 4, "nothing is deleted before confirming");
        click(&mut env, find(&s, "button", "Yes, I’m sure")).await;

        assert_eq!(questions(&dj), owned(&[("What's up?", true), ("Favourite colour?", true)]));
        assert!(choices_of(&dj, "Which editor do you use?").is_empty());
    })
}

/// Add, complete, filter: TodoMVC's everyday path.
#[test]
fn todomvc_add_complete_and_filter() {
    run(async {
        let (_server, url) = todomvc().await;
        let mut env = env(&url).await;
        assert!(stored_todos(&env).await.is_empty());
        for title in ["Buy milk", "Walk the dog", "Read a book"] {
            let field = find(env.state(), "textbox", "What needs to be done?");
            act(&mut env, json!({"action": "input_text", "element_index": field, "text": format!("{title}\n")})).await;
        }
        let stored = stored_todos(&env).await;
        assert_eq!(stored, owned(&[("Buy milk", false), ("Walk the dog", false), ("Read a book", false)]));

        // Complete "Buy milk" with the checkbox in front of it.
        let toggle = find_before(env.state(), "Buy milk", "checkbox", "");
        let s = click(&mut env, toggle).await;
        assert_eq!(
            stored_todos(&env).await,
            owned(&[("Buy milk", true), ("Walk the dog", false), ("Read a book", false)])
        );

        // The "Active" filter: complete "Read a book" from there.
        let s = click(&mut env, find(&s, "link", "Active")).await;
        assert!(s.url.ends_with("#/active"), "{}", s.url);
        click(&mut env, find_before(&s, "Read a book", "checkbox", "")).await;
        assert_eq!(
            stored_todos(&env).await,
            owned(&[("Buy milk", true), ("Walk the dog", false), ("Read a book", true)])
        );

        // The "Completed" filter: take "Buy milk" back.
        let s = click_named(&mut env, "link", "Completed").await;
        assert!(s.url.ends_with("#/completed"), "{}", s.url);
        click(&mut env, find_before(&s, "Buy milk", "checkbox", "")).await;
        assert_eq!(
            stored_todos(&env).await,
            owned(&[("Buy milk", false), ("Walk the dog", false), ("Read a book", true)])
        );

        let s = click_named(&mut env, "link", "All").await;
        assert!(s.url.ends_with("#/"), "{}", s.url);
        let stored: Vec<(String, bool)> = stored_todos(&env).await;
        assert_eq!(stored.len(), 3, "filters do not change the store");
    })
}

// =============================================================================================
// Needs: a popup window becomes the state's page, and the opener comes back when it closes.

/// The "+" next to a ForeignKey select opens a popup (`window.open`); saving there closes it
/// and selects the new question in the opener.
#[test]
fn django_add_related_popup() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        let s = admin_login(&mut env, &dj).await;
        let s = click(&mut env, find(&s, "link", "Choices")).await;
        let s = click(&mut env, find(&s, "link", "Add choice")).await;
        assert!(s.url.ends_with("/admin/polls/choice/add/"), "{}", s.url);
        let s = click(&mut env, find(&s, "link", "Add another question")).await;
        assert!(s.url.contains("/admin/polls/question/add/") && s.url.contains("_popup=1"), "the popup: {}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "Question text:"), "Made in a popup?").await;
        let s = click(&mut env, find(&s, "link", "Today")).await;
        click(&mut env, find(&s, "link", "Now")).await;
        let save = scroll_to(&mut env, "button", "Save").await;
        let s = click(&mut env, save).await;
        assert!(s.url.ends_with("/admin/polls/choice/add/"), "back on the opener: {}", s.url);
        assert!(s.page_content.contains("selected=\"Made in a popup?\""), "{}", s.page_content);
        let s = type_into(&mut env, find(&s, "textbox", "Choice text:"), "Yes").await;
        click(&mut env, find(&s, "button", "Save")).await;

        assert_eq!(choices_of(&dj, "Made in a popup?"), ["Yes"]);
    })
}

// =============================================================================================
// Needs: a table row reads as one line of page_content (issue 8 §1).

/// The admin index lists each model in a row with its own "Add" link; a model tells them apart
/// only by the row they are on.
#[test]
fn django_index_add_link_in_its_row() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        let s = admin_login(&mut env, &dj).await;
        let s = click(&mut env, find_on_line(&s, "Questions", "link", "Add")).await;
        assert!(s.url.ends_with("/admin/polls/question/add/"), "{}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "Question text:"), "Added from the index?").await;
        let s = click(&mut env, find(&s, "link", "Today")).await;
        click(&mut env, find(&s, "link", "Now")).await;
        let save = scroll_to(&mut env, "button", "Save").await;
        click(&mut env, save).await;
        assert_eq!(questions(&dj).last().unwrap().0, "Added from the index?");
    })
}

// =============================================================================================
// Needs: the accessible name Chromium computes when the DOM rule yields none (issue 8 §2).

/// The changelist's search box is labelled by `<label for=searchbar><img alt="Search">`: its
/// name is "Search". Search, then act on exactly the rows found.
#[test]
fn django_search_box_named_by_its_label() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        let search = find(env.state(), "textbox", "Search");
        let s = type_into(&mut env, search, "colour\n").await;
        assert!(s.url.contains("q=colour"), "{}", s.url);
        let s = click(&mut env, find(&s, "checkbox", "Select all objects on this page for an action")).await;
        let action = find(&s, "combobox", "Action:");
        let s = act(
            &mut env,
            json!({"action": "select_option", "element_index": action,
                   "option_index": find(&s, "option", "Delete selected questions")}),
        )
        .await;
        let s = click(&mut env, find(&s, "button", "Go")).await;
        click(&mut env, find(&s, "button", "Yes, I’m sure")).await;
        assert_eq!(questions(&dj), owned(&[("What's up?", true), ("Which editor do you use?", false)]));
    })
}

// =============================================================================================
// Needs: inline text joins exactly as rendered (issue 8 §1).

/// React 0.12 renders "Clear completed (" + count + ")" as three text spans; a person reads
/// "Clear completed (1)".
#[test]
fn todomvc_clear_completed_text_joins() {
    run(async {
        let (_server, url) = todomvc().await;
        let mut env = env(&url).await;
        for title in ["Buy milk", "Walk the dog"] {
            let field = find(env.state(), "textbox", "What needs to be done?");
            act(&mut env, json!({"action": "input_text", "element_index": field, "text": format!("{title}\n")})).await;
        }
        let toggle = find_before(env.state(), "Walk the dog", "checkbox", "");
        let s = click(&mut env, toggle).await;
        click(&mut env, find(&s, "button", "Clear completed (1)")).await;
        assert_eq!(stored_todos(&env).await, owned(&[("Buy milk", false)]));
    })
}

// =============================================================================================
// Not tested here: TodoMVC's "double-click to edit". React delegates its dblclick handler to the
// document, so the title's <label> carries no evidence that it reacts, and it is not indexed.
// Double click itself (`"count": 2`) is tested on a fixture with a listener on the element
// (tests/fidelity.rs).

// =============================================================================================
// Needs: `hover_element`, and the name of an icon button made of CSS generated content.

/// Each todo's delete button (`✖`, from `::after`) shows only while the row is hovered
/// (`hover_element`).
#[test]
fn todomvc_delete_via_hover() {
    run(async {
        let (_server, url) = todomvc().await;
        let mut env = env(&url).await;
        for title in ["Buy milk", "Walk the dog", "Read a book"] {
            let field = find(env.state(), "textbox", "What needs to be done?");
            act(&mut env, json!({"action": "input_text", "element_index": field, "text": format!("{title}\n")})).await;
        }
        assert!(!has(env.state(), "button", "✖"), "no row is hovered yet:\n{}", env.state().page_content);
        let row = find_before(env.state(), "Walk the dog", "checkbox", "");
        let s = act(&mut env, json!({"action": "hover_element", "element_index": row})).await;
        let delete = find_after(&s, "Walk the dog", "button", "✖");
        click(&mut env, delete).await;
        let stored: Vec<(String, bool)> = stored_todos(&env).await;
        assert_eq!(stored, owned(&[("Buy milk", false), ("Read a book", false)]));
    })
}

// =============================================================================================
// Needs: JavaScript dialogs in the state, answered with click_element (issue 8 §3).

/// With an edited list field and an action chosen, the changelist's "Save" asks
/// `confirm("You have selected an action, but you haven’t saved your changes …")`; OK saves.
#[test]
fn django_confirm_dialog() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        // The "Published" column is editable in the list: tick it for the unpublished question.
        let published = find_on_line(env.state(), "Which editor do you use?", "checkbox", "");
        let s = click(&mut env, published).await;
        let action = find(&s, "combobox", "Action:");
        act(
            &mut env,
            json!({"action": "select_option", "element_index": action,
                   "option_index": find(&s, "option", "Delete selected questions")}),
        )
        .await;
        let save = scroll_to(&mut env, "button", "Save").await;
        let s = click(&mut env, save).await;
        // The dialog is the state now; OK accepts it and the form is saved.
        let s = click(&mut env, find(&s, "button", "OK")).await;
        assert!(s.url.ends_with("/admin/polls/question/"), "{}", s.url);
        assert_eq!(
            questions(&dj),
            owned(&[("What's up?", true), ("Which editor do you use?", true), ("Favourite colour?", true)])
        );
    })
}

// =============================================================================================
// Needs: what is on one rendered line is on one line of page_content (issue 8 §1's suggestion),
// also for a row whose controls are positioned blocks.

/// A todo row shows its checkbox, its title and (hovered) its ✖ on one line. page_content puts
/// them on three, so the ✖ of one row sits between that row's title and the next row's
/// checkbox, and either row could own it.
#[test]
fn todomvc_row_reads_as_one_line() {
    run(async {
        let (_server, url) = todomvc().await;
        let mut env = env(&url).await;
        for title in ["Buy milk", "Walk the dog", "Read a book"] {
            let field = find(env.state(), "textbox", "What needs to be done?");
            act(&mut env, json!({"action": "input_text", "element_index": field, "text": format!("{title}\n")})).await;
        }
        let toggle = find_on_line(env.state(), "Walk the dog", "checkbox", "");
        let s = click(&mut env, toggle).await;
        assert_eq!(
            stored_todos(&env).await,
            owned(&[("Buy milk", false), ("Walk the dog", true), ("Read a book", false)])
        );
        // The pointer rests on the row: its ✖ is shown, on the same line.
        click(&mut env, find_on_line(&s, "Walk the dog", "button", "✖")).await;
        assert_eq!(stored_todos(&env).await, owned(&[("Buy milk", false), ("Read a book", false)]));
    })
}

/// The state of a tab from the viewport walk and from the full snapshot, once the
/// page holds still; and whether the walk was taken.
async fn walk_and_full(env: &sightline_api::Env) -> (String, String, bool) {
    use sightline_browser::CaptureOptions;
    let tab = env.tab();
    let state = |c: &sightline_browser::Captured| sightline_api::StateObject::from_view(&c.view, None).to_json_line();
    for _ in 0..4 {
        let full =
            tab.capture_with(CaptureOptions { whole_document: true, ..Default::default() }).await.expect("capture");
        let walk =
            tab.capture_with(CaptureOptions { walk_small_pages: true, ..Default::default() }).await.expect("capture");
        let again =
            tab.capture_with(CaptureOptions { whole_document: true, ..Default::default() }).await.expect("capture");
        if state(&full) == state(&again) {
            return (state(&walk), state(&full), walk.walked);
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    panic!("the page never held still");
}

/// On real apps the viewport walk gives the state the full snapshot gives, and
/// semantic_v2 read from the DOM gives the tree joined with Chromium's full
/// accessibility tree: TodoMVC with items (pseudo-element check marks, a hovered
/// row), Django's admin (a changelist, a form with inlines, scrolled).
#[test]
fn the_viewport_walk_and_semantic_v2_read_real_apps_as_the_full_captures_do() {
    run(async {
        let mut differ = Vec::new();
        let (_server, url) = todomvc().await;
        let mut env = env(&url).await;
        for title in ["Buy milk", "Walk the dog"] {
            let field = find(env.state(), "textbox", "What needs to be done?");
            act(&mut env, json!({"action": "input_text", "element_index": field, "text": format!("{title}\n")})).await;
        }
        let toggle = find_on_line(env.state(), "Walk the dog", "checkbox", "");
        click(&mut env, toggle).await;
        let (walk, full, walked) = walk_and_full(&env).await;
        assert!(walked, "TodoMVC was not walked");
        if walk != full {
            differ.push(format!("TodoMVC\n  full: {full}\n  walk: {walk}"));
        }
        if let Some(d) = semantic_against_the_ax_tree(env.tab()).await {
            differ.push(format!("TodoMVC semantic_v2:{d}"));
        }
        for lost in ax_names::names_lost(env.tab()).await {
            differ.push(format!("TodoMVC: unnamed in the element index: {lost}"));
        }
        env.close().await;
        let dj = Django::start();
        let mut env = common::env(&dj.url("/admin/")).await;
        open_questions(&mut env, &dj).await;
        let (walk, full, walked) = walk_and_full(&env).await;
        assert!(walked, "Django's changelist was not walked");
        if walk != full {
            differ.push(format!("Django changelist\n  full: {full}\n  walk: {walk}"));
        }
        if let Some(d) = semantic_against_the_ax_tree(env.tab()).await {
            differ.push(format!("Django changelist semantic_v2:{d}"));
        }
        for lost in ax_names::names_lost(env.tab()).await {
            differ.push(format!("Django changelist: unnamed in the element index: {lost}"));
        }
        click_named(&mut env, "link", "Add question").await;
        scroll_to(&mut env, "button", "Save").await;
        let (walk, full, _) = walk_and_full(&env).await;
        if walk != full {
            differ.push(format!("Django add form, scrolled\n  full: {full}\n  walk: {walk}"));
        }
        if let Some(d) = semantic_against_the_ax_tree(env.tab()).await {
            differ.push(format!("Django add form semantic_v2:{d}"));
        }
        for lost in ax_names::names_lost(env.tab()).await {
            differ.push(format!("Django add form: unnamed in the element index: {lost}"));
        }
        env.close().await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

// =============================================================================================
// Flask-Admin (issue 17 §6): a `User` and a `Post` model with Flask-Admin's stock views.

fn users(fa: &FlaskAdmin) -> Vec<(String, String, bool)> {
    fa.query("SELECT name, email, is_admin FROM user ORDER BY id")
        .into_iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_str().unwrap().to_string(), r[2] == json!(1)))
        .collect()
}

fn seeded_users() -> Vec<(String, String, bool)> {
    [
        ("Ada Lovelace", "ada@example.com", true),
        ("Alan Turing", "alan@example.com", false),
        ("Grace Hopper", "grace@example.com", false),
    ]
    .iter()
    .map(|(n, e, a)| (n.to_string(), e.to_string(), *a))
    .collect()
}

/// From the admin's home page to the list of a model, by the menu's link.
async fn open_model(env: &mut sightline_api::Env, fa: &FlaskAdmin, model: &str) -> sightline_api::StateObject {
    let s = env.state().clone();
    let s = click(env, find(&s, "link", model)).await;
    assert!(s.url.starts_with(&fa.url(&format!("/admin/{}/", model.to_lowercase()))), "{}", s.url);
    s
}

/// "Create" tab, fill the form (a text field, an email, a checkbox), "Save".
#[test]
fn flask_admin_create_user() {
    run(async {
        let fa = FlaskAdmin::start();
        let mut env = env(&fa.url("/admin/")).await;
        let s = open_model(&mut env, &fa, "User").await;
        let s = click(&mut env, find(&s, "link", "Create")).await;
        assert!(s.url.contains("/admin/user/new/"), "{}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "Name *"), "Margaret Hamilton").await;
        let s = type_into(&mut env, find(&s, "textbox", "Email *"), "margaret@example.com").await;
        let s = click(&mut env, find(&s, "checkbox", "Is Admin")).await;
        let s = click(&mut env, find(&s, "button", "Save")).await;
        assert!(s.url.contains("/admin/user/?"), "saved and back on the list: {}", s.url);
        let mut want = seeded_users();
        want.push(("Margaret Hamilton".into(), "margaret@example.com".into(), true));
        assert_eq!(users(&fa), want);
    })
}

/// The pencil icon link of a row (`<a title="Edit Record"><span class="fa fa-pencil">`) opens
/// that row's form.
#[test]
fn flask_admin_edit_via_the_rows_icon_link() {
    run(async {
        let fa = FlaskAdmin::start();
        let mut env = env(&fa.url("/admin/")).await;
        let s = open_model(&mut env, &fa, "User").await;
        let s = click(&mut env, find_on_line(&s, "Alan Turing", "link", "Edit Record")).await;
        assert!(s.url.contains("/admin/user/edit/?id=2"), "Alan Turing's form: {}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "Email *"), "turing@example.com").await;
        let s = click(&mut env, find(&s, "checkbox", "Is Admin")).await;
        click(&mut env, find(&s, "button", "Save")).await;
        let mut want = seeded_users();
        want[1] = ("Alan Turing".into(), "turing@example.com".into(), true);
        assert_eq!(users(&fa), want);
    })
}

/// The trash icon button of a row (`<button title="Delete Record"><span class="fa
/// fa-trash">`) asks `confirm(…)`: Cancel keeps the row, OK deletes it.
#[test]
fn flask_admin_delete_via_the_rows_icon_button_and_confirm() {
    run(async {
        let fa = FlaskAdmin::start();
        let mut env = env(&fa.url("/admin/")).await;
        let s = open_model(&mut env, &fa, "User").await;
        let s = click(&mut env, find_on_line(&s, "Grace Hopper", "button", "Delete Record")).await;
        let s = click(&mut env, find(&s, "button", "Cancel")).await;
        assert_eq!(users(&fa), seeded_users(), "Cancel deletes nothing");
        assert_eq!(fa.requests("POST /admin/user/delete/"), 0);
        let s = click(&mut env, find_on_line(&s, "Grace Hopper", "button", "Delete Record")).await;
        click(&mut env, find(&s, "button", "OK")).await;
        assert_eq!(users(&fa), seeded_users()[..2].to_vec());
        assert_eq!(
            fa.query("SELECT title FROM post ORDER BY id"),
            vec![vec![json!("Notes on the Engine")], vec![json!("On Computable Numbers")]],
            "her post went with her"
        );
    })
}

/// Search the list, select every row found, then "With selected" → "Delete" (a dropdown
/// menu, then `confirm(…)`): exactly the rows found are deleted.
#[test]
fn flask_admin_search_then_bulk_delete() {
    run(async {
        let fa = FlaskAdmin::start();
        let mut env = env(&fa.url("/admin/")).await;
        let s = open_model(&mut env, &fa, "User").await;
        let s = type_into(&mut env, find(&s, "textbox", "name, email"), "alan\n").await;
        assert!(s.url.contains("search=alan"), "{}", s.url);
        let s = click(&mut env, find(&s, "checkbox", "Select all records")).await;
        let s = click(&mut env, find(&s, "button", "With selected")).await;
        let s = click(&mut env, find(&s, "link", "Delete")).await;
        assert_eq!(users(&fa), seeded_users(), "nothing is deleted before confirming");
        click(&mut env, find(&s, "button", "OK")).await;
        assert_eq!(fa.requests("POST /admin/user/action/"), 1, "{}", fa.log());
        let mut want = seeded_users();
        want.remove(1);
        assert_eq!(users(&fa), want);
    })
}

/// A post's author is a Select2 widget over a hidden `<select>`: open it, pick the author
/// from its list; the date comes from typing.
#[test]
fn flask_admin_create_post_with_its_author() {
    run(async {
        let fa = FlaskAdmin::start();
        let mut env = env(&fa.url("/admin/")).await;
        let s = open_model(&mut env, &fa, "Post").await;
        let s = click(&mut env, find(&s, "link", "Create")).await;
        let s = type_into(&mut env, find(&s, "textbox", "Title *"), "Debugging the Mark II").await;
        let s = type_into(&mut env, find(&s, "textbox", "Body"), "A moth was found in relay 70.").await;
        // The author: Select2 shows the chosen one as a link after the field's label.
        let s = click(&mut env, find_after(&s, "User *", "link", "Ada Lovelace")).await;
        let s = click(&mut env, find(&s, "option", "Grace Hopper")).await;
        click(&mut env, find(&s, "button", "Save")).await;
        assert_eq!(
            fa.query(
                "SELECT p.title, p.body, u.name FROM post p JOIN user u ON u.id = p.user_id \
                      WHERE p.id = 4"
            ),
            vec![vec![json!("Debugging the Mark II"), json!("A moth was found in relay 70."), json!("Grace Hopper")]]
        );
    })
}

// =============================================================================================
// Datasette (issue 17 §6): the `library` database, its `books` table and a writable canned
// query. Reads are checked in the server's request log, writes in the database.

/// A facet value is a link that narrows the table: clicking "Fantasy" asks for exactly
/// `?genre=Fantasy`.
#[test]
fn datasette_facet_click() {
    run(async {
        let ds = Datasette::start();
        let mut env = env(&ds.url("/library/books")).await;
        assert_eq!(ds.requests("GET /library/books?genre=Fantasy"), 0);
        click_named(&mut env, "link", "Fantasy").await;
        assert_eq!(ds.requests("GET /library/books?genre=Fantasy"), 1, "{}", ds.log());
    })
}

/// The filter row: a column, an operator, a value, "Apply"; Datasette turns the form into
/// `?_sort=id&author__contains=Le+Guin` (the sort is the default one).
#[test]
fn datasette_filter_rows() {
    run(async {
        let ds = Datasette::start();
        let mut env = env(&ds.url("/library/books")).await;
        let s = env.state().clone();
        let column = find_nth(&s, "combobox", "", 1);
        let s = act(
            &mut env,
            json!({"action": "select_option", "element_index": column, "option_index": find(&s, "option", "author")}),
        )
        .await;
        let op = find_nth(&s, "combobox", "", 2);
        let s = act(
            &mut env,
            json!({"action": "select_option", "element_index": op, "option_index": find(&s, "option", "contains")}),
        )
        .await;
        let s = type_into(&mut env, find_nth(&s, "textbox", "", 1), "Le Guin").await;
        click(&mut env, find(&s, "button", "Apply")).await;
        assert_eq!(ds.requests("GET /library/books?_sort=id&author__contains=Le+Guin"), 1, "{}", ds.log());
    })
}

/// Custom SQL in the database page's editor (CodeMirror over a textarea), "Run SQL".
#[test]
fn datasette_run_sql() {
    run(async {
        let ds = Datasette::start();
        let mut env = env(&ds.url("/library")).await;
        let s = env.state().clone();
        // CodeMirror 5 shows the query in its own box (the textarea it types into is hidden).
        let editor = find_starting(&s, "clickable", "1 select * from books");
        let s = type_into(&mut env, editor, "select title from books where year < 1950").await;
        click(&mut env, find(&s, "button", "Run SQL")).await;
        assert_eq!(ds.requests("GET /library?sql=select+title+from+books+where+year+%3C+1950"), 1, "{}", ds.log());
    })
}

/// A writable canned query is a form with a field per parameter: it inserts a row.
#[test]
fn datasette_writable_canned_query() {
    run(async {
        let ds = Datasette::start();
        let mut env = env(&ds.url("/library")).await;
        let s = click_named(&mut env, "link", "Add a note").await;
        assert!(s.url.ends_with("/library/add_note"), "{}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "title"), "Reading list").await;
        let s = type_into(&mut env, find(&s, "textbox", "body"), "Piranesi next").await;
        click(&mut env, find(&s, "button", "Run SQL")).await;
        assert_eq!(
            ds.query("SELECT title, body FROM notes"),
            vec![vec![json!("Reading list"), json!("Piranesi next")]]
        );
    })
}

// =============================================================================================
// MkDocs Material (issue 17 §6): a small site built with `mkdocs build`, served statically.
// Pages opened are checked in the server's request log, the palette in localStorage.

/// Search for a word only one page has; its result opens that page.
#[test]
fn mkdocs_search_then_open_the_result() {
    run(async {
        let site = MkDocs::start();
        let mut env = env(&site.url("/")).await;
        let search = find(env.state(), "textbox", "Search");
        let s = type_into(&mut env, search, "barnacle").await;
        assert_eq!(site.requests("GET /reference/log-retention/?h=barnacle"), 0);
        click(&mut env, find_starting(&s, "link", "Log retention")).await;
        // The page, asked for with the search term to highlight.
        assert_eq!(site.requests("GET /reference/log-retention/?h=barnacle"), 1, "{}", site.log());
    })
}

/// The header's palette toggle (a `<label title="Switch to dark mode">` of a hidden radio
/// button, showing an icon) switches to the dark scheme and back; Material keeps the choice
/// in localStorage.
#[test]
fn mkdocs_palette_toggle() {
    run(async {
        let site = MkDocs::start();
        let mut env = env(&site.url("/")).await;
        let scheme = |v: Option<serde_json::Value>| v.map(|v| v["color"]["scheme"].clone());
        assert_eq!(scheme(stored(&env, "__palette").await), Some(json!("default")));
        // Each scheme is a visually hidden radio drawn by one label at a time. The radio is
        // listed once, as Chromium lists it: by its own aria-label, which Material sets to
        // the other toggle's words (its label's title says "Switch to dark mode").
        let radios = harness::tokens(env.state()).iter().filter(|t| t.role == "radio").count();
        assert_eq!(radios, 1, "one toggle shows at a time:\n{}", env.state().page_content);
        let s = click_named(&mut env, "radio", "Switch to light mode").await;
        assert_eq!(scheme(stored(&env, "__palette").await), Some(json!("slate")));
        assert!(!has(&s, "radio", "Switch to light mode"), "one toggle shows at a time:\n{}", s.page_content);
        click(&mut env, find(&s, "radio", "Switch to dark mode")).await;
        assert_eq!(scheme(stored(&env, "__palette").await), Some(json!("default")));
    })
}

/// The navigation tree: the "Reference" section (a `<label>` of a hidden checkbox) opens,
/// then one of its pages.
#[test]
fn mkdocs_navigation_tree() {
    run(async {
        let site = MkDocs::start();
        let mut env = env(&site.url("/")).await;
        assert!(
            !has(env.state(), "link", "Log retention"),
            "a closed section hides its pages:\n{}",
            env.state().page_content
        );
        let s = env.state().clone();
        let s = click(&mut env, find(&s, "label", "Reference")).await;
        click(&mut env, find(&s, "link", "Log retention")).await;
        assert_eq!(site.requests("GET /reference/log-retention/"), 1, "{}", site.log());
    })
}

/// Whether the viewport walk gives the full snapshot's state, semantic_v2 from the DOM
/// gives the tree joined with Chromium's accessibility tree, and the element index names
/// every element Chromium names, on the page `env` shows now; each difference is pushed onto
/// `differ` under `what`.
async fn read_as_the_full_captures(env: &sightline_api::Env, what: &str, differ: &mut Vec<String>) {
    for lost in ax_names::names_lost(env.tab()).await {
        differ.push(format!("{what}: unnamed in the element index: {lost}"));
    }
    let (walk, full, _) = walk_and_full(env).await;
    if walk != full {
        differ.push(format!("{what}\n  full: {full}\n  walk: {walk}"));
    }
    if let Some(d) = semantic_against_the_ax_tree(env.tab()).await {
        differ.push(format!("{what} semantic_v2:{d}"));
    }
}

/// Flask-Admin's list (icon links and buttons in each row, a dropdown, a search box) and its
/// form with a Select2 widget, closed and open.
#[test]
fn flask_admin_reads_as_the_full_captures_and_the_ax_tree() {
    run(async {
        let fa = FlaskAdmin::start();
        let mut env = env(&fa.url("/admin/user/")).await;
        let mut differ = Vec::new();
        read_as_the_full_captures(&env, "Flask-Admin user list", &mut differ).await;
        let s = act(&mut env, json!({"action": "navigate", "url": fa.url("/admin/post/new/")})).await;
        read_as_the_full_captures(&env, "Flask-Admin post form", &mut differ).await;
        click(&mut env, find_after(&s, "User *", "link", "Ada Lovelace")).await;
        read_as_the_full_captures(&env, "Flask-Admin post form, Select2 open", &mut differ).await;
        env.close().await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

/// Datasette's table page (facets, the filter form, column menus) and its database page
/// (CodeMirror).
#[test]
fn datasette_reads_as_the_full_captures_and_the_ax_tree() {
    run(async {
        let ds = Datasette::start();
        let mut env = env(&ds.url("/library/books")).await;
        let mut differ = Vec::new();
        read_as_the_full_captures(&env, "Datasette table", &mut differ).await;
        act(&mut env, json!({"action": "navigate", "url": ds.url("/library")})).await;
        read_as_the_full_captures(&env, "Datasette database", &mut differ).await;
        env.close().await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

/// MkDocs Material: the home page (header, palette toggle, search, navigation tree), with
/// search results, and a page with a table and a table of contents.
#[test]
fn mkdocs_reads_as_the_full_captures_and_the_ax_tree() {
    run(async {
        let site = MkDocs::start();
        let mut env = env(&site.url("/")).await;
        let mut differ = Vec::new();
        read_as_the_full_captures(&env, "MkDocs home", &mut differ).await;
        let search = find(env.state(), "textbox", "Search");
        type_into(&mut env, search, "lamp").await;
        read_as_the_full_captures(&env, "MkDocs search results", &mut differ).await;
        act(&mut env, json!({"action": "navigate", "url": site.url("/reference/command-line/")})).await;
        read_as_the_full_captures(&env, "MkDocs command-line page", &mut differ).await;
        env.close().await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

/// Record a TodoMVC session, then replay it with no model on the app changed: other rows
/// first (the rows it touches move down) replays; a row already called as the one it
/// completes makes that step ambiguous, and the replay stops there with `drift`.
#[test]
fn todomvc_recorded_replays_by_role_and_name_and_stops_with_drift_on_an_ambiguous_row() {
    run(async {
        let (_server, url) = todomvc().await;
        let api = common::api();
        let open = |session: &'static str, todos: Option<serde_json::Value>| {
            let (api, url) = (&api, url.clone());
            async move {
                let mut bind = json!({ "session": session });
                if let Some(todos) = todos {
                    let origin = url.split("/examples/").next().unwrap().to_string();
                    bind["storage_state"] = json!({ "cookies": [], "origins": [{ "origin": origin,
                        "localStorage": [{ "name": "react-todos", "value": todos.to_string() }] }] });
                }
                let b = api.dispatch("bind_browser", bind).await.unwrap().value;
                let a = json!({ "session": session, "target_id": b["target_id"], "tab_id": b["tabs"][0]["tab_id"] });
                let mut nav = a.clone();
                nav["url"] = json!(url);
                api.dispatch("browser_navigate", nav).await.unwrap();
                a
            }
        };
        let with = |a: &serde_json::Value, extra: serde_json::Value| {
            let mut v = a.clone();
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        // Record: type three todos and complete "Walk the dog" through the element-index protocol.
        let a = open("todo-record", None).await;
        let state = api.get_state(sightline_api::decode_params(with(&a, json!({ "screenshot": false }))).unwrap());
        let state = state.await.unwrap().state;
        let field = find(&state, "textbox", "What needs to be done?");
        let mut last = state;
        for title in ["Buy milk", "Walk the dog", "Read a book"] {
            let act =
                json!({ "action": { "action": "input_text", "element_index": field, "text": format!("{title}\n") } });
            last = api.act(sightline_api::decode_params(with(&a, act)).unwrap()).await.unwrap().state;
            assert!(last.error.is_none(), "{:?}", last.error);
        }
        let toggle = find_before(&last, "Walk the dog", "checkbox", "");
        let act = json!({ "action": { "action": "click_element", "element_index": toggle } });
        api.dispatch("act", with(&a, act)).await.unwrap();
        let script = api.dispatch("get_script", json!({ "session": "todo-record" })).await.unwrap().value;
        let script = script["script"].as_str().unwrap().to_string();
        assert!(script.contains(r#""role":"checkbox","name":"","near":"Walk the dog""#), "{script}");

        // Replay on the app with two other todos first: completes the same row.
        let seeded = |titles: &[&str]| {
            let todos: Vec<serde_json::Value> = titles
                .iter()
                .enumerate()
                .map(|(i, t)| json!({ "id": format!("seed-{i}"), "title": t, "completed": false }))
                .collect();
            json!(todos)
        };
        let b = open("todo-replay", Some(seeded(&["Call mom", "Pay rent"]))).await;
        let out = api.dispatch("run", with(&b, json!({ "code": script.clone(), "result": "none" }))).await;
        assert!(out.is_ok(), "{out:?}");
        let code = "return (await browser.state()).page_content";
        let content = api.dispatch("run", with(&b, json!({ "code": code, "result": "none" }))).await.unwrap().value;
        let content = content["value"].as_str().unwrap().to_string();
        assert!(content.contains("Call mom") && content.contains("Read a book"), "{content}");
        let walk = content.lines().find(|l| l.contains("Walk the dog")).unwrap_or_default();
        assert!(walk.contains("checked") && !walk.contains("unchecked"), "the recorded row was completed: {content}");

        // Replay on the app where a todo is already called "Walk the dog": step 4 is ambiguous.
        let c = open("todo-drift", Some(seeded(&["Walk the dog"]))).await;
        let e = api.dispatch("run", with(&c, json!({ "code": script }))).await.unwrap_err();
        assert_eq!(e.code, sightline_api::ToolCode::Drift, "{e:?}");
        assert_eq!(e.detail_json()["cause"]["step"], 4, "{e:?}");
        assert_eq!(e.detail_json()["cause"]["kind"], "ambiguous", "{e:?}");
        assert_eq!(e.detail_json()["actions"].as_array().unwrap().len(), 3, "the three todos were typed: {e:?}");
    })
}
