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
//! Episodes are seeded: `?seed=S` on the task URL (see `harness::SEED_LINE`), S = 1 for every
//! task, so a failure replays with the same problems.

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
    let n = episodes();
    let started = Instant::now();
    let url = harness::task_url(task, SEED).unwrap_or_else(|e| panic!("{e}"));
    let mut env = Env::open(&url).unwrap_or_else(|e| panic!("{task}: {e}"));
    let mut results = Vec::new();
    let mut retries = 0;
    for _ in 0..n {
        let before = env.actions;
        let r = episode(&mut env, policy);
        let actions = env.actions - before;
        match r {
            Ok(reward) => results.push(Episode { reward: Some(reward), actions, error: None }),
            Err(e) => {
                results.push(Episode { reward: None, actions, error: Some(e.to_string()) });
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
    let failures: Vec<String> = results
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.reward.is_some_and(|r| r > 0.0))
        .map(|(i, e)| format!("episode {}: reward {:?}: {}", i + 1, e.reward, e.error.as_deref().unwrap_or("")))
        .collect();
    assert!(failures.is_empty(), "{task}: {ok}/{n} episodes succeeded\n{}", failures.join("\n"));
}

macro_rules! tasks {
    ($($name:ident => $page:literal,)*) => {
        $(
            #[test]
            fn $name() {
                play($page, policies::$name);
            }
        )*
    };
}

tasks! {
    click_button => "click-button",
    unicode_test => "unicode-test",
    click_button_sequence => "click-button-sequence",
    click_test => "click-test",
    click_test_2 => "click-test-2",
    click_link => "click-link",
    click_checkboxes => "click-checkboxes",
    click_checkboxes_large => "click-checkboxes-large",
    click_checkboxes_transfer => "click-checkboxes-transfer",
    click_checkboxes_soft => "click-checkboxes-soft",
    click_option => "click-option",
    choose_list => "choose-list",
    click_widget => "click-widget",
    click_dialog => "click-dialog",
    click_dialog_2 => "click-dialog-2",
    click_tab => "click-tab",
    click_tab_2 => "click-tab-2",
    click_collapsible => "click-collapsible",
    click_collapsible_2 => "click-collapsible-2",
    enter_text => "enter-text",
    enter_text_dynamic => "enter-text-dynamic",
    enter_text_2 => "enter-text-2",
    enter_password => "enter-password",
    focus_text => "focus-text",
    focus_text_2 => "focus-text-2",
    login_user => "login-user",
    enter_date => "enter-date",
    read_table => "read-table",
    find_word => "find-word",
    simple_arithmetic => "simple-arithmetic",
    simple_algebra => "simple-algebra",
    copy_paste => "copy-paste",
    odd_or_even => "odd-or-even",
    guess_number => "guess-number",
    use_autocomplete => "use-autocomplete",
    navigate_tree => "navigate-tree",
    click_menu => "click-menu",
    form_sequence_2 => "form-sequence-2",
    form_sequence_3 => "form-sequence-3",
    multi_layouts => "multi-layouts",
    login_user_popup => "login-user-popup",
    search_engine => "search-engine",
    multi_orderings => "multi-orderings",
    enter_time => "enter-time",
    copy_paste_2 => "copy-paste-2",
    text_transform => "text-transform",
    generate_number => "generate-number",
    phone_book => "phone-book",
    sign_agreement => "sign-agreement",
    click_scroll_list => "click-scroll-list",
    choose_date => "choose-date",
    click_tab_2_easy => "click-tab-2-easy",
    click_tab_2_medium => "click-tab-2-medium",
    click_tab_2_hard => "click-tab-2-hard",
    click_collapsible_nodelay => "click-collapsible-nodelay",
    click_collapsible_2_nodelay => "click-collapsible-2-nodelay",
    use_autocomplete_nodelay => "use-autocomplete-nodelay",
    scroll_text => "scroll-text",
    scroll_text_2 => "scroll-text-2",
    choose_date_easy => "choose-date-easy",
    choose_date_medium => "choose-date-medium",
    choose_date_nodelay => "choose-date-nodelay",
}
