//! `page_content`: a compact, line-oriented rendition of what the viewport shows.
//!
//! Blocks become lines, headings get `#`, list items `- `, table cells ` | `.
//! Each indexed element appears once as `[N]role "name" states…`, so a model can
//! tie the text to the element index. Only text painted in the viewport and not
//! covered by an overlay is included; scripts, styles and hidden nodes never are.

use std::collections::HashMap;
use std::fmt::Write;

use crate::arena::{Arena, NodeId, NodeKind};
use crate::interactive::{Element, Reason};
use crate::text::{collapse, cut};

const SKIP: &[&str] = &["script", "style", "noscript", "template", "head", "title", "meta", "link", "svg"];

struct Renderer<'a> {
    arena: &'a mut Arena,
    elements: &'a [Element],
    by_node: HashMap<NodeId, usize>,
    lines: Vec<String>,
    cur: String,
    prefix: String,
}

/// Render the page text for `elements` (already indexed) over `arena`.
pub fn render(arena: &mut Arena, elements: &[Element]) -> String {
    let by_node = elements.iter().enumerate().map(|(i, e)| (e.node, i)).collect();
    let mut r = Renderer { arena, elements, by_node, lines: Vec::new(), cur: String::new(), prefix: String::new() };
    if !r.arena.nodes.is_empty() {
        r.walk(0, false);
    }
    r.flush();
    r.lines.join("\n")
}

fn is_block(display: &str) -> bool {
    !(display.starts_with("inline")
        || display == "contents"
        || display == "table-cell"
        || display.is_empty()
        || display == "none")
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl Renderer<'_> {
    fn flush(&mut self) {
        let line = collapse(&self.cur);
        if !line.is_empty() {
            self.lines.push(format!("{}{}", self.prefix, line));
        }
        self.cur.clear();
        self.prefix.clear();
    }

    fn push(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if !self.cur.is_empty() && !self.cur.ends_with(' ') {
            self.cur.push(' ');
        }
        self.cur.push_str(s);
    }

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
        self.arena.cover_at(owner, point.0, point.1).is_none()
    }

    /// `quiet`: inside an indexed element, whose text its token already carries.
    fn walk(&mut self, id: NodeId, quiet: bool) {
        let n = self.arena.node(id);
        if n.in_ua_shadow {
            return;
        }
        match n.kind {
            NodeKind::Text => {
                if quiet {
                    return;
                }
                if let Some(t) = n.layout.as_ref().and_then(|l| l.text.clone()) {
                    if self.text_visible(id) {
                        self.push(&t);
                    }
                }
                return;
            }
            NodeKind::Element => {}
            _ => {
                for c in n.children.clone() {
                    self.walk(c, quiet);
                }
                return;
            }
        }
        if SKIP.contains(&n.tag.as_str()) {
            return;
        }
        let tag = n.tag.clone();
        let display = n.layout.as_ref().map(|l| l.style.display.clone()).unwrap_or_default();
        let block = is_block(&display) || matches!(tag.as_str(), "br" | "hr");
        let dialog = !quiet
            && (tag == "dialog" && n.has_attr("open") || matches!(n.attr("role"), Some("dialog" | "alertdialog")))
            && n.layout.is_some();
        let children = n.children.clone();
        let name = n.attr("aria-label").map(collapse).unwrap_or_default();
        let alt = n.attr("alt").map(collapse).filter(|a| !a.is_empty());
        if block {
            self.flush();
        }
        if dialog {
            self.lines.push(if name.is_empty() { "[dialog]".into() } else { format!("[dialog {}]", quote(&name)) });
        }
        if !quiet {
            match tag.as_str() {
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                    let level = tag[1..].parse::<usize>().unwrap_or(1);
                    self.prefix = format!("{} ", "#".repeat(level));
                }
                "li" => self.prefix = "- ".into(),
                "td" | "th" if !self.cur.is_empty() => self.cur.push_str(" |"),
                "img" => {
                    if let Some(alt) = alt {
                        if self.arena.node(id).visible_rect().is_some() {
                            self.push(&format!("(image: {})", cut(&alt, 80)));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut quiet_children = quiet;
        if let Some(&ei) = self.by_node.get(&id) {
            let token = token(&self.elements[ei]);
            self.push(&token);
            quiet_children = true;
        }
        for c in children {
            self.walk(c, quiet_children);
        }
        if block {
            self.flush();
        }
        if dialog {
            self.flush();
            self.lines.push("[/dialog]".into());
        }
    }
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
    let editable_text = is_text && e.reason == Reason::Editable;
    if !e.label.is_empty() && !editable_text {
        let _ = write!(s, " {}", quote(&e.label));
    }
    if let Some(c) = d.checked {
        s.push_str(if c { " checked" } else { " unchecked" });
    }
    if is_text {
        let v = if e.reason == Reason::Editable { d.text_content.clone() } else { d.value.clone() };
        match v.filter(|v| !v.is_empty()) {
            Some(v) if d.type_.as_deref() == Some("password") => {
                let _ = write!(s, " value={}", quote(&"•".repeat(v.chars().count().min(16))));
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
    if e.disabled {
        s.push_str(" disabled");
    }
    if e.readonly {
        s.push_str(" readonly");
    }
    s
}
