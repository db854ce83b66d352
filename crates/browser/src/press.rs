//! `press_key` and history (`go_back`, `go_forward`): what a person does with a
//! keyboard and the browser's Back and Forward buttons.

use std::time::Instant;

use sightline_cdp::protocol::page;
use sightline_cdp::protocol::runtime::CallArgument;
use sightline_page::ElementIndex;

use crate::actions::DialogIs;
use crate::capture::Captured;
use crate::error::{BrowserError, LoadFailure, Refusal};
use crate::keys::chord;
use crate::Tab;

/// Focus the element (a hidden control's too: focus needs no pointer), unless
/// focus already is in it. `"yes"` when focus ended in it.
const FOCUS: &str = r#"function () {
  const inside = (a) => a && (a === this || this.contains(a));
  if (!inside(document.activeElement)) this.focus({ preventScroll: true });
  return inside(document.activeElement) ? 'yes' : 'no';
}"#;

/// Back or forward in the tab's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryStep {
    Back,
    Forward,
}

impl Tab {
    /// `press_key`: a key or chord (`Enter`, `Control+A`, `Shift+Tab`) as real key
    /// events, on the element (focused first) or on whatever has focus; then the wait.
    pub async fn press_key_on(
        &self,
        cap: &Captured,
        index: Option<ElementIndex>,
        key: &str,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
        let events = chord(key)?;
        if let Some(index) = index {
            let e = self.element(cap, index)?;
            if e.disabled {
                return Err(BrowserError::NotInteractive { index, reason: Refusal::Disabled });
            }
            let object = self.object_id(cap, e).await?;
            self.call_on(&cap.sessions[e.frame], &object, FOCUS, &[] as &[CallArgument]).await?;
        }
        self.act(DialogIs::Outcome, async || self.press(events).await).await
    }

    /// `go_back` / `go_forward`: the previous or next entry of the tab's history, as
    /// the browser's buttons do; with none, `NavigationFailed` and nothing changes.
    pub async fn go(&self, step: HistoryStep) -> Result<(), BrowserError> {
        self.revive().await?;
        let history = self.call(&page::GetNavigationHistory {}).await?;
        let target = match step {
            HistoryStep::Back => history.current_index.checked_sub(1),
            HistoryStep::Forward => Some(history.current_index + 1),
        }
        .and_then(|i| history.entries.get(i))
        // The blank page a tab is opened on is not a page the agent visited.
        .filter(|e| !(e.url == "about:blank" && history.entries.first().is_some_and(|f| f.id == e.id)));
        let Some(entry) = target else {
            let here = history.entries.get(history.current_index).map(|e| e.url.clone()).unwrap_or_default();
            let reason = match step {
                HistoryStep::Back => "there is no earlier page in this tab's history",
                HistoryStep::Forward => "there is no later page in this tab's history",
            };
            return Err(BrowserError::NavigationFailed { url: here, reason: LoadFailure::Other(reason.into()) });
        };
        let since = Instant::now();
        self.call(&page::NavigateToHistoryEntry { entry_id: entry.id }).await?;
        self.state.lock().unwrap().loading.main_loading = true;
        self.wait_after(since).await
    }
}
