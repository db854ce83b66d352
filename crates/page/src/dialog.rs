//! The view of a page blocked by a JavaScript dialog.
//!
//! While `alert`, `confirm`, `prompt` or `beforeunload` is open the page's
//! scripts are paused and nothing in it can be used, so the dialog is the whole
//! view: its message in the text, its buttons (and a text field for `prompt`)
//! in the element index.

use crate::aria::Role;
use crate::capture::{JsDialog, Viewport};
use crate::content::token;
use crate::geometry::Rect;
use crate::index::ElementIndex;
use crate::interactive::{Descriptor, DialogControl, Element, Reason};
use crate::text::{collapse, cut};

fn control(index: ElementIndex, control: DialogControl, label: &str, value: Option<String>, vp: Viewport) -> Element {
    let text = control == DialogControl::Prompt;
    let centre = (vp.width / 2.0, vp.height / 2.0);
    Element {
        index,
        node: 0,
        frame: 0,
        backend_node_id: 0,
        reason: Reason::Native,
        descriptor: Descriptor {
            tag: if text { "input".into() } else { "button".into() },
            role: Some(if text { Role::Textbox } else { Role::Button }),
            aria_label: None,
            text_content: (!text).then(|| label.to_string()),
            name: None,
            value: value.clone(),
            placeholder: None,
            type_: Some(if text { "text".into() } else { "button".into() }),
            href: None,
            checked: None,
        },
        label: label.to_string(),
        bounds: Rect::new(centre.0, centre.1, 1.0, 1.0),
        visible: Rect::new(centre.0, centre.1, 1.0, 1.0),
        click_point: centre,
        disabled: false,
        readonly: false,
        accepts_text: text,
        select: None,
        selected: false,
        multiple: false,
        expanded: None,
        focused: text,
        range: None,
        dialog: Some(control),
        label_for: None,
        proxy: None,
        hint: None,
        aria_value: None,
    }
}

/// The whole view while a JavaScript dialog is open.
/// The element index and page text of a page blocked by a dialog.
pub(crate) fn view(d: &JsDialog, viewport: Viewport) -> (Vec<Element>, String) {
    let (accept, dismiss) = match d.kind.as_str() {
        "beforeunload" => ("Leave", Some("Stay")),
        "alert" => ("OK", None),
        _ => ("OK", Some("Cancel")),
    };
    let mut elements = Vec::new();
    if d.kind == "prompt" {
        let v = d.prompt_text.clone().unwrap_or_default();
        elements.push(control(ElementIndex::FIRST, DialogControl::Prompt, "", Some(v), viewport));
    }
    elements.push(control(ElementIndex::from_position(elements.len()), DialogControl::Accept, accept, None, viewport));
    if let Some(dismiss) = dismiss {
        elements.push(control(
            ElementIndex::from_position(elements.len()),
            DialogControl::Dismiss,
            dismiss,
            None,
            viewport,
        ));
    }
    let message = cut(&collapse(&d.message), 1000);
    let tokens: Vec<String> = elements.iter().map(token).collect();
    let page_content = format!(
        "[{} dialog from the page; the page is paused until it is answered]\n{}\n{}\n[/dialog]",
        d.kind,
        if message.is_empty() { "(no message)".to_string() } else { message },
        tokens.join(" ")
    );
    (elements, page_content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirm_and_prompt_views() {
        let vp = Viewport { width: 800.0, height: 600.0 };
        let d = JsDialog {
            kind: "confirm".into(),
            message: "Delete  item 3?".into(),
            url: "http://x.test/".into(),
            prompt_text: None,
        };
        let (elements, page_content) = view(&d, vp);
        assert_eq!(
            page_content,
            "[confirm dialog from the page; the page is paused until it is answered]\nDelete item 3?\n[1]button \"OK\" [2]button \"Cancel\"\n[/dialog]"
        );
        assert_eq!(elements[1].dialog, Some(DialogControl::Dismiss));
        let p = JsDialog {
            kind: "prompt".into(),
            message: "Name?".into(),
            url: String::new(),
            prompt_text: Some("Ada".into()),
        };
        let (_, page_content) = view(&p, vp);
        assert!(
            page_content.contains("[1]textbox value=\"Ada\" focused [2]button \"OK\" [3]button \"Cancel\""),
            "{}",
            page_content
        );
    }
}
