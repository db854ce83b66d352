//! Scripted policies, one per task. Each reads the instruction from `page_content` and chooses
//! its targets from the current state by role and name, as a person reading the page would.

use crate::harness::{Env, HarnessError, Result, State};

pub type Policy = fn(&mut Env) -> Result<()>;

/// The instruction: page_content's first line (the yellow `#query` box is the first thing on
/// every task page).
pub fn query(s: &State) -> String {
    s.page_content.lines().next().unwrap_or_default().trim().to_string()
}

/// The text between the first `open` and the next `close` after it.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let at = text.find(open)? + open.len();
    let end = text[at..].find(close)?;
    Some(&text[at..at + end])
}

fn instruction(task: &'static str, s: &State) -> HarnessError {
    HarnessError::Instruction { task, query: query(s) }
}

/// Click on the "X" button.
pub fn click_button(env: &mut Env) -> Result<()> {
    let q = query(&env.state);
    let name = between(&q, "Click on the \"", "\" button").ok_or_else(|| instruction("click-button", &env.state))?;
    let i = env.state.get("button", name)?.index;
    env.click(i)?;
    Ok(())
}
