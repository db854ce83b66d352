//! semantic_v2: the page as an accessibility outline with typed refs.
//!
//! Built from the same joined tree as the element index, plus the accessibility
//! tree (role, name, states) joined by backend node id. Each semantic node is
//! an *action* node (an interactive element, with the actions it supports) or a
//! *content* node (a heading, paragraph, list item, image, landmark, text…),
//! with a visibility from the closed vocabulary below, decided from evidence.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::arena::{Arena, NodeId, NodeKind};
use crate::aria;
use crate::capture::AxNode;
use crate::facts::Facts;
use crate::geometry::Rect;
use crate::interactive::{self, Reason};
use crate::text::{accessible_text, collapse, cut, visible_text};
use crate::PageView;

/// The closed visibility vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Layout bounds intersect the current page viewport.
    InViewport,
    /// Layout bounds are within the near-viewport margin (half a viewport on each side).
    NearViewport,
    /// Layout exists outside that margin.
    Offscreen,
    /// DOM or computed style proves the node hidden.
    CssHidden,
    /// No non-empty layout box is available.
    NoLayout,
    /// A higher-painted fixed or absolute overlay covers every sampled point of it.
    PageOccluded,
    /// The available evidence cannot classify it.
    Unknown,
}

impl Visibility {
    pub fn as_str(&self) -> &'static str {
        match self {
            Visibility::InViewport => "in_viewport",
            Visibility::NearViewport => "near_viewport",
            Visibility::Offscreen => "offscreen",
            Visibility::CssHidden => "css_hidden",
            Visibility::NoLayout => "no_layout",
            Visibility::PageOccluded => "page_occluded",
            Visibility::Unknown => "unknown",
        }
    }
}

/// The closed set of actions a ref can declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionKind {
    /// A real mouse click.
    Click,
    /// Typing text (text inputs, textareas, contenteditable).
    Type,
    /// Choosing an option (selects, listboxes).
    Select,
    /// Toggling a checkbox, radio or switch (by clicking it).
    Check,
    /// Scrolling a scroll container with the wheel.
    Scroll,
}

impl ActionKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            ActionKind::Click => "click",
            ActionKind::Type => "type",
            ActionKind::Select => "select",
            ActionKind::Check => "check",
            ActionKind::Scroll => "scroll",
        }
    }
    pub const ALL: [ActionKind; 5] =
        [ActionKind::Click, ActionKind::Type, ActionKind::Select, ActionKind::Check, ActionKind::Scroll];
}

/// One node of the semantic tree.
#[derive(Debug, Clone)]
pub struct SemNode {
    pub node: NodeId,
    /// Index of the nearest semantic ancestor.
    pub parent: Option<usize>,
    pub role: String,
    pub name: String,
    pub value: Option<String>,
    /// `disabled`, `checked`, `expanded`, `selected`, `focused`, `required`, `readonly`, `level`.
    pub states: Vec<(&'static str, Value)>,
    /// Empty for content nodes.
    pub actions: Vec<ActionKind>,
    pub visibility: Visibility,
    /// Capture frame (CDP session) and backend node id, for acting.
    pub frame: usize,
    pub backend_node_id: i64,
    /// Which document (0 = main); for frame labels.
    pub doc: usize,
    /// Inside an open dialog, or the focused element and its ancestors.
    pub priority: bool,
    /// A point to click, when in the viewport.
    pub click_point: Option<(f64, f64)>,
}

impl SemNode {
    pub fn is_action(&self) -> bool {
        !self.actions.is_empty()
    }
}

/// The semantic tree of one capture, plus what was left out and why.
#[derive(Debug, Clone, Default)]
pub struct SemanticTree {
    /// In document order.
    pub nodes: Vec<SemNode>,
    /// Semantic nodes proven hidden (removed before ranking).
    pub css_hidden: usize,
    /// Frames whose content could not be captured or placed.
    pub unprovable_frames: usize,
    /// Out-of-process frames that were captured.
    pub oopif_frames: usize,
    /// The DOM was larger than the limit: only its first part was processed.
    pub partial: bool,
    /// DOM nodes left unprocessed when partial.
    pub unprocessed: usize,
}

const SKIP: &[&str] = &[
    "script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "option", "optgroup", "datalist",
];

/// Roles whose node carries its own text as its name (its text is not repeated below it).
const TEXT_ROLES: &[&str] = &[
    "heading",
    "paragraph",
    "listitem",
    "cell",
    "columnheader",
    "rowheader",
    "caption",
    "blockquote",
    "term",
    "definition",
    "label",
    "legend",
    "code",
];

/// Text roles that hold other nodes more often than text of their own.
const CONTAINER_ROLES: &[&str] = &["listitem", "cell", "columnheader", "rowheader"];

/// Content roles kept as semantic nodes.
const CONTENT_ROLES: &[&str] = &[
    "heading",
    "paragraph",
    "listitem",
    "image",
    "img",
    "cell",
    "columnheader",
    "rowheader",
    "dialog",
    "alertdialog",
    "alert",
    "status",
    "main",
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "form",
    "region",
    "list",
    "table",
    "figure",
    "blockquote",
    "article",
    "caption",
    "term",
    "definition",
    "code",
    "tablist",
    "menu",
    "menubar",
    "toolbar",
    "group",
    "radiogroup",
    "tree",
    "grid",
    "log",
    "marquee",
    "timer",
    "math",
    "note",
    "search",
];

/// Chromium's role names where they differ from ARIA's.
fn normalize_role(r: &str) -> String {
    match r {
        "img" => "image".into(),
        "disclosuretriangle" => "button".into(),
        _ => r.into(),
    }
}

fn ax_str(v: &Option<crate::capture::AxValue>) -> Option<String> {
    v.as_ref().and_then(|v| v.value.as_str()).map(collapse).filter(|s| !s.is_empty())
}

fn ax_prop<'a>(n: &'a AxNode, name: &str) -> Option<&'a Value> {
    n.properties.iter().find(|p| p.name == name).map(|p| &p.value.value)
}

fn proven_hidden(ax: Option<&AxNode>) -> bool {
    ax.is_some_and(|a| {
        a.ignored
            && a.ignored_reasons.iter().any(|r| {
                matches!(
                    r.name.as_str(),
                    "notRendered"
                        | "notVisible"
                        | "ariaHiddenElement"
                        | "ariaHiddenSubtree"
                        | "inertElement"
                        | "inertSubtree"
                )
            })
    })
}

/// Options for building the tree.
#[derive(Debug, Clone, Copy)]
pub struct SemanticOptions {
    /// Process at most this many DOM nodes (the known oversized-DOM fallback).
    pub dom_node_limit: usize,
    /// Near-viewport margin as a fraction of the viewport on each side.
    pub near_margin: f64,
}

impl Default for SemanticOptions {
    fn default() -> Self {
        SemanticOptions { dom_node_limit: 200_000, near_margin: 0.5 }
    }
}

/// Build the semantic tree of a view (its capture must carry the AX trees for
/// full fidelity; without them roles and names come from the DOM).
pub fn build(view: &mut PageView, opts: SemanticOptions) -> SemanticTree {
    // Labels, interactive candidates and the accessibility join are the view's own, shared with the element index.
    let facts = &view.facts;
    let arena = &mut view.arena;
    let have_ax = !facts.ax.is_empty();
    let aria_hidden_count = AriaHiddenCount::new(arena);
    let index_labels: HashMap<NodeId, &str> =
        view.elements.iter().filter(|e| !e.label.is_empty()).map(|e| (e.node, e.label.as_str())).collect();
    let vp = arena.viewport;
    let near = Rect::new(
        vp.x - vp.w * opts.near_margin,
        vp.y - vp.h * opts.near_margin,
        vp.w * (1.0 + 2.0 * opts.near_margin),
        vp.h * (1.0 + 2.0 * opts.near_margin),
    );
    let mut tree = SemanticTree { oopif_frames: facts.oopif_frames, ..Default::default() };
    // Frames in the DOM whose document we do not have.
    for (i, n) in arena.nodes.iter().enumerate() {
        if matches!(n.tag.as_str(), "iframe" | "frame")
            && n.layout.is_some()
            && !arena.docs.iter().any(|d| d.owner == Some(i as NodeId))
        {
            tree.unprovable_frames += 1;
        }
    }
    let limit = opts.dom_node_limit.min(arena.nodes.len());
    if limit < arena.nodes.len() {
        tree.partial = true;
        tree.unprocessed = arena.nodes.len() - limit;
    }
    // Pre-order walk: (node, semantic parent, hidden subtree, inside an action node).
    let mut stack: Vec<(NodeId, Option<usize>, bool, bool)> = vec![(0, None, false, false)];
    while let Some((id, sem_parent, hidden, in_action)) = stack.pop() {
        if id as usize >= limit {
            continue;
        }
        let n = arena.node(id);
        if n.in_ua_shadow {
            continue;
        }
        let push_children = |stack: &mut Vec<(NodeId, Option<usize>, bool, bool)>,
                             p: Option<usize>,
                             h: bool,
                             a: bool,
                             arena: &Arena| {
            for &c in arena.node(id).children.iter().rev() {
                stack.push((c, p, h, a));
            }
        };
        if n.kind != NodeKind::Element {
            if n.kind == NodeKind::Text {
                continue;
            }
            push_children(&mut stack, sem_parent, hidden, in_action, arena);
            continue;
        }
        if SKIP.contains(&n.tag.as_str()) {
            continue;
        }
        let axn = facts.ax.get(&id);
        // Chromium gives every rendered element a layout object: none, under a rendered
        // parent and with nothing rendered inside, means display:none (the AX tree omits those).
        let unrendered = n.layout.is_none()
            && n.parent.and_then(|p| arena.node(p).layout.as_ref()).is_some()
            && !has_rendered_descendant(arena, id);
        let own_hidden = unrendered
            || n.has_attr("hidden")
            || proven_hidden(axn)
            || aria::aria_hidden(arena, id)
            || n.layout.as_ref().is_some_and(|l| !l.style.visible)
            || n.opacity_hidden;
        let hidden = hidden || own_hidden;
        // A <label> is not a ref here: its control is, named by the label.
        let reason = facts.reason(id).filter(|r| *r != Reason::Label);
        // Roles from Chromium's accessibility tree when the capture carries it, else from the DOM.
        let ax_role = match axn {
            Some(a) => ax_str(&a.role).map(|r| normalize_role(&r.to_ascii_lowercase())),
            // Chromium leaves nodes out of its tree (display:none subtrees): the DOM says what they are.
            None => aria::role(arena, id),
        };
        let content_role = ax_role
            .clone()
            .filter(|r| CONTENT_ROLES.contains(&r.as_str()))
            .or_else(|| aria::implicit_content_role(arena, id).map(str::to_string));
        let is_action = reason.is_some() && !in_action;
        let is_content = !is_action && !in_action && content_role.is_some();
        let direct_text =
            if !is_action && !is_content && !in_action { direct_text(arena, id, facts) } else { String::new() };
        let parent_is_text_role = sem_parent.is_some_and(|p| TEXT_ROLES.contains(&tree.nodes[p].role.as_str()));
        let is_text = !direct_text.is_empty() && !parent_is_text_role && is_block(arena, id);
        if !(is_action || is_content || is_text) {
            push_children(&mut stack, sem_parent, hidden, in_action, arena);
            continue;
        }
        if hidden {
            tree.css_hidden += 1;
            push_children(&mut stack, sem_parent, true, in_action || is_action, arena);
            continue;
        }
        let role = if is_action {
            ax_role
                .clone()
                // A clickable `display: table` box is a layout table to Chromium: no role
                // an agent can use, so it reads as the clickable it is.
                .filter(|r| {
                    !matches!(
                        r.as_str(),
                        "generic"
                            | "none"
                            | "statictext"
                            | "labeltext"
                            | "layouttable"
                            | "layouttablerow"
                            | "layouttablecell"
                    )
                })
                .or_else(|| interactive::role_of(arena, id))
                .or_else(|| aria::implicit_content_role(arena, id).map(str::to_string))
                // An anchor without href that acts on a click is a link to Chromium too.
                .or_else(|| (n.tag == "a").then(|| "link".to_string()))
                .unwrap_or_else(|| "clickable".into())
        } else if is_content {
            content_role.clone().unwrap_or_default()
        } else {
            "text".into()
        };
        let mut descriptor = interactive::describe(arena, id);
        if descriptor.text_content.is_some() && aria_hidden_count.inside(arena, id) {
            // Names leave out what the author hid from assistive technology, as Chromium's do.
            descriptor.text_content = Some(collapse(&accessible_text(arena, id, 400))).filter(|t| !t.is_empty());
        }
        let ax_name = axn.and_then(|a| ax_str(&a.name));
        let name = if is_text {
            cut(&direct_text, 200)
        } else if is_action {
            ax_name.unwrap_or_else(|| {
                let name = interactive::accessible_name_within(arena, id, &facts.labels_of, &descriptor, 200);
                if name.is_empty() {
                    // The element index may have asked Chromium for the name the DOM rules miss.
                    index_labels.get(&id).map(|l| l.to_string()).unwrap_or_default()
                } else {
                    name
                }
            })
        } else if TEXT_ROLES.contains(&role.as_str()) || role == "image" {
            ax_name.or_else(|| interactive::aria_label(arena, id)).unwrap_or_else(|| {
                let t = if aria_hidden_count.inside(arena, id) {
                    collapse(&accessible_text(arena, id, 300))
                } else {
                    collapse(&visible_text(arena, id, 300, false))
                };
                if !t.is_empty() {
                    t
                } else if let Some(alt) = n.attr("alt").map(collapse).filter(|a| !a.is_empty()) {
                    alt
                } else if let Some(title) = n.attr("title").map(collapse).filter(|a| !a.is_empty()) {
                    title
                } else {
                    // A cell that shows only a control is named by it (`<td><input aria-label="Pick Ada">`).
                    aria::author_names_inside(arena, id)
                }
            })
        } else if have_ax {
            ax_name.unwrap_or_default()
        } else {
            // A landmark, dialog or region is named by its author, not by its content.
            interactive::aria_label(arena, id).or_else(|| aria::caption(arena, id)).unwrap_or_default()
        };
        // A list item or cell whose text all belongs to the links, buttons and nested
        // blocks inside it would only repeat their names: it shows none of its own.
        let name =
            if is_content && CONTAINER_ROLES.contains(&role.as_str()) && self::direct_text(arena, id, facts).is_empty()
            {
                String::new()
            } else {
                cut(&name, 200)
            };
        let (visibility, click_point) = classify(arena, id, &near);
        let n = arena.node(id);
        let mut actions = Vec::new();
        if is_action {
            let tag = n.tag.as_str();
            let checkable =
                matches!(role.as_str(), "checkbox" | "radio" | "switch" | "menuitemcheckbox" | "menuitemradio");
            let typable = interactive::is_text_field(arena, id) || reason == Some(Reason::Editable);
            if tag == "select" {
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
        }
        let mut states: Vec<(&'static str, Value)> = Vec::new();
        if is_action {
            let disabled = axn.and_then(|a| ax_prop(a, "disabled")).and_then(Value::as_bool).unwrap_or(false)
                || interactive::is_disabled(arena, id);
            states.push(("disabled", Value::Bool(disabled)));
            if let Some(c) = descriptor.checked {
                states.push(("checked", Value::Bool(c)));
            }
            if n.has_attr("readonly") {
                states.push(("readonly", Value::Bool(true)));
            }
            if n.has_attr("required") {
                states.push(("required", Value::Bool(true)));
            }
        }
        if !have_ax {
            states.extend(aria::states(arena, id, &role));
        } else if let Some(a) = axn {
            for key in ["expanded", "selected", "focused", "level", "modal"] {
                // A list item's level repeats the outline's indentation.
                if key == "level" && !matches!(role.as_str(), "heading" | "treeitem" | "row") {
                    continue;
                }
                if let Some(v) = ax_prop(a, key) {
                    if !(v.is_null() || key == "focused" && v == &Value::Bool(false)) {
                        states.push((
                            match key {
                                "expanded" => "expanded",
                                "selected" => "selected",
                                "focused" => "focused",
                                "level" => "level",
                                _ => "modal",
                            },
                            v.clone(),
                        ));
                    }
                }
            }
        }
        let value = if is_action {
            match n.tag.as_str() {
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
        } else {
            None
        };
        let dialog_open =
            matches!(role.as_str(), "dialog" | "alertdialog") && matches!(visibility, Visibility::InViewport);
        let priority =
            dialog_open || sem_parent.is_some_and(|p| tree.nodes[p].priority && tree.nodes[p].role != "main");
        let index = tree.nodes.len();
        tree.nodes.push(SemNode {
            node: id,
            parent: sem_parent,
            role,
            name,
            value,
            states,
            actions,
            visibility,
            frame: n.frame,
            backend_node_id: n.backend_id,
            doc: n.doc,
            priority,
            click_point,
        });
        push_children(&mut stack, Some(index), false, in_action || is_action, arena);
    }
    // The focused element and its ancestors rank with dialogs.
    let focused: Vec<usize> = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.states.iter().any(|(k, v)| *k == "focused" && v == &Value::Bool(true)))
        .map(|(i, _)| i)
        .collect();
    for f in focused {
        let mut cur = Some(f);
        while let Some(c) = cur {
            tree.nodes[c].priority = true;
            cur = tree.nodes[c].parent;
        }
    }
    tree
}

/// Which subtrees hold an `aria-hidden="true"` element: a running count over
/// the document order, so that each question is two lookups.
struct AriaHiddenCount(Vec<u32>);

impl AriaHiddenCount {
    fn new(arena: &Arena) -> Self {
        let mut count = Vec::with_capacity(arena.nodes.len() + 1);
        let mut seen = 0;
        count.push(0);
        for id in arena.ids() {
            seen += u32::from(aria::aria_hidden(arena, id));
            count.push(seen);
        }
        AriaHiddenCount(count)
    }

    /// Whether a descendant of `id` is `aria-hidden`.
    fn inside(&self, arena: &Arena, id: NodeId) -> bool {
        let end = arena.subtree_end(id) as usize;
        self.0.get(end + 1).zip(self.0.get(id as usize + 1)).is_some_and(|(a, b)| a > b)
    }
}

fn has_rendered_descendant(arena: &Arena, id: NodeId) -> bool {
    let mut stack: Vec<NodeId> = arena.node(id).children.clone();
    let mut budget = 5000;
    while let Some(c) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            return true;
        }
        let n = arena.node(c);
        if n.layout.is_some() {
            return true;
        }
        stack.extend(n.children.iter().copied());
    }
    false
}

/// Direct rendered text of an element (its own text children, not descendants').
/// The text of a block itself: its text and that of its inline descendants (a
/// `<strong>` inside a sentence), joined as rendered; nested blocks and
/// interactive elements are nodes of their own.
fn direct_text(arena: &Arena, id: NodeId, facts: &Facts) -> String {
    let mut flow = crate::text::Flow::one_line(400);
    let mut stack: Vec<NodeId> = arena.node(id).children.iter().rev().copied().collect();
    while let Some(c) = stack.pop() {
        let cn = arena.node(c);
        match cn.kind {
            NodeKind::Text => {
                if let Some(t) = cn.layout.as_ref().filter(|l| l.style.visible).and_then(|l| l.text.as_deref()) {
                    flow.text(t, crate::text::white_space_of(arena, c));
                }
            }
            NodeKind::Element => {
                let inline =
                    cn.layout.as_ref().is_none_or(|l| l.style.display == "inline" || l.style.display == "contents");
                if inline && facts.reason(c).is_none() && !SKIP.contains(&cn.tag.as_str()) && !cn.pseudo {
                    stack.extend(cn.children.iter().rev().copied());
                } else if cn.generated.is_some() {
                    flow.text(cn.generated.as_deref().unwrap_or(""), crate::arena::WhiteSpace::Collapse);
                } else {
                    // A nested block or a target: a separate node of the outline.
                    flow.soft_break();
                }
            }
            _ => {}
        }
    }
    flow.finish_line()
}

fn is_block(arena: &Arena, id: NodeId) -> bool {
    arena.node(id).layout.as_ref().is_some_and(|l| {
        let d = l.style.display.as_str();
        !(d == "inline" || d == "contents" || d.is_empty())
    })
}

fn scrollable(arena: &Arena, id: NodeId) -> bool {
    let n = arena.node(id);
    n.layout.as_ref().is_some_and(|l| {
        (l.style.clips_x || l.style.clips_y) && n.tag != "input" && n.tag != "select" && n.tag != "textarea"
    })
}

/// Visibility from layout, clipping and paint order; and a click point when visible.
fn classify(arena: &mut Arena, id: NodeId, near: &Rect) -> (Visibility, Option<(f64, f64)>) {
    let n = arena.node(id);
    let doc_has_layout = arena.nodes.iter().skip(arena.docs[n.doc].root as usize).take(4).any(|m| m.layout.is_some());
    if !doc_has_layout {
        return (Visibility::Unknown, None);
    }
    let (full, visible) = interactive::element_rect_pub(arena, id);
    if full.is_empty() || !full.x.is_finite() || !full.y.is_finite() {
        return (Visibility::NoLayout, None);
    }
    if !visible.is_empty() {
        let points = [
            visible.center(),
            (visible.x + visible.w * 0.25, visible.y + visible.h * 0.25),
            (visible.x + visible.w * 0.75, visible.y + visible.h * 0.75),
        ];
        let mut covered_by_overlay = true;
        for (x, y) in points {
            match arena.cover_at(id, x, y) {
                None => return (Visibility::InViewport, Some((x, y))),
                Some(by) => {
                    let positioned =
                        by.and_then(|b| arena.node(b).layout.as_ref()).is_some_and(|l| l.style.fixed || l.paint > 0);
                    covered_by_overlay &= positioned;
                }
            }
        }
        return (if covered_by_overlay { Visibility::PageOccluded } else { Visibility::InViewport }, None);
    }
    if !full.intersect(near).is_empty() {
        (Visibility::NearViewport, None)
    } else {
        (Visibility::Offscreen, None)
    }
}

/// How a request scopes the snapshot.
#[derive(Debug, Clone)]
pub enum Scope {
    /// The viewport and its near margin (the default).
    Viewport,
    /// Nodes whose role, name or value matches, with their semantic ancestors.
    Query(String),
    /// The subtree of one node.
    Subtree(usize),
}

/// Counts of what a selection left out, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Omitted {
    pub css_hidden: usize,
    pub offscreen: usize,
    pub page_occluded: usize,
    pub no_layout: usize,
    pub unknown: usize,
    pub budget: usize,
    pub unprovable_frame: usize,
}

/// In-scope nodes in rank order, and what the scope left out.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ranked: Vec<usize>,
    pub omitted: Omitted,
    pub scope: &'static str,
}

fn tier(s: &SemNode) -> u8 {
    if s.priority {
        return 0;
    }
    match s.visibility {
        Visibility::InViewport if s.is_action() => 1,
        Visibility::InViewport => 2,
        Visibility::PageOccluded => 3,
        Visibility::NearViewport => 4,
        Visibility::Offscreen => 5,
        _ => 6,
    }
}

/// Rank the nodes in scope: dialogs and focus first, then visible actions,
/// visible content, occluded, near-viewport, offscreen; document order within a tier.
pub fn plan(tree: &SemanticTree, scope: &Scope) -> Plan {
    let mut omitted = Omitted {
        css_hidden: tree.css_hidden,
        unprovable_frame: tree.unprovable_frames,
        unknown: tree.unprocessed,
        ..Default::default()
    };
    let mut chosen: Vec<usize> = Vec::new();
    let scope_name = match scope {
        Scope::Viewport => {
            for (i, s) in tree.nodes.iter().enumerate() {
                match s.visibility {
                    Visibility::InViewport | Visibility::NearViewport => chosen.push(i),
                    Visibility::PageOccluded if s.is_action() => chosen.push(i),
                    Visibility::PageOccluded => omitted.page_occluded += 1,
                    Visibility::Offscreen => omitted.offscreen += 1,
                    Visibility::NoLayout => omitted.no_layout += 1,
                    Visibility::Unknown => omitted.unknown += 1,
                    Visibility::CssHidden => omitted.css_hidden += 1,
                }
            }
            "viewport"
        }
        Scope::Query(q) => {
            let q = q.to_lowercase();
            let mut set = HashSet::new();
            for (i, s) in tree.nodes.iter().enumerate() {
                let hit = s.role.to_lowercase() == q
                    || s.name.to_lowercase().contains(&q)
                    || s.value.as_deref().is_some_and(|v| v.to_lowercase().contains(&q));
                if hit {
                    let mut cur = Some(i);
                    while let Some(c) = cur {
                        set.insert(c);
                        cur = tree.nodes[c].parent;
                    }
                }
            }
            chosen = set.into_iter().collect();
            chosen.sort_unstable();
            "query"
        }
        Scope::Subtree(root) => {
            let mut inside = vec![false; tree.nodes.len()];
            for (i, s) in tree.nodes.iter().enumerate() {
                inside[i] = i == *root || s.parent.is_some_and(|p| inside[p]);
                if inside[i] {
                    chosen.push(i);
                }
            }
            "subtree"
        }
    };
    chosen.sort_by_key(|&i| (tier(&tree.nodes[i]), i));
    Plan { ranked: chosen, omitted, scope: scope_name }
}

/// The outline of some nodes (shown in document order, indented by their
/// nesting among the shown nodes). `refs` gives each node's ref string.
pub fn outline(tree: &SemanticTree, shown: &[usize], refs: impl Fn(usize) -> String) -> String {
    let mut order: Vec<usize> = shown.to_vec();
    order.sort_unstable();
    let set: HashSet<usize> = order.iter().copied().collect();
    let mut lines = Vec::with_capacity(order.len());
    for i in order {
        let s = &tree.nodes[i];
        let mut depth = 0;
        let mut cur = s.parent;
        while let Some(p) = cur {
            if set.contains(&p) {
                depth += 1;
            }
            cur = tree.nodes[p].parent;
        }
        let mut line = format!("{}- {}", "  ".repeat(depth.min(12)), s.role);
        if !s.name.is_empty() {
            line.push_str(&format!(" {:?}", s.name));
        }
        for (k, v) in &s.states {
            match (k, v) {
                (_, Value::Bool(false)) => {}
                (_, Value::Bool(true)) => line.push_str(&format!(" [{k}]")),
                (_, v) => line
                    .push_str(&format!(" [{k}={}]", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))),
            }
        }
        if s.visibility != Visibility::InViewport {
            line.push_str(&format!(" [{}]", s.visibility.as_str()));
        }
        line.push_str(&format!(" [ref={}]", refs(i)));
        if let Some(v) = &s.value {
            line.push_str(&format!(": {}", cut(v, 120)));
        }
        lines.push(line);
    }
    lines.join("\n")
}
