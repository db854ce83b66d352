//! Counters and histograms, rendered as Prometheus text at `/metrics`.
//! Hand-written: a handful of atomics do not need a metrics crate.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: &[f64] = &[0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// A latency histogram.
#[derive(Default)]
pub struct Histogram {
    counts: [AtomicU64; 11],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    pub fn observe(&self, d: Duration) {
        let s = d.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| s <= *b) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (i, b) in BUCKETS.iter().enumerate() {
            cumulative += self.counts[i].load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {}", self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6);
        let _ = writeln!(out, "{name}_count {count}");
    }
}

/// Everything `/metrics` reports.
#[derive(Default)]
pub struct Metrics {
    pub sessions_open: AtomicU64,
    pub sessions_created: AtomicU64,
    pub browser_restarts: AtomicU64,
    pub busy_rejections: AtomicU64,
    /// Warm contexts (or Grid browsers) ready for the next session starts.
    pub warm_ready: AtomicU64,
    /// Sessions ended, by reason.
    pub sessions_ended: Mutex<BTreeMap<&'static str, u64>>,
    /// Actions (`act`, HTTP or MCP) by outcome: `ok`, `task_ended`, or the State Object's error code.
    pub actions: Mutex<BTreeMap<String, u64>>,
    /// Tool calls by tool and outcome (`ok` or the error code).
    pub tool_calls: Mutex<BTreeMap<(String, String), u64>>,
    pub action_latency: Histogram,
    pub capture_latency: Histogram,
}

fn bump<K: Ord>(m: &Mutex<BTreeMap<K, u64>>, k: K) {
    *m.lock().unwrap().entry(k).or_default() += 1;
}

impl Metrics {
    pub fn action(&self, outcome: &str, took: Duration) {
        bump(&self.actions, outcome.to_string());
        self.action_latency.observe(took);
    }

    /// A tool call. The label is a name from the tool table, else `unknown`:
    /// the name comes from the request path, and caller data (a session id,
    /// quotes) never becomes a label.
    pub fn tool(&self, tool: &str, outcome: &str) {
        let tool = tool.parse::<sightline_api::ToolName>().map_or("unknown", sightline_api::ToolName::as_str);
        bump(&self.tool_calls, (tool.to_string(), outcome.to_string()));
    }

    pub fn ended(&self, reason: &'static str) {
        bump(&self.sessions_ended, reason);
    }

    /// Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let gauge = |out: &mut String, name: &str, kind: &str, help: &str, v: u64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        };
        gauge(
            &mut out,
            "sightline_sessions_open",
            "gauge",
            "Sessions open now.",
            self.sessions_open.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "sightline_warm_ready",
            "gauge",
            "Warm browser contexts (or Grid browsers) ready for new sessions.",
            self.warm_ready.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "sightline_sessions_created_total",
            "counter",
            "Sessions created.",
            self.sessions_created.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "sightline_browser_restarts_total",
            "counter",
            "Times the shared browser was started again after it crashed or disconnected.",
            self.browser_restarts.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "sightline_busy_rejections_total",
            "counter",
            "Requests refused because the session's queue was full.",
            self.busy_rejections.load(Ordering::Relaxed),
        );
        let _ = writeln!(out, "# HELP sightline_sessions_ended_total Sessions ended, by reason.\n# TYPE sightline_sessions_ended_total counter");
        for (reason, n) in self.sessions_ended.lock().unwrap().iter() {
            let _ = writeln!(out, "sightline_sessions_ended_total{{reason=\"{reason}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP sightline_actions_total Element-index actions, by outcome.\n# TYPE sightline_actions_total counter"
        );
        for (outcome, n) in self.actions.lock().unwrap().iter() {
            let _ = writeln!(out, "sightline_actions_total{{outcome=\"{outcome}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP sightline_tool_calls_total Tool calls, by tool and outcome.\n# TYPE sightline_tool_calls_total counter");
        for ((tool, outcome), n) in self.tool_calls.lock().unwrap().iter() {
            let _ = writeln!(out, "sightline_tool_calls_total{{tool=\"{tool}\",outcome=\"{outcome}\"}} {n}");
        }
        self.action_latency.render(
            &mut out,
            "sightline_action_seconds",
            "Time from an action's arrival to its State Object (act, wait, capture).",
        );
        self.capture_latency.render(
            &mut out,
            "sightline_capture_seconds",
            "Time to capture a State Object (GET state).",
        );
        out
    }
}
