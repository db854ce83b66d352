//! `sightline skills [NAME]`: what an agent needs to use Sightline well, as
//! skills (a SKILL.md each: front matter, then Markdown).
//!
//! The parts that could drift are generated from the tables this binary runs
//! on: the tools from `sightline_api::TOOLS` (a row added there, such as a
//! code tool, appears here with its description and fields), the MCP handle
//! tools from `sightline_server::HANDLE_TOOLS`, the actions from
//! `ACTION_TABLE`, the error codes from `ToolCode::ALL`, and the State Object
//! from a value of its own type (a field added to it does not compile here
//! until it is shown). The rules that have no table (capability lifetimes,
//! proofs, the element-index errors) are exhaustive matches on their enums.

use std::fmt::Write;

use anyhow::{bail, Result};
use serde_json::Value;
use sightline_api::{
    Attributes, ElementDescriptor, ElementIndexMap, ErrorCode, ErrorObject, Proof, Rule, Scope, StateObject, TaskEnd,
    TaskStatus, ToolCode, ToolName, ACTION_TABLE, TOOLS,
};

use crate::cli::SkillsOpts;

/// One skill: its name, what it is for (the front matter's description), and its body.
pub struct Skill {
    pub name: &'static str,
    pub about: &'static str,
    body: fn() -> String,
}

/// Every skill, in the order `sightline skills` lists them.
pub const SKILLS: &[Skill] = &[
    Skill {
        name: "core",
        about: "Drive a real browser with Sightline: sessions, the tools, reading pages and acting on them, and its error codes.",
        body: core,
    },
    Skill {
        name: "element-index",
        about: "Sightline's element-index protocol: the State Object, the actions (one per turn) and their errors.",
        body: element_index,
    },
    Skill {
        name: "semantic",
        about: "Sightline's semantic_v2 snapshots: refs, acting on them, their lifetimes, and when to use them instead of the element index.",
        body: semantic,
    },
    Skill {
        name: "mcp",
        about: "Sightline over MCP: stdio and Streamable HTTP, protocol revisions 2025-11-25 and 2026-07-28, session handles, and host set-up.",
        body: mcp,
    },
];

pub fn run(o: &SkillsOpts) -> Result<u8> {
    match &o.name {
        None => {
            let width = SKILLS.iter().map(|s| s.name.len()).max().unwrap_or(0);
            for s in SKILLS {
                println!("{:width$}  {}", s.name, s.about);
            }
            println!("\nsightline skills NAME prints one (a SKILL.md: front matter, then Markdown).");
        }
        Some(name) => match SKILLS.iter().find(|s| s.name == name) {
            Some(s) => print!("{}", render(s)),
            None => {
                let names: Vec<&str> = SKILLS.iter().map(|s| s.name).collect();
                bail!("no skill {name:?}; the skills: {}", names.join(", "));
            }
        },
    }
    Ok(0)
}

/// A skill as a SKILL.md.
pub fn render(s: &Skill) -> String {
    format!("---\nname: sightline-{}\ndescription: {}\n---\n\n{}", s.name, s.about, (s.body)())
}

fn core() -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Sightline: a real browser for agents

Sightline drives headless Chromium for you. Two vocabularies reach the same browser:

- **The element index** (`get_state`, `act`; skill `element-index`): each turn you get a State Object
  (the URL, the page as text with every visible interactive element numbered `[N]`, a screenshot) and
  answer with one action on a number. Small, complete, one page at a time.
- **Refs** (`get_browser_state` with `snapshot_format: \"semantic_v2\"`, then `browser_click` and the other
  `browser_*` tools; skill `semantic`): an accessibility outline with typed refs (`p3:7`), scoped reads,
  continuations and change reads for big pages.

## A session

A session is one browser context with its tabs. How you get one depends on the front end (skill `mcp`):
`session_open` returns a handle (`{{session}}`) over MCP; `bind_browser {{session: NAME}}` names one over
`sightline rpc` and stdio MCP; over HTTP `POST /v1/sessions`. Every tool of a session takes `session`, and
tab tools take `target_id` and `tab_id` (MCP defaults them to the session's first tab). Ids are opaque,
never reused, and valid only in the session that issued them.

## Which view

- Use the **element index** for ordinary pages and forms, when a screenshot helps, and when one action
  per turn is the natural loop: the whole viewport is there each turn, and an error comes back inside the
  next State Object with the page unchanged.
- Use **semantic_v2 refs** for large or busy pages (its budget, `query` and continuation keep answers
  small), to find something off screen (`query` matches role, name or value anywhere), to read only what
  changed since the last snapshot (`changes: true`), and when several tabs or frames are involved.
- Both can be mixed in a session: they read the same capture.

## Working well

- Read before acting; act on what the latest state or snapshot shows, never on a remembered number or ref.
- After an action that navigates, take a new state or snapshot: refs of the old page are expired
  (`capability_expired` with the rule that retired them).
- Errors are typed: match `error.code` (below), read `message` (it names the field, the covering element
  or the expired rule) and `detail`.
- End sessions you opened (`session_close`, `end_session`): each holds a browser context."
    );
    if let Some(run) = TOOLS.iter().find(|t| t.name == "run") {
        let _ = writeln!(
            o,
            "\n## Code: `run`\n\nWhen single steps would be many, one `run` call does them: {}",
            run.description
        );
    }
    let _ = writeln!(o, "\n## The tools\n");
    let _ = writeln!(
        o,
        "Every tool of this build, from its table (`read-only` never changes the page; `destructive` closes or leaves something):\n"
    );
    for t in TOOLS {
        let _ = writeln!(
            o,
            "{}",
            tool_entry(t.name, t.description, t.read_only, t.destructive, &(t.schema)(), Some(t.scope))
        );
    }
    let _ = writeln!(o, "## Error codes\n");
    let _ = writeln!(o, "A failed tool call carries one of these in `error.code` (MCP: `structuredContent.error.code`; JSON-RPC: `error.data.code`):\n");
    for &c in ToolCode::ALL {
        let _ = writeln!(o, "- `{}`: {}", c.as_str(), tool_code_hint(c));
    }
    o
}

/// One tool as a list item: name, annotations, description, then its fields.
fn tool_entry(
    name: &str,
    description: &str,
    read_only: bool,
    destructive: bool,
    schema: &Value,
    scope: Option<Scope>,
) -> String {
    let mut o = String::new();
    let mut notes = Vec::new();
    if read_only {
        notes.push("read-only");
    }
    if destructive {
        notes.push("destructive");
    }
    let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join(", ")) };
    let _ = writeln!(o, "### `{name}`{notes}\n\n{description}\n");
    if let Some(scope) = scope {
        let _ = writeln!(o, "Addressed by {}.\n", scope_words(scope));
    }
    let required: Vec<&str> = schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if let Some(props) = schema["properties"].as_object() {
        for (field, p) in props {
            let about = p["description"].as_str().map(|d| d.replace('\n', " "));
            let kind = p["type"].as_str().map(str::to_string).or_else(|| {
                p["type"].as_array().map(|t| t.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "))
            });
            let need = if required.contains(&field.as_str()) { "required" } else { "optional" };
            let what = match (kind, about) {
                (Some(k), Some(a)) => format!("{k}, {need}: {a}"),
                (Some(k), None) => format!("{k}, {need}"),
                (None, Some(a)) => format!("{need}: {a}"),
                (None, None) => need.to_string(),
            };
            let _ = writeln!(o, "- `{field}` ({what})");
        }
    }
    o
}

fn scope_words(s: Scope) -> &'static str {
    match s {
        Scope::Session => "`session`",
        Scope::Target => "`session` and `target_id`",
        Scope::Tab => "`session`, `target_id` and `tab_id`",
    }
}

/// What each tool error code means: its row of the `tool_codes!` table.
fn tool_code_hint(c: ToolCode) -> &'static str {
    c.meaning()
}

/// A State Object of this build's type, every field shown.
fn sample_state() -> StateObject {
    let input = ElementDescriptor {
        tag: "input".into(),
        role: Some("textbox".into()),
        aria_label: None,
        text_content: None,
        attributes: Attributes {
            name: Some("email".into()),
            value: Some("".into()),
            placeholder: Some("you@example.com".into()),
            type_: Some("email".into()),
            href: None,
            checked: None,
        },
    };
    let button = ElementDescriptor {
        tag: "button".into(),
        role: Some("button".into()),
        aria_label: None,
        text_content: Some("Sign In".into()),
        attributes: Attributes {
            name: None,
            value: None,
            placeholder: None,
            type_: Some("submit".into()),
            href: None,
            checked: None,
        },
    };
    StateObject {
        url: "http://127.0.0.1:8000/signin.html".into(),
        page_content: "# Sign in\n[1]textbox \"Email Address\" placeholder=\"you@example.com\"\n[2]button \"Sign In\""
            .into(),
        element_index: ElementIndexMap(vec![input, button]),
        screenshot: "iVBORw0KGgo… (base64 PNG; \"\" when screenshots are off)".into(),
        state_hash: "3f1c…(hex SHA-256)".into(),
        error: Some(ErrorObject {
            code: ErrorCode::InvalidElementIndex,
            message: "element_index 9 is not in the current element_index (1..2)".into(),
            failed_action: serde_json::json!({ "action": "click_element", "element_index": 9 }),
        }),
        task: Some(TaskEnd { status: TaskStatus::Finished, message: "Signed in".into() }),
        human: Some(serde_json::json!({ "live_url": "http://127.0.0.1:8931/live/s-…?ticket=…", "expires_in_s": 1800 })),
    }
}

/// The State Object's keys in the protocol's order (a test holds them to the type's).
const STATE_KEYS: [&str; 8] =
    ["url", "page_content", "element_index", "screenshot", "state_hash", "error", "task", "human"];

/// What each field of the State Object holds, by its serialized key.
fn state_field(key: &str) -> &'static str {
    match key {
        "url" => "the current page's URL",
        "page_content" => "what the viewport shows, as text read in rendering order: headings `#`, list items `- `, table rows with ` | `, and each indexed element in place as `[N]role \"name\" states` (`[4]textbox \"Email\" value=\"ada@example.com\" focused`, `[14]checkbox \"Remember me\" checked`); a last line `[scroll: 0px above, 1372px below]` says what scrolling reveals, and `[tabs: 1 \"Shop\" · 2 \"Checkout\" (current); …]` lists open tabs",
        "element_index" => "`\"1\"..\"N\"`: each visible interactive element's descriptor (`tag`, `role`, `aria-label`, `text_content`, `attributes` {name, value, placeholder, type, href, checked}); numbers are fresh each state and refer to the latest state only",
        "screenshot" => "base64 PNG of the viewport (`\"\"` when screenshots are off)",
        "state_hash" => "hex SHA-256 of the URL, scroll position, elements and page_content: it changes exactly when the page you see changes",
        "error" => "only after a failed action: `{code, message, failed_action}`; the rest of the object is the previous state, unchanged",
        "task" => "only after finish_task or fail_task: `{status: finished|failed, message}`",
        "human" => "only after request_human (`{live_url, expires_in_s}`: the link to give a person) or wait_for_human (`{note, visited, inputs, held_s}`), on `sightline serve`",
        _ => "see the example above",
    }
}

/// What each element-index error means (an exhaustive match: a new code does not compile until it is explained).
fn error_code_text(c: ErrorCode) -> &'static str {
    match c {
        ErrorCode::ActionValidationFailed => "the action is not exactly one of the shapes below; the message names the field",
        ErrorCode::InvalidElementIndex => "`element_index` (or `option_index`) is not a key of the current element_index",
        ErrorCode::ElementNotInteractive => "disabled, read-only, removed since the state, no longer visible, covered (the message names what covers it), or the wrong kind",
        ErrorCode::NavigationFailed => "the URL could not be loaded (or no history entry); the previous page is still there",
        ErrorCode::InternalBrowserError => "the browser failed; if it crashed, the session is over",
        ErrorCode::HumanUnavailable => "no live view here (needs `sightline serve` or `env --live`), or nothing to wait for",
        ErrorCode::HumanTimeout => "no hand-back yet; the session stays handed over: wait again",
        ErrorCode::HandedOver => "a person has the tab (after request_human): call wait_for_human, nothing else",
    }
}

const ERROR_CODES: [ErrorCode; 8] = [
    ErrorCode::ActionValidationFailed,
    ErrorCode::InvalidElementIndex,
    ErrorCode::ElementNotInteractive,
    ErrorCode::NavigationFailed,
    ErrorCode::InternalBrowserError,
    ErrorCode::HumanUnavailable,
    ErrorCode::HumanTimeout,
    ErrorCode::HandedOver,
];

fn element_index() -> String {
    let mut o = String::new();
    let state = sample_state();
    let _ = writeln!(
        o,
        "# The element-index protocol

Each turn: read a State Object, send one action, get the next State Object. Over MCP and `rpc`:
`get_state {{session, …}}` reads it, `act {{session, …, action: {{…}}}}` sends an action and returns the next
one (its screenshot travels as image content). `sightline env URL` speaks it as JSON lines on stdin/stdout.

## The State Object

Every key below is always present except `error` and `task`. An example with both:

```json
{}
```
",
        serde_json::to_string_pretty(&state).expect("a State Object serializes")
    );
    for key in STATE_KEYS {
        let _ = writeln!(o, "- `{key}`: {}", state_field(key));
    }
    let _ = writeln!(
        o,
        "\nAn element is listed when it is interactive (links, buttons, fields, selects and their options,
ARIA widgets, labels of controls, contenteditable, or clickable by evidence) and visible in the viewport
(not covered, not clipped). Disabled controls are listed and marked `disabled`. An element Chromium leaves
unnamed may carry `hint:\"…\"` (its icon or class): a hint, never a name.

## Actions

One JSON object per turn, exactly one of these shapes (anything else is `ACTION_VALIDATION_FAILED`).
After each action Sightline waits for the page to settle before answering.
"
    );
    for a in ACTION_TABLE {
        let ext = if a.extension { " (Sightline's extension)" } else { "" };
        let _ = writeln!(o, "### `{}`{ext}\n\n{}\n\n`{}`\n", a.name, a.summary, a.example);
        for f in a.fields {
            let need = if f.required { "required" } else { "optional" };
            let _ = writeln!(o, "- `{}` ({need}): {}", f.name, f.about);
        }
        if !a.fields.is_empty() {
            let _ = writeln!(o);
        }
    }
    let _ = writeln!(
        o,
        "## Errors

On an error the previous State Object comes back unchanged (same `state_hash`) with `error` added, and
the browser is left as it was: read the message, then send a corrected action.
"
    );
    for c in ERROR_CODES {
        let _ = writeln!(o, "- `{}`: {}", c.as_str(), error_code_text(c));
    }
    let _ = writeln!(
        o,
        "\n## Working well

- Numbers are valid for the latest state only: after any action, use the new state's numbers.
- A `<select>`: `select_option` with the select's number and one of *its* option numbers (they follow it).
- Not on screen? `scroll` (or `press_key` PageDown), then look again; `[scroll: …]` says how much is left.
- A popup or new tab becomes the current page; `switch_tab` and `close_tab` take the `[tabs: …]` numbers.
- A JavaScript dialog is the next state: answer it by clicking its buttons.
- End with `finish_task {{message}}` or `fail_task {{message}}`."
    );
    o
}

/// What each capability-lifetime rule means (exhaustive: a new rule does not compile until it is explained).
fn rule_text(r: Rule) -> &'static str {
    match r {
        Rule::NewerSnapshot => {
            "a newer snapshot of the tab was taken: only the latest snapshot's refs and continuations hold"
        }
        Rule::Navigation => "the tab navigated: every snapshot of it is gone",
        Rule::TargetGeneration => {
            "the browser was replaced (bind_browser reconnect, or a lost browser): use the new target_id"
        }
        Rule::SessionEnded => "the session ended and its ids with it",
        Rule::ContinuationUsed => "continuations are single-use",
        Rule::ContinuationForeign => "the continuation belongs to another session, target, tab or snapshot",
        Rule::TabClosed => "the tab was closed",
    }
}

const RULES: [Rule; 7] = [
    Rule::NewerSnapshot,
    Rule::Navigation,
    Rule::TargetGeneration,
    Rule::SessionEnded,
    Rule::ContinuationUsed,
    Rule::ContinuationForeign,
    Rule::TabClosed,
];

fn proof_text(p: Proof) -> &'static str {
    match p {
        Proof::Binding => "the session and its browser generation are still the ref's",
        Proof::TabTarget => "the tab's page target is alive",
        Proof::FrameLoader => "the ref's frame has not loaded another document",
        Proof::NodeLiveness => "the element is still in its document",
    }
}

const PROOFS: [Proof; 4] = [Proof::Binding, Proof::TabTarget, Proof::FrameLoader, Proof::NodeLiveness];

fn semantic() -> String {
    let mut o = String::new();
    let state = ToolName::GetBrowserState.tool();
    let _ = writeln!(
        o,
        "# semantic_v2 snapshots and refs

`get_browser_state` with `snapshot_format: \"semantic_v2\"` returns an outline of the page's accessibility
tree and refs to act on:

```
- heading \"Sign in\" [level=1] [ref=p3:1]
- form [ref=p3:2]
  - textbox \"Email Address\" [ref=p3:3]
  - button \"Sign In\" [ref=p3:7]
```

`p3` is the snapshot, `p3:7` a node of it. `refs` lists the action refs `{{ref, role, name, value, states,
actions, frame, visibility}}`: `actions` is from `click`, `type`, `select`, `check`, `scroll`; `content_refs`
are readable nodes (headings, paragraphs, images, landmarks) to use as `scope_ref`. `visibility` is one of
`in_viewport`, `near_viewport`, `offscreen`, `css_hidden`, `no_layout`, `page_occluded`, `unknown`.

## Reading

{}

- The default scope is the viewport and its near margin; `omitted` counts what is left out and why.
- `query` (role, name or value) finds nodes anywhere, off screen too; `scope_ref` reads one subtree.
- `node_budget` (default 300) caps the answer; `continuation` fetches the next ranked segment (single-use).
- `changes: true` returns only what changed since the tab's latest snapshot; kept nodes keep their ref
  number (`p3:12` is `p4:12` next time), so a small answer is enough after an action.

## Acting on refs

These tools take a `ref` (from the latest snapshot of the tab):
",
        state.description
    );
    for t in TOOLS {
        let schema = (t.schema)();
        if schema["properties"].get("ref").is_some() {
            let _ = writeln!(o, "- `{}`: {}", t.name, t.description);
        }
    }
    let _ = writeln!(
        o,
        "\nBefore acting, the ref must offer the action (else `browser_action_unavailable`, with what it offers),
then four proofs run; one that fails is `proof_failed` with `detail.proof` and nothing is delivered:
"
    );
    for p in PROOFS {
        let _ = writeln!(o, "- `{}`: {}", p.as_str(), proof_text(p));
    }
    let _ = writeln!(
        o,
        "\nAn offscreen ref is scrolled into view before the click. Each acting tool answers `navigated`:
after `true`, take a new snapshot.

## Lifetimes

Refs, snapshots and continuations are valid only in the session (and tab) that issued them. Using one that
was retired is `capability_expired` with `detail.rule`:
"
    );
    for r in RULES {
        let _ = writeln!(o, "- `{}`: {}", r.as_str(), rule_text(r));
    }
    let _ = writeln!(
        o,
        "\n## semantic_v2 or the element index

- semantic_v2: large pages (budget, query, continuation), things off screen (query), follow-ups
  (`changes: true`), frames and several tabs, precise targeting by role and name, typed refusals.
- Element index (`get_state`/`act`, skill `element-index`): small pages and forms, a screenshot with each
  turn, one action per turn with the whole viewport as text; numbers instead of refs.
- `dom_refs_v1` (the default `snapshot_format`) lists the element index's elements as refs with simple
  behaviour: prefer semantic_v2."
    );
    o
}

fn mcp() -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Sightline over MCP

Two transports, one set of tools:

- **stdio**: `sightline mcp [OPTIONS]` (the host starts it; `sightline mcp --config HOST` prints the entry).
- **Streamable HTTP**: `sightline serve` answers at `/mcp`; with `--token-file`, every request carries
  `Authorization: Bearer TOKEN` and each token (principal) sees only the sessions it opened.

## Protocol revisions

Sightline answers whichever revision the client offers:

- **2026-07-28** (stateless: `server/discover`, each request carries its own `_meta`, no MCP session):
  a session is an explicit handle. `session_open` returns `{{session}}`; every session-scoped tool takes it
  (`target_id`, `tab_id` default to its first tab); `session_close` ends it; `session_list` lists yours.
  `bind_browser` and `end_session` are not offered.
- **2025-11-25 and older** (`initialize`, MCP sessions): over stdio, `bind_browser {{session: NAME}}` names
  driver sessions and tab tools need `session`, `target_id`, `tab_id`; over HTTP each MCP session is one
  browser session, already open, and the address fields may be left out. The handle tools work here too:
  pass a handle as `session` to address it.

A tool call without a handle where one is needed is `invalid_params` naming the handles you have open;
a handle that is not yours (never issued, or another token's) is `session_not_found`, the same answer.
Refs, snapshots and continuations are valid only with the session they came from.

## The handle tools
"
    );
    for h in sightline_server::HANDLE_TOOLS {
        let _ = writeln!(o, "{}", tool_entry(h.name, h.description, h.read_only, h.destructive, &(h.schema)(), None));
    }
    let _ = writeln!(
        o,
        "## Results

A tool's result is JSON text plus `structuredContent`; screenshots are image content. A failed tool is a
result with `isError: true` and `structuredContent.error` = `{{code, message, detail}}` (codes: skill
`core`). Calls run concurrently; cancelling a call stops it (the page stays where the action left it);
a call with a progress token gets `notifications/progress` every half second.

## Host set-up

`sightline mcp --config HOST` prints the entry for HOST, running this binary by its absolute path with the
other options given (`sightline mcp --config cursor --block-private`); add `--http URL` for a running
`sightline serve` (the token comes from `$SIGHTLINE_TOKEN`). Hosts:
"
    );
    use clap::ValueEnum;
    for h in crate::cli::ConfigHost::value_variants() {
        if let Some(v) = h.to_possible_value() {
            let _ = writeln!(o, "- `{}`: {}", v.get_name(), v.get_help().map(|s| s.to_string()).unwrap_or_default());
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_skill_renders_with_front_matter() {
        for s in SKILLS {
            let text = render(s);
            assert!(text.starts_with(&format!("---\nname: sightline-{}\ndescription: ", s.name)), "{}", s.name);
            assert!(text.len() > 1000, "{} is too short", s.name);
        }
    }

    #[test]
    fn every_key_of_the_state_object_is_explained() {
        let v = serde_json::to_value(sample_state()).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut listed = STATE_KEYS.to_vec();
        keys.sort();
        listed.sort();
        assert_eq!(keys, listed);
        for k in STATE_KEYS {
            assert_ne!(state_field(k), state_field("no such key"), "{k}");
        }
    }

    #[test]
    fn the_tables_are_in_the_skills() {
        let core = core();
        for t in TOOLS {
            assert!(core.contains(&format!("### `{}`", t.name)), "core lacks {}", t.name);
        }
        for c in ToolCode::ALL {
            assert!(core.contains(&format!("`{}`", c.as_str())), "core lacks {c}");
        }
        let ei = element_index();
        for a in ACTION_TABLE {
            assert!(
                ei.contains(&format!("### `{}`", a.name)) && ei.contains(a.example),
                "element-index lacks {}",
                a.name
            );
        }
        for c in ERROR_CODES {
            assert!(ei.contains(c.as_str()));
        }
        let sem = semantic();
        for r in RULES {
            assert!(sem.contains(&format!("`{}`", r.as_str())));
        }
        for h in sightline_server::HANDLE_TOOLS {
            assert!(mcp().contains(&format!("### `{}`", h.name)), "mcp lacks {}", h.name);
        }
    }
}
