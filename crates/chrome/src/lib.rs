//! The Chromium implementation of [`sightline_pack::Driver`], over a
//! [`sightline_browser::Tab`]. Marks come from the tab's capture pipeline (the
//! same one that builds the element index); acting on a mark acts on that exact
//! DOM node, re-checked at the moment of acting.

use std::sync::{Arc, Mutex};

use base64::Engine;
use sightline_browser::{BrowserError, Captured, Tab};
use sightline_pack::{Cx, Driver, DriverError, Mark, MarkSet};

struct MarkState {
    generation: u64,
    /// Tab navigation count when the marks were taken.
    navigations: u64,
    captured: Arc<Captured>,
    /// mark id - 1 → element index.
    elements: Vec<u32>,
}

pub struct ChromeDriver {
    tab: Tab,
    marks: Mutex<Option<MarkState>>,
    generation: Mutex<u64>,
}

fn err(e: BrowserError) -> DriverError {
    match e {
        BrowserError::NoMatch { selector } => DriverError::NotFound { selector },
        BrowserError::NavigationFailed { url, reason } => DriverError::Navigation { url, reason },
        BrowserError::NotInteractive { reason, .. } => DriverError::Refused(reason.to_string()),
        BrowserError::PageScript(m) => DriverError::PageScript(m),
        other => DriverError::Browser(other.to_string()),
    }
}

impl ChromeDriver {
    pub fn new(tab: Tab) -> ChromeDriver {
        ChromeDriver { tab, marks: Mutex::new(None), generation: Mutex::new(0) }
    }

    pub fn tab(&self) -> &Tab {
        &self.tab
    }

    pub fn into_tab(self) -> Tab {
        self.tab
    }

    /// The capture and element index behind mark `id` of `generation`, if still valid.
    fn resolve(&self, generation: u64, id: u32) -> Result<(Arc<Captured>, u32), DriverError> {
        let guard = self.marks.lock().unwrap();
        let Some(state) = guard.as_ref() else {
            return Err(DriverError::StaleMarks("no marks yet: call mark() first".into()));
        };
        if state.generation != generation {
            return Err(DriverError::StaleMarks("these mark ids come from an older mark(); call mark() again".into()));
        }
        if self.tab.navigation_count() != state.navigations {
            return Err(DriverError::StaleMarks(
                "the page navigated since mark(); its ids are gone, call mark() again".into(),
            ));
        }
        let index = state
            .elements
            .get((id as usize).wrapping_sub(1))
            .copied()
            .ok_or(DriverError::NoSuchMark { id, count: state.elements.len() })?;
        Ok((state.captured.clone(), index))
    }
}

impl ChromeDriver {
    /// Scripts have no dialog primitive: a JavaScript dialog an action opened is
    /// answered as an unattended browser would (alert and beforeunload accepted,
    /// confirm and prompt dismissed) and reported on stderr, never left open.
    async fn after_action(&self, r: Result<(), BrowserError>) -> Result<(), DriverError> {
        r.map_err(err)?;
        while let Some((d, accepted)) = self.tab.answer_dialog_by_default().await.map_err(err)? {
            tracing::warn!(
                kind = %d.kind,
                message = ?d.message,
                answer = if accepted { "OK" } else { "Cancel" },
                "the page opened a dialog; answered it as an unattended browser would"
            );
        }
        Ok(())
    }
}

impl Driver for ChromeDriver {
    async fn navigate(&self, _cx: &Cx, url: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.navigate(url).await).await
    }
    async fn click(&self, _cx: &Cx, selector: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.click_selector(selector).await).await
    }
    async fn send_keys(&self, _cx: &Cx, selector: &str, text: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.type_selector(selector, text).await).await
    }
    async fn wait_visible(&self, _cx: &Cx, selector: &str) -> Result<(), DriverError> {
        self.tab.wait_for(selector, true).await.map(|_| ()).map_err(err)
    }
    async fn wait_ready(&self, _cx: &Cx, selector: &str) -> Result<(), DriverError> {
        self.tab.wait_for(selector, false).await.map(|_| ()).map_err(err)
    }
    async fn text(&self, _cx: &Cx, selector: &str) -> Result<String, DriverError> {
        self.tab.read_selector(selector, false).await.map_err(err)
    }
    async fn value(&self, _cx: &Cx, selector: &str) -> Result<String, DriverError> {
        self.tab.read_selector(selector, true).await.map_err(err)
    }
    async fn eval(&self, _cx: &Cx, expr: &str) -> Result<serde_json::Value, DriverError> {
        self.tab.eval_json(expr).await.map_err(err)
    }
    async fn key_event(&self, _cx: &Cx, text: &str) -> Result<(), DriverError> {
        self.after_action(self.tab.keys(text).await).await
    }
    async fn screenshot(&self, _cx: &Cx) -> Result<Vec<u8>, DriverError> {
        self.tab.screenshot_png().await.map_err(err)
    }

    async fn marks(&self, _cx: &Cx, screenshot: bool) -> Result<MarkSet, DriverError> {
        let navigations = self.tab.navigation_count();
        let captured = self.tab.capture(screenshot).await.map_err(err)?;
        let views = captured.view.marks();
        let marks: Vec<Mark> = views
            .iter()
            .map(|m| Mark {
                id: m.id,
                tag: m.tag.clone(),
                role: m.role.clone(),
                name: m.name.clone(),
                x: m.x,
                y: m.y,
                w: m.w,
                h: m.h,
            })
            .collect();
        let png = match &captured.screenshot {
            Some(b64) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| DriverError::Browser(format!("screenshot: {e}")))?,
            ),
            None => None,
        };
        let generation = {
            let mut g = self.generation.lock().unwrap();
            *g += 1;
            *g
        };
        *self.marks.lock().unwrap() = Some(MarkState {
            generation,
            navigations,
            elements: views.iter().map(|m| m.element_index).collect(),
            captured: Arc::new(captured),
        });
        Ok(MarkSet { generation, marks, screenshot: png })
    }

    async fn click_mark(&self, _cx: &Cx, generation: u64, id: u32) -> Result<(), DriverError> {
        let (captured, index) = self.resolve(generation, id)?;
        self.after_action(self.tab.click(&captured, index).await).await
    }

    async fn type_mark(&self, _cx: &Cx, generation: u64, id: u32, text: &str) -> Result<(), DriverError> {
        let (captured, index) = self.resolve(generation, id)?;
        self.after_action(self.tab.type_text(&captured, index, text, false).await).await
    }
}
