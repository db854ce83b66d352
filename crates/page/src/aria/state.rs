//! States: disabled, expanded, selected, focused, level, modal and whether a
//! field takes typed text, read from the DOM the way Chromium's accessibility
//! tree reports them.

use crate::arena::{Arena, NodeId, NodeKind};

use super::role::{explicit_role, input_type};
use super::{Role, State};

/// `<input>` types that take typed text.
const TEXT_INPUT_TYPES: &[&str] =
    &["text", "email", "password", "search", "tel", "url", "number", "date", "datetime-local", "month", "time", "week"];

/// The one rule for a form field that takes typed text: a `<textarea>`, or an
/// `<input>` of a text type. (Contenteditable elements are decided apart.)
pub(crate) fn is_text_field(arena: &Arena, id: NodeId) -> bool {
    match arena.node(id).tag.as_str() {
        "textarea" => true,
        "input" => TEXT_INPUT_TYPES.contains(&input_type(arena, id).as_str()),
        _ => false,
    }
}

/// The one rule for "disabled": `aria-disabled="true"`, or a form control that
/// is disabled itself or by a disabled `<fieldset>` (outside its first
/// `<legend>`), `<optgroup>` or `<select>`.
pub(crate) fn is_disabled(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    if n.attr("aria-disabled").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return true;
    }
    let form_control = matches!(n.tag.as_str(), "button" | "input" | "select" | "textarea" | "option" | "optgroup");
    if !form_control {
        return false;
    }
    if n.has_attr("disabled") {
        return true;
    }
    let mut child = id;
    for a in arena.ancestors(id) {
        let an = arena.node(a);
        if an.kind == NodeKind::Document {
            break;
        }
        if (an.tag == "fieldset" || (an.tag == "optgroup" && n.tag == "option")) && an.has_attr("disabled") {
            // Controls inside the fieldset's first <legend> stay enabled.
            let first_legend = an.children.iter().copied().find(|&c| arena.node(c).tag == "legend");
            if an.tag == "fieldset" && first_legend == Some(child) {
                return false;
            }
            return true;
        }
        if an.tag == "select" && an.has_attr("disabled") && n.tag == "option" {
            return true;
        }
        child = a;
    }
    false
}

/// `aria-expanded`, or whether the `<details>` of a `<summary>` is open.
pub(crate) fn expanded(arena: &Arena, id: NodeId) -> Option<bool> {
    let n = arena.node(id);
    if let Some(v) = n.attr("aria-expanded") {
        return Some(v.eq_ignore_ascii_case("true"));
    }
    if n.tag == "summary" {
        if let Some(p) = n.parent {
            let pn = arena.node(p);
            if pn.tag == "details" {
                return Some(pn.has_attr("open"));
            }
        }
    }
    None
}

/// Roles that take `aria-expanded` (Chromium reports it on no others).
fn expandable(role: &Role) -> bool {
    matches!(
        role,
        Role::Application
            | Role::Button
            | Role::Checkbox
            | Role::ColumnHeader
            | Role::Combobox
            | Role::GridCell
            | Role::Link
            | Role::Listbox
            | Role::MenuItem
            | Role::MenuItemCheckbox
            | Role::MenuItemRadio
            | Role::Row
            | Role::RowHeader
            | Role::Switch
            | Role::Tab
            | Role::TreeItem
    )
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
fn selectable(role: &Role) -> bool {
    matches!(
        role,
        Role::Option | Role::Tab | Role::Row | Role::GridCell | Role::TreeItem | Role::ColumnHeader | Role::RowHeader
    )
}

/// The states the accessibility tree reports beyond what the DOM descriptor
/// has, in the order semantic_v2 lists them: expanded, selected, focused,
/// level, modal.
pub(crate) fn states(arena: &Arena, id: NodeId, role: &Role) -> Vec<State> {
    let n = arena.node(id);
    let mut out = Vec::new();
    let expanded = expanded(arena, id).filter(|_| expandable(role)).or_else(|| {
        // A drop-down select is a collapsed combobox until its popup opens.
        (n.tag == "select" && *role == Role::Combobox).then_some(false)
    });
    if let Some(e) = expanded {
        out.push(State::Expanded(e));
    }
    if selectable(role) {
        // Tabs, tree items and options are reported unselected unless marked.
        let default = match role {
            // The active descendant of a single-choice list is its selection (selection follows focus).
            // A native option is selected as its select says.
            Role::Option if n.tag == "option" => Some(n.selected),
            Role::Option => Some(arena.is_active_descendant(id)),
            Role::Tab | Role::TreeItem => Some(false),
            _ => None,
        };
        if let Some(s) = attr_bool(arena, id, "aria-selected").or(default) {
            out.push(State::Selected(s));
        }
    }
    if n.focused {
        out.push(State::Focused(true));
    }
    let level = match role {
        Role::Heading => n
            .attr("aria-level")
            .and_then(|l| l.trim().parse::<u64>().ok())
            .filter(|l| *l > 0)
            .or_else(|| n.tag.strip_prefix('h').and_then(|l| l.parse::<u64>().ok()))
            .or(Some(2)),
        Role::TreeItem | Role::Row => {
            n.attr("aria-level").and_then(|l| l.trim().parse::<u64>().ok()).filter(|l| *l > 0)
        }
        _ => None,
    };
    if let Some(l) = level {
        out.push(State::Level(l));
    }
    if matches!(role, Role::Dialog | Role::AlertDialog) {
        // A <dialog> opened with showModal() is fixed in the top layer (see Arena::mark_inert).
        let modal_dialog = n.tag == "dialog" && n.has_attr("open") && n.layout.as_ref().is_some_and(|l| l.style.fixed);
        // An element given the role (`<div role=dialog>`) is reported modal=false
        // unless aria-modal says otherwise, as Chromium reports it.
        let by_role = n.tag != "dialog" && explicit_role(arena, id).is_some();
        let modal = if modal_dialog { Some(true) } else { attr_bool(arena, id, "aria-modal") };
        if let Some(m) = modal.or(by_role.then_some(false)) {
            out.push(State::Modal(m));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{arena, by_id, el, text};

    #[test]
    fn disabled_by_itself_by_a_fieldset_but_not_in_its_first_legend() {
        let a = arena(vec![
            el(
                "fieldset",
                &[("disabled", "")],
                vec![
                    el("legend", &[], vec![el("input", &[("id", "in-legend")], vec![])]),
                    el("input", &[("id", "inside")], vec![]),
                    el("div", &[("id", "div")], vec![]),
                ],
            ),
            el("button", &[("id", "own"), ("disabled", "")], vec![]),
            el("div", &[("id", "aria"), ("aria-disabled", "TRUE")], vec![]),
            el("select", &[("disabled", "")], vec![el("option", &[("id", "opt")], vec![text("a")])]),
        ]);
        let d = |id: &str| is_disabled(&a, by_id(&a, id));
        assert!(d("inside"));
        assert!(!d("in-legend"));
        assert!(!d("div"), "only form controls inherit a fieldset's disabled");
        assert!(d("own"));
        assert!(d("aria"));
        assert!(d("opt"));
    }

    #[test]
    fn text_fields_are_textareas_and_text_inputs() {
        let a = arena(vec![
            el("textarea", &[("id", "ta")], vec![]),
            el("input", &[("id", "default")], vec![]),
            el("input", &[("id", "date"), ("type", "date")], vec![]),
            el("input", &[("id", "box"), ("type", "checkbox")], vec![]),
            el("div", &[("id", "edit"), ("contenteditable", "true")], vec![]),
        ]);
        let t = |id: &str| is_text_field(&a, by_id(&a, id));
        assert!(t("ta") && t("default") && t("date"));
        assert!(!t("box"));
        assert!(!t("edit"), "contenteditable is decided apart");
    }

    #[test]
    fn states_only_on_the_roles_that_take_them() {
        let a = arena(vec![
            el("h3", &[("id", "h3")], vec![]),
            el("div", &[("id", "lvl"), ("role", "heading"), ("aria-level", "5")], vec![]),
            el("div", &[("id", "bad-lvl"), ("role", "heading"), ("aria-level", "0")], vec![]),
            el("div", &[("id", "tab"), ("role", "tab")], vec![]),
            el("div", &[("id", "para"), ("aria-expanded", "true"), ("aria-selected", "true")], vec![]),
            el("button", &[("id", "btn"), ("aria-expanded", "true")], vec![]),
            el("select", &[("id", "sel")], vec![]),
            el("div", &[("id", "dlg"), ("role", "dialog")], vec![]),
            el("div", &[("id", "modal"), ("role", "alertdialog"), ("aria-modal", "true")], vec![]),
        ]);
        let s = |id: &str, role: Role| states(&a, by_id(&a, id), &role);
        assert_eq!(s("h3", Role::Heading), vec![State::Level(3)]);
        assert_eq!(s("lvl", Role::Heading), vec![State::Level(5)]);
        assert_eq!(s("bad-lvl", Role::Heading), vec![State::Level(2)], "a heading defaults to level 2");
        assert_eq!(s("tab", Role::Tab), vec![State::Selected(false)]);
        assert_eq!(s("para", Role::Paragraph), vec![]);
        assert_eq!(s("btn", Role::Button), vec![State::Expanded(true)]);
        assert_eq!(s("sel", Role::Combobox), vec![State::Expanded(false)]);
        assert_eq!(s("dlg", Role::Dialog), vec![State::Modal(false)]);
        assert_eq!(s("modal", Role::AlertDialog), vec![State::Modal(true)]);
    }

    #[test]
    fn a_summary_is_expanded_when_its_details_are_open() {
        let a = arena(vec![
            el("details", &[("open", "")], vec![el("summary", &[("id", "open")], vec![])]),
            el("details", &[], vec![el("summary", &[("id", "shut")], vec![])]),
        ]);
        assert_eq!(expanded(&a, by_id(&a, "open")), Some(true));
        assert_eq!(expanded(&a, by_id(&a, "shut")), Some(false));
    }
}
