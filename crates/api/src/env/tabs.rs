//! The environment's tabs: numbered from 1 as `page_content` lists them,
//! switched and closed by number, and followed as a user's browser would show
//! them (a popup becomes current; when it closes, its opener is current again).

use sightline_browser::{BrowserError, Captured, Tab};

use super::{map_err, Env};
use crate::state::ErrorCode;

impl Env {
    /// `[tabs: 1 "Shop" · 2 "Checkout" (current); switch_tab or close_tab by number]`.
    pub(super) async fn tabs_line(&self) -> Result<String, BrowserError> {
        let titles = self.tab.browser().page_titles().await?;
        let current = self.tab.target_id();
        let listed: Vec<String> = self
            .tabs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (title, url) = titles
                    .iter()
                    .find(|(id, _, _)| id == t.target_id())
                    .map(|(_, title, url)| (title.as_str(), url.as_str()))
                    .unwrap_or_default();
                let name = if title.trim().is_empty() { url } else { title };
                let here = if t.target_id() == current { " (current)" } else { "" };
                format!("{} \"{}\"{here}", i + 1, sightline_page::cut(&sightline_page::collapse(name), 40))
            })
            .collect();
        Ok(format!("[tabs: {}; switch_tab or close_tab by number]", listed.join(" · ")))
    }

    /// The number (from 1) of an open tab, or the error that says which numbers there are.
    fn tab_number(&self, n: u64) -> Result<usize, (ErrorCode, String)> {
        match usize::try_from(n).ok().filter(|n| (1..=self.tabs.len()).contains(n)) {
            Some(n) => Ok(n - 1),
            None => Err((
                ErrorCode::ActionValidationFailed,
                format!("There is no tab {n}: the open tabs are 1..{}.", self.tabs.len()),
            )),
        }
    }

    /// `switch_tab`: make tab `n` current; the others wait, in the order they opened.
    pub(super) fn switch_tab(&mut self, n: u64) -> Result<(), (ErrorCode, String)> {
        let i = self.tab_number(n)?;
        let target = self.tabs[i].clone();
        self.openers = self.tabs.iter().filter(|t| t.target_id() != target.target_id()).cloned().collect();
        self.tab = target;
        Ok(())
    }

    /// `close_tab`: close tab `n` (never the only one); closing the current tab
    /// returns to the tab that opened it, else the last one opened.
    pub(super) async fn close_tab(&mut self, n: u64) -> Result<(), (ErrorCode, String)> {
        let i = self.tab_number(n)?;
        if self.tabs.len() == 1 {
            return Err((
                ErrorCode::ActionValidationFailed,
                "Tab 1 is the only tab and cannot be closed; end the task with finish_task or fail_task instead."
                    .into(),
            ));
        }
        let closing = self.tabs[i].clone();
        closing.close_page().await.map_err(map_err)?;
        let id = closing.target_id().clone();
        self.openers.retain(|t| t.target_id() != &id);
        if self.tab.target_id() == &id {
            if self.openers.is_empty() {
                self.openers = self.tabs.iter().filter(|t| t.target_id() != &id).cloned().collect();
            }
            self.follow_tabs().await.map_err(map_err)?;
        }
        self.forget_closed();
        Ok(())
    }

    /// Move closed tabs out of the numbered list.
    fn forget_closed(&mut self) {
        let (open, closed): (Vec<_>, Vec<_>) = std::mem::take(&mut self.tabs).into_iter().partition(|t| !t.is_dead());
        self.tabs = open;
        self.retired.extend(closed);
    }

    /// Capture, and when the tab closes under the capture (a popup that closes
    /// itself once its save has loaded), return to its opener and capture that.
    pub(super) async fn capture_following(&mut self) -> Result<Captured, BrowserError> {
        loop {
            match self.capture().await {
                Err(_) if self.tab.is_closed() && !self.openers.is_empty() => self.follow_tabs().await?,
                other => return other,
            }
        }
    }

    /// Follow the page a user's browser would show: a tab the current page opened
    /// becomes current; when the current tab closes, its opener is current again.
    pub(super) async fn follow_tabs(&mut self) -> Result<(), BrowserError> {
        while self.tab.is_closed() {
            let Some(opener) = self.openers.pop() else { break };
            let closed = std::mem::replace(&mut self.tab, opener);
            if let Ok(t) = std::sync::Arc::try_unwrap(closed) {
                drop(t);
            }
            // The opener may still be settling from what the popup did (Django's
            // popup writes its choice into the opener as it closes).
            // A wait that times out still returns to the opener: it is the page there is.
            let _settled = self.tab.settle(std::time::Instant::now()).await?;
        }
        let Some(context) = self.tab.context_id().cloned() else { return Ok(()) };
        let pages = self.tab.browser().pages_in(&context).await?;
        let current = self.tab.target_id().clone();
        // A page opened by the current one, else any new page in this context.
        let opened = pages
            .iter()
            .filter(|(id, _)| !self.known.contains(id))
            .max_by_key(|(_, opener)| opener.as_ref() == Some(&current))
            .map(|(id, _)| id.clone());
        for (id, _) in &pages {
            self.known.insert(id.clone());
        }
        if let Some(target) = opened {
            let tab = std::sync::Arc::new(
                Tab::attach(self.tab.browser().clone(), &target, self.tab.options().clone()).await?,
            );
            // A popup still loading past the limit is followed as it is.
            let _settled = tab.wait_loaded().await?;
            self.tabs.push(tab.clone());
            let previous = std::mem::replace(&mut self.tab, tab);
            self.openers.push(previous);
        }
        self.forget_closed();
        Ok(())
    }
}
