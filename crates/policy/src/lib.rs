//! One egress policy for every front end, and the proxy that enforces it on
//! every request a page makes.
//!
//! A [`Policy`] is built once from the command line's `--allow PREFIX…`,
//! `--block PREFIX…` and `--block-private` ([`PolicyConfig`]). It answers two
//! questions:
//!
//! - [`Policy::check_url`]: may the agent steer the browser to this URL? No
//!   DNS: scheme, userinfo, prefixes, literal addresses, metadata names.
//! - [`Policy::resolve`]: may a connection be made to this host and port, and
//!   to which addresses? The host is resolved **once**, every address is
//!   checked, and the caller connects only to the returned, checked addresses:
//!   there is no window for DNS rebinding between the check and the connection.
//!
//! [`EgressProxy`] is a small HTTP proxy (CONNECT and absolute-form requests)
//! that runs [`Policy::resolve`] on every request; Chromium is launched with
//! [`EgressProxy::chromium_flags`] so that navigations, redirects, iframes,
//! subresources, fetch/XHR, WebSockets, workers and popups all pass through it,
//! loopback included.
//!
//! URLs are parsed with the `url` crate (the WHATWG parser Chromium follows),
//! so `http://169.254.169.254\@8.8.8.8/` is host 169.254.169.254 here as in
//! the browser, and a URL with userinfo is refused outright.
//!
//! ```
//! use sightline_policy::{Policy, PolicyConfig, Url};
//! let p = Policy::new(&PolicyConfig { allow: vec!["https://example.com/docs/".into()], ..Default::default() }).unwrap();
//! assert!(p.check_url(&Url::parse("https://example.com/docs/a").unwrap()).is_ok());
//! let e = p.check_url(&Url::parse("https://example.com@evil.test/").unwrap()).unwrap_err();
//! assert_eq!(e.rule(), "userinfo");
//! let open = Policy::default();
//! let e = open.check_url(&Url::parse("http://169.254.169.254\\@8.8.8.8/").unwrap()).unwrap_err();
//! assert_eq!(e.rule(), "metadata");
//! ```

mod addr;
mod egress;
mod prefix;
mod proxy;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

pub use addr::{classify, is_metadata_name, AddrClass, METADATA_NAMES};
pub use egress::{Egress, EgressError};
pub use prefix::{Prefix, PrefixError};
pub use proxy::{EgressProxy, Refusal};
pub use url::{Host, Url};

/// URL schemes the browser may be steered to. `file:` and `javascript:` are refused.
pub const NAVIGABLE_SCHEMES: &[&str] = &["http", "https", "about", "data"];

/// The longest URL accepted for navigation, in bytes (Chromium's own limit is 2 MiB).
pub const MAX_URL_BYTES: usize = 2 << 20;

/// How long one host name may take to resolve.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// The policy as the command line states it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyConfig {
    /// When non-empty, only URLs under one of these prefixes are allowed.
    pub allow: Vec<String>,
    /// URLs under one of these prefixes are refused (checked before `allow`).
    pub block: Vec<String>,
    /// Refuse private, loopback, link-local, CGNAT, unique-local addresses,
    /// unless the host is named by a matching `allow` or `trusted` prefix.
    pub block_private: bool,
    /// Prefixes the operator named (`script --url`): the address rules do not
    /// apply under them, and unlike `allow` they restrict nothing else.
    pub trusted: Vec<String>,
}

/// A URL that cannot be navigated to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    #[error("'{url}' is not an absolute URL (like https://example.com/): {detail}")]
    NotAbsolute { url: String, detail: String },
    #[error("scheme '{scheme}:' is not allowed; use one of http, https, about, data")]
    Scheme { scheme: String },
    #[error("'{url}' must have a host, like https://example.com/")]
    NoHost { url: String },
    #[error("URLs with a user name or password are refused ('{url}')")]
    Userinfo { url: String },
    #[error("the URL is {len} bytes long; the limit is {limit}")]
    TooLong { len: usize, limit: usize },
}

/// Parse a URL the browser may be steered to: absolute, scheme in
/// [`NAVIGABLE_SCHEMES`], http(s) with a host and without userinfo.
pub fn parse_navigable(s: &str) -> Result<Url, UrlError> {
    if s.len() > MAX_URL_BYTES {
        return Err(UrlError::TooLong { len: s.len(), limit: MAX_URL_BYTES });
    }
    let url = Url::parse(s).map_err(|e| UrlError::NotAbsolute { url: shorten(s), detail: e.to_string() })?;
    if !NAVIGABLE_SCHEMES.contains(&url.scheme()) {
        return Err(UrlError::Scheme { scheme: url.scheme().to_string() });
    }
    if matches!(url.scheme(), "http" | "https") {
        if url.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::NoHost { url: shorten(s) });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Userinfo { url: shorten(s) });
        }
    }
    Ok(url)
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Why a request or a navigation was refused. [`Refused::rule`] names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error("scheme '{scheme}:' cannot make network requests through the egress proxy")]
    Scheme { scheme: String },
    #[error("{target} matches the block prefix {prefix}")]
    Blocked { target: String, prefix: String },
    #[error("{target} is not under an allowed prefix ({allowed})")]
    NotAllowed { target: String, allowed: String },
    #[error("{host} is a cloud metadata host; allow it explicitly with --allow to reach it")]
    MetadataName { host: String },
    #[error("{host} is {class} ({ip}){hint}", hint = hint(*class))]
    Address { host: String, ip: IpAddr, class: AddrClass },
    #[error("{host} is a local name (loopback)")]
    LocalName { host: String },
    #[error("cannot resolve {host}: {detail}")]
    Unresolvable { host: String, detail: String },
}

fn hint(class: AddrClass) -> &'static str {
    match class {
        AddrClass::Metadata => "; allow it explicitly with --allow to reach it",
        _ => "",
    }
}

impl Refused {
    /// The rule that refused: `url`, `scheme`, `block`, `allow`, `metadata`,
    /// `private_address` or `unresolvable`.
    pub fn rule(&self) -> &'static str {
        match self {
            Refused::Url(UrlError::Scheme { .. }) | Refused::Scheme { .. } => "scheme",
            Refused::Url(UrlError::Userinfo { .. }) => "userinfo",
            Refused::Url(_) => "url",
            Refused::Blocked { .. } => "block",
            Refused::NotAllowed { .. } => "allow",
            Refused::MetadataName { .. } | Refused::Address { class: AddrClass::Metadata, .. } => "metadata",
            Refused::Address { .. } | Refused::LocalName { .. } => "private_address",
            Refused::Unresolvable { .. } => "unresolvable",
        }
    }
}

/// A `--allow` or `--block` value that is not a usable URL prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{flag} {prefix}: {reason}")]
pub struct ConfigError {
    pub flag: &'static str,
    pub prefix: String,
    #[source]
    pub reason: PrefixError,
}

/// What the static check learned, for the address check that follows.
#[derive(Debug, Clone, Copy, Default)]
struct Admission {
    /// A matching allow prefix names this host: private addresses are fine.
    named: bool,
    /// A matching allow prefix names a metadata host or address.
    metadata: bool,
}

/// The egress policy. Cheap to share behind an `Arc`.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    allow: Vec<Prefix>,
    block: Vec<Prefix>,
    trusted: Vec<Prefix>,
    block_private: bool,
}

impl Policy {
    pub fn new(cfg: &PolicyConfig) -> Result<Policy, ConfigError> {
        let parse = |flag: &'static str, list: &[String]| -> Result<Vec<Prefix>, ConfigError> {
            list.iter()
                .map(|p| Prefix::parse(p).map_err(|reason| ConfigError { flag, prefix: p.clone(), reason }))
                .collect()
        };
        Ok(Policy {
            allow: parse("allow", &cfg.allow)?,
            block: parse("block", &cfg.block)?,
            trusted: parse("url", &cfg.trusted)?,
            block_private: cfg.block_private,
        })
    }

    /// True when only the built-in rules apply (metadata refused, nothing else).
    pub fn is_default(&self) -> bool {
        self.allow.is_empty() && self.block.is_empty() && self.trusted.is_empty() && !self.block_private
    }

    /// May the browser be steered to `url`? No DNS lookups: names are checked
    /// by [`Policy::resolve`] when the connection is made.
    pub fn check_url(&self, url: &Url) -> Result<(), Refused> {
        self.admit_url(url).map(|_| ())
    }

    /// [`Policy::check_url`], then resolve the host once and check every
    /// address. Returns the addresses to connect to (empty for `about:` and `data:`).
    pub async fn resolve_url(&self, url: &Url) -> Result<Vec<SocketAddr>, Refused> {
        let adm = self.admit_url(url)?;
        match (url.host(), url.port_or_known_default()) {
            (Some(host), Some(port)) => self.lookup(&host.to_owned(), port, adm).await,
            _ => Ok(Vec::new()),
        }
    }

    /// For a tunnel (`CONNECT host:port`), where scheme and path are unknown:
    /// prefixes are compared on host and port, then the host is resolved once
    /// and every address checked. Returns the addresses to connect to.
    pub async fn resolve(&self, host: &Host<String>, port: u16) -> Result<Vec<SocketAddr>, Refused> {
        let target = match host {
            Host::Ipv6(ip) => format!("[{ip}]:{port}"),
            h => format!("{h}:{port}"),
        };
        if let Some(p) = self.block.iter().find(|p| p.covers_tunnel(host, port)) {
            return Err(Refused::Blocked { target, prefix: p.text().to_string() });
        }
        let trusted: Vec<&Prefix> = self.trusted.iter().filter(|p| p.admits_tunnel(host, port)).collect();
        let mut matched: Vec<&Prefix> = self.allow.iter().filter(|p| p.admits_tunnel(host, port)).collect();
        if !self.allow.is_empty() && matched.is_empty() && trusted.is_empty() {
            return Err(Refused::NotAllowed { target, allowed: self.allowed_list() });
        }
        matched.extend(trusted);
        let adm = admission(&matched);
        self.check_name(host, adm)?;
        self.lookup(host, port, adm).await
    }

    fn allowed_list(&self) -> String {
        self.allow.iter().map(Prefix::text).collect::<Vec<_>>().join(", ")
    }

    fn admit_url(&self, url: &Url) -> Result<Admission, Refused> {
        match url.scheme() {
            "about" | "data" => return Ok(Admission::default()),
            "http" | "https" | "ws" | "wss" => {}
            other => return Err(UrlError::Scheme { scheme: other.to_string() }.into()),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Userinfo { url: url.to_string() }.into());
        }
        let Some(host) = url.host() else { return Err(UrlError::NoHost { url: url.to_string() }.into()) };
        let host = host.to_owned();
        if let Some(p) = self.block.iter().find(|p| p.covers_url(url)) {
            return Err(Refused::Blocked { target: url.to_string(), prefix: p.text().to_string() });
        }
        let trusted: Vec<&Prefix> = self.trusted.iter().filter(|p| p.covers_url(url)).collect();
        let mut matched: Vec<&Prefix> = self.allow.iter().filter(|p| p.covers_url(url)).collect();
        if !self.allow.is_empty() && matched.is_empty() && trusted.is_empty() {
            return Err(Refused::NotAllowed { target: url.to_string(), allowed: self.allowed_list() });
        }
        matched.extend(trusted);
        let adm = admission(&matched);
        self.check_name(&host, adm)?;
        Ok(adm)
    }

    /// Checks on the host itself: literal addresses, metadata and local names.
    fn check_name(&self, host: &Host<String>, adm: Admission) -> Result<(), Refused> {
        match host {
            Host::Ipv4(ip) => self.check_addr(&host.to_string(), IpAddr::V4(*ip), adm),
            Host::Ipv6(ip) => self.check_addr(&host.to_string(), IpAddr::V6(*ip), adm),
            Host::Domain(d) => {
                if is_metadata_name(d) && !adm.metadata {
                    return Err(Refused::MetadataName { host: d.clone() });
                }
                let d = d.trim_end_matches('.');
                if self.block_private && !adm.named && (d == "localhost" || d.ends_with(".localhost")) {
                    return Err(Refused::LocalName { host: d.to_string() });
                }
                Ok(())
            }
        }
    }

    fn check_addr(&self, host: &str, ip: IpAddr, adm: Admission) -> Result<(), Refused> {
        match classify(ip) {
            Some(AddrClass::Metadata) if !adm.metadata => {
                Err(Refused::Address { host: host.to_string(), ip, class: AddrClass::Metadata })
            }
            Some(AddrClass::Metadata) | None => Ok(()),
            Some(class) if self.block_private && !adm.named => {
                Err(Refused::Address { host: host.to_string(), ip, class })
            }
            Some(_) => Ok(()),
        }
    }

    async fn lookup(&self, host: &Host<String>, port: u16, adm: Admission) -> Result<Vec<SocketAddr>, Refused> {
        let addrs: Vec<SocketAddr> = match host {
            Host::Ipv4(ip) => vec![SocketAddr::new(IpAddr::V4(*ip), port)],
            Host::Ipv6(ip) => vec![SocketAddr::new(IpAddr::V6(*ip), port)],
            Host::Domain(d) => {
                let unresolvable = |detail: String| Refused::Unresolvable { host: d.clone(), detail };
                match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((d.as_str(), port))).await {
                    Ok(Ok(it)) => it.collect(),
                    Ok(Err(e)) => return Err(unresolvable(e.to_string())),
                    Err(_) => return Err(unresolvable(format!("no answer within {RESOLVE_TIMEOUT:?}"))),
                }
            }
        };
        if addrs.is_empty() {
            return Err(Refused::Unresolvable { host: host.to_string(), detail: "no addresses".into() });
        }
        for a in &addrs {
            self.check_addr(&host.to_string(), a.ip(), adm)?;
        }
        Ok(addrs)
    }
}

fn admission(matched: &[&Prefix]) -> Admission {
    Admission {
        named: !matched.is_empty(),
        metadata: matched.iter().any(|p| match p.host() {
            Host::Domain(d) => is_metadata_name(d),
            Host::Ipv4(ip) => classify(IpAddr::V4(*ip)) == Some(AddrClass::Metadata),
            Host::Ipv6(ip) => classify(IpAddr::V6(*ip)) == Some(AddrClass::Metadata),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], block: &[&str], block_private: bool) -> Policy {
        Policy::new(&PolicyConfig {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            block: block.iter().map(|s| s.to_string()).collect(),
            block_private,
            trusted: Vec::new(),
        })
        .unwrap()
    }

    fn rule(p: &Policy, url: &str) -> &'static str {
        match parse_navigable(url) {
            Err(e) => Refused::from(e).rule(),
            Ok(u) => p.check_url(&u).map(|_| "ok").unwrap_or_else(|e| e.rule()),
        }
    }

    fn resolve(p: &Policy, url: &str) -> Result<Vec<SocketAddr>, Refused> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(p.resolve_url(&Url::parse(url).unwrap()))
    }

    #[test]
    fn navigable_urls() {
        let p = Policy::default();
        assert_eq!(rule(&p, "https://example.com/"), "ok");
        assert_eq!(rule(&p, "about:blank"), "ok");
        assert_eq!(rule(&p, "data:text/html,hi"), "ok");
        assert_eq!(rule(&p, "file:///etc/passwd"), "scheme");
        assert_eq!(rule(&p, "javascript:alert(1)"), "scheme");
        assert_eq!(rule(&p, "chrome://crash"), "scheme");
        assert_eq!(rule(&p, "/relative"), "url");
        assert_eq!(rule(&p, "http:///x"), "ok"); // WHATWG: host "x"
        assert_eq!(rule(&p, "https://user:pw@example.com/"), "userinfo");
        assert_eq!(rule(&p, "https://example.com@evil.test/"), "userinfo");
    }

    #[test]
    fn metadata_is_refused_in_every_spelling_unless_named() {
        let p = Policy::default();
        for url in [
            "http://169.254.169.254/latest/meta-data",
            "http://169.254.169.254\\@8.8.8.8/",
            "http://2852039166/",
            "http://0xa9.0xfe.0xa9.0xfe/",
            "http://0251.0376.0251.0376/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[fd00:ec2::254]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.GOOGLE.INTERNAL./",
            "http://169.254.170.2/v2/credentials",
        ] {
            assert_eq!(rule(&p, url), "metadata", "{url}");
        }
        let named = policy(&["http://169.254.169.254/"], &[], true);
        assert_eq!(rule(&named, "http://169.254.169.254/latest"), "ok");
        // Private addresses are fine by default, refused with block_private.
        assert_eq!(rule(&p, "http://127.0.0.1:8080/"), "ok");
        let private = policy(&[], &[], true);
        for url in [
            "http://127.0.0.1:8080/",
            "http://10.0.0.1/",
            "http://[::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://[fd12::1]/",
            "http://100.64.1.1/",
            "http://localhost:3000/",
            "http://a.localhost/",
            "http://0/",
        ] {
            assert_eq!(rule(&private, url), "private_address", "{url}");
        }
        assert_eq!(rule(&private, "http://8.8.8.8/"), "ok");
        // An allow prefix naming the host lifts the private rule for it, and only for it.
        let dev = policy(&["http://127.0.0.1:8080/"], &[], true);
        assert_eq!(rule(&dev, "http://127.0.0.1:8080/x"), "ok");
        assert_eq!(rule(&dev, "http://127.0.0.1:8081/x"), "allow");
        // A trusted prefix (the operator's start page) lifts it without restricting anything else.
        let script = Policy::new(&PolicyConfig {
            block_private: true,
            trusted: vec!["http://127.0.0.1:8080/app/".into()],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(rule(&script, "http://127.0.0.1:8080/app/x"), "ok");
        assert_eq!(rule(&script, "http://127.0.0.1:8080/other"), "private_address");
        assert_eq!(rule(&script, "http://8.8.8.8/"), "ok");
    }

    #[test]
    fn prefixes_compare_parsed_parts() {
        let p = policy(&["https://example.com"], &[], false);
        assert_eq!(rule(&p, "https://example.com/"), "ok");
        assert_eq!(rule(&p, "https://example.com:443/a"), "ok");
        assert_eq!(rule(&p, "https://EXAMPLE.com/a"), "ok");
        assert_eq!(rule(&p, "https://example.com@evil.test/"), "userinfo");
        assert_eq!(rule(&p, "https://example.com.evil.test/"), "allow");
        assert_eq!(rule(&p, "https://example.com:8443/"), "allow");
        assert_eq!(rule(&p, "http://example.com/"), "allow");
        let docs = policy(&["https://example.com/docs"], &[], false);
        assert_eq!(rule(&docs, "https://example.com/docs"), "ok");
        assert_eq!(rule(&docs, "https://example.com/docs/a?b"), "ok");
        assert_eq!(rule(&docs, "https://example.com/docs.html"), "ok"); // a path prefix, as written
        let dir = policy(&["https://example.com/docs/"], &[], false);
        assert_eq!(rule(&dir, "https://example.com/docsecret"), "allow");
        assert_eq!(rule(&dir, "https://example.com/docs/%2e%2e/admin"), "allow"); // WHATWG: %2e%2e is .. too
        assert_eq!(rule(&dir, "https://example.com/docs/../admin"), "allow");
        assert_eq!(rule(&docs, "https://example.com/docs/../admin"), "allow"); // normalised to /admin
        let block = policy(&[], &["http://127.0.0.1:9/"], false);
        assert_eq!(rule(&block, "http://127.0.0.1:9/x"), "block");
        assert_eq!(rule(&block, "http://127.0.0.1:10/x"), "ok");
        assert!(Policy::new(&PolicyConfig { allow: vec!["example.com".into()], ..Default::default() }).is_err());
        assert!(
            Policy::new(&PolicyConfig { allow: vec!["https://u@example.com/".into()], ..Default::default() }).is_err()
        );
    }

    #[test]
    fn resolution_checks_every_address() {
        let private = policy(&[], &[], true);
        let e = resolve(&private, "http://localhost.:1/").unwrap_err();
        assert_eq!(e.rule(), "private_address", "{e}");
        let open = Policy::default();
        let addrs = resolve(&open, "http://127.0.0.1:5/").unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:5".parse().unwrap()]);
        assert!(resolve(&open, "data:text/html,x").unwrap().is_empty());
        let e = resolve(&open, "http://nonexistent.invalid/").unwrap_err();
        assert_eq!(e.rule(), "unresolvable");
    }
}
