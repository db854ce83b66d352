//! Key events for typed text, as a keyboard would send them.

use sightline_cdp::protocol::input::{DispatchKeyEvent, KeyEventKind};

/// `Input.dispatchKeyEvent` params for pressing and releasing the key that types `c`.
/// `\n` is Enter (submits a form from a text input, breaks a line in a textarea);
/// `\t` is Tab (moves focus); `\u{8}` is Backspace.
pub(crate) fn key_events(c: char) -> [DispatchKeyEvent; 2] {
    match c {
        '\n' | '\r' => named("Enter", 13, Some("\r")),
        '\t' => named("Tab", 9, None),
        '\u{8}' => named("Backspace", 8, None),
        _ => {
            let s = c.to_string();
            let (code, vk) = code_of(c);
            [
                DispatchKeyEvent {
                    text: Some(s.clone()),
                    unmodified_text: Some(s.clone()),
                    ..DispatchKeyEvent::key(KeyEventKind::KeyDown, &s, &code, vk)
                },
                DispatchKeyEvent::key(KeyEventKind::KeyUp, &s, &code, vk),
            ]
        }
    }
}

/// A non-character key such as `End` or `Backspace`.
pub(crate) fn named(key: &str, vk: u32, text: Option<&str>) -> [DispatchKeyEvent; 2] {
    let down = match text {
        Some(t) => DispatchKeyEvent {
            text: Some(t.to_string()),
            unmodified_text: Some(t.to_string()),
            ..DispatchKeyEvent::key(KeyEventKind::KeyDown, key, key, vk)
        },
        None => DispatchKeyEvent::key(KeyEventKind::RawKeyDown, key, key, vk),
    };
    [down, DispatchKeyEvent::key(KeyEventKind::KeyUp, key, key, vk)]
}

/// The key names `press_key` accepts (besides any single character).
pub const NAMED_KEYS: &[&str] = &[
    "Enter",
    "Tab",
    "Escape",
    "Backspace",
    "Delete",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "Space",
];

/// A named key (`Enter`, `Tab`, `Escape`, `ArrowDown`, …) or a single character.
pub(crate) fn key_by_name(name: &str) -> Option<[DispatchKeyEvent; 2]> {
    let vk = match name {
        "Enter" => return Some(named("Enter", 13, Some("\r"))),
        "Tab" => 9,
        "Escape" => 27,
        "Backspace" => 8,
        "Delete" => 46,
        "ArrowUp" => 38,
        "ArrowDown" => 40,
        "ArrowLeft" => 37,
        "ArrowRight" => 39,
        "Home" => 36,
        "End" => 35,
        "PageUp" => 33,
        "PageDown" => 34,
        "Space" => return Some(key_events(' ')),
        _ => {
            let mut chars = name.chars();
            return match (chars.next(), chars.next()) {
                (Some(c), None) => Some(key_events(c)),
                _ => None,
            };
        }
    };
    Some(named(name, vk, None))
}

/// A modifier of a chord: its bit in `modifiers` (Alt=1, Ctrl=2, Meta=4,
/// Shift=8), its `key` and `code`, and its virtual key code.
fn modifier(name: &str) -> Option<(u32, &'static str, &'static str, u32)> {
    Some(match name {
        "Alt" | "Option" => (1, "Alt", "AltLeft", 18),
        "Control" | "Ctrl" => (2, "Control", "ControlLeft", 17),
        "Meta" | "Command" | "Cmd" => (4, "Meta", "MetaLeft", 91),
        "Shift" => (8, "Shift", "ShiftLeft", 16),
        _ => return None,
    })
}

/// Why a key name is not one `press_key` can press.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("'key' is empty")]
    Empty,
    #[error("{0:?} is not a modifier (Control, Shift, Alt, Meta)")]
    NotAModifier(String),
    #[error("{0:?} is not a key: use a single character or one of {keys}", keys = NAMED_KEYS.join(", "))]
    NotAKey(String),
}

/// The editing command Chromium runs for a chord with Control or Meta, which
/// headless Chromium does not map from the keys alone.
fn command_of(mods: u32, key: &str) -> Option<&'static str> {
    if mods & (2 | 4) == 0 || mods & 1 != 0 {
        return None;
    }
    Some(match (key.to_ascii_lowercase().as_str(), mods & 8 != 0) {
        ("a", false) => "selectAll",
        ("c", false) => "copy",
        ("x", false) => "cut",
        ("v", false) => "paste",
        ("z", false) => "undo",
        ("z", true) | ("y", false) => "redo",
        _ => return None,
    })
}

/// The key events of a key or chord as a keyboard sends them: `Enter`,
/// `ArrowDown`, `a`, `Control+A`, `Shift+Tab`, `Control+Shift+Z`. Modifiers go
/// down first and up last; the key carries them, and types text only with
/// Shift alone (`Shift+a` types `A`).
pub fn chord(name: &str) -> Result<Vec<DispatchKeyEvent>, KeyError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(KeyError::Empty);
    }
    // `+` alone, or a chord ending in `+` (`Control++`), presses the plus key.
    let (mods_part, key) = match name.strip_suffix("++") {
        Some(m) => (m, "+"),
        None if name == "+" => ("", "+"),
        None => match name.rsplit_once('+') {
            Some((m, k)) => (m, k),
            None => ("", name),
        },
    };
    let mut held = Vec::new();
    for m in mods_part.split('+').filter(|m| !m.is_empty()) {
        held.push(modifier(m).ok_or_else(|| KeyError::NotAModifier(m.to_string()))?);
    }
    let [mut down, mut up] = key_by_name(key).ok_or_else(|| KeyError::NotAKey(key.to_string()))?;
    let mut events = Vec::new();
    let mut mods = 0;
    for &(bit, k, code, vk) in &held {
        mods |= bit;
        events.push(DispatchKeyEvent {
            modifiers: Some(mods),
            ..DispatchKeyEvent::key(KeyEventKind::RawKeyDown, k, code, vk)
        });
    }
    if mods != 0 {
        let shift_only = mods == 8;
        if shift_only && key.chars().count() == 1 {
            let upper = key.to_uppercase();
            down.key.clone_from(&upper);
            down.text = Some(upper.clone());
            down.unmodified_text = Some(key.to_string());
            up.key = upper;
        } else if !shift_only {
            down.text = None;
            down.unmodified_text = None;
            down.kind = KeyEventKind::RawKeyDown;
        }
        down.modifiers = Some(mods);
        up.modifiers = Some(mods);
        if let Some(c) = command_of(mods, key) {
            down.commands = vec![c.to_string()];
        }
    }
    events.push(down);
    events.push(up);
    for &(bit, k, code, vk) in held.iter().rev() {
        mods &= !bit;
        events.push(DispatchKeyEvent {
            modifiers: (mods != 0).then_some(mods),
            ..DispatchKeyEvent::key(KeyEventKind::KeyUp, k, code, vk)
        });
    }
    Ok(events)
}

fn code_of(c: char) -> (String, u32) {
    match c {
        'a'..='z' | 'A'..='Z' => (format!("Key{}", c.to_ascii_uppercase()), c.to_ascii_uppercase() as u32),
        '0'..='9' => (format!("Digit{c}"), c as u32),
        ' ' => ("Space".into(), 32),
        '-' => ("Minus".into(), 189),
        '=' => ("Equal".into(), 187),
        ',' => ("Comma".into(), 188),
        '.' => ("Period".into(), 190),
        '/' => ("Slash".into(), 191),
        ';' => ("Semicolon".into(), 186),
        '\'' => ("Quote".into(), 222),
        '@' => ("Digit2".into(), 50),
        _ => (String::new(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_hold_their_modifiers_around_the_key() {
        let wire =
            |name: &str| chord(name).unwrap().into_iter().map(|e| serde_json::to_value(e).unwrap()).collect::<Vec<_>>();
        let e = wire("Control+A");
        assert_eq!(e.len(), 4);
        assert_eq!((e[0]["key"].as_str(), e[0]["modifiers"].as_u64()), (Some("Control"), Some(2)));
        assert_eq!((e[1]["key"].as_str(), e[1]["modifiers"].as_u64()), (Some("A"), Some(2)));
        assert_eq!(e[1]["commands"][0], "selectAll");
        assert!(e[1].get("text").is_none(), "Control+A types nothing");
        assert_eq!((e[3]["type"].as_str(), e[3].get("modifiers")), (Some("keyUp"), None));
        let e = wire("Shift+a");
        assert_eq!((e[1]["key"].as_str(), e[1]["text"].as_str()), (Some("A"), Some("A")));
        let e = wire("Shift+Enter");
        assert_eq!((e[1]["key"].as_str(), e[1]["modifiers"].as_u64()), (Some("Enter"), Some(8)));
        assert_eq!(wire("PageDown").len(), 2);
        assert_eq!(wire("Control++")[1]["key"], "+");
        assert_eq!(chord("Hyper+A").unwrap_err(), KeyError::NotAModifier("Hyper".into()));
        assert!(matches!(chord("Control+Banana"), Err(KeyError::NotAKey(_))));
        assert_eq!(chord(" ").unwrap_err(), KeyError::Empty);
    }

    #[test]
    fn enter_and_letters() {
        // As sent on the wire.
        let key_events = |c| key_events(c).map(|e| serde_json::to_value(e).unwrap());
        let [down, up] = key_events('\n');
        assert_eq!(down["key"], "Enter");
        assert_eq!(down["text"], "\r");
        assert_eq!(up["type"], "keyUp");
        let [down, _] = key_events('q');
        assert_eq!(down["code"], "KeyQ");
        assert_eq!(down["windowsVirtualKeyCode"], 81);
        assert_eq!(down["text"], "q");
    }
}
