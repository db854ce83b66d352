//! Set-of-Marks: the visible interactive elements, numbered, with boxes.
//!
//! The same elements as the element index (same rules, same visibility
//! evidence), minus the options of closed selects, which have no box of their
//! own, and the labels that only name a marked control (their box would be a
//! second number on the same target).
//! [`Mark`] is the one mark type: the pack's scripts, the tool API's marked
//! screenshot and the agent runner's all get theirs from here, and
//! [`crate::draw_marks`] draws them.

use crate::arena::Arena;
use crate::index::ElementIndex;
use crate::interactive::Element;
use crate::text::{collapse, cut};

/// One visible interactive element, ready to draw and to act on. `x`, `y` are
/// the centre and `w`, `h` the size of its visible box, in CSS pixels, rounded.
///
/// Serialized (for scripts and the marked screenshot's `marks`) as
/// `{id, tag, role, name, x, y, w, h}`; the element index stays on this side.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Mark {
    /// 1-based, in document order ([`crate::PageView::marks`]), or the element
    /// index itself ([`crate::PageView::index_marks`]).
    pub id: u32,
    /// The element-index number of the same element.
    #[serde(skip)]
    pub element_index: ElementIndex,
    pub tag: String,
    pub role: String,
    /// aria-label, alt, title, placeholder, value, or trimmed inner text, in that order, ≤ 80 chars
    /// (then the associated label, when all of those are empty).
    pub name: String,
    /// Centre and size of the visible box, CSS pixels, rounded.
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

fn first_non_empty(candidates: impl IntoIterator<Item = Option<String>>) -> String {
    candidates.into_iter().flatten().map(|s| collapse(&s)).find(|s| !s.is_empty()).unwrap_or_default()
}

pub fn marks(arena: &Arena, elements: &[Element]) -> Vec<Mark> {
    elements
        .iter()
        .filter(|e| e.select.is_none() && e.label_for.is_none())
        .enumerate()
        .map(|(i, e)| {
            let n = arena.node(e.node);
            let d = &e.descriptor;
            let attr = |k: &str| n.attr(k).map(str::to_string);
            let name = first_non_empty([
                d.aria_label.clone(),
                attr("alt"),
                attr("title"),
                d.placeholder.clone(),
                // A checkbox's value ("on"), a password or a chosen file ("C:\fakepath\report.pdf") is not a name.
                d.value.clone().filter(|_| {
                    d.tag != "select" && !matches!(d.type_.as_deref(), Some("password" | "checkbox" | "radio" | "file"))
                }),
                d.text_content.clone(),
                // Beyond the seed's list: the associated <label>, so unnamed controls still say what they are.
                Some(e.label.clone()),
            ]);
            let v = e.visible;
            Mark {
                id: i as u32 + 1,
                element_index: e.index,
                tag: d.tag.clone(),
                role: d.role.as_ref().map(|r| r.as_str().to_string()).unwrap_or_default(),
                name: cut(&name, 80),
                x: (v.x + v.w / 2.0).round() as i64,
                y: (v.y + v.h / 2.0).round() as i64,
                w: v.w.round() as i64,
                h: v.h.round() as i64,
            }
        })
        .collect()
}
