//! `sightline env` and `sightline state`: the options → a browser, a tab and an
//! [`Env`]; the JSON-lines loop itself is `sightline_server::env_lines`.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::json;
use std::sync::Arc;

use sightline_api::{check_url, Action, Egress, Env, EnvOptions, PolicyConfig};
use sightline_browser::{Browser, BrowserOptions, SettleOptions, TabOptions};
use sightline_cdp::LaunchOptions;
use sightline_server::env_lines::EnvEnd;

use crate::cli::{self, Args};

/// The egress policy from `--allow`, `--block` and `--block-private` (for
/// `script`, private addresses are refused unless `--allow-private`, and its
/// `--url` start page is trusted). A launched browser gets the egress proxy;
/// a browser we attach to cannot be reconfigured, so explicit rules are
/// refused with `--connect` rather than silently enforced only in part.
pub fn egress(a: &Args) -> Result<Arc<Egress>> {
    let script = a.command == "script";
    let cfg = PolicyConfig {
        allow: a.allow.clone(),
        block: a.block.clone(),
        block_private: a.block_private || (script && !a.allow_private),
        // The operator's start page: its whole origin, so the site can move between its own pages.
        trusted: if script { a.url.iter().filter_map(|u| origin_prefix(u)).collect() } else { Vec::new() },
    };
    let explicit = !cfg.allow.is_empty() || !cfg.block.is_empty() || a.block_private;
    let egress = match &a.connect {
        Some(_) if explicit => bail!(
            "--allow/--block/--block-private need a browser Sightline launches (its requests go through Sightline's egress proxy); they cannot be enforced on a --connect browser"
        ),
        Some(_) => Egress::without_proxy(&cfg)?,
        None => Egress::with_proxy(&cfg)?,
    };
    Ok(Arc::new(egress))
}

/// `scheme://host:port/` of an http(s) URL.
fn origin_prefix(url: &str) -> Option<String> {
    let u = sightline_policy::Url::parse(url).ok()?;
    matches!(u.scheme(), "http" | "https").then(|| format!("{}/", u.origin().ascii_serialization()))
}

/// How to get the browser: launched behind `egress`'s proxy, or attached.
pub fn browser_options(a: &Args, egress: &Egress) -> BrowserOptions {
    let mut extra_args = egress.chromium_flags();
    if a.no_chrome_sandbox {
        extra_args.push("--no-sandbox".into());
    }
    BrowserOptions {
        launch: LaunchOptions { chrome: a.chrome.clone(), extra_args, profile: a.profile.clone() },
        connect: a.connect.clone(),
    }
}

/// A browser for this command, with its egress (keep the `Arc` alive as long as the browser).
pub async fn start_browser(a: &Args) -> Result<(Browser, Arc<Egress>)> {
    let egress = egress(a)?;
    let browser = Browser::start(&browser_options(a, &egress)).await?;
    Ok((browser, egress))
}

pub fn tab_options(a: &Args) -> Result<TabOptions> {
    let mut settle = SettleOptions::default();
    if let Some(ms) = &a.settle_ms {
        let ms: u64 = ms.parse().with_context(|| format!("--settle-ms expects milliseconds, got {ms}"))?;
        settle.cap = Duration::from_millis(ms.clamp(0, 10_000));
    }
    Ok(TabOptions { viewport: cli::viewport(a.viewport.as_deref())?, settle })
}

fn url_arg(a: &Args) -> Result<String> {
    let [url] = a.positional.as_slice() else { bail!("expected one URL\n\n{}", cli::USAGE) };
    check_url(url).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(url.clone())
}

/// Open a browser and a tab (in a context restored from `--storage-state`),
/// and load `url` as the first turn.
async fn open(a: &Args, url: &str) -> Result<(Browser, Env, sightline_api::Turn, crate::storage_cmd::Saver)> {
    let restore = crate::storage_cmd::storage_state(a)?;
    let (browser, egress) = start_browser(a).await?;
    let (context, saver) = crate::storage_cmd::context(a, &browser, restore.as_deref()).await?;
    let tab = browser.new_tab_in(&context, tab_options(a)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: !a.no_screenshot }).await?;
    env.set_egress(egress);
    if a.command == "env" {
        let files = crate::file_access::file_access(a)?;
        // The session's context: a fresh one, or a `--profile`'s default context.
        let downloads = files.enable_downloads(&browser, &context, "env").await?;
        env.set_files(files.uploads.clone(), downloads);
    }
    env.set_mark_new(a.mark_new);
    let first =
        env.step_action(Action::Navigate { url: url.to_string() }, json!({ "action": "navigate", "url": url })).await;
    Ok((browser, env, first, saver))
}

/// The stdio JSON-lines loop (`sightline_server::env_lines`); exit code 3 when the browser is gone.
pub async fn env(a: &Args) -> Result<u8> {
    let url = url_arg(a)?;
    let (browser, mut env, first, saver) = open(a, &url).await?;
    let end = sightline_server::env_lines::run_stdio(&mut env, &first).await?;
    let code = if end == EnvEnd::BrowserGone {
        eprintln!("sightline: the browser is gone; exiting");
        3
    } else {
        0
    };
    let saved = saver.save(&browser).await;
    env.close().await;
    browser.shutdown().await;
    saved?;
    Ok(code)
}

/// One State Object.
pub async fn state(a: &Args) -> Result<u8> {
    let url = url_arg(a)?;
    let (browser, env, first, saver) = open(a, &url).await?;
    let text = if a.pretty { serde_json::to_string_pretty(&first.state)? } else { first.state.to_json_line() };
    match &a.out {
        Some(path) => std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?,
        None => println!("{text}"),
    }
    if let Some(path) = &a.record {
        // The complete capture (every node's DOM rects), so a recording serves any view.
        let opts = sightline_browser::CaptureOptions { all_rects: true, ..Default::default() };
        let full = env.tab().capture_with(opts).await?;
        let json = serde_json::to_string(&full.capture)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if a.explain {
        let view = &env.captured().view;
        for c in &view.covered {
            eprintln!("covered: {} by {}", describe(view, c.node), describe(view, c.by));
        }
        eprintln!("{} indexed, {} covered", view.elements.len(), view.covered.len());
    }
    let failed = first.state.error.is_some();
    let saved = saver.save(&browser).await;
    env.close().await;
    browser.shutdown().await;
    saved?;
    Ok(if failed { 1 } else { 0 })
}

fn describe(view: &sightline_page::PageView, id: sightline_page::NodeId) -> String {
    let Some(n) = view.node(id) else { return format!("#{id}") };
    let text = sightline_page::cut(&sightline_page::collapse(n.text()), 30);
    let mut s = if n.tag().is_empty() { format!("#text {text:?}") } else { format!("<{}", n.tag()) };
    for k in ["id", "class", "role", "name"] {
        if let Some(v) = n.attr(k) {
            s.push_str(&format!(" {k}={v:?}"));
        }
    }
    if !n.tag().is_empty() {
        s.push('>');
    }
    if let Some((r, paint)) = n.layout() {
        s.push_str(&format!(" @({:.0},{:.0} {:.0}x{:.0}) paint {paint}", r.x, r.y, r.w, r.h));
    }
    s
}

/// The tool API with the command line's browser and tab options.
pub fn api(a: &Args) -> Result<sightline_api::Api> {
    let egress = egress(a)?;
    let opts = sightline_api::ApiOptions {
        browser: browser_options(a, &egress),
        tab: tab_options(a)?,
        storage_state: crate::storage_cmd::storage_state(a)?,
    };
    Ok(sightline_api::Api::new(opts).with_egress(egress).with_files(crate::file_access::file_access(a)?))
}
