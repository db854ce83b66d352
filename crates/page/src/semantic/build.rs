//! The walk that builds the semantic tree: which nodes are action, content or
//! text nodes, and their role; [`super::name`], [`super::props`] and
//! [`super::visibility`] give the rest of each node.

use std::collections::HashMap;

use crate::arena::{Arena, NodeId, NodeKind};
use crate::aria::{self, Role, State};
use crate::capture::{AxNode, AxValue};
use crate::facts::{Facts, Reason};
use crate::geometry::Rect;
use crate::interactive;
use crate::text::collapse;
use crate::PageView;

use super::name::{direct_text, is_block, name, AriaHiddenCount};
use super::props::{actions, states, value};
use super::visibility::classify;
use super::{SemNode, SemanticOptions, SemanticTree, Visibility};

/// Elements that are never semantic nodes (nor hold any).
pub(super) const SKIP: &[&str] = &[
    "script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "option", "optgroup", "datalist",
];

/// Roles whose node carries its own text as its name (its text is not repeated below it).
pub(super) fn is_text_role(r: &Role) -> bool {
    matches!(
        r,
        Role::Heading
            | Role::Paragraph
            | Role::ListItem
            | Role::Cell
            | Role::ColumnHeader
            | Role::RowHeader
            | Role::Caption
            | Role::Blockquote
            | Role::Term
            | Role::Definition
            | Role::Label
            | Role::Legend
            | Role::Code
    )
}

/// Text roles that hold other nodes more often than text of their own.
pub(super) fn is_container_role(r: &Role) -> bool {
    matches!(r, Role::ListItem | Role::Cell | Role::ColumnHeader | Role::RowHeader)
}

/// Content roles kept as semantic nodes.
pub(super) fn is_content_role(r: &Role) -> bool {
    matches!(
        r,
        Role::Heading
            | Role::Paragraph
            | Role::ListItem
            | Role::Image
            | Role::Img
            | Role::Cell
            | Role::ColumnHeader
            | Role::RowHeader
            | Role::Dialog
            | Role::AlertDialog
            | Role::Alert
            | Role::Status
            | Role::Main
            | Role::Navigation
            | Role::Banner
            | Role::ContentInfo
            | Role::Complementary
            | Role::Form
            | Role::Region
            | Role::List
            | Role::Table
            | Role::Figure
            | Role::Blockquote
            | Role::Article
            | Role::Caption
            | Role::Term
            | Role::Definition
            | Role::Code
            | Role::Tablist
            | Role::Menu
            | Role::Menubar
            | Role::Toolbar
            | Role::Group
            | Role::RadioGroup
            | Role::Tree
            | Role::Grid
            | Role::Log
            | Role::Marquee
            | Role::Timer
            | Role::Math
            | Role::Note
            | Role::Search
    ) || matches!(r, Role::Other(name) if aria::is_structure_role(name))
}

/// Widgets that hold other widgets (a listbox's options, a menu's items, a
/// radio group's radios): their items stay nodes of their own.
fn is_composite(r: &Role) -> bool {
    matches!(
        r,
        Role::Listbox
            | Role::Menu
            | Role::Menubar
            | Role::Tree
            | Role::Grid
            | Role::RadioGroup
            | Role::Tablist
            | Role::Toolbar
    ) || matches!(r, Role::Other(name) if name == "treegrid")
}

/// A role of Chromium's tree, in ARIA's name where the two differ.
fn normalize_role(r: &str) -> Role {
    match r {
        "img" => Role::Image,
        "disclosuretriangle" => Role::Button,
        _ => Role::from_name(r),
    }
}

/// A string value of Chromium's tree, collapsed; `None` when empty.
pub(super) fn ax_str(v: &Option<AxValue>) -> Option<String> {
    v.as_ref().and_then(AxValue::as_str).map(collapse).filter(|s| !s.is_empty())
}

/// Chromium's tree ignores the node because it is not rendered, not visible, aria-hidden or inert.
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

/// What the walk knows about the whole page.
pub(super) struct Ctx<'v> {
    pub facts: &'v Facts,
    /// The capture carries Chromium's accessibility tree.
    pub have_ax: bool,
    pub aria_hidden: AriaHiddenCount,
    /// The element index's names (some of them asked of Chromium), by node.
    pub index_labels: HashMap<NodeId, &'v str>,
    /// `<label>`s tied to a rendered control.
    pub tied_labels: std::collections::HashSet<NodeId>,
    /// Hidden controls the element index acts on through a stand-in (their label,
    /// their widget): in the viewport, clicked where the stand-in is.
    pub proxied: HashMap<NodeId, (f64, f64)>,
    /// The viewport and its near margin.
    near: Rect,
}

/// One step of the pre-order walk.
#[derive(Clone, Copy)]
struct Visit {
    id: NodeId,
    /// The nearest semantic ancestor.
    parent: Option<usize>,
    /// Inside a subtree proven hidden.
    hidden: bool,
    /// Inside an action node (whose content is its name, not nodes of its own).
    in_action: bool,
}

/// What a semantic node is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An interactive element.
    Action,
    /// A heading, paragraph, list item, image, landmark…
    Content,
    /// A block with text of its own and no role.
    Text,
}

/// Build the semantic tree of a view (its capture must carry the AX trees for
/// full fidelity; without them roles and names come from the DOM).
pub fn build(view: &mut PageView, opts: SemanticOptions) -> SemanticTree {
    // Labels, interactive candidates and the accessibility join are the view's own, shared with the element index.
    let facts = &view.facts;
    let arena = &mut view.arena;
    let vp = arena.viewport;
    let ctx = Ctx {
        facts,
        have_ax: !facts.ax.is_empty(),
        aria_hidden: AriaHiddenCount::new(arena),
        // Labels of a control that is rendered: its node carries their text.
        tied_labels: facts
            .labels_of
            .iter()
            .filter(|(&c, _)| arena.node(c).layout.is_some())
            .flat_map(|(_, ls)| ls.iter().copied())
            .collect(),
        proxied: view.elements.iter().filter(|e| e.proxy.is_some()).map(|e| (e.node, e.click_point)).collect(),
        index_labels: view
            .elements
            .iter()
            .filter(|e| !e.label.is_empty())
            .map(|e| (e.node, e.label.as_str()))
            .collect(),
        near: Rect::new(
            vp.x - vp.w * opts.near_margin,
            vp.y - vp.h * opts.near_margin,
            vp.w * (1.0 + 2.0 * opts.near_margin),
            vp.h * (1.0 + 2.0 * opts.near_margin),
        ),
    };
    let mut tree = SemanticTree {
        oopif_frames: facts.oopif_frames,
        unprovable_frames: unprovable_frames(arena),
        ..Default::default()
    };
    let limit = opts.dom_node_limit.min(arena.nodes.len());
    if limit < arena.nodes.len() {
        tree.partial = true;
        tree.unprocessed = arena.nodes.len() - limit;
    }
    let mut stack = vec![Visit { id: 0, parent: None, hidden: false, in_action: false }];
    while let Some(v) = stack.pop() {
        if v.id as usize >= limit || arena.node(v.id).in_ua_shadow {
            continue;
        }
        // The node's children go on the stack with what they inherit.
        let (parent, hidden, in_action) = match visit(&ctx, arena, &mut tree, v) {
            Step::Skip => continue,
            Step::Through { hidden, in_action } => (v.parent, hidden, in_action),
            Step::Node { index, in_action } => (Some(index), false, in_action),
        };
        for &c in arena.node(v.id).children.iter().rev() {
            stack.push(Visit { id: c, parent, hidden, in_action });
        }
    }
    prioritize_focus(&mut tree);
    tree
}

/// What a visit made of a node.
enum Step {
    /// Neither it nor its subtree is walked.
    Skip,
    /// No semantic node of its own: its children are walked.
    Through { hidden: bool, in_action: bool },
    /// It became the semantic node `index`.
    Node { index: usize, in_action: bool },
}

/// Decide what one node is and, when it is a semantic node, add it.
fn visit(ctx: &Ctx, arena: &mut Arena, tree: &mut SemanticTree, v: Visit) -> Step {
    let id = v.id;
    let n = arena.node(id);
    if n.kind != NodeKind::Element {
        if n.kind == NodeKind::Text {
            return Step::Skip;
        }
        return Step::Through { hidden: v.hidden, in_action: v.in_action };
    }
    // The options of a list box (`<select multiple>`, `size` > 1) are shown and
    // clicked where they are, as Chromium lists them; a drop-down's stay folded.
    if SKIP.contains(&n.tag.as_str()) && !(n.tag == "option" && in_list_box(arena, id)) {
        return Step::Skip;
    }
    let axn = ctx.facts.ax.get(&id);
    let hidden = v.hidden || own_hidden(arena, id, axn);
    // A <label> is not a ref here: its control is, named by the label.
    let reason = ctx.facts.reason(id).filter(|r| *r != Reason::Label);
    // Roles from Chromium's accessibility tree when the capture carries it, else from the DOM.
    let ax_role = match axn {
        Some(a) => ax_str(&a.role).map(|r| normalize_role(&r.to_ascii_lowercase())),
        // Chromium leaves nodes out of its tree (display:none subtrees): the DOM says what they are.
        None => aria::role(arena, id),
    };
    // A presentational role in effect takes the implicit one away too (`<li role=presentation>`).
    // (The author's role, in effect: Chromium's tree says `none` of nodes it merely ignores.)
    let presentational = matches!(aria::role(arena, id), Some(Role::Presentation | Role::None));
    // A <label> tied to a control is that control's name, said once, on the control.
    let tied_label = n.tag == "label" && ctx.tied_labels.contains(&id);
    let content_role = ax_role
        .clone()
        .filter(is_content_role)
        .or_else(|| (!presentational).then(|| aria::implicit_content_role(arena, id)).flatten())
        .filter(|_| !tied_label);
    // A widget inside another (a tab's close button, a dialog's buttons under a
    // clickable backdrop) is a node of its own, as in Chromium's tree.
    let nested_widget = matches!(reason, Some(Reason::Native | Reason::Role));
    let is_action = reason.is_some() && (!v.in_action || nested_widget);
    let is_content = !is_action && !v.in_action && content_role.is_some();
    let direct_text =
        if !is_action && !is_content && !v.in_action { direct_text(arena, id, ctx.facts) } else { String::new() };
    let parent_is_text_role = v.parent.is_some_and(|p| is_text_role(&tree.nodes[p].role));
    let is_text = !direct_text.is_empty() && !parent_is_text_role && is_block(arena, id);
    // Behind an open modal dialog, or in an `inert` subtree: out of Chromium's tree.
    // Not inherited: the dialog inside an inert-marked ancestor is live.
    if !(is_action || is_content || is_text) || n.inert {
        return Step::Through { hidden, in_action: v.in_action };
    }
    if hidden {
        tree.css_hidden += 1;
        return Step::Through { hidden: true, in_action: v.in_action || is_action };
    }
    let (kind, role) = if is_action {
        (Kind::Action, action_role(arena, id, ax_role))
    } else if is_content {
        (Kind::Content, content_role.unwrap_or(Role::Text))
    } else if n.tag == "label" {
        // A label's words: the label Chromium's tree has there.
        (Kind::Text, Role::Label)
    } else {
        (Kind::Text, Role::Text)
    };
    let mut descriptor = interactive::describe(arena, id);
    if descriptor.text_content.is_some() && ctx.aria_hidden.inside(arena, id) {
        // Names leave out what the author hid from assistive technology, as Chromium's do.
        descriptor.text_content =
            Some(collapse(&crate::text::accessible_text(arena, id, 400))).filter(|t| !t.is_empty());
    }
    let name = name(ctx, arena, id, kind, &role, axn, &direct_text, &descriptor);
    // Words the enclosing text node already says (`<div>` "Last reward: -" around its
    // `<label>` "Last reward:", `<p>` "Username" around its `<label>`) are not said
    // again as a node of their own.
    let parent_says = |p: usize| {
        let p = &tree.nodes[p];
        (matches!(p.role, Role::Text | Role::Label) || is_text_role(&p.role)) && p.name.contains(name.as_str())
    };
    if kind != Kind::Action
        && matches!(role, Role::Text | Role::Label)
        && !name.is_empty()
        && v.parent.is_some_and(parent_says)
    {
        return Step::Through { hidden, in_action: v.in_action };
    }
    let (visibility, click_point) = match ctx.proxied.get(&id) {
        Some(&at) => (Visibility::InViewport, Some(at)),
        None => classify(arena, id, &ctx.near),
    };
    let actions = if is_action { actions(arena, id, &role, reason) } else { Vec::new() };
    let states = states(ctx, arena, id, &role, axn, is_action, &descriptor);
    let value = if is_action { value(arena, id, &descriptor, reason) } else { None };
    let dialog_open = matches!(role, Role::Dialog | Role::AlertDialog) && matches!(visibility, Visibility::InViewport);
    let priority = dialog_open || v.parent.is_some_and(|p| tree.nodes[p].priority && tree.nodes[p].role != Role::Main);
    let n = arena.node(id);
    let index = tree.nodes.len();
    tree.nodes.push(SemNode {
        node: id,
        parent: v.parent,
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
    if is_action && tree.nodes[index].name.is_empty() {
        // The element index's hint, for this control wherever it is.
        if let Some(h) = interactive::hint(arena, id) {
            tree.hints.insert(index, h);
        }
    }
    // Loose text in <body> (or <html>) is a line of its own, as in Chromium's
    // tree: the rest of the page is not inside a text node.
    if kind == Kind::Text && matches!(arena.node(id).tag.as_str(), "body" | "html") {
        return Step::Through { hidden: false, in_action: v.in_action };
    }
    let holds_items = is_composite(&tree.nodes[index].role);
    Step::Node { index, in_action: v.in_action || (is_action && !holds_items) }
}

/// The DOM, computed style or Chromium's tree proves the element itself hidden.
fn own_hidden(arena: &Arena, id: NodeId, axn: Option<&AxNode>) -> bool {
    let n = arena.node(id);
    // Chromium gives every rendered element a layout object: none, under a rendered
    // parent and with nothing rendered inside, means display:none (the AX tree omits those).
    let unrendered = n.layout.is_none()
        && n.parent.and_then(|p| arena.node(p).layout.as_ref()).is_some()
        && !has_rendered_descendant(arena, id);
    unrendered
        || n.has_attr("hidden")
        || proven_hidden(axn)
        || n.aria_hidden()
        || n.layout.as_ref().is_some_and(|l| !l.style.visible)
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

/// The role of an action node: Chromium's when it names a widget, else the
/// DOM's, else `link` for an anchor and `clickable` for anything else.
fn action_role(arena: &Arena, id: NodeId, ax_role: Option<Role>) -> Role {
    // Chromium makes a `draggable` element with no role of its own a group: no role an
    // agent can use, so it reads as the clickable it is (as without Chromium's tree).
    let bare_group = |r: &Role| *r == Role::Group && aria::role(arena, id).is_none();
    ax_role
        .filter(|r| !bare_group(r))
        // A clickable `display: table` box is a layout table to Chromium: no role
        // an agent can use, so it reads as the clickable it is.
        .filter(|r| {
            !matches!(
                r,
                Role::Generic
                    | Role::None
                    | Role::StaticText
                    | Role::LabelText
                    | Role::LayoutTable
                    | Role::LayoutTableRow
                    | Role::LayoutTableCell
            )
        })
        .or_else(|| aria::role_of(arena, id))
        .or_else(|| aria::implicit_content_role(arena, id))
        // An anchor without href that acts on a click is a link to Chromium too.
        .or_else(|| (arena.node(id).tag == "a").then_some(Role::Link))
        .unwrap_or(Role::Clickable)
}

/// Whether an `<option>` belongs to a `<select>` shown as a list box.
fn in_list_box(arena: &Arena, id: NodeId) -> bool {
    arena.ancestors(id).take(2).find(|&a| arena.node(a).tag == "select").is_some_and(|s| {
        let s = arena.node(s);
        s.has_attr("multiple") || s.attr("size").and_then(|v| v.trim().parse::<u32>().ok()).is_some_and(|v| v > 1)
    })
}

/// Frames in the DOM, laid out, whose document the capture does not have.
fn unprovable_frames(arena: &Arena) -> usize {
    arena
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            matches!(n.tag.as_str(), "iframe" | "frame")
                && n.layout.is_some()
                && !arena.docs.iter().any(|d| d.owner == Some(*i as NodeId))
        })
        .count()
}

/// The focused element and its ancestors rank with dialogs.
fn prioritize_focus(tree: &mut SemanticTree) {
    let focused: Vec<usize> = tree
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.states.contains(&State::Focused(true)))
        .map(|(i, _)| i)
        .collect();
    for f in focused {
        let mut cur = Some(f);
        while let Some(c) = cur {
            tree.nodes[c].priority = true;
            cur = tree.nodes[c].parent;
        }
    }
}
