//! What the model is told each turn.

use serde_json::Value;
use sightline_api::StateObject;

pub const SYSTEM: &str = "You operate a web browser to complete a task. Each turn you get the current page: its URL, \
a text rendition (page_content) where interactive elements appear as [N]role \"name\", and an element index listing \
them. Reply with exactly one action by calling one of the tools. Rules: target elements only by their number N from \
the CURRENT element index (numbers change every turn); select_option takes the <select>'s number and one of its \
option numbers; input_text appends unless overwrite is true, and \\n in text presses Enter; scroll to see more of \
the page; never repeat an action that did not change the page; when an action fails you get its error: adjust. Call \
finish_task with a short summary when the task is done, or fail_task with the reason when it cannot be done.";

/// The protocol's actions as tools: (name, description, JSON Schema of the
/// arguments), one per row of the action table; those that need a person
/// (`request_human`, `wait_for_human`) only when `person` is true (the run has
/// a live view a person can open: `sightline run --human`).
pub fn action_tools(person: bool) -> Vec<(&'static str, &'static str, Value)> {
    sightline_api::ACTION_TABLE
        .iter()
        .filter(|a| person || !a.needs_person())
        .map(|a| (a.name, a.summary, a.schema()))
        .collect()
}

/// The element index, one compact line per element.
pub fn render_index(state: &StateObject) -> String {
    let mut out = String::new();
    for (i, d) in state.element_index.0.iter().enumerate() {
        let mut line = format!("[{}] <{}>", i + 1, d.tag);
        if let Some(r) = &d.role {
            line.push_str(&format!(" role={r}"));
        }
        if let Some(l) = &d.aria_label {
            line.push_str(&format!(" label={l:?}"));
        }
        if let Some(t) = &d.text_content {
            line.push_str(&format!(" {:?}", sightline_page::cut(t, 80)));
        }
        let a = &d.attributes;
        for (k, v) in [("name", &a.name), ("type", &a.type_), ("placeholder", &a.placeholder), ("href", &a.href)] {
            if let Some(v) = v {
                line.push_str(&format!(" {k}={:?}", sightline_page::cut(v, 80)));
            }
        }
        if let Some(v) = a.value.as_ref().filter(|v| !v.is_empty()) {
            if a.type_.as_deref() == Some("password") {
                line.push_str(" value=\"•••\"");
            } else {
                line.push_str(&format!(" value={:?}", sightline_page::cut(v, 80)));
            }
        }
        if let Some(c) = a.checked {
            line.push_str(if c { " checked" } else { " unchecked" });
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The user message for one turn.
pub fn turn_message(
    task: &str,
    step: usize,
    max_steps: usize,
    state: &StateObject,
    recent: &[String],
    vision: bool,
) -> String {
    let mut m = format!("Task: {task}\n\nStep {step} of at most {max_steps}.\nURL: {}\n", state.url);
    if !recent.is_empty() {
        m.push_str("\nYour recent actions:\n");
        for r in recent {
            m.push_str(&format!("- {r}\n"));
        }
    }
    if let Some(e) = &state.error {
        m.push_str(&format!(
            "\nYour last action FAILED with {}: {}\nThe page did not change.\n",
            serde_json::to_value(e.code).unwrap_or_default().as_str().unwrap_or(""),
            e.message
        ));
    }
    if let Some(h) = &state.human {
        m.push_str(&format!(
            "\nThe hand-off to a person answered (note, pages visited, fields typed into, input count): {h}\n"
        ));
    }
    m.push_str(&format!("\npage_content:\n{}\n\nelement_index:\n{}", state.page_content, render_index(state)));
    if vision {
        m.push_str("\nThe attached screenshot shows the viewport with a numbered box over each indexed element (same numbers).\n");
    }
    m.push_str("\nReply with exactly one action.");
    m
}

/// Rough token count for the trace (about four characters a token).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}
