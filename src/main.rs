//! `sightline`: the command line ([`cli`], one typed options struct per command)
//! turned into configuration for `sightline-api` and the front ends of
//! `sightline-server` (HTTP, MCP, JSON-RPC, the `env` loop).

// The binary is the one place that writes to the terminal: stdout carries a
// command's output, stderr its messages. Libraries log through `tracing`.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "the binary's own output")]

mod agent_cmd;
mod cli;
mod demo;
mod demo_server;
mod file_access;
mod launch;
mod mcp_cmd;
mod pack_cmd;
mod run;
mod script_run;
mod serve_cmd;
mod skills;
mod storage_cmd;
mod vision;

use anyhow::{Context, Result};

fn main() -> std::process::ExitCode {
    let cli = match cli::parse(std::env::args().skip(1)) {
        Ok(cli) => cli,
        Err(refused) => {
            if refused.to_stdout {
                print!("{}", refused.text);
            } else {
                eprint!("{}", refused.text);
            }
            return std::process::ExitCode::from(refused.code);
        }
    };
    if let Err(e) = init_logging(cli.log.as_deref()) {
        eprintln!("sightline: {e:#}");
        return std::process::ExitCode::from(2);
    }
    let command = cli.command;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime");
    let result: Result<u8> = rt.block_on(async move {
        use cli::Command;
        // The server handles SIGTERM/SIGINT itself: stop accepting, end sessions, exit 0.
        if let Command::Serve(o) = &command {
            return serve_cmd::run(o).await;
        }
        // Signals are caught from the first moment: whichever phase they interrupt,
        // the command future is dropped and the browser with it (killed, profile removed).
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        // A script's JavaScript runs on a blocking thread that dropping the command
        // cannot stop: `script` takes the signal itself, cancels the script and
        // closes the browser before it returns the signal's exit code.
        if let Command::Script(o) = &command {
            let stop = async {
                tokio::select! {
                    _ = int.recv() => { eprintln!("sightline: interrupted"); 130 }
                    _ = term.recv() => { eprintln!("sightline: terminated"); 143 }
                }
            };
            return pack_cmd::script(o, stop).await;
        }
        let command = async {
            match &command {
                Command::Serve(o) => serve_cmd::run(o).await,
                Command::Script(o) => pack_cmd::script(o, std::future::pending()).await,
                Command::Env(o) => run::env(o).await,
                Command::State(o) => run::state(o).await,
                Command::Demo(o) => demo::run(o).await,
                Command::Marks(o) => pack_cmd::marks(o).await,
                Command::Run(o) => agent_cmd::run(o).await,
                Command::Trace(o) => agent_cmd::trace(o).await,
                // Every wire front end lives in sightline-server: JSON-RPC and MCP over stdio here.
                Command::Rpc(o) => run::rpc(o).await,
                Command::Mcp(o) => Box::pin(mcp_cmd::run(o)).await,
                Command::Skills(o) => skills::run(o),
            }
        };
        tokio::select! {
            r = command => r,
            _ = int.recv() => { eprintln!("sightline: interrupted"); Ok(130) }
            _ = term.recv() => { eprintln!("sightline: terminated"); Ok(143) }
        }
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    // Last resort for exit paths that skipped `Drop` (a browser still held by a
    // blocking thread): no launched browser outlives the process.
    if sightline_cdp::kill_launched() > 0 {
        tracing::debug!("killed a browser that was still open at exit");
    }
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("sightline: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}

/// Diagnostics go to stderr through `tracing`, once for the whole process:
/// `--log FILTER` wins over `$RUST_LOG`; without either only warnings and errors show.
/// A malformed `--log` is an error; a malformed `$RUST_LOG` keeps the directives that parse.
fn init_logging(flag: Option<&str>) -> Result<()> {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = match flag {
        Some(f) => EnvFilter::builder()
            .parse(f)
            .with_context(|| format!("--log {f:?} is not a level (error, warn, info, debug, trace) or a filter"))?,
        None => match std::env::var("RUST_LOG") {
            Ok(f) if !f.trim().is_empty() => EnvFilter::builder().parse_lossy(f),
            _ => EnvFilter::new("warn"),
        },
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}
