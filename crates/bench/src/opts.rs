//! The bench's options, and the browser and tab they ask for: started as
//! `sightline` starts one (behind the egress proxy with the default policy).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use sightline_browser::{Browser, BrowserOptions, SettleOptions, TabOptions};
use sightline_cdp::LaunchOptions;
use sightline_policy::{Egress, PolicyConfig};

#[derive(Debug, Clone, clap::Args)]
pub struct Opts {
    /// Runs per measure (default 7; `serve`: rounds per session, default 4).
    #[arg(long, value_name = "N")]
    pub runs: Option<String>,
    /// Page sizes in interactive elements (default 30,1000,5000; `serve`: sessions, default 1,10,25).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Actions on the largest page between the two RSS readings (default 200; 0 skips).
    #[arg(long, value_name = "N")]
    pub rss_actions: Option<usize>,
    /// Leave out the 5,000-control page (1,250 rows of a flex table).
    #[arg(long)]
    pub no_controls: bool,
    /// `serve`: leave Playwright MCP out (else it runs beside ours when `./x bench` has installed it).
    #[arg(long)]
    pub no_peers: bool,
    /// `serve`: keep N browser contexts (Grid browsers in the Grid runs) open ahead of demand
    /// (`sightline serve --warm N`), or `auto` (the default, as `sightline serve`'s: sized by
    /// the last burst; each size then runs a second burst); their memory counts in ours.
    #[arg(long, value_name = "N|auto")]
    pub warm: Option<String>,
    /// semantic_v2 and the peers' snapshots of this one page instead of the generated ones.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Viewport in CSS pixels.
    #[arg(long, value_name = "WIDTHxHEIGHT")]
    pub viewport: Option<String>,
    /// The most one wait for a stable page may take (default 3000).
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<String>,
    /// Chromium binary (else $SIGHTLINE_CHROME, then chromium on PATH).
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Attach to a running browser instead of launching one.
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Run Chromium without its sandbox (always so when running as root).
    #[arg(long)]
    pub no_chrome_sandbox: bool,
    /// `soak`: concurrent sessions (default 3).
    #[arg(long, value_name = "N")]
    pub sessions: Option<usize>,
    /// `soak`: how long, in minutes (default 1).
    #[arg(long, value_name = "M")]
    pub minutes: Option<f64>,
    /// `soak`: two more sessions on a local Selenium Grid, and a Grid slot that goes away.
    #[arg(long)]
    pub grid: bool,
    /// `soak`: only these faults (comma-separated: renderer, browser, disconnect, stall, flood, disk, grid).
    #[arg(long, value_name = "LIST")]
    pub faults: Option<String>,
    /// Diagnostics on stderr: a level or a RUST_LOG-style filter (default warn).
    #[arg(long, value_name = "FILTER")]
    pub log: Option<String>,
}

/// The egress policy every bench browser runs behind: the default one.
pub fn egress(a: &Opts) -> Result<Arc<Egress>> {
    let cfg = PolicyConfig::default();
    Ok(Arc::new(if a.connect.is_some() { Egress::without_proxy(&cfg)? } else { Egress::with_proxy(&cfg)? }))
}

/// How to get the browser: launched behind `egress`'s proxy, or attached.
pub fn browser_options(a: &Opts, egress: &Egress) -> BrowserOptions {
    let mut extra_args = egress.chromium_flags();
    if a.no_chrome_sandbox {
        extra_args.push("--no-sandbox".into());
    }
    BrowserOptions {
        launch: LaunchOptions { chrome: a.chrome.clone(), extra_args, profile: None },
        connect: a.connect.clone(),
    }
}

/// A browser, with its egress (keep the `Arc` alive as long as the browser).
pub async fn start_browser(a: &Opts) -> Result<(Browser, Arc<Egress>)> {
    let egress = egress(a)?;
    let browser = Browser::start(&browser_options(a, &egress)).await?;
    Ok((browser, egress))
}

pub fn tab_options(a: &Opts) -> Result<TabOptions> {
    let mut settle = SettleOptions::default();
    if let Some(ms) = &a.settle_ms {
        let ms: u64 = ms.parse().with_context(|| format!("--settle-ms expects milliseconds, got {ms}"))?;
        settle.cap = Duration::from_millis(ms.clamp(0, 10_000));
    }
    Ok(TabOptions { viewport: viewport(a.viewport.as_deref())?, settle })
}

/// `WIDTHxHEIGHT` → (w, h); 1280x720 without one.
fn viewport(s: Option<&str>) -> Result<(u32, u32)> {
    let Some(s) = s else { return Ok((1280, 720)) };
    sightline_browser::parse_viewport(s).map_err(|e| anyhow::anyhow!("--viewport {e}"))
}
