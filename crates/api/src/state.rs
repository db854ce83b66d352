//! The State Object and its error object, exactly as the seed specifies them.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;
use sightline_page::{Element, PageView};

/// The protocol's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidElementIndex,
    ElementNotInteractive,
    ActionValidationFailed,
    NavigationFailed,
    InternalBrowserError,
    /// `request_human` / `wait_for_human` where no live view is served, or with nothing to wait for.
    HumanUnavailable,
    /// `wait_for_human` ran out of time; the session stays handed over.
    HumanTimeout,
    /// A person has the tab (`request_human`): every other action waits for the hand-back.
    HandedOver,
}

impl ErrorCode {
    /// The wire string (`"INVALID_ELEMENT_INDEX"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidElementIndex => "INVALID_ELEMENT_INDEX",
            ErrorCode::ElementNotInteractive => "ELEMENT_NOT_INTERACTIVE",
            ErrorCode::ActionValidationFailed => "ACTION_VALIDATION_FAILED",
            ErrorCode::NavigationFailed => "NAVIGATION_FAILED",
            ErrorCode::InternalBrowserError => "INTERNAL_BROWSER_ERROR",
            ErrorCode::HumanUnavailable => "HUMAN_UNAVAILABLE",
            ErrorCode::HumanTimeout => "HUMAN_TIMEOUT",
            ErrorCode::HandedOver => "HANDED_OVER",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ErrorObject {
    pub code: ErrorCode,
    pub message: String,
    /// The action as received: the parsed JSON, or the raw line when it was not JSON.
    pub failed_action: Value,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Finished,
    Failed,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct TaskEnd {
    pub status: TaskStatus,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Attributes {
    pub name: Option<String>,
    pub value: Option<String>,
    pub placeholder: Option<String>,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub href: Option<String>,
    pub checked: Option<bool>,
}

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ElementDescriptor {
    pub tag: String,
    pub role: Option<String>,
    #[serde(rename = "aria-label")]
    pub aria_label: Option<String>,
    pub text_content: Option<String>,
    pub attributes: Attributes,
}

impl From<&Element> for ElementDescriptor {
    fn from(e: &Element) -> Self {
        let d = &e.descriptor;
        ElementDescriptor {
            tag: d.tag.clone(),
            role: d.role.as_ref().map(|r| r.to_string()),
            aria_label: d.aria_label.clone(),
            text_content: d.text_content.clone(),
            attributes: Attributes {
                name: d.name.clone(),
                value: d.value.clone(),
                placeholder: d.placeholder.clone(),
                type_: d.type_.clone(),
                href: d.href.clone(),
                checked: d.checked,
            },
        }
    }
}

/// `element_index`: keys `"1".."N"`, written in numeric order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ElementIndexMap(pub Vec<ElementDescriptor>);

impl Serialize for ElementIndexMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (i, d) in self.0.iter().enumerate() {
            m.serialize_entry(&(i + 1).to_string(), d)?;
        }
        m.end()
    }
}

impl schemars::JsonSchema for ElementIndexMap {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ElementIndexMap".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let descriptor = generator.subschema_for::<ElementDescriptor>();
        schemars::json_schema!({
            "type": "object",
            "description": "The interactive elements by element index, keys \"1\"..\"N\".",
            "propertyNames": { "pattern": "^[1-9][0-9]*$" },
            "additionalProperties": descriptor,
        })
    }
}

/// The per-turn State Object.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct StateObject {
    pub url: String,
    pub page_content: String,
    pub element_index: ElementIndexMap,
    /// Base64 PNG of the viewport, `""` when screenshots are off.
    pub screenshot: String,
    pub state_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskEnd>,
    /// What `request_human` / `wait_for_human` answered (the live link; the person's note and visits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human: Option<Value>,
}

impl StateObject {
    pub fn from_view(view: &PageView, screenshot: Option<String>) -> StateObject {
        StateObject {
            url: view.url.clone(),
            page_content: view.page_content.clone(),
            element_index: ElementIndexMap(view.elements.iter().map(ElementDescriptor::from).collect()),
            screenshot: screenshot.unwrap_or_default(),
            state_hash: view.state_hash(),
            error: None,
            task: None,
            human: None,
        }
    }

    /// This state again, with an error attached.
    pub fn with_error(&self, error: ErrorObject) -> StateObject {
        StateObject { error: Some(error), task: None, human: None, ..self.clone() }
    }

    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("state serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_name_themselves_as_serde_writes_them() {
        for c in [
            ErrorCode::InvalidElementIndex,
            ErrorCode::ElementNotInteractive,
            ErrorCode::ActionValidationFailed,
            ErrorCode::NavigationFailed,
            ErrorCode::InternalBrowserError,
            ErrorCode::HumanUnavailable,
            ErrorCode::HumanTimeout,
            ErrorCode::HandedOver,
        ] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
    }
}
