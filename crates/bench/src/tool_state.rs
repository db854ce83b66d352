//! The element-index state as a tool caller gets it: `get_state` through the
//! same [`Api`] the MCP, JSON-RPC and HTTP front ends call, its reply encoded
//! as the wire carries it. This is the path an agent pays for on every turn
//! (the settle check, the tab follow, the capture, the State Object and its
//! JSON), so it is what stands beside the peers' snapshot tools; only the
//! stdio hop is left out (well under a millisecond for a state's bytes).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{json, Value};
use sightline_api::{Api, ApiOptions};

use crate::measure::median;
use crate::opts::{browser_options, egress, tab_options, Opts};

/// One tool session in its own browser (behind the bench's egress policy).
pub struct ToolState {
    api: Api,
    address: Value,
    _egress: std::sync::Arc<sightline_policy::Egress>,
}

impl ToolState {
    pub async fn start(a: &Opts) -> Result<ToolState> {
        let egress = egress(a)?;
        let api =
            Api::new(ApiOptions { browser: browser_options(a, &egress), tab: tab_options(a)?, storage_state: None })
                .with_egress(egress.clone());
        let bound = api.dispatch("bind_browser", json!({ "session": "bench" })).await?.value;
        let address = json!({
            "session": "bench",
            "target_id": bound["target_id"],
            "tab_id": bound["tabs"][0]["tab_id"],
        });
        Ok(ToolState { api, address, _egress: egress })
    }

    /// The API this session runs in.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The session's tab address with `extra`'s fields added.
    pub fn args(&self, extra: Value) -> Value {
        let mut v = self.address.clone();
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v
    }

    /// Load `url`, then time one warm-up and `runs` `get_state` calls (no
    /// screenshot), each with its reply encoded. Returns the median and the
    /// characters of the last reply.
    pub async fn measure(&self, url: &str, runs: usize) -> Result<(Duration, usize)> {
        let (d, last) = self.measure_tool(url, "get_state", json!({ "screenshot": false }), runs).await?;
        Ok((d, serde_json::to_string(&last)?.len()))
    }

    /// The same for `get_browser_state` with semantic_v2 (viewport scope, default
    /// budget), in a loop of its own as the peers' snapshot tools are timed.
    /// Returns the median and the last reply.
    pub async fn measure_semantic(&self, url: &str, runs: usize) -> Result<(Duration, Value)> {
        self.measure_tool(url, "get_browser_state", json!({ "snapshot_format": "semantic_v2" }), runs).await
    }

    /// Load `url`, then time one warm-up and `runs` calls of `tool` with `args`,
    /// each with its reply encoded as the wire carries it.
    async fn measure_tool(&self, url: &str, tool: &str, args: Value, runs: usize) -> Result<(Duration, Value)> {
        self.api
            .dispatch("browser_navigate", self.args(json!({ "url": url })))
            .await
            .with_context(|| format!("loading {url}"))?;
        let mut times = Vec::with_capacity(runs);
        let mut last = Value::Null;
        for round in 0..=runs {
            let t = Instant::now();
            let out = self.api.dispatch(tool, self.args(args.clone())).await?;
            let text = serde_json::to_string(&out.value)?;
            let d = t.elapsed();
            std::hint::black_box(text);
            last = out.value;
            if round > 0 {
                times.push(d);
            }
        }
        Ok((median(times), last))
    }

    pub async fn close(self) {
        self.api.shutdown().await;
    }
}
