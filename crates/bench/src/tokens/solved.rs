//! What the project's scripted tasks read through Sightline per solved task:
//! the `TASK.reads.jsonl` files the suites write, one line per episode (a
//! MiniWoB++ episode; a real-app test, which is one episode) with the State
//! Objects its calls were answered with (screenshot left out) and the number of
//! actions sent. [`MINIWOB`]: the MiniWoB++ suite (`tests/miniwob.rs`, `./x
//! miniwob`); [`APPS`]: the real-app tasks (`tests/common/reads.rs`, `./x
//! apps`). Per task, over its solved episodes: the calls and the tokens of the
//! page_content read and of the whole State Object JSON read, median per
//! episode and total; then over all solved episodes of all tasks.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;
use tiktoken_rs::CoreBPE;

use super::median;

/// Where a suite leaves its reads, and how the tables name them.
pub struct Source {
    dir: &'static str,
    who: &'static str,
    /// What one line is.
    unit: &'static str,
    /// What one line's calls are.
    calls: &'static str,
    run_first: &'static str,
}

pub const MINIWOB: Source = Source {
    dir: "target/miniwob",
    who: "the scripted MiniWoB++ policies (`sightline env`)",
    unit: "episode (reward > 0)",
    calls: "actions sent, START and the looks at the reward display included",
    run_first: "./x miniwob",
};

pub const APPS: Source = Source {
    dir: "target/apps/reads",
    who: "the real-app tasks (`tests/apps.rs`, `tests/component_apps.rs`; the same `Env` as `sightline env`)",
    unit: "task (a test that passed)",
    calls: "the actions sent after the page opened; the opening navigation's state is read, not counted",
    run_first: "./x apps",
};

/// One solved episode: calls, page_content tokens read, State Object JSON tokens read.
#[derive(Clone, Copy)]
struct Episode {
    calls: usize,
    page_content: usize,
    state: usize,
}

struct Task {
    name: String,
    episodes: usize,
    solved: Vec<Episode>,
}

pub fn print(bpe: &CoreBPE, src: &Source) -> Result<()> {
    let Source { dir, who, unit, calls, run_first } = src;
    let files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.to_string_lossy().ends_with(".reads.jsonl")).collect())
        .unwrap_or_default();
    println!("\nWhat {who} read through Sightline, per solved task:");
    if files.is_empty() {
        println!("\nNo {dir}/*.reads.jsonl: run `{run_first}` first (it writes what each task read there), then this command again.");
        return Ok(());
    }
    let mut tasks: Vec<Task> = files.iter().map(|f| task(bpe, f)).collect::<Result<_>>()?;
    tasks.sort_by(|a, b| a.name.cmp(&b.name));
    println!(
        "\nFrom {dir}/TASK.reads.jsonl, per solved {unit}: calls ({calls}) and the tokens (o200k_base) of every \
         state's page_content and of every whole State Object JSON the calls were answered with:\n"
    );
    println!("| task | solved / episodes | median calls | median page_content tokens | median State Object tokens | total calls | total page_content tokens | total State Object tokens |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut all = Vec::new();
    for t in &tasks {
        let col = |f: fn(&Episode) -> usize| -> (usize, usize) {
            let v: Vec<usize> = t.solved.iter().map(f).collect();
            (median(v.clone()).unwrap_or(0), v.iter().sum())
        };
        let ((mc, tc), (mp, tp), (ms, ts)) = (col(|e| e.calls), col(|e| e.page_content), col(|e| e.state));
        println!("| {} | {} / {} | {mc} | {mp} | {ms} | {tc} | {tp} | {ts} |", t.name, t.solved.len(), t.episodes);
        all.extend_from_slice(&t.solved);
    }
    let solved_tasks = tasks.iter().filter(|t| !t.solved.is_empty()).count();
    let col = |f: fn(&Episode) -> usize| -> (usize, usize) {
        let v: Vec<usize> = all.iter().map(f).collect();
        (median(v.clone()).unwrap_or(0), v.iter().sum())
    };
    let ((mc, tc), (mp, tp), (ms, ts)) = (col(|e| e.calls), col(|e| e.page_content), col(|e| e.state));
    println!(
        "\nSummary over the {} solved episodes of the {solved_tasks} tasks with one solved (of {} tasks played):\n",
        all.len(),
        tasks.len()
    );
    println!("| per solved episode | median | total | per call |");
    println!("|---|---|---|---|");
    println!("| calls | {mc} | {tc} | - |");
    let per_call = |t: usize| format!("{:.0}", t as f64 / tc.max(1) as f64);
    println!("| page_content tokens read | {mp} | {tp} | {} |", per_call(tp));
    println!("| State Object JSON tokens read | {ms} | {ts} | {} |", per_call(ts));
    Ok(())
}

fn task(bpe: &CoreBPE, file: &Path) -> Result<Task> {
    let text = std::fs::read_to_string(file).with_context(|| format!("{}", file.display()))?;
    let name = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".reads.jsonl")).unwrap_or("?");
    let mut t = Task { name: name.to_string(), episodes: 0, solved: Vec::new() };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).with_context(|| format!("{}: not JSON", file.display()))?;
        t.episodes += 1;
        if v["solved"] != true {
            continue;
        }
        let states = v["states"].as_array().map(Vec::as_slice).unwrap_or_default();
        let mut e = Episode { calls: v["actions"].as_u64().unwrap_or(0) as usize, page_content: 0, state: 0 };
        for s in states {
            e.page_content += bpe.encode_ordinary(s["page_content"].as_str().unwrap_or_default()).len();
            e.state += bpe.encode_ordinary(&serde_json::to_string(s)?).len();
        }
        t.solved.push(e);
    }
    Ok(t)
}
