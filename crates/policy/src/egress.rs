//! [`Egress`]: the policy and, when a browser is launched, its proxy, as one
//! handle every front end shares.

use std::sync::Arc;

use crate::{parse_navigable, EgressProxy, Policy, PolicyConfig, Refusal, Refused};

/// The egress policy of one Sightline process and the proxy enforcing it.
pub struct Egress {
    policy: Arc<Policy>,
    proxy: Option<EgressProxy>,
}

/// Setting up egress failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EgressError {
    #[error(transparent)]
    Config(#[from] crate::ConfigError),
    #[error("cannot start the egress proxy: {0}")]
    Proxy(#[from] std::io::Error),
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress")
            .field("policy", &self.policy)
            .field("proxy", &self.proxy.as_ref().map(EgressProxy::addr))
            .finish()
    }
}

impl Egress {
    /// The policy alone: agent navigations are checked, but nothing sees the
    /// page's own requests (for a browser we attach to and cannot reconfigure).
    pub fn without_proxy(cfg: &PolicyConfig) -> Result<Egress, EgressError> {
        Ok(Egress { policy: Arc::new(Policy::new(cfg)?), proxy: None })
    }

    /// The policy and a running proxy: launch Chromium with [`Egress::chromium_flags`].
    /// Must be called within a tokio runtime.
    pub fn with_proxy(cfg: &PolicyConfig) -> Result<Egress, EgressError> {
        let policy = Arc::new(Policy::new(cfg)?);
        let proxy = EgressProxy::start(policy.clone())?;
        Ok(Egress { policy, proxy: Some(proxy) })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn proxy(&self) -> Option<&EgressProxy> {
        self.proxy.as_ref()
    }

    /// Switches for a launched Chromium (empty without a proxy).
    pub fn chromium_flags(&self) -> Vec<String> {
        self.proxy.as_ref().map(EgressProxy::chromium_flags).unwrap_or_default()
    }

    /// May the agent steer the browser to `url`? Parses it, applies the
    /// prefixes and resolves the host (every address checked). The proxy
    /// checks again when the browser connects.
    pub async fn check_navigation(&self, url: &str) -> Result<(), Refused> {
        let parsed = parse_navigable(url)?;
        self.policy.resolve_url(&parsed).await.map(|_| ())
    }

    /// A mark for [`Egress::refusals_since`].
    pub fn mark(&self) -> u64 {
        self.proxy.as_ref().map_or(0, EgressProxy::next_seq)
    }

    /// What the proxy refused since `mark` (to explain a failed page load).
    pub fn refusals_since(&self, mark: u64) -> Vec<Refusal> {
        self.proxy.as_ref().map(|p| p.refusals_since(mark)).unwrap_or_default()
    }

    /// One sentence on why a load may have failed: the last refusal since `mark`.
    pub fn explain_since(&self, mark: u64) -> Option<String> {
        self.refusals_since(mark)
            .last()
            .map(|r| format!("the egress policy refused {} (rule {}): {}", r.target, r.refused.rule(), r.refused))
    }
}
