//! Text helpers shared by descriptors, page text and marks.

use crate::arena::{Arena, NodeId, NodeKind};

const NO_TEXT: &[&str] = &["script", "style", "noscript", "template", "head", "title"];

/// Collapse runs of whitespace to one space and trim.
pub fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// Cut to at most `max` characters, marking the cut with `…`.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// Rendered text under `id` (text with a layout box, not hidden), about `limit`
/// characters at most. With `dom_fallback`, use DOM text when nothing is rendered
/// (the options of a closed `<select>` have no boxes).
pub fn visible_text(arena: &Arena, id: NodeId, limit: usize, dom_fallback: bool) -> String {
    let mut out = String::new();
    collect(arena, id, limit, &mut out, false);
    if out.trim().is_empty() && dom_fallback {
        out.clear();
        collect(arena, id, limit, &mut out, true);
    }
    out
}

fn collect(arena: &Arena, id: NodeId, limit: usize, out: &mut String, dom: bool) {
    if out.len() > limit {
        return;
    }
    let n = arena.node(id);
    if n.in_ua_shadow || NO_TEXT.contains(&n.tag.as_str()) {
        return;
    }
    if n.kind == NodeKind::Text {
        let text = if dom {
            Some(n.value.as_str())
        } else {
            n.layout.as_ref().filter(|l| l.style.visible && !n.opacity_hidden).and_then(|l| l.text.as_deref())
        };
        if let Some(t) = text {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            out.push_str(t);
        }
        return;
    }
    // Text inside an iframe is not the element's own text.
    if matches!(n.tag.as_str(), "iframe" | "frame") {
        return;
    }
    for &c in &n.children {
        collect(arena, c, limit, out, dom);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_and_cut() {
        assert_eq!(collapse("  a \n\t b  "), "a b");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}
