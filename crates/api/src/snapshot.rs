//! `get_browser_state` in snapshot mode: semantic_v2 and dom_refs_v1.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Rule, ToolCode, ToolError};
use crate::ids::{ContinuationId, RefError, RefId, SnapshotId, TabId};
use crate::registry::{Continuation, Format, Session, Stored};
use crate::snapshot_reply::{
    ActionRef, ContentRef, DomRef, DomRefsMeta, DomRefsSnapshot, DomRefsV1, Mode, Oopif, PageInfo, SemanticMeta,
    SemanticSnapshot, SemanticV2, Snapshot,
};
use crate::tools::Status;
use sightline_browser::{CaptureOptions, FrameId};
use sightline_page::semantic::{self, Omitted, Plan, Scope, SemanticOptions, SemanticTree};

pub const DEFAULT_BUDGET: usize = 300;
pub const MAX_BUDGET: usize = 2000;

/// What the caller asked for.
#[derive(Debug, Clone)]
pub struct Request {
    pub format: Format,
    pub query: Option<String>,
    pub scope_ref: Option<String>,
    pub continuation: Option<String>,
    pub node_budget: usize,
    pub screenshot: bool,
    pub dom_node_limit: Option<usize>,
    /// Answer what changed since the tab's latest snapshot ([`crate::changes`]).
    pub changes: bool,
}

/// `p12:34` → (`p12`, 34). A number past the largest element index names no
/// ref (`snapshot_not_found`); it is never wrapped around to a small one.
pub fn parse_ref(r: &str) -> Result<RefId, ToolError> {
    r.parse::<RefId>().map_err(|e| {
        let error = match &e {
            RefError::TooLarge(why) => ToolError::new(ToolCode::SnapshotNotFound, format!("no ref {r}: {why}")),
            RefError::UnknownSnapshot { snapshot } => {
                ToolError::new(ToolCode::SnapshotNotFound, format!("no snapshot {snapshot} in this session"))
            }
            RefError::Malformed(_) => ToolError::invalid(format!("{r:?} is not a ref (refs look like p12:34)")),
        };
        error.with_source(e)
    })
}

pub(crate) fn refs_of(
    tree: &SemanticTree,
    snap: SnapshotId,
    number: &dyn Fn(usize) -> u32,
    shown: &[usize],
    frame_names: &HashMap<usize, String>,
) -> (Vec<ActionRef>, Vec<ContentRef>) {
    let mut order = shown.to_vec();
    order.sort_unstable();
    let mut refs = Vec::new();
    let mut content = Vec::new();
    for i in order {
        let s = &tree.nodes[i];
        let frame = frame_names.get(&s.doc).cloned().unwrap_or_else(|| "main".into());
        if s.is_action() {
            refs.push(ActionRef {
                reference: format!("{snap}:{}", number(i)),
                role: s.role.as_str().to_string(),
                name: s.name.clone(),
                value: s.value.clone(),
                states: crate::snapshot_reply::states_of(s),
                actions: s.actions.iter().map(|a| a.as_str()).collect(),
                frame,
                visibility: s.visibility.as_str(),
            });
        } else {
            content.push(ContentRef {
                reference: format!("{snap}:{}", number(i)),
                role: s.role.as_str().to_string(),
                name: s.name.clone(),
                frame,
                visibility: s.visibility.as_str(),
            });
        }
    }
    (refs, content)
}

/// Opaque frame labels: `main`, then `frame-1`, `frame-2`… by document.
pub(crate) fn frame_names(stored: &Stored) -> HashMap<usize, String> {
    stored
        .captured
        .view
        .frame_ids()
        .enumerate()
        .map(|(i, _)| (i, if i == 0 { "main".to_string() } else { format!("frame-{i}") }))
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn semantic_response(
    session: &mut Session,
    stored_id: SnapshotId,
    tab_id: &TabId,
    ranked: Vec<usize>,
    mut omitted: Omitted,
    scope: &'static str,
    budget: usize,
    total: usize,
) -> SemanticSnapshot {
    let stored = session.snapshots.get(&stored_id).expect("stored");
    let tree = stored.tree.clone().expect("semantic");
    let (shown, rest) = ranked.split_at(ranked.len().min(budget));
    omitted.budget = rest.len();
    let continuation = if rest.is_empty() {
        None
    } else {
        let token = session.ids.continuation();
        session.continuations.insert(
            token.clone(),
            Continuation {
                snapshot: stored_id,
                tab_id: tab_id.clone(),
                target_generation: session.generation,
                remaining: rest.to_vec(),
                node_budget: budget,
                total_nodes: total,
                omitted: omitted.clone(),
                scope,
                changes: None,
            },
        );
        Some(token)
    };
    let stored = session.snapshots.get(&stored_id).expect("stored");
    let outline = semantic::outline(&tree, shown, |i| stored_id.at(stored.ref_number(i)));
    let part = Part { shown, scope, since: None, total, budget, omitted, continuation };
    semantic_reply(session, stored_id, tab_id, part, outline, None)
}

/// What one semantic_v2 reply shows of its stored snapshot: the tree nodes
/// `shown`, and the meta the whole read and the change read each work out.
pub(crate) struct Part<'a> {
    pub shown: &'a [usize],
    pub scope: &'static str,
    pub since: Option<Option<SnapshotId>>,
    pub total: usize,
    pub budget: usize,
    pub omitted: Omitted,
    pub continuation: Option<ContinuationId>,
}

/// The one constructor of a semantic_v2 reply (a whole, scoped or continued
/// read, or a change read): its header, page, refs of the nodes shown and frames.
pub(crate) fn semantic_reply(
    session: &Session,
    id: SnapshotId,
    tab_id: &TabId,
    p: Part<'_>,
    outline: String,
    changes: Option<Option<crate::snapshot_reply::Changes>>,
) -> SemanticSnapshot {
    let stored = session.snapshots.get(&id).expect("stored");
    let tree = stored.tree.clone().expect("semantic");
    let number = |i| stored.ref_number(i);
    let (refs, content_refs) = refs_of(&tree, id, &number, p.shown, &frame_names(stored));
    let view = &stored.captured.view;
    SemanticSnapshot {
        status: Status::Ok,
        mode: Mode::Snapshot,
        target_id: session.target_id.clone(),
        tab_id: tab_id.clone(),
        snapshot: SemanticMeta {
            id,
            format: SemanticV2::SemanticV2,
            complete: p.continuation.is_none() && !tree.partial,
            scope: p.scope,
            since: p.since,
            selected_nodes: p.shown.len(),
            total_nodes: p.total,
            node_budget: p.budget,
            omitted: p.omitted,
            continuation: p.continuation,
            full_because: None,
        },
        page: PageInfo { url: view.url.clone(), title: view.title.clone() },
        outline,
        refs,
        content_refs,
        changes,
        oopif: Oopif::of(&tree),
    }
}

/// The capture and semantic tree behind a semantic_v2 snapshot: for the
/// viewport scope (`viewport`) the viewport walk with its near margin, which
/// counts what it leaves out, where the page allows it; else the whole
/// document (refs reach beyond the viewport). Roles, names and states are read
/// from the DOM ([`semantic::build`]), not from Chromium's accessibility tree,
/// which costs as much as the whole document however few nodes are shown.
/// Elements the DOM rules leave unnamed in view are still named by Chromium
/// (one `getPartialAXTree` each, as for the element index).
pub async fn capture_semantic(
    tab: &sightline_browser::Tab,
    screenshot: bool,
    dom_node_limit: Option<usize>,
    viewport: bool,
) -> Result<(sightline_browser::Captured, SemanticTree), sightline_browser::BrowserError> {
    // A node limit is over the whole document.
    let semantic_walk = viewport && dom_node_limit.is_none();
    let mut captured = tab
        .capture_with(CaptureOptions { screenshot, whole_document: true, semantic_walk, ..CaptureOptions::default() })
        .await?;
    let mut opts = SemanticOptions::default();
    if let Some(l) = dom_node_limit {
        opts.dom_node_limit = l;
    }
    let mut tree = semantic::build(&mut captured.view, opts);
    if let Some(far) = captured.far {
        tree.far = far;
    }
    Ok((captured, tree))
}

/// Serve a snapshot request for one tab. Returns the snapshot and a screenshot (base64) if asked.
pub async fn get(session: &mut Session, tab_id: &TabId, req: Request) -> Result<(Snapshot, Option<String>), ToolError> {
    if let Some(token) = &req.continuation {
        if req.query.is_some() || req.scope_ref.is_some() {
            return Err(ToolError::invalid("continuation cannot be combined with query or scope_ref"));
        }
        return Ok((Snapshot::Semantic(Box::new(continue_snapshot(session, tab_id, token)?)), None));
    }
    if req.changes {
        let (changes, screenshot) = crate::changes::get(session, tab_id, req).await?;
        return Ok((Snapshot::Semantic(Box::new(changes)), screenshot));
    }
    let budget = req.node_budget;
    let tab = session.tab_by_id(tab_id)?.tab.clone();
    // A scope_ref names a node of the tab's current snapshot.
    let scope_target = match &req.scope_ref {
        Some(r) => {
            let RefId { snapshot: snap, index: n } = parse_ref(r)?;
            let stored = session.snapshot(snap)?;
            if stored.tab_id != *tab_id {
                return Err(ToolError::invalid(format!("ref {r} belongs to another tab")));
            }
            if stored.tree.is_none() {
                return Err(ToolError::invalid("scope_ref needs a semantic_v2 ref"));
            }
            let node = stored
                .node_of_ref(n)
                .ok_or_else(|| ToolError::new(ToolCode::SnapshotNotFound, format!("no ref {r}")))?;
            Some((node.frame, node.backend_node_id))
        }
        None => None,
    };
    let semantic = req.format == Format::SemanticV2;
    let (mut captured, tree) = if semantic {
        let viewport = req.query.is_none() && scope_target.is_none();
        let (c, t) = capture_semantic(&tab, req.screenshot, req.dom_node_limit, viewport).await?;
        (c, Some(Arc::new(t)))
    } else {
        // Refs reach beyond the viewport.
        let opts = CaptureOptions { screenshot: req.screenshot, whole_document: true, ..CaptureOptions::default() };
        (tab.capture_with(opts).await?, None)
    };
    let screenshot = captured.screenshot.take();
    let id = store(session, &tab, tab_id, req.format, captured, tree.clone(), None)?;
    let Some(tree) = tree else {
        return Ok((Snapshot::DomRefs(Box::new(dom_refs_response(session, id, tab_id, budget))), screenshot));
    };
    let scope = match (&req.query, scope_target) {
        (Some(q), _) => Scope::Query(q.clone()),
        (None, Some((frame, backend))) => {
            let i =
                tree.nodes.iter().position(|s| s.frame == frame && s.backend_node_id == backend).ok_or_else(|| {
                    ToolError::new(
                        crate::error::ToolCode::SnapshotNotFound,
                        "the scope_ref node is no longer in the page",
                    )
                })?;
            Scope::Subtree(i)
        }
        (None, None) => Scope::Viewport,
    };
    let Plan { ranked, omitted, scope } = semantic::plan(&tree, &scope);
    let total = ranked.len();
    let semantic = semantic_response(session, id, tab_id, ranked, omitted, scope, budget, total);
    Ok((Snapshot::Semantic(Box::new(semantic)), screenshot))
}

/// A whole-document semantic_v2 snapshot of the tab, stored like any other (its
/// refs are ref `p<id>:<node index + 1>`), for `run`'s `find` and `expect`.
pub async fn take_tree(session: &mut Session, tab_id: &TabId) -> Result<(SnapshotId, Arc<SemanticTree>), ToolError> {
    let tab = session.tab_by_id(tab_id)?.tab.clone();
    let (captured, tree) = capture_semantic(&tab, false, None, false).await?;
    let tree = Arc::new(tree);
    let id = store(session, &tab, tab_id, Format::SemanticV2, captured, Some(tree.clone()), None)?;
    Ok((id, tree))
}

/// Store a new snapshot of a tab, retiring the older ones; returns its id.
pub(crate) fn store(
    session: &mut Session,
    tab: &sightline_browser::Tab,
    tab_id: &TabId,
    format: Format,
    captured: sightline_browser::Captured,
    tree: Option<Arc<SemanticTree>>,
    numbering: Option<Arc<sightline_page::delta::Numbering>>,
) -> Result<SnapshotId, ToolError> {
    let id = session.ids.snapshot();
    session.retire_tab_snapshots(tab_id, Rule::NewerSnapshot);
    let frame_generations: HashMap<FrameId, u64> = captured
        .view
        .frame_ids()
        .map(|f| {
            let f = FrameId(f.to_string());
            let generation = tab.frame_generation(&f);
            (f, generation)
        })
        .collect();
    session.snapshots.insert(
        id,
        Stored {
            id,
            tab_id: tab_id.clone(),
            target_generation: session.generation,
            format,
            navigations: tab.navigation_count(),
            frame_generations,
            captured: Arc::new(captured),
            tree,
            numbering,
        },
    );
    if let Some(entry) = session.tab_entry_mut(tab_id) {
        entry.latest_snapshot = Some(id);
    }
    Ok(id)
}

fn continue_snapshot(session: &mut Session, tab_id: &TabId, token: &str) -> Result<SemanticSnapshot, ToolError> {
    // A token that is no continuation id was issued by no session.
    let typed = token.parse::<ContinuationId>().ok();
    if let Some(rule) = typed.clone().and_then(|t| session.tombstones.get(t)) {
        return Err(ToolError::expired(&format!("continuation {token}"), *rule));
    }
    let Some((id, cont)) = typed.as_ref().and_then(|t| session.continuations.get(t).map(|c| (t.clone(), c))) else {
        let ours = typed.is_some_and(|t| t.salt() == session.ids.salt);
        return Err(if ours {
            ToolError::new(ToolCode::SnapshotNotFound, format!("no continuation {token}"))
        } else {
            ToolError::expired(&format!("continuation {token}"), Rule::ContinuationForeign)
        });
    };
    if cont.tab_id != *tab_id || cont.target_generation != session.generation {
        return Err(ToolError::expired(&format!("continuation {token}"), Rule::ContinuationForeign));
    }
    let snap = cont.snapshot;
    session.snapshot(snap)?;
    let cont = session.continuations.remove(&id).expect("present");
    session.tombstones.insert(id, Rule::ContinuationUsed);
    if let Some(rest) = cont.changes {
        return Ok(crate::changes::page(session, snap, tab_id, &rest, cont.node_budget));
    }
    Ok(semantic_response(
        session,
        snap,
        tab_id,
        cont.remaining,
        cont.omitted,
        cont.scope,
        cont.node_budget,
        cont.total_nodes,
    ))
}

fn dom_refs_response(session: &Session, id: SnapshotId, tab_id: &TabId, budget: usize) -> DomRefsSnapshot {
    let stored = session.snapshots.get(&id).expect("stored");
    let view = &stored.captured.view;
    let refs: Vec<DomRef> = view
        .elements
        .iter()
        .take(budget)
        .map(|e| {
            let d = &e.descriptor;
            DomRef {
                reference: id.at(e.index.get()),
                tag: d.tag.clone(),
                role: d.role.as_ref().map(|r| r.as_str().to_string()),
                name: e.label.clone(),
                text: d.text_content.clone(),
                value: d.value.clone(),
                href: d.href.clone(),
                checked: d.checked,
                disabled: e.disabled,
            }
        })
        .collect();
    DomRefsSnapshot {
        status: Status::Ok,
        mode: Mode::Snapshot,
        target_id: session.target_id.clone(),
        tab_id: tab_id.clone(),
        snapshot: DomRefsMeta { id, format: DomRefsV1::DomRefsV1 },
        page: PageInfo { url: view.url.clone(), title: view.title.clone() },
        refs,
        truncated: view.elements.len() > budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_parse_to_one_element_index_type_and_never_wrap() {
        let r = parse_ref("p3:4").unwrap();
        assert_eq!((r.snapshot.to_string().as_str(), r.index.get()), ("p3", 4));
        assert_eq!(parse_ref("p3:4294967295").unwrap().index.get(), u32::MAX);
        // 2^32 + 1 would be element 1 if it wrapped.
        let e = parse_ref("p3:4294967297").unwrap_err();
        assert_eq!(e.code, ToolCode::SnapshotNotFound, "{e:?}");
        assert_eq!(e.message, "no ref p3:4294967297: 4294967297 is past the largest element index (4294967295)");
        for bad in ["p3:0", "p3:x", "p3", "q3:4", "p3:-1"] {
            assert_eq!(parse_ref(bad).unwrap_err().code, ToolCode::InvalidParams, "{bad}");
        }
    }
}
