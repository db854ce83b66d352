//! Dialogs and choosers: the JavaScript dialog a page opened (which pauses it),
//! and the file chooser a click opened. Their events, and their answers.

use std::time::{Duration, Instant};

use sightline_cdp::protocol::page;
use sightline_cdp::SessionId;
use sightline_page::JsDialog;
use tokio::sync::watch;

use crate::files::Chooser;
use crate::{BrowserError, Tab};

/// What is open on the page, waiting for an answer.
pub(crate) struct Dialogs {
    /// An open JavaScript dialog, and the session whose page opened it.
    open: Option<(JsDialog, SessionId)>,
    /// Mirrors `open.is_some()` for calls that wait: they stop when a dialog opens.
    tx: watch::Sender<bool>,
    /// A file chooser the page opened and no upload answered yet (see `files.rs`).
    pub chooser: Option<Chooser>,
    /// The element a click is being delivered to (frame session, backend id):
    /// a file chooser it opens is attributed to it.
    pub clicking: Option<(SessionId, i64)>,
}

impl Dialogs {
    pub(crate) fn new() -> (Dialogs, watch::Receiver<bool>) {
        let (tx, rx) = watch::channel(false);
        (Dialogs { open: None, tx, chooser: None, clicking: None }, rx)
    }

    pub(crate) fn on_opening(&mut self, session: SessionId, v: page::JavascriptDialogOpening) {
        let dialog = JsDialog {
            prompt_text: (v.kind == "prompt").then(|| v.default_prompt.unwrap_or_default()),
            kind: v.kind,
            message: v.message,
            url: v.url,
        };
        self.open = Some((dialog, session));
        let _ = self.tx.send(true);
    }

    /// Closed (by the page, by our answer, or gone with its document): the page runs again.
    pub(crate) fn on_closed(&mut self) {
        self.open = None;
        let _ = self.tx.send(false);
    }

    pub(crate) fn on_chooser_opened(&mut self, session: SessionId, v: page::FileChooserOpened) {
        // `showOpenFilePicker` has no input to fill: nothing to remember.
        let Some(input) = v.backend_node_id else { return };
        self.chooser =
            Some(Chooser { session, input, multiple: v.mode == "selectMultiple", opener: self.clicking.clone() });
    }

    /// A new main-frame document: a chooser of the old one is gone.
    pub(crate) fn on_new_document(&mut self) {
        self.chooser = None;
    }
}

impl Tab {
    /// The open JavaScript dialog, if any.
    pub fn open_dialog(&self) -> Option<JsDialog> {
        self.state.lock().unwrap().dialogs.open.as_ref().map(|(d, _)| d.clone())
    }

    /// True while a JavaScript dialog is open (the page's main thread is paused).
    pub(crate) fn dialog_is_open(&self) -> bool {
        *self.dialog.borrow()
    }

    /// Resolves once a JavaScript dialog is open.
    pub(crate) async fn until_dialog(&self) {
        let mut dialog = self.dialog.clone();
        let _ = dialog.wait_for(|d| *d).await;
    }

    /// Set the text of an open `prompt()` (answered later with [`Tab::answer_dialog`]).
    pub fn set_prompt_text(&self, text: &str) {
        if let Some((d, _)) = self.state.lock().unwrap().dialogs.open.as_mut() {
            d.prompt_text = Some(text.to_string());
        }
    }

    /// Answer an open dialog the way an unattended browser would: accept `alert` and
    /// `beforeunload`, dismiss `confirm` and `prompt`. Returns what was answered, so
    /// the caller can say so (never silently).
    pub async fn answer_dialog_by_default(&self) -> Result<Option<(JsDialog, bool)>, BrowserError> {
        let Some(d) = self.open_dialog() else { return Ok(None) };
        let accept = matches!(d.kind.as_str(), "alert" | "beforeunload");
        self.answer_dialog(accept).await?;
        Ok(Some((d, accept)))
    }

    /// Accept or dismiss the open JavaScript dialog, then wait for the page.
    pub async fn answer_dialog(&self, accept: bool) -> Result<(), BrowserError> {
        if !self.close_dialog(accept).await? {
            return Ok(());
        }
        let since = Instant::now();
        self.wait_after(since).await
    }

    /// Accept or dismiss the open JavaScript dialog, if there is one (whether there was).
    pub(crate) async fn close_dialog(&self, accept: bool) -> Result<bool, BrowserError> {
        let Some((d, session)) = self.state.lock().unwrap().dialogs.open.clone() else { return Ok(false) };
        let answer = page::HandleJavaScriptDialog { accept, prompt_text: d.prompt_text.as_deref().filter(|_| accept) };
        let r = self.client.execute_within(Some(&session), &answer, Duration::from_secs(10)).await;
        // Closed now (or already gone): the page runs again.
        self.state.lock().unwrap().dialogs.on_closed();
        if let Err(e) = r {
            if !matches!(e, sightline_cdp::CdpError::Protocol { .. }) {
                return Err(e.into());
            }
        }
        Ok(true)
    }
}
