//! Finding a node again by what a person sees: its role, its name and where it
//! is (the dialog, landmark or heading it is under), never by index or DOM id.
//!
//! [`describe`] says how to find a node of one tree; [`find`] ranks the nodes
//! of another tree against a [`Locator`] (the `run` tool's `browser.find`);
//! [`resolve`] insists on exactly one (a replayed step), else says what is
//! there instead ([`Drift`]).

use serde::{Deserialize, Serialize};

use super::{Role, SemanticTree};

/// How to find a node: role, accessible name, and the name of what it is under.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Locator {
    /// The role (`button`, `textbox`, `link`, …); any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The accessible name; any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The name of the dialog, named landmark or heading it is under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near: Option<String>,
    /// Only a name equal to `name` (ignoring case and spacing) matches.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
}

/// Why a locator did not name exactly one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// Nothing has that role and name; `instead` are the likeliest stand-ins
    /// (the same role where it was, or the same name in another role).
    Missing { instead: Vec<usize> },
    /// Several nodes have that role and name, and `near` does not tell them apart.
    Ambiguous { matches: Vec<usize> },
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn same_role(a: &Role, b: &str) -> bool {
    let b = b.trim().to_ascii_lowercase();
    a.as_str() == b || (matches!(a, Role::Image | Role::Img) && (b == "img" || b == "image"))
}

/// Roles whose name tells where a node is.
fn is_place(r: &Role) -> bool {
    matches!(
        r,
        Role::Dialog
            | Role::AlertDialog
            | Role::Main
            | Role::Navigation
            | Role::Banner
            | Role::ContentInfo
            | Role::Complementary
            | Role::Form
            | Role::Region
            | Role::Search
            | Role::Group
            | Role::Table
            | Role::Grid
            | Role::Article
            | Role::Tablist
            | Role::Menu
            | Role::Toolbar
    )
}

/// Where node `i` is: the name of its nearest named dialog ancestor, else of the
/// nearest heading before it in document order, else of its nearest named place.
pub fn context(tree: &SemanticTree, i: usize) -> Option<String> {
    let ancestors = || {
        std::iter::successors(tree.nodes.get(i).and_then(|n| n.parent), |&p| tree.nodes.get(p).and_then(|n| n.parent))
    };
    let named = |j: usize| Some(tree.nodes[j].name.trim()).filter(|n| !n.is_empty()).map(str::to_string);
    if let Some(d) =
        ancestors().find(|&p| matches!(tree.nodes[p].role, Role::Dialog | Role::AlertDialog) && named(p).is_some())
    {
        return named(d);
    }
    let heading = (0..i).rev().find(|&j| tree.nodes[j].role == Role::Heading && named(j).is_some());
    if let Some(h) = heading {
        return named(h);
    }
    ancestors().find(|&p| is_place(&tree.nodes[p].role) && named(p).is_some()).and_then(named)
}

/// Whether node `j` is inside node `p`.
fn inside(tree: &SemanticTree, j: usize, p: usize) -> bool {
    std::iter::successors(tree.nodes[j].parent, |&a| tree.nodes[a].parent).any(|a| a == p)
}

/// What a person reads beside an unnamed control: the first name in its row (its
/// parent, or the parent's parent), as a to-do's checkbox is "the one of Walk the dog".
fn row_text(tree: &SemanticTree, i: usize) -> Option<String> {
    let parents = std::iter::successors(tree.nodes[i].parent, |&p| tree.nodes[p].parent).take(2);
    for p in parents {
        let named = (p + 1..tree.nodes.len())
            .take_while(|&j| inside(tree, j, p))
            .filter(|&j| j != i && !inside(tree, j, i))
            .map(|j| tree.nodes[j].name.trim())
            .find(|s| !s.is_empty() && s.chars().count() <= 80);
        if let Some(s) = named {
            return Some(s.to_string());
        }
    }
    None
}

/// Where node `i` is, for a locator: its [`context`]; for an unnamed control, the text of its
/// row first ([`row_text`]).
pub fn place(tree: &SemanticTree, i: usize) -> Option<String> {
    if tree.nodes[i].name.trim().is_empty() {
        if let Some(row) = row_text(tree, i) {
            return Some(row);
        }
    }
    context(tree, i)
}

/// The locator a replay uses to find node `i` of `tree` again.
pub fn describe(tree: &SemanticTree, i: usize) -> Locator {
    let n = &tree.nodes[i];
    Locator {
        role: Some(n.role.as_str().to_string()),
        name: Some(n.name.trim().to_string()),
        near: place(tree, i),
        exact: true,
    }
}

/// Whether node `j`'s place is `near`: its context, or any ancestor's name.
fn is_near(tree: &SemanticTree, j: usize, near: &str) -> bool {
    let want = norm(near);
    if context(tree, j).is_some_and(|c| norm(&c) == want) || place(tree, j).is_some_and(|c| norm(&c) == want) {
        return true;
    }
    std::iter::successors(tree.nodes[j].parent, |&p| tree.nodes[p].parent).any(|p| norm(&tree.nodes[p].name) == want)
}

/// The nodes that match `l`, best first: an equal name before one that starts
/// with it before one that contains it, a node under `near` first, an action
/// node before a content node, one in the viewport first, then document order.
pub fn find(tree: &SemanticTree, l: &Locator) -> Vec<usize> {
    let want = l.name.as_deref().map(norm);
    let mut scored: Vec<(u32, usize)> = Vec::new();
    for (j, n) in tree.nodes.iter().enumerate() {
        if l.role.as_deref().is_some_and(|r| !same_role(&n.role, r)) {
            continue;
        }
        let name_score = match &want {
            None => 1,
            Some(w) => {
                let have = norm(&n.name);
                if have == *w {
                    4
                } else if l.exact || w.is_empty() {
                    continue;
                } else if have.starts_with(w.as_str()) {
                    2
                } else if have.contains(w.as_str()) {
                    1
                } else {
                    continue;
                }
            }
        };
        let mut score = name_score * 16;
        if l.near.as_deref().is_some_and(|near| is_near(tree, j, near)) {
            score += 8;
        }
        if n.is_action() {
            score += 2;
        }
        if n.visibility == super::Visibility::InViewport {
            score += 1;
        }
        scored.push((score, j));
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, j)| j).collect()
}

/// Exactly one node for a recorded locator (role and name equal), told apart
/// by `near` when several share them; else the [`Drift`].
pub fn resolve(tree: &SemanticTree, l: &Locator) -> Result<usize, Drift> {
    let exact = Locator { exact: true, near: None, ..l.clone() };
    let all = find(tree, &exact);
    let near: Vec<usize> = match l.near.as_deref() {
        Some(near) => all.iter().copied().filter(|&j| is_near(tree, j, near)).collect(),
        None => Vec::new(),
    };
    match (all.len(), near.len()) {
        (1, _) => Ok(all[0]),
        (0, _) => Err(Drift::Missing { instead: stand_ins(tree, l) }),
        (_, 1) => Ok(near[0]),
        (_, 0) => Err(Drift::Ambiguous { matches: all }),
        _ => Err(Drift::Ambiguous { matches: near }),
    }
}

/// What is there instead of a missing node: the same role under the same
/// place, then the same name in another role, then the closest name.
fn stand_ins(tree: &SemanticTree, l: &Locator) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    if let (Some(role), Some(near)) = (&l.role, &l.near) {
        let same_place =
            (0..tree.nodes.len()).filter(|&j| same_role(&tree.nodes[j].role, role) && is_near(tree, j, near));
        out.extend(same_place);
    }
    if l.name.is_some() {
        out.extend(find(tree, &Locator { role: None, exact: true, ..l.clone() }));
        out.extend(find(tree, &Locator { exact: false, ..l.clone() }));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|j| seen.insert(*j));
    out.truncate(3);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::{SemNode, Visibility};
    use crate::NodeId;

    fn node(parent: Option<usize>, role: &str, name: &str, action: bool) -> SemNode {
        SemNode {
            node: NodeId::default(),
            parent,
            role: Role::from_name(role),
            name: name.into(),
            value: None,
            states: Vec::new(),
            actions: if action { vec![crate::semantic::ActionKind::Click] } else { Vec::new() },
            visibility: Visibility::InViewport,
            frame: 0,
            backend_node_id: 0,
            doc: 0,
            priority: false,
            click_point: None,
        }
    }

    fn tree() -> SemanticTree {
        let nodes = vec![
            node(None, "heading", "Sign in", false),     // 0
            node(None, "form", "", false),               // 1
            node(Some(1), "textbox", "Email", true),     // 2
            node(Some(1), "button", "Save", true),       // 3
            node(None, "heading", "Profile", false),     // 4
            node(None, "button", "Save", true),          // 5
            node(None, "dialog", "Delete item?", false), // 6
            node(Some(6), "button", "OK", true),         // 7
        ];
        SemanticTree { nodes, ..SemanticTree::default() }
    }

    #[test]
    fn a_node_is_described_by_role_name_and_place() {
        let t = tree();
        assert_eq!(describe(&t, 3).near.as_deref(), Some("Sign in"));
        assert_eq!(describe(&t, 5).near.as_deref(), Some("Profile"));
        // A dialog names the place of what is in it, before any heading.
        assert_eq!(describe(&t, 7).near.as_deref(), Some("Delete item?"));
        assert_eq!(describe(&t, 2).role.as_deref(), Some("textbox"));
    }

    #[test]
    fn resolve_tells_twins_apart_by_place_and_reports_drift() {
        let t = tree();
        assert_eq!(resolve(&t, &describe(&t, 3)), Ok(3));
        assert_eq!(resolve(&t, &describe(&t, 5)), Ok(5));
        let mut gone = describe(&t, 3);
        gone.name = Some("Store".into());
        // Missing: the button under the same heading stands in first.
        assert_eq!(resolve(&t, &gone), Err(Drift::Missing { instead: vec![3] }));
        let twins = Locator { near: Some("Elsewhere".into()), ..describe(&t, 3) };
        assert_eq!(resolve(&t, &twins), Err(Drift::Ambiguous { matches: vec![3, 5] }));
        let moved = Locator { near: Some("Elsewhere".into()), ..describe(&t, 2) };
        assert_eq!(resolve(&t, &moved), Ok(2), "one match is found wherever it moved");
    }

    #[test]
    fn an_unnamed_control_is_placed_by_its_row_and_told_apart_by_it() {
        let nodes = vec![
            node(None, "heading", "todos", false),        // 0
            node(None, "list", "", false),                // 1
            node(Some(1), "listitem", "", false),         // 2
            node(Some(2), "checkbox", "", true),          // 3
            node(Some(2), "text", "Buy milk", false),     // 4
            node(Some(1), "listitem", "", false),         // 5
            node(Some(5), "checkbox", "", true),          // 6
            node(Some(5), "text", "Walk the dog", false), // 7
        ];
        let t = SemanticTree { nodes, ..SemanticTree::default() };
        assert_eq!(describe(&t, 6).near.as_deref(), Some("Walk the dog"));
        assert_eq!(resolve(&t, &describe(&t, 6)), Ok(6));
        assert_eq!(resolve(&t, &describe(&t, 3)), Ok(3));
    }

    #[test]
    fn find_ranks_equal_names_and_places_first() {
        let t = tree();
        let l = Locator { name: Some("save".into()), near: Some("Profile".into()), ..Locator::default() };
        assert_eq!(find(&t, &l), vec![5, 3]);
        let l = Locator { role: Some("button".into()), name: Some("o".into()), ..Locator::default() };
        assert_eq!(find(&t, &l), vec![7]);
        let l = Locator { role: Some("textbox".into()), ..Locator::default() };
        assert_eq!(find(&t, &l), vec![2]);
    }
}
