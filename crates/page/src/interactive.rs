//! Which elements are interactive, whether they can be seen, and what an agent
//! is told about each (the seed's element descriptor).

use std::collections::{HashMap, HashSet};

use crate::arena::{Arena, NodeId, NodeKind};
use crate::facts::Facts;
use crate::geometry::Rect;
use crate::index::ElementIndex;
use crate::text::{collapse, cut, visible_text};
use crate::url::resolve;

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

const NATIVE: &[&str] = &["a", "button", "input", "textarea", "select", "option", "summary"];
const LABELABLE: &[&str] = &["input", "select", "textarea", "button", "meter", "output", "progress"];

/// Why an element counts as interactive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Its tag (`<a>`, `<button>`, …).
    Native,
    /// An explicit interactive ARIA role.
    Role,
    /// A `<label>` tied to a form control.
    Label,
    /// `contenteditable`.
    Editable,
    /// A click listener, `onclick`, or a non-inherited `cursor: pointer`.
    Evidence,
}

/// The seed's element descriptor, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    pub tag: String,
    pub role: Option<String>,
    pub aria_label: Option<String>,
    pub text_content: Option<String>,
    pub name: Option<String>,
    pub value: Option<String>,
    pub placeholder: Option<String>,
    pub type_: Option<String>,
    pub href: Option<String>,
    pub checked: Option<bool>,
}

/// One indexed element: what the agent sees plus what the browser layer needs to act.
#[derive(Debug, Clone)]
pub struct Element {
    /// 1-based index, in document order.
    pub index: ElementIndex,
    pub node: NodeId,
    /// Which frame capture (CDP session) owns the node.
    pub frame: usize,
    pub backend_node_id: i64,
    pub reason: Reason,
    pub descriptor: Descriptor,
    /// A short accessible name for page text and marks.
    pub label: String,
    /// Whole box and its visible part, in viewport CSS pixels.
    pub bounds: Rect,
    pub visible: Rect,
    /// A point inside the element that no other element covers.
    pub click_point: (f64, f64),
    pub disabled: bool,
    pub readonly: bool,
    /// Can take typed text (text inputs, textareas, contenteditable).
    pub accepts_text: bool,
    /// For an `<option>`: the index of its `<select>`.
    pub select: Option<ElementIndex>,
    /// For an `<option>`: selected; for a `<select>`: allows several.
    pub selected: bool,
    pub multiple: bool,
    pub expanded: Option<bool>,
    /// Has keyboard focus.
    pub focused: bool,
    /// For range and number inputs: `(min, max)` as written or defaulted.
    pub range: Option<(String, String)>,
    /// A control of an open JavaScript dialog rather than of the page.
    pub dialog: Option<DialogControl>,
    /// For a `<label>` whose text is the name of the indexed control it labels:
    /// that control. page_content shows such a label as a bare marker beside the
    /// control's token (`[1]label [2]textbox "Email"`), not its text again.
    pub label_for: Option<ElementIndex>,
}

/// What a JavaScript dialog's control does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogControl {
    /// OK / Leave: accept the dialog (with the typed text, for a prompt).
    Accept,
    /// Cancel / Stay: dismiss it.
    Dismiss,
    /// The text field of a `prompt()`.
    Prompt,
}

/// An interactive element that is laid out in the viewport but covered.
#[derive(Debug, Clone)]
pub struct Covered {
    pub node: NodeId,
    pub by: NodeId,
}

pub struct Found {
    pub elements: Vec<Element>,
    pub covered: Vec<Covered>,
    /// `<label>`s whose text is the name of an indexed control: the token says it,
    /// so the text is not repeated beside it.
    pub naming_labels: HashSet<NodeId>,
}

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

fn input_type(arena: &Arena, id: NodeId) -> String {
    arena
        .node(id)
        .attr("type")
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "text".into())
}

fn is_editable_attr(v: Option<&str>) -> bool {
    matches!(v.map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("" | "true" | "plaintext-only"))
}

pub(crate) fn explicit_role(arena: &Arena, id: NodeId) -> Option<String> {
    arena.node(id).attr("role").and_then(|r| r.split_whitespace().next()).map(|r| r.to_ascii_lowercase())
}

/// The element's ARIA role: explicit, else the implicit role of its tag.
pub fn role_of(arena: &Arena, id: NodeId) -> Option<String> {
    if let Some(r) = explicit_role(arena, id) {
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

fn semantic_reason(arena: &Arena, id: NodeId, label_targets: &HashSet<NodeId>) -> Option<Reason> {
    let n = arena.node(id);
    if NATIVE.contains(&n.tag.as_str()) {
        if n.tag == "input" && input_type(arena, id) == "hidden" {
            return None;
        }
        return Some(Reason::Native);
    }
    if explicit_role(arena, id).is_some_and(|r| INTERACTIVE_ROLES.contains(&r.as_str())) {
        return Some(Reason::Role);
    }
    if n.tag == "label" && label_targets.contains(&id) {
        return Some(Reason::Label);
    }
    if is_editable_attr(n.attr("contenteditable")) {
        return Some(Reason::Editable);
    }
    None
}

/// `<label>`s that are tied to a control (by `for` or by containing one).
fn associated_labels(arena: &Arena) -> (HashSet<NodeId>, HashMap<NodeId, Vec<NodeId>>) {
    let mut by_id: HashMap<(usize, &str), NodeId> = HashMap::new();
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.is_element() && !n.in_ua_shadow && LABELABLE.contains(&n.tag.as_str()) {
            if let Some(idv) = n.attr("id") {
                by_id.entry((n.doc, idv)).or_insert(i as NodeId);
            }
        }
    }
    let mut labels = HashSet::new();
    let mut labels_of: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.tag != "label" || n.in_ua_shadow {
            continue;
        }
        let i = i as NodeId;
        let target = match n.attr("for") {
            Some(f) => by_id.get(&(n.doc, f)).copied(),
            None => first_descendant(arena, i, |m| LABELABLE.contains(&m.tag.as_str())),
        };
        if let Some(t) = target {
            labels.insert(i);
            labels_of.entry(t).or_default().push(i);
        }
    }
    (labels, labels_of)
}

fn first_descendant(arena: &Arena, id: NodeId, pred: impl Fn(&crate::arena::Node) -> bool) -> Option<NodeId> {
    let mut stack: Vec<NodeId> = arena.node(id).children.iter().rev().copied().collect();
    while let Some(c) = stack.pop() {
        let n = arena.node(c);
        if n.is_element() && pred(n) {
            return Some(c);
        }
        stack.extend(n.children.iter().rev().copied());
    }
    None
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

/// The nearest ancestor element with a layout box, skipping shadow roots.
fn layout_parent(arena: &Arena, id: NodeId) -> Option<NodeId> {
    arena.ancestors(id).find(|&a| arena.node(a).is_element() && arena.node(a).layout.is_some())
}

/// Box of an element, or of its laid-out descendants when it has none (`display: contents`,
/// an inline `<a>` around blocks).
fn element_rect(arena: &Arena, id: NodeId) -> (Rect, Rect) {
    let n = arena.node(id);
    if let Some(l) = &n.layout {
        if !l.rect.is_empty() {
            return (l.rect, n.visible_rect().unwrap_or_default());
        }
    }
    let mut full = Rect::default();
    let mut vis = Rect::default();
    let mut stack: Vec<NodeId> = n.children.clone();
    let mut budget = 2000;
    while let Some(c) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        let cn = arena.node(c);
        if cn.in_ua_shadow {
            continue;
        }
        if let Some(l) = &cn.layout {
            if !l.rect.is_empty() {
                full = full.union(&l.rect);
                if let Some(v) = cn.visible_rect() {
                    vis = vis.union(&v);
                }
                continue;
            }
        }
        stack.extend(cn.children.iter().copied());
    }
    (full, vis)
}

fn sample_points(r: &Rect) -> [(f64, f64); 5] {
    let (cx, cy) = r.center();
    let q = |fx: f64, fy: f64| (r.x + r.w * fx, r.y + r.h * fy);
    [(cx, cy), q(0.25, 0.25), q(0.75, 0.25), q(0.25, 0.75), q(0.75, 0.75)]
}

/// Visible line fragments of the text inside an inline element (a wrapped
/// link's box spans whole lines; its fragments are where it really is).
fn text_fragments(arena: &Arena, id: NodeId, clip: &Rect) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut stack = vec![id];
    while let Some(c) = stack.pop() {
        let n = arena.node(c);
        if n.kind == NodeKind::Text {
            if let Some(l) = &n.layout {
                for b in &l.boxes {
                    let v = b.intersect(clip).intersect(&n.clip);
                    if !v.is_empty() {
                        out.push(v.center());
                    }
                }
            }
        } else {
            stack.extend(n.children.iter().rev().copied());
        }
        if out.len() >= 6 {
            break;
        }
    }
    out
}

/// Evidence that a plain element reacts to clicks: a click/mousedown listener or
/// `onclick` (snapshot), a pointer/touch/dblclick/contextmenu listener (observer
/// script), a non-inherited `cursor: pointer`, or `tabindex >= 0`.
fn has_evidence(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    if matches!(n.tag.as_str(), "html" | "body" | "iframe" | "frame") || n.pseudo {
        return false;
    }
    let pointer = n.layout.as_ref().is_some_and(|l| l.style.cursor_pointer)
        && !layout_parent(arena, id)
            .and_then(|p| arena.node(p).layout.as_ref())
            .is_some_and(|l| l.style.cursor_pointer);
    let focusable = n.attr("tabindex").and_then(|t| t.trim().parse::<i64>().ok()).is_some_and(|t| t >= 0);
    n.clickable || n.pointer_listener || pointer || focusable
}

/// Every interactive element of the page, visible or not, with why it counts.
/// Inert elements (an `inert` subtree, outside an open modal dialog) are left out.
pub fn candidates(arena: &Arena, label_set: &HashSet<NodeId>) -> Vec<(NodeId, Reason)> {
    let n_nodes = arena.nodes.len();
    // Semantic interactivity, and which nodes have a semantic descendant / ancestor.
    let mut semantic: Vec<Option<Reason>> = vec![None; n_nodes];
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.is_element() && !n.in_ua_shadow {
            semantic[i] = semantic_reason(arena, i as NodeId, label_set);
        }
    }
    let mut under_semantic = vec![false; n_nodes];
    for i in 0..n_nodes {
        if let Some(p) = arena.nodes[i].parent {
            under_semantic[i] = under_semantic[p as usize] || semantic[p as usize].is_some();
        }
    }
    // Evidence-only elements: not inside a semantic one.
    let mut evidence = vec![false; n_nodes];
    for (i, n) in arena.nodes.iter().enumerate() {
        if n.is_element() && !n.in_ua_shadow && semantic[i].is_none() && !under_semantic[i] {
            evidence[i] = has_evidence(arena, i as NodeId);
        }
    }
    // A container that delegates clicks for the interactive things inside it is not a target itself.
    let mut has_target_desc = vec![false; n_nodes];
    for i in (1..n_nodes).rev() {
        if let Some(p) = arena.nodes[i].parent {
            if semantic[i].is_some() || evidence[i] || has_target_desc[i] {
                has_target_desc[p as usize] = true;
            }
        }
    }
    let mut out = Vec::new();
    for (i, reason) in semantic.iter().enumerate() {
        let n = &arena.nodes[i];
        if !n.is_element() || n.in_ua_shadow || n.inert {
            continue;
        }
        let reason = match reason {
            Some(r) => *r,
            None if evidence[i] && !has_target_desc[i] => Reason::Evidence,
            None => continue,
        };
        out.push((i as NodeId, reason));
    }
    out
}

pub fn find(arena: &mut Arena, facts: &Facts) -> Found {
    let labels_of = &facts.labels_of;
    let mut elements: Vec<Element> = Vec::new();
    let mut covered = Vec::new();
    let mut select_index: HashMap<NodeId, ElementIndex> = HashMap::new();
    for &(id, reason) in &facts.candidates {
        let i = id as usize;
        let n = &arena.nodes[i];
        // Options belong to the select that holds them: listed right after it when it is.
        if n.tag == "option" {
            let Some(sel) = arena.ancestors(id).take(3).find(|&a| arena.node(a).tag == "select") else { continue };
            let Some(&sel_index) = select_index.get(&sel) else { continue };
            if n.has_attr("hidden") {
                continue;
            }
            let Some(parent) = sel_index.of(&elements).cloned() else { continue };
            let descriptor = describe(arena, id);
            elements.push(Element {
                index: ElementIndex::from_position(elements.len()),
                node: id,
                frame: n.frame,
                backend_node_id: n.backend_id,
                reason,
                label: descriptor.text_content.clone().unwrap_or_default(),
                descriptor,
                bounds: parent.bounds,
                visible: parent.visible,
                click_point: parent.click_point,
                disabled: is_disabled(arena, id) || parent.disabled,
                readonly: false,
                accepts_text: false,
                select: Some(sel_index),
                selected: n.selected,
                multiple: false,
                expanded: None,
                focused: false,
                range: None,
                dialog: None,
                label_for: None,
            });
            continue;
        }
        let (bounds, visible) = element_rect(arena, id);
        if visible.is_empty() {
            continue;
        }
        let mut click = None;
        let mut cover = None;
        let inline = n.layout.as_ref().is_some_and(|l| l.style.display == "inline");
        let mut points = if inline { text_fragments(arena, id, &visible) } else { Vec::new() };
        points.extend(sample_points(&visible));
        for (x, y) in points {
            match arena.cover_at(id, x, y) {
                None => {
                    click = Some((x, y));
                    break;
                }
                Some(by) => {
                    if cover.is_none() {
                        cover = by;
                    }
                }
            }
        }
        let Some(click_point) = click else {
            if let Some(by) = cover {
                covered.push(Covered { node: id, by });
            }
            continue;
        };
        let n = &arena.nodes[i];
        let descriptor = describe(arena, id);
        let itype = if n.tag == "input" { input_type(arena, id) } else { String::new() };
        let accepts_text = match n.tag.as_str() {
            "textarea" | "input" => is_text_field(arena, id),
            _ => is_editable_attr(n.attr("contenteditable")),
        };
        let index = ElementIndex::from_position(elements.len());
        if n.tag == "select" {
            select_index.insert(id, index);
        }
        let label = if reason == Reason::Editable {
            // Its text is its value; only a real label names it.
            editable_name(arena, id, labels_of)
        } else {
            accessible_name(arena, id, labels_of, &descriptor)
        };
        let range = match itype.as_str() {
            "range" => Some((
                n.attr("min").unwrap_or("0").trim().to_string(),
                n.attr("max").unwrap_or("100").trim().to_string(),
            )),
            "number" if n.has_attr("min") || n.has_attr("max") => {
                Some((n.attr("min").unwrap_or("").trim().to_string(), n.attr("max").unwrap_or("").trim().to_string()))
            }
            _ => None,
        };
        elements.push(Element {
            index,
            node: id,
            frame: n.frame,
            backend_node_id: n.backend_id,
            reason,
            label,
            descriptor,
            bounds,
            visible,
            click_point,
            disabled: is_disabled(arena, id),
            readonly: n.has_attr("readonly") || n.attr("aria-readonly") == Some("true"),
            accepts_text,
            select: None,
            selected: false,
            multiple: n.tag == "select" && n.has_attr("multiple"),
            expanded: expanded(arena, id),
            focused: n.focused,
            range,
            dialog: None,
            label_for: None,
        });
    }
    let mut naming_labels = HashSet::new();
    for e in &elements {
        if let Some(ls) = labels_of.get(&e.node) {
            let text = collapse(&ls.iter().map(|&l| visible_text(arena, l, 200, false)).collect::<Vec<_>>().join(" "));
            if !text.is_empty() && cut(&text, 80) == e.label {
                naming_labels.extend(ls.iter().copied());
            }
        }
    }
    mark_naming_labels(&mut elements, labels_of, &naming_labels);
    show_hidden_controls_state(arena, &mut elements, labels_of);
    Found { elements, covered, naming_labels }
}

/// The seed lists a `<label>` tied to a form control as interactive, so a label
/// keeps its own entry even when its control is indexed (clicking it does what a
/// click on the label does). Where its text is already the control's name, the
/// entry points at the control (`label_for`), so page_content shows the label as
/// a marker beside the control's token instead of repeating the text.
fn mark_naming_labels(
    elements: &mut [Element],
    labels_of: &HashMap<NodeId, Vec<NodeId>>,
    naming_labels: &HashSet<NodeId>,
) {
    let index_of: HashMap<NodeId, ElementIndex> = elements.iter().map(|e| (e.node, e.index)).collect();
    let mut control_of: HashMap<NodeId, ElementIndex> = HashMap::new();
    for (control, labels) in labels_of {
        if let Some(&ci) = index_of.get(control) {
            for l in labels.iter().filter(|l| naming_labels.contains(l)) {
                control_of.insert(*l, ci);
            }
        }
    }
    for e in elements.iter_mut().filter(|e| e.reason == Reason::Label) {
        e.label_for = control_of.get(&e.node).copied();
    }
}

/// A label that stands for a checkbox or radio button drawn by the label itself
/// (the input transparent or 1px, as TodoMVC's toggle-all): the label is what a
/// person clicks, so its entry says whether its control is checked.
fn show_hidden_controls_state(arena: &Arena, elements: &mut [Element], labels_of: &HashMap<NodeId, Vec<NodeId>>) {
    let indexed: HashSet<NodeId> = elements.iter().map(|e| e.node).collect();
    let mut state_of: HashMap<NodeId, bool> = HashMap::new();
    for (&control, labels) in labels_of {
        let toggles = arena.node(control).tag == "input"
            && matches!(input_type(arena, control).as_str(), "checkbox" | "radio")
            && !is_disabled(arena, control);
        if toggles && !indexed.contains(&control) {
            for &l in labels {
                state_of.insert(l, arena.node(control).checked);
            }
        }
    }
    for e in elements.iter_mut().filter(|e| e.reason == Reason::Label) {
        if let Some(&checked) = state_of.get(&e.node) {
            e.descriptor.checked = Some(checked);
        }
    }
}

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

fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(collapse).filter(|s| !s.is_empty())
}

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
pub fn describe(arena: &Arena, id: NodeId) -> Descriptor {
    let n = arena.node(id);
    let tag = n.tag.clone();
    let itype = (tag == "input").then(|| input_type(arena, id));
    let text = match tag.as_str() {
        "input" | "textarea" => None,
        "select" => selected_option(arena, id).map(|o| collapse(&visible_text(arena, o, 200, true))),
        "option" => Some(collapse(&visible_text(arena, id, 200, true))),
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
        _ => match explicit_role(arena, id).as_deref() {
            Some("checkbox" | "radio" | "switch" | "menuitemcheckbox" | "menuitemradio") => {
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
        role: role_of(arena, id),
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

/// A short name for page text and marks: aria-label, aria-labelledby, label text,
/// alt, title, placeholder, value, then visible text.
pub fn accessible_name(arena: &Arena, id: NodeId, labels_of: &HashMap<NodeId, Vec<NodeId>>, d: &Descriptor) -> String {
    accessible_name_within(arena, id, labels_of, d, 80)
}

/// [`accessible_name`] cut at `max` characters (semantic_v2 keeps 200, as Chromium's tree gave).
pub fn accessible_name_within(
    arena: &Arena,
    id: NodeId,
    labels_of: &HashMap<NodeId, Vec<NodeId>>,
    d: &Descriptor,
    max: usize,
) -> String {
    let n = arena.node(id);
    if let Some(l) = non_empty(n.attr("aria-label")) {
        return cut(&l, max);
    }
    if let Some(t) = labelledby(arena, id) {
        return t;
    }
    if matches!(n.tag.as_str(), "input" | "select" | "textarea") {
        if let Some(ls) = labels_of.get(&id) {
            // A label's name is its text, or the alt of the icon it shows (`<label><img alt="Search">`).
            let label_text = |l: NodeId| {
                let t = visible_text(arena, l, 200, false);
                if !t.trim().is_empty() {
                    return t;
                }
                first_descendant(arena, l, |m| m.tag == "img" && m.layout.is_some())
                    .and_then(|img| arena.node(img).attr("alt").map(str::to_string))
                    .unwrap_or_default()
            };
            let t = collapse(&ls.iter().map(|&l| label_text(l)).collect::<Vec<_>>().join(" "));
            if !t.is_empty() {
                return cut(&t, max);
            }
        }
    }
    // An icon names what holds it: its alt, else its title (`<a><img title="Does not compile"></a>`).
    let img_alt = || {
        first_descendant(arena, id, |m| m.tag == "img" && m.attr("alt").is_some_and(|a| !a.trim().is_empty()))
            .and_then(|img| arena.node(img).attr("alt").map(collapse))
            .or_else(|| {
                first_descendant(arena, id, |m| {
                    m.tag == "img" && m.attr("alt").is_none() && m.attr("title").is_some_and(|a| !a.trim().is_empty())
                })
                .and_then(|img| arena.node(img).attr("title").map(collapse))
            })
    };
    let is_button_input = n.tag == "input" && matches!(d.type_.as_deref(), Some("submit" | "button" | "reset"));
    // An element without a role (a clickable div) that shows only a symbol (`«`)
    // is named by its title, as Chromium names it: a generic element takes no
    // name from its content.
    let symbol_only = |t: &String| !t.chars().any(char::is_alphanumeric);
    let titled_generic = d.role.is_none() && non_empty(n.attr("title")).is_some();
    let candidates = [
        non_empty(n.attr("alt")),
        d.text_content
            .clone()
            .filter(|_| !matches!(n.tag.as_str(), "select"))
            .filter(|t| !(titled_generic && symbol_only(t))),
        img_alt(),
        non_empty(n.attr("title")),
        svg_title(arena, id),
        non_empty(n.attr("placeholder")),
        if is_button_input { d.value.clone().filter(|v| !v.is_empty()) } else { None },
    ];
    candidates.into_iter().flatten().find(|s| !s.is_empty()).map(|s| cut(&s, max)).unwrap_or_default()
}

/// The name of a contenteditable: aria-label, aria-labelledby, a `<label>`, title,
/// aria-placeholder. Never its own text, which is its value.
fn editable_name(arena: &Arena, id: NodeId, labels_of: &HashMap<NodeId, Vec<NodeId>>) -> String {
    let n = arena.node(id);
    if let Some(l) = non_empty(n.attr("aria-label")) {
        return cut(&l, 80);
    }
    if let Some(t) = labelledby(arena, id) {
        return t;
    }
    if let Some(ls) = labels_of.get(&id) {
        let t = collapse(&ls.iter().map(|&l| visible_text(arena, l, 200, false)).collect::<Vec<_>>().join(" "));
        if !t.is_empty() {
            return cut(&t, 80);
        }
    }
    [non_empty(n.attr("title")), non_empty(n.attr("aria-placeholder")), non_empty(n.attr("data-placeholder"))]
        .into_iter()
        .flatten()
        .next()
        .map(|s| cut(&s, 80))
        .unwrap_or_default()
}

/// The name an author gave an element: `aria-label`, else `aria-labelledby`.
pub(crate) fn aria_label(arena: &Arena, id: NodeId) -> Option<String> {
    non_empty(arena.node(id).attr("aria-label")).map(|l| cut(&l, 80)).or_else(|| labelledby(arena, id))
}

/// The text of the elements `aria-labelledby` points at.
fn labelledby(arena: &Arena, id: NodeId) -> Option<String> {
    let n = arena.node(id);
    let ids = n.attr("aria-labelledby")?;
    let text: Vec<String> = ids
        .split_whitespace()
        .filter_map(|want| {
            arena
                .nodes
                .iter()
                .position(|m| m.doc == n.doc && m.attr("id") == Some(want))
                .map(|m| visible_text(arena, m as NodeId, 200, true))
        })
        .collect();
    let t = collapse(&text.join(" "));
    (!t.is_empty()).then(|| cut(&t, 80))
}

/// The `<title>` of an `<svg>` (the element itself or an icon inside it).
fn svg_title(arena: &Arena, id: NodeId) -> Option<String> {
    let svg = if arena.node(id).tag == "svg" { Some(id) } else { first_descendant(arena, id, |m| m.tag == "svg") }?;
    let title = arena.node(svg).children.iter().copied().find(|&c| arena.node(c).tag == "title")?;
    let text: String = arena.node(title).children.iter().map(|&c| arena.node(c).value.as_str()).collect();
    non_empty(Some(&text))
}

/// `<label>`s tied to controls, and the labels of each control.
pub fn labels(arena: &Arena) -> (HashSet<NodeId>, HashMap<NodeId, Vec<NodeId>>) {
    associated_labels(arena)
}

/// (whole box, visible part) of an element, falling back to its laid-out descendants.
pub fn element_rect_pub(arena: &Arena, id: NodeId) -> (Rect, Rect) {
    element_rect(arena, id)
}
