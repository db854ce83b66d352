//! `sightline serve`: flags → [`sightline_server::ServeConfig`], then serve
//! until SIGTERM or SIGINT (both end every session, close the browsers and
//! exit 0).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sightline_server::{BrowserSource, GridConfig, HubConfig, Principals, ServeConfig};

use crate::cli::ServeOpts;
use crate::launch;

/// `300s`, `5m`, `1h` or plain seconds.
pub fn duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let (n, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = n.parse().with_context(|| format!("expected a duration like 300s, 5m or 1h, got {s:?}"))?;
    let secs = match unit {
        "ms" => return Ok(Duration::from_millis(n)),
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => bail!("expected a duration like 300s, 5m or 1h, got {s:?}"),
    };
    Ok(Duration::from_secs(secs))
}

pub fn config(a: &ServeOpts) -> Result<ServeConfig> {
    let listen: SocketAddr = a
        .listen
        .as_deref()
        .unwrap_or("127.0.0.1:8931")
        .parse()
        .context("--listen expects HOST:PORT, e.g. 127.0.0.1:8931")?;
    let principals = match &a.token_file {
        Some(f) => Principals::load(f).with_context(|| format!("--token-file {}", f.display()))?,
        None => Principals::anonymous(),
    };
    if !principals.require_token() && !listen.ip().is_loopback() {
        bail!("--listen {listen} is not a loopback address: give bearer tokens with --token-file FILE");
    }
    // One egress policy for every session. A Grid browser, like an attached one, is
    // not behind Sightline's proxy: explicit rules are refused rather than half-enforced.
    let egress = if a.grid.is_some() {
        if !a.browser.allow.is_empty() || !a.browser.block.is_empty() || a.browser.block_private {
            bail!("--allow/--block/--block-private need a browser Sightline launches; they cannot be enforced on --grid browsers");
        }
        std::sync::Arc::new(sightline_policy::Egress::without_proxy(&sightline_policy::PolicyConfig::default())?)
    } else {
        launch::egress(&a.browser)?
    };
    let source = match (&a.grid, &a.browser.connect) {
        (Some(_), Some(_)) => bail!("--grid and --connect exclude each other"),
        (Some(url), None) => BrowserSource::Grid(GridConfig {
            url: url.clone(),
            chrome_binary: a.browser.chrome.as_ref().map(|p| p.display().to_string()).or_else(|| {
                std::path::Path::new("/usr/bin/chromium").exists().then(|| "/usr/bin/chromium".to_string())
            }),
            wait: duration(a.grid_wait.as_deref().unwrap_or("30s")).context("--grid-wait")?,
            timeout: Duration::from_secs(300),
        }),
        (None, Some(url)) => BrowserSource::Connect(url.clone()),
        (None, None) => BrowserSource::Launch(launch::browser_options(&a.browser, None, &egress).launch),
    };
    let max_sessions = match &a.max_sessions {
        Some(n) => n.parse().context("--max-sessions expects a number")?,
        None => 32,
    };
    if max_sessions == 0 {
        bail!("--max-sessions must be at least 1");
    }
    let start_limit = match &a.start_limit {
        Some(n) => n.parse().context("--start-limit expects a number")?,
        None => sightline_server::DEFAULT_START_LIMIT,
    };
    if start_limit == 0 {
        bail!("--start-limit must be at least 1");
    }
    // `auto` (the default): sized by demand, nothing held while no session starts.
    let (warm, warm_auto) = match a.warm.as_deref() {
        None | Some("auto") => (0, Some(sightline_server::WARM_AUTO_KEEP)),
        Some(n) => (n.parse().context("--warm expects a number or auto")?, None),
    };
    if warm > max_sessions {
        bail!("--warm {warm} is more than --max-sessions {max_sessions}");
    }
    let idle_timeout = duration(a.idle_timeout.as_deref().unwrap_or("300s"))?;
    let hub = HubConfig {
        source,
        max_sessions,
        idle_timeout,
        queue_limit: 4,
        tab: launch::tab_options(&a.browser)?,
        egress: Some(egress),
        files: crate::file_access::file_access(&a.files, a.grid.is_some(), true)?,
        start_limit,
        warm,
        warm_auto,
    };
    Ok(ServeConfig { listen, principals, hub })
}

pub async fn run(a: &ServeOpts) -> Result<u8> {
    let cfg = config(a)?;
    let stop = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal");
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).expect("signal");
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        eprintln!("sightline serve: stopping: ending sessions and closing browsers");
    };
    let grid = matches!(cfg.hub.source, BrowserSource::Grid(_));
    // Names only: a token is never printed.
    let names = cfg.principals.names();
    if names.is_empty() {
        eprintln!("sightline serve: no --token-file: every client is the one anonymous principal");
    } else {
        eprintln!(
            "sightline serve: {} principal{} ({}), each seeing only its own sessions",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
    }
    sightline_server::serve(cfg, stop, |addr| {
        eprintln!(
            "sightline serve: listening on http://{addr} (MCP at http://{addr}/mcp){}",
            if grid { ", browsers from Selenium Grid" } else { "" }
        );
    })
    .await?;
    eprintln!("sightline serve: stopped");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sightline serve …` parsed.
    fn serve(words: &[&str]) -> ServeOpts {
        match crate::cli::parse(words.iter().map(|s| s.to_string())).map(|c| c.command) {
            Ok(crate::cli::Command::Serve(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration("300s").unwrap(), Duration::from_secs(300));
        assert_eq!(duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(duration("soon").is_err());
    }

    #[test]
    fn a_public_bind_needs_a_token() {
        let a = serve(&["serve", "--listen", "0.0.0.0:8931"]);
        let e = config(&a).unwrap_err().to_string();
        assert!(e.contains("--token-file"), "{e}");
        let a = serve(&["serve", "--grid", "http://g", "--connect", "ws://c"]);
        assert!(config(&a).is_err());
    }

    #[test]
    fn grid_wait_bounds_the_wait_for_a_slot() {
        let wait = |args: &[&str]| {
            let a = serve(args);
            match config(&a).unwrap().hub.source {
                BrowserSource::Grid(g) => (g.wait, g.retry_after()),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(wait(&["serve", "--grid", "http://g"]), (Duration::from_secs(30), 30));
        assert_eq!(wait(&["serve", "--grid", "http://g", "--grid-wait", "1500ms"]), (Duration::from_millis(1500), 2));
        let a = serve(&["serve", "--grid", "http://g", "--grid-wait", "soon"]);
        assert!(config(&a).unwrap_err().to_string().contains("--grid-wait"));
    }

    #[test]
    fn start_limit_and_warm_pool() {
        let hub = |args: &[&str]| config(&serve(args)).map(|c| (c.hub.start_limit, c.hub.warm));
        assert_eq!(hub(&["serve", "--connect", "ws://c"]).unwrap(), (sightline_server::DEFAULT_START_LIMIT, 0));
        let auto = |args: &[&str]| config(&serve(args)).unwrap().hub.warm_auto;
        assert_eq!(
            auto(&["serve", "--connect", "ws://c"]),
            Some(sightline_server::WARM_AUTO_KEEP),
            "sized by demand by default"
        );
        assert_eq!(auto(&["serve", "--connect", "ws://c", "--warm", "auto"]), Some(sightline_server::WARM_AUTO_KEEP));
        assert_eq!(auto(&["serve", "--connect", "ws://c", "--warm", "0"]), None, "--warm 0: no pool");
        assert_eq!(auto(&["serve", "--connect", "ws://c", "--warm", "3"]), None, "a fixed size");
        assert_eq!(hub(&["serve", "--connect", "ws://c", "--start-limit", "2", "--warm", "8"]).unwrap(), (2, 8));
        let err = |args: &[&str]| hub(args).unwrap_err().to_string();
        assert!(err(&["serve", "--connect", "ws://c", "--start-limit", "0"]).contains("--start-limit"));
        assert!(err(&["serve", "--connect", "ws://c", "--warm", "many"]).contains("--warm"));
        assert!(err(&["serve", "--connect", "ws://c", "--warm", "40"]).contains("--max-sessions 32"));
        assert_eq!(hub(&["serve", "--grid", "http://g", "--warm", "2"]).unwrap().1, 2, "Grid browsers are pooled too");
    }
}
