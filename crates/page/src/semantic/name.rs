//! The name of a semantic node, and the text a block shows of its own.
//!
//! Chromium's name wins when the capture carries its tree; otherwise action
//! nodes take the element index's name rule, text roles their own text, and
//! landmarks, dialogs and regions only what their author named them.

use crate::arena::{Arena, NodeId, NodeKind, WhiteSpace};
use crate::aria::{self, Role};
use crate::capture::AxNode;
use crate::facts::Facts;
use crate::interactive::{self, Descriptor};
use crate::text::{collapse, cut, white_space_of, Flow};

use super::build::{ax_str, is_container_role, is_text_role, Ctx, Kind, SKIP};

/// The name of one semantic node, at most 200 characters. `own_text` is the
/// [`direct_text`] of a text node (empty for the other kinds).
#[allow(clippy::too_many_arguments)]
pub(super) fn name(
    ctx: &Ctx,
    arena: &Arena,
    id: NodeId,
    kind: Kind,
    role: &Role,
    axn: Option<&AxNode>,
    own_text: &str,
    descriptor: &Descriptor,
) -> String {
    let n = arena.node(id);
    let ax_name = axn.and_then(|a| ax_str(&a.name));
    let name = if kind == Kind::Text {
        cut(own_text, 200)
    } else if kind == Kind::Action {
        ax_name.unwrap_or_else(|| {
            let field = matches!(n.tag.as_str(), "input" | "select" | "textarea");
            let author_only = (!field && !interactive::takes_name_from_content(role))
                || ctx.facts.reason(id).is_some_and(|r| interactive::named_by_author_only(arena, id, r, descriptor));
            let name = if author_only {
                interactive::editable_name(arena, id, &ctx.facts.labels_of)
            } else {
                interactive::accessible_name_within(arena, id, &ctx.facts.labels_of, descriptor, 200)
            };
            if name.is_empty() && !author_only {
                // The element index may have asked Chromium for the name the DOM rules miss
                // (not a name from content where the role takes none: a clickable list).
                ctx.index_labels.get(&id).map(|l| l.to_string()).unwrap_or_default()
            } else {
                name
            }
        })
    } else if is_text_role(role) || *role == Role::Image {
        ax_name.or_else(|| aria::aria_label(arena, id)).unwrap_or_else(|| {
            // Read as accessible-name computation reads content (aria-hidden parts out,
            // alt text and the names of parts in, inline blocks as words of their own).
            let t = collapse(&crate::text::name_text(arena, id, 300, None, false));
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
    } else if ctx.have_ax {
        ax_name.unwrap_or_default()
    } else if crate::facts::LABELABLE.contains(&n.tag.as_str()) {
        // A meter, progress bar or output is named as a form field is: by its author,
        // its `<label>`s (wrapping it or `for` it), its title.
        interactive::editable_name(arena, id, &ctx.facts.labels_of)
    } else {
        // A landmark, dialog or region is named by its author, not by its content.
        aria::aria_label(arena, id).or_else(|| aria::caption(arena, id)).unwrap_or_default()
    };
    // A list item or cell whose text all belongs to the links, buttons and nested
    // blocks inside it would only repeat their names: it shows none of its own.
    if kind == Kind::Content && is_container_role(role) && direct_text(arena, id, ctx.facts).is_empty() {
        String::new()
    } else {
        cut(&name, 200)
    }
}

/// Which subtrees hold an `aria-hidden="true"` element: a running count over
/// the document order, so that each question is two lookups.
pub(super) struct AriaHiddenCount(Vec<u32>);

impl AriaHiddenCount {
    pub fn new(arena: &Arena) -> Self {
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
    pub fn inside(&self, arena: &Arena, id: NodeId) -> bool {
        let end = arena.subtree_end(id) as usize;
        self.0.get(end + 1).zip(self.0.get(id as usize + 1)).is_some_and(|(a, b)| a > b)
    }
}

/// The text of a block itself: its text and that of its inline descendants (a
/// `<strong>` inside a sentence), joined as rendered; nested blocks and
/// interactive elements are nodes of their own.
pub(super) fn direct_text(arena: &Arena, id: NodeId, facts: &Facts) -> String {
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

/// Laid out as a block (not inline, not `display: contents`).
pub(super) fn is_block(arena: &Arena, id: NodeId) -> bool {
    arena.node(id).layout.as_ref().is_some_and(|l| {
        let d = l.style.display.as_str();
        !(d == "inline" || d == "contents" || d.is_empty())
    })
}
