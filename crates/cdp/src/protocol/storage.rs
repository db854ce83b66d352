//! `Storage`: the cookies of one browser context.

use serde::{Deserialize, Serialize};

use super::{Command, Empty};
use crate::BrowserContextId;

/// `Storage.getCookies`: every cookie of a context (the default context without an id).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetCookies<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<&'a BrowserContextId>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GetCookiesReply {
    pub cookies: Vec<Cookie>,
}

impl Command for GetCookies<'_> {
    const METHOD: &'static str = "Storage.getCookies";
    type Response = GetCookiesReply;
}

/// `Network.Cookie` (the fields we read).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cookie {
    pub name: String,
    pub value: String,
    pub domain: String,
    pub path: String,
    /// Seconds since the epoch; -1 for a session cookie.
    pub expires: f64,
    pub http_only: bool,
    pub secure: bool,
    #[serde(default)]
    pub session: bool,
    /// `Strict`, `Lax` or `None`; absent when the cookie did not say.
    #[serde(default)]
    pub same_site: Option<String>,
}

/// `Storage.setCookies`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetCookies<'a> {
    pub cookies: &'a [CookieParam<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<&'a BrowserContextId>,
}

impl Command for SetCookies<'_> {
    const METHOD: &'static str = "Storage.setCookies";
    type Response = Empty;
}

/// `Network.CookieParam` (the fields we send).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CookieParam<'a> {
    pub name: &'a str,
    pub value: &'a str,
    pub domain: &'a str,
    pub path: &'a str,
    pub secure: bool,
    pub http_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_site: Option<&'a str>,
    /// Absent for a session cookie.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
}
