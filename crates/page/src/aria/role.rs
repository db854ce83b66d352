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

use super::Role;

/// Whether an explicit role makes an element interactive on its own (the
/// seed's list plus the other widget roles real sites use for clickable things).
pub(crate) fn is_interactive_role(role: &Role) -> bool {
    matches!(
        role,
        Role::Button
            | Role::Link
            | Role::MenuItem
            | Role::Checkbox
            | Role::Radio
            | Role::Switch
            | Role::Textbox
            | Role::Searchbox
            | Role::Combobox
            | Role::Listbox
            | Role::Option
            | Role::Tab
            | Role::MenuItemCheckbox
            | Role::MenuItemRadio
            | Role::TreeItem
            | Role::Slider
            | Role::Spinbutton
    )
}

/// Every token the `role` attribute may name (WAI-ARIA 1.2 and 1.3, DPUB-ARIA,
/// Graphics-ARIA): Chromium takes the first of these in the attribute and skips
/// any other word (`role="foo button"` is a button; `role="foo"` is no role).
pub(crate) const ARIA_ROLES: &[&str] = &[
    "alert",
    "alertdialog",
    "application",
    "article",
    "banner",
    "blockquote",
    "button",
    "caption",
    "cell",
    "checkbox",
    "code",
    "columnheader",
    "combobox",
    "comment",
    "complementary",
    "contentinfo",
    "definition",
    "deletion",
    "dialog",
    "directory",
    "document",
    "emphasis",
    "feed",
    "figure",
    "form",
    "generic",
    "grid",
    "gridcell",
    "group",
    "heading",
    "image",
    "img",
    "insertion",
    "link",
    "list",
    "listbox",
    "listitem",
    "log",
    "main",
    "mark",
    "marquee",
    "math",
    "menu",
    "menubar",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "meter",
    "navigation",
    "none",
    "note",
    "option",
    "paragraph",
    "presentation",
    "progressbar",
    "radio",
    "radiogroup",
    "region",
    "row",
    "rowgroup",
    "rowheader",
    "scrollbar",
    "search",
    "searchbox",
    "sectionfooter",
    "sectionheader",
    "separator",
    "slider",
    "spinbutton",
    "status",
    "strong",
    "subscript",
    "suggestion",
    "superscript",
    "switch",
    "tab",
    "table",
    "tablist",
    "tabpanel",
    "term",
    "textbox",
    "time",
    "timer",
    "toolbar",
    "tooltip",
    "tree",
    "treegrid",
    "treeitem",
    "graphics-document",
    "graphics-object",
    "graphics-symbol",
];

/// Whether a role Chromium reports by an ARIA name outside the roles the page
/// model names is one that structures a page (`tabpanel`, `progressbar`,
/// `meter`, `row`, `feed`, `doc-chapter`…): a semantic node of its own.
/// Text-level roles (`strong`, `emphasis`, `time`…) stay part of their text.
pub(crate) fn is_structure_role(name: &str) -> bool {
    const TEXT_LEVEL: &[&str] = &[
        "strong",
        "emphasis",
        "mark",
        "subscript",
        "superscript",
        "deletion",
        "insertion",
        "time",
        "generic",
        "none",
        "presentation",
        "comment",
        "suggestion",
        // Table and page structure that adds nodes without content of its own.
        "row",
        "rowgroup",
        "separator",
    ];
    is_aria_role(name) && !TEXT_LEVEL.contains(&name)
}

/// Whether a `role` token names a role Chromium knows (`doc-*` from DPUB-ARIA included).
fn is_aria_role(token: &str) -> bool {
    ARIA_ROLES.contains(&token) || (token.starts_with("doc-") && token.len() > 4)
}

/// The first valid token of the `role` attribute, lowercased (`presentation`
/// and `none` included); `None` when no token is a role.
pub(crate) fn role_attr(arena: &Arena, id: NodeId) -> Option<Role> {
    let written = arena.node(id).attr("role")?;
    let role = written
        .split_ascii_whitespace()
        .map(str::to_ascii_lowercase)
        .find(|t| is_aria_role(t))
        .map(|t| Role::from_name(&t))?;
    // An option outside any listbox has no context to be one: Chromium makes it generic.
    if role == Role::Option && !in_option_context(arena, id) {
        return None;
    }
    Some(role)
}

/// Whether an element with role `option` stands in a listbox (or a combobox's
/// popup, a `<select>`, a `<datalist>`), a few levels up, or is owned by one.
fn in_option_context(arena: &Arena, id: NodeId) -> bool {
    let in_list = arena.ancestors(id).take(6).any(|a| {
        let m = arena.node(a);
        matches!(m.tag.as_str(), "select" | "datalist")
            || m.attr("role").is_some_and(|r| {
                r.split_ascii_whitespace().any(|t| matches!(t.to_ascii_lowercase().as_str(), "listbox" | "combobox"))
            })
    });
    // Only an option outside any list (rare) is looked for in the document's aria-owns.
    in_list
        || arena.node(id).attr("id").is_some_and(|own_id| {
            let doc = arena.node(id).doc;
            arena.nodes.iter().any(|m| {
                m.doc == doc && m.attr("aria-owns").is_some_and(|o| o.split_ascii_whitespace().any(|t| t == own_id))
            })
        })
}

/// Whether the element can take focus or carries a global ARIA attribute:
/// then a `presentation` or `none` role is ignored (WAI-ARIA's conflict
/// resolution, as Chromium applies it) and its own role stays.
fn presentation_overridden(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    let focusable = match n.tag.as_str() {
        "button" | "select" | "textarea" | "summary" | "iframe" => true,
        "input" => input_type(arena, id) != "hidden",
        "a" | "area" => n.has_attr("href"),
        _ => false,
    } || n.has_attr("tabindex")
        || is_editable_attr(n.attr("contenteditable"));
    const GLOBAL: &[&str] = &["aria-label", "aria-labelledby", "aria-describedby", "aria-live", "aria-owns"];
    focusable || GLOBAL.iter().any(|a| n.has_attr(a))
}

/// The role the accessibility tree takes from the `role` attribute:
/// [`role_attr`], except that `generic` gives no role, nor do `presentation` and
/// `none` (on an element that cannot take focus they hide the implicit role;
/// on one that can, they are ignored).
pub(crate) fn explicit_role(arena: &Arena, id: NodeId) -> Option<Role> {
    role_attr(arena, id).filter(|r| !matches!(r, Role::Presentation | Role::None | Role::Generic))
}

/// [`role_attr`] with `presentation` and `none` dropped where Chromium ignores
/// them (a focusable element, one with a global ARIA attribute).
fn attr_role_in_effect(arena: &Arena, id: NodeId) -> Option<Role> {
    role_attr(arena, id)
        .filter(|r| !(matches!(r, Role::Presentation | Role::None) && presentation_overridden(arena, id)))
}

/// Whether an input's `list` names a `<datalist>` of its document (HTML-AAM:
/// only then is it a combobox).
fn has_datalist(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    let Some(list) = n.attr("list").map(str::trim).filter(|l| !l.is_empty()) else { return false };
    arena.nodes.iter().any(|m| m.doc == n.doc && m.tag == "datalist" && m.attr("id") == Some(list))
}

/// The `type` of an `<input>`, lowercased; `text` when missing, empty or not
/// a type HTML knows (`type="input"` is a text field, as browsers treat it).
pub(crate) fn input_type(arena: &Arena, id: NodeId) -> String {
    const TYPES: &[&str] = &[
        "hidden",
        "text",
        "search",
        "tel",
        "url",
        "email",
        "password",
        "date",
        "month",
        "week",
        "time",
        "datetime-local",
        "number",
        "range",
        "color",
        "checkbox",
        "radio",
        "file",
        "submit",
        "image",
        "reset",
        "button",
    ];
    arena
        .node(id)
        .attr("type")
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| TYPES.contains(&t.as_str()))
        .unwrap_or_else(|| "text".into())
}

/// A `contenteditable` value that makes the element editable.
pub(crate) fn is_editable_attr(v: Option<&str>) -> bool {
    matches!(v.map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("" | "true" | "plaintext-only"))
}

/// The element's role for the element index: the attribute as written
/// ([`role_attr`]), else the implicit role of a control (`<a href>` → link,
/// `<select>` → combobox or listbox, `<input type=range>` → slider…).
pub(crate) fn role_of(arena: &Arena, id: NodeId) -> Option<Role> {
    if let Some(r) = attr_role_in_effect(arena, id) {
        return Some(r);
    }
    let n = arena.node(id);
    let r = match n.tag.as_str() {
        // An anchor that acts on a click is a link to Chromium even without an href.
        "a" | "area" if n.has_attr("href") || n.clickable => Role::Link,
        "button" | "summary" => Role::Button,
        "select" => {
            if n.has_attr("multiple") || n.attr("size").and_then(|s| s.parse::<u32>().ok()).is_some_and(|s| s > 1) {
                Role::Listbox
            } else {
                Role::Combobox
            }
        }
        "option" => Role::Option,
        "textarea" => Role::Textbox,
        "input" => match input_type(arena, id).as_str() {
            "checkbox" => Role::Checkbox,
            "radio" => Role::Radio,
            "button" | "submit" | "reset" | "image" => Role::Button,
            "range" => Role::Slider,
            "number" => Role::Spinbutton,
            "search" if !has_datalist(arena, id) => Role::Searchbox,
            "hidden" | "file" | "color" => return None,
            _ if has_datalist(arena, id) => Role::Combobox,
            _ => Role::Textbox,
        },
        _ if is_editable_attr(n.attr("contenteditable")) => Role::Textbox,
        "dialog" => Role::Dialog,
        _ => return None,
    };
    Some(r)
}

/// The role of an element for semantic_v2 without Chromium's tree: explicit,
/// else the implicit role of a control, else that of a content element
/// (`li` → listitem, `details` → group…).
pub(crate) fn role(arena: &Arena, id: NodeId) -> Option<Role> {
    if let Some(r) = explicit_role(arena, id) {
        return Some(r);
    }
    let n = arena.node(id);
    if n.tag == "input" && n.attr("type").is_some_and(|t| t.trim().eq_ignore_ascii_case("file")) {
        return Some(Role::Button);
    }
    // Chromium's own name for the summary of a <details>; an ARIA button to a model.
    if n.tag == "summary" {
        return Some(Role::Button);
    }
    role_of(arena, id).or_else(|| implicit_content_role(arena, id))
}

/// The implicit role of a content element (no `role` attribute).
pub(crate) fn implicit_content_role(arena: &Arena, id: NodeId) -> Option<Role> {
    let n = arena.node(id);
    Some(match n.tag.as_str() {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => Role::Heading,
        "p" => Role::Paragraph,
        // A list item only in a list: under a `ul role=menu` (jQuery UI) it is none.
        "li" if in_list(arena, id) => Role::ListItem,
        "ul" | "ol" | "menu" => Role::List,
        "img" if n.attr("alt").is_some_and(|a| !a.trim().is_empty()) => Role::Image,
        "td" => Role::Cell,
        "th" => th_role(arena, id),
        "table" => Role::Table,
        "caption" => Role::Caption,
        "dialog" => Role::Dialog,
        "main" => Role::Main,
        "nav" => Role::Navigation,
        // Inside sectioning content they head or close that section, not the page (HTML-AAM).
        "header" if in_sectioning(arena, id) => Role::Other("sectionheader".into()),
        "footer" if in_sectioning(arena, id) => Role::Other("sectionfooter".into()),
        "header" => Role::Banner,
        "footer" => Role::ContentInfo,
        "aside" => Role::Complementary,
        "form" => Role::Form,
        // A section is a region only with a name (HTML-AAM); an empty label gives none.
        "section" if crate::aria::aria_label(arena, id).is_some() => Role::Region,
        "figure" => Role::Figure,
        "blockquote" => Role::Blockquote,
        "article" => Role::Article,
        "code" => Role::Code,
        "label" => Role::Label,
        "legend" => Role::Legend,
        "dt" => Role::Term,
        "dd" => Role::Definition,
        "details" | "fieldset" => Role::Group,
        "progress" => Role::Other("progressbar".into()),
        "meter" => Role::Other("meter".into()),
        "output" => Role::Status,
        "search" => Role::Search,
        _ => return None,
    })
}

/// Whether a `<li>`'s parent is a list: a `ul`, `ol` or `menu` whose role, if
/// any, is `list` (HTML-AAM; Chromium makes the items of a relabelled list generic).
fn in_list(arena: &Arena, id: NodeId) -> bool {
    let Some(p) = arena.node(id).parent else { return false };
    let parent = arena.node(p);
    matches!(parent.tag.as_str(), "ul" | "ol" | "menu")
        && role_attr(arena, p).is_none_or(|r| {
            matches!(r, Role::List) || matches!(r, Role::Presentation | Role::None) && presentation_overridden(arena, p)
        })
}

/// Whether an element stands inside `<article>`, `<aside>`, `<main>`, `<nav>`
/// or `<section>` (or an element with one of their roles).
fn in_sectioning(arena: &Arena, id: NodeId) -> bool {
    arena.ancestors(id).any(|a| {
        let m = arena.node(a);
        matches!(m.tag.as_str(), "article" | "aside" | "main" | "nav" | "section")
            || m.attr("role")
                .is_some_and(|r| matches!(r.trim(), "article" | "complementary" | "main" | "navigation" | "region"))
    })
}

/// A header cell heads its row or its column: by `scope`, else by where it
/// stands (Chromium's rule: in a `<thead>` or a row of headers only, a column
/// header; beside data cells, a row header).
fn th_role(arena: &Arena, id: NodeId) -> Role {
    let n = arena.node(id);
    match n.attr("scope").map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("row" | "rowgroup") => return Role::RowHeader,
        Some("col" | "colgroup") => return Role::ColumnHeader,
        _ => {}
    }
    let Some(row) = n.parent else { return Role::ColumnHeader };
    if arena.node(row).parent.is_some_and(|g| arena.node(g).tag == "thead") {
        return Role::ColumnHeader;
    }
    if arena.node(row).children.iter().any(|&c| arena.node(c).tag == "td") {
        Role::RowHeader
    } else {
        Role::ColumnHeader
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{arena, by_id, el, text};

    #[test]
    fn the_attribute_as_written_and_as_the_accessibility_tree_takes_it() {
        let a = arena(vec![
            el("div", &[("id", "p"), ("role", "presentation button")], vec![]),
            el("div", &[("id", "b"), ("role", " Button link")], vec![]),
            el("div", &[("id", "g"), ("role", "generic")], vec![]),
            el("div", &[("id", "x"), ("role", "doc-subtitle")], vec![]),
            el("div", &[("id", "bogus"), ("role", "bogus")], vec![]),
            el("div", &[("id", "n")], vec![]),
        ]);
        // The element index reports the first token as written, lowercased.
        assert_eq!(role_attr(&a, by_id(&a, "p")), Some(Role::Presentation));
        assert_eq!(role_attr(&a, by_id(&a, "b")), Some(Role::Button));
        assert_eq!(role_attr(&a, by_id(&a, "x")), Some(Role::Other("doc-subtitle".into())));
        assert_eq!(role_attr(&a, by_id(&a, "n")), None);
        assert_eq!(role_attr(&a, by_id(&a, "bogus")), None, "no token is a role");
        // The accessibility tree takes no role from presentation, none or generic.
        assert_eq!(explicit_role(&a, by_id(&a, "p")), None);
        assert_eq!(explicit_role(&a, by_id(&a, "g")), None);
        assert_eq!(explicit_role(&a, by_id(&a, "b")), Some(Role::Button));
        assert_eq!(explicit_role(&a, by_id(&a, "x")), Some(Role::Other("doc-subtitle".into())));
    }

    #[test]
    fn a_presentational_role_hides_the_implicit_one_only_where_chromium_says() {
        let a = arena(vec![
            el("button", &[("id", "b"), ("role", "presentation")], vec![text("Go")]),
            el("details", &[], vec![el("summary", &[("id", "s"), ("role", "none")], vec![text("More")])]),
            el("h2", &[("id", "h"), ("role", "none")], vec![text("Plain")]),
            el("h2", &[("id", "hf"), ("role", "none"), ("tabindex", "0")], vec![text("Focusable")]),
            el("div", &[("id", "foo"), ("role", "foo link")], vec![]),
            el("button", &[("id", "unknown"), ("role", "foo")], vec![]),
        ]);
        // A focusable element keeps its own role: presentation and none are ignored…
        assert_eq!(role_of(&a, by_id(&a, "b")), Some(Role::Button));
        assert_eq!(role_of(&a, by_id(&a, "s")), Some(Role::Button));
        assert_eq!(role(&a, by_id(&a, "hf")), Some(Role::Heading));
        // …one that cannot take focus loses it.
        assert_eq!(role(&a, by_id(&a, "h")), Some(Role::None));
        // The first token that is a role counts; words that are none are skipped.
        assert_eq!(role_of(&a, by_id(&a, "foo")), Some(Role::Link));
        assert_eq!(role_of(&a, by_id(&a, "unknown")), Some(Role::Button));
    }

    #[test]
    fn implicit_roles_of_controls() {
        let a = arena(vec![
            el("a", &[("id", "a"), ("href", "/x")], vec![text("x")]),
            el("a", &[("id", "a2")], vec![text("no href")]),
            el("select", &[("id", "one")], vec![]),
            el("select", &[("id", "many"), ("size", "4")], vec![]),
            el("input", &[("id", "search"), ("type", "search")], vec![]),
            el("input", &[("id", "suggest"), ("type", "search"), ("list", "l")], vec![]),
            el("datalist", &[("id", "l")], vec![]),
            el("input", &[("id", "dangling"), ("list", "nothing")], vec![]),
            el("input", &[("id", "hidden"), ("type", "hidden")], vec![]),
            el("input", &[("id", "plain")], vec![]),
            el("input", &[("id", "range"), ("type", "RANGE")], vec![]),
            el("div", &[("id", "edit"), ("contenteditable", "")], vec![]),
        ]);
        let r = |id: &str| role_of(&a, by_id(&a, id));
        assert_eq!(r("a"), Some(Role::Link));
        assert_eq!(r("a2"), None);
        assert_eq!(r("one"), Some(Role::Combobox));
        assert_eq!(r("many"), Some(Role::Listbox));
        assert_eq!(r("search"), Some(Role::Searchbox));
        assert_eq!(r("suggest"), Some(Role::Combobox));
        assert_eq!(r("dangling"), Some(Role::Textbox), "a list that names no datalist");
        assert_eq!(r("hidden"), None);
        assert_eq!(r("plain"), Some(Role::Textbox));
        assert_eq!(r("range"), Some(Role::Slider));
        assert_eq!(r("edit"), Some(Role::Textbox));
    }

    #[test]
    fn header_cells_head_their_row_or_their_column() {
        let a = arena(vec![el(
            "table",
            &[],
            vec![
                el("thead", &[], vec![el("tr", &[], vec![el("th", &[("id", "head")], vec![text("Name")])])]),
                el(
                    "tbody",
                    &[],
                    vec![
                        el("tr", &[], vec![el("th", &[("id", "side")], vec![]), el("td", &[], vec![])]),
                        el(
                            "tr",
                            &[],
                            vec![el("th", &[("id", "scoped"), ("scope", "col")], vec![]), el("td", &[], vec![])],
                        ),
                        el("tr", &[], vec![el("th", &[("id", "alone")], vec![])]),
                    ],
                ),
            ],
        )]);
        let r = |id: &str| implicit_content_role(&a, by_id(&a, id));
        assert_eq!(r("head"), Some(Role::ColumnHeader));
        assert_eq!(r("side"), Some(Role::RowHeader));
        assert_eq!(r("scoped"), Some(Role::ColumnHeader));
        assert_eq!(r("alone"), Some(Role::ColumnHeader));
    }

    #[test]
    fn content_roles_need_what_makes_them_one() {
        let a = arena(vec![
            el("img", &[("id", "alt"), ("alt", "Logo")], vec![]),
            el("img", &[("id", "decor"), ("alt", " ")], vec![]),
            el("section", &[("id", "named"), ("aria-label", "News")], vec![]),
            el("section", &[("id", "plain")], vec![]),
            el("h4", &[("id", "h")], vec![]),
        ]);
        let r = |id: &str| implicit_content_role(&a, by_id(&a, id));
        assert_eq!(r("alt"), Some(Role::Image));
        assert_eq!(r("decor"), None);
        assert_eq!(r("named"), Some(Role::Region));
        assert_eq!(r("plain"), None);
        assert_eq!(r("h"), Some(Role::Heading));
    }

    #[test]
    fn widget_roles_make_an_element_interactive() {
        assert!(is_interactive_role(&Role::Tab));
        assert!(is_interactive_role(&Role::Spinbutton));
        assert!(!is_interactive_role(&Role::Heading));
        assert!(!is_interactive_role(&Role::Other("widget".into())));
    }
}
