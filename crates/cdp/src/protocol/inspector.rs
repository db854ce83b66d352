//! `Inspector`: crashes and detaches of a target.

use serde::Deserialize;

use super::{unit_command, EventParams};

unit_command!(
    /// `Inspector.enable` (`Inspector.targetCrashed` only arrives with it).
    Enable = "Inspector.enable"
);

/// `Inspector.targetCrashed`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct TargetCrashed {}

impl EventParams for TargetCrashed {
    const METHOD: &'static str = "Inspector.targetCrashed";
}

/// `Inspector.detached`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Detached {
    #[serde(default)]
    pub reason: String,
}

impl EventParams for Detached {
    const METHOD: &'static str = "Inspector.detached";
}
