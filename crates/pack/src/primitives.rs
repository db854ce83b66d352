//! The `browser` primitives: one table drives both what is registered and what
//! the prompt fragment advertises, so a model is never shown a primitive that
//! would fail.

/// One primitive of the `browser` global.
#[derive(Debug)]
pub struct Prim {
    pub name: &'static str,
    pub signature: &'static str,
    pub doc: &'static str,
    /// Registered only when a vision backend is configured.
    pub vision: bool,
}

pub const PRIMITIVES: &[Prim] = &[
    Prim {
        name: "goto",
        signature: "goto(url)",
        doc: "load url and wait for the page to settle; drops current marks",
        vision: false,
    },
    Prim {
        name: "click",
        signature: "click(selector)",
        doc: "real mouse click on the first element matching the CSS selector",
        vision: false,
    },
    Prim {
        name: "type",
        signature: "type(selector, text)",
        doc: "focus the element and type text as key events (\\n is Enter)",
        vision: false,
    },
    Prim { name: "text", signature: "text(selector) -> string", doc: "visible text of the first match", vision: false },
    Prim {
        name: "value",
        signature: "value(selector) -> string",
        doc: "value property of the first match",
        vision: false,
    },
    Prim {
        name: "waitVisible",
        signature: "waitVisible(selector)",
        doc: "wait until a match is present and visible",
        vision: false,
    },
    Prim {
        name: "waitReady",
        signature: "waitReady(selector)",
        doc: "wait until a match is in the DOM",
        vision: false,
    },
    Prim {
        name: "eval",
        signature: "eval(expression) -> any",
        doc: "evaluate a JavaScript expression in the page, return its JSON value",
        vision: false,
    },
    Prim { name: "key", signature: "key(text)", doc: "type text into whatever has focus", vision: false },
    Prim { name: "screenshot", signature: "screenshot() -> string", doc: "viewport PNG, base64", vision: false },
    Prim {
        name: "mark",
        signature: "mark() -> [{id, tag, role, name, x, y, w, h}]",
        doc: "number the visible interactive elements (ids valid until the next mark() or goto)",
        vision: false,
    },
    Prim { name: "clickMark", signature: "clickMark(id)", doc: "click the element with that mark id", vision: false },
    Prim {
        name: "typeMark",
        signature: "typeMark(id, text)",
        doc: "type into the element with that mark id",
        vision: false,
    },
    Prim {
        name: "uploadMark",
        signature: "uploadMark(id, [names])",
        doc: "choose files for the file input with that mark id (or the element whose click opened a file chooser); names are files in the operator's upload directory",
        vision: false,
    },
    Prim {
        name: "downloads",
        signature: "downloads() -> [{name, bytes, state, error?}]",
        doc: "the files downloaded so far (state in_progress, done or failed)",
        vision: false,
    },
    Prim {
        name: "ask",
        signature: "ask(question) -> string",
        doc: "ask a vision model about the current screenshot",
        vision: true,
    },
    Prim {
        name: "askMarks",
        signature: "askMarks(question) -> string",
        doc: "ask a vision model about the screenshot with numbered boxes (refreshes marks)",
        vision: true,
    },
];

/// The prompt fragment for a set of primitives.
pub fn describe(prims: &[&Prim]) -> String {
    let mut s = String::from(
        "You can drive a real browser by writing JavaScript. A global `browser` object has these synchronous methods; each returns when the browser has finished the step and throws an Error on failure:\n",
    );
    for p in prims {
        s.push_str(&format!("- browser.{}: {}\n", p.signature, p.doc));
    }
    s.push_str("Use console.log(...) to report; the script's last expression is its result. There is no file, network or process access.\n");
    s
}
