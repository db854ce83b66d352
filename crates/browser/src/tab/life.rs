//! Life: whether the page is alive, crashed or closed. One watch channel is
//! the only record of it: the event task ends it, every waiting call watches it.

use tokio::sync::watch;

use crate::{BrowserError, Tab};

/// Where a tab's page is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Life {
    Alive,
    /// The renderer crashed (`Inspector.targetCrashed`).
    Crashed,
    /// The target went away: the page closed itself, we closed it, or it was detached.
    Closed,
}

/// The sending end, held by the tracker.
pub(crate) struct LifeOwner {
    tx: watch::Sender<Life>,
}

impl LifeOwner {
    pub(crate) fn new() -> (LifeOwner, watch::Receiver<Life>) {
        let (tx, rx) = watch::channel(Life::Alive);
        (LifeOwner { tx }, rx)
    }

    /// The page ended this way. A crash is not undone by the detach that follows it.
    pub(crate) fn end(&self, how: Life) {
        self.tx.send_if_modified(|life| {
            let change = *life == Life::Alive || (how == Life::Crashed && *life == Life::Closed);
            if change {
                *life = how;
            }
            change
        });
    }
}

impl Tab {
    pub(crate) fn life(&self) -> Life {
        *self.life.borrow()
    }

    /// Fails at once when the connection, or the page, is gone.
    pub(crate) fn check_alive(&self) -> Result<(), BrowserError> {
        if self.client.is_closed() {
            return Err(BrowserError::Cdp(sightline_cdp::CdpError::Disconnected));
        }
        match self.life() {
            Life::Alive => Ok(()),
            Life::Crashed => Err(BrowserError::Crashed),
            Life::Closed => Err(BrowserError::TabClosed),
        }
    }

    /// The error a call waiting on a page that just ended answers.
    pub(crate) fn ended(&self) -> BrowserError {
        if self.is_closed() {
            BrowserError::TabClosed
        } else {
            BrowserError::Crashed
        }
    }

    /// Resolves once the page is no longer alive.
    pub(crate) async fn until_dead(&self) {
        let mut life = self.life.clone();
        let _ = life.wait_for(|l| *l != Life::Alive).await;
    }

    /// True once the page closed itself (`window.close()`) or its target went away, without a crash.
    pub fn is_closed(&self) -> bool {
        self.life() == Life::Closed && !self.client.is_closed()
    }

    /// True once the page crashed or its target went away.
    pub fn is_dead(&self) -> bool {
        self.life() != Life::Alive
    }
}
