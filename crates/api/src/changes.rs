//! `get_browser_state` with `changes: true`: what changed since the tab's
//! latest snapshot, as a semantic_v2 answer whose `changes` replace the outline.
//!
//! The comparison is over the viewport scope of both snapshots (every in-scope
//! node, before any budget), by node identity ([`sightline_page::delta`]). The
//! new snapshot carries the previous one's ref numbers: a kept node `p3:12` is
//! `p4:12`. Added and changed entries count toward `node_budget`, in document
//! order (so each page applies on its own); the rest is behind the same
//! single-use continuation as a full snapshot. When there is nothing to compare
//! with (no earlier snapshot, a dom_refs_v1 one, or it expired: navigation,
//! reconnect…) the answer is the full snapshot and says why.

use std::sync::Arc;

use sightline_page::delta::{self, Delta, Entry, EntryKind, NodeKey, Numbering, Side};
use sightline_page::semantic::{self, Omitted, Plan, Scope, SemanticTree};

use crate::error::ToolError;
use crate::ids::{SnapshotId, TabId};
use crate::registry::{Continuation, Format, Session};
use crate::snapshot::{self, Request};
use crate::snapshot_reply::{Added, Changed, Changes, SemanticSnapshot};

/// What a change read still has to say, behind a continuation.
pub struct Rest {
    pub since: SnapshotId,
    pub entries: Vec<Entry>,
    /// Entries in the whole change (for `total_nodes`).
    pub total: usize,
    pub omitted: Omitted,
}

/// The previous snapshot, as the change is measured from it.
struct Baseline {
    id: SnapshotId,
    tree: Arc<SemanticTree>,
    keys: Vec<NodeKey>,
    numbers: Vec<u32>,
    next: u32,
}

/// Why a change read answered with the full snapshot.
fn baseline(session: &mut Session, tab_id: &TabId) -> Result<Baseline, &'static str> {
    let latest = session.tab_by_id(tab_id).ok().and_then(|t| t.latest_snapshot);
    let Some(id) = latest else { return Err("no_previous_snapshot") };
    if let Some(rule) = session.tombstones.get(id) {
        return Err(rule.as_str());
    }
    let Ok(stored) = session.snapshot(id) else {
        // `snapshot` retired it just now, with its rule.
        return Err(session.tombstones.get(id).map_or("no_previous_snapshot", |r| r.as_str()));
    };
    let (Format::SemanticV2, Some(tree)) = (stored.format, stored.tree.clone()) else {
        return Err("previous_not_semantic");
    };
    let keys = delta::keys(&tree, &stored.captured.view);
    let numbers = (0..tree.nodes.len()).map(|i| stored.ref_number(i)).collect();
    let next = stored.numbering.as_ref().map_or(tree.nodes.len() as u32 + 1, |n| n.next());
    Ok(Baseline { id, tree, keys, numbers, next })
}

/// A change read of the tab, and its screenshot when asked.
pub async fn get(
    session: &mut Session,
    tab_id: &TabId,
    req: Request,
) -> Result<(SemanticSnapshot, Option<String>), ToolError> {
    if req.query.is_some() || req.scope_ref.is_some() {
        return Err(ToolError::invalid("changes cannot be combined with query or scope_ref"));
    }
    let tab = session.tab_by_id(tab_id)?.tab.clone();
    let base = baseline(session, tab_id);
    let (mut captured, tree) = snapshot::capture_semantic(&tab, req.screenshot, req.dom_node_limit, true).await?;
    let tree = Arc::new(tree);
    let screenshot = captured.screenshot.take();
    // The page may have navigated while the baseline was read or the capture ran.
    let base = base.and_then(|b| {
        let same_document = session.snapshots.get(&b.id).is_some_and(|s| s.navigations == tab.navigation_count());
        if same_document {
            Ok(b)
        } else {
            Err("navigation")
        }
    });
    let keys = delta::keys(&tree, &captured.view);
    let numbering = base.as_ref().ok().map(|b| Arc::new(Numbering::carry(&b.keys, |i| b.numbers[i], b.next, &keys)));
    let id = snapshot::store(session, &tab, tab_id, Format::SemanticV2, captured, Some(tree.clone()), numbering)?;
    let Plan { ranked, omitted, scope } = semantic::plan(&tree, &Scope::Viewport);
    let b = match base {
        Ok(b) => b,
        Err(reason) => {
            let total = ranked.len();
            let mut v =
                snapshot::semantic_response(session, id, tab_id, ranked, omitted, scope, req.node_budget, total);
            v.snapshot.since = Some(None);
            v.snapshot.full_because = Some(reason);
            v.changes = Some(None);
            return Ok((v, screenshot));
        }
    };
    let old_shown = semantic::plan(&b.tree, &Scope::Viewport).ranked;
    let stored = session.snapshots.get(&id).expect("stored");
    let new_number = |i: usize| stored.ref_number(i);
    let old_number = |i: usize| b.numbers[i];
    let Delta { removed, entries } = delta::diff(
        &Side { tree: &b.tree, keys: &b.keys, shown: &old_shown, number: &old_number },
        &Side { tree: &tree, keys: &keys, shown: &ranked, number: &new_number },
    );
    let total = entries.len();
    let rest = Rest { since: b.id, entries, total, omitted };
    let mut v = page(session, id, tab_id, &rest, req.node_budget);
    if let Some(Some(changes)) = v.changes.as_mut() {
        changes.removed = removed.iter().map(|n| b.id.at(*n)).collect();
    }
    Ok((v, screenshot))
}

/// One page of a change read: the first `budget` entries of `rest`, and a
/// continuation for the others.
pub fn page(session: &mut Session, id: SnapshotId, tab_id: &TabId, rest: &Rest, budget: usize) -> SemanticSnapshot {
    let (shown, later) = rest.entries.split_at(rest.entries.len().min(budget));
    let mut omitted = rest.omitted.clone();
    omitted.budget = later.len();
    let continuation = (!later.is_empty()).then(|| {
        let token = session.ids.continuation();
        let next = Rest { since: rest.since, entries: later.to_vec(), total: rest.total, omitted: omitted.clone() };
        session.continuations.insert(
            token.clone(),
            Continuation {
                snapshot: id,
                tab_id: tab_id.clone(),
                target_generation: session.generation,
                remaining: Vec::new(),
                node_budget: budget,
                total_nodes: rest.total,
                omitted: omitted.clone(),
                scope: "viewport",
                changes: Some(Arc::new(next)),
            },
        );
        token
    });
    let stored = session.snapshots.get(&id).expect("stored");
    let tree = stored.tree.clone().expect("semantic");
    let number = |i: usize| stored.ref_number(i);
    let r = |i: usize| format!("{id}:{}", number(i));
    let line = |i: usize| semantic::outline(&tree, &[i], r);
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for e in shown {
        let (parent, after) = (e.place.parent.map(r), e.place.after.map(r));
        match &e.kind {
            EntryKind::Added => {
                added.push(Added { reference: r(e.index), parent, after, line: line(e.index) });
            }
            EntryKind::Changed { fields, moved } => {
                let s = &tree.nodes[e.index];
                let mut c = Changed { reference: r(e.index), line: line(e.index), ..Changed::default() };
                for f in fields {
                    match *f {
                        "role" => c.role = Some(s.role.as_str().to_string()),
                        "name" => c.name = Some(s.name.clone()),
                        "value" => c.value = Some(s.value.clone()),
                        "states" => c.states = Some(crate::snapshot_reply::states_of(s)),
                        _ => c.visibility = Some(s.visibility.as_str()),
                    }
                }
                if *moved {
                    c.moved = Some(true);
                    c.parent = Some(parent);
                    c.after = Some(after);
                }
                changed.push(c);
            }
        }
    }
    let indices: Vec<usize> = shown.iter().map(|e| e.index).collect();
    let part = snapshot::Part {
        shown: &indices,
        scope: "viewport",
        since: Some(Some(rest.since)),
        total: rest.total,
        budget,
        omitted,
        continuation,
    };
    let changes = Changes { added, changed, removed: Vec::new() };
    snapshot::semantic_reply(session, id, tab_id, part, String::new(), Some(Some(changes)))
}
