//! `sightline env` and `sightline state`: the options → a browser, a tab and an
//! [`Env`]; the JSON-lines loop itself is `sightline_server::env_lines`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::json;

use sightline_api::{Action, Env, EnvOptions};
use sightline_browser::Browser;
use sightline_server::env_lines::EnvEnd;

use crate::cli::{BrowserOpts, EnvOpts, FileOpts, RpcOpts, StateOpts, StorageOpts, ToolsOpts};
use crate::launch::{self, check_url, tab_options};

/// What `env` and `state` open their one session with.
struct Session<'a> {
    url: &'a str,
    browser: &'a BrowserOpts,
    storage: &'a StorageOpts,
    save_to: Option<PathBuf>,
    screenshot: bool,
    mark_new: bool,
    /// `env` only: uploads and downloads.
    files: Option<&'a FileOpts>,
}

/// What [`open`] opened.
struct Opened {
    browser: Browser,
    context: sightline_browser::BrowserContextId,
    egress: std::sync::Arc<sightline_api::Egress>,
    env: Env,
    first: sightline_api::Turn,
    saver: crate::storage_cmd::Saver,
}

/// Open a browser and a tab (in a context restored from `--storage-state`),
/// and load `url` as the first turn.
async fn open(s: Session<'_>) -> Result<Opened> {
    let url = s.url;
    check_url(url)?;
    let restore = crate::storage_cmd::storage_state(s.storage.storage_state.as_deref())?;
    let (browser, egress) = launch::start(s.browser, s.storage.profile.clone(), launch::egress(s.browser)?).await?;
    let (context, saver) = crate::storage_cmd::context(s.save_to, &browser, restore.as_deref()).await?;
    let tab = browser.new_tab_in(&context, tab_options(s.browser)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: s.screenshot }).await?;
    env.set_egress(egress.clone());
    if let Some(files) = s.files {
        let files = crate::file_access::file_access(files, false, false)?;
        // The session's context: a fresh one, or a `--profile`'s default context.
        let downloads = files.enable_downloads(&browser, &context, "env").await?;
        env.set_files(files.uploads.clone(), downloads);
    }
    env.set_mark_new(s.mark_new);
    let first =
        env.step_action(Action::Navigate { url: url.to_string() }, json!({ "action": "navigate", "url": url })).await;
    Ok(Opened { browser, context, egress, env, first, saver })
}

/// The stdio JSON-lines loop (`sightline_server::env_lines`); exit code 3 when the browser is gone.
pub async fn env(o: &EnvOpts) -> Result<u8> {
    let Opened { browser, context, egress, mut env, first, saver } = open(Session {
        url: &o.url,
        browser: &o.browser,
        storage: &o.storage,
        save_to: o.save_storage_state.clone(),
        screenshot: !o.no_screenshot,
        mark_new: o.mark_new,
        files: Some(&o.files),
    })
    .await?;
    if o.record_script.is_some() {
        env.record();
    }
    // With --live: the tab is also a driver session of a tool API that serves
    // its live view, so request_human can hand it to a person.
    let api = match o.live {
        Some(listen) => {
            let opts = sightline_api::ApiOptions {
                browser: launch::browser_options(&o.browser, None, &egress),
                tab: tab_options(&o.browser)?,
                storage_state: None,
            };
            let api = std::sync::Arc::new(sightline_api::Api::new(opts).with_egress(egress));
            launch::live_view(&api, listen, "env").await?;
            let bound = api.adopt(ENV_SESSION, browser.clone(), context, env.tab().clone()).await?;
            let tab_id = bound.tabs.first().map(|t| t.tab_id.to_string()).context("the adopted session has no tab")?;
            env.set_human(sightline_api::Human {
                api: api.clone(),
                session: ENV_SESSION.into(),
                target_id: bound.target_id.to_string(),
                tab_id,
                on_link: std::sync::Arc::new(|link: &str| eprintln!("sightline env: a person is needed; open {link}")),
            });
            Some(api)
        }
        None => None,
    };
    let end = sightline_server::env_lines::run_stdio(&mut env, &first).await?;
    if let (Some(path), Some(r)) = (&o.record_script, env.recorder_mut()) {
        std::fs::write(path, r.script()).with_context(|| format!("writing the recorded script {}", path.display()))?;
        eprintln!("sightline: recorded {} steps to {}", r.steps().len(), path.display());
    }
    let code = if end == EnvEnd::BrowserGone {
        eprintln!("sightline: the browser is gone; exiting");
        3
    } else {
        0
    };
    let saved = saver.save(&browser).await;
    if let Some(api) = api {
        api.shutdown().await;
    }
    env.close().await;
    browser.shutdown().await;
    saved?;
    Ok(code)
}

/// The driver session `env --live` adopts its tab as.
const ENV_SESSION: &str = "env";

/// One State Object.
pub async fn state(a: &StateOpts) -> Result<u8> {
    let Opened { browser, env, first, saver, .. } = open(Session {
        url: &a.url,
        browser: &a.browser,
        storage: &a.storage,
        save_to: a.save_storage_state.clone(),
        screenshot: !a.no_screenshot,
        mark_new: false,
        files: None,
    })
    .await?;
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
/// `rpc`: JSON-RPC over stdio; with `--live`, live views of its sessions on a loopback listener.
pub async fn rpc(o: &RpcOpts) -> Result<u8> {
    let api = std::sync::Arc::new(api(&o.tools)?);
    if let Some(listen) = o.live {
        launch::live_view(&api, listen, "rpc").await?;
    }
    sightline_server::jsonrpc::serve(&api, tokio::io::BufReader::new(tokio::io::stdin()), tokio::io::stdout()).await?;
    Ok(0)
}

pub fn api(o: &ToolsOpts) -> Result<sightline_api::Api> {
    let egress = launch::egress(&o.browser)?;
    let opts = sightline_api::ApiOptions {
        browser: launch::browser_options(&o.browser, o.storage.profile.clone(), &egress),
        tab: tab_options(&o.browser)?,
        storage_state: crate::storage_cmd::storage_state(o.storage.storage_state.as_deref())?,
    };
    Ok(sightline_api::Api::new(opts)
        .with_egress(egress)
        .with_files(crate::file_access::file_access(&o.files, false, false)?))
}
