//! The integration tests, one binary as cargo's own `tests/testsuite`: every test
//! file is a module of this crate and shares one harness (`common`: one Chromium,
//! a browser context per test, the fixture servers, the test root) and the real
//! apps' harness. Run one file's tests with `cargo test --test suite FILE::`.
//! Two targets stay apart: `tests/dist.rs` (the packaged installs, after `./x dist`)
//! and `tests/architecture.rs` (reads the sources, no browser).

// MiniWoB++'s policies build large `json!` values.
#![recursion_limit = "512"]

#[path = "../common/mod.rs"]
mod common;

#[path = "../apps/ax_names.rs"]
mod ax_names;
#[allow(dead_code)]
#[path = "../apps/harness.rs"]
mod harness;

#[path = "../actions.rs"]
mod actions;
#[path = "../apps.rs"]
mod apps;
#[path = "../changes.rs"]
mod changes;
#[path = "../cli.rs"]
mod cli;
#[path = "../component_apps.rs"]
mod component_apps;
#[path = "../documents.rs"]
mod documents;
#[path = "../fidelity.rs"]
mod fidelity;
#[path = "../files.rs"]
mod files;
#[path = "../grid.rs"]
mod grid;
#[path = "../hostile.rs"]
mod hostile;
#[path = "../live.rs"]
mod live;
#[path = "../mcp_stateless.rs"]
mod mcp_stateless;
#[path = "../miniwob.rs"]
mod miniwob;
#[path = "../oracle.rs"]
mod oracle;
#[path = "../pack.rs"]
mod pack;
#[path = "../pack_files.rs"]
mod pack_files;
#[path = "../routing.rs"]
mod routing;
#[path = "../run.rs"]
mod run;
#[path = "../runner.rs"]
mod runner;
#[path = "../semantic.rs"]
mod semantic;
#[path = "../serve.rs"]
mod serve;
#[path = "../serve_start.rs"]
mod serve_start;
#[path = "../skills.rs"]
mod skills;
#[path = "../state.rs"]
mod state;
#[path = "../storage.rs"]
mod storage;
#[path = "../transports.rs"]
mod transports;
