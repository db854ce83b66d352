//! `sightline-bench`: the benchmark `./x bench` runs, kept out of the shipped
//! `sightline` binary.
//!
//! - `sightline-bench [--runs N] [--sizes 30,1000,5000] [--rss-actions 200] [--url URL]`:
//!   capture and action medians beside the raw CDP calls they need, Set-of-Marks,
//!   semantic_v2 beside two peer MCP servers' snapshots, memory ([`suite`], [`peers`]).
//! - `sightline-bench serve [--sizes 1,10,25] [--runs N] [--no-peers]`: `sightline serve`
//!   under load, launched browsers, Playwright MCP doing the same work beside it,
//!   then a local Selenium Grid ([`serve`], [`serve_peer`]).
//! - `sightline-bench run [--runs N]`: the `run` tool beside single tool calls on a
//!   10-step form task ([`run_task`]; the default run ends with the same table).
//! - `sightline-bench soak [--sessions N] [--minutes M] [--grid]`: N sessions on `sightline serve`
//!   for M minutes while faults are injected; what was lost and what was left ([`soak`]).
//! - `sightline-bench tokens`: the tokens a model reads per state on MiniWoB++ task pages
//!   (first and mid-task states), real documents and real apps, ours beside both peers'
//!   snapshots, and what the MiniWoB++ policies read per solved task ([`tokens`]).
//!
//! Fixture pages come from `sightline-testkit`; the browser is started as
//! `sightline` starts it (behind the egress proxy, default policy).

// A benchmark's tables go to stdout and its progress to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "the benchmark's own output")]

mod measure;
mod opts;
mod peers;
mod run_task;
mod serve;
mod serve_peer;
mod soak;
mod suite;
mod tokens;
mod tool_state;

use clap::{Parser, Subcommand};

use opts::Opts;

#[derive(Debug, Parser)]
#[command(
    name = "sightline-bench",
    version,
    about = "Sightline's benchmark: capture/action medians next to the raw CDP calls, or `sightline serve` under load.",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    after_help = "Examples:\n    sightline-bench --runs 7\n    sightline-bench --url http://127.0.0.1:8000/docs/ --runs 5\n    sightline-bench serve --sizes 1,10\n    sightline-bench run --runs 9\n    sightline-bench tokens\n    sightline-bench soak --sessions 25 --minutes 10\n\n./x bench [ARGS] and ./x bench serve [ARGS] install what is missing, build in release mode and run this."
)]
struct Cli {
    #[command(subcommand)]
    mode: Option<Mode>,
    #[command(flatten)]
    opts: Opts,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Load on `sightline serve`: N concurrent sessions over HTTP, launched browsers beside Playwright MCP, then a local Selenium Grid.
    Serve(Opts),
    /// Only the `run` tool's rows: a 10-step form task by single tool calls, a `run` script and a `run` batch.
    Run(Opts),
    /// Tokens a model reads per state (o200k_base) on MiniWoB++ pages, real documents and real apps: ours, semantic_v2 and both peers' snapshots.
    Tokens(Opts),
    /// N sessions on `sightline serve` for M minutes while faults are injected (renderer and browser killed, a client hanging up, a stalled browser, an event flood, a full download disk, with --grid a lost Grid slot).
    Soak(Opts),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let opts = match &cli.mode {
        Some(Mode::Serve(o) | Mode::Run(o) | Mode::Tokens(o) | Mode::Soak(o)) => o,
        None => &cli.opts,
    };
    let filter = match &opts.log {
        Some(f) => tracing_subscriber::EnvFilter::new(f),
        None => tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
    };
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime");
    let result = rt.block_on(async {
        match &cli.mode {
            Some(Mode::Serve(o)) => serve::run(o).await,
            Some(Mode::Run(o)) => run_task::run(o).await,
            Some(Mode::Tokens(o)) => tokens::run(o).await,
            Some(Mode::Soak(o)) => soak::run(o).await,
            None => suite::run(&cli.opts).await,
        }
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    if sightline_cdp::kill_launched() > 0 {
        eprintln!("sightline-bench: killed a browser that was still open at exit");
    }
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("sightline-bench: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
