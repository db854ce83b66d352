//! The viewport capture: what the element-index state reads, at the cost of
//! what is in view.
//!
//! `DOMSnapshot.captureSnapshot` serializes the whole document with its layout
//! and styles, which on a page of 20,000 elements costs half a second however
//! little of it is in view. The walk (`walk.js`, in the isolated world) visits
//! the document once reading boxes, and returns a snapshot of the same shape
//! holding what the viewport shows and its context, so the same pure page model
//! reads it. Backend ids are asked for its elements alone (`DOM.describeNode`),
//! click listeners come from the probe (the snapshot reports them, a script in
//! another world cannot see them). The walk gives up (`None`) on what it cannot
//! read as the full snapshot would — a frame in view, generated content other
//! than text, too many nodes — and the caller takes the full snapshot then.

use futures_util::future::join_all;
use serde::Deserialize;
use sightline_cdp::protocol::dom::DescribeNode;
use sightline_cdp::protocol::runtime::{Evaluate, GetProperties, ReleaseObjectGroup};
use sightline_cdp::SessionId;
use sightline_page::{DocumentSnapshot, Snapshot, COMPUTED_STYLES};

use crate::{BrowserError, Tab};

const WALK: &str = include_str!("walk.js");

/// Past this many click-listener elements in view, resolving them one by one
/// costs more than the full snapshot.
const CLICK_TARGETS_MAX: u64 = 200;

#[derive(Deserialize)]
struct Walked {
    documents: Vec<DocumentSnapshot>,
    strings: Vec<String>,
    /// Node indices of the elements kept, in the order of `__sightlineKept`.
    kept: Vec<usize>,
    #[serde(default)]
    timing: serde_json::Value,
}

impl Tab {
    /// The viewport snapshot of one target, or `None` where only the full
    /// snapshot gives what the model reads.
    pub(crate) async fn walk(&self, session: &SessionId) -> Result<Option<Snapshot>, BrowserError> {
        let Some(frame) = self.frame_of_session(session) else { return Ok(None) };
        let t0 = std::time::Instant::now();
        // Click listeners first: too many in view and the walk is not worth it.
        let clicks = self.click_listeners(session).await;
        let Some(clicks) = clicks else { return Ok(None) };
        let t_clicks = t0.elapsed();
        let args = serde_json::to_string(&(frame.0.as_str(), COMPUTED_STYLES))
            .map_err(|e| BrowserError::Unexpected(e.to_string()))?;
        let expression = format!("({WALK})(...{args})");
        let reply = self.eval_isolated(session, Evaluate::new(&expression).by_value()).await?;
        if let Some(ex) = reply.exception_details {
            tracing::debug!(?ex, "walk threw; taking the full snapshot");
            return Ok(None);
        }
        let Some(serde_json::Value::String(json)) = reply.result.value else { return Ok(None) };
        let walked: Walked =
            serde_json::from_str(&json).map_err(|e| BrowserError::Unexpected(format!("walk: {e}")))?;
        drop(json);
        let t_walk = t0.elapsed();
        let mut snap = Snapshot { documents: walked.documents, strings: walked.strings };
        // Backend ids of the kept elements.
        const GROUP: &str = "sightline-walk";
        let array = self.eval_isolated(session, Evaluate::new("globalThis.__sightlineKept").in_group(GROUP)).await?;
        let array = array.result.object_id;
        let Some(array) = array else { return Ok(None) };
        let props = self.cdp(session, &GetProperties { object_id: &array, own_properties: true }).await?;
        let mut objects: Vec<(usize, String)> = props
            .result
            .into_iter()
            .filter_map(|p| Some((p.name.parse::<usize>().ok()?, p.value?.object_id?)))
            .collect();
        objects.sort_by_key(|o| o.0);
        let mut ids: Vec<Option<i64>> = Vec::with_capacity(objects.len());
        for chunk in objects.chunks(128) {
            let got = join_all(chunk.iter().map(|(_, o)| async move {
                self.cdp(session, &DescribeNode::object(o)).await.ok().map(|d| d.node.backend_node_id.0)
            }))
            .await;
            ids.extend(got);
        }
        let _ = self.cdp(session, &ReleaseObjectGroup { object_group: GROUP }).await;
        tracing::debug!(clicks = ?t_clicks, walk = ?t_walk, ids = ?t0.elapsed(), kept = walked.kept.len(), timing = %walked.timing, "walked");
        let Some(doc) = snap.documents.first_mut() else { return Ok(None) };
        if ids.len() != walked.kept.len() {
            return Ok(None);
        }
        for (&k, id) in walked.kept.iter().zip(ids) {
            let Some(id) = id else { return Ok(None) };
            if let Some(slot) = doc.nodes.backend_node_id.get_mut(k) {
                *slot = id;
            }
            if clicks.contains(&id) && !doc.nodes.is_clickable.index.contains(&k) {
                doc.nodes.is_clickable.index.push(k);
            }
        }
        Ok(Some(snap))
    }

    /// Backend ids of the elements in view with click, mousedown, mouseup or
    /// DOMActivate listeners (as the probe saw them added), or `None` when there
    /// are too many to resolve.
    async fn click_listeners(&self, session: &SessionId) -> Option<std::collections::HashSet<i64>> {
        const COUNT: &str = "window.__sightline ? window.__sightline.clickCount() : -1";
        let count = self.cdp(session, &Evaluate::new(COUNT).by_value()).await.ok()?.result.value?.as_i64()?;
        if count < 0 {
            // No probe in this document (it was not installed in time): its listeners are unknown.
            return None;
        }
        if count == 0 {
            return Some(Default::default());
        }
        if count as u64 > CLICK_TARGETS_MAX * 8 {
            return None;
        }
        const GROUP: &str = "sightline-click";
        let list = self.cdp(session, &Evaluate::new("window.__sightline.clickElementsInView()").in_group(GROUP)).await;
        let array = list.ok()?.result.object_id?;
        let props = self.cdp(session, &GetProperties { object_id: &array, own_properties: true }).await.ok()?;
        let objects: Vec<String> = props
            .result
            .into_iter()
            .filter(|p| p.name.parse::<u32>().is_ok())
            .filter_map(|p| p.value?.object_id)
            .collect();
        if objects.len() as u64 > CLICK_TARGETS_MAX {
            let _ = self.cdp(session, &ReleaseObjectGroup { object_group: GROUP }).await;
            return None;
        }
        let ids = join_all(objects.iter().map(|o| async move {
            self.cdp(session, &DescribeNode::object(o)).await.ok().map(|d| d.node.backend_node_id.0)
        }))
        .await;
        let _ = self.cdp(session, &ReleaseObjectGroup { object_group: GROUP }).await;
        Some(ids.into_iter().flatten().collect())
    }
}
