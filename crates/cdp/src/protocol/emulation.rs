//! `Emulation`.

use serde::Serialize;

use super::{Command, Empty};

/// `Emulation.setDeviceMetricsOverride`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetDeviceMetricsOverride {
    pub width: u32,
    pub height: u32,
    pub device_scale_factor: f64,
    pub mobile: bool,
}

impl Command for SetDeviceMetricsOverride {
    const METHOD: &'static str = "Emulation.setDeviceMetricsOverride";
    type Response = Empty;
}

/// `Emulation.setScriptExecutionDisabled`: while disabled, no script of the
/// page's own runs (no callback, handler or timer of the main world); DevTools
/// evaluation still does. A setting of the page: it outlives a navigation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SetScriptExecutionDisabled {
    pub value: bool,
}

impl Command for SetScriptExecutionDisabled {
    const METHOD: &'static str = "Emulation.setScriptExecutionDisabled";
    type Response = Empty;
}
