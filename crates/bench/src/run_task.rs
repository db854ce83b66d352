//! The `run` tool against single tool calls (issue 35 item 4): one 10-step
//! form task (seven text fields, two selects, the submit button) on the
//! bench's own page ([`FORM`]), done three ways through the same [`Api`] the
//! MCP, JSON-RPC and HTTP front ends call:
//!
//! 1. single tool calls as an agent makes them: `get_browser_state`
//!    (semantic_v2) once, then one `browser_type` / `browser_select` /
//!    `browser_click` per step with refs from that snapshot;
//! 2. one `run` call with a script that finds each target by role and name
//!    (`browser.find`) and acts on it;
//! 3. one `run` call with an `actions` batch of refs from one semantic_v2
//!    snapshot (so the snapshot call, then the `run` call).
//!
//! `run` answers with the State Object after the script by default; the
//! `result: "none"` rows leave it out. For each: the tool calls, the
//! characters handed to the model (every reply encoded as JSON, as the wire
//! carries it), the characters the model writes (each call's tool name and
//! arguments as JSON) and the wall time from the first request to the last
//! reply (median of `runs`, after one warm-up; the page is reloaded before
//! each attempt, untimed, and the order is checked after it, untimed).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::measure::{median, ms};
use crate::opts::Opts;
use crate::tool_state::ToolState;

/// The task's page: a delivery form of nine fields and a submit button.
pub const FORM: &str = r#"<!doctype html><html><head><title>Delivery</title>
<style>body{font-family:sans-serif;margin:16px} label{display:block;margin:6px 0}</style></head><body>
<h1>Delivery details</h1>
<form id="order" onsubmit="event.preventDefault(); done()">
  <label>First name <input id="first"></label>
  <label>Last name <input id="last"></label>
  <label>Email <input id="email" type="email"></label>
  <label>Phone <input id="phone" type="tel"></label>
  <label>Street <input id="street"></label>
  <label>City <input id="city"></label>
  <label>Postcode <input id="postcode"></label>
  <label>Country <select id="country"><option value="">Choose</option><option>France</option><option>Germany</option><option>Japan</option></select></label>
  <label>Delivery <select id="delivery"><option>Standard</option><option>Express</option><option>Pick-up</option></select></label>
  <button id="place">Place order</button>
</form>
<p id="out"></p>
<script>
function done() {
  const v = (id) => document.getElementById(id).value;
  document.getElementById('out').textContent = 'Order placed for ' + v('first') + ' ' + v('last') + ' <' + v('email') +
    '>, ' + v('phone') + ', ' + v('street') + ', ' + v('postcode') + ' ' + v('city') + ', ' + v('country') + ', ' + v('delivery');
}
</script></body></html>"#;

/// What the page says once the ten steps are done.
pub const DONE: &str =
    "Order placed for Ann Lee <ann.lee@example.com>, +33 1 23 45 67 89, 12 Rue de la Paix, 75002 Paris, France, Express";

/// One step of the task: the tool, the target's role and name, and the text or option.
struct Step {
    op: &'static str,
    role: &'static str,
    name: &'static str,
    value: &'static str,
}

const fn step(op: &'static str, role: &'static str, name: &'static str, value: &'static str) -> Step {
    Step { op, role, name, value }
}

const STEPS: [Step; 10] = [
    step("type", "textbox", "First name", "Ann"),
    step("type", "textbox", "Last name", "Lee"),
    step("type", "textbox", "Email", "ann.lee@example.com"),
    step("type", "textbox", "Phone", "+33 1 23 45 67 89"),
    step("type", "textbox", "Street", "12 Rue de la Paix"),
    step("type", "textbox", "City", "Paris"),
    step("type", "textbox", "Postcode", "75002"),
    step("select", "combobox", "Country", "France"),
    step("select", "combobox", "Delivery", "Express"),
    step("click", "button", "Place order", ""),
];

/// The ways the task is done, in the table's order.
#[derive(Clone, Copy)]
enum Way {
    Single,
    Script { state: bool },
    Batch { state: bool },
}

const WAYS: [Way; 5] = [
    Way::Single,
    Way::Script { state: true },
    Way::Script { state: false },
    Way::Batch { state: true },
    Way::Batch { state: false },
];

impl Way {
    fn label(self) -> &'static str {
        match self {
            Way::Single => "single tool calls (semantic_v2 once, then one call a step)",
            Way::Script { state: true } => "one `run`, script with browser.find (answers the State Object)",
            Way::Script { state: false } => "one `run`, script with browser.find, result none",
            Way::Batch { state: true } => {
                "semantic_v2 once + one `run` with an actions batch (answers the State Object)"
            }
            Way::Batch { state: false } => "semantic_v2 once + one `run` with an actions batch, result none",
        }
    }
}

/// The script a model would write for [`STEPS`]: find each target by role and name, act on it.
fn script() -> String {
    let mut s = String::from("const ref = async (role, name) => (await browser.find({role, name}))[0].ref;\n");
    for st in &STEPS {
        let target = format!("await ref({}, {})", json!(st.role), json!(st.name));
        s += &match st.op {
            "type" => format!("await browser.type({target}, {});\n", json!(st.value)),
            "select" => format!("await browser.select({target}, {});\n", json!(st.value)),
            _ => format!("await browser.click({target});\n"),
        };
    }
    s
}

/// One attempt's tally.
#[derive(Default)]
struct Tally {
    calls: usize,
    reply_chars: usize,
    request_chars: usize,
}

/// The task's rows, one per [`Way`].
pub struct RunRow {
    label: &'static str,
    calls: usize,
    reply_chars: usize,
    request_chars: usize,
    wall: Duration,
}

/// One tool session doing the task; counts what goes to and from the model.
struct Agent<'a> {
    tool: &'a ToolState,
    tally: Tally,
}

impl Agent<'_> {
    /// One tool call as the model makes it: its request and reply counted.
    async fn call(&mut self, name: &str, extra: Value) -> Result<Value> {
        let args = self.tool.args(extra);
        self.tally.calls += 1;
        self.tally.request_chars += name.len() + serde_json::to_string(&args)?.len();
        let out = self.tool.api().dispatch(name, args).await.with_context(|| format!("{name} failed"))?;
        self.tally.reply_chars += serde_json::to_string(&out.value)?.len();
        Ok(out.value)
    }

    /// The refs of a semantic_v2 reply for each step, by role and name.
    fn refs(snapshot: &Value) -> Result<Vec<String>> {
        let refs = snapshot["refs"].as_array().context("a semantic_v2 reply without refs")?;
        STEPS
            .iter()
            .map(|st| {
                refs.iter()
                    .find(|r| r["role"] == st.role && r["name"] == st.name)
                    .and_then(|r| r["ref"].as_str())
                    .map(str::to_string)
                    .with_context(|| format!("no {} {:?} in the snapshot", st.role, st.name))
            })
            .collect()
    }

    async fn perform(&mut self, way: Way) -> Result<()> {
        let snapshot = json!({ "snapshot_format": "semantic_v2" });
        match way {
            Way::Single => {
                let refs = Self::refs(&self.call("get_browser_state", snapshot).await?)?;
                for (st, r) in STEPS.iter().zip(refs) {
                    match st.op {
                        "type" => self.call("browser_type", json!({ "ref": r, "text": st.value })).await?,
                        "select" => self.call("browser_select", json!({ "ref": r, "option": st.value })).await?,
                        _ => self.call("browser_click", json!({ "ref": r })).await?,
                    };
                }
            }
            Way::Script { state } => {
                let mut args = json!({ "code": script() });
                if !state {
                    args["result"] = json!("none");
                }
                self.call("run", args).await?;
            }
            Way::Batch { state } => {
                let refs = Self::refs(&self.call("get_browser_state", snapshot).await?)?;
                let actions: Vec<Value> = STEPS
                    .iter()
                    .zip(refs)
                    .map(|(st, r)| match st.op {
                        "type" => json!({ "op": "type", "ref": r, "text": st.value }),
                        "select" => json!({ "op": "select", "ref": r, "option": st.value }),
                        _ => json!({ "op": "click", "ref": r }),
                    })
                    .collect();
                let mut args = json!({ "actions": actions });
                if !state {
                    args["result"] = json!("none");
                }
                self.call("run", args).await?;
            }
        }
        Ok(())
    }
}

/// Reload the form, do the task `way`, check the page says the order is placed.
async fn attempt(tool: &ToolState, url: &str, way: Way) -> Result<(Tally, Duration)> {
    tool.api().dispatch("browser_navigate", tool.args(json!({ "url": url }))).await?;
    let mut agent = Agent { tool, tally: Tally::default() };
    let t = Instant::now();
    agent.perform(way).await.with_context(|| way.label())?;
    let wall = t.elapsed();
    let state = tool.api().dispatch("get_state", tool.args(json!({ "screenshot": false }))).await?.value;
    let content = state["page_content"].as_str().unwrap_or_default();
    if !content.contains(DONE) {
        bail!("{}: the order was not placed as asked; the page reads:\n{content}", way.label());
    }
    Ok((agent.tally, wall))
}

/// The task done every way, `runs` times each after one warm-up, interleaved.
pub async fn measure(tool: &ToolState, url: &str, runs: usize) -> Result<Vec<RunRow>> {
    let mut walls: Vec<Vec<Duration>> = vec![Vec::new(); WAYS.len()];
    let mut tallies: Vec<Tally> = WAYS.iter().map(|_| Tally::default()).collect();
    for round in 0..=runs {
        for (i, &way) in WAYS.iter().enumerate() {
            let (tally, wall) = attempt(tool, url, way).await?;
            if round > 0 {
                walls[i].push(wall);
            }
            tallies[i] = tally;
        }
    }
    eprintln!("  form task (10 steps): done");
    Ok(WAYS
        .iter()
        .zip(walls)
        .zip(tallies)
        .map(|((way, w), t)| RunRow {
            label: way.label(),
            calls: t.calls,
            reply_chars: t.reply_chars,
            request_chars: t.request_chars,
            wall: median(w),
        })
        .collect())
}

pub fn print(rows: &[RunRow], runs: usize) {
    println!(
        "\nThe `run` tool: a 10-step form task (7 text fields, 2 selects, submit), median of {runs} (ms); chars are JSON text:\n"
    );
    println!(
        "| how | tool calls | reply chars (to the model) | request chars (from the model) | total chars | wall time |"
    );
    println!("|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            r.label,
            r.calls,
            r.reply_chars,
            r.request_chars,
            r.reply_chars + r.request_chars,
            ms(r.wall)
        );
    }
}

/// `sightline-bench run`: only the form task.
pub async fn run(a: &Opts) -> Result<u8> {
    let runs: usize = a.runs.as_deref().unwrap_or("7").parse().context("--runs expects a number")?;
    let runs = runs.clamp(1, 100);
    let site = sightline_testkit::Server::memory().await?;
    site.page("/form.html", FORM);
    let tool = ToolState::start(a).await?;
    eprintln!("sightline bench: the form task, {runs} runs per way");
    let rows = measure(&tool, &site.url("/form.html"), runs).await;
    tool.close().await;
    print(&rows?, runs);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_has_a_line_per_step() {
        let s = script();
        assert_eq!(s.lines().count(), 1 + STEPS.len());
        assert!(s.contains(r#"await browser.select(await ref("combobox", "Delivery"), "Express");"#), "{s}");
        assert!(s.ends_with("await browser.click(await ref(\"button\", \"Place order\"));\n"), "{s}");
    }
}
