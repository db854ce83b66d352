//! Ranking and showing: which nodes a scope keeps (viewport, query, subtree),
//! in what order (dialogs and focus first, then visible actions…), what it left
//! out and why, and the indented outline of the shown nodes.

use std::collections::HashSet;

use crate::aria::StateValue;
use crate::text::cut;

use super::{SemNode, SemanticTree, Visibility};

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

/// Counts of what a selection left out, by reason (a snapshot's `omitted`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
            omitted.css_hidden += tree.far.css_hidden;
            omitted.offscreen += tree.far.offscreen;
            omitted.no_layout += tree.far.no_layout;
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
                let hit = s.role.as_str().to_lowercase() == q
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
        } else if let Some(h) = tree.hints.get(&i) {
            line.push_str(&format!(" hint:{h:?}"));
        }
        for state in &s.states {
            match state.value() {
                StateValue::Flag(false) => {}
                StateValue::Flag(true) => line.push_str(&format!(" [{}]", state.name())),
                v => line.push_str(&format!(" [{}={v}]", state.name())),
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
