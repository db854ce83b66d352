//! The table of actions: one row per action (its wire name, fields, summary and
//! what Sightline does), and what follows from a row: each field's check and
//! JSON Schema, `act`'s action schema, the names.

use serde_json::{Map, Value};

use super::MAX_DRAG_OFFSET;

/// What a field of an action holds: its check and its JSON Schema follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// An element number of the current element index.
    Index,
    /// 1 (a click) or 2 (a double click).
    Count,
    /// Text to type: at most [`MAX_TEXT_CHARS`] characters, no NUL.
    Text,
    Bool,
    /// `up`, `down`, `left` or `right`.
    Direction,
    /// A positive number of pixels.
    Pixels,
    /// An absolute URL with a scheme `navigate` accepts.
    Url,
    /// Free text for the operator.
    Message,
    /// 1 to 32 file names inside the operator's `--files` directory.
    Paths,
    /// A key or chord: `Enter`, `ArrowDown`, `a`, `Control+A`, `Shift+Tab`.
    Key,
    /// CSS pixels, negative too (left or up), at most [`MAX_DRAG_OFFSET`] either way.
    Offset,
    /// A tab's number, from 1, as the `[tabs: …]` line of `page_content` lists them.
    Tab,
    /// Whole seconds, at most [`MAX_WAIT_SECONDS`].
    Seconds,
}

/// The longest one `wait_for_human` action waits, in seconds.
pub const MAX_WAIT_SECONDS: u64 = 3600;

/// One field of an action.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub kind: FieldKind,
    pub required: bool,
    pub about: &'static str,
}

/// One action: its wire name, an example, whether the seed defines it, a one-line summary
/// (the agent runner's tool description), its fields, and what Sightline does
/// (README's table).
#[derive(Debug, Clone, Copy)]
pub struct ActionSpec {
    pub name: &'static str,
    /// A valid line of this action (a test parses it).
    pub example: &'static str,
    pub extension: bool,
    pub summary: &'static str,
    pub fields: &'static [Field],
    pub does: &'static str,
}

/// The rows that need a person and a live view (`serve`): the agent runner leaves them out.
pub const PERSON_ACTIONS: &[&str] = &["request_human", "wait_for_human"];

impl ActionSpec {
    /// Whether the action hands the page to a person or waits for one ([`PERSON_ACTIONS`]).
    pub fn needs_person(&self) -> bool {
        PERSON_ACTIONS.contains(&self.name)
    }
}

const fn req(name: &'static str, kind: FieldKind, about: &'static str) -> Field {
    Field { name, kind, required: true, about }
}

const fn opt(name: &'static str, kind: FieldKind, about: &'static str) -> Field {
    Field { name, kind, required: false, about }
}

const ELEMENT: &str = "An element number from the current element index";

/// Every action of the element-index protocol, one row each.
pub const ACTION_TABLE: &[ActionSpec] = &[
    ActionSpec {
        name: "click_element",
        example: r#"{"action":"click_element","element_index":4}"#,
        extension: false,
        summary: "Click an element (count 2: a double click).",
        fields: &[req("element_index", FieldKind::Index, ELEMENT), opt("count", FieldKind::Count, "2 for a double click")],
        does: "re-checks what a pointer hits at the element's click point (`DOM.getNodeForLocation`, `pointer-events` as a real pointer sees them: the hit must be the element, inside it, or what stands for a hidden control: its label or widget; an SVG shape is aimed inside its own fill), then moves the pointer straight onto it and a step or two inside it (hover menus open; no neighbour on the way is hovered), presses and releases the left button. Clicking an `<option>` selects it. **Extension:** `\"count\": 2` is a double click (`dblclick` handlers, edit-in-place).",
    },
    ActionSpec {
        name: "input_text",
        example: r#"{"action":"input_text","element_index":12,"text":"ada@example.com","overwrite":true}"#,
        extension: false,
        summary: "Type text into a field. overwrite=true clears it first; \\n presses Enter.",
        fields: &[
            req("element_index", FieldKind::Index, ELEMENT),
            req("text", FieldKind::Text, "The text to type"),
            opt("overwrite", FieldKind::Bool, "Clear the field first"),
        ],
        does: "on a code editor's visible element (CodeMirror, Ace, Monaco, which type through a hidden textarea), clicks it and types into whatever the click focused. Otherwise focuses the field, puts the caret at the end (or, with `overwrite: true`, selects everything and deletes it with Backspace), then types the text: the first 64 characters one key event each, so autocomplete widgets and frameworks see real keys; after those, every `\\n` (the Enter key: submits a form from a text input, breaks a line in a textarea), `\\t` (Tab) and the last character are keys too, and each run of other characters between them is inserted as an input method commits text (`Input.insertText`: one trusted `beforeinput` and `input` event per run, no key events). So a long text costs what a short one does (8,000 characters: 0.5 s, against 24 s and a renderer past 1 GB key by key). Works on `contenteditable`.",
    },
    ActionSpec {
        name: "select_option",
        example: r#"{"action":"select_option","element_index":21,"option_index":23}"#,
        extension: false,
        summary: "Choose an option of a <select>: element_index is the select, option_index one of its options.",
        fields: &[req("element_index", FieldKind::Index, ELEMENT), req("option_index", FieldKind::Index, ELEMENT)],
        does: "`element_index` is the `<select>`, `option_index` one of *its* options; selects it and fires `input` and `change`. On `<select multiple>` it adds to the selection.",
    },
    ActionSpec {
        name: "scroll",
        example: r#"{"action":"scroll","direction":"down","pixels":800}"#,
        extension: false,
        summary: "Scroll the page (or, with element_index, that element's scroll container).",
        fields: &[
            req("direction", FieldKind::Direction, "Which way"),
            opt("pixels", FieldKind::Pixels, "How far (default: one viewport)"),
            opt("element_index", FieldKind::Index, ELEMENT),
        ],
        does: "a real mouse wheel at the pointer's last position (the viewport centre before any click), so the container under the pointer scrolls, else the page; by `pixels`, or one viewport height/width. **Extension:** an optional `element_index` moves the pointer over that element first, scrolling its scroll container.",
    },
    ActionSpec {
        name: "navigate",
        example: r#"{"action":"navigate","url":"https://example.com/"}"#,
        extension: false,
        summary: "Load an absolute URL.",
        fields: &[req("url", FieldKind::Url, "An absolute http(s), about or data URL")],
        does: "absolute `http`, `https`, `about` or `data` URL (`javascript:` is refused). DNS failure, refused connection, TLS error or timeout is `NAVIGATION_FAILED`: the failed load is aborted before Chromium commits its error page, so the previous document stays live as it was (its element_index still works, typed values are kept); an HTTP 404/500 page is a page.",
    },
    ActionSpec {
        name: "upload_file",
        example: r#"{"action":"upload_file","element_index":3,"paths":["report.pdf"]}"#,
        extension: true,
        summary: "Choose files (names inside the operator's files directory) for a file input or the chooser a click on the element opened.",
        fields: &[
            req("element_index", FieldKind::Index, ELEMENT),
            req("paths", FieldKind::Paths, "File names inside the operator's --files directory"),
        ],
        does: "`{\"action\": \"upload_file\", \"element_index\": N, \"paths\": [\"report.pdf\"]}` sets the files of a file input (or of the input whose chooser a click on that element opened), from the `--files` directory only; see [Files](#files-uploads-and-downloads).",
    },
    ActionSpec {
        name: "hover_element",
        example: r#"{"action":"hover_element","element_index":5}"#,
        extension: true,
        summary: "Move the pointer onto an element (hover menus, hover-only buttons).",
        fields: &[req("element_index", FieldKind::Index, ELEMENT)],
        does: "`{\"action\": \"hover_element\", \"element_index\": N}` moves the pointer onto the element (after the same on-top check as a click) and waits: hover menus open and hover-only controls (a to-do row's delete button) appear in the next state.",
    },
    ActionSpec {
        name: "press_key",
        example: r#"{"action":"press_key","key":"Enter"}"#,
        extension: true,
        summary: "Press a key or chord (Enter, Escape, Tab, ArrowDown, PageDown, Control+A, Shift+Enter), on an element (focused first) or on whatever has focus.",
        fields: &[
            req("key", FieldKind::Key, "A key or chord: Enter, Escape, Tab, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Backspace, Delete, Space, a character, with Control+, Shift+, Alt+, Meta+"),
            opt("element_index", FieldKind::Index, "Focus this element first (else the key goes to whatever has focus)"),
        ],
        does: "`{\"action\": \"press_key\", \"key\": \"Enter\"}`: real key events with the key's `key`, `code`, text and modifiers (modifiers down first, up last; `Control+A`, `Control+C`/`X`/`V`, `Control+Z` run their editing commands), sent to the element after focusing it (a visually hidden control too, such as a terminal's helper textarea) or to whatever has focus; then the usual wait. A slider moves by arrow keys, a chat box submits on Enter, a date picker walks by arrows, Escape closes a menu.",
    },
    ActionSpec {
        name: "drag",
        example: r#"{"action":"drag","element_index":7,"dx":120,"dy":0}"#,
        extension: true,
        summary: "Drag an element onto another (to_element_index) or by an offset (dx, dy in pixels): sliders, sortable lists, boards, drag and drop.",
        fields: &[
            req("element_index", FieldKind::Index, "The element to drag"),
            opt("to_element_index", FieldKind::Index, "Drop it on this element"),
            opt("dx", FieldKind::Offset, "Or move it this many pixels right (negative: left)"),
            opt("dy", FieldKind::Offset, "and this many pixels down (negative: up)"),
        ],
        does: "`{\"action\": \"drag\", \"element_index\": N, \"to_element_index\": M}` or `{…, \"dx\": 120, \"dy\": 0}`: re-checks the element as a click does, presses the left button on it, moves the pointer to the target in 12 steps with the button held, releases it there (a slider's thumb, a sortable list's row, a jQuery UI draggable follow); onto an element it lets go a little past the target's click point in the direction of travel (at most 6 px, inside it), as a hand does, so a sortable list moves the row into the target's place whichever way it goes. A page that starts an HTML5 drag (`draggable`, `dragstart`) gets it: Chromium's drag is intercepted and entered, dragged over and dropped at the target. Listed to be dragged: an element with `draggable=\"true\"`, the rows of a jQuery UI `sortable()` list and the grips of a `resizable()` box (`hint:\"resize-right\"`, `resize-bottom`, `resize-bottom-right`). Exactly one target: `to_element_index`, or `dx`/`dy`.",
    },
    ActionSpec {
        name: "switch_tab",
        example: r#"{"action":"switch_tab","tab":2}"#,
        extension: true,
        summary: "Make another open tab current (tabs are numbered from 1 in the order they opened, as page_content's [tabs: …] line lists them).",
        fields: &[req("tab", FieldKind::Tab, "The tab's number, from 1")],
        does: "`{\"action\": \"switch_tab\", \"tab\": 1}`: the state is that tab's. When a page opens a new tab or window, the state follows it and `page_content` ends with `[tabs: 1 \"Shop\" · 2 \"Checkout\" (current); switch_tab or close_tab by number]`; tabs are numbered from 1 in the order they opened. A number that is not an open tab is `ACTION_VALIDATION_FAILED`.",
    },
    ActionSpec {
        name: "close_tab",
        example: r#"{"action":"close_tab","tab":2}"#,
        extension: true,
        summary: "Close an open tab by its number (never the only one).",
        fields: &[req("tab", FieldKind::Tab, "The tab's number, from 1")],
        does: "`{\"action\": \"close_tab\", \"tab\": 2}` closes that tab (`window.onbeforeunload` does not hold it); closing the current one returns to the tab that opened it, else the last one opened. The only tab cannot be closed (`ACTION_VALIDATION_FAILED`: end the task instead).",
    },
    ActionSpec {
        name: "go_back",
        example: r#"{"action":"go_back"}"#,
        extension: true,
        summary: "Go back to the previous page of this tab's history.",
        fields: &[],
        does: "The browser's Back button: the previous entry of the tab's history, then the wait. With none, `NAVIGATION_FAILED` and nothing changes.",
    },
    ActionSpec {
        name: "go_forward",
        example: r#"{"action":"go_forward"}"#,
        extension: true,
        summary: "Go forward to the next page of this tab's history.",
        fields: &[],
        does: "The browser's Forward button: the next entry of the tab's history, then the wait. With none, `NAVIGATION_FAILED` and nothing changes.",
    },
    ActionSpec {
        name: "request_human",
        example: r#"{"action":"request_human","reason":"Enter the code sent to your phone"}"#,
        extension: true,
        summary: "Hand the page to a person where only a person can go on (a second factor, a CAPTCHA, a consent screen); the state's human.live_url is the link to give them.",
        fields: &[req("reason", FieldKind::Message, "What the person should do")],
        does: "`{\"action\": \"request_human\", \"reason\": \"…\"}` (on `serve`, `env --live`): parks the session for a person and answers the same State Object with `human: {\"live_url\", \"expires_in_s\"}`, the live view's single-session link; until the hand-back every other action answers `handed_over` (HTTP 409; `HANDED_OVER` over `env`) and changes nothing. See [A person in the loop](#a-person-in-the-loop). Elsewhere `HUMAN_UNAVAILABLE`.",
    },
    ActionSpec {
        name: "wait_for_human",
        example: r#"{"action":"wait_for_human","timeout_s":300}"#,
        extension: true,
        summary: "Wait until the person hands the page back; the next state carries their note and the pages they visited.",
        fields: &[opt("timeout_s", FieldKind::Seconds, "How long to wait (default 300, at most 3600)")],
        does: "`{\"action\": \"wait_for_human\", \"timeout_s\": 300}` (on `serve`, `env --live`): waits for the person's **Hand back**, then answers a fresh State Object with `human: {\"note\", \"visited\", \"fields\", \"inputs\", \"held_s\"}`. Past `timeout_s`: the previous state with `HUMAN_TIMEOUT`, and the session stays handed over; with nothing asked (or the hand-back already collected), `HUMAN_UNAVAILABLE`.",
    },
    ActionSpec {
        name: "finish_task",
        example: r#"{"action":"finish_task","message":"Signed in."}"#,
        extension: false,
        summary: "The task is done.",
        fields: &[req("message", FieldKind::Message, "A short summary")],
        does: "ends the run as finished (see `env`).",
    },
    ActionSpec {
        name: "fail_task",
        example: r#"{"action":"fail_task","message":"The site is down."}"#,
        extension: false,
        summary: "The task cannot be done.",
        fields: &[req("message", FieldKind::Message, "Why")],
        does: "ends the run as failed (see `env`).",
    },
];

/// The JSON Schema of one Action Object (`act`'s `action`): one alternative per
/// row of the table, each with its `action` name and its fields.
pub fn action_object_schema() -> Value {
    let alternatives: Vec<Value> = ACTION_TABLE
        .iter()
        .map(|a| {
            let mut s = a.schema();
            s["properties"]["action"] = serde_json::json!({ "const": a.name });
            if let Some(r) = s["required"].as_array_mut() {
                r.insert(0, Value::from("action"));
            }
            s["description"] = Value::from(a.summary);
            s
        })
        .collect();
    serde_json::json!({ "description": "One Action Object of the element-index protocol", "oneOf": alternatives })
}

/// [`action_object_schema`] for a `schemars` field (`#[schemars(schema_with = …)]`).
pub fn action_object_json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::Schema::try_from(action_object_schema()).expect("the schema is an object")
}

/// The row of an action name.
pub fn spec(name: &str) -> Option<&'static ActionSpec> {
    ACTION_TABLE.iter().find(|s| s.name == name)
}

/// Every action's wire name, in the table's order.
pub fn action_names() -> Vec<&'static str> {
    ACTION_TABLE.iter().map(|s| s.name).collect()
}

impl ActionSpec {
    /// The JSON Schema of the action's fields (without `action`): what a tool
    /// call's arguments must be.
    pub fn schema(&self) -> Value {
        let mut props = Map::new();
        for f in self.fields {
            props.insert(f.name.into(), field_schema(f));
        }
        let required: Vec<Value> = self.fields.iter().filter(|f| f.required).map(|f| Value::from(f.name)).collect();
        serde_json::json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
    }

    /// README's row: the action's name and what Sightline does.
    pub fn readme_row(&self) -> String {
        let ext = if self.extension { "**Extension.** " } else { "" };
        format!("| `{}` | {ext}{} |", self.name, self.does)
    }
}

fn field_schema(f: &Field) -> Value {
    use serde_json::json;
    let about = f.about;
    match f.kind {
        FieldKind::Index => json!({ "type": "integer", "minimum": 1, "description": about }),
        FieldKind::Count => json!({ "type": "integer", "enum": [1, 2], "description": about }),
        FieldKind::Text | FieldKind::Message => json!({ "type": "string", "description": about }),
        FieldKind::Bool => json!({ "type": "boolean", "description": about }),
        FieldKind::Direction => {
            json!({ "type": "string", "enum": ["up", "down", "left", "right"], "description": about })
        }
        FieldKind::Pixels => json!({ "type": "integer", "minimum": 1, "description": about }),
        FieldKind::Url => json!({ "type": "string", "description": about }),
        FieldKind::Paths => {
            json!({ "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 32, "description": about })
        }
        FieldKind::Key => json!({ "type": "string", "description": about }),
        FieldKind::Tab => json!({ "type": "integer", "minimum": 1, "description": about }),
        FieldKind::Seconds => {
            json!({ "type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECONDS, "description": about })
        }
        FieldKind::Offset => {
            json!({ "type": "integer", "minimum": -MAX_DRAG_OFFSET, "maximum": MAX_DRAG_OFFSET, "description": about })
        }
    }
}
