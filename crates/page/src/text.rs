//! Text as it renders: CSS white-space collapsing across inline boundaries,
//! shared by page text, descriptors, names and marks.
//!
//! Chromium's snapshot gives each text node its text after `text-transform`
//! but before white-space processing. [`Flow`] applies the CSS rules itself:
//! inline boxes join exactly as written (`<b>$</b><i>42</i>` is `$42`), a
//! space appears only where the source has collapsible white space, spaces at
//! line starts and ends go, `pre` keeps everything, and `&nbsp;` stays a
//! no-break space. Block boundaries and `<br>` end a line; inside a one-line context
//! (a table cell, an inline-block, a name) they read as one space.

use crate::arena::{Arena, NodeId, NodeKind, WhiteSpace};
use crate::geometry::Rect;

const NO_TEXT: &[&str] = &["script", "style", "noscript", "template", "head", "title"];

/// Collapse runs of whitespace to one space and trim.
pub fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // CSS collapses ASCII white space only: a no-break space stays, as Chromium's names keep it.
    for w in s.split(collapsible).filter(|w| !w.is_empty()) {
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

fn collapsible(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}')
}

/// Builds lines of text from inline runs, the way a browser lays them out.
#[derive(Debug, Default)]
pub struct Flow {
    lines: Vec<String>,
    cur: String,
    prefix: String,
    /// A collapsible space was seen and not yet written (dropped at line ends).
    space: bool,
    /// The last thing written was an atom (`[3]link "x"`); a word right after it gets a space.
    after_atom: bool,
    /// Line breaks read as spaces (names, one-line contexts).
    pub single_line: bool,
    /// Stop collecting past this many characters in the current line.
    pub limit: usize,
    /// The current line started in preserved text: its indentation stays.
    keep_indent: bool,
    /// A block boundary was passed: the next content starts a new line unless it
    /// is laid out on the same row, to the right of the current line.
    pending_break: bool,
    /// Where the current line's content is on screen, as far as known.
    line_box: Option<Rect>,
}

/// Content at `r` continues a rendered line occupying `line`: it overlaps it
/// vertically by at least half of the shorter height, and starts at its right.
fn same_row(line: &Rect, r: &Rect) -> bool {
    let overlap = line.bottom().min(r.bottom()) - line.y.max(r.y);
    let shorter = line.h.min(r.h).max(1.0);
    overlap >= shorter * 0.5 && r.x >= line.right() - 2.0
}

impl Flow {
    pub fn new() -> Flow {
        Flow { limit: usize::MAX, ..Flow::default() }
    }

    /// A flow whose breaks are spaces: for names and descriptors.
    pub fn one_line(limit: usize) -> Flow {
        Flow { single_line: true, limit, ..Flow::default() }
    }

    pub fn full(&self) -> bool {
        self.cur.len() > self.limit
    }

    fn put(&mut self, c: char) {
        if (self.space && !self.cur.is_empty()) || (self.after_atom && c.is_alphanumeric()) {
            self.cur.push(' ');
        }
        self.space = false;
        self.after_atom = false;
        self.cur.push(c);
    }

    /// Resolve a pending block break before content laid out at `at`.
    fn place(&mut self, at: Option<Rect>) {
        if self.pending_break {
            self.pending_break = false;
            let joins = matches!((&self.line_box, &at), (Some(l), Some(r)) if same_row(l, r));
            if joins && !self.cur.trim_matches(collapsible).is_empty() {
                self.space = true;
            } else {
                self.end_line();
            }
        }
        if let Some(r) = at.filter(|r| !r.is_empty() && r.x.is_finite() && r.y.is_finite()) {
            self.line_box = Some(match self.line_box {
                Some(l) => l.union(&r),
                None => r,
            });
        }
    }

    /// A pending break becomes a real one (before structure that always starts a line).
    fn settle_break(&mut self) {
        if self.pending_break {
            self.pending_break = false;
            self.end_line();
        }
    }

    /// Inline text in a white-space mode.
    /// Inline text. Private-use characters (an icon font's glyph) are left out:
    /// no one reads them, and a name made only of them is no name.
    pub fn text(&mut self, s: &str, ws: WhiteSpace) {
        self.text_at(s, ws, None);
    }

    /// Inline text laid out at `at` (its box on screen, when known).
    pub fn text_at(&mut self, s: &str, ws: WhiteSpace, at: Option<Rect>) {
        if s.chars().any(|c| !collapsible(c) && !is_private_use(c)) {
            self.place(at);
        }
        for c in s.chars() {
            if self.full() {
                return;
            }
            if is_private_use(c) {
                continue;
            }
            match (ws, c) {
                (WhiteSpace::Collapse, c) if collapsible(c) => self.space = true,
                (WhiteSpace::PreserveBreaks, '\n') | (WhiteSpace::Preserve, '\n') => self.hard_break(),
                (WhiteSpace::PreserveBreaks, c) if collapsible(c) => self.space = true,
                (WhiteSpace::Preserve, '\r') => {}
                (WhiteSpace::Preserve, ' ' | '\t') => {
                    if self.cur.is_empty() && !self.single_line {
                        self.keep_indent = true;
                    }
                    if self.space && !self.cur.is_empty() {
                        self.cur.push(' ');
                    }
                    self.space = false;
                    self.after_atom = false;
                    self.cur.push(c);
                }
                (_, c) if c.is_control() => {}
                (_, c) => self.put(c),
            }
        }
    }

    /// An atomic piece (an element token, an image): separated from words by a space.
    pub fn atom(&mut self, s: &str) {
        self.atom_at(s, None);
    }

    /// An atomic piece laid out at `at`.
    pub fn atom_at(&mut self, s: &str, at: Option<Rect>) {
        if s.is_empty() {
            return;
        }
        self.place(at);
        // A space where the source has one, or to keep a word and the token apart;
        // `(` and other punctuation join: `([24]link "3 total")`.
        let word_before = self.cur.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '"' || c == ']');
        if (self.space || word_before) && !self.cur.is_empty() && !self.cur.ends_with(' ') {
            self.cur.push(' ');
        }
        self.space = false;
        self.cur.push_str(s);
        self.after_atom = true;
    }

    /// A soft separator: one space between what comes before and after.
    pub fn soft_break(&mut self) {
        self.space = true;
    }

    /// A `<br>` or a preserved newline.
    pub fn hard_break(&mut self) {
        self.settle_break();
        if self.single_line {
            self.space = true;
        } else if !self.cur.trim_matches(collapsible).is_empty() {
            self.end_line();
        } else if self.lines.last().is_some_and(|l| !l.is_empty()) {
            // Two breaks in a row: one blank line (a paragraph gap in a <pre>).
            self.end_line();
            self.lines.push(String::new());
        }
    }

    /// A position that changes whenever anything is written.
    pub fn mark(&self) -> (usize, usize) {
        (self.lines.len() * 2 + usize::from(self.pending_break), self.cur.len())
    }

    /// A block boundary.
    pub fn block_break(&mut self) {
        if self.single_line {
            self.space = true;
        } else if !self.cur.trim_matches(collapsible).is_empty() {
            self.pending_break = true;
        }
    }

    /// A table cell boundary: ` | ` between cells of one row.
    pub fn cell(&mut self) {
        self.settle_break();
        if !self.cur.trim_matches(collapsible).is_empty() {
            let t = self.cur.trim_end_matches(collapsible).len();
            self.cur.truncate(t);
            self.cur.push_str(" |");
            self.space = true;
            self.after_atom = false;
        }
    }

    /// Set the prefix of the line being built (`# `, `- `), starting it if needed.
    pub fn set_prefix(&mut self, p: &str) {
        if self.single_line {
            return;
        }
        self.pending_break = false;
        self.end_line();
        self.prefix = p.to_string();
    }

    /// Forget the prefix if nothing was written after it.
    pub fn drop_unused_prefix(&mut self) {
        if self.cur.trim_matches(collapsible).is_empty() {
            self.prefix.clear();
        }
    }

    /// Push a finished line of its own (`[dialog]` markers).
    pub fn raw_line(&mut self, s: String) {
        if self.single_line {
            self.atom(&s);
            return;
        }
        self.pending_break = false;
        self.end_line();
        self.lines.push(s);
    }

    fn end_line(&mut self) {
        // Only collapsible white space goes: a no-break space is text.
        let line =
            if self.keep_indent { self.cur.trim_end_matches(collapsible) } else { self.cur.trim_matches(collapsible) };
        if !line.trim_start_matches(collapsible).is_empty() {
            let line = format!("{}{}", self.prefix, line.trim_end_matches(" |"));
            self.lines.push(line);
        }
        self.cur.clear();
        self.prefix.clear();
        self.space = false;
        self.after_atom = false;
        self.keep_indent = false;
        self.line_box = None;
    }

    /// The lines, without trailing empty ones.
    pub fn finish(mut self) -> Vec<String> {
        self.pending_break = false;
        self.end_line();
        while self.lines.last().is_some_and(|l| l.is_empty()) {
            self.lines.pop();
        }
        self.lines
    }

    /// One line (for names): everything joined.
    pub fn finish_line(self) -> String {
        let limit = self.limit;
        let s = self.finish().join(" ");
        if s.len() > limit.saturating_add(1) {
            s.chars().take(limit).collect()
        } else {
            s
        }
    }
}

/// How an element's box sits in the text flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    Inline,
    /// `inline-block`, `inline-flex`, …: an inline unit whose inner blocks read on one line.
    InlineBlock,
    Block,
    Row,
    Cell,
    None,
}

pub fn display_of(arena: &Arena, id: NodeId) -> Display {
    let n = arena.node(id);
    let Some(l) = &n.layout else {
        // No box: `display: contents` or not rendered; its children decide.
        return if n.tag == "br" { Display::Block } else { Display::Inline };
    };
    let d = l.style.display.as_str();
    match d {
        "none" => Display::None,
        "inline" | "contents" | "" | "ruby" | "ruby-text" => Display::Inline,
        "table-cell" => Display::Cell,
        "table-row" => Display::Row,
        _ if d.starts_with("inline") => Display::InlineBlock,
        _ => Display::Block,
    }
}

/// White-space mode for the text inside `id` (its own style, or its nearest laid-out ancestor's).
pub fn white_space_of(arena: &Arena, id: NodeId) -> WhiteSpace {
    std::iter::once(id)
        .chain(arena.ancestors(id))
        .find_map(|a| {
            let n = arena.node(a);
            (n.is_element()).then_some(()).and(n.layout.as_ref()).map(|l| l.style.white_space)
        })
        .unwrap_or_default()
}

/// Rendered text under `id` on one line, at most about `limit` characters. With
/// `dom_fallback`, use DOM text when nothing is rendered (the options of a closed
/// `<select>` have no boxes).
pub fn visible_text(arena: &Arena, id: NodeId, limit: usize, dom_fallback: bool) -> String {
    let s = collect(arena, id, limit, Mode::default());
    if s.is_empty() && dom_fallback {
        return collect(arena, id, limit, Mode { dom: true, ..Mode::default() });
    }
    s
}

/// The visible text of an element as its accessible name reads it: without
/// what the author hid from assistive technology (`aria-hidden="true"`
/// descendants: decorative glyphs, the "1." before a chapter title).
pub fn accessible_text(arena: &Arena, id: NodeId, limit: usize) -> String {
    collect(arena, id, limit, Mode { skip_aria_hidden: true, ..Mode::default() })
}

/// The text of an element as accessible-name computation reads its content
/// (accname's "name from content"): rendered text without `aria-hidden`
/// descendants, an image's `alt` where the image is, and an embedded
/// control's value where the control is (`Remind me in [5] minutes`), except
/// `skip`'s own (a control named by the label that holds it). With
/// `dom_fallback`, DOM text when nothing is rendered (an `aria-labelledby`
/// target may be hidden).
pub fn name_text(arena: &Arena, id: NodeId, limit: usize, skip: Option<NodeId>, dom_fallback: bool) -> String {
    let mode = Mode { skip_aria_hidden: true, name: true, skip, ..Mode::default() };
    let s = collect(arena, id, limit, mode);
    if s.trim_matches(collapsible).is_empty() && dom_fallback {
        return collect(arena, id, limit, Mode { dom: true, ..mode });
    }
    s
}

/// The text a person typed into an editable element: rendered text without
/// CSS generated content (an editor's `::before` placeholder is no value).
pub fn typed_text(arena: &Arena, id: NodeId, limit: usize) -> String {
    collect(arena, id, limit, Mode { no_generated: true, ..Mode::default() })
}

/// [`name_text`] of an element an `aria-labelledby` points at: parts that show
/// no text are read by their `title` too, as Chromium reads them there.
pub fn referenced_text(arena: &Arena, id: NodeId, limit: usize) -> String {
    let mode = Mode { skip_aria_hidden: true, name: true, referenced: true, ..Mode::default() };
    let s = collect(arena, id, limit, mode);
    if s.trim_matches(collapsible).is_empty() {
        return collect(arena, id, limit, Mode { dom: true, ..mode });
    }
    s
}

/// How [`collect`] reads a subtree.
#[derive(Debug, Clone, Copy, Default)]
struct Mode {
    /// Leave CSS generated content out.
    no_generated: bool,
    /// DOM text, not rendered text.
    dom: bool,
    skip_aria_hidden: bool,
    /// Name from content: images by their alt, embedded controls by their value.
    name: bool,
    /// Read through `aria-labelledby`: parts with no text by their title too.
    referenced: bool,
    /// An element left out whole (the control a label names).
    skip: Option<NodeId>,
}

/// An embedded control's value as its label's text reads it: a text field's
/// value, a select's chosen option, a range's or number's value.
fn embedded_value(arena: &Arena, id: NodeId) -> Option<String> {
    let n = arena.node(id);
    match n.tag.as_str() {
        "input" => {
            let t = n.attr("type").map(|t| t.trim().to_ascii_lowercase()).unwrap_or_default();
            match t.as_str() {
                "checkbox" | "radio" | "hidden" | "file" | "image" | "submit" | "button" | "reset" | "color" => None,
                _ => n.input_value.clone().or_else(|| n.attr("value").map(str::to_string)),
            }
        }
        "textarea" => n.text_value.clone().or_else(|| n.input_value.clone()),
        "select" => {
            let mut stack: Vec<NodeId> = n.children.iter().rev().copied().collect();
            let mut first = None;
            while let Some(c) = stack.pop() {
                let m = arena.node(c);
                if m.tag == "option" {
                    if m.selected {
                        return Some(collect(arena, c, 200, Mode { dom: true, ..Mode::default() }));
                    }
                    first.get_or_insert(c);
                } else if m.tag == "optgroup" {
                    stack.extend(m.children.iter().rev().copied());
                }
            }
            first.map(|o| collect(arena, o, 200, Mode { dom: true, ..Mode::default() }))
        }
        _ => None,
    }
    .filter(|v| !v.trim().is_empty())
}

enum Step {
    Enter(NodeId),
    Exit(Display),
}

fn collect(arena: &Arena, id: NodeId, limit: usize, mode: Mode) -> String {
    let Mode { dom, skip_aria_hidden, .. } = mode;
    let mut flow = Flow::one_line(limit);
    let mut stack = vec![Step::Enter(id)];
    while let Some(step) = stack.pop() {
        if flow.full() {
            break;
        }
        let c = match step {
            Step::Exit(d) => {
                if matches!(d, Display::Block | Display::Row | Display::Cell) {
                    flow.soft_break();
                } else if mode.name && d == Display::InlineBlock {
                    flow.text(" ", WhiteSpace::Collapse);
                }
                continue;
            }
            Step::Enter(c) => c,
        };
        let n = arena.node(c);
        if n.in_ua_shadow || NO_TEXT.contains(&n.tag.as_str()) {
            continue;
        }
        match n.kind {
            NodeKind::Text => {
                let text = if dom {
                    Some(n.value.as_str())
                } else {
                    // A name reads transparent text too (Chromium's tree keeps it).
                    n.layout
                        .as_ref()
                        .filter(|l| l.style.visible && (!n.opacity_hidden || mode.name))
                        .and_then(|l| l.text.as_deref())
                };
                if let Some(t) = text {
                    let ws = if dom { WhiteSpace::Collapse } else { white_space_of(arena, c) };
                    flow.text(t, ws);
                }
                continue;
            }
            NodeKind::Element => {}
            _ => {
                stack.extend(n.children.iter().rev().map(|&c| Step::Enter(c)));
                continue;
            }
        }
        // Text inside an iframe is not the element's own text.
        if c != id && matches!(n.tag.as_str(), "iframe" | "frame") {
            continue;
        }
        if skip_aria_hidden && c != id && n.aria_hidden() {
            continue;
        }
        if mode.skip == Some(c) {
            continue;
        }
        if mode.name && c != id {
            let shown = dom || n.layout.as_ref().is_some_and(|l| l.style.visible);
            // A part with a name of its own is read by that name (accname's recursion: the
            // close button "×" of a tab labelled "Close Terminal 1").
            if let Some(l) = n.attr("aria-label").map(str::trim).filter(|l| !l.is_empty() && shown) {
                flow.text(&format!(" {l} "), WhiteSpace::Collapse);
                continue;
            }
            // Through `aria-labelledby`, a part that shows no text is read by its tooltip (a tab's
            // close icon "Close Terminal 1"; Chromium reads titles there, not in a name from content).
            if let Some(t) = n.attr("title").map(str::trim).filter(|t| !t.is_empty() && shown && mode.referenced) {
                if collect(arena, c, 40, Mode { name: false, ..mode }).trim_matches(collapsible).is_empty() {
                    flow.text(&format!(" {t} "), WhiteSpace::Collapse);
                    continue;
                }
            }
            if n.tag == "img" {
                if let Some(alt) = n.attr("alt").map(str::trim).filter(|a| !a.is_empty() && shown) {
                    flow.text(&format!(" {alt} "), WhiteSpace::Collapse);
                }
                continue;
            }
            if let Some(v) = embedded_value(arena, c).filter(|_| shown) {
                flow.text(&format!(" {v} "), WhiteSpace::Collapse);
                continue;
            }
        }
        if let Some(g) = &n.generated {
            if !mode.no_generated
                && n.layout.as_ref().is_some_and(|l| l.style.visible)
                && (!n.opacity_hidden || mode.name)
            {
                // A name reads a generated box that is not inline as a word of its own.
                let apart = mode.name && n.layout.as_ref().is_some_and(|l| !l.style.display.starts_with("inline"));
                if apart {
                    flow.text(&format!(" {g} "), WhiteSpace::Collapse);
                } else {
                    flow.text(g, WhiteSpace::Collapse);
                }
            }
            continue;
        }
        if n.pseudo {
            continue;
        }
        let d = if dom { Display::Inline } else { display_of(arena, c) };
        if d == Display::None {
            continue;
        }
        if n.tag == "br" {
            flow.hard_break();
            continue;
        }
        if c != id && matches!(d, Display::Block | Display::Row | Display::Cell) {
            flow.soft_break();
        } else if mode.name && c != id && d == Display::InlineBlock {
            // A name reads an inline block (a button in a heading) as a word of its own.
            flow.text(" ", WhiteSpace::Collapse);
        }
        stack.push(Step::Exit(d));
        stack.extend(n.children.iter().rev().map(|&c| Step::Enter(c)));
    }
    flow.finish_line()
}

/// A private-use character: the glyph an icon font draws (Font Awesome's
/// `\u{f1f8}` from `::before`), which a person sees as a picture, not as text.
pub(crate) fn is_private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF_0000..=0xF_FFFD | 0x10_0000..=0x10_FFFD)
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

    fn flow_of(parts: &[&str]) -> String {
        let mut f = Flow::new();
        for p in parts {
            f.text(p, WhiteSpace::Collapse);
        }
        f.finish().join("\n")
    }

    #[test]
    fn inline_runs_join_as_rendered() {
        assert_eq!(flow_of(&["Enter \"", "Deneen", "\" into\n   the  box"]), "Enter \"Deneen\" into the box");
        assert_eq!(flow_of(&["$", "42", ".", "99"]), "$42.99");
        assert_eq!(
            flow_of(&["e-", "mail", " H", "2", "O Select ", "Paris", ", then"]),
            "e-mail H2O Select Paris, then"
        );
        assert_eq!(flow_of(&["   leading ", "   spaced ", "   end   "]), "leading spaced end");
        assert_eq!(flow_of(&["a\u{a0}\u{a0}b"]), "a\u{a0}\u{a0}b", "no-break spaces stay");
    }

    #[test]
    fn a_prefix_that_showed_nothing_is_not_lent_to_the_next_line() {
        let mut f = Flow::new();
        f.set_prefix("- ");
        f.drop_unused_prefix();
        f.block_break();
        f.text("Row 63", WhiteSpace::Collapse);
        assert_eq!(f.finish(), vec!["Row 63".to_string()]);
        let mut f = Flow::new();
        f.set_prefix("- ");
        f.text("Item", WhiteSpace::Collapse);
        f.drop_unused_prefix();
        assert_eq!(f.finish(), vec!["- Item".to_string()]);
    }

    #[test]
    fn preserved_text_keeps_spaces_and_breaks() {
        let mut f = Flow::new();
        f.text("line1\n   indented   x", WhiteSpace::Preserve);
        assert_eq!(f.finish(), vec!["line1", "   indented   x"]);
        let mut f = Flow::new();
        f.text("a    b\nc", WhiteSpace::PreserveBreaks);
        assert_eq!(f.finish(), vec!["a b", "c"]);
    }

    #[test]
    fn atoms_and_cells() {
        let mut f = Flow::new();
        f.text("Select ", WhiteSpace::Collapse);
        f.atom("[4]link \"Paris\"");
        f.text(", then", WhiteSpace::Collapse);
        f.block_break();
        f.cell();
        f.text("A", WhiteSpace::Collapse);
        f.cell();
        f.atom("[5]link \"Add\"");
        f.cell();
        assert_eq!(f.finish(), vec!["Select [4]link \"Paris\", then", "A | [5]link \"Add\""]);
    }

    #[test]
    fn icon_font_glyphs_are_not_text() {
        let mut f = Flow::one_line(100);
        f.text("\u{f1f8}", WhiteSpace::Collapse);
        assert_eq!(f.finish_line(), "");
        let mut f = Flow::one_line(100);
        f.text("\u{f040} Edit", WhiteSpace::Collapse);
        assert_eq!(f.finish_line(), "Edit");
    }
}
