//! `Input`: real mouse, wheel and key events.

use serde::Serialize;

use super::{Command, Empty};

/// `Input.dispatchMouseEvent`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchMouseEvent {
    #[serde(rename = "type")]
    pub kind: MouseEventKind,
    pub x: f64,
    pub y: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buttons: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub click_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_x: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_y: Option<f64>,
}

impl DispatchMouseEvent {
    /// An event of `kind` at a viewport point, nothing else set.
    pub fn at(kind: MouseEventKind, x: f64, y: f64) -> Self {
        DispatchMouseEvent { kind, x, y, button: None, buttons: None, click_count: None, delta_x: None, delta_y: None }
    }
}

impl Command for DispatchMouseEvent {
    const METHOD: &'static str = "Input.dispatchMouseEvent";
    type Response = Empty;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MouseEventKind {
    MousePressed,
    MouseReleased,
    MouseMoved,
    MouseWheel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MouseButton {
    Left,
}

/// `Input.dispatchKeyEvent`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchKeyEvent {
    #[serde(rename = "type")]
    pub kind: KeyEventKind,
    pub key: String,
    pub code: String,
    pub windows_virtual_key_code: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmodified_text: Option<String>,
    /// Bit field: Alt=1, Ctrl=2, Meta=4, Shift=8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modifiers: Option<u32>,
    /// Editing commands to run (`selectAll`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
}

impl DispatchKeyEvent {
    /// A key event with no text, modifiers or commands.
    pub fn key(kind: KeyEventKind, key: &str, code: &str, windows_virtual_key_code: u32) -> Self {
        DispatchKeyEvent {
            kind,
            key: key.to_string(),
            code: code.to_string(),
            windows_virtual_key_code,
            text: None,
            unmodified_text: None,
            modifiers: None,
            commands: Vec::new(),
        }
    }
}

impl Command for DispatchKeyEvent {
    const METHOD: &'static str = "Input.dispatchKeyEvent";
    type Response = Empty;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum KeyEventKind {
    KeyDown,
    KeyUp,
    RawKeyDown,
}

/// `Input.insertText`: text as an input method commits it (one `beforeinput`
/// and `input` event, no key events).
#[derive(Debug, Clone, Serialize)]
pub struct InsertText<'a> {
    pub text: &'a str,
}

impl Command for InsertText<'_> {
    const METHOD: &'static str = "Input.insertText";
    type Response = Empty;
}

/// `Input.setInterceptDrags`: a drag the page starts (HTML5 drag and drop) is
/// reported as `Input.dragIntercepted` instead of running a native drag loop,
/// which headless Chromium has none of.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SetInterceptDrags {
    pub enabled: bool,
}

impl Command for SetInterceptDrags {
    const METHOD: &'static str = "Input.setInterceptDrags";
    type Response = Empty;
}

/// `Input.dragIntercepted`: the data of a drag the page started (kept as sent,
/// to be handed back in [`DispatchDragEvent`]).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct DragIntercepted {
    pub data: Box<serde_json::value::RawValue>,
}

impl super::EventParams for DragIntercepted {
    const METHOD: &'static str = "Input.dragIntercepted";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DragEventKind {
    DragEnter,
    DragOver,
    Drop,
    DragCancel,
}

/// `Input.dispatchDragEvent`: a step of an intercepted drag at a viewport point.
#[derive(Debug, Clone, Serialize)]
pub struct DispatchDragEvent {
    #[serde(rename = "type")]
    pub kind: DragEventKind,
    pub x: f64,
    pub y: f64,
    pub data: Box<serde_json::value::RawValue>,
}

impl Command for DispatchDragEvent {
    const METHOD: &'static str = "Input.dispatchDragEvent";
    type Response = Empty;
}
