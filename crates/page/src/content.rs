//! `page_content`: a compact, line-oriented rendition of what the viewport shows.
//!
//! Blocks become lines, headings get `#`, list items `- `, table cells ` | `.
//! Each indexed element appears once as `[N]role "name" states…`, so a model can
//! tie the text to the element index. Only text painted in the viewport and not
//! covered by an overlay is included; scripts, styles and hidden nodes never are.

use std::collections::HashMap;
use std::fmt::Write;

use crate::arena::WhiteSpace;
use crate::arena::{Arena, NodeId, NodeKind};
use crate::aria::Role;
use crate::geometry::Rect;
use crate::interactive::{Element, Reason};
use crate::text::{collapse, cut, display_of, white_space_of, Display, Flow};

const SKIP: &[&str] = &["script", "style", "noscript", "template", "head", "title", "meta", "link"];

struct Renderer<'a> {
    arena: &'a mut Arena,
    elements: &'a [Element],
    quiet: &'a std::collections::HashSet<NodeId>,
    /// Positions of the elements marked new (`*[N]`).
    fresh: &'a std::collections::HashSet<usize>,
    by_node: HashMap<NodeId, usize>,
    /// For each control, the labels shown as a marker beside its token.
    markers: HashMap<crate::index::ElementIndex, Vec<usize>>,
    emitted: Vec<bool>,
    flow: Flow,
    /// Inside table cells and inline-blocks, block boundaries read as one space.
    one_line: u32,
    /// The last inline-block closed: its box and the flow position right after it.
    last_inline_block: Option<(Rect, (usize, usize))>,
}

/// Render the page text for `elements` (already indexed) over `arena`.
pub fn render(arena: &mut Arena, elements: &[Element], quiet: &std::collections::HashSet<NodeId>) -> String {
    render_marked(arena, elements, quiet, &Default::default())
}

/// [`render`], with `*` before the token of each element whose position is in `fresh`.
pub fn render_marked(
    arena: &mut Arena,
    elements: &[Element],
    quiet: &std::collections::HashSet<NodeId>,
    fresh: &std::collections::HashSet<usize>,
) -> String {
    let by_node = elements.iter().enumerate().map(|(i, e)| (e.node, i)).collect();
    let mut markers: HashMap<crate::index::ElementIndex, Vec<usize>> = HashMap::new();
    for (i, e) in elements.iter().enumerate() {
        if let Some(control) = e.label_for {
            markers.entry(control).or_default().push(i);
        }
    }
    let mut r = Renderer {
        arena,
        elements,
        quiet,
        fresh,
        by_node,
        markers,
        emitted: vec![false; elements.len()],
        flow: Flow::new(),
        one_line: 0,
        last_inline_block: None,
    };
    if !r.arena.nodes.is_empty() {
        r.walk(0);
    }
    // Every indexed element is named in the text, even where the walk could not place it.
    let star = |i: usize| if fresh.contains(&i) { "*" } else { "" };
    let missing: Vec<String> = elements
        .iter()
        .zip(&r.emitted)
        .enumerate()
        .filter(|(_, (_, done))| !**done)
        .map(|(i, (e, _))| format!("{}{}", star(i), token(e)))
        .collect();
    let mut lines = std::mem::take(&mut r.flow).finish();
    if !missing.is_empty() {
        lines.push(missing.join(" "));
    }
    lines.join("\n")
}

/// Escape a value for a one-line token: quotes and line breaks.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

enum Visit {
    Enter(NodeId, bool),
    Exit(Exit),
}

struct Exit {
    node: NodeId,
    display: Display,
    one_line: bool,
    dialog: bool,
    scroll_hint: Option<String>,
    /// It set the line prefix (`# `, `- `): dropped if it showed nothing.
    prefixed: bool,
}

impl Renderer<'_> {
    fn text_visible(&mut self, id: NodeId) -> bool {
        let n = self.arena.node(id);
        let Some(r) = n.visible_rect() else { return false };
        let owner = n.parent.unwrap_or(id);
        // The first visible line fragment, else the box centre.
        let point = n
            .layout
            .as_ref()
            .and_then(|l| l.boxes.iter().map(|b| b.intersect(&r)).find(|b| !b.is_empty()))
            .map(|b| b.center())
            .unwrap_or_else(|| r.center());
        !self.arena.visually_covered_at(owner, point.0, point.1)
    }

    fn block_break(&mut self) {
        if self.one_line > 0 {
            self.flow.soft_break();
        } else {
            self.flow.block_break();
        }
    }

    /// `quiet`: inside an indexed element, whose text its token already carries.
    fn walk(&mut self, root: NodeId) {
        let mut stack = vec![Visit::Enter(root, false)];
        while let Some(v) = stack.pop() {
            match v {
                Visit::Enter(id, quiet) => self.enter(id, quiet, &mut stack),
                Visit::Exit(e) => self.exit(e),
            }
        }
    }

    fn exit(&mut self, e: Exit) {
        if e.prefixed {
            // A list item or heading that showed nothing (scrolled away, clipped)
            // does not lend its `- ` or `#` to whatever text comes next.
            self.flow.drop_unused_prefix();
        }
        if e.one_line {
            self.one_line -= 1;
        }
        if let Some(h) = e.scroll_hint {
            if self.one_line > 0 {
                self.flow.atom(&h);
            } else {
                self.flow.raw_line(h);
            }
        }
        match e.display {
            Display::Block | Display::Row => self.block_break(),
            Display::Cell => self.flow.soft_break(),
            Display::InlineBlock => {
                if let Some(r) = self.arena.node(e.node).layout.as_ref().map(|l| l.rect) {
                    self.last_inline_block = Some((r, self.flow.mark()));
                }
            }
            _ => {}
        }
        if e.dialog {
            self.flow.raw_line("[/dialog]".into());
        }
    }

    fn enter(&mut self, id: NodeId, quiet: bool, stack: &mut Vec<Visit>) {
        let n = self.arena.node(id);
        if n.in_ua_shadow {
            return;
        }
        match n.kind {
            NodeKind::Text => {
                if quiet {
                    return;
                }
                let Some((t, rect)) = n.layout.as_ref().and_then(|l| Some((l.text.clone()?, l.rect))) else { return };
                // White space that layout collapsed away (no box, no size: the line
                // break before a closing tag) shows no space.
                let collapsed =
                    n.layout.as_ref().is_some_and(|l| l.boxes.is_empty() && l.rect.w == 0.0 && l.rect.h == 0.0);
                if t.trim().is_empty() && collapsed {
                    return;
                }
                if t.trim().is_empty() || self.text_visible(id) {
                    let ws = white_space_of(self.arena, id);
                    self.flow.text_at(&t, ws, Some(rect));
                }
                return;
            }
            NodeKind::Element => {}
            _ => {
                stack.extend(n.children.iter().rev().map(|&c| Visit::Enter(c, quiet)));
                return;
            }
        }
        let indexed = self.by_node.get(&id).copied();
        if indexed.is_none() && SKIP.contains(&n.tag.as_str()) {
            return;
        }
        if n.pseudo {
            if let Some(g) = n.generated.clone() {
                if !quiet && self.text_visible(id) {
                    let rect = self.arena.node(id).layout.as_ref().map(|l| l.rect);
                    self.flow.text_at(&g, WhiteSpace::Collapse, rect);
                }
            }
            return;
        }
        let tag = n.tag.clone();
        let display = display_of(self.arena, id);
        if display == Display::None {
            return;
        }
        if tag == "br" {
            if self.one_line > 0 {
                self.flow.soft_break();
            } else {
                self.flow.hard_break();
            }
            return;
        }
        let dialog = !quiet
            && (tag == "dialog" && n.has_attr("open") || matches!(n.attr("role"), Some("dialog" | "alertdialog")))
            && n.layout.is_some();
        let children = n.children.clone();
        let name = n.attr("aria-label").map(collapse).unwrap_or_default();
        let alt = n.attr("alt").map(collapse).filter(|a| !a.is_empty());
        let scroll_hint = if quiet { None } else { scroll_hint(self.arena, id) };
        match display {
            Display::Block | Display::Row => self.block_break(),
            Display::Cell => self.flow.cell(),
            Display::InlineBlock => {
                // Inline-blocks right after one another join, unless laid out with a gap.
                let rect = self.arena.node(id).layout.as_ref().map(|l| l.rect);
                if let (Some((prev, at)), Some(r)) = (self.last_inline_block, rect) {
                    let same_line = r.y < prev.bottom() && prev.y < r.bottom();
                    if at == self.flow.mark() && same_line && r.x > prev.right() + 0.5 {
                        self.flow.soft_break();
                    }
                }
            }
            _ => {}
        }
        if dialog {
            self.flow.raw_line(if name.is_empty() { "[dialog]".into() } else { format!("[dialog {}]", quote(&name)) });
        }
        let mut prefixed = false;
        if !quiet && self.one_line == 0 {
            match tag.as_str() {
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                    let level = tag[1..].parse::<usize>().unwrap_or(1);
                    self.flow.set_prefix(&format!("{} ", "#".repeat(level)));
                    prefixed = true;
                }
                // A list item that is laid out inline (a row of filter links) stays in its line.
                "li" if matches!(display, Display::Block) => {
                    self.flow.set_prefix("- ");
                    prefixed = true;
                }
                _ => {}
            }
        }
        if !quiet && tag == "img" {
            if let Some(alt) = alt {
                if let Some(r) = self.arena.node(id).visible_rect() {
                    self.flow.atom_at(&format!("(image: {})", cut(&alt, 80)), Some(r));
                }
            }
        }
        // A label whose text names its (indexed) control: the control's token says it.
        let mut quiet_children = quiet || self.quiet.contains(&id);
        if let Some(ei) = indexed {
            let e = &self.elements[ei];
            // A label that names its control is shown beside the control's token.
            if e.label_for.is_none() {
                let at = e.visible;
                let mut shown = String::new();
                let star = |i: usize| if self.fresh.contains(&i) { "*" } else { "" };
                for &li in self.markers.get(&e.index).map(Vec::as_slice).unwrap_or_default() {
                    let _ = write!(shown, "{}[{}]label ", star(li), self.elements[li].index);
                    self.emitted[li] = true;
                }
                shown.push_str(star(ei));
                shown.push_str(&token(e));
                self.flow.atom_at(&shown, Some(at));
                self.emitted[ei] = true;
            }
            quiet_children = true;
        }
        let one_line = matches!(display, Display::Cell | Display::InlineBlock);
        if one_line {
            self.one_line += 1;
        }
        stack.push(Visit::Exit(Exit { node: id, display, one_line, dialog, scroll_hint, prefixed }));
        stack.extend(children.iter().rev().map(|&c| Visit::Enter(c, quiet_children)));
    }
}

/// `[scroll box: 0px above, 240px below]` after the content of a visible inner
/// scroll container whose content is cut off.
fn scroll_hint(arena: &Arena, id: NodeId) -> Option<String> {
    let n = arena.node(id);
    if matches!(n.tag.as_str(), "html" | "body" | "textarea" | "select") || n.kind != NodeKind::Element {
        return None;
    }
    let l = n.layout.as_ref()?;
    if !l.style.scrolls_y {
        return None;
    }
    let (top, height) = l.scroll?;
    let client = l.client.map(|c| c.h).unwrap_or(l.rect.h);
    if client < 16.0 || height <= client + 1.0 {
        return None;
    }
    n.visible_rect()?;
    let above = top.max(0.0).round() as i64;
    let below = (height - top - client).max(0.0).round() as i64;
    Some(format!("[scroll box: {above}px above, {below}px below]"))
}

/// `[N]role "name" states…` for one element.
pub fn token(e: &Element) -> String {
    let d = &e.descriptor;
    let kind = match (&d.role, e.reason) {
        (Some(r), _) => r.as_str(),
        (None, Reason::Evidence) => "clickable",
        (None, _) => d.tag.as_str(),
    };
    let mut s = format!("[{}]{kind}", e.index);
    let is_text = e.accepts_text;
    if !e.label.is_empty() {
        let _ = write!(s, " {}", quote(&e.label));
    } else if let Some(h) = &e.hint {
        let _ = write!(s, " hint:{}", quote(h));
    }
    if let Some(c) = d.checked {
        s.push_str(if c { " checked" } else { " unchecked" });
    }
    if is_text {
        let editable = e.reason == Reason::Editable || !matches!(d.tag.as_str(), "input" | "textarea");
        let v = if editable { d.text_content.clone() } else { d.value.clone() };
        match v.filter(|v| !v.is_empty()) {
            Some(v) if d.type_.as_deref() == Some("password") => {
                let _ = write!(s, " value={}", quote(&"•".repeat(v.chars().count().min(16))));
            }
            Some(v) if d.tag == "textarea" || editable => {
                // Multi-line values keep their line breaks (escaped) and spaces.
                let v = v.trim_end_matches(['\n', ' ']);
                let _ = write!(s, " value={}", quote(&cut(v, 200)));
            }
            Some(v) => {
                let _ = write!(s, " value={}", quote(&cut(&collapse(&v), 120)));
            }
            None => {
                if let Some(p) = d.placeholder.as_deref().map(collapse).filter(|p| !p.is_empty() && *p != e.label) {
                    let _ = write!(s, " placeholder={}", quote(&cut(&p, 80)));
                }
            }
        }
    }
    if d.type_.as_deref() == Some("range") {
        if let Some(v) = d.value.as_deref() {
            let _ = write!(s, " value={}", quote(v));
        }
    } else if let Some(v) = e.aria_value.as_deref() {
        // An ARIA slider or spinbutton says its value as Chromium reads it (aria-valuenow, else aria-valuetext).
        let _ = write!(s, " value={}", quote(v));
    }
    if let Some((min, max)) = &e.range {
        if !min.is_empty() {
            let _ = write!(s, " min={min}");
        }
        if !max.is_empty() {
            let _ = write!(s, " max={max}");
        }
    }
    if d.type_.as_deref() == Some("file") && d.tag == "input" {
        match d.value.as_deref().map(|v| v.rsplit(['\\', '/']).next().unwrap_or(v)).filter(|v| !v.is_empty()) {
            Some(f) => {
                let _ = write!(s, " file={}", quote(f));
            }
            None => s.push_str(" no-file"),
        }
    }
    // A widget that says it is a text box without being an editable field (a code
    // editor's visible part): its text is what it holds.
    if !is_text && matches!(d.role, Some(Role::Textbox | Role::Searchbox)) {
        if let Some(t) = d.text_content.as_deref().filter(|t| !t.is_empty()) {
            let _ = write!(s, " value={}", quote(&cut(t, 200)));
        }
    }
    if d.tag == "select" {
        if let Some(t) = d.text_content.as_deref() {
            let _ = write!(s, " selected={}", quote(t));
        }
    }
    if e.select.is_some() && e.selected {
        s.push_str(" selected");
    }
    match e.expanded {
        Some(true) => s.push_str(" expanded"),
        Some(false) => s.push_str(" collapsed"),
        None => {}
    }
    if e.focused {
        s.push_str(" focused");
    }
    if e.disabled {
        s.push_str(" disabled");
    }
    if e.readonly {
        s.push_str(" readonly");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{el, text, view};

    #[test]
    fn blocks_become_lines_with_their_marks_and_elements_their_tokens() {
        let v = view(vec![
            el("h2", &[], vec![text("Cart")]),
            el("ul", &[], vec![el("li", &[], vec![text("Tea")]), el("li", &[], vec![text("Milk")])]),
            el("p", &[], vec![text("Total "), el("b", &[], vec![text("$4")])]),
            el("button", &[], vec![text("Pay")]),
            el("script", &[], vec![text("ignored()")]),
        ]);
        assert_eq!(v.page_content, "## Cart\n- Tea\n- Milk\nTotal $4\n[1]button \"Pay\"");
    }

    #[test]
    fn text_under_an_overlay_is_left_out() {
        let v = view(vec![
            el("p", &[], vec![text("Seen").at(0.0, 10.0, 100.0, 18.0)]).at(0.0, 10.0, 300.0, 20.0),
            el("p", &[], vec![text("Hidden by the banner").at(0.0, 200.0, 100.0, 18.0)]).at(0.0, 200.0, 300.0, 20.0),
            el("div", &[], vec![])
                .at(0.0, 150.0, 800.0, 200.0)
                .style("position", "fixed")
                .style("background-color", "white"),
        ]);
        assert_eq!(v.page_content, "Seen");
    }

    #[test]
    fn a_token_says_state_and_value_without_leaking_passwords() {
        let v = view(vec![
            el("input", &[("type", "checkbox"), ("aria-label", "Remember")], vec![]).checked(),
            el("input", &[("type", "password"), ("value", "secret"), ("aria-label", "PIN")], vec![]),
            el("input", &[("placeholder", "Search"), ("aria-label", "Query")], vec![]),
            el("button", &[("disabled", ""), ("aria-expanded", "false")], vec![text("More")]),
            el("div", &[("tabindex", "0")], vec![text("Card")]),
        ]);
        let tokens: Vec<String> = v.elements.iter().map(token).collect();
        assert_eq!(
            tokens,
            vec![
                "[1]checkbox \"Remember\" checked",
                "[2]textbox \"PIN\" value=\"••••••\"",
                "[3]textbox \"Query\" placeholder=\"Search\"",
                "[4]button \"More\" collapsed disabled",
                "[5]clickable \"Card\"",
            ]
        );
    }
}
