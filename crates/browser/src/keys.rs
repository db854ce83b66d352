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
