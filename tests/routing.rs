//! Events routed to their tab and never silently lost; a tab handle closed twice.

use crate::common;

use std::time::Instant;

use common::*;
use sightline_browser::{BrowserError, SettleOptions, Settled, TabOptions};

/// A page floods its tab with network events (400 requests at once) while a
/// click waits, through a queue bounded at 2 events: the tab is told of the
/// gap, stops counting the requests whose end it may have missed and re-reads
/// the main frame, so the wait ends on a stable page, not at its cap, and the
/// next action works.
#[test]
fn a_flood_past_the_event_queue_is_told_and_the_wait_still_ends_stable() {
    run(async {
        let settle = SettleOptions { event_queue: 2, ..Default::default() };
        let tab = tab_with(TabOptions { settle, ..Default::default() }).await;
        tab.navigate(&url("/flood.html")).await.expect("the page loads through a tiny queue");
        assert_eq!(tab.evaluate("document.title").await.unwrap(), "flood");
        let (gaps_before, _) = tab.event_gaps();

        let since = Instant::now();
        tab.click_at(640.0, 360.0).await.expect("the click and its wait end");
        // The requests the click started, as the tab counts them now: a missed
        // `loadingFinished` left uncounted would hold this wait to its cap.
        let outcome = tab.settle(since).await.unwrap();
        assert_eq!(outcome, Settled::Stable, "the wait must end on a stable page, not at its cap");
        let (gaps, missed) = tab.event_gaps();
        assert!(gaps > gaps_before && missed > 0, "the flood overran the queue and the tab was told: {gaps} gaps");
        assert_eq!(tab.evaluate("window.clicks").await.unwrap(), 1);

        // Later actions still work, and the tab still follows its page.
        tab.click_at(640.0, 360.0).await.expect("a later click");
        assert_eq!(tab.evaluate("window.clicks").await.unwrap(), 2);
        let navigations = tab.navigation_count();
        tab.navigate(&url("/form.html")).await.expect("a later navigation");
        assert!(tab.navigation_count() > navigations, "the new document's commit was seen");
        assert_eq!(tab.settle(Instant::now()).await.unwrap(), Settled::Stable);
        tab.close().await;
    });
}

/// The same flood with the default queue: nothing missed, the same outcome.
#[test]
fn the_same_flood_with_the_default_queue_misses_nothing() {
    run(async {
        let tab = tab().await;
        tab.navigate(&url("/flood.html")).await.unwrap();
        let since = Instant::now();
        tab.click_at(640.0, 360.0).await.unwrap();
        assert_eq!(tab.settle(since).await.unwrap(), Settled::Stable);
        assert_eq!(tab.event_gaps(), (0, 0), "8192 queued events are room enough for this page");
        tab.close().await;
    });
}

/// `Tab` is a cheap handle: its clones share one page, and closing is safe
/// twice, from any clone; afterwards every call answers `TabClosed`.
#[test]
fn close_is_safe_twice_and_from_any_clone() {
    run(async {
        let tab = tab().await;
        tab.navigate(&url("/form.html")).await.unwrap();
        let other = tab.clone();
        assert_eq!(other.target_id(), tab.target_id());
        let target = tab.target_id().clone();
        tab.clone().close().await;
        tab.clone().close().await;
        assert!(tab.is_dead() && other.is_closed());
        let e = other.evaluate("1").await.unwrap_err();
        assert!(matches!(e, BrowserError::TabClosed), "{e:?}");
        tab.close().await;
        other.close().await;
        let pages = world().browser.page_titles().await.unwrap();
        assert!(!pages.iter().any(|(t, _, _)| *t == target), "the page is gone from the browser");
        // The browser is still fine: another tab opens and loads.
        let next = common::tab().await;
        next.navigate(&url("/form.html")).await.unwrap();
        next.close().await;
    });
}
