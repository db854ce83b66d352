//! The walk that builds the semantic tree: which nodes are action, content or
//! text nodes, their role, name, states, value, visibility and priority.

use std::collections::HashMap;

use serde_json::Value;

use crate::arena::{Arena, NodeId, NodeKind, WhiteSpace};
use crate::aria;
use crate::capture::{AxNode, AxValue};
use crate::facts::{Facts, Reason};
use crate::geometry::Rect;
use crate::interactive;
use crate::text::{accessible_text, collapse, cut, visible_text, white_space_of, Flow};
use crate::PageView;

use super::visibility::classify;
use super::{ActionKind, SemNode, SemanticOptions, SemanticTree, Visibility};

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

fn ax_str(v: &Option<AxValue>) -> Option<String> {
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
            || arena.node(id).aria_hidden()
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
                .or_else(|| aria::role_of(arena, id))
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
            ax_name.or_else(|| aria::aria_label(arena, id)).unwrap_or_else(|| {
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
            aria::aria_label(arena, id).or_else(|| aria::caption(arena, id)).unwrap_or_default()
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
            let typable = aria::is_text_field(arena, id) || reason == Some(Reason::Editable);
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
                || aria::is_disabled(arena, id);
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
            seen += u32::from(arena.node(id).aria_hidden());
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
    let mut flow = Flow::one_line(400);
    let mut stack: Vec<NodeId> = arena.node(id).children.iter().rev().copied().collect();
    while let Some(c) = stack.pop() {
        let cn = arena.node(c);
        match cn.kind {
            NodeKind::Text => {
                if let Some(t) = cn.layout.as_ref().filter(|l| l.style.visible).and_then(|l| l.text.as_deref()) {
                    flow.text(t, white_space_of(arena, c));
                }
            }
            NodeKind::Element => {
                let inline =
                    cn.layout.as_ref().is_none_or(|l| l.style.display == "inline" || l.style.display == "contents");
                if inline && facts.reason(c).is_none() && !SKIP.contains(&cn.tag.as_str()) && !cn.pseudo {
                    stack.extend(cn.children.iter().rev().copied());
                } else if cn.generated.is_some() {
                    flow.text(cn.generated.as_deref().unwrap_or(""), WhiteSpace::Collapse);
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
