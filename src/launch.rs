//! [`BrowserOpts`] → the egress policy, the browser and the tab options every
//! command that drives a browser starts from.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sightline_api::{Egress, PolicyConfig};
use sightline_browser::{Browser, BrowserOptions, SettleOptions, TabOptions};
use sightline_cdp::LaunchOptions;

use crate::cli::{self, BrowserOpts};

/// The egress policy from `--allow`, `--block` and `--block-private`.
pub fn egress(b: &BrowserOpts) -> Result<Arc<Egress>> {
    egress_with(b, false, Vec::new())
}

/// The egress policy, with private addresses refused unless asked otherwise
/// (`script` without `--allow-private`) and `trusted` prefixes (`script`'s
/// `--url` origin). A launched browser gets the egress proxy; a browser we
/// attach to cannot be reconfigured, so explicit rules are refused with
/// `--connect` rather than silently enforced only in part.
pub fn egress_with(b: &BrowserOpts, private_refused: bool, trusted: Vec<String>) -> Result<Arc<Egress>> {
    let cfg = PolicyConfig {
        allow: b.allow.clone(),
        block: b.block.clone(),
        block_private: b.block_private || private_refused,
        trusted,
    };
    let explicit = !cfg.allow.is_empty() || !cfg.block.is_empty() || b.block_private;
    let egress = match &b.connect {
        Some(_) if explicit => bail!(
            "--allow/--block/--block-private need a browser Sightline launches (its requests go through Sightline's egress proxy); they cannot be enforced on a --connect browser"
        ),
        Some(_) => Egress::without_proxy(&cfg)?,
        None => Egress::with_proxy(&cfg)?,
    };
    Ok(Arc::new(egress))
}

/// `scheme://host:port/` of an http(s) URL.
pub fn origin_prefix(url: &str) -> Option<String> {
    let u = sightline_policy::Url::parse(url).ok()?;
    matches!(u.scheme(), "http" | "https").then(|| format!("{}/", u.origin().ascii_serialization()))
}

/// How to get the browser: launched behind `egress`'s proxy (in `profile`, if
/// given), or attached.
pub fn browser_options(b: &BrowserOpts, profile: Option<PathBuf>, egress: &Egress) -> BrowserOptions {
    let mut extra_args = egress.chromium_flags();
    if b.no_chrome_sandbox {
        extra_args.push("--no-sandbox".into());
    }
    BrowserOptions {
        launch: LaunchOptions { chrome: b.chrome.clone(), extra_args, profile },
        connect: b.connect.clone(),
    }
}

/// A browser behind `egress` (keep the `Arc` alive as long as the browser).
pub async fn start(b: &BrowserOpts, profile: Option<PathBuf>, egress: Arc<Egress>) -> Result<(Browser, Arc<Egress>)> {
    let browser = Browser::start(&browser_options(b, profile, &egress)).await?;
    Ok((browser, egress))
}

/// A browser with the command line's egress policy and no profile.
pub async fn start_browser(b: &BrowserOpts) -> Result<(Browser, Arc<Egress>)> {
    start(b, None, egress(b)?).await
}

pub fn tab_options(b: &BrowserOpts) -> Result<TabOptions> {
    let mut settle = SettleOptions::default();
    if let Some(ms) = &b.settle_ms {
        let ms: u64 = ms.parse().with_context(|| format!("--settle-ms expects milliseconds, got {ms}"))?;
        settle.cap = Duration::from_millis(ms.clamp(0, 10_000));
    }
    Ok(TabOptions { viewport: cli::viewport(b.viewport.as_deref())?, settle })
}

/// A start page must be an absolute http(s) URL.
pub fn check_url(url: &str) -> Result<()> {
    sightline_api::check_url(url).map_err(|e| anyhow::anyhow!("{e}"))
}

/// `--live HOST:PORT`: the live views of `api`'s sessions on a loopback listener
/// (a live view has no credential but its ticket), announced on stderr as `sightline CMD: …`.
pub async fn live_view(
    api: &Arc<sightline_api::Api>,
    listen: std::net::SocketAddr,
    cmd: &str,
) -> Result<std::net::SocketAddr> {
    if !listen.ip().is_loopback() {
        anyhow::bail!("--live {listen} is not a loopback address: a live view has no credential but its ticket");
    }
    let at = sightline_server::serve_live(api.clone(), listen).await?;
    eprintln!("sightline {cmd}: live views on http://{at}/live/ (request_human answers their links)");
    Ok(at)
}
