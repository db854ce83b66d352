//! semantic_v2: the page as an accessibility outline with typed refs.
//!
//! Built from the same joined tree as the element index, plus the accessibility
//! tree (role, name, states) joined by backend node id. Each semantic node is
//! an *action* node (an interactive element, with the actions it supports) or a
//! *content* node (a heading, paragraph, list item, image, landmark, text…),
//! with a visibility from the closed vocabulary below, decided from evidence.
//!
//! [`build`] walks the tree (`build.rs`) and asks `name.rs` for each node's
//! name, `props.rs` for its actions, states and value, and `visibility.rs` for
//! its visibility; [`plan`] and [`outline`] (`plan.rs`) rank, scope and show it.

mod build;
mod far;
pub mod locate;
mod name;
mod plan;
mod props;
mod visibility;

use crate::arena::NodeId;
pub use crate::aria::{Role, State, StateValue};

pub use build::build;
pub use far::{count_tables, CountTables, FarCounts};
pub use plan::{outline, plan, Omitted, Plan, Scope};

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
    pub role: Role,
    pub name: String,
    pub value: Option<String>,
    /// `disabled`, `checked`, `expanded`, `selected`, `focused`, `required`, `readonly`, `level`.
    pub states: Vec<State>,
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
    /// Nodes of the page outside the capture (a viewport walk), counted where
    /// the page was walked: the viewport scope omits them all.
    pub far: FarCounts,
    /// The element index's hint for an unnamed action node (`like`, `fa-trash`), by
    /// node index: the outline prints it as page_content does, apart from names.
    pub hints: std::collections::HashMap<usize, String>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{el, text, view, El};
    use crate::PageView;

    fn tree(body: Vec<El>) -> SemanticTree {
        build(&mut view(body), SemanticOptions::default())
    }

    fn summary(t: &SemanticTree) -> Vec<(String, String, Visibility)> {
        t.nodes.iter().map(|n| (n.role.to_string(), n.name.clone(), n.visibility)).collect()
    }

    #[test]
    fn action_content_and_text_nodes_with_their_roles_and_names() {
        let t = tree(vec![
            el("h2", &[], vec![text("Orders")]),
            el(
                "ul",
                &[],
                vec![
                    el("li", &[], vec![text("First")]),
                    el("li", &[], vec![el("a", &[("href", "/2")], vec![text("Second")])]),
                ],
            ),
            el("div", &[], vec![text("Plain words")]),
            el("div", &[("onclick", "go()"), ("tabindex", "0")], vec![text("Go")]),
        ]);
        let s = summary(&t);
        let rows: Vec<(&str, &str)> = s.iter().map(|(r, n, _)| (r.as_str(), n.as_str())).collect();
        assert_eq!(
            rows,
            vec![
                ("heading", "Orders"),
                ("list", ""),
                ("listitem", "First"),
                // A list item whose text is all its link's shows none of its own.
                ("listitem", ""),
                ("link", "Second"),
                ("text", "Plain words"),
                ("clickable", "Go"),
            ]
        );
        assert_eq!(t.nodes[0].states, vec![State::Level(2)]);
        assert_eq!(t.nodes[4].actions, vec![ActionKind::Click]);
        assert_eq!(t.nodes[4].states, vec![State::Disabled(false)]);
        assert_eq!(t.nodes[4].parent, Some(3));
        assert!(t.nodes.iter().all(|n| n.visibility == Visibility::InViewport));
    }

    #[test]
    fn visibility_from_layout_the_near_margin_and_overlays() {
        let t = tree(vec![
            el("button", &[], vec![text("In")]).at(0.0, 10.0, 100.0, 20.0),
            el("button", &[], vec![text("Near")]).at(0.0, 800.0, 100.0, 20.0),
            el("button", &[], vec![text("Far")]).at(0.0, 3000.0, 100.0, 20.0),
            // An empty box is no layout; a box with laid-out content is where its content is.
            el("button", &[("aria-label", "Empty box")], vec![]).at(0.0, 40.0, 0.0, 0.0),
            el("button", &[], vec![text("Boxed text")]).at(0.0, 40.0, 0.0, 0.0),
            el("button", &[], vec![text("Under")]).at(0.0, 100.0, 100.0, 20.0),
            el("div", &[], vec![]).at(0.0, 90.0, 800.0, 100.0).style("position", "fixed"),
            el("button", &[("hidden", "")], vec![text("Hidden")]).at(0.0, 300.0, 100.0, 20.0),
            el("button", &[], vec![text("display: none")]).unrendered(),
        ]);
        let vis: Vec<(String, Visibility)> = t.nodes.iter().map(|n| (n.name.clone(), n.visibility)).collect();
        assert_eq!(
            vis,
            vec![
                ("In".into(), Visibility::InViewport),
                ("Near".into(), Visibility::NearViewport),
                ("Far".into(), Visibility::Offscreen),
                ("Empty box".into(), Visibility::NoLayout),
                ("Boxed text".into(), Visibility::InViewport),
                ("Under".into(), Visibility::PageOccluded),
            ]
        );
        assert_eq!(t.css_hidden, 2, "the hidden buttons are counted, not listed");
        assert!(t.nodes[0].click_point.is_some() && t.nodes[1].click_point.is_none());
    }

    #[test]
    fn field_states_values_and_actions() {
        let t = tree(vec![
            el("input", &[("type", "checkbox"), ("aria-label", "Agree")], vec![]).checked(),
            el(
                "input",
                &[("type", "password"), ("value", "hunter2"), ("aria-label", "Password"), ("required", "")],
                vec![],
            ),
            el("textarea", &[("aria-label", "Notes"), ("readonly", "")], vec![]),
            el("div", &[("role", "tab"), ("aria-selected", "true")], vec![text("Tab")]),
        ]);
        let n = &t.nodes;
        assert_eq!(n[0].states, vec![State::Disabled(false), State::Checked(true)]);
        assert_eq!(n[0].actions, vec![ActionKind::Click, ActionKind::Check]);
        assert_eq!(n[0].value, None);
        assert_eq!(n[1].value.as_deref(), Some("•••••••"));
        assert_eq!(n[1].states, vec![State::Disabled(false), State::Required(true)]);
        assert_eq!(n[1].actions, vec![ActionKind::Click, ActionKind::Type]);
        assert_eq!(n[2].states, vec![State::Disabled(false), State::Readonly(true)]);
        assert_eq!(
            (n[3].role.clone(), n[3].states.clone()),
            (Role::Tab, vec![State::Disabled(false), State::Selected(true)])
        );
    }

    #[test]
    fn the_viewport_scope_ranks_by_tier_and_counts_what_it_leaves_out() {
        let t = tree(vec![
            el("p", &[], vec![text("Intro")]).at(0.0, 10.0, 300.0, 20.0),
            el("button", &[], vec![text("Buy")]).at(0.0, 40.0, 100.0, 20.0),
            el("button", &[], vec![text("Later")]).at(0.0, 700.0, 100.0, 20.0),
            el("p", &[], vec![text("Footer")]).at(0.0, 5000.0, 300.0, 20.0),
            el("p", &[], vec![text("Gone")]).at(0.0, 60.0, 300.0, 20.0).style("visibility", "hidden"),
        ]);
        let p = plan(&t, &Scope::Viewport);
        let names: Vec<&str> = p.ranked.iter().map(|&i| t.nodes[i].name.as_str()).collect();
        // Visible actions, then visible content, then near the viewport.
        assert_eq!(names, vec!["Buy", "Intro", "Later"]);
        assert_eq!(p.omitted, Omitted { offscreen: 1, css_hidden: 1, ..Default::default() });
        assert_eq!(p.scope, "viewport");
        let q = plan(&t, &Scope::Query("FOOT".into()));
        assert_eq!(q.ranked.iter().map(|&i| t.nodes[i].name.as_str()).collect::<Vec<_>>(), vec!["Footer"]);
    }

    #[test]
    fn the_outline_indents_by_shown_ancestors_and_writes_states() {
        let t = tree(vec![el(
            "nav",
            &[("aria-label", "Main")],
            vec![el("h1", &[], vec![text("Title")]), el("button", &[("aria-expanded", "true")], vec![text("Menu")])],
        )]);
        let all: Vec<usize> = (0..t.nodes.len()).collect();
        let out = outline(&t, &all, |i| format!("s1:{}", i + 1));
        assert_eq!(
            out,
            "- navigation \"Main\" [ref=s1:1]\n  - heading \"Title\" [level=1] [ref=s1:2]\n  - button \"Menu\" [expanded] [ref=s1:3]"
        );
        // Without its parent shown, a node is not indented.
        assert_eq!(outline(&t, &[1], |i| format!("s1:{}", i + 1)), "- heading \"Title\" [level=1] [ref=s1:2]");
    }

    #[test]
    fn with_chromium_s_tree_its_roles_names_and_states_win() {
        use crate::capture::AxNode;
        // Backend ids follow document order: #document 1, html 2, body 3, then the page.
        let mut capture = crate::testing::capture(vec![
            el("button", &[], vec![text("x")]),
            el("div", &[("role", "heading")], vec![text("Title")]),
            el("img", &[("alt", "dom alt")], vec![]),
            el("li", &[], vec![text("Item")]),
        ]);
        let ax = |v: serde_json::Value| serde_json::from_value::<AxNode>(v).unwrap();
        let prop = |name: &str, value: serde_json::Value| serde_json::json!({"name": name, "value": {"value": value}});
        capture.frames[0].ax = Some(vec![
            ax(serde_json::json!({"backendDOMNodeId": 4, "role": {"value": "button"}, "name": {"value": "Close"},
                "properties": [prop("focused", false.into()), prop("expanded", true.into()), prop("level", 3.into())]})),
            ax(serde_json::json!({"backendDOMNodeId": 6, "role": {"value": "heading"}, "name": {"value": "Title"},
                "properties": [prop("level", 2.into()), prop("focused", true.into())]})),
            ax(serde_json::json!({"backendDOMNodeId": 8, "role": {"value": "img"}, "name": {"value": "Chromium alt"}})),
            ax(serde_json::json!({"backendDOMNodeId": 9, "role": {"value": "listitem"}, "name": {"value": ""},
                "properties": [prop("level", 1.into())]})),
        ]);
        let t = build(&mut PageView::build(&capture), SemanticOptions::default());
        let rows: Vec<(Role, &str, &[State])> =
            t.nodes.iter().map(|n| (n.role.clone(), n.name.as_str(), &n.states[..])).collect();
        assert_eq!(
            rows,
            vec![
                // focused=false is left out; a button takes no level.
                (Role::Button, "Close", &[State::Disabled(false), State::Expanded(true)][..]),
                (Role::Heading, "Title", &[State::Focused(true), State::Level(2)][..]),
                // Chromium's `img` is ARIA's image.
                (Role::Image, "Chromium alt", &[][..]),
                // A list item's level repeats the indentation.
                (Role::ListItem, "Item", &[][..]),
            ]
        );
        assert!(t.nodes[1].priority, "the focused node ranks with dialogs");
    }

    #[test]
    fn words_the_enclosing_text_says_are_not_a_node_again_and_unnamed_controls_carry_their_hint() {
        let t = tree(vec![
            el("div", &[], vec![el("label", &[], vec![text("Last reward:")]), text(" -")]),
            el("div", &[], vec![text("Posted by "), el("p", &[], vec![text("someone else")])]),
            el("p", &[], vec![el("label", &[], vec![text("Username")]), el("input", &[], vec![])]),
            el("button", &[("class", "btn like")], vec![]).at(0.0, 100.0, 20.0, 20.0),
        ]);
        let all: Vec<usize> = (0..t.nodes.len()).collect();
        assert_eq!(
            outline(&t, &all, |i| format!("s1:{}", i + 1)),
            "- text \"Last reward: -\" [ref=s1:1]\n- text \"Posted by\" [ref=s1:2]\n  - paragraph \"someone else\" [ref=s1:3]\n- paragraph \"Username\" [ref=s1:4]\n  - textbox [ref=s1:5]\n- button hint:\"like\" [ref=s1:6]"
        );
    }

    #[test]
    fn a_dom_past_the_limit_is_partial_and_says_how_much_was_left() {
        let mut v = view(vec![el("p", &[], vec![text("a")]), el("p", &[], vec![text("b")])]);
        let total = v.node_count();
        let t = build(&mut v, SemanticOptions { dom_node_limit: 4, ..Default::default() });
        assert!(t.partial);
        assert_eq!(t.unprocessed, total - 4);
    }
}

#[cfg(test)]
mod chromium_rules {
    use super::*;
    use crate::testing::{el, text, view};

    fn tree(body: Vec<crate::testing::El>) -> SemanticTree {
        let mut v = view(body);
        build(&mut v, SemanticOptions::default())
    }

    #[test]
    fn a_clickable_list_takes_no_name_from_its_items() {
        let t = tree(vec![el(
            "ul",
            &[("onclick", "1")],
            vec![el("li", &[], vec![text("Miguelita")]), el("li", &[], vec![text("Arabela")])],
        )]);
        let list = t.nodes.iter().find(|n| n.role == Role::List).expect("a list node");
        assert_eq!(list.name, "");
    }

    #[test]
    fn items_of_a_list_that_is_a_menu_are_no_list_items() {
        let t = tree(vec![el(
            "ul",
            &[("role", "menu")],
            vec![el("li", &[], vec![el("a", &[("role", "menuitem"), ("href", "#")], vec![text("Open")])])],
        )]);
        assert!(
            t.nodes.iter().all(|n| n.role != Role::ListItem),
            "{:?}",
            t.nodes.iter().map(|n| &n.role).collect::<Vec<_>>()
        );
    }
}

#[cfg(test)]
mod dialog_rules {
    use super::*;
    use crate::testing::{el, text, view};

    #[test]
    fn a_modal_dialogs_button_is_a_node() {
        let mut v = view(vec![el(
            "dialog",
            &[("open", "")],
            vec![
                el("p", &[], vec![text("Are you sure?")]).at(10.0, 10.0, 200.0, 20.0),
                el("button", &[], vec![text("Close dialog")]).at(10.0, 40.0, 100.0, 20.0),
            ],
        )
        .at(0.0, 0.0, 300.0, 100.0)
        .style("position", "fixed")]);
        let t = build(&mut v, SemanticOptions::default());
        let roles: Vec<(String, String)> = t.nodes.iter().map(|n| (n.role.to_string(), n.name.clone())).collect();
        assert!(roles.iter().any(|(r, n)| r == "button" && n == "Close dialog"), "{roles:?}");
    }
}
