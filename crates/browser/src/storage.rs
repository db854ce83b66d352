//! Signed-in sessions: a browser context's cookies and localStorage, saved
//! and restored in Playwright's `storageState` JSON format, so files move
//! between Sightline, Playwright and the tools built on it:
//!
//! ```json
//! {"cookies": [{"name": "sid", "value": "…", "domain": "127.0.0.1", "path": "/",
//!               "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}],
//!  "origins": [{"origin": "http://127.0.0.1:8000",
//!               "localStorage": [{"name": "token", "value": "…"}]}]}
//! ```
//!
//! Cookies go through `Storage.getCookies`/`Storage.setCookies` with the
//! context's id, so they never reach another context. localStorage can only be
//! read or written in a document of its origin (`DOMStorage` answers "Frame not
//! found" without one), so each origin gets a short-lived tab in the context
//! whose navigation to the origin is answered by Sightline itself (`Fetch`,
//! an empty document): no request reaches the site, no page script runs, and
//! the items are read or written there. Which origins a save reads: those of
//! the context's open tabs (main frames) and those the state was restored
//! with; storage of an origin visited earlier and no longer open is not found.
//!
//! The values are secrets: `Debug` hides them, errors never quote them, and
//! [`write_file`] creates the file readable by its owner only (0600).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sightline_cdp::protocol::{fetch, page, runtime, storage, target};
use sightline_cdp::{BrowserContextId, CdpError};

use crate::{Browser, BrowserError};

/// Playwright's `storageState`: cookies and, per origin, localStorage.
///
/// Its JSON Schema is what `save_storage_state` answers (serialized: every
/// field written) and what `bind_browser`/`session_open` take (deserialized:
/// the fields [`StorageState::from_value`] defaults are optional, as the
/// `serde(default)`s below say; `from_value` is the parser, for its
/// path-located errors).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StorageState {
    #[serde(default)]
    pub cookies: Vec<StoredCookie>,
    #[serde(default)]
    pub origins: Vec<OriginStorage>,
}

/// One cookie, as Playwright writes it.
#[derive(Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredCookie {
    pub name: String,
    pub value: String,
    pub domain: String,
    #[serde(default = "root_path")]
    pub path: String,
    /// Seconds since the epoch; -1 for a session cookie.
    #[serde(default = "session_cookie")]
    pub expires: f64,
    #[serde(default)]
    pub http_only: bool,
    #[serde(default)]
    pub secure: bool,
    /// `Strict`, `Lax` or `None`.
    #[serde(default = "lax")]
    #[schemars(extend("enum" = ["Strict", "Lax", "None"]))]
    pub same_site: String,
}

fn root_path() -> String {
    "/".into()
}

fn session_cookie() -> f64 {
    -1.0
}

fn lax() -> String {
    "Lax".into()
}

/// One origin's localStorage.
#[derive(Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OriginStorage {
    /// `scheme://host[:port]`, as `location.origin` says it.
    pub origin: String,
    #[serde(rename = "localStorage")]
    pub local_storage: Vec<NameValue>,
}

#[derive(Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NameValue {
    pub name: String,
    pub value: String,
}

impl std::fmt::Debug for StorageState {
    /// Names only: the values are secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cookies: Vec<String> = self.cookies.iter().map(|c| format!("{}@{}{}", c.name, c.domain, c.path)).collect();
        let origins: Vec<String> =
            self.origins.iter().map(|o| format!("{} ({} items)", o.origin, o.local_storage.len())).collect();
        f.debug_struct("StorageState").field("cookies", &cookies).field("origins", &origins).finish()
    }
}

/// What can go wrong with a storage state. Messages name the file and the
/// place in it, never a value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    #[error("the storage state is not JSON: {detail}")]
    NotJson { line: usize, column: usize, detail: String },
    /// Valid JSON, not in the `storageState` format; `at` is a path such as `cookies[1].sameSite`.
    #[error("the storage state is not in Playwright's storageState format: {at}: {problem}")]
    Invalid { at: String, problem: String },
    #[error("cannot read the storage state {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the storage state {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Browser(#[from] BrowserError),
}

impl From<CdpError> for StorageError {
    fn from(e: CdpError) -> Self {
        StorageError::Browser(BrowserError::Cdp(e))
    }
}

impl StorageError {
    /// True when the state itself is at fault (not JSON, wrong shape), not the browser or the disk.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, StorageError::NotJson { .. } | StorageError::Invalid { .. })
    }
}

fn invalid(at: impl Into<String>, problem: impl Into<String>) -> StorageError {
    StorageError::Invalid { at: at.into(), problem: problem.into() }
}

impl StorageState {
    /// Parse and check a `storageState` document.
    pub fn parse(text: &str) -> Result<StorageState, StorageError> {
        let v: Value = serde_json::from_str(text).map_err(|e| StorageError::NotJson {
            line: e.line(),
            column: e.column(),
            // serde_json's syntax errors quote no input.
            detail: e.to_string(),
        })?;
        StorageState::from_value(&v)
    }

    /// Check a `storageState` value field by field, naming the first thing wrong.
    pub fn from_value(v: &Value) -> Result<StorageState, StorageError> {
        let top =
            v.as_object().ok_or_else(|| invalid("(top level)", format!("expected an object, got {}", kind(v))))?;
        let mut state = StorageState::default();
        for (i, c) in array(top.get("cookies"), "cookies")?.iter().enumerate() {
            state.cookies.push(cookie(c, &format!("cookies[{i}]"))?);
        }
        for (i, o) in array(top.get("origins"), "origins")?.iter().enumerate() {
            let at = format!("origins[{i}]");
            let m = o.as_object().ok_or_else(|| invalid(&at, format!("expected an object, got {}", kind(o))))?;
            let raw = string(m.get("origin"), &format!("{at}.origin"))?;
            let origin = normalize_origin(&raw).ok_or_else(|| {
                invalid(format!("{at}.origin"), format!("{raw:?} is not an http(s) origin (scheme://host[:port])"))
            })?;
            let mut items = Vec::new();
            for (j, it) in array(m.get("localStorage"), &format!("{at}.localStorage"))?.iter().enumerate() {
                let iat = format!("{at}.localStorage[{j}]");
                let im =
                    it.as_object().ok_or_else(|| invalid(&iat, format!("expected an object, got {}", kind(it))))?;
                items.push(NameValue {
                    name: string(im.get("name"), &format!("{iat}.name"))?,
                    value: string(im.get("value"), &format!("{iat}.value"))?,
                });
            }
            state.origins.push(OriginStorage { origin, local_storage: items });
        }
        Ok(state)
    }

    /// The origins it holds localStorage for.
    pub fn origin_names(&self) -> Vec<String> {
        self.origins.iter().map(|o| o.origin.clone()).collect()
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A required array; a missing one is empty (Playwright writes both, other tools may not).
fn array<'a>(v: Option<&'a Value>, at: &str) -> Result<&'a [Value], StorageError> {
    match v {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(invalid(at, format!("expected an array, got {}", kind(other)))),
    }
}

fn string(v: Option<&Value>, at: &str) -> Result<String, StorageError> {
    match v {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(invalid(at, format!("expected a string, got {}", kind(other)))),
        None => Err(invalid(at, "missing")),
    }
}

fn boolean(v: Option<&Value>, at: &str) -> Result<bool, StorageError> {
    match v {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(invalid(at, format!("expected true or false, got {}", kind(other)))),
    }
}

fn cookie(c: &Value, at: &str) -> Result<StoredCookie, StorageError> {
    let m = c.as_object().ok_or_else(|| invalid(at, format!("expected an object, got {}", kind(c))))?;
    let name = string(m.get("name"), &format!("{at}.name"))?;
    let value = string(m.get("value"), &format!("{at}.value"))?;
    let domain = string(m.get("domain"), &format!("{at}.domain"))?;
    if domain.trim_start_matches('.').is_empty() {
        return Err(invalid(format!("{at}.domain"), "empty"));
    }
    let path = match m.get("path") {
        None => "/".to_string(),
        p => string(p, &format!("{at}.path"))?,
    };
    if !path.starts_with('/') {
        return Err(invalid(format!("{at}.path"), format!("{path:?} does not start with /")));
    }
    let expires = match m.get("expires") {
        None => -1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(-1.0),
        Some(other) => {
            return Err(invalid(
                format!("{at}.expires"),
                format!("expected seconds since the epoch (-1 for a session cookie), got {}", kind(other)),
            ))
        }
    };
    let secure = boolean(m.get("secure"), &format!("{at}.secure"))?;
    let same_site = match m.get("sameSite") {
        None => "Lax".to_string(),
        Some(Value::String(s)) if matches!(s.as_str(), "Strict" | "Lax" | "None") => s.clone(),
        Some(Value::String(s)) => {
            return Err(invalid(
                format!("{at}.sameSite"),
                format!("expected \"Strict\", \"Lax\" or \"None\", got {s:?}"),
            ))
        }
        Some(other) => {
            return Err(invalid(format!("{at}.sameSite"), format!("expected a string, got {}", kind(other))))
        }
    };
    if same_site == "None" && !secure {
        return Err(invalid(format!("{at}.sameSite"), "\"None\" needs secure: true (browsers refuse it otherwise)"));
    }
    Ok(StoredCookie {
        name,
        value,
        domain,
        path,
        expires: if expires <= 0.0 { -1.0 } else { expires },
        http_only: boolean(m.get("httpOnly"), &format!("{at}.httpOnly"))?,
        secure,
        same_site,
    })
}

/// `scheme://host[:port]` as `location.origin` spells it (lower case, no
/// default port, no trailing slash), for http and https; else `None`.
pub fn normalize_origin(s: &str) -> Option<String> {
    let u = url::Url::parse(s).ok()?;
    let bare = u.path() == "/" && u.query().is_none() && u.fragment().is_none() && u.username().is_empty();
    (bare && u.password().is_none()).then(|| origin_of(&u)).flatten()
}

/// The origin of an http(s) URL, else `None`.
pub fn origin_of_url(url: &str) -> Option<String> {
    origin_of(&url::Url::parse(url).ok()?)
}

fn origin_of(u: &url::Url) -> Option<String> {
    matches!(u.scheme(), "http" | "https").then(|| u.origin().ascii_serialization())
}

/// Read a `storageState` file.
pub fn read_file(path: &Path) -> Result<StorageState, StorageError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| StorageError::Read { path: path.to_path_buf(), source })?;
    StorageState::parse(&text)
}

/// Write a `storageState` file readable by its owner only (0600, also when it existed).
pub fn write_file(path: &Path, state: &StorageState) -> Result<(), StorageError> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let err = |source| StorageError::Write { path: path.to_path_buf(), source };
    let text = serde_json::to_string_pretty(state).map_err(|e| err(std::io::Error::other(e)))?;
    let mut f =
        std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path).map_err(err)?;
    // An existing file keeps its mode on open: narrow it before anything is written.
    f.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(err)?;
    f.write_all(text.as_bytes()).map_err(err)?;
    f.write_all(b"\n").map_err(err)?;
    f.sync_all().map_err(err)
}

/// How long one origin's short-lived tab may take.
const ORIGIN_TIMEOUT: Duration = Duration::from_secs(10);

impl Browser {
    /// The context a session's tabs go in: the profile's own (default)
    /// context with a persistent `--profile`, so what the session does is
    /// kept in it; otherwise a fresh context.
    pub async fn session_context(&self) -> Result<BrowserContextId, BrowserError> {
        if !self.chromium.persistent_profile() {
            return self.new_context().await;
        }
        let contexts = self.client().execute(None, &target::GetBrowserContexts {}).await?;
        contexts
            .default_browser_context_id
            .ok_or_else(|| BrowserError::Unexpected("Target.getBrowserContexts names no default context".into()))
    }

    /// Restore `state` into a context: its cookies, then each origin's localStorage.
    pub async fn restore_storage(&self, context: &BrowserContextId, state: &StorageState) -> Result<(), StorageError> {
        let cookies: Vec<storage::CookieParam> = state
            .cookies
            .iter()
            .map(|c| storage::CookieParam {
                name: &c.name,
                value: &c.value,
                domain: &c.domain,
                path: &c.path,
                secure: c.secure,
                http_only: c.http_only,
                same_site: Some(c.same_site.as_str()),
                expires: (c.expires > 0.0).then_some(c.expires),
            })
            .collect();
        if !cookies.is_empty() {
            self.client()
                .execute(None, &storage::SetCookies { cookies: &cookies, browser_context_id: Some(context) })
                .await?;
        }
        for o in state.origins.iter().filter(|o| !o.local_storage.is_empty()) {
            let items: Vec<(&str, &str)> =
                o.local_storage.iter().map(|i| (i.name.as_str(), i.value.as_str())).collect();
            let script = format!(
                "(() => {{ if (location.origin !== {origin}) return null; \
                 for (const [k, v] of {items}) localStorage.setItem(k, v); return true; }})()",
                origin = serde_json::to_string(&o.origin).unwrap_or_default(),
                items = serde_json::to_string(&items).unwrap_or_default(),
            );
            self.in_origin(context, &o.origin, &script).await?;
        }
        Ok(())
    }

    /// Save a context's state: every cookie, and the localStorage of the
    /// origins of its open tabs and of `also` (origins with no items are left out).
    pub async fn save_storage(
        &self,
        context: &BrowserContextId,
        also: &[String],
    ) -> Result<StorageState, StorageError> {
        let got = self.client().execute(None, &storage::GetCookies { browser_context_id: Some(context) }).await?;
        let cookies = got
            .cookies
            .into_iter()
            .map(|c| StoredCookie {
                expires: if c.session || c.expires <= 0.0 { -1.0 } else { c.expires },
                same_site: c.same_site.unwrap_or_else(|| "Lax".into()),
                name: c.name,
                value: c.value,
                domain: c.domain,
                path: c.path,
                http_only: c.http_only,
                secure: c.secure,
            })
            .collect();
        let targets = self.client().execute(None, &target::GetTargets {}).await?;
        let mut origins: Vec<String> = targets
            .target_infos
            .iter()
            .filter(|t| t.kind == "page" && t.browser_context_id.as_ref() == Some(context))
            .filter_map(|t| origin_of_url(&t.url))
            .chain(also.iter().filter_map(|o| normalize_origin(o)))
            .collect();
        origins.sort();
        origins.dedup();
        let mut out = Vec::new();
        for origin in origins {
            let script = format!(
                "(() => location.origin !== {o} ? null : Array.from({{ length: localStorage.length }}, (_, i) => {{ \
                 const name = localStorage.key(i); return {{ name, value: localStorage.getItem(name) }}; }}))()",
                o = serde_json::to_string(&origin).unwrap_or_default()
            );
            let items: Vec<NameValue> = serde_json::from_value(self.in_origin(context, &origin, &script).await?)
                .map_err(|e| BrowserError::Unexpected(format!("localStorage of {origin}: {e}")))?;
            if !items.is_empty() {
                out.push(OriginStorage { origin, local_storage: items });
            }
        }
        Ok(StorageState { cookies, origins: out })
    }

    /// Run `script` (which answers `null` until the document is of `origin`)
    /// in a short-lived tab of `context` whose navigation to `origin` is
    /// answered with an empty document (no request reaches the site); the tab
    /// is closed afterwards, whatever happened.
    async fn in_origin(&self, context: &BrowserContextId, origin: &str, script: &str) -> Result<Value, StorageError> {
        let client = self.client();
        let created = client
            .execute(None, &target::CreateTarget { url: "about:blank", browser_context_id: Some(context) })
            .await?;
        let target_id = created.target_id;
        let run = async {
            let session = client
                .execute(None, &target::AttachToTarget { target_id: &target_id, flatten: true })
                .await?
                .session_id;
            let mut events = client.subscribe(Some(Some(session.clone())));
            let patterns =
                [fetch::RequestPattern { url_pattern: "*", resource_type: "Document", request_stage: "Request" }];
            client.execute(Some(&session), &fetch::Enable { patterns: &patterns }).await?;
            let url = format!("{origin}/");
            let answer = async {
                while let Some(ev) = events.recv().await {
                    if let Some(p) = ev.decode::<fetch::RequestPaused>() {
                        let headers = [fetch::ResponseHeader { name: "Content-Type", value: "text/html" }];
                        let fulfil = fetch::FulfillRequest {
                            request_id: &p.request_id,
                            response_code: 200,
                            response_headers: &headers,
                            body: "",
                        };
                        client.execute(Some(&session), &fulfil).await?;
                    }
                }
                Ok::<(), StorageError>(())
            };
            let navigate = async {
                let nav = client.execute(Some(&session), &page::Navigate { url: &url }).await?;
                if let Some(e) = nav.error_text {
                    return Err(StorageError::Browser(BrowserError::NavigationFailed {
                        url: url.clone(),
                        reason: crate::LoadFailure::Other(e),
                    }));
                }
                loop {
                    let r = client.execute(Some(&session), &runtime::Evaluate::new(script).by_value()).await?;
                    if let Some(ex) = r.exception_details {
                        return Err(StorageError::Browser(BrowserError::PageScript(
                            ex.message().unwrap_or("an exception").to_string(),
                        )));
                    }
                    if let Some(v) = r.result.value.filter(|v| !v.is_null()) {
                        return Ok(v);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            };
            tokio::select! {
                r = navigate => r,
                Err(e) = answer => Err(e),
            }
        };
        let result = match tokio::time::timeout(ORIGIN_TIMEOUT, run).await {
            Ok(r) => r,
            Err(_) => Err(StorageError::Browser(BrowserError::Unexpected(format!(
                "the localStorage of {origin} could not be reached within {ORIGIN_TIMEOUT:?}"
            )))),
        };
        let _ = client.execute(None, &target::CloseTarget { target_id: &target_id }).await;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (String, String) {
        match StorageState::parse(text) {
            Err(StorageError::Invalid { at, problem }) => (at, problem),
            other => panic!("expected Invalid for {text}, got {other:?}"),
        }
    }

    #[test]
    fn playwright_files_parse_and_round_trip() {
        let text = r#"{"cookies":[{"name":"sid","value":"s3cret","domain":".example.com","path":"/","expires":1893456000,
            "httpOnly":true,"secure":true,"sameSite":"None"}],
            "origins":[{"origin":"https://example.com","localStorage":[{"name":"token","value":"t0ken"}]}]}"#;
        let s = StorageState::parse(text).unwrap();
        assert_eq!(s.cookies[0].same_site, "None");
        assert_eq!(s.origins[0].local_storage[0].name, "token");
        let again = StorageState::parse(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(again, s);
        let debug = format!("{s:?}");
        assert!(!debug.contains("s3cret") && !debug.contains("t0ken"), "{debug}");
    }

    #[test]
    fn malformed_states_name_what_is_wrong() {
        assert!(matches!(StorageState::parse("{\"cookies\": ["), Err(StorageError::NotJson { .. })));
        assert_eq!(err("[]").0, "(top level)");
        assert_eq!(err(r#"{"cookies":{}}"#).0, "cookies");
        assert_eq!(err(r#"{"cookies":[{"name":"a","value":"b"}]}"#), ("cookies[0].domain".into(), "missing".into()));
        let (at, problem) = err(r#"{"cookies":[{"name":"a","value":"s3cret","domain":"x","sameSite":"Loose"}]}"#);
        assert_eq!(at, "cookies[0].sameSite");
        assert!(problem.contains("Loose") && !problem.contains("s3cret"), "{problem}");
        assert_eq!(err(r#"{"cookies":[{"name":"a","value":1,"domain":"x"}]}"#).0, "cookies[0].value");
        assert_eq!(err(r#"{"origins":[{"origin":"file:///tmp","localStorage":[]}]}"#).0, "origins[0].origin");
        assert_eq!(
            err(r#"{"origins":[{"origin":"http://a.test","localStorage":[{"name":"k"}]}]}"#).0,
            "origins[0].localStorage[0].value"
        );
    }

    #[test]
    fn origins_are_spelled_as_location_origin() {
        assert_eq!(normalize_origin("HTTP://Example.COM:80/").as_deref(), Some("http://example.com"));
        assert_eq!(normalize_origin("https://a.test:8443").as_deref(), Some("https://a.test:8443"));
        assert_eq!(normalize_origin("https://a.test/path"), None);
        assert_eq!(origin_of_url("http://u:p@127.0.0.1:9000/x?y#z").as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(origin_of_url("about:blank"), None);
    }
}
