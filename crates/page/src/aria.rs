//! Roles and states read from the DOM the way Chromium's accessibility tree
//! reports them, for the semantic_v2 tree: the full accessibility tree costs
//! as much as the whole document (Chromium builds it for every node before it
//! answers for one), so semantic_v2 reads roles and states from the capture it
//! already has. `tests/semantic.rs` holds these rules to Chromium's own answers
//! on every fixture.

use serde_json::Value;

use crate::arena::{Arena, NodeId};
use crate::interactive;
use crate::text::{collapse, visible_text};

/// The first role token of the `role` attribute, lowercased; `presentation`
/// and `none` give no role.
pub fn explicit_role(arena: &Arena, id: NodeId) -> Option<String> {
    interactive::explicit_role(arena, id).filter(|r| !matches!(r.as_str(), "presentation" | "none" | "generic"))
}

/// The role of an element: explicit, else the implicit role of a control,
/// else that of a content element (`li` → listitem, `details` → group…).
pub fn role(arena: &Arena, id: NodeId) -> Option<String> {
    if let Some(r) = explicit_role(arena, id) {
        return Some(r);
    }
    let n = arena.node(id);
    if n.tag == "input" && n.attr("type").is_some_and(|t| t.trim().eq_ignore_ascii_case("file")) {
        return Some("button".into());
    }
    // Chromium's own name for the summary of a <details>; an ARIA button to a model.
    if n.tag == "summary" {
        return Some("button".into());
    }
    interactive::role_of(arena, id).or_else(|| implicit_content_role(arena, id).map(str::to_string))
}

/// The implicit role of a content element (no `role` attribute).
pub fn implicit_content_role(arena: &Arena, id: NodeId) -> Option<&'static str> {
    let n = arena.node(id);
    Some(match n.tag.as_str() {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => "heading",
        "p" => "paragraph",
        "li" => "listitem",
        "ul" | "ol" | "menu" => "list",
        "img" if n.attr("alt").is_some_and(|a| !a.trim().is_empty()) => "image",
        "td" => "cell",
        "th" => th_role(arena, id),
        "table" => "table",
        "caption" => "caption",
        "dialog" => "dialog",
        "main" => "main",
        "nav" => "navigation",
        "header" => "banner",
        "footer" => "contentinfo",
        "aside" => "complementary",
        "form" => "form",
        "section" if n.has_attr("aria-label") || n.has_attr("aria-labelledby") => "region",
        "figure" => "figure",
        "blockquote" => "blockquote",
        "article" => "article",
        "pre" | "code" => "code",
        "label" => "label",
        "legend" => "legend",
        "dt" => "term",
        "dd" => "definition",
        "details" | "fieldset" => "group",
        _ => return None,
    })
}

/// A header cell heads its row or its column: by `scope`, else by where it
/// stands (Chromium's rule: in a `<thead>` or a row of headers only, a column
/// header; beside data cells, a row header).
fn th_role(arena: &Arena, id: NodeId) -> &'static str {
    let n = arena.node(id);
    match n.attr("scope").map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("row" | "rowgroup") => return "rowheader",
        Some("col" | "colgroup") => return "columnheader",
        _ => {}
    }
    let Some(row) = n.parent else { return "columnheader" };
    if arena.node(row).parent.is_some_and(|g| arena.node(g).tag == "thead") {
        return "columnheader";
    }
    if arena.node(row).children.iter().any(|&c| arena.node(c).tag == "td") {
        "rowheader"
    } else {
        "columnheader"
    }
}

/// Roles that take `aria-expanded` (Chromium reports it on no others).
const EXPANDABLE: &[&str] = &[
    "application",
    "button",
    "checkbox",
    "columnheader",
    "combobox",
    "gridcell",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "row",
    "rowheader",
    "switch",
    "tab",
    "treeitem",
];

/// `aria-hidden="true"` hides the element and its subtree from the accessibility tree.
pub fn aria_hidden(arena: &Arena, id: NodeId) -> bool {
    arena.node(id).attr("aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn attr_bool(arena: &Arena, id: NodeId, name: &str) -> Option<bool> {
    let v = arena.node(id).attr(name)?.trim().to_ascii_lowercase();
    match v.as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Roles that take `aria-selected`.
const SELECTABLE: &[&str] = &["option", "tab", "row", "gridcell", "treeitem", "columnheader", "rowheader"];

/// The states the accessibility tree reports beyond what the DOM descriptor
/// has, in the order semantic_v2 lists them: expanded, selected, focused,
/// level, modal.
pub fn states(arena: &Arena, id: NodeId, role: &str) -> Vec<(&'static str, Value)> {
    let n = arena.node(id);
    let mut out = Vec::new();
    let expanded = interactive::expanded(arena, id).filter(|_| EXPANDABLE.contains(&role)).or_else(|| {
        // A drop-down select is a collapsed combobox until its popup opens.
        (n.tag == "select" && role == "combobox").then_some(false)
    });
    if let Some(e) = expanded {
        out.push(("expanded", Value::Bool(e)));
    }
    if SELECTABLE.contains(&role) {
        // Tabs and tree items are reported unselected unless marked.
        let default = matches!(role, "tab" | "treeitem").then_some(false);
        if let Some(s) = attr_bool(arena, id, "aria-selected").or(default) {
            out.push(("selected", Value::Bool(s)));
        }
    }
    if n.focused {
        out.push(("focused", Value::Bool(true)));
    }
    let level = match role {
        "heading" => n
            .attr("aria-level")
            .and_then(|l| l.trim().parse::<u64>().ok())
            .filter(|l| *l > 0)
            .or_else(|| n.tag.strip_prefix('h').and_then(|l| l.parse::<u64>().ok()))
            .or(Some(2)),
        "treeitem" | "row" => n.attr("aria-level").and_then(|l| l.trim().parse::<u64>().ok()).filter(|l| *l > 0),
        _ => None,
    };
    if let Some(l) = level {
        out.push(("level", Value::from(l)));
    }
    if matches!(role, "dialog" | "alertdialog") {
        // A <dialog> opened with showModal() is fixed in the top layer (see Arena::mark_inert).
        let modal_dialog = n.tag == "dialog" && n.has_attr("open") && n.layout.as_ref().is_some_and(|l| l.style.fixed);
        // An element given the role (`<div role=dialog>`) is reported modal=false
        // unless aria-modal says otherwise, as Chromium reports it.
        let by_role = n.tag != "dialog" && explicit_role(arena, id).is_some();
        let modal = if modal_dialog { Some(true) } else { attr_bool(arena, id, "aria-modal") };
        if let Some(m) = modal.or(by_role.then_some(false)) {
            out.push(("modal", Value::Bool(m)));
        }
    }
    out
}

/// The caption that names a table (`<caption>`) or a fieldset (`<legend>`).
pub fn caption(arena: &Arena, id: NodeId) -> Option<String> {
    let want = match arena.node(id).tag.as_str() {
        "table" => "caption",
        "fieldset" => "legend",
        _ => return None,
    };
    let c = arena.node(id).children.iter().copied().find(|&c| arena.node(c).tag == want)?;
    let t = collapse(&visible_text(arena, c, 200, true));
    (!t.is_empty()).then_some(t)
}

/// The author-given names (`aria-label`, `aria-labelledby`, an image's alt or
/// title) of the elements inside one that shows no text, joined: what Chromium
/// names it from its content.
pub fn author_names_inside(arena: &Arena, id: NodeId) -> String {
    let mut names = Vec::new();
    let mut stack: Vec<NodeId> = arena.node(id).children.iter().rev().copied().collect();
    let mut budget = 200;
    while let Some(c) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        if aria_hidden(arena, c) {
            continue;
        }
        let node = arena.node(c);
        let img_name = || {
            (node.tag == "img")
                .then(|| node.attr("alt").or(node.attr("title")))
                .flatten()
                .map(collapse)
                .filter(|a| !a.is_empty())
        };
        match interactive::aria_label(arena, c).or_else(img_name) {
            Some(n) => names.push(n),
            None => stack.extend(node.children.iter().rev().copied()),
        }
    }
    collapse(&names.join(" "))
}
