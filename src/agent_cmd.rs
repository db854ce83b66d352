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
    let (browser, egress) = start_browser(&a.browser).await?;
    let tab = browser.new_tab(tab_options(&a.browser)?).await?;
    let cfg = RunConfig {
        task,
        url: url.clone(),
        provider,
        max_steps,
        vision: a.vision,
        trace: a.trace.clone(),
        progress,
        egress: Some(egress),
    };
    let report = sightline_agent::run(tab, cfg).await?;
    browser.shutdown().await;
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
