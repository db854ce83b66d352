//! The viewport capture: what the element-index state reads, at the cost of
//! what is in view.
//!
//! `DOMSnapshot.captureSnapshot` serializes the whole document with its layout
//! and styles, which on a page of 20,000 elements costs half a second however
//! little of it is in view. The walk (`walk.js`, in the isolated world) visits
//! the document once reading boxes, and returns a snapshot of the same shape
//! holding what the viewport shows and its context, so the same pure page model
//! reads it. Backend ids are asked for its elements alone (`DOM.describeNode`;
//! a small subtree kept whole or nearly is one call of depth -1), and only
//! once per element: the next walk is handed the ids of the last one's kept
//! elements ([`Learned`]), which the walk remembers per element (a backend id
//! never changes while its node lives); when it knows every kept element's, it
//! returns them with the JSON and nothing is described,
//! click listeners come from the probe (the snapshot reports them, a script in
//! another world cannot see them). The walk gives up (`None`) on what it cannot
//! read as the full snapshot would — a frame in view, generated content other
//! than text, too many nodes, a fixed box in view inside rows the search of a
//! long run skipped — and the caller takes the full snapshot then.

use futures_util::future::join_all;
use serde::Deserialize;
use sightline_cdp::protocol::dom::DescribeNode;
use sightline_cdp::protocol::runtime::{Evaluate, GetProperties};
use sightline_cdp::SessionId;
use sightline_page::semantic::{count_tables, FarCounts, SemanticOptions};
use sightline_page::{DocumentSnapshot, Snapshot, COMPUTED_STYLES};

use crate::world::WorldCell;
use crate::{BrowserError, Tab};

const WALK: &str = include_str!("walk.js");
const FAR: &str = include_str!("far.js");
/// Where a document's isolated world keeps the walk and the count once installed.
const INSTALLED_WALK: &str = "globalThis.__sightlineWalk";
const INSTALLED_FAR: &str = "globalThis.__sightlineFar";

/// Below this many elements in a document, its full snapshot is cheaper than
/// the walk (measured with `sightline bench`: about 5 ms against 40 on a page
/// of 200 elements, 80 against 60 on one of 4,000).
pub const WALK_FROM: u64 = 1500;

/// Below this many elements a main document counts as small: its next capture
/// sends the size check and the full snapshot together (a margin under
/// [`WALK_FROM`], so a page growing towards it is walked in time).
const SMALL_DOCUMENT: u64 = WALK_FROM / 2;

/// Past this many click-listener elements in view, resolving them one by one
/// costs more than the full snapshot.
const CLICK_TARGETS_MAX: u64 = 200;

#[derive(Deserialize)]
struct Walked {
    documents: Vec<DocumentSnapshot>,
    strings: Vec<String>,
    /// Node indices of the elements kept, in the order the walk returns them.
    kept: Vec<usize>,
    /// For each element returned after the JSON: pairs of (an element's
    /// position in that element's subtree, tree order, 0 for itself; its
    /// position in `kept`). More than one pair: describe the whole subtree.
    describe: Vec<Vec<(usize, usize)>>,
    /// Which call of the walk in this document this was ([`Learned::gen`]).
    #[serde(default)]
    gen: u64,
    /// Every kept element's backend id, in `kept` order, when the walk knew
    /// them all (then nothing is returned to describe).
    #[serde(default)]
    ids: Option<Vec<i64>>,
    /// semantic_v2's count of what the walk left out (`far.js`), when asked.
    #[serde(default)]
    far: Option<FarCounts>,
    #[serde(default)]
    timing: serde_json::Value,
}

/// The backend ids of one walk's kept elements, in its `kept` order, handed
/// to the next walk in the same session: the walk keeps the elements of its
/// last call under `gen` (a number its document's walk counts from a random
/// start), and takes the ids only when `gen` is still that call's.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Learned {
    gen: u64,
    ids: Vec<i64>,
}

/// The most sessions of one tab whose last walk's ids are kept.
const LEARNED_SESSIONS: usize = 16;

/// The walked document's node name of node `k`.
fn node_name(walked: &Walked, k: usize) -> Option<&str> {
    let doc = walked.documents.first()?;
    let s = *doc.nodes.node_name.get(k)?;
    walked.strings.get(usize::try_from(s).ok()?).map(String::as_str)
}

impl Tab {
    /// Whether the main document, as it is now, was last seen well under the
    /// walk's threshold ([`SMALL_DOCUMENT`]) and is settled.
    /// Not while the main frame loads or is asked to navigate, nor after missed
    /// events: a document whose commit is held back (the page being left runs
    /// its handlers) is still counted as the old one, and only the size check
    /// sent alone waits for the new one.
    pub(crate) fn known_small(&self) -> bool {
        let st = self.state.lock().unwrap();
        let l = &st.loading;
        l.small_document == Some(l.navigations) && !l.main_loading && l.nav_requested.is_none() && !l.stale
    }

    /// How many captures sent the size check together with the full snapshot
    /// (a settled main document last seen small).
    pub fn size_checks_with_snapshot(&self) -> u64 {
        self.state.lock().unwrap().loading.pipelined
    }

    /// The main document's element count, as a capture saw it (the size check,
    /// or a full snapshot's main document).
    pub(crate) fn note_size(&self, elements: u64) {
        let mut st = self.state.lock().unwrap();
        st.loading.small_document = (elements < SMALL_DOCUMENT).then_some(st.loading.navigations);
    }

    /// How many walks knew every kept element's backend id from the walks
    /// before (nothing was described).
    pub fn walks_with_ids_known(&self) -> u64 {
        self.walks_ids_known.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The viewport snapshot of one target, or `None` where only the full
    /// snapshot gives what the model reads.
    /// Unless `small_pages_too`, a page of fewer than [`WALK_FROM`] elements
    /// gets `None`: its full snapshot costs less than the walk's fixed calls.
    /// With `semantic`, the walk keeps semantic_v2's near margin too and counts
    /// the semantic nodes it left out (`far.js`); `None` where it cannot.
    pub(crate) async fn walk(
        &self,
        session: &SessionId,
        small_pages_too: bool,
        semantic: bool,
        world: &WorldCell,
    ) -> Result<Option<(Snapshot, Option<FarCounts>)>, BrowserError> {
        let Some(frame) = self.frame_of_session(session) else { return Ok(None) };
        let t0 = std::time::Instant::now();
        let margin = if semantic { SemanticOptions::default().near_margin } else { 0.0 };
        // Which elements the page's own world saw get listeners (the count reads
        // them as evidence) and the isolated world the walk runs in are asked for
        // together with the click listeners (one round trip, not three in turn);
        // the renderer answers them in order.
        const ORDINALS: &str = "window.__sightline ? window.__sightline.listenerOrdinals() : null";
        let ordinals = async {
            if semantic {
                Some(self.cdp(session, &Evaluate::new(ORDINALS).by_value()).await)
            } else {
                None
            }
        };
        // Click listeners first: too many in view and the walk is not worth it.
        let (clicks, ords, world) = tokio::join!(
            self.click_listeners(session, small_pages_too, margin),
            ordinals,
            self.world_once(session, world)
        );
        let Some(clicks) = clicks else { return Ok(None) };
        let t_clicks = t0.elapsed();
        let Some(world) = world else { return Ok(None) };
        let context_id = Some(world);
        let mode = match ords {
            Some(ords) => {
                let Some(ords) = ords?.result.value.filter(|v| v.is_array()) else { return Ok(None) };
                serde_json::json!({ "margin": margin, "tables": count_tables(), "listeners": ords })
            }
            None => serde_json::Value::Null,
        };
        let learned = self.walked.lock().unwrap().remove(session);
        let args = serde_json::to_string(&(frame.0.as_str(), COMPUTED_STYLES, mode))
            .map_err(|e| BrowserError::Unexpected(e.to_string()))?;
        let learned = serde_json::to_string(&learned).map_err(|e| BrowserError::Unexpected(e.to_string()))?;
        // The walk and the count are installed once per document in the isolated
        // world and called from then on: the same function objects keep what the
        // JavaScript engine learned and compiled on earlier calls (a fresh copy
        // per call runs its loops cold, a third slower on a big page).
        let far = if semantic { INSTALLED_FAR } else { "null" };
        let call = format!("{INSTALLED_WALK} ? {INSTALLED_WALK}(...{args}, {far}, {learned}) : 'install'");
        // One call for the snapshot and the kept elements: the array's first item
        // is the JSON, the others the elements, released with their group.
        const GROUP: &str = "sightline-walk";
        let mut reply =
            self.eval_isolated(session, Evaluate { context_id, ..Evaluate::new(&call).in_group(GROUP) }).await?;
        if reply.result.value.as_ref().and_then(|v| v.as_str()) == Some("install") {
            let install = format!("{INSTALLED_WALK} = ({WALK}), {INSTALLED_FAR} = ({FAR}), {call}");
            reply =
                self.eval_isolated(session, Evaluate { context_id, ..Evaluate::new(&install).in_group(GROUP) }).await?;
        }
        let array = match (reply.exception_details, reply.result.object_id, reply.result.value) {
            // Every kept element's id known: the JSON alone, nothing to describe.
            (None, None, Some(serde_json::Value::String(json))) => {
                return self.walked_whole(session, &json, clicks, semantic);
            }
            (None, Some(array), _) => array,
            (ex, _, _) => {
                tracing::debug!(?ex, "no walk (it gave up or threw); taking the full snapshot");
                self.release(session, GROUP);
                return Ok(None);
            }
        };
        let read = async {
            let props = self.cdp(session, &GetProperties { object_id: &array, own_properties: true }).await?;
            let mut json = None;
            let mut objects: Vec<(usize, String)> = Vec::new();
            for p in props.result {
                let (Ok(i), Some(v)) = (p.name.parse::<usize>(), p.value) else { continue };
                match (i, v.value, v.object_id) {
                    (0, Some(serde_json::Value::String(s)), _) => json = Some(s),
                    (i, _, Some(o)) if i > 0 => objects.push((i, o)),
                    _ => {}
                }
            }
            let Some(json) = json else { return Ok(None) };
            let walked: Walked =
                serde_json::from_str(&json).map_err(|e| BrowserError::Unexpected(format!("walk: {e}")))?;
            objects.sort_by_key(|o| o.0);
            if objects.len() != walked.describe.len() {
                return Ok(None);
            }
            // A small subtree kept whole is one call, not one per element.
            let mut ids: Vec<Option<i64>> = vec![None; walked.kept.len()];
            let jobs: Vec<_> = objects.iter().map(|(_, o)| o).zip(&walked.describe).collect();
            for chunk in jobs.chunks(128) {
                let got = join_all(chunk.iter().map(|(o, pairs)| async move {
                    let call = if pairs.len() > 1 { DescribeNode::subtree(o) } else { DescribeNode::object(o) };
                    self.cdp(session, &call).await.ok()
                }))
                .await;
                for ((_, pairs), reply) in chunk.iter().zip(got) {
                    let Some(reply) = reply else { return Ok(None) };
                    let elements = reply.node.elements_in_order();
                    for &(at, p) in pairs.iter() {
                        let (Some(node), Some(slot)) = (elements.get(at), ids.get_mut(p)) else { return Ok(None) };
                        // The subtree read back must be the one the walk saw.
                        let name = walked.kept.get(p).and_then(|&k| node_name(&walked, k));
                        if !name.is_some_and(|n| n.eq_ignore_ascii_case(&node.node_name)) {
                            tracing::debug!(at, expected = ?name, got = %node.node_name, "described subtree differs");
                            return Ok(None);
                        }
                        *slot = Some(node.backend_node_id.0);
                    }
                }
            }
            Ok::<_, BrowserError>(Some((walked, ids)))
        };
        let read = read.await;
        self.release(session, GROUP);
        let Some((walked, ids)) = read? else { return Ok(None) };
        tracing::debug!(clicks = ?t_clicks, walk_and_ids = ?t0.elapsed(), kept = walked.kept.len(), timing = %walked.timing, "walked");
        let Some(ids) = ids.into_iter().collect::<Option<Vec<i64>>>() else { return Ok(None) };
        self.take_walked(session, walked, ids, clicks, semantic, true)
    }

    /// A walk that knew every kept element's backend id: its JSON alone.
    fn walked_whole(
        &self,
        session: &SessionId,
        json: &str,
        clicks: std::collections::HashSet<i64>,
        semantic: bool,
    ) -> Result<Option<(Snapshot, Option<FarCounts>)>, BrowserError> {
        let mut walked: Walked =
            serde_json::from_str(json).map_err(|e| BrowserError::Unexpected(format!("walk: {e}")))?;
        let Some(ids) = walked.ids.take() else { return Ok(None) };
        self.walks_ids_known.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(kept = walked.kept.len(), timing = %walked.timing, "walked, every id known");
        self.take_walked(session, walked, ids, clicks, semantic, false)
    }

    /// The snapshot of a walk whose kept elements' backend ids are `ids`; with
    /// `described` (the walk did not know them all), the ids are kept for the
    /// session's next walk to learn.
    fn take_walked(
        &self,
        session: &SessionId,
        walked: Walked,
        ids: Vec<i64>,
        clicks: std::collections::HashSet<i64>,
        semantic: bool,
        described: bool,
    ) -> Result<Option<(Snapshot, Option<FarCounts>)>, BrowserError> {
        if semantic && walked.far.is_none() {
            return Ok(None);
        }
        if ids.len() != walked.kept.len() {
            return Ok(None);
        }
        if described {
            let mut learned = self.walked.lock().unwrap();
            // Sessions of frames gone since leave theirs behind: a bound, not a leak.
            if learned.len() >= LEARNED_SESSIONS {
                learned.clear();
            }
            learned.insert(session.clone(), Learned { gen: walked.gen, ids: ids.clone() });
        }
        let far = walked.far;
        let mut snap = Snapshot { documents: walked.documents, strings: walked.strings };
        let Some(doc) = snap.documents.first_mut() else { return Ok(None) };
        for (&k, id) in walked.kept.iter().zip(ids) {
            if let Some(slot) = doc.nodes.backend_node_id.get_mut(k) {
                *slot = id;
            }
            if clicks.contains(&id) && !doc.nodes.is_clickable.index.contains(&k) {
                doc.nodes.is_clickable.index.push(k);
            }
        }
        Ok(Some((snap, far)))
    }

    /// Backend ids of the elements in view with click, mousedown, mouseup or
    /// DOMActivate listeners (as the probe saw them added), or `None` when there
    /// are too many to resolve.
    async fn click_listeners(
        &self,
        session: &SessionId,
        small_pages_too: bool,
        margin: f64,
    ) -> Option<std::collections::HashSet<i64>> {
        // The page's own world can misreport either number; the only effect is
        // which of two equal captures is taken.
        const COUNT: &str =
            "window.__sightline ? [window.__sightline.clickCount(), document.getElementsByTagName('*').length] : null";
        let counts = self.cdp(session, &Evaluate::new(COUNT).by_value()).await.ok()?.result.value?;
        // No probe in this document (it was not installed in time): its listeners are unknown.
        let counts = counts.as_array()?;
        let count = counts.first()?.as_i64()?;
        let elements = counts.get(1)?.as_u64()?;
        tracing::debug!(click_listeners = count, elements, "before the walk");
        if *session == self.session {
            self.note_size(elements);
        }
        if elements < WALK_FROM && !small_pages_too {
            return None;
        }
        if count == 0 {
            return Some(Default::default());
        }
        if count as u64 > CLICK_TARGETS_MAX * 8 {
            return None;
        }
        const GROUP: &str = "sightline-click";
        let read = format!("window.__sightline.clickElementsInView({margin})");
        let list = self.cdp(session, &Evaluate::new(&read).in_group(GROUP)).await;
        let array = list.ok()?.result.object_id?;
        let props = self.cdp(session, &GetProperties { object_id: &array, own_properties: true }).await.ok()?;
        let objects: Vec<String> = props
            .result
            .into_iter()
            .filter(|p| p.name.parse::<u32>().is_ok())
            .filter_map(|p| p.value?.object_id)
            .collect();
        if objects.len() as u64 > CLICK_TARGETS_MAX {
            tracing::debug!(in_view = objects.len(), "too many click-listener elements in view for the walk");
            self.release(session, GROUP);
            return None;
        }
        let ids = join_all(objects.iter().map(|o| async move {
            self.cdp(session, &DescribeNode::object(o)).await.ok().map(|d| d.node.backend_node_id.0)
        }))
        .await;
        self.release(session, GROUP);
        Some(ids.into_iter().flatten().collect())
    }
}
