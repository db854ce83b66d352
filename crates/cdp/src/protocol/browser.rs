//! `Browser`.

use serde::{Deserialize, Serialize};

use super::{unit_command, Command};

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

unit_command!(
    /// `Browser.close`: an orderly shutdown (the profile's cookies are written out).
    Close = "Browser.close"
);
