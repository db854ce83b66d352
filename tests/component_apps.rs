//! Real apps built on component libraries (issue 33, "Deliver" 5), end to end: a Vue/Quasar UI
//! (NiceGUI), a React data-app framework (Streamlit), a CMS with a Draft.js rich-text editor
//! (Wagtail's Draftail) and a web terminal (JupyterLab's xterm.js), each installed pinned from
//! PyPI by `./x apps` / `./x test` into `.cache/apps/` and started here on 127.0.0.1 by its
//! `tests/apps/NAME/serve.py`.
//!
//! As in `tests/apps.rs`, each task plays a model's part through the element-index protocol:
//! every target is chosen from the *current* state by role and name as `page_content` shows
//! them (`harness::find` and friends), never by a number, with Chromium's own accessibility
//! tree as the judge of what a role or a name is. Every outcome is checked in the app's
//! backend: the JSON file the NiceGUI form writes, the JSON lines the Streamlit script writes,
//! Wagtail's SQLite database, the files a Jupyter terminal makes.

use crate::common;
use crate::harness;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{env, run};
use harness::components::*;
use harness::*;
use serde_json::{json, Value};
use sightline_api::{Action, Env, EnvOptions, StateObject};

/// The current year and month on this machine (`YYYY-MM`), as the apps' date pickers open on
/// them.
fn this_month() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import datetime; print(datetime.date.today().strftime('%Y-%m'))"])
        .output()
        .expect("python3");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Look at the page again until it shows an element with this role and name (at most 30 s):
/// an app that renders after it loads (JupyterLab's splash screen stays over everything while
/// it restores its workspace; Streamlit draws the widgets as its script's first run sends
/// them over a WebSocket) can still be empty after one wait for a stable page (3 s) on a busy
/// machine. The protocol has no "wait", so the model does what it can: an action that changes
/// nothing (a scroll up, at the top of the page) every half second, reading each new state.
async fn until_shown(env: &mut Env, role: &str, name: &str) -> StateObject {
    until(env, |s| has(s, role, name)).await
}

/// The state once a `role` element shows on a line of page_content that reads `anchor`, looking
/// again as [`until_shown`] does.
async fn until_on_line(env: &mut Env, anchor: &str, role: &str) -> StateObject {
    until(env, |s| tokens(s).iter().any(|t| t.role == role && t.line_text.contains(anchor))).await
}

/// The first state `shown` holds for (at most 30 s), an action that changes nothing every half
/// second between reads.
async fn until(env: &mut Env, shown: impl Fn(&StateObject) -> bool) -> StateObject {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if shown(env.state()) || Instant::now() > deadline {
            return env.state().clone();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        act(env, json!({"action": "scroll", "direction": "up"})).await;
    }
}

// =============================================================================================
// NiceGUI: a booking form of Quasar components

fn bookings(app: &AppServer) -> Vec<Value> {
    serde_json::from_str(&app.data_text()).expect("bookings.json is a JSON list")
}

/// The two bookings `serve.py --prepare` writes, then `more`.
fn seeded_and(more: &[Value]) -> Vec<Value> {
    let mut all = vec![
        json!({"guest": "Alan Turing", "room": "Single", "date": "2026-05-04", "breakfast": false, "offers": false}),
        json!({"guest": "Ada Lovelace", "room": "Suite", "date": "2026-06-10", "breakfast": true, "offers": false}),
    ];
    all.extend_from_slice(more);
    all
}

/// The one element with this role on the page_content line that reads `anchor`, whatever its
/// name: "the (bin icon) button in the row of Ada Lovelace's booking".
fn only_on_line(s: &StateObject, anchor: &str, role: &str) -> u64 {
    let all: Vec<Token> = tokens(s).into_iter().filter(|t| t.role == role && t.line_text.contains(anchor)).collect();
    match all.as_slice() {
        [t] => t.index,
        _ => panic!("{} elements {role} on a line reading {anchor:?}\n{}", all.len(), shown(s)),
    }
}

/// Choose an option of the Quasar select named `select`: click the select, then the option in
/// the menu it opened.
async fn choose(env: &mut Env, select: &str, option: &str) -> StateObject {
    let s = click(env, find(env.state(), "combobox", select)).await;
    click(env, find(&s, "option", option)).await
}

/// Book a Double room for Ada Lovelace on the 15th of this month, with breakfast: the name in
/// a text field, the room type in a Quasar select (its focus target is a transparent
/// `<input role=combobox>`), the date from the calendar that the button beside the date field
/// opens, a checkbox, and "Book".
#[test]
fn nicegui_book_a_room() {
    run(async {
        let app = AppServer::start(&NICEGUI);
        let mut env = env(&app.url("/")).await;
        assert_eq!(bookings(&app), seeded_and(&[]));
        let guest = find(env.state(), "textbox", "Guest name");
        type_into(&mut env, guest, "Ada Lovelace").await;
        choose(&mut env, "Room type", "Double").await;
        // The calendar: the icon button right after the date field.
        let calendar = next_on_line(env.state(), "textbox", "Check-in date", "button");
        let s = click(&mut env, calendar).await;
        let s = click(&mut env, find(&s, "button", "15")).await;
        click(&mut env, find(&s, "checkbox", "Breakfast included")).await;
        click_named(&mut env, "button", "Book").await;

        let date = format!("{}-15", this_month());
        assert_eq!(
            bookings(&app),
            seeded_and(&[
                json!({"guest": "Ada Lovelace", "room": "Double", "date": date, "breakfast": true, "offers": false})
            ])
        );
    })
}

/// Book twice in a row: the second "Book" is clicked while the first booking's notification
/// shows (Quasar's notification layer is a fixed, full-viewport element with
/// `pointer-events: none`, on top of the form). The date is typed this time, the switch
/// turned on.
#[test]
fn nicegui_book_again_while_the_notification_shows() {
    run(async {
        let app = AppServer::start(&NICEGUI);
        let mut env = env(&app.url("/")).await;
        let guest = find(env.state(), "textbox", "Guest name");
        type_into(&mut env, guest, "Grace Hopper").await;
        choose(&mut env, "Room type", "Single").await;
        let day = find(env.state(), "textbox", "Check-in date");
        type_into(&mut env, day, "2026-07-01").await;
        let s = click_named(&mut env, "button", "Book").await;
        assert_eq!(bookings(&app).len(), 3, "the first booking\n{}", shown(&s));
        assert!(
            s.page_content.contains("Booked: Single room for Grace Hopper"),
            "the notification is on screen\n{}",
            shown(&s)
        );

        // While it shows: a suite, with offers, booked again.
        choose(&mut env, "Room type", "Suite").await;
        click_named(&mut env, "switch", "Send me offers").await;
        let s = click_named(&mut env, "button", "Book").await;
        assert_eq!(
            bookings(&app),
            seeded_and(&[
                json!({"guest": "Grace Hopper", "room": "Single", "date": "2026-07-01", "breakfast": false, "offers": false}),
                json!({"guest": "Grace Hopper", "room": "Suite", "date": "2026-07-01", "breakfast": false, "offers": true}),
            ]),
            "{}",
            shown(&s)
        );
    })
}

/// Cancel Ada Lovelace's booking from the list under the form: the bin icon button in its row
/// (no text, a tooltip on hover) opens a Quasar dialog; "Keep it" first changes nothing, then
/// "Cancel booking" removes it.
#[test]
fn nicegui_cancel_a_booking_in_its_dialog() {
    run(async {
        let app = AppServer::start(&NICEGUI);
        let mut env = env(&app.url("/")).await;
        let row = "Ada Lovelace: Suite room on 2026-06-10";
        let bin = only_on_line(env.state(), row, "button");
        let s = click(&mut env, bin).await;
        assert!(s.page_content.contains("Cancel the booking of Ada Lovelace on 2026-06-10?"), "{}", shown(&s));
        let s = click(&mut env, find(&s, "button", "Keep it")).await;
        assert_eq!(bookings(&app), seeded_and(&[]), "kept");

        let s = click(&mut env, only_on_line(&s, row, "button")).await;
        let s = click(&mut env, find(&s, "button", "Cancel booking")).await;
        assert_eq!(
            bookings(&app),
            [
                json!({"guest": "Alan Turing", "room": "Single", "date": "2026-05-04", "breakfast": false, "offers": false})
            ],
            "{}",
            shown(&s)
        );
    })
}

// =============================================================================================
// Streamlit: report settings

/// What the script received at each "Save settings", in order.
fn received(app: &AppServer) -> Vec<Value> {
    app.data_text().lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// Choose the layout with the radio group and the start date from the calendar dialog, then
/// save: the script receives both (the slider keeps its 15).
#[test]
fn streamlit_layout_and_start_date() {
    run(async {
        let app = AppServer::start(&STREAMLIT);
        let mut env = env(&app.url("/")).await;
        until_shown(&mut env, "radio", "Itemised").await;
        click_named(&mut env, "radio", "Itemised").await;
        let choose = scroll_to(&mut env, "button", "Choose date").await;
        let s = click(&mut env, choose).await;
        click(&mut env, find(&s, "button", "Friday, March 21, 2025")).await;
        let save = scroll_to(&mut env, "button", "Save settings").await;
        click(&mut env, save).await;

        assert_eq!(
            received(&app),
            [
                json!({"title": "Weekly report", "region": "North", "columns": ["Date", "Visits"], "rows": 25, "archived": false,
                    "interval": 15, "layout": "Itemised", "start": "2025-03-21", "attachment": null})
            ]
        );
    })
}

/// A title typed into a text input, a region chosen in the select box (Base Web's select: a
/// combobox input and a listbox in a popover), a number typed into the number input, a
/// checkbox, one column taken out of the multiselect and another put in; then save.
#[test]
fn streamlit_title_region_rows_and_archived() {
    run(async {
        let app = AppServer::start(&STREAMLIT);
        let mut env = env(&app.url("/")).await;
        let s = until_shown(&mut env, "checkbox", "Include archived items").await;
        let s = type_into(&mut env, find(&s, "textbox", "Report title"), "Q3 report").await;
        let s = click(&mut env, find(&s, "combobox", "Region")).await;
        let s = click(&mut env, find(&s, "option", "East")).await;
        let s = type_into(&mut env, find(&s, "spinbutton", "Rows per page"), "50").await;
        let s = click(&mut env, find(&s, "checkbox", "Include archived items")).await;
        // The multiselect's tags: drop "Visits" with its remove button, add "Revenue".
        let s = click(&mut env, find(&s, "button", "Remove Visits")).await;
        let s = click(&mut env, find(&s, "combobox", "Columns")).await;
        let s = click(&mut env, find(&s, "option", "Revenue")).await;
        // The list stays open for more; its toggle (after "Clear all") closes it.
        click(&mut env, next_on_line(&s, "button", "Clear all", "button")).await;
        let save = scroll_to(&mut env, "button", "Save settings").await;
        click(&mut env, save).await;

        assert_eq!(
            received(&app),
            [
                json!({"title": "Q3 report", "region": "East", "columns": ["Date", "Revenue"], "rows": 50, "archived": true,
                    "interval": 15, "layout": "Compact", "start": "2025-03-10", "attachment": null})
            ]
        );
    })
}

/// The `value="…"` that page_content prints for this element.
fn slider_value(s: &StateObject, index: u64) -> i64 {
    let t = tokens(s).into_iter().find(|t| t.index == index).expect("the slider's token");
    let from = t.line_text.find(&format!("[{index}]")).unwrap();
    let rest = &t.line_text[from..];
    let v = rest.find("value=\"").map(|i| &rest[i + 7..]).unwrap_or_else(|| panic!("no value: {rest}"));
    v[..v.find('"').unwrap()].parse().unwrap_or_else(|_| panic!("not a number: {v}"))
}

/// Set the refresh interval on the slider (to 30, by arrow keys) and attach a CSV file through the uploader's
/// button and the file chooser it opens, then save.
#[test]
fn streamlit_interval_and_attachment() {
    run(async {
        let app = AppServer::start(&STREAMLIT);
        let files = app.dir().join("files");
        std::fs::create_dir_all(&files).unwrap();
        std::fs::write(files.join("visits.csv"), "day,visits\nmon,12\ntue,15\n").unwrap();
        let mut env = Env::new(common::tab().await, EnvOptions { screenshot: false }).await.expect("env");
        env.set_files(Some(Arc::new(sightline_browser::FileRoot::new(&files).unwrap())), None);
        let url = app.url("/");
        let first =
            env.step_action(Action::Navigate { url: url.clone() }, json!({"action": "navigate", "url": url})).await;
        assert!(first.state.error.is_none(), "{:?}", first.state.error);

        until_shown(&mut env, "radio", "Compact").await;
        // The slider moves by arrow keys (press_key); its value is read back after each press.
        for _ in 0..60 {
            let s = env.state().clone();
            let slider = find_starting(&s, "slider", "Refresh interval (minutes)");
            let key = match slider_value(&s, slider) {
                v if v < 30 => "ArrowRight",
                v if v > 30 => "ArrowLeft",
                _ => break,
            };
            act(&mut env, json!({"action": "press_key", "key": key, "element_index": slider})).await;
        }
        let upload = scroll_to(&mut env, "button", "Upload").await;
        let s = click(&mut env, upload).await;
        assert!(s.page_content.contains("[file chooser open"), "the button opens a file chooser\n{}", shown(&s));
        act(&mut env, json!({"action": "upload_file", "element_index": upload, "paths": ["visits.csv"]})).await;
        let save = scroll_to(&mut env, "button", "Save settings").await;
        click(&mut env, save).await;

        assert_eq!(
            received(&app),
            [
                json!({"title": "Weekly report", "region": "North", "columns": ["Date", "Visits"], "rows": 25, "archived": false,
                    "interval": 30, "layout": "Compact", "start": "2025-03-10",
                    "attachment": {"name": "visits.csv", "text": "day,visits\nmon,12\ntue,15\n"}})
            ]
        );
    })
}

// =============================================================================================
// Wagtail: pages with a rich-text body (Draftail, on Draft.js)

/// Sign in to Wagtail's admin through its form.
async fn wagtail_login(env: &mut Env, app: &AppServer) -> StateObject {
    let s = act(env, json!({"action": "navigate", "url": app.url("/admin/")})).await;
    assert!(s.url.contains("/admin/login/"), "the admin asks for a login first: {}", s.url);
    let s = type_into(env, find(&s, "textbox", "Username*"), ADMIN_USER).await;
    let s = type_into(env, find(&s, "textbox", "Password*"), ADMIN_PASSWORD).await;
    let s = click(env, find(&s, "button", "Sign in")).await;
    assert!(s.url.ends_with("/admin/"), "signed in: {}", s.url);
    s
}

/// From the admin's sidebar, "Pages", then the home page in the explorer: its child pages.
async fn wagtail_home_listing(env: &mut Env) -> StateObject {
    let s = click_named(env, "button", "Pages").await;
    let s = click(env, find(&s, "link", "Welcome to your new Wagtail site!")).await;
    assert!(s.url.contains("/admin/pages/"), "{}", s.url);
    s
}

/// The first element with this role below the heading that reads `heading` (a line of
/// page_content starting with `#`): "the editor under Body".
fn under_heading(s: &StateObject, heading: &str, role: &str) -> u64 {
    let lines: Vec<&str> = s.page_content.lines().collect();
    let Some(at) = lines.iter().position(|l| l.starts_with('#') && l.contains(heading)) else {
        panic!("no heading {heading:?}\n{}", shown(s))
    };
    let all = tokens(s);
    match all.iter().find(|t| t.line > at && t.role == role) {
        Some(t) => t.index,
        None => panic!("no {role} below the heading {heading:?}\n{}", shown(s)),
    }
}

/// Publish from the editor's footer: "More actions", then "Publish".
async fn wagtail_publish(env: &mut Env) -> StateObject {
    let s = click_named(env, "button", "More actions").await;
    let s = click(env, find(&s, "button", "Publish")).await;
    assert!(s.page_content.contains("published"), "Wagtail says it published\n{}", shown(&s));
    s
}

fn page_row(app: &AppServer, title: &str) -> (bool, String) {
    let rows = app.query(&format!(
        "SELECT p.live, b.body FROM blog_blogpage b JOIN wagtailcore_page p ON p.id = b.page_ptr_id \
         WHERE p.title = '{}'",
        title.replace('\'', "''")
    ));
    assert_eq!(rows.len(), 1, "one page titled {title:?}: {rows:?}");
    (rows[0][0] == json!(1), rows[0][1].as_str().unwrap_or_default().to_string())
}

/// Add a blog page under the home page: its title, its body typed into the Draft.js editor,
/// published.
#[test]
fn wagtail_create_page_with_rich_text_body() {
    run(async {
        let app = AppServer::start(&WAGTAIL);
        let mut env = env(&app.url("/admin/login/")).await;
        wagtail_login(&mut env, &app).await;
        let s = wagtail_home_listing(&mut env).await;
        let s = click(&mut env, find(&s, "link", "Add child page")).await;
        assert!(s.url.contains("/admin/pages/add/"), "{}", s.url);
        let s = type_into(&mut env, find(&s, "textbox", "Title*"), "Opening hours").await;
        let body = under_heading(&s, "Body", "textbox");
        let s = act(
            &mut env,
            json!({"action": "input_text", "element_index": body, "text": "We open at nine, every day."}),
        )
        .await;
        let read = s.page_content.contains("We open at nine, every day.");
        wagtail_publish(&mut env).await;

        let (live, html) = page_row(&app, "Opening hours");
        assert!(live, "the page is live");
        assert!(html.contains(">We open at nine, every day.</p>"), "the body: {html}");
        assert!(read, "after typing, page_content does not show the body's text\n{}", shown(&s));
    })
}

/// Edit the body of "About us": read it, replace it, publish. The model must see what the body
/// says before it changes it.
#[test]
fn wagtail_edit_page_body() {
    run(async {
        let app = AppServer::start(&WAGTAIL);
        let mut env = env(&app.url("/admin/login/")).await;
        wagtail_login(&mut env, &app).await;
        let s = wagtail_home_listing(&mut env).await;
        let s = click(&mut env, find(&s, "link", "About us")).await;
        assert!(s.url.contains("/edit/"), "the editor: {}", s.url);
        let read = s.page_content.contains("We are a small bakery on Main Street.");
        let before = s.clone();
        let body = under_heading(&s, "Body", "textbox");
        act(
            &mut env,
            json!({"action": "input_text", "element_index": body, "text": "We are a small bakery on Elm Street.",
                   "overwrite": true}),
        )
        .await;
        wagtail_publish(&mut env).await;

        let (live, html) = page_row(&app, "About us");
        assert!(live);
        assert!(html.contains(">We are a small bakery on Elm Street.</p>"), "the body: {html}");
        assert!(!html.contains("Main Street"), "the old text is gone: {html}");
        assert!(read, "the editor's page_content does not show the body's text\n{}", shown(&before));
    })
}

/// Rich text as Wagtail stores it, without Draftail's `data-block-key` attributes.
fn without_block_keys(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(at) = rest.find(" data-block-key=\"") {
        out.push_str(&rest[..at]);
        let after = &rest[at + " data-block-key=\"".len()..];
        rest = after.find('"').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// Structure in the body: "/" opens Draftail's block menu, "Heading 2" turns the block into
/// a heading, and each "\n" typed (Enter) starts a new paragraph.
#[test]
fn wagtail_body_with_a_heading_and_two_paragraphs() {
    run(async {
        let app = AppServer::start(&WAGTAIL);
        let mut env = env(&app.url("/admin/login/")).await;
        wagtail_login(&mut env, &app).await;
        let s = wagtail_home_listing(&mut env).await;
        let s = click(&mut env, find(&s, "link", "Add child page")).await;
        let s = type_into(&mut env, find(&s, "textbox", "Title*"), "Hours").await;
        let body = under_heading(&s, "Body", "textbox");
        let s = act(&mut env, json!({"action": "input_text", "element_index": body, "text": "/"})).await;
        let s = click(&mut env, find(&s, "option", "Heading 2")).await;
        let body = under_heading(&s, "Body", "textbox");
        act(
            &mut env,
            json!({"action": "input_text", "element_index": body,
                   "text": "Opening hours\nMonday to Friday.\nClosed at weekends."}),
        )
        .await;
        wagtail_publish(&mut env).await;

        let (live, html) = page_row(&app, "Hours");
        assert!(live);
        assert_eq!(
            without_block_keys(&html),
            "<h2>Opening hours</h2><p>Monday to Friday.</p><p>Closed at weekends.</p>"
        );
    })
}

/// A link in the body: "/" then "Link" opens Wagtail's link chooser (a modal dialog), its
/// "External link" tab takes the URL and the link's text, "Insert link" puts it at the caret.
#[test]
fn wagtail_body_with_an_external_link_from_the_chooser() {
    run(async {
        let app = AppServer::start(&WAGTAIL);
        let mut env = env(&app.url("/admin/login/")).await;
        wagtail_login(&mut env, &app).await;
        let s = wagtail_home_listing(&mut env).await;
        let s = click(&mut env, find(&s, "link", "Add child page")).await;
        let s = type_into(&mut env, find(&s, "textbox", "Title*"), "Menu").await;
        let body = under_heading(&s, "Body", "textbox");
        let s = act(&mut env, json!({"action": "input_text", "element_index": body, "text": "Prices are on /"})).await;
        let s = click(&mut env, find(&s, "option", "Link")).await;
        let s = click(&mut env, find(&s, "link", "External link")).await;
        let s = type_into(&mut env, find(&s, "textbox", "URL*"), "https://example.com/menu").await;
        let s = type_into(&mut env, find(&s, "textbox", "Link text"), "our menu page").await;
        click(&mut env, find(&s, "button", "Insert link")).await;
        wagtail_publish(&mut env).await;

        let (live, html) = page_row(&app, "Menu");
        assert!(live);
        assert_eq!(
            without_block_keys(&html),
            "<p>Prices are on <a href=\"https://example.com/menu\">our menu page</a></p>"
        );
    })
}

// =============================================================================================
// JupyterLab: a terminal (xterm.js)

/// Wait (at most 20 s) for a file that a terminal's shell or a kernel makes in the server's directory.
fn made_in_its_directory(app: &AppServer, name: &str) -> Option<String> {
    let path = app.dir().join(name);
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(&path) {
            if !text.is_empty() {
                return Some(text);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// Open a terminal from the launcher's "Terminal" card and run a command that writes a file.
#[test]
fn jupyter_terminal_from_the_launcher() {
    run(async {
        let app = AppServer::start(&JUPYTER);
        let mut env = env(&app.url("/lab")).await;
        let s = until_shown(&mut env, "button", "Terminal").await;
        let s = click(&mut env, find(&s, "button", "Terminal")).await;
        let input = find(&s, "textbox", "Terminal input");
        act(
            &mut env,
            json!({"action": "input_text", "element_index": input,
                   "text": "echo made by sightline > from-terminal.txt\n"}),
        )
        .await;
        assert_eq!(made_in_its_directory(&app, "from-terminal.txt").as_deref(), Some("made by sightline\n"));
    })
}

/// The one element named exactly `name`, whatever its role.
fn named(s: &StateObject, name: &str) -> u64 {
    let all: Vec<Token> = tokens(s).into_iter().filter(|t| t.name == name).collect();
    match all.as_slice() {
        [t] => t.index,
        _ => panic!("{} elements named {name:?}\n{}", all.len(), shown(s)),
    }
}

/// Open a terminal from the menu bar (File › New › Terminal) and list the directory into a
/// file.
#[test]
fn jupyter_terminal_from_the_file_menu() {
    run(async {
        let app = AppServer::start(&JUPYTER);
        let mut env = env(&app.url("/lab")).await;
        let s = until_shown(&mut env, "menuitem", "File").await;
        let s = click(&mut env, find(&s, "menuitem", "File")).await;
        // Lumino's submenu item is an `<li tabindex=0 aria-haspopup=true>` with no role
        // (Chromium: a focusable generic): chosen by its name alone.
        let s = click(&mut env, named(&s, "New")).await;
        let s = click(&mut env, find(&s, "menuitem", "Terminal")).await;
        let input = find(&s, "textbox", "Terminal input");
        act(&mut env, json!({"action": "input_text", "element_index": input, "text": "ls > listing.txt\n"})).await;
        let listing = made_in_its_directory(&app, "listing.txt").unwrap_or_default();
        assert!(listing.lines().any(|l| l == "README.txt"), "ls listed the directory: {listing:?}");
    })
}

/// A notebook from the launcher: code typed into its first cell (a CodeMirror 6 editor, which
/// closes brackets and quotes as they are typed) and run with the toolbar's run button; the
/// kernel writes a file.
#[test]
fn jupyter_notebook_cell_runs() {
    run(async {
        let app = AppServer::start(&JUPYTER);
        let mut env = env(&app.url("/lab")).await;
        let s = until_shown(&mut env, "button", "Terminal").await;
        // Two launcher cards read "Python 3 (ipykernel)": the first is under "Notebook".
        let notebook = under_heading(&s, "Notebook", "button");
        click(&mut env, notebook).await;
        let s = until_shown(&mut env, "button", "Run this cell and advance (Shift+Enter)").await;
        let cell = find_after(&s, "[ ]:", "textbox", "");
        let s = act(
            &mut env,
            json!({"action": "input_text", "element_index": cell,
                   "text": "open(\"nb.txt\", \"w\").write(\"made in a notebook\")"}),
        )
        .await;
        click(&mut env, find(&s, "button", "Run this cell and advance (Shift+Enter)")).await;
        assert_eq!(made_in_its_directory(&app, "nb.txt").as_deref(), Some("made in a notebook"));
    })
}

/// A folder from the file browser's "New Folder" button, named in the inline field it opens
/// (the name typed over "Untitled Folder", Enter to commit): the folder on disk is renamed.
#[test]
fn jupyter_new_folder_named_in_the_file_browser() {
    run(async {
        let app = AppServer::start(&JUPYTER);
        let mut env = env(&app.url("/lab")).await;
        let s = until_shown(&mut env, "button", "New Folder").await;
        click(&mut env, find(&s, "button", "New Folder")).await;
        // The rename field is drawn once the server has made the folder: on a loaded machine
        // that answer can come after the click's state, and an agent looks again.
        let s = until_on_line(&mut env, "value=\"Untitled Folder\"", "textbox").await;
        let field = find_on_line(&s, "value=\"Untitled Folder\"", "textbox", "");
        act(&mut env, json!({"action": "input_text", "element_index": field, "text": "reports\n", "overwrite": true}))
            .await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !app.dir().join("reports").is_dir() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(app.dir().join("reports").is_dir(), "the folder is named reports");
        assert!(!app.dir().join("Untitled Folder").exists(), "and no Untitled Folder is left");
    })
}

/// Open README.txt from the file browser (a double click on its name), add a line at the end
/// of the text in the editor (CodeMirror 6), save it with File › Save Text: the file on disk
/// has the line.
#[test]
fn jupyter_open_edit_and_save_a_file() {
    run(async {
        let app = AppServer::start(&JUPYTER);
        let mut env = env(&app.url("/lab")).await;
        let s = until_shown(&mut env, "button", "README.txt").await;
        let s = act(
            &mut env,
            json!({"action": "click_element", "element_index": find(&s, "button", "README.txt"), "count": 2}),
        )
        .await;
        let editor = find_on_line(&s, "value=\"Files a terminal", "textbox", "");
        act(&mut env, json!({"action": "input_text", "element_index": editor, "text": "Edited through Sightline."}))
            .await;
        let s = click_named(&mut env, "menuitem", "File").await;
        click(&mut env, find(&s, "menuitem", "Save Text Ctrl+S")).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !app.data_text().contains("Edited") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let lines: Vec<String> = app.data_text().lines().map(str::to_string).collect();
        assert_eq!(
            lines,
            ["Files a terminal of the test makes appear next to this one.", "Edited through Sightline."],
            "README.txt on disk"
        );
    })
}
