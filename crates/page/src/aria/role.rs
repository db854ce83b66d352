//! Roles: the `role` attribute, the implicit role of a control, and the
//! implicit role of a content element, as Chromium's accessibility tree gives
//! them.
//!
//! Two readings of the attribute, for two kinds of caller:
//! [`role_attr`] is its first token as the author wrote it (`presentation`
//! included): the element descriptor reports that, and the interactive rules
//! ask whether it names a widget. [`explicit_role`] is what the accessibility
//! tree takes from it: `presentation`, `none` and `generic` give no role, so
//! the implicit role applies.

use crate::arena::{Arena, NodeId};

/// Roles that make an element interactive on their own (the seed's list plus the
/// other widget roles real sites use for clickable things).
const INTERACTIVE_ROLES: &[&str] = &[
    "button",
    "link",
    "menuitem",
    "checkbox",
    "radio",
    "switch",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "option",
    "tab",
    "menuitemcheckbox",
    "menuitemradio",
    "treeitem",
    "slider",
    "spinbutton",
];

/// Whether an explicit role makes an element interactive on its own.
pub(crate) fn is_interactive_role(role: &str) -> bool {
    INTERACTIVE_ROLES.contains(&role)
}

/// The first token of the `role` attribute, lowercased, as written
/// (`presentation` and `none` included).
pub(crate) fn role_attr(arena: &Arena, id: NodeId) -> Option<String> {
    arena.node(id).attr("role").and_then(|r| r.split_whitespace().next()).map(|r| r.to_ascii_lowercase())
}

/// The role the accessibility tree takes from the `role` attribute:
/// [`role_attr`], except that `presentation`, `none` and `generic` give no role.
pub(crate) fn explicit_role(arena: &Arena, id: NodeId) -> Option<String> {
    role_attr(arena, id).filter(|r| !matches!(r.as_str(), "presentation" | "none" | "generic"))
}

/// The `type` of an `<input>`, lowercased; `text` when missing or empty.
pub(crate) fn input_type(arena: &Arena, id: NodeId) -> String {
    arena
        .node(id)
        .attr("type")
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "text".into())
}

/// A `contenteditable` value that makes the element editable.
pub(crate) fn is_editable_attr(v: Option<&str>) -> bool {
    matches!(v.map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("" | "true" | "plaintext-only"))
}

/// The element's role for the element index: the attribute as written
/// ([`role_attr`]), else the implicit role of a control (`<a href>` → link,
/// `<select>` → combobox or listbox, `<input type=range>` → slider…).
pub(crate) fn role_of(arena: &Arena, id: NodeId) -> Option<String> {
    if let Some(r) = role_attr(arena, id) {
        return Some(r);
    }
    let n = arena.node(id);
    let r = match n.tag.as_str() {
        "a" | "area" if n.has_attr("href") => "link",
        "button" | "summary" => "button",
        "select" => {
            if n.has_attr("multiple") || n.attr("size").and_then(|s| s.parse::<u32>().ok()).is_some_and(|s| s > 1) {
                "listbox"
            } else {
                "combobox"
            }
        }
        "option" => "option",
        "textarea" => "textbox",
        "input" => match input_type(arena, id).as_str() {
            "checkbox" => "checkbox",
            "radio" => "radio",
            "button" | "submit" | "reset" | "image" => "button",
            "range" => "slider",
            "number" => "spinbutton",
            "search" if !n.has_attr("list") => "searchbox",
            "hidden" | "file" | "color" => return None,
            _ if n.has_attr("list") => "combobox",
            _ => "textbox",
        },
        _ if is_editable_attr(n.attr("contenteditable")) => "textbox",
        "dialog" => "dialog",
        _ => return None,
    };
    Some(r.to_string())
}

/// The role of an element for semantic_v2 without Chromium's tree: explicit,
/// else the implicit role of a control, else that of a content element
/// (`li` → listitem, `details` → group…).
pub(crate) fn role(arena: &Arena, id: NodeId) -> Option<String> {
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
    role_of(arena, id).or_else(|| implicit_content_role(arena, id).map(str::to_string))
}

/// The implicit role of a content element (no `role` attribute).
pub(crate) fn implicit_content_role(arena: &Arena, id: NodeId) -> Option<&'static str> {
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
