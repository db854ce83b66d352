//! What a semantic node says besides its role and name: the actions an
//! action node declares, its states, and its value.

use crate::arena::{Arena, NodeId};
use crate::aria::{self, Role, State};
use crate::capture::{AxNode, AxValue};
use crate::facts::Reason;
use crate::interactive::Descriptor;

use super::build::Ctx;
use super::ActionKind;

/// The actions an action node supports: select (a `<select>`) or click, then
/// type, check and scroll where they apply.
pub(super) fn actions(arena: &Arena, id: NodeId, role: &Role, reason: Option<Reason>) -> Vec<ActionKind> {
    let n = arena.node(id);
    let mut actions = Vec::new();
    let checkable =
        matches!(role, Role::Checkbox | Role::Radio | Role::Switch | Role::MenuItemCheckbox | Role::MenuItemRadio);
    let typable = aria::is_text_field(arena, id) || reason == Some(Reason::Editable);
    if n.tag == "select" {
        actions.push(ActionKind::Select);
    } else {
        actions.push(ActionKind::Click);
    }
    if typable {
        actions.push(ActionKind::Type);
    }
    if checkable {
        actions.push(ActionKind::Check);
    }
    if scrollable(arena, id) {
        actions.push(ActionKind::Scroll);
    }
    actions
}

/// A box that clips its overflow (other than a form field's own).
fn scrollable(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    n.layout.as_ref().is_some_and(|l| {
        (l.style.clips_x || l.style.clips_y) && n.tag != "input" && n.tag != "select" && n.tag != "textarea"
    })
}

fn ax_prop<'a>(n: &'a AxNode, name: &str) -> Option<&'a AxValue> {
    n.properties.iter().find(|p| p.name == name).map(|p| &p.value)
}

/// The states of a node: an action node's disabled, checked, readonly and
/// required first; then expanded, selected, focused, level and modal, from
/// Chromium's tree when the capture carries it, else from the DOM.
pub(super) fn states(
    ctx: &Ctx,
    arena: &Arena,
    id: NodeId,
    role: &Role,
    axn: Option<&AxNode>,
    is_action: bool,
    descriptor: &Descriptor,
) -> Vec<State> {
    let n = arena.node(id);
    let mut states = Vec::new();
    if is_action {
        let disabled = axn.and_then(|a| ax_prop(a, "disabled")).and_then(AxValue::as_bool).unwrap_or(false)
            || aria::is_disabled(arena, id);
        states.push(State::Disabled(disabled));
        if let Some(c) = descriptor.checked {
            states.push(State::Checked(c));
        }
        if n.has_attr("readonly") {
            states.push(State::Readonly(true));
        }
        if n.has_attr("required") {
            states.push(State::Required(true));
        }
    }
    if !ctx.have_ax {
        states.extend(aria::states(arena, id, role));
    } else if let Some(a) = axn {
        states.extend(ax_states(a, role));
    }
    states
}

/// expanded, selected, focused, level and modal as Chromium's tree reports
/// them. A `focused: false` is left out, as is a list item's level (it
/// repeats the outline's indentation).
fn ax_states(a: &AxNode, role: &Role) -> Vec<State> {
    let flag = |key: &str| ax_prop(a, key).and_then(AxValue::as_bool);
    let mut out = Vec::new();
    if let Some(e) = flag("expanded") {
        out.push(State::Expanded(e));
    }
    if let Some(s) = flag("selected") {
        out.push(State::Selected(s));
    }
    if flag("focused") == Some(true) {
        out.push(State::Focused(true));
    }
    if matches!(role, Role::Heading | Role::TreeItem | Role::Row) {
        if let Some(l) = ax_prop(a, "level").and_then(AxValue::as_u64) {
            out.push(State::Level(l));
        }
    }
    if let Some(m) = flag("modal") {
        out.push(State::Modal(m));
    }
    out
}

/// The value an action node shows: a field's text (a password as dots), a
/// select's chosen option, an editable's text; none for buttons and toggles.
pub(super) fn value(arena: &Arena, id: NodeId, descriptor: &Descriptor, reason: Option<Reason>) -> Option<String> {
    match arena.node(id).tag.as_str() {
        "input"
            if matches!(
                descriptor.type_.as_deref(),
                Some("checkbox" | "radio" | "submit" | "button" | "reset" | "image")
            ) =>
        {
            None
        }
        "input" | "textarea" if descriptor.type_.as_deref() != Some("password") => descriptor.value.clone(),
        "input" => descriptor.value.as_ref().map(|v| "•".repeat(v.chars().count().min(16))),
        "select" => descriptor.text_content.clone(),
        _ if reason == Some(Reason::Editable) => descriptor.text_content.clone(),
        _ => None,
    }
    .filter(|v| !v.is_empty())
}
