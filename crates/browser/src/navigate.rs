//! Loading and navigation actions: `navigate`, which never lets a failed load
//! replace the page (the document is intercepted and aborted, or, from a blank
//! tab, the failed load undone), and leaves a page that asks to stay.

use std::time::Instant;

use sightline_cdp::protocol::{fetch, page};

use crate::{BrowserError, Tab};

impl Tab {
    /// `navigate`: load `url`. A URL that cannot be loaded leaves the current
    /// document exactly as it was (the failed load is aborted before Chromium
    /// commits its error page) and returns `NavigationFailed`.
    pub async fn navigate(&self, url: &str) -> Result<(), BrowserError> {
        // Going elsewhere dismisses a dialog the page left open. A `beforeunload`
        // dialog is answered "Stay" (the navigation that raised it is not the
        // agent's): the agent's own navigation below asks again and leaves.
        if self.open_dialog().is_some() {
            self.answer_dialog(false).await?;
        }
        // A page whose script never yields would hold the navigation away from it
        // (the new document commits on that thread): stop the script first, and
        // freeze the page so that nothing restarts it before the commit (a timer,
        // an observer); the next document is thawed as soon as it commits.
        let stopped = self.unstick().await?;
        let frozen = stopped || self.is_frozen();
        if frozen && !self.is_frozen() {
            self.freeze().await;
        }
        self.navigate_from(url, frozen).await
    }

    async fn navigate_from(&self, url: &str, frozen: bool) -> Result<(), BrowserError> {
        // Unavailable when the current page is itself an error page: then there is nothing to restore.
        let before = self.call(&page::GetNavigationHistory {}).await.ok();
        {
            let mut st = self.state.lock().unwrap();
            st.loading.nav_error = None;
            st.loading.proxy_failure = None;
        }
        // A document that fails to load is held at its response and aborted, so
        // Chromium's error page never replaces the page the tab shows. A blank tab
        // has nothing to keep: interception (which costs the browser and the page
        // a loader swap each time it is turned on or off) is skipped, and a failed
        // load there is undone afterwards (see `undo_in_blank`).
        let blank = self.state.lock().unwrap().loading.blank;
        let documents =
            [fetch::RequestPattern { url_pattern: "*", resource_type: "Document", request_stage: "Response" }];
        let intercept = !blank && self.call(&fetch::Enable { patterns: &documents }).await.is_ok();
        let since = self.mark().await;
        let nav = tokio::time::timeout(self.opts.settle.load_timeout, self.navigate_leaving(url)).await;
        if frozen || self.is_frozen() {
            // Committed (or failed): whichever document is there now runs again.
            self.thaw().await;
        }
        let mut loader = None;
        let failure = match nav {
            Ok(Ok(v)) => {
                loader = v.loader_id;
                v.error_text.filter(|t| !t.is_empty()).map(crate::LoadFailure::Other)
            }
            Ok(Err(e)) => match e {
                // The page opened another dialog while unloading: that dialog is the next state.
                BrowserError::DialogOpen => {
                    let _ = self.client.execute(Some(&self.session), &fetch::Disable {}).await;
                    return Ok(());
                }
                BrowserError::Cdp(sightline_cdp::CdpError::Protocol { message, .. }) => {
                    Some(crate::LoadFailure::Other(message))
                }
                other => {
                    if intercept {
                        let _ = self.client.execute(Some(&self.session), &fetch::Disable {}).await;
                    }
                    return Err(other);
                }
            },
            Err(_) => {
                let _ = self.call(&page::StopLoading {}).await;
                Some(crate::LoadFailure::TimedOut(self.opts.settle.load_timeout))
            }
        };
        if blank {
            self.undo_in_blank(url, before.as_ref(), failure, loader, since).await?;
            self.read_main_document().await;
            return Ok(());
        }
        let aborted = self.state.lock().unwrap().loading.nav_error.take();
        if intercept {
            let _ = self.call(&fetch::Disable {}).await;
        }
        if let Some(reason) = failure {
            match aborted {
                // Aborted by us: nothing was committed; the old document is still live.
                Some(why) => return Err(BrowserError::NavigationFailed { url: url.to_string(), reason: why }),
                None => {
                    if let Some(before) = &before {
                        self.restore_history(before).await?;
                    }
                    return Err(BrowserError::NavigationFailed { url: url.to_string(), reason });
                }
            }
        }
        self.wait_after(since).await?;
        self.read_main_document().await;
        Ok(())
    }

    /// The end of a navigation from a blank tab, not intercepted: a load that
    /// failed (Chromium's error page, or the egress proxy's answer, committed in
    /// its place) is undone, so the tab is blank again, and reported.
    /// `loader`: the new document's, from `Page.navigate`'s reply.
    async fn undo_in_blank(
        &self,
        url: &str,
        before: Option<&page::NavigationHistory>,
        failure: Option<crate::LoadFailure>,
        loader: Option<String>,
        since: Instant,
    ) -> Result<(), BrowserError> {
        let failure = match failure {
            Some(f) => Some(f),
            None => {
                // The proxy's answer is read from its response event, which comes
                // before the reply to `Page.navigate`: once the page is stable it
                // has been seen. Only this navigation's own document counts (not
                // one the page went on to load by itself meanwhile).
                self.wait_after(since).await?;
                let proxied = self.state.lock().unwrap().loading.proxy_failure.take();
                proxied.filter(|(l, _)| loader.as_ref() == Some(l)).map(|(_, f)| f)
            }
        };
        let Some(reason) = failure else { return Ok(()) };
        self.blank_again(before).await?;
        Err(BrowserError::NavigationFailed { url: url.to_string(), reason })
    }

    /// Back to the blank page a failed first load replaced: its history entry
    /// if it is still there, else a new blank page (Chromium may have replaced
    /// the entry of a tab's initial blank page). The tab counts as blank again.
    async fn blank_again(&self, before: Option<&page::NavigationHistory>) -> Result<(), BrowserError> {
        let now = self.call(&page::GetNavigationHistory {}).await.ok();
        let kept = match (before.and_then(|b| b.current()), &now) {
            (Some(id), Some(now)) => now.entries.iter().any(|e| e.id == id),
            _ => false,
        };
        match before {
            Some(before) if kept => self.restore_history(before).await?,
            _ => {
                let since = Instant::now();
                self.call(&page::Navigate { url: "about:blank" }).await?;
                self.wait_after(since).await?;
            }
        }
        self.state.lock().unwrap().loading.blank = true;
        Ok(())
    }

    /// `Page.navigate`, answering "Leave" to the `beforeunload` dialog the page
    /// raises on the way out: an explicit navigation by the agent is the user's
    /// decision to leave, so no page can keep the agent on it. Any other dialog
    /// opened meanwhile ends the wait with `DialogOpen`.
    async fn navigate_leaving(&self, url: &str) -> Result<page::NavigateReply, BrowserError> {
        self.check_alive()?;
        let nav = page::Navigate { url };
        // The caller bounds the navigation by the load timeout; this is the call limit.
        let call = self.client.execute_within(Some(&self.session), &nav, std::time::Duration::from_secs(60));
        tokio::pin!(call);
        loop {
            tokio::select! {
                r = &mut call => return Ok(r?),
                _ = self.until_dead() => return Err(self.ended()),
                _ = self.until_dialog() => {
                    if self.open_dialog().is_none_or(|d| d.kind != "beforeunload") {
                        return Err(BrowserError::DialogOpen);
                    }
                    tracing::debug!(url, "navigate: leaving a page that asked to stay (beforeunload)");
                    self.close_dialog(true).await?;
                }
                // A page that hangs while we leave it holds the commit: freeze it
                // (the caller thaws whatever document is there afterwards).
                _ = tokio::time::sleep(crate::settle::LEAVING_CHECK_EVERY) => {
                    if !self.is_frozen() && !self.answers(self.hang_limit()).await {
                        tracing::warn!(url, "navigate: the page stopped answering while being left");
                        let _frozen = self.hung().await;
                    }
                }
            }
        }
    }

    /// Go back to the history entry that was current in `before`, if an error page replaced it.
    async fn restore_history(&self, before: &page::NavigationHistory) -> Result<(), BrowserError> {
        let target = before.current();
        // The error page commits shortly after `Page.navigate` reports the failure;
        // until then the frame is in transition and Page calls are refused.
        let since = Instant::now();
        self.wait_after(since).await?;
        let deadline = Instant::now() + std::time::Duration::from_secs(3);
        loop {
            if let Ok(after) = self.call(&page::GetNavigationHistory {}).await {
                if after.current() == target {
                    return Ok(());
                }
            }
            let Some(entry_id) = target else { return Ok(()) };
            let since = Instant::now();
            match self.call(&page::NavigateToHistoryEntry { entry_id }).await {
                Ok(_) => {
                    self.state.lock().unwrap().loading.main_loading = true;
                    return self.wait_after(since).await;
                }
                Err(BrowserError::Cdp(sightline_cdp::CdpError::Protocol { .. })) if Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}
