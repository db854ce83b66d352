//! `--allow` / `--block` prefixes, compared on parsed parts, never as strings.

use url::{Host, Url};

/// A parsed URL prefix: scheme, host, port and path.
///
/// A URL is under the prefix when its scheme, host and port (defaults filled
/// in) are equal and its normalised path starts with the prefix's path (`/docs`
/// covers `/docs/a` and `/docs.html`; write `/docs/` for a directory only).
/// `ws:` and `wss:` count as `http:` and `https:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    text: String,
    scheme: String,
    host: Host<String>,
    port: u16,
    path: String,
}

fn web_scheme(s: &str) -> &str {
    match s {
        "ws" => "http",
        "wss" => "https",
        other => other,
    }
}

/// Why a text is not a usable URL prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrefixError {
    #[error("not an absolute URL ({source}); write it like https://example.com/")]
    NotAbsolute {
        #[source]
        source: url::ParseError,
    },
    #[error("scheme '{scheme}:' cannot be a prefix; use http or https")]
    Scheme { scheme: String },
    #[error("a prefix cannot hold a user name or password")]
    Userinfo,
    #[error("a prefix needs a host")]
    NoHost,
    #[error("a prefix needs a port")]
    NoPort,
}

impl Prefix {
    pub fn parse(text: &str) -> Result<Prefix, PrefixError> {
        let url = Url::parse(text).map_err(|source| PrefixError::NotAbsolute { source })?;
        if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
            return Err(PrefixError::Scheme { scheme: url.scheme().to_string() });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(PrefixError::Userinfo);
        }
        let host = url.host().ok_or(PrefixError::NoHost)?.to_owned();
        let port = url.port_or_known_default().ok_or(PrefixError::NoPort)?;
        Ok(Prefix {
            text: text.to_string(),
            scheme: web_scheme(url.scheme()).to_string(),
            host,
            port,
            path: url.path().to_string(),
        })
    }

    /// The prefix as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn host(&self) -> &Host<String> {
        &self.host
    }

    fn same_origin(&self, host: &Host<String>, port: u16) -> bool {
        self.port == port
            && match (&self.host, host) {
                (Host::Domain(a), Host::Domain(b)) => a.trim_end_matches('.') == b.trim_end_matches('.'),
                (a, b) => a == b,
            }
    }

    fn covers_path(&self, path: &str) -> bool {
        path.starts_with(&self.path)
    }

    /// Is `url` under this prefix?
    pub fn covers_url(&self, url: &Url) -> bool {
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else { return false };
        web_scheme(url.scheme()) == self.scheme
            && self.same_origin(&host.to_owned(), port)
            && self.covers_path(url.path())
    }

    /// An allow prefix admits a tunnel to its host and port (a tunnel's path is not visible).
    pub fn admits_tunnel(&self, host: &Host<String>, port: u16) -> bool {
        self.same_origin(host, port)
    }

    /// A block prefix covers a tunnel when it blocks the whole origin (path `/`).
    pub fn covers_tunnel(&self, host: &Host<String>, port: u16) -> bool {
        self.path == "/" && self.same_origin(host, port)
    }
}
