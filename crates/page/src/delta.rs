//! What changed between two semantic snapshots of one document.
//!
//! A node's identity across snapshots is its document's frame id and its
//! backend DOM node id: Chromium keeps both for the node's life in a document
//! (a node the page re-creates is a new node). Ref numbers are carried by that
//! identity ([`Numbering::carry`]): a node kept from the previous snapshot keeps
//! its number, a new one gets a number never used before in the chain.
//!
//! The change is exact on the outline: the outline is the in-scope nodes in
//! document order, each indented by its nearest in-scope semantic ancestor (its
//! *parent* here). Applying a [`Delta`] to the previous outline — drop the
//! removed and the moved nodes, rewrite the changed ones, then insert the added
//! and moved ones in order, each after its `after` node (first when none) and
//! under its `parent` — gives the new outline line for line.

use std::collections::HashMap;

use crate::semantic::{SemNode, SemanticTree};
use crate::PageView;

/// A node's identity within a document: (frame id, backend DOM node id).
pub type NodeKey = (String, i64);

/// The identity of every node of a tree captured from `view`.
pub fn keys(tree: &SemanticTree, view: &PageView) -> Vec<NodeKey> {
    let frames: Vec<&str> = view.frame_ids().collect();
    tree.nodes.iter().map(|s| (frames.get(s.doc).copied().unwrap_or("").to_string(), s.backend_node_id)).collect()
}

/// Ref numbers of a tree's nodes when they are not the dense `index + 1`.
#[derive(Debug, Clone, Default)]
pub struct Numbering {
    numbers: Vec<u32>,
    index: HashMap<u32, usize>,
    /// The smallest number never given in this chain.
    next: u32,
}

impl Numbering {
    /// Numbers for `new_keys`: a node kept from the previous tree keeps its
    /// number (`prev_number`), a new one gets the next unused number.
    /// `prev_next` is the smallest number the previous chain never gave.
    pub fn carry(
        prev_keys: &[NodeKey],
        prev_number: impl Fn(usize) -> u32,
        prev_next: u32,
        new_keys: &[NodeKey],
    ) -> Numbering {
        let old: HashMap<&NodeKey, u32> = prev_keys.iter().enumerate().map(|(i, k)| (k, prev_number(i))).collect();
        let mut next = prev_next.max(1);
        let mut numbers = Vec::with_capacity(new_keys.len());
        for k in new_keys {
            let n = match old.get(k) {
                Some(&n) => n,
                None => {
                    next += 1;
                    next - 1
                }
            };
            numbers.push(n);
        }
        let index = numbers.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        Numbering { numbers, index, next }
    }

    /// The ref number of node `i`.
    pub fn number(&self, i: usize) -> u32 {
        self.numbers[i]
    }

    /// The node with ref number `n`.
    pub fn index(&self, n: u32) -> Option<usize> {
        self.index.get(&n).copied()
    }

    /// The smallest number not given yet.
    pub fn next(&self) -> u32 {
        self.next
    }
}

/// One side of a comparison: a tree, its node identities, the nodes in scope
/// (any order) and its ref numbers.
pub struct Side<'a> {
    pub tree: &'a SemanticTree,
    pub keys: &'a [NodeKey],
    pub shown: &'a [usize],
    pub number: &'a dyn Fn(usize) -> u32,
}

/// Where a node sits in the new outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Nearest in-scope semantic ancestor (new tree index).
    pub parent: Option<usize>,
    /// The node right before it in the outline (new tree index); `None` = first.
    pub after: Option<usize>,
}

/// A node of the new outline that is not as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// New tree index.
    pub index: usize,
    pub kind: EntryKind,
    pub place: Place,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// Not in the previous outline.
    Added,
    /// In both: the fields that differ (`role`, `name`, `value`, `states`,
    /// `visibility`) and whether it moved (other parent or other order).
    Changed { fields: Vec<&'static str>, moved: bool },
}

/// What changed: removed ref numbers (previous numbering), and the added and
/// changed nodes in new document order.
#[derive(Debug, Clone, Default)]
pub struct Delta {
    pub removed: Vec<u32>,
    pub entries: Vec<Entry>,
}

fn sorted(shown: &[usize]) -> Vec<usize> {
    let mut v = shown.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// Each shown node's nearest shown ancestor.
fn parents(tree: &SemanticTree, order: &[usize]) -> HashMap<usize, Option<usize>> {
    let set: std::collections::HashSet<usize> = order.iter().copied().collect();
    order
        .iter()
        .map(|&i| {
            let mut cur = tree.nodes[i].parent;
            while let Some(p) = cur {
                if set.contains(&p) {
                    break;
                }
                cur = tree.nodes[p].parent;
            }
            (i, cur)
        })
        .collect()
}

fn differing(a: &SemNode, b: &SemNode) -> Vec<&'static str> {
    let mut f = Vec::new();
    if a.role != b.role {
        f.push("role");
    }
    if a.name != b.name {
        f.push("name");
    }
    if a.value != b.value {
        f.push("value");
    }
    if a.states != b.states {
        f.push("states");
    }
    if a.visibility != b.visibility {
        f.push("visibility");
    }
    f
}

/// Positions (in `seq`) of a longest strictly increasing subsequence.
fn longest_increasing(seq: &[usize]) -> Vec<bool> {
    let mut tails: Vec<usize> = Vec::new(); // positions in seq
    let mut prev: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &v) in seq.iter().enumerate() {
        let at = tails.partition_point(|&t| seq[t] < v);
        prev[i] = at.checked_sub(1).map(|a| tails[a]);
        if at == tails.len() {
            tails.push(i);
        } else {
            tails[at] = i;
        }
    }
    let mut keep = vec![false; seq.len()];
    let mut cur = tails.last().copied();
    while let Some(c) = cur {
        keep[c] = true;
        cur = prev[c];
    }
    keep
}

/// The change from `old` to `new`.
pub fn diff(old: &Side, new: &Side) -> Delta {
    let old_order = sorted(old.shown);
    let new_order = sorted(new.shown);
    let old_parent = parents(old.tree, &old_order);
    let new_parent = parents(new.tree, &new_order);
    let old_at: HashMap<&NodeKey, usize> = old_order.iter().map(|&i| (&old.keys[i], i)).collect();
    let new_pos: HashMap<&NodeKey, usize> = new_order.iter().enumerate().map(|(p, &i)| (&new.keys[i], p)).collect();
    let removed =
        old_order.iter().filter(|&&i| !new_pos.contains_key(&old.keys[i])).map(|&i| (old.number)(i)).collect();
    // Kept nodes in old order, by their new position: those off the longest increasing run moved.
    let kept: Vec<usize> = old_order.iter().filter_map(|&i| new_pos.get(&old.keys[i]).copied()).collect();
    let in_order: HashMap<usize, bool> = kept.iter().copied().zip(longest_increasing(&kept)).collect();
    let mut entries = Vec::new();
    for (p, &i) in new_order.iter().enumerate() {
        let place = Place { parent: new_parent[&i], after: p.checked_sub(1).map(|q| new_order[q]) };
        let Some(&o) = old_at.get(&new.keys[i]) else {
            entries.push(Entry { index: i, kind: EntryKind::Added, place });
            continue;
        };
        let parent_key = |tree_keys: &[NodeKey], parent: Option<usize>| parent.map(|q| tree_keys[q].clone());
        let moved = !in_order[&p] || parent_key(old.keys, old_parent[&o]) != parent_key(new.keys, place.parent);
        let fields = differing(&old.tree.nodes[o], &new.tree.nodes[i]);
        if moved || !fields.is_empty() {
            entries.push(Entry { index: i, kind: EntryKind::Changed { fields, moved }, place });
        }
    }
    Delta { removed, entries }
}

impl PageView {
    /// The identity of each indexed element, by position.
    pub fn element_keys(&self) -> Vec<NodeKey> {
        self.elements.iter().map(|e| (self.frame_of(e.node).unwrap_or("").to_string(), e.backend_node_id)).collect()
    }

    /// `page_content` with `*` before the token of every element whose identity
    /// is not in `previous` (`*[12]button "Save"`). Text appended to
    /// `page_content` after the capture (a tab note) is kept.
    pub fn page_content_marking_new(&mut self, previous: &std::collections::HashSet<NodeKey>) -> String {
        let fresh: std::collections::HashSet<usize> =
            self.element_keys().iter().enumerate().filter(|(_, k)| !previous.contains(*k)).map(|(i, _)| i).collect();
        if fresh.is_empty() {
            return self.page_content.clone();
        }
        let mut text = |fresh: &std::collections::HashSet<usize>| {
            let mut t = crate::content::render_marked(&mut self.arena, &self.elements, &self.naming_labels, fresh);
            if let Some(hint) = crate::scroll_hint(self.scroll, self.content_size, self.viewport) {
                if !t.is_empty() {
                    t.push('\n');
                }
                t.push_str(&hint);
            }
            t
        };
        let plain = text(&Default::default());
        let marked = text(&fresh);
        match self.page_content.strip_prefix(&plain) {
            Some(after) => marked + after,
            None => marked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_increasing_run_is_kept() {
        assert_eq!(longest_increasing(&[0, 1, 2]), vec![true, true, true]);
        assert_eq!(longest_increasing(&[2, 0, 1]), vec![false, true, true]);
        assert_eq!(longest_increasing(&[]), Vec::<bool>::new());
        let k = longest_increasing(&[3, 0, 1, 4, 2]);
        assert_eq!(k.iter().filter(|&&b| b).count(), 3);
    }

    #[test]
    fn numbers_are_carried_and_never_reused() {
        let k = |b: i64| ("f".to_string(), b);
        let prev = [k(10), k(11), k(12)];
        let n = Numbering::carry(&prev, |i| i as u32 + 1, 4, &[k(11), k(13), k(10), k(14)]);
        assert_eq!((0..4).map(|i| n.number(i)).collect::<Vec<_>>(), vec![2, 4, 1, 5]);
        assert_eq!(n.index(4), Some(1));
        assert_eq!(n.index(3), None, "the removed node's number is not given again");
        assert_eq!(n.next(), 6);
    }
}
