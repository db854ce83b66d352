//! Marking elements new since the previous State Object (`*[12]button "Save"`).
//!
//! Opt-in ([`crate::Env::set_mark_new`]). An element is new when its identity
//! (frame id and backend DOM node id) was not in the previous state's element
//! index of the same document. After a navigation (or when the state follows
//! another tab) nothing is marked: the whole page is new. The State Object's
//! schema is unchanged, and `state_hash` is computed from the unmarked text, so
//! it still says whether the page changed (a no-op action keeps the hash even
//! though the previous state's marks are gone).

use std::collections::HashSet;

use sightline_browser::{Captured, Tab, TargetId};
use sightline_page::delta::NodeKey;

use crate::state::StateObject;

/// The previous state's document and element identities.
pub struct Fresh {
    doc: (TargetId, u64),
    seen: HashSet<NodeKey>,
}

impl Fresh {
    /// Start from the state the environment shows now (nothing in it is marked).
    pub fn new(tab: &Tab, current: &Captured) -> Fresh {
        Fresh { doc: doc_of(tab), seen: current.view.element_keys().into_iter().collect() }
    }

    /// Mark the new elements in a state about to be emitted from `captured`,
    /// and remember its elements for the next one.
    pub fn mark(&mut self, tab: &Tab, captured: &mut Captured, state: &mut StateObject) {
        let doc = doc_of(tab);
        if doc == self.doc {
            state.page_content = captured.view.page_content_marking_new(&self.seen);
        }
        self.doc = doc;
        self.seen = captured.view.element_keys().into_iter().collect();
    }
}

fn doc_of(tab: &Tab) -> (TargetId, u64) {
    (tab.target_id().clone(), tab.navigation_count())
}
