//! `sightline trace replay`: send a trace's actions again against a fresh browser.

use std::path::Path;

use serde_json::json;
use sightline_api::{Action, Env, EnvOptions};
use sightline_browser::Tab;

use crate::trace::{read, Record};

/// One replayed turn: what was recorded and what happened now.
#[derive(Debug, Clone)]
pub struct Replayed {
    pub step: usize,
    pub action: serde_json::Value,
    pub recorded: String,
    pub now: String,
}

/// Why a trace could not be replayed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error("reading the trace: {source}")]
    Read {
        #[source]
        source: std::io::Error,
    },
    #[error("the trace has no run record")]
    NoRunRecord,
    #[error(transparent)]
    Env(#[from] sightline_api::EnvError),
}

pub async fn replay(dir: &Path, tab: Tab) -> Result<Vec<Replayed>, ReplayError> {
    let records = read(dir).map_err(|source| ReplayError::Read { source })?;
    let url = records
        .iter()
        .find_map(|r| match r {
            Record::Run { url, .. } => Some(url.clone()),
            _ => None,
        })
        .ok_or(ReplayError::NoRunRecord)?;
    let mut env = Env::new(tab, EnvOptions { screenshot: false }).await?;
    env.step_action(Action::Navigate { url: url.clone() }, json!({ "action": "navigate", "url": url })).await;
    let mut out = Vec::new();
    for r in records {
        let Record::Turn(t) = r else { continue };
        let Some(action) = t.action else { continue };
        let turn = env.step(&action.to_string()).await;
        let now = turn
            .state
            .error
            .as_ref()
            .map(|e| serde_json::to_value(e.code).unwrap_or_default().as_str().unwrap_or("").to_string())
            .unwrap_or_else(|| "ok".into());
        out.push(Replayed { step: t.step, action, recorded: t.outcome, now });
        if turn.ended || turn.fatal {
            break;
        }
    }
    env.close().await;
    Ok(out)
}
