//! What the real-app tasks read through Sightline, for `./x bench tokens`: a test of
//! `apps::` or `component_apps::` that passes, having sent at least one action, leaves `target/apps/reads/TEST.reads.jsonl`,
//! one line in the MiniWoB++ reads' shape (`{"solved", "actions", "states"}`): every State
//! Object its calls were answered with (the navigation that opens the page, then each action
//! sent through [`super::step`]), in order. The test's own checks behind Sightline's back (the
//! app's store, its database) are not calls and are not counted.

use std::cell::RefCell;

use serde_json::{json, Value};
use sightline_api::StateObject;

/// The tests whose reads are kept, by their module.
const MODULES: [&str; 2] = ["apps::", "component_apps::"];

/// Tests of those modules that compare reads (the walk against the full capture, the DOM
/// against Chromium's tree) on pages they open: checks, not tasks.
const CHECKS: [&str; 2] = ["_reads_as_the_full_captures", "read_real_apps_as_the_full_captures"];

struct Reads {
    test: String,
    actions: usize,
    states: Vec<Value>,
}

thread_local! {
    /// The reads of the test running on this thread (libtest names the thread after the test).
    static READS: RefCell<Option<Reads>> = const { RefCell::new(None) };
}

/// Start keeping the reads of this thread's test, if it is a real-app task.
pub fn begin() {
    let name = std::thread::current().name().unwrap_or_default().to_string();
    let kept = MODULES.iter().any(|m| name.starts_with(m)) && !CHECKS.iter().any(|c| name.contains(c));
    READS.with(|r| *r.borrow_mut() = kept.then(|| Reads { test: name, actions: 0, states: Vec::new() }));
}

/// One call answered with `state` (an action when `action`, else the page's opening navigation).
pub fn note(state: &StateObject, action: bool) {
    READS.with(|r| {
        if let Some(reads) = r.borrow_mut().as_mut() {
            let mut v: Value = serde_json::from_str(&state.to_json_line()).expect("a State Object is JSON");
            if let Some(o) = v.as_object_mut() {
                o.remove("screenshot");
            }
            reads.states.push(v);
            reads.actions += usize::from(action);
        }
    });
}

/// The test passed: write what it read (nothing for other tests).
pub fn finish() {
    let Some(reads) = READS.with(|r| r.borrow_mut().take()) else { return };
    // A test that only opened pages is a check of a read, not a task.
    if reads.actions == 0 {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/apps/reads");
    let line = json!({ "solved": true, "actions": reads.actions, "states": reads.states });
    let file = dir.join(format!("{}.reads.jsonl", reads.test.replace("::", ".")));
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, format!("{line}\n")));
    written.unwrap_or_else(|e| panic!("could not keep the reads in {}: {e}", file.display()));
}
