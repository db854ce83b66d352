//! Recording what a session did as a script for the `run` sandbox.
//!
//! Each step names its target by a [`Locator`] (role, name and place, from the
//! semantic tree of the capture the step acted on), never by index or ref, so
//! the script finds its targets again on a page that changed. The script calls
//! `browser.expect(step, locator)`, which answers the one ref that matches or
//! stops the replay with a typed `drift` error naming the step.

use serde_json::json;
use sightline_browser::Captured;
use sightline_page::semantic::locate::{describe, Locator};
use sightline_page::semantic::{self, SemanticOptions, SemanticTree};

/// The most steps a recording keeps (later ones are counted, not kept).
pub const MAX_STEPS: usize = 2000;

/// Where a recorded drag ends.
#[derive(Debug, Clone, PartialEq)]
pub enum DragEnd {
    On(Locator),
    By { dx: f64, dy: f64 },
}

/// One recorded step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Click {
        target: Locator,
        count: u8,
    },
    Hover {
        target: Locator,
    },
    Type {
        target: Locator,
        text: String,
        overwrite: bool,
    },
    Select {
        target: Locator,
        option: String,
    },
    Press {
        key: String,
        target: Option<Locator>,
    },
    Drag {
        target: Locator,
        to: DragEnd,
    },
    Scroll {
        direction: String,
        pixels: Option<u64>,
        target: Option<Locator>,
    },
    Goto {
        url: String,
    },
    Back,
    Forward,
    Finish {
        message: String,
        failed: bool,
    },
    /// A step a script cannot replay (choosing files, switching tabs): kept as a comment.
    Note(String),
}

/// A session's recording.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// The page the first step started on.
    pub start: Option<String>,
    steps: Vec<Step>,
    dropped: usize,
}

impl Recorder {
    /// Record `step`, taken on the page at `url`.
    pub fn push(&mut self, url: &str, step: Step) {
        if self.start.is_none() {
            // A first load from a blank tab is where the replay starts (its --url), not a step.
            if let (Step::Goto { url: to }, true) = (&step, url.is_empty() || url == "about:blank") {
                self.start = Some(to.clone());
                return;
            }
            if !url.is_empty() && url != "about:blank" {
                self.start = Some(url.to_string());
            }
        }
        if self.steps.len() >= MAX_STEPS {
            self.dropped += 1;
            return;
        }
        self.steps.push(step);
    }

    /// Move `other`'s steps to the end of this recording.
    pub fn append(&mut self, other: &mut Recorder) {
        if self.start.is_none() {
            self.start = other.start.take();
        }
        for s in other.steps.drain(..) {
            let url = self.start.clone().unwrap_or_default();
            self.push(&url, s);
        }
        self.dropped += std::mem::take(&mut other.dropped);
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The recording as a `run` script (see the module docs).
    pub fn script(&self) -> String {
        let start = self.start.as_deref().unwrap_or("");
        let mut out = String::from("\"use sightline/run\";\n");
        out.push_str(&format!("// Recorded by Sightline {}: {} steps.\n", env!("CARGO_PKG_VERSION"), self.steps.len()));
        if !start.is_empty() {
            out.push_str(&format!("// Replay with no model:  sightline script THIS_FILE.js --url {start}\n"));
        }
        out.push_str(
            "// Each target is found again by role, name and place (browser.expect); one that is missing,\n\
             // ambiguous or changed stops the replay with a `drift` error naming its step.\n",
        );
        if self.dropped > 0 {
            out.push_str(&format!("// {} later steps were not kept (at most {MAX_STEPS}).\n", self.dropped));
        }
        for (i, step) in self.steps.iter().enumerate() {
            out.push_str(&line(i + 1, step, start));
            out.push('\n');
        }
        out
    }
}

fn lit(v: impl serde::Serialize) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| "null".into())
}

fn expect(n: usize, l: &Locator) -> String {
    format!("browser.expect({n}, {})", lit(l))
}

/// `scheme://host[:port]` of an http(s) URL.
fn origin(u: &str) -> Option<&str> {
    let rest = u.strip_prefix("http://").or_else(|| u.strip_prefix("https://"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some(&u[..u.len() - rest.len() + end])
}

/// A URL under the start page's origin as a path (so a replay on another host or port follows it).
fn relative(url: &str, start: &str) -> String {
    match (origin(url), origin(start)) {
        (Some(a), Some(b)) if a == b => {
            let path = &url[a.len()..];
            if path.is_empty() {
                "/".into()
            } else {
                path.into()
            }
        }
        _ => url.into(),
    }
}

fn line(n: usize, step: &Step, start: &str) -> String {
    match step {
        Step::Click { target, count } if *count > 1 => {
            format!("await browser.click({}, {{count: {count}}});", expect(n, target))
        }
        Step::Click { target, .. } => format!("await browser.click({});", expect(n, target)),
        Step::Hover { target } => format!("await browser.hover({});", expect(n, target)),
        Step::Type { target, text, overwrite } => {
            let opts = if *overwrite { ", {overwrite: true}" } else { "" };
            format!("await browser.type({}, {}{opts});", expect(n, target), lit(text))
        }
        Step::Select { target, option } => format!("await browser.select({}, {});", expect(n, target), lit(option)),
        Step::Press { key, target: Some(t) } => format!("await browser.press({}, {});", lit(key), expect(n, t)),
        Step::Press { key, target: None } => format!("await browser.press({});", lit(key)),
        Step::Drag { target, to: DragEnd::On(to) } => {
            format!("await browser.drag({}, {});", expect(n, target), expect(n, to))
        }
        Step::Drag { target, to: DragEnd::By { dx, dy } } => {
            format!("await browser.drag({}, {});", expect(n, target), json!({ "dx": dx, "dy": dy }))
        }
        Step::Scroll { direction, pixels, target } => {
            let mut opts = serde_json::Map::new();
            if let Some(p) = pixels {
                opts.insert("pixels".into(), json!(p));
            }
            match target {
                Some(t) => format!(
                    "await browser.scroll({}, Object.assign({}, {{ref: {}}}));",
                    lit(direction),
                    serde_json::Value::Object(opts),
                    expect(n, t)
                ),
                None => format!("await browser.scroll({}, {});", lit(direction), serde_json::Value::Object(opts)),
            }
        }
        Step::Goto { url } => format!("await browser.goto({});", lit(relative(url, start))),
        Step::Back => "await browser.back();".into(),
        Step::Forward => "await browser.forward();".into(),
        Step::Finish { message, failed } => {
            format!("return {};", json!({ "status": if *failed { "failed" } else { "finished" }, "message": message }))
        }
        Step::Note(what) => format!("// step {n}: {what} (not replayed)"),
    }
}

/// What a recording says of an element-index action taken on `captured`.
pub fn step_of(action: &crate::Action, captured: &Captured) -> Step {
    use crate::Action as A;
    let tree = std::cell::OnceCell::new();
    let at = |i: u64| -> Locator {
        let e = sightline_page::ElementIndex::try_from(i).ok().and_then(|i| captured.view.element(i));
        e.and_then(|e| locate(tree.get_or_init(|| tree_of(captured)), e.frame, e.backend_node_id)).unwrap_or_default()
    };
    match action {
        A::ClickElement { element_index, count } => Step::Click { target: at(*element_index), count: *count },
        A::HoverElement { element_index } => Step::Hover { target: at(*element_index) },
        A::InputText { element_index, text, overwrite } => {
            Step::Type { target: at(*element_index), text: text.clone(), overwrite: *overwrite }
        }
        A::SelectOption { element_index, option_index } => {
            let option = sightline_page::ElementIndex::try_from(*option_index)
                .ok()
                .and_then(|i| captured.view.element(i))
                .and_then(|o| o.descriptor.text_content.clone())
                .unwrap_or_default();
            Step::Select { target: at(*element_index), option }
        }
        A::Scroll { direction, pixels, element_index } => Step::Scroll {
            direction: format!("{direction:?}").to_lowercase(),
            pixels: *pixels,
            target: element_index.map(at),
        },
        A::Navigate { url } => Step::Goto { url: url.clone() },
        A::PressKey { key, element_index } => Step::Press { key: key.clone(), target: element_index.map(at) },
        A::Drag { element_index, to } => Step::Drag {
            target: at(*element_index),
            to: match *to {
                crate::DragTarget::Element(t) => DragEnd::On(at(t)),
                crate::DragTarget::By { dx, dy } => DragEnd::By { dx: dx as f64, dy: dy as f64 },
            },
        },
        A::GoBack => Step::Back,
        A::GoForward => Step::Forward,
        A::FinishTask { message } => Step::Finish { message: message.clone(), failed: false },
        A::FailTask { message } => Step::Finish { message: message.clone(), failed: true },
        other => Step::Note(other.name().to_string()),
    }
}

/// The semantic tree of a capture (built from a copy of its page view).
pub fn tree_of(captured: &Captured) -> SemanticTree {
    let mut view = captured.view.clone();
    semantic::build(&mut view, SemanticOptions::default())
}

/// The locator of the node acted on (by capture frame and backend node id), if the tree has it.
pub fn locate(tree: &SemanticTree, frame: usize, backend_node_id: i64) -> Option<Locator> {
    let i = tree.nodes.iter().position(|s| s.frame == frame && s.backend_node_id == backend_node_id)?;
    Some(describe(tree, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(role: &str, name: &str) -> Locator {
        Locator { role: Some(role.into()), name: Some(name.into()), near: Some("Log in".into()), exact: true }
    }

    #[test]
    fn a_recording_reads_as_a_script_of_expectations() {
        let mut r = Recorder::default();
        r.push(
            "http://127.0.0.1:8000/login/",
            Step::Type { target: loc("textbox", "User"), text: "ann".into(), overwrite: true },
        );
        r.push("", Step::Click { target: loc("button", "Log in"), count: 1 });
        r.push("", Step::Goto { url: "http://127.0.0.1:8000/admin/?q=1".into() });
        r.push("", Step::Goto { url: "https://example.com/".into() });
        r.push("", Step::Note("upload_file".into()));
        r.push("", Step::Finish { message: "done".into(), failed: false });
        let s = r.script();
        assert!(s.starts_with("\"use sightline/run\";\n"), "{s}");
        assert!(s.contains("--url http://127.0.0.1:8000/login/"), "{s}");
        assert!(s.contains(r#"await browser.type(browser.expect(1, {"role":"textbox","name":"User","near":"Log in","exact":true}), "ann", {overwrite: true});"#), "{s}");
        assert!(s.contains(r#"await browser.click(browser.expect(2, {"#), "{s}");
        assert!(s.contains(r#"await browser.goto("/admin/?q=1");"#), "{s}");
        assert!(s.contains(r#"await browser.goto("https://example.com/");"#), "{s}");
        assert!(s.contains("// step 5: upload_file (not replayed)"), "{s}");
        assert!(s.contains(r#"return {"message":"done","status":"finished"};"#), "{s}");
    }
}
