//! The actions of the element-index protocol (the seed's seven and Sightline's
//! extensions), one row each in [`ACTION_TABLE`], validated strictly.
//!
//! Anything that is not exactly one of the table's shapes is rejected with a
//! message naming the field and what was expected: not JSON, not an object,
//! an unknown action, a missing, mistyped or unknown field, a non-integer or
//! negative number, a bad direction, a relative URL, a key no keyboard has.
//!
//! Adding an action is one row in [`ACTION_TABLE`] plus its [`Action`] variant,
//! its arm in [`Action::from_value`] and its handler in `Env`: the field check,
//! the JSON Schemas (the agent runner's tools, `act`), README's table and the
//! list of names all follow from the row, and the tests below hold the rest to it.

use serde_json::{Map, Value};

pub use sightline_browser::Direction;

mod table;
pub use table::*;

/// One validated action.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `count` is Sightline's extension: 2 is a double click (default 1).
    ClickElement {
        element_index: u64,
        count: u8,
    },
    /// Sightline's extension: move the pointer onto an element (hover menus, hover-only buttons).
    HoverElement {
        element_index: u64,
    },
    InputText {
        element_index: u64,
        text: String,
        overwrite: bool,
    },
    SelectOption {
        element_index: u64,
        option_index: u64,
    },
    /// `element_index` is Sightline's extension: scroll that element's scroll container.
    Scroll {
        direction: Direction,
        pixels: Option<u64>,
        element_index: Option<u64>,
    },
    Navigate {
        url: String,
    },
    FinishTask {
        message: String,
    },
    FailTask {
        message: String,
    },
    /// Sightline's extension: choose files (names inside the operator's `--files`
    /// directory) for a file input, or for the input whose chooser a click on the element opened.
    UploadFile {
        element_index: u64,
        paths: Vec<String>,
    },
    /// Sightline's extension: a key or chord, on the element (focused first) or on whatever has focus.
    PressKey {
        key: String,
        element_index: Option<u64>,
    },
    /// Sightline's extension: press on an element, move, release on another element or at an offset.
    Drag {
        element_index: u64,
        to: DragTarget,
    },
    /// Sightline's extension: make tab N (from 1, in the order tabs opened) current.
    SwitchTab {
        tab: u64,
    },
    /// Sightline's extension: close tab N.
    CloseTab {
        tab: u64,
    },
    /// Sightline's extension: the previous page of the tab's history.
    GoBack,
    /// Sightline's extension: the next page of the tab's history.
    GoForward,
    /// Sightline's extension (`serve`): hand the tab to a person; the State Object carries the live link.
    RequestHuman {
        reason: String,
    },
    /// Sightline's extension (`serve`): wait for the person's hand-back (seconds, default 300).
    WaitForHuman {
        timeout_s: Option<u64>,
    },
}

impl Action {
    /// The action's wire name, its row in [`ACTION_TABLE`].
    pub fn name(&self) -> &'static str {
        match self {
            Action::ClickElement { .. } => "click_element",
            Action::HoverElement { .. } => "hover_element",
            Action::InputText { .. } => "input_text",
            Action::SelectOption { .. } => "select_option",
            Action::Scroll { .. } => "scroll",
            Action::Navigate { .. } => "navigate",
            Action::FinishTask { .. } => "finish_task",
            Action::FailTask { .. } => "fail_task",
            Action::UploadFile { .. } => "upload_file",
            Action::PressKey { .. } => "press_key",
            Action::Drag { .. } => "drag",
            Action::SwitchTab { .. } => "switch_tab",
            Action::CloseTab { .. } => "close_tab",
            Action::GoBack => "go_back",
            Action::GoForward => "go_forward",
            Action::RequestHuman { .. } => "request_human",
            Action::WaitForHuman { .. } => "wait_for_human",
        }
    }

    /// Whether it hands the page to a person or waits for one (only where a live view is served).
    pub fn needs_person(&self) -> bool {
        matches!(self, Action::RequestHuman { .. } | Action::WaitForHuman { .. })
    }
}

/// Where a `drag` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DragTarget {
    /// On another element of the same state.
    Element(u64),
    /// This many CSS pixels right (`dx`) and down (`dy`) from where it started.
    By { dx: i64, dy: i64 },
}

/// The farthest a `drag` may move by `dx` or `dy`, in CSS pixels.
pub const MAX_DRAG_OFFSET: i64 = 10_000;

/// Why an action was rejected (becomes `ACTION_VALIDATION_FAILED`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    pub message: String,
}

fn fail<T>(message: impl Into<String>) -> Result<T, ValidationError> {
    Err(ValidationError { message: message.into() })
}

/// URL schemes `navigate` accepts. `javascript:` is refused: it would run agent code in the page.
pub use sightline_policy::NAVIGABLE_SCHEMES;

struct Fields<'a> {
    action: &'a str,
    obj: &'a Map<String, Value>,
}

impl Fields<'_> {
    /// Refuse a field the action's row does not name.
    fn allow_row(&self, spec: &ActionSpec) -> Result<(), ValidationError> {
        for k in self.obj.keys() {
            if k != "action" && !spec.fields.iter().any(|f| f.name == k) {
                let names: Vec<&str> = spec.fields.iter().map(|f| f.name).collect();
                let expected = if names.is_empty() { "no other fields".to_string() } else { names.join(", ") };
                return fail(format!("unknown field '{k}' for {}: expected {expected}", self.action));
            }
        }
        Ok(())
    }

    fn index(&self, name: &str) -> Result<u64, ValidationError> {
        match self.obj.get(name) {
            None => fail(format!("{} requires '{name}' (a non-negative integer)", self.action)),
            Some(v) => as_index(name, v),
        }
    }

    fn opt_index(&self, name: &str) -> Result<Option<u64>, ValidationError> {
        self.obj.get(name).map(|v| as_index(name, v)).transpose()
    }

    fn string(&self, name: &str) -> Result<String, ValidationError> {
        match self.obj.get(name) {
            None => fail(format!("{} requires '{name}' (a string)", self.action)),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => fail(format!("'{name}' must be a string, got {}", kind(v))),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn as_index(name: &str, v: &Value) -> Result<u64, ValidationError> {
    match v {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Ok(u),
            (None, Some(_)) => fail(format!("'{name}' must be a non-negative integer, got {n}")),
            _ => fail(format!("'{name}' must be an integer, got {n}")),
        },
        other => fail(format!("'{name}' must be a non-negative integer, got {}", kind(other))),
    }
}

/// A `tab` field: a number from 1.
fn tab_number(f: &Fields) -> Result<u64, ValidationError> {
    match f.index("tab")? {
        0 => fail("'tab' numbers start at 1, got 0"),
        n => Ok(n),
    }
}

/// The most text one `input_text` action may type, in characters.
pub const MAX_TEXT_CHARS: usize = 100_000;

/// Check that `url` is absolute, with a scheme `navigate` accepts, a host for
/// http(s) and no user name or password (parsed as Chromium parses it).
pub fn check_url(url: &str) -> Result<(), ValidationError> {
    sightline_policy::parse_navigable(url).map(|_| ()).map_err(|e| ValidationError { message: format!("'url': {e}") })
}

/// Text an `input_text` action may type: at most [`MAX_TEXT_CHARS`], no NUL.
pub fn check_text(text: &str) -> Result<(), ValidationError> {
    if text.len() > MAX_TEXT_CHARS && text.chars().count() > MAX_TEXT_CHARS {
        return fail(format!(
            "'text' is {} characters long; one input_text may type at most {MAX_TEXT_CHARS}",
            text.chars().count()
        ));
    }
    if let Some(i) = text.find('\0') {
        return fail(format!("'text' contains a NUL character (at byte {i}), which cannot be typed"));
    }
    Ok(())
}

impl Action {
    /// Parse and validate one line of agent input.
    pub fn parse(line: &str) -> Result<Action, ValidationError> {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return fail(format!("not valid JSON: {e}")),
        };
        Action::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Action, ValidationError> {
        let Value::Object(obj) = v else {
            return fail(format!("an action must be a JSON object, got {}", kind(v)));
        };
        let names = || action_names().join(", ");
        let action = match obj.get("action") {
            None => return fail(format!("missing 'action': expected one of {}", names())),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => return fail(format!("'action' must be a string, got {}", kind(other))),
        };
        let Some(row) = spec(action) else {
            return fail(format!("unknown action '{action}': expected one of {}", names()));
        };
        let f = Fields { action, obj };
        f.allow_row(row)?;
        match action {
            "click_element" => {
                let count = match f.opt_index("count")? {
                    None | Some(1) => 1,
                    Some(2) => 2,
                    Some(n) => return fail(format!("'count' must be 1 (a click) or 2 (a double click), got {n}")),
                };
                Ok(Action::ClickElement { element_index: f.index("element_index")?, count })
            }
            "hover_element" => Ok(Action::HoverElement { element_index: f.index("element_index")? }),
            "input_text" => {
                let overwrite = match obj.get("overwrite") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(v) => return fail(format!("'overwrite' must be a boolean, got {}", kind(v))),
                };
                let text = f.string("text")?;
                check_text(&text)?;
                Ok(Action::InputText { element_index: f.index("element_index")?, text, overwrite })
            }
            "select_option" => Ok(Action::SelectOption {
                element_index: f.index("element_index")?,
                option_index: f.index("option_index")?,
            }),
            "scroll" => {
                let d = f.string("direction").map_err(|_| ValidationError {
                    message: "scroll requires 'direction': one of \"up\", \"down\", \"left\", \"right\"".into(),
                })?;
                let direction = match d.as_str() {
                    "up" => Direction::Up,
                    "down" => Direction::Down,
                    "left" => Direction::Left,
                    "right" => Direction::Right,
                    other => {
                        return fail(format!(
                            "'direction' must be one of \"up\", \"down\", \"left\", \"right\", got \"{other}\""
                        ))
                    }
                };
                let pixels = f.opt_index("pixels")?;
                if pixels == Some(0) {
                    return fail("'pixels' must be a positive integer, got 0");
                }
                Ok(Action::Scroll { direction, pixels, element_index: f.opt_index("element_index")? })
            }
            "navigate" => {
                let url = f.string("url")?;
                check_url(url.trim())?;
                Ok(Action::Navigate { url: url.trim().to_string() })
            }
            "finish_task" => Ok(Action::FinishTask { message: f.string("message")? }),
            "fail_task" => Ok(Action::FailTask { message: f.string("message")? }),
            "upload_file" => {
                let paths = crate::files::parse_paths(obj.get("paths"))?;
                Ok(Action::UploadFile { element_index: f.index("element_index")?, paths })
            }
            "press_key" => {
                let key = f.string("key")?;
                sightline_browser::keys::chord(&key).map_err(|e| ValidationError { message: format!("'key': {e}") })?;
                Ok(Action::PressKey { key, element_index: f.opt_index("element_index")? })
            }
            "drag" => {
                let element_index = f.index("element_index")?;
                let offset = |name: &str| -> Result<Option<i64>, ValidationError> {
                    match obj.get(name) {
                        None => Ok(None),
                        Some(Value::Number(n)) => match n.as_i64() {
                            Some(v) if v.abs() <= MAX_DRAG_OFFSET => Ok(Some(v)),
                            Some(v) => fail(format!("'{name}' must be within ±{MAX_DRAG_OFFSET} pixels, got {v}")),
                            None => fail(format!("'{name}' must be an integer, got {n}")),
                        },
                        Some(v) => fail(format!("'{name}' must be an integer, got {}", kind(v))),
                    }
                };
                let (dx, dy) = (offset("dx")?, offset("dy")?);
                let to = match (f.opt_index("to_element_index")?, dx, dy) {
                    (Some(t), None, None) => DragTarget::Element(t),
                    (None, None, None) => return fail("drag requires 'to_element_index', or 'dx' and/or 'dy'"),
                    (None, dx, dy) => DragTarget::By { dx: dx.unwrap_or(0), dy: dy.unwrap_or(0) },
                    (Some(_), _, _) => return fail("drag takes 'to_element_index' or 'dx'/'dy', not both"),
                };
                Ok(Action::Drag { element_index, to })
            }
            "switch_tab" => Ok(Action::SwitchTab { tab: tab_number(&f)? }),
            "close_tab" => Ok(Action::CloseTab { tab: tab_number(&f)? }),
            "go_back" => Ok(Action::GoBack),
            "go_forward" => Ok(Action::GoForward),
            "request_human" => {
                let reason = f.string("reason")?;
                if reason.trim().is_empty() || reason.len() > 2000 {
                    return fail("'reason' must say what the person should do, in 1 to 2000 bytes");
                }
                Ok(Action::RequestHuman { reason })
            }
            "wait_for_human" => match f.opt_index("timeout_s")? {
                Some(t) if t > MAX_WAIT_SECONDS => {
                    fail(format!("'timeout_s' must be at most {MAX_WAIT_SECONDS}, got {t}"))
                }
                timeout_s => Ok(Action::WaitForHuman { timeout_s }),
            },
            other => fail(format!("unknown action '{other}': expected one of {}", names())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        Action::parse(s).unwrap_err().message
    }

    #[test]
    fn accepts_the_seven_shapes() {
        assert_eq!(
            Action::parse(r#"{"action":"click_element","element_index":4}"#),
            Ok(Action::ClickElement { element_index: 4, count: 1 })
        );
        assert_eq!(
            Action::parse(r#"{"action":"input_text","element_index":12,"text":"a@b.c","overwrite":true}"#),
            Ok(Action::InputText { element_index: 12, text: "a@b.c".into(), overwrite: true })
        );
        assert_eq!(
            Action::parse(r#"{"action":"input_text","element_index":1,"text":"x"}"#),
            Ok(Action::InputText { element_index: 1, text: "x".into(), overwrite: false })
        );
        assert_eq!(
            Action::parse(r#"{"action":"select_option","element_index":21,"option_index":23}"#),
            Ok(Action::SelectOption { element_index: 21, option_index: 23 })
        );
        assert_eq!(
            Action::parse(r#"{"action":"scroll","direction":"down","pixels":800}"#),
            Ok(Action::Scroll { direction: Direction::Down, pixels: Some(800), element_index: None })
        );
        assert_eq!(
            Action::parse(r#"{"action":"navigate","url":"https://clawpedia.io/docs"}"#),
            Ok(Action::Navigate { url: "https://clawpedia.io/docs".into() })
        );
        assert!(matches!(Action::parse(r#"{"action":"finish_task","message":"ok"}"#), Ok(Action::FinishTask { .. })));
        assert!(matches!(Action::parse(r#"{"action":"fail_task","message":"no"}"#), Ok(Action::FailTask { .. })));
    }

    #[test]
    fn keys_and_history() {
        assert_eq!(
            Action::parse(r#"{"action":"press_key","key":"Enter"}"#),
            Ok(Action::PressKey { key: "Enter".into(), element_index: None })
        );
        assert_eq!(
            Action::parse(r#"{"action":"press_key","key":"Control+A","element_index":3}"#),
            Ok(Action::PressKey { key: "Control+A".into(), element_index: Some(3) })
        );
        assert_eq!(Action::parse(r#"{"action":"go_back"}"#), Ok(Action::GoBack));
        assert_eq!(Action::parse(r#"{"action":"go_forward"}"#), Ok(Action::GoForward));
        assert!(err(r#"{"action":"press_key","key":"Hyper+A"}"#).contains("not a modifier"));
        assert!(err(r#"{"action":"press_key","key":"Banana"}"#).contains("is not a key"));
        assert_eq!(err(r#"{"action":"press_key"}"#), "press_key requires 'key' (a string)");
        assert_eq!(
            err(r#"{"action":"go_back","url":"x"}"#),
            "unknown field 'url' for go_back: expected no other fields"
        );
    }

    /// A minimal valid instance of each field kind.
    fn sample(kind: FieldKind) -> Value {
        match kind {
            FieldKind::Index | FieldKind::Pixels | FieldKind::Count => Value::from(1),
            FieldKind::Text | FieldKind::Message => Value::from("x"),
            FieldKind::Bool => Value::from(true),
            FieldKind::Direction => Value::from("down"),
            FieldKind::Url => Value::from("https://example.test/"),
            FieldKind::Paths => serde_json::json!(["a.txt"]),
            FieldKind::Key => Value::from("Enter"),
            FieldKind::Offset => Value::from(-5),
            FieldKind::Tab | FieldKind::Seconds => Value::from(1),
        }
    }

    #[test]
    fn every_row_of_the_table_parses_to_its_action() {
        for row in ACTION_TABLE {
            let a = Action::parse(row.example).unwrap_or_else(|e| panic!("{}: {}", row.name, e.message));
            assert_eq!(a.name(), row.name);
            // With only its required fields (where they are enough), and with every
            // field but those a rule makes exclusive, it parses too.
            let mut required = Map::new();
            required.insert("action".into(), Value::from(row.name));
            for f in row.fields.iter().filter(|f| f.required) {
                required.insert(f.name.into(), sample(f.kind));
            }
            if row.name != "drag" {
                let a = Action::from_value(&Value::Object(required))
                    .unwrap_or_else(|e| panic!("{}: {}", row.name, e.message));
                assert_eq!(a.name(), row.name);
            }
            // Its schema names the same fields.
            let schema = row.schema();
            assert_eq!(schema["properties"].as_object().unwrap().len(), row.fields.len(), "{}", row.name);
        }
    }

    #[test]
    fn a_drag_has_exactly_one_target() {
        assert_eq!(
            Action::parse(r#"{"action":"drag","element_index":2,"to_element_index":9}"#),
            Ok(Action::Drag { element_index: 2, to: DragTarget::Element(9) })
        );
        assert_eq!(
            Action::parse(r#"{"action":"drag","element_index":2,"dx":-40}"#),
            Ok(Action::Drag { element_index: 2, to: DragTarget::By { dx: -40, dy: 0 } })
        );
        assert_eq!(
            err(r#"{"action":"drag","element_index":2}"#),
            "drag requires 'to_element_index', or 'dx' and/or 'dy'"
        );
        assert!(err(r#"{"action":"drag","element_index":2,"to_element_index":3,"dx":1}"#).contains("not both"));
        assert!(err(r#"{"action":"drag","element_index":2,"dx":1.5}"#).contains("must be an integer"));
        assert!(err(r#"{"action":"drag","element_index":2,"dy":99999}"#).contains("within"));
    }

    /// README's table of actions is the table's rows (regenerate it from the failure message).
    #[test]
    fn readme_lists_every_action_as_the_table_says() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
        let rows: Vec<String> = ACTION_TABLE.iter().map(ActionSpec::readme_row).collect();
        let table = format!("| action | what Sightline does |\n|---|---|\n{}\n", rows.join("\n"));
        assert!(readme.contains(&table), "README's table of actions should read:\n\n{table}");
    }

    #[test]
    fn names_what_is_wrong() {
        assert!(err("{nope").starts_with("not valid JSON"));
        assert_eq!(err("[1]"), "an action must be a JSON object, got an array");
        assert!(err(r#"{"element_index":1}"#).starts_with("missing 'action'"));
        assert!(err(r#"{"action":"hover"}"#).starts_with("unknown action 'hover'"));
        assert_eq!(
            err(r#"{"action":"click_element"}"#),
            "click_element requires 'element_index' (a non-negative integer)"
        );
        assert_eq!(
            err(r#"{"action":"click_element","element_index":"4"}"#),
            "'element_index' must be a non-negative integer, got a string"
        );
        assert_eq!(
            err(r#"{"action":"click_element","element_index":-1}"#),
            "'element_index' must be a non-negative integer, got -1"
        );
        assert_eq!(
            err(r#"{"action":"click_element","element_index":1.5}"#),
            "'element_index' must be an integer, got 1.5"
        );
        assert!(err(r#"{"action":"click_element","element_index":1,"x":2}"#)
            .starts_with("unknown field 'x' for click_element"));
        assert_eq!(
            err(r#"{"action":"input_text","element_index":1,"text":5}"#),
            "'text' must be a string, got a number"
        );
        assert_eq!(
            err(r#"{"action":"input_text","element_index":1,"text":"a","overwrite":"yes"}"#),
            "'overwrite' must be a boolean, got a string"
        );
        assert!(err(r#"{"action":"scroll","direction":"sideways"}"#).starts_with("'direction' must be one of"));
        assert!(err(r#"{"action":"scroll"}"#).starts_with("scroll requires 'direction'"));
        assert_eq!(
            err(r#"{"action":"scroll","direction":"up","pixels":0}"#),
            "'pixels' must be a positive integer, got 0"
        );
        assert!(err(r#"{"action":"navigate","url":"/docs"}"#).contains("absolute URL"));
        assert!(err(r#"{"action":"navigate","url":"javascript:alert(1)"}"#).contains("not allowed"));
        assert!(
            err(r#"{"action":"navigate","url":"http://"}"#).contains("not an absolute URL"),
            "{}",
            err(r#"{"action":"navigate","url":"http://"}"#)
        );
        assert!(err(r#"{"action":"navigate","url":"file:///etc/passwd"}"#).contains("not allowed"));
        assert!(
            err(r#"{"action":"navigate","url":"https://example.com@evil.test/"}"#).contains("user name or password")
        );
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        assert!(
            err(&format!(r#"{{"action":"input_text","element_index":1,"text":"{long}"}}"#)).contains("at most 100000")
        );
        assert!(err(r#"{"action":"input_text","element_index":1,"text":"a\u0000b"}"#).contains("NUL"));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(err(&deep).starts_with("not valid JSON"), "{}", err(&deep));
        assert_eq!(err(r#"{"action":"finish_task"}"#), "finish_task requires 'message' (a string)");
        assert_eq!(
            Action::parse(r#"{"action":"upload_file","element_index":3,"paths":["a.pdf","b/c.txt"]}"#),
            Ok(Action::UploadFile { element_index: 3, paths: vec!["a.pdf".into(), "b/c.txt".into()] })
        );
        assert!(err(r#"{"action":"upload_file","element_index":3}"#).starts_with("upload_file requires 'paths'"));
        assert_eq!(
            err(r#"{"action":"upload_file","element_index":3,"paths":"a.pdf"}"#),
            "'paths' must be an array of strings"
        );
        assert!(err(r#"{"action":"upload_file","element_index":3,"paths":[]}"#).contains("1 to 32"));
        assert_eq!(err(r#"{"action":"upload_file","element_index":3,"paths":[""]}"#), "'paths'[0] is empty");
        assert_eq!(err(r#"{"action":"upload_file","element_index":3,"paths":["a",1]}"#), "'paths'[1] must be a string");
        assert!(
            err(r#"{"action":"upload_file","element_index":3,"paths":["a"],"x":1}"#).starts_with("unknown field 'x'")
        );
        assert!(err(r#"{"action":"upload_file","paths":["a"]}"#).contains("requires 'element_index'"));
    }
}

/// Generated input never panics the parser: every line is an action or a
/// validation error.
#[cfg(test)]
mod generated {
    use serde_json::{json, Value};

    use super::Action;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    const KEYS: &[&str] = &[
        "action",
        "element_index",
        "text",
        "overwrite",
        "option_index",
        "direction",
        "pixels",
        "url",
        "message",
        "count",
        "paths",
        "key",
        "",
        "\u{0}",
        "Action",
    ];
    const WORDS: &[&str] = &[
        "click_element",
        "input_text",
        "select_option",
        "scroll",
        "navigate",
        "finish_task",
        "fail_task",
        "hover_element",
        "upload_file",
        "press_key",
        "go_back",
        "go_forward",
        "Control+A",
        "Enter",
        "up",
        "down",
        "left",
        "right",
        "http://x.test/",
        "javascript:alert(1)",
        "data:,x",
        "file:///etc",
        "",
        "\u{0}",
        "\u{202e}",
        "http://169.254.169.254\\@8.8.8.8/",
        "//x",
        "𝔘",
    ];

    fn value(r: &mut Rng, depth: u32) -> Value {
        match r.below(if depth > 6 { 6 } else { 9 }) {
            0 => Value::Null,
            1 => json!(r.below(2) == 0),
            2 => json!(r.next() as i64),
            3 => json!((r.next() as f64) / 7.0 - 1e18),
            4 => json!(u64::MAX - r.below(3)),
            5 => json!(WORDS[r.below(WORDS.len() as u64) as usize]),
            6 => Value::Array((0..r.below(4)).map(|_| value(r, depth + 1)).collect()),
            _ => {
                let mut m = serde_json::Map::new();
                if r.below(4) != 0 {
                    m.insert("action".into(), json!(WORDS[r.below(8) as usize]));
                }
                for _ in 0..r.below(5) {
                    m.insert(KEYS[r.below(KEYS.len() as u64) as usize].into(), value(r, depth + 1));
                }
                Value::Object(m)
            }
        }
    }

    #[test]
    fn any_json_is_an_action_or_a_validation_error() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let v = value(&mut r, 0);
            let _ = Action::from_value(&v);
            let line = v.to_string();
            let _ = Action::parse(&line);
            // Truncated and byte-mangled lines too.
            let cut = line
                .char_indices()
                .nth(r.below(line.chars().count() as u64 + 1) as usize)
                .map_or(line.len(), |(i, _)| i);
            let _ = Action::parse(&line[..cut]);
        }
    }
}
