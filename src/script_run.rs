//! `sightline script FILE` for a `run` script (one that starts with the directive
//! `"use sightline/run";`, as a recording does): the tool API's `run` over a new
//! session at `--url`, with no model. A replay whose target drifted stops with
//! the step and what was found instead, exit code 2.

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use sightline_api::{Api, ApiOptions, BindParams, ErrorDetail, NavigateParams, RunParams, ToolCode};

use crate::cli::ScriptOpts;
use crate::launch::{self, check_url, tab_options};

/// The directive that makes a script a `run` script.
pub const DIRECTIVE: &str = "use sightline/run";

/// Whether `source` opens with the `run` directive (after comments and blank lines).
pub fn is_run_script(source: &str) -> bool {
    let first = source.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("//"));
    first.is_some_and(|l| {
        let l = l.trim_end_matches(';').trim();
        l == format!("\"{DIRECTIVE}\"") || l == format!("'{DIRECTIVE}'")
    })
}

/// Run `source` with `run`'s `browser`; the exit code (0, 1 failed, 2 drift, 124 time).
pub async fn run(a: &ScriptOpts, source: String, stop: impl std::future::Future<Output = u8>) -> Result<u8> {
    if a.vision_url.is_some() || a.files.files.is_some() {
        bail!("a run script has no vision or upload calls: --vision-url and --files are for Set-of-Marks scripts");
    }
    let timeout: f64 = a.timeout.as_deref().unwrap_or("30").parse().context("--timeout expects seconds")?;
    if !(0.1..=300.0).contains(&timeout) {
        bail!("--timeout must be between 0.1 and 300 seconds for a run script");
    }
    let trusted = a.url.iter().filter_map(|u| launch::origin_prefix(u)).collect();
    let egress = launch::egress_with(&a.browser, !a.allow_private, trusted)?;
    let opts = ApiOptions {
        browser: launch::browser_options(&a.browser, None, &egress),
        tab: tab_options(&a.browser)?,
        storage_state: None,
    };
    let api = Api::new(opts).with_egress(egress);
    let code = tokio::select! {
        r = replay(&api, a, source, timeout) => r,
        code = stop => {
            eprintln!("sightline script: stopped by a signal");
            Ok(code)
        }
    };
    api.shutdown().await;
    code
}

async fn replay(api: &Api, a: &ScriptOpts, source: String, timeout: f64) -> Result<u8> {
    let bound =
        api.bind_browser(BindParams { session: "script".into(), reconnect: false, storage_state: None }).await?;
    let tab_id = bound.tabs.first().context("the new browser has no tab")?.tab_id.to_string();
    let address = json!({ "session": "script", "target_id": bound.target_id.to_string(), "tab_id": tab_id });
    if let Some(url) = &a.url {
        check_url(url)?;
        let mut p = address.clone();
        p["url"] = json!(url);
        api.browser_navigate(sightline_api::decode_params::<NavigateParams>(p)?).await?;
    }
    let mut p = address;
    p["code"] = json!(source);
    p["timeout_s"] = json!(timeout);
    p["max_steps"] = json!(10_000);
    p["result"] = json!("none");
    let run: RunParams = sightline_api::decode_params(p)?;
    match api.run(run).await {
        Ok(out) => {
            for line in &out.console {
                println!("{line}");
            }
            for step in &out.actions {
                eprintln!("sightline script: {}", serde_json::to_string(step)?);
            }
            println!("{}", out.value);
            Ok(0)
        }
        Err(e) => {
            let (console, cause) = match e.detail.as_deref() {
                Some(ErrorDetail::Script { console, cause, .. }) => (console.as_slice(), cause.as_ref()),
                Some(ErrorDetail::Limit { console, .. }) => (console.as_slice(), None),
                _ => (&[][..], None),
            };
            for line in console {
                println!("{line}");
            }
            eprintln!("sightline script: {}: {}", e.code, e.message);
            if let Some(found) = cause.and_then(|c| c["found"].as_array()).filter(|f| !f.is_empty()) {
                eprintln!("sightline script: found instead: {}", Value::Array(found.clone()));
            }
            let out_of_time = matches!(e.detail.as_deref(), Some(ErrorDetail::Limit { limit, .. }) if limit == "time");
            Ok(match e.code {
                ToolCode::Drift => 2,
                ToolCode::ScriptLimit if out_of_time => 124,
                _ => 1,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directive_marks_a_run_script() {
        assert!(is_run_script("\"use sightline/run\";\nawait browser.click('p1:1');"));
        assert!(is_run_script("// recorded\n\n'use sightline/run'\n"));
        assert!(!is_run_script("browser.goto('https://example.com/');"));
        assert!(!is_run_script("// \"use sightline/run\";\nbrowser.mark();"));
    }
}
