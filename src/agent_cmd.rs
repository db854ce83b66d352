//! `sightline run` and `sightline trace view|replay`.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::json;
use sightline_agent::{Progress, Provider, RunConfig};

use crate::cli::{RunOpts, TraceAction, TraceOpts};
use crate::launch::{check_url, start_browser, tab_options};

pub async fn run(a: &RunOpts) -> Result<u8> {
    let url = &a.url;
    check_url(url)?;
    let (task, spec) = (a.task.clone(), a.model.clone());
    let max_steps: usize = a.max_steps.as_deref().unwrap_or("25").parse().context("--max-steps expects a number")?;
    if !(1..=500).contains(&max_steps) {
        bail!("--max-steps must be between 1 and 500");
    }
    let mut provider = Provider::from_spec(&spec, a.base_url.as_deref())?;
    provider.tools = !a.no_tools;
    if let Some(ms) = &a.retry_base_ms {
        provider.chat.retry_base = Duration::from_millis(ms.parse().context("--retry-base-ms expects milliseconds")?);
    }
    let progress = if a.json {
        Progress::Json
    } else if a.quiet {
        Progress::Quiet
    } else {
        Progress::Lines
    };
    let mut cfg = RunConfig {
        task,
        url: url.clone(),
        provider,
        max_steps,
        vision: a.vision,
        trace: a.trace.clone(),
        progress,
        egress: None,
        human: None,
    };
    let report = if a.human {
        // The run's tab is a driver session of the tool API, so a person can take it over.
        let egress = crate::launch::egress(&a.browser)?;
        let api = std::sync::Arc::new(
            sightline_api::Api::new(sightline_api::ApiOptions {
                browser: crate::launch::browser_options(&a.browser, None, &egress),
                tab: tab_options(&a.browser)?,
                storage_state: None,
            })
            .with_egress(egress.clone()),
        );
        let at = sightline_server::serve_live(api.clone(), std::net::SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        eprintln!("sightline run: the agent may hand you the browser; its live view is served on http://{at}/live/");
        let bound = api
            .bind_browser(sightline_api::BindParams {
                session: RUN_SESSION.into(),
                reconnect: false,
                storage_state: None,
            })
            .await?;
        let tab_id = bound.tabs.first().map(|t| t.tab_id.to_string()).context("the run's session has no tab")?;
        let tab = api.session_tab(RUN_SESSION).await?;
        cfg.egress = Some(egress);
        cfg.human = Some(sightline_agent::Human {
            api: api.clone(),
            session: RUN_SESSION.into(),
            target_id: bound.target_id.to_string(),
            tab_id,
            on_link: std::sync::Arc::new(announce),
        });
        let report = sightline_agent::run(tab, cfg).await;
        api.shutdown().await;
        report?
    } else {
        let (browser, egress) = start_browser(&a.browser).await?;
        let tab = browser.new_tab(tab_options(&a.browser)?).await?;
        cfg.egress = Some(egress);
        let report = sightline_agent::run(tab, cfg).await;
        browser.shutdown().await;
        report?
    };
    if a.json {
        println!(
            "{}",
            json!({ "status": report.ending.status(), "message": report.ending.message(), "steps": report.steps, "prompt_tokens": report.prompt_tokens, "seconds": report.elapsed.as_secs_f64() })
        );
    } else {
        println!(
            "{}: {} ({} steps, {:.1} s, ~{} prompt tokens)",
            report.ending.status(),
            report.ending.message(),
            report.steps,
            report.elapsed.as_secs_f64(),
            report.prompt_tokens
        );
    }
    Ok(report.ending.exit_code())
}

/// The driver session `run --human` drives.
const RUN_SESSION: &str = "run";

/// A live link for the operator: printed, and opened with `$SIGHTLINE_OPEN` (a
/// command; empty: none) or else `xdg-open` when there is one. Opening never fails the run.
fn announce(link: &str) {
    eprintln!("sightline run: a person is needed; open {link}");
    let opener = match std::env::var("SIGHTLINE_OPEN") {
        Ok(cmd) => Some(cmd).filter(|c| !c.trim().is_empty()),
        Err(_) => on_path("xdg-open").then(|| "xdg-open".to_string()),
    };
    let Some(opener) = opener else { return };
    let spawned = std::process::Command::new(&opener)
        .arg(link)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match spawned {
        // Reaped on a thread of its own: the run does not wait for the opener.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => eprintln!("sightline run: could not open it with {opener}: {e}"),
    }
}

/// Whether `name` is an executable file in a directory of `$PATH`.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .any(|d| std::fs::metadata(d.join(name)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
    })
}

pub async fn trace(a: &TraceOpts) -> Result<u8> {
    match &a.action {
        TraceAction::View { dir, out } => {
            let html = sightline_agent::render_trace(dir)
                .with_context(|| format!("reading the trace in {}", dir.display()))?;
            let out = out.clone().unwrap_or_else(|| dir.join("trace.html"));
            std::fs::write(&out, html).with_context(|| format!("writing {}", out.display()))?;
            println!("{}", out.display());
            Ok(0)
        }
        TraceAction::Replay { dir, browser } => {
            let (browser_opts, dir) = (browser, dir);
            let (browser, _egress) = start_browser(browser_opts).await?;
            let tab = browser.new_tab(tab_options(browser_opts)?).await?;
            let turns = sightline_agent::replay(dir, tab).await?;
            let mut differ = 0;
            for t in &turns {
                let same = t.recorded == t.now;
                differ += usize::from(!same);
                println!(
                    "step {:>2}  {:<60} recorded {:<24} now {:<24}{}",
                    t.step,
                    sightline_page::cut(&t.action.to_string(), 60),
                    t.recorded,
                    t.now,
                    if same { "" } else { "  ← differs" }
                );
            }
            println!("{} actions replayed, {differ} outcome(s) differ", turns.len());
            browser.shutdown().await;
            Ok(if differ == 0 { 0 } else { 1 })
        }
    }
}
