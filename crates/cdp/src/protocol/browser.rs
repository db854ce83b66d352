//! `Browser`.

use serde::{Deserialize, Serialize};

use super::Command;

/// `Browser.getVersion`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GetVersion {}

#[derive(Debug, Clone, Deserialize)]
pub struct GetVersionReply {
    /// e.g. `HeadlessChrome/140.0…`.
    pub product: String,
}

impl Command for GetVersion {
    const METHOD: &'static str = "Browser.getVersion";
    type Response = GetVersionReply;
}
