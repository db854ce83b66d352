//! MiniWoB++ (issue 17, item 6): the task pages of PyPI's `miniwob==1.1.0` wheel, served on
//! 127.0.0.1 and solved through `sightline env` (the real binary, JSON lines over a pipe).
//!
//! Each task is one test: one `sightline env` process on the task page, `MINIWOB_EPISODES`
//! episodes (default 5) in a row, as a person plays them: click the START cover, read the
//! instruction, act, and read `Last reward:` from the reward display in `page_content`. The
//! policies (`miniwob/policies.rs`) choose every target from the current state by role and name
//! (never by a fixed number, never from the DOM behind Sightline's back).
//!
//! An episode succeeds when its reward is positive (MiniWoB's own measure: its rewards are 1
//! minus the time taken as a share of the episode's limit, or -1). Each test asserts that every
//! episode succeeds, and writes its row to `target/miniwob/TASK.tsv`; `./x miniwob` prints them
//! as the README's table.
//!
//! The table at the end names every task the wheel ships (`miniwob/html/miniwob/*.html`)
//! exactly once: played by a policy (one test each), or out of reach with its cause (what the
//! protocol's actions or Sightline's states cannot do for it yet). `table_names_every_shipped_task`
//! fails when the wheel ships a task the table does not name, or the table names one it does not
//! ship, and writes each out-of-reach task's row to `target/miniwob/TASK.out` (task, cause).
//!
//! Episodes are seeded: `?seed=S` on the task URL (see `harness::SEED_LINE`), S = 1 for every
//! task, so a failure replays with the same problems.

// The table below is one macro call that recurses once per task.

#[path = "miniwob/harness.rs"]
mod harness;
#[path = "miniwob/policies.rs"]
mod policies;

use std::time::Instant;

use harness::{Env, HarnessError, Result};

/// Episodes per task: `MINIWOB_EPISODES`, default 5.
fn episodes() -> u32 {
    std::env::var("MINIWOB_EPISODES").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(5)
}

const SEED: u32 = 1;

/// One episode's result.
#[derive(Debug)]
struct Episode {
    reward: Option<f64>,
    actions: usize,
    error: Option<String>,
    /// The State Objects its actions were answered with, one per action, screenshot left out.
    reads: Vec<serde_json::Value>,
}

/// Click START, play, read the reward display. The episode counter must move by one.
fn episode(env: &mut Env, policy: policies::Policy) -> Result<f64> {
    let (_, before) = env.state.reward();
    let before = before
        .ok_or_else(|| HarnessError::NoReward { episodes_done: None, page_content: env.state.page_content.clone() })?;
    let start = env.state.get("clickable", "START")?.index;
    env.click(start)?;
    if let Err(e) = policy(env) {
        // Some pages end the episode on an action the policy took for a step on the way
        // (click-tab-2-medium: the empty tab is the answer when the link is not in the first);
        // the reward display then has the last word.
        if env.state.reward().1 != Some(before + 1) {
            return Err(e);
        }
    }
    // The reward display reports the episode once its handler ran; most tasks end on the
    // policy's last click, a few a moment later (timed effects): look again a few times.
    for _ in 0..20 {
        let (last, done) = env.state.reward();
        if done == Some(before + 1) {
            return last.ok_or_else(|| HarnessError::NoReward {
                episodes_done: done,
                page_content: env.state.page_content.clone(),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        env.look()?;
    }
    let (_, done) = env.state.reward();
    Err(HarnessError::NoReward { episodes_done: done, page_content: env.state.page_content.clone() })
}

fn play(task: &str, policy: policies::Policy) {
    play_allowing(task, policy, 0);
}

/// [`play`], where up to `allowed` episodes may fail: only for a task whose outcome
/// races the page's own clock (its table row says how), never to hide a policy's mistake.
fn play_allowing(task: &str, policy: policies::Policy, allowed: usize) {
    let n = episodes();
    let started = Instant::now();
    let url = harness::task_url(task, SEED).unwrap_or_else(|e| panic!("{e}"));
    let mut env = Env::open(&url).unwrap_or_else(|e| panic!("{task}: {e}"));
    let mut results = Vec::new();
    let mut retries = 0;
    for _ in 0..n {
        let before = env.actions;
        let first_read = env.reads.len();
        let r = episode(&mut env, policy);
        let actions = env.actions - before;
        let reads = env.reads.split_off(first_read);
        match r {
            Ok(reward) => results.push(Episode { reward: Some(reward), actions, error: None, reads }),
            Err(e) => {
                results.push(Episode { reward: None, actions, error: Some(e.to_string()), reads });
                // Start the next episode from a fresh page.
                retries += env.retries;
                drop(env);
                env = Env::open(&url).unwrap_or_else(|e| panic!("{task}: {e}"));
            }
        }
    }
    retries += env.retries;
    drop(env);
    let secs = started.elapsed().as_secs_f64();
    let ok = results.iter().filter(|e| e.reward.is_some_and(|r| r > 0.0)).count();
    let mean: f64 = results.iter().map(|e| e.reward.unwrap_or(-1.0)).sum::<f64>() / n as f64;
    let steps: f64 = results.iter().map(|e| e.actions as f64).sum::<f64>() / n as f64;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/miniwob");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join(format!("{task}.tsv")),
        format!("{task}\t{ok}\t{n}\t{mean:.2}\t{steps:.1}\t{retries}\t{secs:.1}\n"),
    );
    write_reads(&dir, task, &results);
    let failures: Vec<String> = results
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.reward.is_some_and(|r| r > 0.0))
        .map(|(i, e)| format!("episode {}: reward {:?}: {}", i + 1, e.reward, e.error.as_deref().unwrap_or("")))
        .collect();
    assert!(failures.len() <= allowed, "{task}: {ok}/{n} episodes succeeded\n{}", failures.join("\n"));
}

/// What the policy read, per episode, for `./x bench tokens`: `target/miniwob/TASK.reads.jsonl`,
/// one line per episode, `{"task", "episode", "reward", "solved", "actions", "states"}`, where
/// `states` are the State Objects its actions were answered with (one per action sent, the START
/// click and the looks for the reward display included; `screenshot` left out, none is taken).
/// The state an episode starts from (the START cover) is the previous episode's last (or the
/// one `sightline env` opens with) and is not repeated.
fn write_reads(dir: &std::path::Path, task: &str, results: &[Episode]) {
    let mut out = String::new();
    for (i, e) in results.iter().enumerate() {
        let line = serde_json::json!({
            "task": task,
            "episode": i + 1,
            "reward": e.reward,
            "solved": e.reward.is_some_and(|r| r > 0.0),
            "actions": e.actions,
            "states": e.reads,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    let _ = std::fs::write(dir.join(format!("{task}.reads.jsonl")), out);
}

/// One row of the table: a task page and how the suite treats it.
enum Entry {
    /// Played by the policy of the same name (its test too).
    Play,
    /// Out of reach, with its cause in a short sentence.
    Out(&'static str),
}

/// `"page" => play(policy)` makes the test `policy` that plays the page with `policies::policy`;
/// `"page" => out("cause")` names a task out of reach. Both become rows of `TABLE`.
macro_rules! table {
    (@rows [$($rows:tt)*]) => {
        const TABLE: &[(&str, Entry)] = &[$($rows)*];
    };
    (@rows [$($rows:tt)*] $page:literal => play($name:ident), $($rest:tt)*) => {
        #[test]
        fn $name() {
            play($page, policies::$name);
        }
        table!(@rows [$($rows)* ($page, Entry::Play),] $($rest)*);
    };
    (@rows [$($rows:tt)*] $page:literal => race($name:ident, $why:literal), $($rest:tt)*) => {
        /// A task that races the page's clock: one episode of the run may lose the race.
        #[test]
        fn $name() {
            let _why: &str = $why;
            play_allowing($page, policies::$name, 1);
        }
        table!(@rows [$($rows)* ($page, Entry::Play),] $($rest)*);
    };
    (@rows [$($rows:tt)*] $page:literal => out($cause:literal), $($rest:tt)*) => {
        table!(@rows [$($rows)* ($page, Entry::Out($cause)),] $($rest)*);
    };
    ($($t:tt)*) => {
        table!(@rows [] $($t)*);
    };
}

/// The wheel's tasks (`miniwob/html/miniwob/*.html`) against the table: none left out, none
/// named that is not shipped, none named twice. Writes the out-of-reach rows for `./x miniwob`.
#[test]
fn table_names_every_shipped_task() {
    let dir = harness::wheel_html().join("miniwob");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run `./x miniwob`, which installs PyPI's miniwob==1.1.0)", dir.display()));
    let mut shipped: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".html").map(str::to_string))
        .collect();
    shipped.sort();
    let mut named: Vec<&str> = TABLE.iter().map(|(page, _)| *page).collect();
    named.sort_unstable();
    let twice: Vec<&str> = named.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    let missing: Vec<&str> = shipped.iter().map(String::as_str).filter(|t| !named.contains(t)).collect();
    let unknown: Vec<&str> = named.iter().copied().filter(|t| !shipped.iter().any(|s| s == t)).collect();
    assert!(
        twice.is_empty() && missing.is_empty() && unknown.is_empty(),
        "the table must name each of the {} shipped tasks once\nnot in the table: {missing:?}\nnot shipped: {unknown:?}\nnamed twice: {twice:?}",
        shipped.len()
    );
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/miniwob");
    let _ = std::fs::create_dir_all(&out);
    for (page, entry) in TABLE {
        if let Entry::Out(cause) = entry {
            let _ = std::fs::write(out.join(format!("{page}.out")), format!("{page}\t{cause}\n"));
        }
    }
}

// Every task the wheel ships, in alphabetical order.
table! {
    "ascending-numbers" => out("after the first click the numbers turn into blank squares; which held which number is only where it was on screen, and the state gives no positions"),
    "bisect-angle" => out("the answer is a point in an SVG drawing (the angle's two lines)"),
    "book-flight" => play(book_flight),
    "book-flight-nodelay" => play(book_flight_nodelay),
    "button-delay" => play(button_delay),
    "buy-ticket" => play(buy_ticket),
    "chase-circle" => out("keeping the pointer on a moving circle needs pointer moves over time, and the circle is only a drawing"),
    "choose-date" => play(choose_date),
    "choose-date-easy" => play(choose_date_easy),
    "choose-date-medium" => play(choose_date_medium),
    "choose-date-nodelay" => play(choose_date_nodelay),
    "choose-list" => play(choose_list),
    "circle-center" => out("the answer is a point in an SVG drawing (the circle's centre)"),
    "click-button" => play(click_button),
    "click-button-sequence" => play(click_button_sequence),
    "click-checkboxes" => play(click_checkboxes),
    "click-checkboxes-large" => play(click_checkboxes_large),
    "click-checkboxes-soft" => play(click_checkboxes_soft),
    "click-checkboxes-transfer" => play(click_checkboxes_transfer),
    "click-collapsible" => play(click_collapsible),
    "click-collapsible-2" => play(click_collapsible_2),
    "click-collapsible-2-nodelay" => play(click_collapsible_2_nodelay),
    "click-collapsible-nodelay" => play(click_collapsible_nodelay),
    "click-color" => out("the boxes differ only by colour (CSS backgrounds); nothing names them"),
    "click-dialog" => play(click_dialog),
    "click-dialog-2" => play(click_dialog_2),
    "click-link" => play(click_link),
    "click-menu" => play(click_menu),
    "click-menu-2" => out("half the instructions name the item by its icon (a jQuery UI sprite in the instruction), which no text of the state gives"),
    "click-option" => play(click_option),
    "click-pie" => out("once the pie is opened, a click on an item's label is answered ok but never reaches the item (wheelnav's handler; the episode does not end), and the collapsed items are listed by name though 1x1 px under the \"+\""),
    "click-pie-nodelay" => out("once the pie is opened, a click on an item's label is answered ok but never reaches the item (wheelnav's handler; the episode does not end)"),
    "click-scroll-list" => play(click_scroll_list),
    "click-shades" => out("the boxes differ only by shade (CSS backgrounds); nothing names them"),
    "click-shape" => out("most descriptions name a colour or a size (large, small), which only the drawing shows (element_index gives the SVG element, not its fill or size)"),
    "click-tab" => play(click_tab),
    "click-tab-2" => play(click_tab_2),
    "click-tab-2-easy" => play(click_tab_2_easy),
    "click-tab-2-hard" => play(click_tab_2_hard),
    "click-tab-2-medium" => play(click_tab_2_medium),
    "click-test" => play(click_test),
    "click-test-2" => play(click_test_2),
    "click-test-transfer" => play(click_test_transfer),
    "click-widget" => play(click_widget),
    "copy-paste" => play(copy_paste),
    "copy-paste-2" => play(copy_paste_2),
    "count-shape" => out("most questions count by colour or size (large, small), which only the drawing shows"),
    "count-sides" => out("the shape is drawn on a canvas"),
    "daily-calendar" => play(daily_calendar),
    "drag-box" => play(drag_box),
    "drag-circle" => play(drag_circle),
    "drag-cube" => out("which face is active is shown only by its colour (red digits); the faces are listed only while the pointer hovers one (cursor: pointer on :hover), so after the first drag nothing of the cube is listed to hold again"),
    "drag-items" => play(drag_items),
    "drag-items-grid" => play(drag_items_grid),
    "drag-shapes" => out("the black box to drop into is an SVG rect with no fill and no listener, not listed, so a drag has no target; where it is (an offset for dx/dy) is only in the drawing"),
    "drag-shapes-2" => out("the left and right boxes to drop into are SVG rects with no fill and no listener, not listed, so a drag has no target; where they are (an offset for dx/dy) is only in the drawing"),
    "drag-single-shape" => play(drag_single_shape),
    "drag-sort-numbers" => play(drag_sort_numbers),
    "draw-circle" => out("a drag moves the pointer in a straight line; a circle needs a curved path drawn in one press"),
    "draw-line" => play(draw_line),
    "email-inbox" => play(email_inbox),
    "email-inbox-delete" => play(email_inbox_delete),
    "email-inbox-forward" => play(email_inbox_forward),
    "email-inbox-forward-nl" => play(email_inbox_forward_nl),
    "email-inbox-forward-nl-turk" => play(email_inbox_forward_nl_turk),
    "email-inbox-important" => play(email_inbox_important),
    "email-inbox-nl-turk" => play(email_inbox_nl_turk),
    "email-inbox-noscroll" => play(email_inbox_noscroll),
    "email-inbox-reply" => play(email_inbox_reply),
    "email-inbox-star-reply" => play(email_inbox_star_reply),
    "enter-date" => play(enter_date),
    "enter-password" => play(enter_password),
    "enter-text" => play(enter_text),
    "enter-text-2" => play(enter_text_2),
    "enter-text-dynamic" => play(enter_text_dynamic),
    "enter-time" => play(enter_time),
    "find-greatest" => play(find_greatest),
    "find-midpoint" => out("the answer is a point in an SVG drawing (between the two points)"),
    "find-word" => play(find_word),
    "focus-text" => play(focus_text),
    "focus-text-2" => play(focus_text_2),
    "form-sequence" => play(form_sequence),
    "form-sequence-2" => play(form_sequence_2),
    "form-sequence-3" => play(form_sequence_3),
    "generate-number" => play(generate_number),
    "grid-coordinate" => out("the 25 grid points are unnamed; which is (x, y) is only their place in the drawing, and the state gives no positions"),
    "guess-number" => play(guess_number),
    "highlight-text" => out("the paragraph is plain text, not an element: a drag needs an element to press on, Shift+arrow keys need a caret (static text has none), and Control+A selects the whole page"),
    "highlight-text-2" => out("the paragraphs are plain text, not elements: a drag needs an element to press on, Shift+arrow keys need a caret (static text has none), and Control+A selects the whole page"),
    "hot-cold" => out("the hot spot is found by moving the pointer to chosen points of an area; no action moves the pointer to a point"),
    "hover-shape" => out("no episode can succeed: the page's hover score is commented out (core.continuousReward), so every episode ends by timeout at -1"),
    "identify-shape" => play(identify_shape),
    "login-user" => play(login_user),
    "login-user-popup" => play(login_user_popup),
    "moving-items" => out("the moving circles are not listed (the click handler is on the whole SVG), and a positive score needs six hits on them"),
    "multi-layouts" => play(multi_layouts),
    "multi-orderings" => play(multi_orderings),
    "navigate-tree" => play(navigate_tree),
    "number-checkboxes" => out("the example digit is an image with no alt text; which of the 28 boxes to tick is only in its pixels"),
    "odd-or-even" => play(odd_or_even),
    "order-food" => play(order_food),
    "phone-book" => play(phone_book),
    "read-table" => play(read_table),
    "read-table-2" => play(read_table_2),
    "resize-textarea" => play(resize_textarea),
    "right-angle" => out("the answer is a point in an SVG drawing"),
    "scroll-text" => play(scroll_text),
    "scroll-text-2" => play(scroll_text_2),
    "search-engine" => play(search_engine),
    "sign-agreement" => play(sign_agreement),
    "simon-says" => out("the sequence is shown by the buttons flashing colour; no text of the state shows it"),
    "simple-algebra" => play(simple_algebra),
    "simple-arithmetic" => play(simple_arithmetic),
    "social-media" => play(social_media),
    "social-media-all" => play(social_media_all),
    "social-media-some" => play(social_media_some),
    "stock-market" => race(stock_market, "the price moves every 100 ms, also while the click is on its way: a buy below the limit can land just after the price rose past it"),
    "terminal" => play(terminal),
    "text-editor" => out("a quarter of the instructions ask for a colour, and the 36 colour swatches are unnamed (all read hint:\"ql-picker\"; a person picks by colour); the styles alone are within reach (Home, arrows and Shift+arrows select the word, then the ql-bold / ql-italic / ql-underline button)"),
    "text-transform" => play(text_transform),
    "tic-tac-toe" => play(tic_tac_toe),
    "unicode-test" => play(unicode_test),
    "use-autocomplete" => play(use_autocomplete),
    "use-autocomplete-nodelay" => play(use_autocomplete_nodelay),
    "use-colorwheel" => play(use_colorwheel),
    "use-colorwheel-2" => out("the colour to pick is shown as a swatch, not as text"),
    "use-slider" => play(use_slider),
    "use-slider-2" => play(use_slider_2),
    "use-spinner" => play(use_spinner),
    "visual-addition" => out("the blocks to count are drawings"),
}
