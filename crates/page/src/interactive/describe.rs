//! The seed's element descriptor: tag, role, aria-label, text, name, value,
//! placeholder, type, href and checked, as plain data.

use crate::arena::{Arena, NodeId};
use crate::aria::{self, Role};
use crate::text::{collapse, cut, typed_text, visible_text};
use crate::url::resolve;

use super::Descriptor;

fn selected_option(arena: &Arena, select: NodeId) -> Option<NodeId> {
    let mut first = None;
    let mut stack = arena.node(select).children.clone();
    stack.reverse();
    while let Some(c) = stack.pop() {
        let n = arena.node(c);
        if n.tag == "option" {
            if n.selected {
                return Some(c);
            }
            first.get_or_insert(c);
        } else if n.tag == "optgroup" {
            stack.extend(n.children.iter().rev().copied());
        }
    }
    // A single-choice select with nothing marked shows its first option.
    if arena.node(select).has_attr("multiple") {
        None
    } else {
        first
    }
}

fn option_value(arena: &Arena, opt: NodeId) -> String {
    match arena.node(opt).attr("value") {
        Some(v) => v.to_string(),
        None => collapse(&visible_text(arena, opt, 200, true)),
    }
}

/// Build the seed's descriptor for one element.
pub(crate) fn describe(arena: &Arena, id: NodeId) -> Descriptor {
    let n = arena.node(id);
    let tag = n.tag.clone();
    let itype = (tag == "input").then(|| aria::input_type(arena, id));
    let text = match tag.as_str() {
        "input" | "textarea" => None,
        "select" => selected_option(arena, id).map(|o| collapse(&visible_text(arena, o, 200, true))),
        "option" => Some(collapse(&visible_text(arena, id, 200, true))),
        // What was typed, not the editor's CSS placeholder.
        _ if aria::is_editable_attr(n.attr("contenteditable")) => Some(collapse(&typed_text(arena, id, 400))),
        _ => Some(collapse(&visible_text(arena, id, 400, false))),
    }
    .filter(|t| !t.is_empty())
    .map(|t| cut(&t, 200));
    let value = match tag.as_str() {
        "input" => match itype.as_deref() {
            Some("checkbox" | "radio") => Some(n.attr("value").unwrap_or("on").to_string()),
            _ => Some(n.input_value.clone().or_else(|| n.attr("value").map(str::to_string)).unwrap_or_default()),
        },
        "textarea" => Some(n.text_value.clone().or_else(|| n.input_value.clone()).unwrap_or_default()),
        "select" => Some(selected_option(arena, id).map(|o| option_value(arena, o)).unwrap_or_default()),
        "option" => Some(option_value(arena, id)),
        "button" => n.attr("value").map(str::to_string),
        _ => None,
    };
    let checked = match (tag.as_str(), itype.as_deref()) {
        ("input", Some("checkbox" | "radio")) => Some(n.checked),
        _ => match aria::role_attr(arena, id) {
            Some(Role::Checkbox | Role::Radio | Role::Switch | Role::MenuItemCheckbox | Role::MenuItemRadio) => {
                Some(n.attr("aria-checked").is_some_and(|v| v.eq_ignore_ascii_case("true")))
            }
            _ => None,
        },
    };
    let href = match tag.as_str() {
        "a" | "area" => n.attr("href").map(|h| resolve(&arena.docs[n.doc].base_url_or_url(), h.trim())),
        _ => None,
    };
    let type_ = match tag.as_str() {
        "input" => itype.clone(),
        "button" => Some(
            n.attr("type")
                .map(|t| t.trim().to_ascii_lowercase())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "submit".into()),
        ),
        _ => n.attr("type").map(str::to_string),
    };
    Descriptor {
        tag,
        role: aria::role_of(arena, id),
        aria_label: n.attr("aria-label").map(str::to_string),
        text_content: text,
        name: n.attr("name").map(str::to_string),
        value,
        placeholder: n.attr("placeholder").map(str::to_string),
        type_,
        href,
        checked,
    }
}
