//! `Runtime`: Sightline's own fixed scripts, remote objects.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{unit_command, Command, Empty};
use crate::ExecutionContextId;

unit_command!(
    /// `Runtime.runIfWaitingForDebugger`: let a target attached paused run.
    RunIfWaitingForDebugger = "Runtime.runIfWaitingForDebugger"
);
unit_command!(
    /// `Runtime.terminateExecution`: stop the running script.
    TerminateExecution = "Runtime.terminateExecution"
);

fn is_false(b: &bool) -> bool {
    !*b
}

/// `Runtime.evaluate`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluate<'a> {
    pub expression: &'a str,
    /// Where to run (default: the frame's main world).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<ExecutionContextId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_group: Option<&'a str>,
    #[serde(skip_serializing_if = "is_false")]
    pub return_by_value: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub await_promise: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub user_gesture: bool,
}

impl<'a> Evaluate<'a> {
    pub fn new(expression: &'a str) -> Self {
        Evaluate {
            expression,
            context_id: None,
            object_group: None,
            return_by_value: false,
            await_promise: false,
            user_gesture: false,
        }
    }

    /// Return the value as JSON rather than as a remote object.
    pub fn by_value(mut self) -> Self {
        self.return_by_value = true;
        self
    }

    /// Wait for a returned promise to settle.
    pub fn await_promise(mut self, wait: bool) -> Self {
        self.await_promise = wait;
        self
    }

    /// Run as if the user had acted (allows popups, clipboard, …).
    pub fn user_gesture(mut self) -> Self {
        self.user_gesture = true;
        self
    }

    /// Keep the remote objects made in a group, released with [`ReleaseObjectGroup`].
    pub fn in_group(mut self, group: &'a str) -> Self {
        self.object_group = Some(group);
        self
    }
}

impl Command for Evaluate<'_> {
    const METHOD: &'static str = "Runtime.evaluate";
    type Response = EvaluateReply;
}

/// The reply of `Runtime.evaluate` and `Runtime.callFunctionOn`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateReply {
    pub result: RemoteObject,
    #[serde(default)]
    pub exception_details: Option<ExceptionDetails>,
}

/// `Runtime.RemoteObject` (the fields we read).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteObject {
    /// The value, when asked for by value (JSON `null` and `undefined` are `None`).
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub object_id: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

/// `Runtime.ExceptionDetails` (the fields we read).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ExceptionDetails {
    pub text: Option<String>,
    pub exception: Option<RemoteObject>,
}

impl ExceptionDetails {
    /// The exception's description (`TypeError: …`), else the message text.
    pub fn message(&self) -> Option<&str> {
        self.exception.as_ref().and_then(|e| e.description.as_deref()).or(self.text.as_deref())
    }
}

/// `Runtime.callFunctionOn`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFunctionOn<'a> {
    pub object_id: &'a str,
    pub function_declaration: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub arguments: &'a [CallArgument],
    #[serde(skip_serializing_if = "is_false")]
    pub return_by_value: bool,
}

impl Command for CallFunctionOn<'_> {
    const METHOD: &'static str = "Runtime.callFunctionOn";
    type Response = EvaluateReply;
}

/// `Runtime.CallArgument`: a JSON value or a remote object.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallArgument {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_id: Option<String>,
}

impl CallArgument {
    /// An argument passed by value.
    pub fn value(v: impl Into<Value>) -> Self {
        CallArgument { value: Some(v.into()), object_id: None }
    }

    /// A remote object passed as itself.
    pub fn object(id: impl Into<String>) -> Self {
        CallArgument { value: None, object_id: Some(id.into()) }
    }
}

/// `Runtime.getProperties`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetProperties<'a> {
    pub object_id: &'a str,
    pub own_properties: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GetPropertiesReply {
    pub result: Vec<PropertyDescriptor>,
}

/// `Runtime.PropertyDescriptor` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
pub struct PropertyDescriptor {
    pub name: String,
    #[serde(default)]
    pub value: Option<RemoteObject>,
}

impl Command for GetProperties<'_> {
    const METHOD: &'static str = "Runtime.getProperties";
    type Response = GetPropertiesReply;
}

/// `Runtime.releaseObjectGroup`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseObjectGroup<'a> {
    pub object_group: &'a str,
}

impl Command for ReleaseObjectGroup<'_> {
    const METHOD: &'static str = "Runtime.releaseObjectGroup";
    type Response = Empty;
}
