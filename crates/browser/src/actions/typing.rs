//! Typing: text into an element (focused, caret placed or cleared first), into
//! whatever has focus, and named keys; long texts in bounded time.

use sightline_cdp::protocol::input::{DispatchKeyEvent, InsertText, KeyEventKind};
use sightline_cdp::protocol::runtime::{CallArgument, Evaluate};
use sightline_cdp::SessionId;
use sightline_page::{DialogControl, Element, ElementIndex};

use super::{describe_element, DialogIs};
use crate::capture::Captured;
use crate::keys::{key_events, named};
use crate::{BrowserError, Refusal, Tab};

const PREPARE_TYPING: &str = r#"function (overwrite) {
  if (!this.isConnected) return 'detached';
  this.focus();
  if (this.isContentEditable) {
    const r = document.createRange();
    r.selectNodeContents(this);
    if (!overwrite) r.collapse(false);
    const s = getSelection(); s.removeAllRanges(); s.addRange(r);
    return overwrite && this.textContent.length > 0 ? 'delete-editable' : 'ok';
  }
  try {
    const n = this.value.length;
    if (overwrite) this.setSelectionRange(0, n); else this.setSelectionRange(n, n);
  } catch (e) {
    if (overwrite) this.select(); else return 'end';
  }
  return overwrite && this.value.length > 0 ? 'delete' : 'ok';
}"#;

impl Tab {
    /// `input_text`: focus, then type key by key (`overwrite` clears first).
    pub async fn type_text(
        &self,
        cap: &Captured,
        index: ElementIndex,
        text: &str,
        overwrite: bool,
    ) -> Result<(), BrowserError> {
        self.revive().await?;
        let e = self.element(cap, index)?;
        if e.dialog == Some(DialogControl::Prompt) {
            let (line, submit) = match text.strip_suffix('\n') {
                Some(t) => (t, true),
                None => (text, false),
            };
            let before = if overwrite {
                String::new()
            } else {
                self.open_dialog().and_then(|d| d.prompt_text).unwrap_or_default()
            };
            self.set_prompt_text(&format!("{before}{line}"));
            return if submit { self.answer_dialog(true).await } else { Ok(()) };
        }
        if e.disabled {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::Disabled });
        }
        if !e.accepts_text {
            // Code editors (CodeMirror, Ace, Monaco) show one element and type through a
            // hidden textarea or a focus proxy: click the visible element, then type into
            // whatever the click focused, if that takes text.
            let proxy = !matches!(
                e.descriptor.tag.as_str(),
                "a" | "button" | "select" | "option" | "input" | "summary" | "label"
            ) && !matches!(
                e.descriptor.role.as_ref().map(sightline_page::Role::as_str),
                Some("button" | "link" | "checkbox" | "radio" | "switch" | "option" | "tab" | "menuitem" | "slider")
            );
            if proxy && e.frame == 0 {
                self.verify_hit(cap, e).await?;
                return self.type_through_focus(e, text, overwrite).await;
            }
            return Err(BrowserError::NotInteractive {
                index,
                reason: Refusal::Unsupported { action: "input_text", element: describe_element(e) },
            });
        }
        if e.readonly {
            return Err(BrowserError::NotInteractive { index, reason: Refusal::ReadOnly });
        }
        let session = &cap.sessions[e.frame];
        let object = self.object_id(cap, e).await?;
        self.type_into_object(session, &object, text, overwrite).await.map_err(|e| match e {
            BrowserError::NotInteractive { reason, .. } | BrowserError::Refused { reason } => {
                BrowserError::NotInteractive { index, reason }
            }
            other => other,
        })
    }

    /// Focus a resolved element, place the caret (or clear it), type `text` key by key, wait.
    pub async fn type_into_object(
        &self,
        session: &SessionId,
        object: &str,
        text: &str,
        overwrite: bool,
    ) -> Result<(), BrowserError> {
        self.act(DialogIs::Outcome, async || {
            match self.call_on(session, object, PREPARE_TYPING, &[CallArgument::value(overwrite)]).await?.as_str() {
                "detached" => return Err(BrowserError::Refused { reason: Refusal::Detached }),
                "delete" => self.press(named("Backspace", 8, None)).await?,
                "delete-editable" => {
                    // A rich-text editor (Draft.js, ProseMirror) learns of the selection from
                    // `selectionchange` a moment later: give it two frames before the Backspace.
                    const SELECTION_SEEN: &str = "Promise.race([new Promise(r => requestAnimationFrame(() => \
                        requestAnimationFrame(() => setTimeout(r, 30)))), new Promise(r => setTimeout(r, 150))])";
                    self.eval_isolated(session, Evaluate::new(SELECTION_SEEN).await_promise(true)).await?;
                    self.press(named("Backspace", 8, None)).await?
                }
                "end" => self.press(named("End", 35, None)).await?,
                _ => {}
            }
            self.send_keys_now(text).await
        })
        .await
    }

    /// Click an editor's visible element and type into the text field the click focused.
    async fn type_through_focus(&self, e: &Element, text: &str, overwrite: bool) -> Result<(), BrowserError> {
        const FOCUS_TAKES_TEXT: &str = "(() => { let a = document.activeElement; \
            while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; \
            if (!a || a === document.body) return false; \
            if (a.isContentEditable || a.tagName === 'TEXTAREA') return true; \
            return a.tagName === 'INPUT' && /^(text|search|email|url|tel|password|number|)$/.test(a.type) })()";
        self.click_at(e.click_point.0, e.click_point.1).await?;
        let v = self.eval_isolated(&self.session, Evaluate::new(FOCUS_TAKES_TEXT).by_value()).await?;
        if v.result.value.and_then(|v| v.as_bool()) != Some(true) {
            return Err(BrowserError::NotInteractive {
                index: e.index,
                reason: Refusal::Unsupported { action: "input_text", element: describe_element(e) },
            });
        }
        self.act(DialogIs::Outcome, async || {
            if overwrite {
                let select_all = DispatchKeyEvent {
                    modifiers: Some(2),
                    commands: vec!["selectAll".into()],
                    ..DispatchKeyEvent::key(KeyEventKind::KeyDown, "a", "KeyA", 65)
                };
                let up = DispatchKeyEvent {
                    modifiers: Some(2),
                    ..DispatchKeyEvent::key(KeyEventKind::KeyUp, "a", "KeyA", 65)
                };
                self.press([select_all, up]).await?;
                self.press(named("Backspace", 8, None)).await?;
            }
            self.send_keys_now(text).await
        })
        .await
    }

    /// Press one named key (`Enter`, `Escape`, `ArrowDown`, …) on whatever has focus, then wait.
    pub async fn press_key(&self, key: &str) -> Result<bool, BrowserError> {
        self.revive().await?;
        let Some(events) = crate::keys::key_by_name(key) else { return Ok(false) };
        self.act(DialogIs::Error, async || self.press(events).await).await?;
        Ok(true)
    }

    /// Type `text` into whatever has focus, then wait.
    pub async fn keys(&self, text: &str) -> Result<(), BrowserError> {
        self.act(DialogIs::Error, async || self.send_keys_now(text).await).await
    }

    async fn send_keys_now(&self, text: &str) -> Result<(), BrowserError> {
        // Pipelined: each call is written to the socket in order on its first poll, and
        // Chromium handles one session's commands in order, so the page sees the keys in order.
        let pieces = typing_plan(text);
        let calls = pieces.iter().map(|piece| async move {
            // Each call keeps the long limit: pipelined keys of a long text wait in line.
            let limit = std::time::Duration::from_secs(60);
            match piece {
                Typed::Keys(events) => {
                    let sent = futures_util::future::join_all(
                        events.iter().map(|ev| self.cdp_within(&self.session, ev, limit)),
                    )
                    .await;
                    sent.into_iter().try_for_each(|r| r.map(|_| ()))
                }
                Typed::Insert(text) => self.cdp_within(&self.session, &InsertText { text }, limit).await.map(|_| ()),
            }
        });
        futures_util::future::join_all(calls).await.into_iter().collect()
    }
}

/// Characters typed key by key at the start of a text; the rest is inserted.
pub const KEYED_PREFIX: usize = 64;

/// One part of a text to type.
#[derive(Debug, PartialEq)]
enum Typed {
    /// Key events (down with text, up) for each character.
    Keys(Vec<DispatchKeyEvent>),
    /// One `Input.insertText`: what an input method commits.
    Insert(String),
}

/// How a text is typed, in bounded time and memory however long it is: the
/// first [`KEYED_PREFIX`] characters key by key (keydown/keypress/keyup
/// handlers see real keys), then every Enter, Tab and Backspace as a key
/// (they submit, move focus, delete) and the last character as a key (a
/// handler on keyup sees the whole value), and each run of other characters
/// between them as one `Input.insertText` (one trusted `beforeinput` and
/// `input` event; `change` fires on blur as for typed text).
fn typing_plan(text: &str) -> Vec<Typed> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<Typed> = Vec::new();
    let last = chars.len().saturating_sub(1);
    for (i, c) in chars.iter().enumerate() {
        let keyed = i < KEYED_PREFIX || i == last || matches!(c, '\n' | '\r' | '\t' | '\u{8}');
        match (keyed, out.last_mut()) {
            (true, Some(Typed::Keys(events))) => events.extend(key_events(*c)),
            (true, _) => out.push(Typed::Keys(key_events(*c).to_vec())),
            (false, Some(Typed::Insert(run))) => run.push(*c),
            (false, _) => out.push(Typed::Insert(c.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(plan: &[Typed]) -> Vec<(char, usize)> {
        plan.iter()
            .map(|p| match p {
                Typed::Keys(e) => ('k', e.len() / 2),
                Typed::Insert(t) => ('i', t.chars().count()),
            })
            .collect()
    }

    #[test]
    fn long_text_is_keyed_at_the_start_and_inserted_after() {
        assert_eq!(shape(&typing_plan("")), vec![]);
        assert_eq!(shape(&typing_plan("short")), vec![('k', 5)]);
        let long = "x".repeat(8000);
        assert_eq!(shape(&typing_plan(&long)), vec![('k', KEYED_PREFIX), ('i', 8000 - KEYED_PREFIX - 1), ('k', 1)]);
        // Enter, Tab and Backspace stay keys wherever they are.
        let text = format!("{}a\nb\tc", "y".repeat(KEYED_PREFIX));
        assert_eq!(shape(&typing_plan(&text)), vec![('k', KEYED_PREFIX), ('i', 1), ('k', 1), ('i', 1), ('k', 2)]);
        // Characters outside the BMP count once.
        let emoji = "😀".repeat(KEYED_PREFIX + 10);
        assert_eq!(shape(&typing_plan(&emoji)), vec![('k', KEYED_PREFIX), ('i', 9), ('k', 1)]);
        let Typed::Insert(run) = &typing_plan(&emoji)[1] else { panic!() };
        assert_eq!(run, &"😀".repeat(9));
    }
}
