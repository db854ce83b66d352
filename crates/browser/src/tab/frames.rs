//! Frames and targets: the out-of-process iframes attached to the tab (each a
//! flattened session of its own), and which of them are still loading.

use std::collections::HashMap;
use std::time::Instant;

use sightline_cdp::{FrameId, SessionId};

/// An out-of-process iframe attached to this tab.
#[derive(Debug, Clone)]
pub(crate) struct OopFrame {
    pub frame_id: FrameId,
    pub session: SessionId,
    /// The session that attached it: its parent frame's (the page's, or
    /// another out-of-process frame's when they nest).
    pub parent: Option<SessionId>,
}

#[derive(Default)]
pub(crate) struct Frames {
    pub oopifs: Vec<OopFrame>,
    /// Out-of-process frames attached and not yet done loading, since when.
    pub loading: HashMap<FrameId, Instant>,
}

impl Frames {
    pub(crate) fn on_attached(&mut self, frame: OopFrame, now: Instant) {
        self.loading.insert(frame.frame_id.clone(), now);
        self.oopifs.push(frame);
    }

    /// A frame's session went away. Returns whether it was one of ours.
    pub(crate) fn on_detached(&mut self, session: &SessionId, target: Option<FrameId>) -> bool {
        let before = self.oopifs.len();
        self.oopifs.retain(|f| f.session != *session);
        if let Some(t) = target {
            self.loading.remove(&t);
        }
        before != self.oopifs.len()
    }

    /// A frame in an out-of-process session started or stopped loading.
    pub(crate) fn on_loading(&mut self, frame_id: FrameId, stopped: bool, now: Instant) {
        if stopped {
            self.loading.remove(&frame_id);
        } else {
            self.loading.insert(frame_id, now);
        }
    }

    /// Frames attached since `since` and still loading.
    pub(crate) fn loading_since(&self, since: Instant) -> usize {
        self.loading.values().filter(|t| **t >= since).count()
    }

    /// The frame a session was attached for.
    pub(crate) fn frame_of(&self, session: &SessionId) -> Option<FrameId> {
        self.oopifs.iter().find(|f| f.session == *session).map(|f| f.frame_id.clone())
    }

    /// Events were missed: which frames are loading is unknown; they no longer hold a wait.
    pub(crate) fn forget(&mut self) {
        self.loading.clear();
    }
}
