//! The element index: which interactive elements can be seen and clicked, and
//! what an agent is told about each (the seed's element descriptor).
//!
//! `facts` says which elements are interactive; this module keeps the visible
//! ones ([`probe`]), describes them ([`describe`]) and names them ([`name`]).

mod describe;
mod hidden;
mod hint;
mod name;
mod probe;

use std::collections::{HashMap, HashSet};

use crate::arena::{Arena, NodeId};
use crate::aria::{self, Role};
use crate::facts::Facts;
pub use crate::facts::Reason;
use crate::geometry::Rect;
use crate::index::ElementIndex;
use crate::text::{collapse, cut, visible_text};

pub(crate) use describe::describe;
pub(crate) use hidden::own_rect;
pub(crate) use hint::hint;
pub(crate) use name::{accessible_name, accessible_name_within, editable_name};
pub(crate) use probe::element_rect;

/// The seed's element descriptor, as plain data.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    pub tag: String,
    pub role: Option<Role>,
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
    /// For a control a person cannot see or click itself (a transparent, 1-px or
    /// clipped-away input drawn by its label or a custom widget): the element
    /// that stands for it on screen, whose box and click point it takes.
    pub proxy: Option<NodeId>,
    /// For an unnamed element: what its icon or its author calls it (`star`,
    /// `trash`), never an accessible name.
    pub hint: Option<String>,
    /// For an ARIA range widget (`slider`, `spinbutton`, `scrollbar`, `progressbar`,
    /// `meter` that is no native input): `aria-valuenow`, else `aria-valuetext`.
    pub aria_value: Option<String>,
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

/// The element index of a capture: every visible, uncovered candidate in
/// document order (a `<select>`'s options right after it), the candidates laid
/// out in the viewport but covered, and the labels whose text the token says.
pub(crate) fn find(arena: &mut Arena, facts: &Facts) -> Found {
    let labels_of = &facts.labels_of;
    let mut elements: Vec<Element> = Vec::new();
    let mut covered = Vec::new();
    let mut select_index: HashMap<NodeId, ElementIndex> = HashMap::new();
    let proxies = hidden::proxies(arena, facts);
    // A label that stands for its hidden control is listed as that control, once.
    let standing_in: HashSet<NodeId> = proxies.values().copied().collect();
    for &(id, reason) in &facts.candidates {
        // Options belong to the select that holds them: listed right after it when it is.
        if arena.node(id).tag == "option" {
            if let Some(e) = option_element(arena, id, reason, &select_index, &elements) {
                elements.push(e);
            }
            continue;
        }
        if reason == Reason::Label && standing_in.contains(&id) {
            continue;
        }
        let proxy = proxies.get(&id).copied();
        let (bounds, visible) = match proxy {
            Some(p) => element_rect(arena, p),
            None => hidden::own_rect(arena, id),
        };
        if visible.is_empty() {
            continue;
        }
        // A speck that only a listener makes a target (a collapsed menu's 1-px items
        // painted under its button), or a label hidden the screen-reader way, is
        // nothing a person sees or clicks.
        if proxy.is_none() && matches!(reason, Reason::Evidence | Reason::Label) && hidden::is_speck(&bounds) {
            continue;
        }
        let inner: Vec<Rect> = if reason == Reason::Evidence { inner_targets(arena, facts, id) } else { Vec::new() };
        let (mut proxy, mut bounds, mut visible) = (proxy, bounds, visible);
        let click_point = match probe::click_point_avoiding(arena, proxy.unwrap_or(id), &visible, &inner) {
            Ok(p) => p,
            // A transparent control under the widget drawn for it (a code editor's or a
            // terminal's textarea under its screen): a click on the widget is the person's.
            Err(Some(by)) if proxy.is_none() && hidden::drawn_over(arena, id, reason, by) => {
                let (b, v) = element_rect(arena, by);
                match probe::click_point_avoiding(arena, by, &v, &[]) {
                    Ok(p) => {
                        (proxy, bounds, visible) = (Some(by), b, v);
                        p
                    }
                    Err(_) => {
                        covered.push(Covered { node: id, by });
                        continue;
                    }
                }
            }
            Err(cover) => {
                if let Some(by) = cover {
                    covered.push(Covered { node: id, by });
                }
                continue;
            }
        };
        let index = ElementIndex::from_position(elements.len());
        if arena.node(id).tag == "select" {
            select_index.insert(id, index);
        }
        let mut e = element(arena, id, reason, index, labels_of, (bounds, visible, click_point));
        e.proxy = proxy;
        elements.push(e);
    }
    let naming_labels = naming_labels(arena, &elements, labels_of);
    mark_naming_labels(&mut elements, labels_of, &naming_labels);
    show_hidden_controls_state(arena, &mut elements, labels_of);
    Found { elements, covered, naming_labels }
}

/// The visible boxes of the interactive elements inside a clickable container.
fn inner_targets(arena: &Arena, facts: &Facts, id: NodeId) -> Vec<Rect> {
    let end = arena.subtree_end(id);
    let from = facts.candidates.partition_point(|&(c, _)| c <= id);
    facts.candidates[from..]
        .iter()
        .take_while(|&&(c, _)| c <= end)
        .map(|&(c, _)| element_rect(arena, c).1)
        .filter(|r| !r.is_empty())
        .collect()
}

/// The entry of an `<option>`: listed under its `<select>` when that is indexed,
/// with the select's box and click point.
fn option_element(
    arena: &Arena,
    id: NodeId,
    reason: Reason,
    select_index: &HashMap<NodeId, ElementIndex>,
    elements: &[Element],
) -> Option<Element> {
    let n = arena.node(id);
    let sel = arena.ancestors(id).take(3).find(|&a| arena.node(a).tag == "select")?;
    let &sel_index = select_index.get(&sel)?;
    if n.has_attr("hidden") {
        return None;
    }
    let parent = sel_index.of(elements)?;
    let descriptor = describe(arena, id);
    Some(Element {
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
        disabled: aria::is_disabled(arena, id) || parent.disabled,
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
        proxy: None,
        hint: None,
        aria_value: None,
    })
}

/// The entry of a visible element: its descriptor, name and states.
fn element(
    arena: &Arena,
    id: NodeId,
    reason: Reason,
    index: ElementIndex,
    labels_of: &HashMap<NodeId, Vec<NodeId>>,
    (bounds, visible, click_point): (Rect, Rect, (f64, f64)),
) -> Element {
    let n = arena.node(id);
    let descriptor = describe(arena, id);
    let accepts_text = match n.tag.as_str() {
        "textarea" | "input" => aria::is_text_field(arena, id),
        _ => aria::is_editable_attr(n.attr("contenteditable")),
    };
    let author_only = named_by_author_only(arena, id, reason, &descriptor);
    let label = if author_only {
        editable_name(arena, id, labels_of)
    } else {
        accessible_name(arena, id, labels_of, &descriptor)
    };
    let hint = if label.is_empty() { hint::hint(arena, id) } else { None };
    let aria_value = aria_value(arena, id, &descriptor);
    Element {
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
        disabled: aria::is_disabled(arena, id),
        readonly: n.has_attr("readonly") || n.attr("aria-readonly") == Some("true"),
        accepts_text,
        select: None,
        selected: false,
        multiple: n.tag == "select" && n.has_attr("multiple"),
        expanded: aria::expanded(arena, id),
        focused: n.focused,
        range: range(arena, id),
        dialog: None,
        label_for: None,
        proxy: None,
        hint,
        aria_value,
    }
}

/// Whether an element takes its name only from its author (labels, aria-*,
/// title), never from its content: a field's text is its value (a
/// contenteditable), and widget roles such as textbox, combobox or slider take
/// no name from content (a placeholder drawn by CSS is not a name either).
pub(crate) fn named_by_author_only(arena: &Arena, id: NodeId, reason: Reason, d: &Descriptor) -> bool {
    let n = arena.node(id);
    reason == Reason::Editable
        || aria::is_editable_attr(n.attr("contenteditable"))
        || (!matches!(n.tag.as_str(), "input" | "select" | "textarea")
            && d.role.as_ref().is_some_and(|r| !takes_name_from_content(r)))
}

/// The roles ARIA lets take their name from their content (a button's text,
/// a tooltip's); a dialog, list, listbox, textbox or slider is named only by
/// its author. Our own role words (`clickable`) and text roles read content too.
pub(crate) fn takes_name_from_content(role: &Role) -> bool {
    match role {
        Role::Button
        | Role::Cell
        | Role::Checkbox
        | Role::ColumnHeader
        | Role::GridCell
        | Role::Heading
        | Role::Link
        | Role::MenuItem
        | Role::MenuItemCheckbox
        | Role::MenuItemRadio
        | Role::Option
        | Role::Radio
        | Role::Row
        | Role::RowHeader
        | Role::Switch
        | Role::Tab
        | Role::TreeItem
        | Role::Clickable
        | Role::Label
        | Role::LabelText
        | Role::ListItem
        | Role::Caption
        | Role::Legend
        | Role::Term
        | Role::Definition
        | Role::Paragraph
        | Role::Code
        | Role::Blockquote
        | Role::StaticText
        | Role::Text
        | Role::Generic
        | Role::Presentation
        | Role::None
        | Role::DisclosureTriangle => true,
        // A tooltip and the DPUB links (`doc-noteref`, `doc-backlink`, …) name themselves
        // from content; other ARIA roles do not; a word that is no role does.
        Role::Other(name) => {
            matches!(name.as_str(), "tooltip" | "doc-noteref" | "doc-backlink" | "doc-biblioref" | "doc-glossref")
                || !crate::aria::is_structure_role(name)
        }
        _ => false,
    }
}

/// The value an ARIA range widget states: `aria-valuenow`, else `aria-valuetext`.
fn aria_value(arena: &Arena, id: NodeId, d: &Descriptor) -> Option<String> {
    let n = arena.node(id);
    if n.tag == "input" || !matches!(d.role, Some(Role::Slider | Role::Spinbutton)) {
        return None;
    }
    // Chromium's value is the number (`aria-valuenow`); the text is said only where there is none.
    crate::aria::non_empty(n.attr("aria-valuenow")).or_else(|| crate::aria::non_empty(n.attr("aria-valuetext")))
}

/// `(min, max)` of a range input (defaulted to 0 and 100), or of a number input
/// that states either.
fn range(arena: &Arena, id: NodeId) -> Option<(String, String)> {
    let n = arena.node(id);
    if n.tag != "input" {
        // An ARIA slider or spinbutton states its bounds.
        let role = aria::role_of(arena, id);
        if matches!(role, Some(Role::Slider | Role::Spinbutton))
            && (n.has_attr("aria-valuemin") || n.has_attr("aria-valuemax"))
        {
            let v = |a: &str| n.attr(a).unwrap_or("").trim().to_string();
            return Some((v("aria-valuemin"), v("aria-valuemax")));
        }
        return None;
    }
    match aria::input_type(arena, id).as_str() {
        "range" => {
            Some((n.attr("min").unwrap_or("0").trim().to_string(), n.attr("max").unwrap_or("100").trim().to_string()))
        }
        "number" if n.has_attr("min") || n.has_attr("max") => {
            Some((n.attr("min").unwrap_or("").trim().to_string(), n.attr("max").unwrap_or("").trim().to_string()))
        }
        _ => None,
    }
}

/// `<label>`s whose text is the whole name of the indexed control they label.
fn naming_labels(arena: &Arena, elements: &[Element], labels_of: &HashMap<NodeId, Vec<NodeId>>) -> HashSet<NodeId> {
    let mut naming_labels = HashSet::new();
    for e in elements {
        if let Some(ls) = labels_of.get(&e.node) {
            let text = collapse(&ls.iter().map(|&l| visible_text(arena, l, 200, false)).collect::<Vec<_>>().join(" "));
            // A label that draws a hidden control shows what the control's token says
            // (the TodoMVC toggle's "❯" of "❯ Mark all as complete").
            let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
            let drawn = e.proxy.is_some_and(|p| ls.contains(&p)) && squeeze(&e.label).contains(&squeeze(&text));
            if !text.is_empty() && (cut(&text, 80) == e.label || drawn) {
                naming_labels.extend(ls.iter().copied());
            }
        }
    }
    naming_labels
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
            && matches!(aria::input_type(arena, control).as_str(), "checkbox" | "radio")
            && !aria::is_disabled(arena, control);
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

#[cfg(test)]
mod tests {
    use super::DialogControl;
    use crate::aria::Role;
    use crate::facts::Reason;
    use crate::testing::{el, text, view};

    #[test]
    fn a_select_lists_its_options_right_after_it() {
        let v = view(vec![
            el(
                "select",
                &[("id", "s")],
                vec![
                    el("option", &[("value", "a")], vec![text("Apple")]),
                    el("option", &[("hidden", "")], vec![text("Hidden")]),
                    el("optgroup", &[], vec![el("option", &[], vec![text("Pear")])]),
                ],
            ),
            el("button", &[], vec![text("Go")]),
        ]);
        let summary: Vec<(u32, &str, Option<u32>)> =
            v.elements.iter().map(|e| (e.index.get(), e.label.as_str(), e.select.map(|s| s.get()))).collect();
        assert_eq!(summary, vec![(1, "", None), (2, "Apple", Some(1)), (3, "Pear", Some(1)), (4, "Go", None)]);
        // An option is clicked where its select is.
        assert_eq!(v.elements[1].click_point, v.elements[0].click_point);
        assert_eq!(v.elements[0].descriptor.role, Some(Role::Combobox));
        assert_eq!(v.elements[0].descriptor.value.as_deref(), Some("a"), "the first option shows");
    }

    #[test]
    fn a_covered_element_is_not_indexed_and_says_what_covers_it() {
        let v = view(vec![
            el("button", &[("id", "under")], vec![]).at(10.0, 10.0, 100.0, 30.0),
            el("div", &[("id", "over")], vec![]).at(0.0, 0.0, 400.0, 100.0).style("position", "fixed"),
            el("button", &[("id", "free")], vec![text("Free")]).at(10.0, 200.0, 100.0, 30.0),
        ]);
        assert_eq!(v.elements.len(), 1);
        assert_eq!(v.elements[0].label, "Free");
        assert_eq!(v.covered.len(), 1);
        let c = &v.covered[0];
        assert_eq!(v.node(c.node).and_then(|n| n.attr("id")), Some("under"));
        assert_eq!(v.node(c.by).and_then(|n| n.attr("id")), Some("over"));
    }

    #[test]
    fn a_label_that_names_its_control_points_at_it() {
        let v = view(vec![
            el("label", &[("for", "e")], vec![text("Email")]),
            el("input", &[("id", "e"), ("type", "email")], vec![]),
            el("label", &[("for", "n")], vec![text("Name")]),
            el("input", &[("id", "n"), ("aria-label", "Full name")], vec![]),
        ]);
        let e: Vec<(Reason, &str, Option<u32>)> =
            v.elements.iter().map(|e| (e.reason, e.label.as_str(), e.label_for.map(|i| i.get()))).collect();
        assert_eq!(
            e,
            vec![
                (Reason::Label, "Email", Some(2)),
                (Reason::Native, "Email", None),
                (Reason::Label, "Name", None),
                (Reason::Native, "Full name", None),
            ]
        );
        assert!(v.elements[1].accepts_text);
    }

    #[test]
    fn ranges_default_and_editables_are_named_by_labels_not_their_text() {
        let v = view(vec![
            el("input", &[("type", "range")], vec![]),
            el("input", &[("type", "number"), ("max", " 9 ")], vec![]),
            el("input", &[("type", "number")], vec![]),
            el("div", &[("contenteditable", ""), ("title", "Notes")], vec![text("draft text")]),
        ]);
        let ranges: Vec<_> = v.elements.iter().map(|e| e.range.clone()).collect();
        assert_eq!(ranges, vec![Some(("0".into(), "100".into())), Some((String::new(), "9".into())), None, None]);
        assert_eq!(v.elements[3].label, "Notes");
        assert_eq!(v.elements[3].reason, Reason::Editable);
        assert!(v.elements[3].accepts_text);
        assert_eq!(v.elements[3].dialog, None::<DialogControl>);
    }

    #[test]
    fn a_name_comes_from_aria_then_labels_then_alt_title_and_placeholder() {
        let v = view(vec![
            el("button", &[("aria-label", "Close dialog")], vec![text("×")]),
            el("a", &[("href", "/")], vec![el("img", &[("alt", "Home")], vec![])]),
            el("input", &[("placeholder", "Search docs")], vec![]),
            el("input", &[("type", "submit"), ("value", "Send")], vec![]),
            el("div", &[("title", "Previous"), ("tabindex", "0")], vec![text("«")]),
        ]);
        let names: Vec<&str> = v.elements.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(names, vec!["Close dialog", "Home", "Search docs", "Send", "Previous"]);
    }
}
