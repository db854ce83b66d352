//! semantic_v2: the page as an accessibility outline with typed refs.
//!
//! Built from the same joined tree as the element index, plus the accessibility
//! tree (role, name, states) joined by backend node id. Each semantic node is
//! an *action* node (an interactive element, with the actions it supports) or a
//! *content* node (a heading, paragraph, list item, image, landmark, text…),
//! with a visibility from the closed vocabulary below, decided from evidence.

mod build;
mod name;
mod plan;
mod props;
mod visibility;

use crate::arena::NodeId;
pub use crate::aria::{Role, State, StateValue};

pub use build::build;
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
