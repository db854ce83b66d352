//! `sightline marks` and `sightline script`: the Set-of-Marks pack from the command line.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sightline_chrome::ChromeDriver;
use sightline_pack::{Cx, Driver, EgressGate, Pack, ScriptError, ScriptOptions, PRIMITIVES};
use sightline_page::draw_marks;

use crate::cli::{MarksOpts, ScriptOpts};
use crate::launch::{self, check_url, start_browser, tab_options};
use crate::vision::OpenAiVision;

/// `sightline marks URL --out marks.png [--json]`
pub async fn marks(a: &MarksOpts) -> Result<u8> {
    let url = &a.url;
    check_url(url)?;
    let out = a.out.clone();
    let (browser, _egress) = start_browser(&a.browser).await?;
    let driver = ChromeDriver::new(browser.new_tab(tab_options(&a.browser)?).await?);
    let cx = Cx::new(Duration::from_secs(60));
    driver.navigate(&cx, url).await?;
    let set = driver.marks(&cx, true).await?;
    let png = draw_marks(set.screenshot.as_deref().unwrap_or_default(), &set.marks)?;
    std::fs::write(&out, png).with_context(|| format!("writing {}", out.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&set.marks)?);
    } else {
        println!("{:>4}  {:<10} {:<12} {:<9} {:<9} name", "id", "tag", "role", "x,y", "w×h");
        for m in &set.marks {
            println!(
                "{:>4}  {:<10} {:<12} {:<9} {:<9} {}",
                m.id,
                m.tag,
                m.role,
                format!("{},{}", m.x, m.y),
                format!("{}×{}", m.w, m.h),
                m.name
            );
        }
        eprintln!("{} marks; wrote {}", set.marks.len(), out.display());
    }
    driver.into_tab().close().await;
    browser.shutdown().await;
    Ok(0)
}

fn vision(a: &ScriptOpts) -> Result<Option<OpenAiVision>> {
    match (&a.vision_url, &a.vision_model) {
        (Some(u), Some(m)) => Ok(Some(OpenAiVision::from_env(u, m))),
        (None, None) => Ok(None),
        _ => bail!("--vision-url and --vision-model go together"),
    }
}

/// `sightline script FILE.js …`. `stop` resolves to an exit code when the
/// process is told to stop (SIGTERM, SIGINT): the script is cancelled (its
/// JavaScript and the browser call it waits on stop at once), and the browser is
/// closed and its profile removed before the code is returned.
pub async fn script(a: &ScriptOpts, stop: impl std::future::Future<Output = u8>) -> Result<u8> {
    let mut stop = std::pin::pin!(stop);
    let vision = vision(a)?;
    if a.describe {
        let prims: Vec<_> = PRIMITIVES.iter().filter(|p| !p.vision || vision.is_some()).collect();
        print!("{}", sightline_pack::describe(&prims));
        return Ok(0);
    }
    let Some(file) = &a.file else { bail!("expected one script file; see `sightline script --help`") };
    let source = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
    if crate::script_run::is_run_script(&source) {
        return crate::script_run::run(a, source, stop).await;
    }
    // Before the script runs, stopping drops the set-up, and the browser with it.
    let setup = script_setup(a, vision);
    let (browser, driver, pack) = tokio::select! {
        r = setup => r?,
        code = &mut stop => return Ok(code),
    };
    let timeout: f64 = a.timeout.as_deref().unwrap_or("30").parse().context("--timeout expects seconds")?;
    let name =
        std::path::Path::new(file).file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| file.clone());
    let opts = ScriptOptions { timeout: Duration::from_secs_f64(timeout), filename: name, ..ScriptOptions::default() };
    let (run, stopped) = {
        let mut run = std::pin::pin!(pack.run_logged(&source, opts));
        tokio::select! {
            r = &mut run => (r, None),
            code = &mut stop => {
                // The interrupt handler and every waiting browser call see the token.
                pack.cancel_token().cancel();
                (run.await, Some(code))
            }
        }
    };
    // Console output is printed on every outcome: a failing script's logs are what explain it.
    for line in &run.logs {
        println!("{line}");
    }
    let code = match (stopped, run.result) {
        (Some(code), _) => {
            eprintln!("sightline script: stopped by a signal");
            code
        }
        (None, Ok(out)) => {
            println!("{}", out.value);
            0
        }
        (None, Err(e)) => {
            eprintln!("sightline script: {e}");
            match e {
                ScriptError::Timeout { .. } => 124,
                _ => 1,
            }
        }
    };
    if let Some(line) = driver.download_summary() {
        let kept = if a.files.downloads.is_some() {
            ""
        } else {
            " (in a temporary directory, removed now; --downloads DIR keeps them)"
        };
        eprintln!("sightline script: {line}{kept}");
    }
    drop(pack);
    if let Ok(d) = Arc::try_unwrap(driver) {
        d.into_tab().close().await;
    }
    browser.shutdown().await;
    Ok(code)
}

type ScriptParts = (sightline_browser::Browser, Arc<ChromeDriver>, Arc<Pack<ChromeDriver, EgressGate>>);

/// The browser, its driver on a new tab at `--url`, and the pack over them.
async fn script_setup(a: &ScriptOpts, vision: Option<OpenAiVision>) -> Result<ScriptParts> {
    let timeout: f64 = a.timeout.as_deref().unwrap_or("30").parse().context("--timeout expects seconds")?;
    if !(0.1..=3600.0).contains(&timeout) {
        bail!("--timeout must be between 0.1 and 3600 seconds");
    }
    // Private addresses are refused unless --allow-private; the operator's start page is
    // trusted: its whole origin, so the site can move between its own pages.
    let trusted = a.url.iter().filter_map(|u| launch::origin_prefix(u)).collect();
    let egress = launch::egress_with(&a.browser, !a.allow_private, trusted)?;
    let (browser, egress) = launch::start(&a.browser, None, egress).await?;
    let tab = browser.new_tab(tab_options(&a.browser)?).await?;
    // Uploads only from `--files DIR`; downloads into `--downloads DIR` (or a temporary directory removed at exit).
    let files = crate::file_access::file_access(&a.files, false, false)?;
    let downloads = match (tab.context_id(), &files.downloads) {
        (Some(ctx), Some(_)) => files.enable_downloads(&browser, ctx, "script").await?,
        _ => None,
    };
    let driver = Arc::new(ChromeDriver::new(tab).with_files(files.uploads.clone(), downloads));
    if let Some(url) = &a.url {
        // The operator's starting page: not an agent decision, so not gated.
        check_url(url)?;
        driver.navigate(&Cx::new(Duration::from_secs(60)), url).await?;
    }
    // The same policy the egress proxy applies to every request of the page.
    let policy = EgressGate(egress);
    let pack = Pack::new(driver.clone(), policy, vision.map(OpenAiVision::into_callback));
    Ok((browser, driver, pack))
}
