//! The policy gate every `browser` primitive passes before it runs.
//!
//! It checks where the agent *steers* the browser (`goto` targets) with the
//! one egress policy of `sightline-policy`: URLs parsed as Chromium parses
//! them, prefixes compared on scheme, host, port and path, userinfo refused,
//! names resolved and every address checked. What a page does once opened
//! (redirects, sub-resources, `location` set from `browser.eval()`) is not
//! seen here: `sightline script` launches Chromium behind the egress proxy,
//! which applies the same policy to every request the page makes.

use std::sync::Arc;

pub use sightline_policy::Egress;
use sightline_policy::{PolicyConfig, Refused};

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

impl From<Refused> for Denied {
    fn from(r: Refused) -> Denied {
        Denied { reason: format!("{r} (rule {})", r.rule()) }
    }
}

#[allow(async_fn_in_trait)]
pub trait Policy: Send + Sync + 'static {
    async fn check(&self, req: &Request<'_>) -> Result<(), Denied>;
}

/// URL allow prefixes, and no private, loopback, link-local, CGNAT or
/// cloud-metadata addresses (names are resolved: a name that resolves to one
/// is refused too). The seed's default for scripts.
#[derive(Debug, Clone, Default)]
pub struct DefaultPolicy {
    /// When non-empty, `goto` targets must be under one of these.
    pub url_allow_prefixes: Vec<String>,
    /// Allow private and loopback addresses (local development only).
    pub allow_private: bool,
}

fn gate(tool: &str) -> Result<(), Denied> {
    if tool != "browser" {
        return Err(Denied { reason: format!("unknown tool {tool:?}") });
    }
    Ok(())
}

impl Policy for DefaultPolicy {
    async fn check(&self, req: &Request<'_>) -> Result<(), Denied> {
        gate(req.tool)?;
        let Some(url) = req.url else { return Ok(()) };
        let cfg = PolicyConfig {
            allow: self.url_allow_prefixes.clone(),
            block_private: !self.allow_private,
            ..PolicyConfig::default()
        };
        let egress = Egress::without_proxy(&cfg).map_err(|e| Denied { reason: e.to_string() })?;
        Ok(egress.check_navigation(url).await?)
    }
}

/// The process's egress policy as the pack's gate.
#[derive(Clone)]
pub struct EgressGate(pub Arc<Egress>);

impl Policy for EgressGate {
    async fn check(&self, req: &Request<'_>) -> Result<(), Denied> {
        gate(req.tool)?;
        let Some(url) = req.url else { return Ok(()) };
        Ok(self.0.check_navigation(url).await?)
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
            ("http://[fd00:ec2::254]/", "metadata"),
            ("http://169.254.169.254\\@8.8.8.8/", "metadata"),
            ("https://example.com@127.0.0.1/", "user name"),
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
        let e = check(&p, "http://93.184.215.14@8.8.8.8/").unwrap_err();
        assert!(e.reason.contains("user name"), "{}", e.reason);
        assert!(check(&p, "http://93.184.215.14/page").is_ok());
        let e = check(&p, "http://8.8.8.8/").unwrap_err();
        assert!(e.reason.contains("not under an allowed prefix"), "{}", e.reason);
        let local = DefaultPolicy { url_allow_prefixes: vec![], allow_private: true };
        assert!(check(&local, "http://127.0.0.1:1/").is_ok());
    }
}
