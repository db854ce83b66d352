//! `sightline mcp`: a Model Context Protocol server over stdio, on the
//! official Rust SDK (`rmcp`), with the handler `sightline serve` uses at
//! `/mcp` (`sightline_server::SightlineMcp`).
//!
//! Same tools, same schemas, same error codes as `sightline rpc`. A tool
//! failure is a `tools/call` result with `isError: true` (its structured
//! content carries the stable code), as MCP prescribes; screenshots are image
//! content. Requests run concurrently; `notifications/cancelled` is honoured;
//! calls with a progress token get progress notifications.

use sightline_api::Api;

pub async fn run(api: Api) -> anyhow::Result<u8> {
    Box::pin(sightline_server::serve_stdio(api)).await?;
    Ok(0)
}
