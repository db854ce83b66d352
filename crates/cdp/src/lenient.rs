//! Strings as Chromium sends them: JavaScript strings are UTF-16, and one may
//! hold a lone surrogate (`'a\uD800b'`, half of a pair cut by `slice`).
//! Chromium writes it as the escape `\ud800`, which is valid JSON text but no
//! Unicode scalar value, so serde_json refuses to decode it into a `String`
//! and a whole DOM snapshot (or title, console message, evaluate result, AX
//! name) would fail for one character. Every message is passed through
//! [`replace_lone_surrogates`] before it is parsed: each lone surrogate escape
//! becomes `\ufffd` (U+FFFD REPLACEMENT CHARACTER), what a lossy UTF-16
//! decoder gives; pairs and every other byte are left as they are.

use std::borrow::Cow;

const REPLACEMENT: &[u8] = br"\ufffd";

/// `text` with each escape of a lone UTF-16 surrogate (`\uD800`..`\uDFFF` not
/// part of a high-low pair) replaced by `\ufffd`. Borrows when there is none,
/// which is the common case: one pass of a substring search, nothing copied.
pub(crate) fn replace_lone_surrogates(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    // Bytes of `text` already copied into `out`.
    let mut copied = 0;
    // The end of the last pair passed over.
    let mut skip = 0;
    for i in memchr::memmem::find_iter(bytes, br"\u") {
        if i < skip {
            continue; // the low half of that pair
        }
        // An escape only when the backslash is not itself escaped (`\\u` is a
        // backslash and a `u`): an even run of backslashes before it.
        let run = bytes[..i].iter().rev().take_while(|b| **b == b'\\').count();
        if run % 2 == 1 {
            continue;
        }
        let Some(unit) = hex4(bytes, i + 2) else { continue };
        let lone = match unit {
            0xD800..=0xDBFF => {
                let low = (bytes.get(i + 6..i + 8) == Some(br"\u"))
                    .then(|| hex4(bytes, i + 8))
                    .flatten()
                    .filter(|u| (0xDC00..=0xDFFF).contains(u));
                if low.is_some() {
                    skip = i + 12;
                }
                low.is_none()
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let o = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
            o.extend_from_slice(&bytes[copied..i]);
            o.extend_from_slice(REPLACEMENT);
            copied = i + 6;
        }
    }
    match out {
        Some(mut o) => {
            o.extend_from_slice(&bytes[copied..]);
            // ASCII escapes were replaced by ASCII text: still UTF-8.
            Cow::Owned(String::from_utf8(o).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        }
        None => Cow::Borrowed(text),
    }
}

/// The UTF-16 unit of the four hex digits at `at`, if there are four.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, b| Some(acc * 16 + (*b as char).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(json: &str) -> String {
        serde_json::from_str::<String>(&replace_lone_surrogates(json)).unwrap()
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert!(serde_json::from_str::<String>(r#""a\ud800b""#).is_err(), "serde_json refuses them");
        assert_eq!(decoded(r#""a\ud800b""#), "a\u{fffd}b");
        assert_eq!(decoded(r#""a\uDC00b""#), "a\u{fffd}b");
        assert_eq!(decoded(r#""\ud800""#), "\u{fffd}");
        assert_eq!(decoded(r#""\ud800\ud800""#), "\u{fffd}\u{fffd}");
        // A low half before its high half is two lone halves.
        assert_eq!(decoded(r#""\udc00\ud800""#), "\u{fffd}\u{fffd}");
        // A high half followed by a non-surrogate escape.
        assert_eq!(decoded(r#""\ud800\u0041""#), "\u{fffd}A");
    }

    #[test]
    fn pairs_and_other_text_are_left_alone() {
        for s in [r#""a\ud83d\ude00b""#, r#""plain""#, r#""\u0041\n""#, r#""é😀""#, r#""\\ud800""#, r#""\\\\ud800""#]
        {
            assert!(matches!(replace_lone_surrogates(s), Cow::Borrowed(_)), "{s}");
        }
        assert_eq!(decoded(r#""a\ud83d\ude00b""#), "a😀b");
        assert_eq!(decoded(r#""\\ud800""#), r"\ud800");
        // An escaped backslash then a real escape.
        assert_eq!(decoded(r#""\\\ud800""#), "\\\u{fffd}");
        // A pair, then a lone half.
        assert_eq!(decoded(r#""\ud83d\ude00\ud800x""#), "😀\u{fffd}x");
    }

    #[test]
    fn whole_messages_decode() {
        let msg = r#"{"id":1,"result":{"strings":["a\ud800b","t\udfff"],"n":[1,2]}}"#;
        let v: serde_json::Value = serde_json::from_str(&replace_lone_surrogates(msg)).unwrap();
        assert_eq!(v["result"]["strings"][0], "a\u{fffd}b");
        assert_eq!(v["result"]["strings"][1], "t\u{fffd}");
        // Truncated escapes are left for the parser to refuse.
        assert!(matches!(replace_lone_surrogates(r#""\ud8"#), Cow::Borrowed(_)));
    }
}
