//! The policy gate every `browser` primitive passes before it runs.
//!
//! What it gates: where the agent may *steer* the browser (`goto` targets), and
//! which primitives it may call. What it does not gate: what a page does once
//! opened. A page the agent was allowed to open can redirect itself, load
//! sub-resources from anywhere, or be sent elsewhere by `browser.eval()` setting
//! `location`. Treat the allow-list as a statement about where the agent may
//! steer, not as a network boundary.

use std::net::{IpAddr, Ipv4Addr};

/// One gated call: tool `browser`, the primitive in `action`, and for `goto` the target.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub tool: &'a str,
    pub action: &'a str,
    pub url: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused by policy: {reason}")]
pub struct Denied {
    pub reason: String,
}

#[allow(async_fn_in_trait)]
pub trait Policy: Send + Sync + 'static {
    async fn check(&self, req: &Request<'_>) -> Result<(), Denied>;
}

/// URL allow prefixes, and no private, loopback, link-local or cloud-metadata
/// addresses (names are resolved: a name that resolves to one is refused too).
#[derive(Debug, Clone, Default)]
pub struct DefaultPolicy {
    /// When non-empty, `goto` targets must start with one of these.
    pub url_allow_prefixes: Vec<String>,
    /// Allow private and loopback addresses (local development only).
    pub allow_private: bool,
}

fn deny<T>(reason: impl Into<String>) -> Result<T, Denied> {
    Err(Denied { reason: reason.into() })
}

/// Why an address is off limits, if it is.
pub fn forbidden_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden_v4(v4);
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Some("a loopback address")
            } else if v6.is_unspecified() {
                Some("an unspecified address")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if s[0] & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else {
                None
            }
        }
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        Some("a cloud metadata address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_unspecified() || ip.is_broadcast() {
        Some("an unroutable address")
    } else if o[0] == 100 && (64..128).contains(&o[1]) {
        Some("a shared (carrier-grade NAT) address")
    } else {
        None
    }
}

/// Split `http(s)://host:port/...` into (scheme, host, port).
fn parse(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, tail) = v6.split_once(']')?;
        (h.to_string(), tail.strip_prefix(':').and_then(|p| p.parse().ok()))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.parse().ok()?)),
            None => (authority.to_string(), None),
        }
    };
    let default = if scheme == "https" { 443 } else { 80 };
    Some((scheme, host.to_ascii_lowercase(), port.unwrap_or(default)))
}

impl Policy for DefaultPolicy {
    async fn check(&self, req: &Request<'_>) -> Result<(), Denied> {
        if req.tool != "browser" {
            return deny(format!("unknown tool {:?}", req.tool));
        }
        let Some(url) = req.url else { return Ok(()) };
        if url == "about:blank" {
            return Ok(());
        }
        if !self.url_allow_prefixes.is_empty() && !self.url_allow_prefixes.iter().any(|p| url.starts_with(p.as_str())) {
            return deny(format!("{url} is not under an allowed prefix ({})", self.url_allow_prefixes.join(", ")));
        }
        let Some((scheme, host, port)) = parse(url) else {
            return deny(format!("{url} is not an absolute http(s) URL"));
        };
        if scheme != "http" && scheme != "https" {
            return deny(format!("scheme {scheme}: is not allowed, only http and https"));
        }
        if self.allow_private {
            return Ok(());
        }
        if host == "localhost" || host.ends_with(".localhost") || host == "metadata.google.internal" {
            return deny(format!("{host} is a local or metadata host"));
        }
        let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => match tokio::net::lookup_host((host.as_str(), port)).await {
                Ok(it) => it.map(|a| a.ip()).collect(),
                Err(e) => return deny(format!("cannot resolve {host}: {e}")),
            },
        };
        for ip in addrs {
            if let Some(why) = forbidden_address(ip) {
                return deny(format!("{host} is {why} ({ip})"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(p: &DefaultPolicy, url: &str) -> Result<(), Denied> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(p.check(&Request { tool: "browser", action: "goto", url: Some(url) }))
    }

    #[test]
    fn refuses_private_loopback_link_local_and_metadata() {
        let p = DefaultPolicy::default();
        for (url, why) in [
            ("http://127.0.0.1:8080/", "loopback"),
            ("http://10.1.2.3/", "private"),
            ("http://192.168.0.1/", "private"),
            ("http://172.20.0.1/", "private"),
            ("http://169.254.169.254/latest/meta-data", "metadata"),
            ("http://[::1]/", "loopback"),
            ("http://[fd00:ec2::254]/", "private"),
            ("http://[::ffff:127.0.0.1]/", "loopback"),
            ("http://localhost:3000/", "local"),
            ("http://100.64.0.1/", "carrier-grade"),
        ] {
            let e = check(&p, url).unwrap_err();
            assert!(e.reason.contains(why), "{url}: {}", e.reason);
        }
        assert!(check(&p, "ftp://example.com/").unwrap_err().reason.contains("scheme"));
        assert!(check(&p, "http://8.8.8.8/").is_ok());
        assert!(check(&p, "about:blank").is_ok());
    }

    #[test]
    fn applies_allow_prefixes() {
        let p = DefaultPolicy { url_allow_prefixes: vec!["http://93.184.215.14/".into()], allow_private: false };
        assert!(check(&p, "http://93.184.215.14/page").is_ok());
        let e = check(&p, "http://8.8.8.8/").unwrap_err();
        assert!(e.reason.contains("not under an allowed prefix"), "{}", e.reason);
        let local = DefaultPolicy { url_allow_prefixes: vec![], allow_private: true };
        assert!(check(&local, "http://127.0.0.1:1/").is_ok());
    }
}
