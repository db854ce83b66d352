//! The tables of `bench tokens`: a row per page and a summary per corpus part,
//! then the summary over the whole page corpus and its last line.

use super::{median, Count, Page, FIRST_PEER as PLAYWRIGHT, PARTS, READERS};

/// A part's page rows and its summary.
pub fn part(title: &str, pages: &[&Page]) {
    println!("\nTokens a model reads per state (o200k_base, tiktoken-rs), {title}; tokens / chars:\n");
    println!("| page | {} |", READERS.join(" | "));
    println!("|---|{}", "---|".repeat(READERS.len()));
    for p in pages {
        let cells: Vec<String> =
            p.counts.iter().map(|c| c.map_or("-".to_string(), |c| format!("{} / {}", c.tokens, c.chars))).collect();
        println!("| {} | {} |", p.label, cells.join(" | "));
    }
    summary(title, pages);
}

/// How the mid-task states differ from the first ones, as Sightline's page_content shows them.
pub fn mid_states(pages: &[Page]) {
    let first = |task: &str| pages.iter().find(|p| p.part == 0 && p.label == task).and_then(|p| p.text.as_deref());
    let mids: Vec<&Page> = pages.iter().filter(|p| p.part == 1).collect();
    let changed = mids.iter().filter(|p| p.text.is_some() && p.text.as_deref() != first(&p.label)).count();
    let ended =
        mids.iter().filter(|p| p.text.as_deref().is_some_and(|t| episodes_done(t).is_some_and(|n| n > 0))).count();
    println!(
        "\nMid-task states: Sightline's page_content differs from the first state's on {changed} of {} tasks; \
         on {ended} the step ended the episode (the reward display counts one, the START cover is back).",
        mids.len()
    );
}

/// The number after `Episodes done:` in MiniWoB++'s reward display.
fn episodes_done(text: &str) -> Option<u32> {
    let at = text.rfind("Episodes done:")? + "Episodes done:".len();
    let rest = text[at..].trim_start();
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The summary over the whole page corpus; returns the command's last line.
pub fn whole(pages: &[&Page]) -> String {
    let parts: Vec<String> = PARTS
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}: {t}", pages.iter().filter(|p| p.part == i).count()))
        .collect();
    let title = format!("the whole page corpus ({})", parts.join("; "));
    let med = summary(&title, pages);
    let m = |i: usize| med[i].map_or("-".to_string(), |m: usize| m.to_string());
    format!(
        "tokens per page (median): sightline {}, semantic_v2 {}, playwright-mcp {}, chrome-devtools-mcp {}",
        m(0),
        m(2),
        m(PLAYWRIGHT),
        m(PLAYWRIGHT + 1)
    )
}

/// Medians and totals over the pages every reader that ran read, so that each column sums the
/// same pages. Returns the medians of tokens.
fn summary(title: &str, pages: &[&Page]) -> [Option<usize>; 7] {
    let ran: Vec<bool> = (0..READERS.len()).map(|i| pages.iter().any(|p| p.counts[i].is_some())).collect();
    let full: Vec<&&Page> =
        pages.iter().filter(|p| p.counts.iter().zip(&ran).all(|(c, ran)| c.is_some() || !ran)).collect();
    let column = |i: usize, f: fn(&Count) -> usize| -> Vec<usize> {
        full.iter().filter_map(|p| p.counts[i].as_ref().map(f)).collect()
    };
    println!("\nSummary, {title}, over the {} pages (of {}) that every reader read:\n", full.len(), pages.len());
    println!(
        "| reader | median tokens | x Playwright MCP | total tokens | median chars | total chars | chars per token |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut med = [None; 7];
    for (i, m) in med.iter_mut().enumerate() {
        *m = if ran[i] { median(column(i, |c| c.tokens)) } else { None };
    }
    for (i, name) in READERS.iter().enumerate() {
        if !ran[i] {
            println!("| {name} | - | - | - | - | - | - |");
            continue;
        }
        let tokens = column(i, |c| c.tokens);
        let chars = column(i, |c| c.chars);
        let (tt, tc): (usize, usize) = (tokens.iter().sum(), chars.iter().sum());
        let versus = match (med[i], med[PLAYWRIGHT]) {
            (Some(m), Some(p)) if p > 0 => format!("{:.2}x", m as f64 / p as f64),
            _ => "-".to_string(),
        };
        println!(
            "| {name} | {} | {versus} | {tt} | {} | {tc} | {:.2} |",
            med[i].unwrap_or(0),
            median(chars).unwrap_or(0),
            tc as f64 / tt.max(1) as f64
        );
    }
    med
}
