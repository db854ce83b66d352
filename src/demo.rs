//! `sightline demo`: the main job on a built-in site, no network and no model.
//!
//! It serves two pages from memory on 127.0.0.1, then plays an agent's part:
//! each step looks its target up in the *current* element index by its
//! descriptor (never by a remembered number), sends one action, and prints
//! what came back. Two deliberate mistakes show the typed errors.

use std::time::Instant;

use anyhow::{Context, Result};
use base64::Engine;
use serde_json::{json, Value};
use sightline_api::{Action, Env, EnvOptions, ErrorCode, StateObject};

use crate::cli::DemoOpts;
use crate::demo_server::DemoSite;
use crate::launch::{start_browser, tab_options};

/// Find an element in the current index: the first whose descriptor matches.
fn find(state: &StateObject, pred: impl Fn(&sightline_api::ElementDescriptor) -> bool) -> Option<u64> {
    state.element_index.0.iter().position(pred).map(|i| i as u64 + 1)
}

enum Step {
    Act(&'static str, Box<dyn Fn(&StateObject) -> Value>),
    Raw(&'static str, &'static str),
}

fn steps(refused_url: String) -> Vec<Step> {
    let by_name = |name: &'static str| move |s: &StateObject| find(s, |d| d.attributes.name.as_deref() == Some(name));
    let by_text =
        |t: &'static str| move |s: &StateObject| find(s, |d| d.text_content.as_deref().is_some_and(|x| x.contains(t)));
    vec![
        Step::Act(
            "type the email",
            Box::new(
                move |s| json!({"action": "input_text", "element_index": by_name("email")(s), "text": "ada@example.com", "overwrite": true}),
            ),
        ),
        Step::Act(
            "type the password",
            Box::new(
                move |s| json!({"action": "input_text", "element_index": by_name("password")(s), "text": "correct horse"}),
            ),
        ),
        Step::Act(
            "choose a country",
            Box::new(move |s| {
                let sel = by_name("country")(s);
                let opt = find(s, |d| d.tag == "option" && d.text_content.as_deref() == Some("Japan"));
                json!({"action": "select_option", "element_index": sel, "option_index": opt})
            }),
        ),
        Step::Act(
            "tick 'Remember me'",
            Box::new(move |s| json!({"action": "click_element", "element_index": by_name("remember")(s)})),
        ),
        Step::Act(
            "click the div that only has a JS handler",
            Box::new(move |s| json!({"action": "click_element", "element_index": by_text("Show tips")(s)})),
        ),
        Step::Raw("a malformed action (mistake on purpose)", r#"{"action":"click_element","element_index":"7"}"#),
        Step::Raw(
            "an index that does not exist (mistake on purpose)",
            r#"{"action":"click_element","element_index":999}"#,
        ),
        Step::Act(
            "submit the form",
            Box::new(
                move |s| json!({"action": "click_element", "element_index": find(s, |d| d.tag == "button" && d.text_content.as_deref() == Some("Sign in"))}),
            ),
        ),
        Step::Act(
            "accept the cookie dialog that covers the page",
            Box::new(move |s| json!({"action": "click_element", "element_index": by_text("Accept")(s)})),
        ),
        Step::Act("scroll down one screen", Box::new(|_| json!({"action": "scroll", "direction": "down"}))),
        Step::Act(
            "navigate to a port nothing listens on",
            Box::new(move |_| json!({"action": "navigate", "url": refused_url.clone()})),
        ),
        Step::Act(
            "finish",
            Box::new(|_| json!({"action": "finish_task", "message": "Signed in and reached the dashboard."})),
        ),
    ]
}

fn refused_port() -> u16 {
    // Bind and release a port so nothing listens there.
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(9)
}

pub async fn run(a: &DemoOpts) -> Result<u8> {
    let site = DemoSite::start().await?;
    let shots = a.out.clone().unwrap_or_else(|| std::env::temp_dir().join("sightline-demo"));
    std::fs::create_dir_all(&shots).with_context(|| format!("creating {}", shots.display()))?;
    let (browser, _egress) = start_browser(&a.browser).await?;
    println!("sightline demo — {} — site at {}", browser.version().await?, site.url("/"));
    let tab = browser.new_tab(tab_options(&a.browser)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: true }).await?;
    let url = site.url("/");
    let t = Instant::now();
    let first = env.step_action(Action::Navigate { url: url.clone() }, json!({"action": "navigate", "url": url})).await;
    println!("\n{:>2}  {:<48} {:<26} {:>4} {:>10} {:>8}", "#", "step", "result", "elts", "hash", "ms");
    print_turn(0, "open the sign-in page", &first.state, t.elapsed().as_millis(), &shots)?;
    println!(
        "\n--- page_content of the first state ---\n{}\n---------------------------------------",
        first.state.page_content
    );
    let mut failures = 0;
    for (i, step) in steps(format!("http://127.0.0.1:{}/", refused_port())).into_iter().enumerate() {
        let n = i + 1;
        let (label, line) = match &step {
            Step::Act(label, f) => (*label, f(env.state()).to_string()),
            Step::Raw(label, line) => (*label, line.to_string()),
        };
        let t = Instant::now();
        let turn = env.step(&line).await;
        print_turn(n, label, &turn.state, t.elapsed().as_millis(), &shots)?;
        println!("    action {line}");
        if let Some(e) = &turn.state.error {
            println!("    error  {}", e.message);
        }
        let expected = match (&step, label) {
            (Step::Raw(..), l) if l.contains("malformed") => Some(ErrorCode::ActionValidationFailed),
            (Step::Raw(..), _) => Some(ErrorCode::InvalidElementIndex),
            (_, l) if l.starts_with("navigate to a port") => Some(ErrorCode::NavigationFailed),
            _ => None,
        };
        if turn.state.error.as_ref().map(|e| e.code) != expected {
            failures += 1;
        }
        if turn.ended || turn.fatal {
            break;
        }
    }
    println!("\nscreenshots: {}", shots.display());
    env.close().await;
    browser.shutdown().await;
    if failures > 0 {
        eprintln!("sightline demo: {failures} step(s) did not go as scripted");
        return Ok(1);
    }
    println!("demo finished: every step went as scripted");
    Ok(0)
}

fn print_turn(n: usize, label: &str, s: &StateObject, ms: u128, shots: &std::path::Path) -> Result<()> {
    let result = match (&s.error, &s.task) {
        (Some(e), _) => serde_json::to_value(e.code)?.as_str().unwrap_or_default().to_string(),
        (None, Some(t)) => format!("task {:?}", t.status).to_lowercase(),
        (None, None) => "ok".into(),
    };
    println!("{n:>2}  {label:<48} {result:<26} {:>4} {:>10} {ms:>8}", s.element_index.0.len(), &s.state_hash[..10]);
    if !s.screenshot.is_empty() && s.error.is_none() {
        let png = base64::engine::general_purpose::STANDARD.decode(&s.screenshot)?;
        std::fs::write(shots.join(format!("step-{n:02}.png")), png)?;
    }
    Ok(())
}
