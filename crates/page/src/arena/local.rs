//! One document of a snapshot, indexed for the walk: children of each node,
//! its layout objects and text boxes, and the snapshot's rare (sparse) columns
//! as maps and flags.

use std::collections::HashMap;

use crate::capture::*;
use crate::geometry::Rect;

pub(super) struct Local<'a> {
    pub frame: usize,
    pub snap: &'a Snapshot,
    pub doc: &'a DocumentSnapshot,
    pub children: Vec<Vec<usize>>,
    pub layout_of: HashMap<usize, usize>,
    pub boxes_of: HashMap<usize, Vec<Rect>>,
    pub rare_input: HashMap<usize, i64>,
    pub rare_text: HashMap<usize, i64>,
    pub rare_shadow: HashMap<usize, i64>,
    pub rare_doc: HashMap<usize, i64>,
    pub rare_pseudo: HashMap<usize, i64>,
    /// Layout text of every layout object of a node (a pseudo-element's text is
    /// on a second layout object, not on its box).
    pub texts_of: HashMap<usize, Vec<usize>>,
    pub checked: Vec<bool>,
    pub selected: Vec<bool>,
    pub clickable: Vec<bool>,
}

fn rare_map(r: &RareString) -> HashMap<usize, i64> {
    r.index.iter().copied().zip(r.value.iter().copied()).collect()
}

fn rare_flags(r: &RareBool, n: usize) -> Vec<bool> {
    let mut v = vec![false; n];
    for &i in &r.index {
        if i < n {
            v[i] = true;
        }
    }
    v
}

impl<'a> Local<'a> {
    pub fn new(frame: usize, snap: &'a Snapshot, doc: &'a DocumentSnapshot) -> Local<'a> {
        let n = doc.nodes.node_name.len();
        let mut children = vec![Vec::new(); n];
        for (i, &p) in doc.nodes.parent_index.iter().enumerate() {
            if p >= 0 && (p as usize) < n {
                children[p as usize].push(i);
            }
        }
        let mut layout_of = HashMap::with_capacity(doc.layout.node_index.len());
        let mut texts_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for (li, &ni) in doc.layout.node_index.iter().enumerate() {
            match layout_of.entry(ni) {
                std::collections::hash_map::Entry::Occupied(_) => {
                    if doc.layout.text.get(li).is_some_and(|&t| t >= 0) {
                        texts_of.entry(ni).or_default().push(li);
                    }
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(li);
                }
            }
        }
        let mut boxes_of: HashMap<usize, Vec<Rect>> = HashMap::new();
        for (li, b) in doc.text_boxes.layout_index.iter().zip(&doc.text_boxes.bounds) {
            boxes_of.entry(*li).or_default().push(Rect::from_slice(b));
        }
        Local {
            frame,
            snap,
            doc,
            children,
            layout_of,
            boxes_of,
            rare_input: rare_map(&doc.nodes.input_value),
            rare_text: rare_map(&doc.nodes.text_value),
            rare_shadow: rare_map(&doc.nodes.shadow_root_type),
            rare_pseudo: rare_map(&doc.nodes.pseudo_type),
            texts_of,
            rare_doc: doc
                .nodes
                .content_document_index
                .index
                .iter()
                .copied()
                .zip(doc.nodes.content_document_index.value.iter().copied())
                .collect(),
            checked: rare_flags(&doc.nodes.input_checked, n),
            selected: rare_flags(&doc.nodes.option_selected, n),
            clickable: rare_flags(&doc.nodes.is_clickable, n),
        }
    }
}
