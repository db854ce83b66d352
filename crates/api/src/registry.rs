//! Driver sessions and their capability namespace: target generations, tabs,
//! snapshots, refs and continuations, with the seed's lifetime rules.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use sightline_browser::{Browser, BrowserContextId, BrowserOptions, Captured, FrameId, Tab, TabOptions};
use sightline_page::semantic::SemanticTree;
use tokio::sync::Mutex;

use crate::error::{Rule, ToolError};
use crate::ids::{ContinuationId, Ids, SnapshotId, TabId, TargetId};
use crate::Env;

/// The snapshot formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    SemanticV2,
    DomRefsV1,
}

/// A stored snapshot: what its refs and continuations resolve against.
pub struct Stored {
    pub id: SnapshotId,
    pub tab_id: TabId,
    pub target_generation: u64,
    pub format: Format,
    /// Tab navigation count when taken.
    pub navigations: u64,
    /// Per frame id: document generation when taken (frame loader identity).
    pub frame_generations: HashMap<FrameId, u64>,
    pub captured: Arc<Captured>,
    pub tree: Option<Arc<SemanticTree>>,
    /// Ref numbers carried from the previous snapshot by a change read; `None` = `index + 1`.
    pub numbering: Option<Arc<sightline_page::delta::Numbering>>,
}

impl Stored {
    /// The ref number of semantic node `i`.
    pub fn ref_number(&self, i: usize) -> u32 {
        self.numbering.as_ref().map_or(i as u32 + 1, |n| n.number(i))
    }

    /// The semantic node of a ref number.
    pub fn node_of_ref(&self, n: sightline_page::ElementIndex) -> Option<&sightline_page::semantic::SemNode> {
        let tree = self.tree.as_ref()?;
        match &self.numbering {
            None => n.of(&tree.nodes),
            Some(numbering) => numbering.index(n.get()).and_then(|i| tree.nodes.get(i)),
        }
    }
}

pub struct Continuation {
    pub snapshot: SnapshotId,
    pub tab_id: TabId,
    pub target_generation: u64,
    pub remaining: Vec<usize>,
    pub node_budget: usize,
    pub total_nodes: usize,
    pub omitted: sightline_page::semantic::Omitted,
    pub scope: &'static str,
    /// The rest of a change read (then `remaining` is unused).
    pub changes: Option<Arc<crate::changes::Rest>>,
}

pub struct TabEntry {
    pub id: TabId,
    pub tab: Arc<Tab>,
    pub opener: Option<TabId>,
    pub env: Option<Env>,
    /// The newest snapshot of this tab.
    pub latest_snapshot: Option<SnapshotId>,
}

pub struct Session {
    pub name: String,
    pub ids: Ids,
    pub browser: Browser,
    pub owns_browser: bool,
    pub context: BrowserContextId,
    pub target_id: TargetId,
    pub generation: u64,
    pub retired_targets: HashSet<TargetId>,
    pub tabs: Vec<TabEntry>,
    pub closed_tabs: HashSet<TabId>,
    pub snapshots: HashMap<SnapshotId, Stored>,
    /// Snapshot ids and continuation tokens no longer valid, with the rule that retired them.
    pub tombstones: Tombstones,
    pub continuations: HashMap<ContinuationId, Continuation>,
    /// The egress proxy's refusal count at this session's last snapshot.
    pub egress_mark: u64,
    /// The downloads of this session's browser context.
    pub downloads: Option<sightline_browser::Downloads>,
    /// Origins whose localStorage the session was started with (a save reads them too).
    pub restored_origins: Vec<String>,
    /// What the session did, for `get_script` (the tabs' element-index steps join it when read).
    pub recorder: crate::record::Recorder,
}

/// The most retired ids a session remembers with their rule. Older ones are
/// forgotten first: using one then answers `snapshot_not_found` instead of
/// `capability_expired` (ids are never reused, so it is still refused).
pub const MAX_TOMBSTONES: usize = 4096;

/// A retired id: a snapshot or a continuation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Retired {
    Snapshot(SnapshotId),
    Continuation(ContinuationId),
}

impl From<SnapshotId> for Retired {
    fn from(id: SnapshotId) -> Retired {
        Retired::Snapshot(id)
    }
}

impl From<ContinuationId> for Retired {
    fn from(id: ContinuationId) -> Retired {
        Retired::Continuation(id)
    }
}

/// Retired ids and the rule that retired each, the oldest forgotten past [`MAX_TOMBSTONES`].
#[derive(Default)]
pub struct Tombstones {
    rules: HashMap<Retired, Rule>,
    order: std::collections::VecDeque<Retired>,
}

impl Tombstones {
    pub fn insert(&mut self, id: impl Into<Retired>, rule: Rule) {
        let id = id.into();
        if self.rules.insert(id.clone(), rule).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > MAX_TOMBSTONES {
            if let Some(old) = self.order.pop_front() {
                self.rules.remove(&old);
            }
        }
    }

    pub fn get(&self, id: impl Into<Retired>) -> Option<&Rule> {
        self.rules.get(&id.into())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.rules.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tombstones_are_bounded_and_forget_the_oldest() {
        let mut t = Tombstones::default();
        let p = |i: usize| format!("p{i}").parse::<SnapshotId>().unwrap();
        for i in 0..MAX_TOMBSTONES + 10 {
            t.insert(p(i), Rule::NewerSnapshot);
        }
        t.insert(p(20), Rule::Navigation); // re-insert: no duplicate in the order
        assert_eq!(t.len(), MAX_TOMBSTONES);
        assert!(t.get(p(0)).is_none() && t.get(p(9)).is_none());
        assert_eq!(t.get(p(20)), Some(&Rule::Navigation));
        assert!(t.get(p(MAX_TOMBSTONES + 9)).is_some());
    }
}

/// Options every session is created with.
#[derive(Debug, Clone, Default)]
pub struct ApiOptions {
    pub browser: BrowserOptions,
    pub tab: TabOptions,
    /// Cookies and localStorage every new session starts from (`--storage-state`).
    pub storage_state: Option<Arc<sightline_browser::StorageState>>,
}

/// All sessions of one server process.
#[derive(Default)]
pub struct Registry {
    pub sessions: Mutex<HashMap<String, Arc<Mutex<Session>>>>,
    pub ended: std::sync::Mutex<HashSet<String>>,
    pub opts: ApiOptions,
    /// The egress policy every navigation is checked against.
    pub egress: Option<Arc<sightline_policy::Egress>>,
    /// Where uploads may come from and downloads go.
    pub files: crate::files::FileAccess,
    /// Each session's hand-off desk (`request_human`), beside the session and outside its lock.
    pub desks: std::sync::Mutex<HashMap<String, Arc<crate::human::Desk>>>,
    /// Where live views are served (`http://host:port`), when a front end serves them.
    pub live_base: std::sync::Mutex<Option<String>>,
}

impl Registry {
    pub fn new(opts: ApiOptions) -> Registry {
        Registry { opts, ..Default::default() }
    }

    /// The hand-off desk of a session, if it is open.
    pub fn desk_if(&self, name: &str) -> Option<Arc<crate::human::Desk>> {
        self.desks.lock().unwrap().get(name).cloned()
    }

    /// Open a session's desk (a new session; a reconnect keeps its desk).
    pub fn open_desk(&self, name: &str) {
        self.desks.lock().unwrap().entry(name.to_string()).or_default();
    }

    /// The session ended: its desk wakes its waiters and refuses its ticket.
    pub fn close_desk(&self, name: &str) {
        if let Some(d) = self.desks.lock().unwrap().remove(name) {
            d.end();
        }
    }

    pub async fn session(&self, name: &str) -> Result<Arc<Mutex<Session>>, ToolError> {
        if let Some(s) = self.sessions.lock().await.get(name) {
            return Ok(s.clone());
        }
        if self.ended.lock().unwrap().contains(name) {
            return Err(ToolError::expired(&format!("session {name:?}"), Rule::SessionEnded));
        }
        Err(ToolError::new(
            crate::error::ToolCode::SessionNotFound,
            format!("no driver session {name:?}; call bind_browser first"),
        ))
    }
}

impl Session {
    /// Move the steps the tabs' element-index environments recorded into the session's recording.
    pub fn collect_recording(&mut self) {
        for t in &mut self.tabs {
            if let Some(r) = t.env.as_mut().and_then(|e| e.recorder_mut()) {
                self.recorder.append(r);
            }
        }
    }

    /// Check a call's target id against the current generation.
    pub fn check_target(&self, target_id: &str) -> Result<(), ToolError> {
        let typed = target_id.parse::<TargetId>().ok();
        if typed.as_ref() == Some(&self.target_id) {
            if self.browser.client().is_closed() {
                return Err(ToolError::expired(&format!("target {target_id}"), Rule::TargetGeneration));
            }
            return Ok(());
        }
        if typed.is_some_and(|t| self.retired_targets.contains(&t)) {
            return Err(ToolError::expired(&format!("target {target_id}"), Rule::TargetGeneration));
        }
        Err(ToolError::new(
            crate::error::ToolCode::TargetMismatch,
            format!("target {target_id} is not bound to session {:?}", self.name),
        ))
    }

    /// The tab a wire id names (a string that is no tab id names none).
    pub fn tab(&self, tab_id: &str) -> Result<&TabEntry, ToolError> {
        match tab_id.parse::<TabId>() {
            Ok(id) => self.tab_by_id(&id),
            Err(_) => Err(ToolError::new(
                crate::error::ToolCode::TabNotFound,
                format!("no tab {tab_id} in this target; see list_tabs"),
            )),
        }
    }

    /// A tab of this session, or why it is not (closed, or never of this target).
    pub fn tab_by_id(&self, tab_id: &TabId) -> Result<&TabEntry, ToolError> {
        if self.closed_tabs.contains(tab_id) {
            return Err(ToolError::expired(&format!("tab {tab_id}"), Rule::TabClosed));
        }
        self.tabs.iter().find(|t| t.id == *tab_id).ok_or_else(|| {
            ToolError::new(
                crate::error::ToolCode::TabNotFound,
                format!("no tab {tab_id} in this target; see list_tabs"),
            )
        })
    }

    pub fn tab_mut(&mut self, tab_id: &str) -> Result<&mut TabEntry, ToolError> {
        let id = self.tab(tab_id)?.id.clone();
        Ok(self.tab_entry_mut(&id).expect("checked"))
    }

    /// The entry of a tab of this session.
    pub fn tab_entry_mut(&mut self, id: &TabId) -> Option<&mut TabEntry> {
        self.tabs.iter_mut().find(|t| t.id == *id)
    }

    /// Add a tab to the namespace.
    pub fn add_tab(&mut self, tab: Tab, opener: Option<TabId>) -> TabId {
        let id = self.ids.tab();
        self.tabs.push(TabEntry { id: id.clone(), tab: Arc::new(tab), opener, env: None, latest_snapshot: None });
        id
    }

    /// Retire every snapshot of a tab (a newer one, a navigation, a closed tab).
    pub fn retire_tab_snapshots(&mut self, tab_id: &TabId, rule: Rule) {
        let ids: Vec<SnapshotId> = self.snapshots.values().filter(|s| s.tab_id == *tab_id).map(|s| s.id).collect();
        for id in ids {
            self.snapshots.remove(&id);
            self.tombstones.insert(id, rule);
        }
        let conts: Vec<ContinuationId> =
            self.continuations.iter().filter(|(_, c)| c.tab_id == *tab_id).map(|(k, _)| k.clone()).collect();
        for c in conts {
            self.continuations.remove(&c);
            self.tombstones.insert(c, rule);
        }
    }

    /// A stored snapshot that is still valid, or the rule that retired it.
    pub fn snapshot(&mut self, id: SnapshotId) -> Result<&Stored, ToolError> {
        if let Some(rule) = self.tombstones.get(id) {
            return Err(ToolError::expired(&format!("snapshot {id}"), *rule));
        }
        let Some(s) = self.snapshots.get(&id) else {
            return Err(ToolError::new(
                crate::error::ToolCode::SnapshotNotFound,
                format!("no snapshot {id} in this session"),
            ));
        };
        if s.target_generation != self.generation {
            return Err(ToolError::expired(&format!("snapshot {id}"), Rule::TargetGeneration));
        }
        let tab_id = s.tab_id.clone();
        let navigations = s.navigations;
        let current = self.tabs.iter().find(|t| t.id == tab_id).map(|t| t.tab.navigation_count());
        match current {
            None => {
                self.retire_tab_snapshots(&tab_id, Rule::TabClosed);
                Err(ToolError::expired(&format!("snapshot {id}"), Rule::TabClosed))
            }
            Some(n) if n != navigations => {
                self.retire_tab_snapshots(&tab_id, Rule::Navigation);
                Err(ToolError::expired(&format!("snapshot {id}"), Rule::Navigation))
            }
            Some(_) => Ok(self.snapshots.get(&id).expect("present")),
        }
    }

    /// Retire everything under the current target (reconnect, replacement).
    pub fn retire_target(&mut self) {
        self.retired_targets.insert(self.target_id.clone());
        for id in self.snapshots.keys().copied().collect::<Vec<_>>() {
            self.tombstones.insert(id, Rule::TargetGeneration);
        }
        for id in self.continuations.keys().cloned().collect::<Vec<_>>() {
            self.tombstones.insert(id, Rule::TargetGeneration);
        }
        for t in &self.tabs {
            self.closed_tabs.insert(t.id.clone());
        }
        self.snapshots.clear();
        self.continuations.clear();
        self.tabs.clear();
    }
}

/// Start a browser and a session bound to it, with one blank tab; its
/// context starts from `storage` (else the options' storage state).
pub async fn bind(
    name: &str,
    opts: &ApiOptions,
    previous: Option<&mut Session>,
    storage: Option<&sightline_browser::StorageState>,
) -> Result<Session, ToolError> {
    let browser = Browser::start(&opts.browser).await.map_err(ToolError::from)?;
    let context = browser.session_context().await.map_err(ToolError::from)?;
    let storage = storage.or(opts.storage_state.as_deref());
    if let Some(state) = storage {
        browser.restore_storage(&context, state).await.map_err(ToolError::from)?;
    }
    let tab = browser.new_tab_in(&context, opts.tab.clone()).await.map_err(ToolError::from)?;
    let restored = storage.map(|s| s.origin_names()).unwrap_or_default();
    Ok(assemble(name, browser, opts.browser.connect.is_none(), context, tab, previous, restored))
}

/// A session over a browser, context and tab its caller started and keeps
/// (`sightline env --live`): the session never shuts that browser down.
pub fn adopt(name: &str, browser: Browser, context: BrowserContextId, tab: Tab) -> Session {
    assemble(name, browser, false, context, tab, None, Vec::new())
}

/// A session of one tab, carrying a previous generation's ids and tombstones.
fn assemble(
    name: &str,
    browser: Browser,
    owns_browser: bool,
    context: BrowserContextId,
    tab: Tab,
    previous: Option<&mut Session>,
    restored_origins: Vec<String>,
) -> Session {
    let (mut ids, generation, retired, tombstones, closed) = match previous {
        Some(p) => {
            p.retire_target();
            (
                std::mem::take(&mut p.ids),
                p.generation + 1,
                std::mem::take(&mut p.retired_targets),
                std::mem::take(&mut p.tombstones),
                std::mem::take(&mut p.closed_tabs),
            )
        }
        None => (Ids::new(), 1, HashSet::new(), Tombstones::default(), HashSet::new()),
    };
    let target_id = ids.target();
    let mut s = Session {
        name: name.to_string(),
        ids,
        owns_browser,
        browser,
        context,
        target_id,
        generation,
        retired_targets: retired,
        tabs: Vec::new(),
        closed_tabs: closed,
        snapshots: HashMap::new(),
        tombstones,
        continuations: HashMap::new(),
        egress_mark: 0,
        downloads: None,
        restored_origins,
        recorder: crate::record::Recorder::default(),
    };
    s.add_tab(tab, None);
    s
}
