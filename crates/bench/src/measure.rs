//! The measures `sightline-bench` times on one page: the State Object and its
//! raw CDP floor ([`measure`]), Set-of-Marks ([`measure_marks`]), semantic_v2
//! ([`measure_semantic`]) and memory over many actions ([`measure_rss`]); and
//! the generated pages they run on.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;
use sightline_api::{Action, Env, EnvOptions, StateObject};
use sightline_browser::Browser;
use sightline_cdp::protocol::accessibility::GetFullAxTree;
use sightline_cdp::protocol::dom_snapshot::CaptureSnapshot;
use sightline_cdp::protocol::page::CaptureScreenshot;
use sightline_cdp::protocol::runtime::Evaluate;
use sightline_page::COMPUTED_STYLES;

use crate::opts::{tab_options, Opts};
use crate::tool_state::ToolState;

/// A page with `n` interactive elements in cards, plus a counter button on top.
pub fn generated_page(n: usize) -> String {
    let mut html = String::with_capacity(n * 160);
    html.push_str("<!doctype html><html><head><title>Generated</title><style>body{font-family:sans-serif;margin:8px} .card{display:inline-block;width:230px;margin:3px;padding:3px;border:1px solid #ccc}</style></head><body>");
    html.push_str("<h1>Generated page</h1><button id=\"count\" onclick=\"this.textContent = 'Clicked ' + (++window.c || (window.c = 1))\">Counter</button><p id=\"out\"></p>");
    for i in 0..n.saturating_sub(1) {
        let control = match i % 4 {
            0 => format!("<a href=\"/item/{i}\">Item link {i}</a>"),
            1 => format!("<button>Action {i}</button>"),
            2 => format!("<input name=\"f{i}\" placeholder=\"Field {i}\">"),
            _ => format!("<label><input type=\"checkbox\" name=\"c{i}\"> Option {i}</label>"),
        };
        html.push_str(&format!("<div class=\"card\"><span>Card {i}</span> {control}</div>"));
    }
    html.push_str("</body></html>");
    html
}

/// The page issue 20 names: 5,000 controls in 1,250 rows of a flex table, each
/// row a bold SKU, a quantity, a visible button (with an icon) and a hidden
/// one, a link and a labelled checkbox, each in a cell of its own: 17 elements
/// a row, about 21,000 in all, plus the counter.
pub fn controls_page(rows: usize) -> String {
    let mut html = String::with_capacity(rows * 520);
    html.push_str("<!doctype html><html><head><title>Inventory</title><style>body{font-family:sans-serif;margin:8px} .row{display:flex;gap:8px;border-bottom:1px solid #ddd} .c{flex:1;padding:2px}</style></head><body>");
    html.push_str("<h1>Inventory</h1><button id=\"count\" onclick=\"this.textContent = 'Clicked ' + (++window.c || (window.c = 1))\">Counter</button>");
    for i in 0..rows {
        html.push_str(&format!(
            "<div class=\"row\"><div class=\"c\"><b>SKU-{i:05}</b></div><div class=\"c\"><span>Qty {q}</span></div><div class=\"c\"><button><span aria-hidden=\"true\">+</span> Add {i}</button></div><div class=\"c\"><button hidden>Remove {i}</button></div><div class=\"c\"><a href=\"#item-{i}\"><span>Item {i}</span></a></div><div class=\"c\"><label><input type=\"checkbox\"> <span>Select {i}</span></label></div></div>",
            q = i % 9 + 1
        ));
    }
    html.push_str("</body></html>");
    html
}

/// The element index of the generated page's counter button.
pub fn counter_index(state: &StateObject) -> Result<u64> {
    let i = state
        .element_index
        .0
        .iter()
        .position(|d| d.text_content.as_deref().is_some_and(|t| t.starts_with("Counter") || t.starts_with("Clicked")))
        .context("counter button not indexed")?;
    Ok(i as u64 + 1)
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// The physical floor of a read of what is in view, on any page: one
/// `Runtime.evaluate` (one round trip) whose script visits every element once
/// and reads its box, answering by value how many are in the viewport. A
/// capture that knows nothing of the page's structure does at least this.
pub const WALK_FLOOR: &str = "(() => { let n = 0; const w = innerWidth, h = innerHeight; \
    for (const e of document.getElementsByTagName('*')) { const r = e.getBoundingClientRect(); \
    if (r.bottom > 0 && r.right > 0 && r.top < h && r.left < w) n++; } return n; })()";

pub struct Row {
    pub label: String,
    /// `captureSnapshot` with every node's DOM rects (what the capture asked for before).
    pub raw_all_rects: Duration,
    /// `captureSnapshot` without DOM rects (what the capture asks for now).
    pub raw_snapshot: Duration,
    /// The physical floor of a viewport read ([`WALK_FLOOR`]): one in-page walk, one round trip.
    pub walk_floor: Duration,
    pub raw_screenshot: Duration,
    pub state_no_shot: Duration,
    pub state_shot: Duration,
    pub click: Duration,
    pub elements: usize,
    pub nodes: usize,
    pub content_chars: usize,
}

pub struct RssRow {
    pub elements: usize,
    pub actions: usize,
    pub first: f64,
    pub last: f64,
}

/// Resident memory, in MiB, of this process and every process in `group`.
pub fn rss_mib(group: Option<i32>) -> f64 {
    fn field(stat: &str, i: usize) -> Option<i64> {
        // Fields after the command name (which may hold spaces) start at ") ".
        stat.rsplit_once(") ")?.1.split(' ').nth(i)?.parse().ok()
    }
    let page = 4096.0 / (1024.0 * 1024.0);
    let own = std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| field(&s, 21)).unwrap_or(0);
    let mut total = own;
    if let (Some(g), Ok(dir)) = (group, std::fs::read_dir("/proc")) {
        for e in dir.flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
            // pgrp is the 3rd field after the name, rss the 22nd.
            if field(&stat, 2) == Some(i64::from(g)) {
                total += field(&stat, 21).unwrap_or(0);
            }
        }
    }
    total as f64 * page
}

/// RSS after the first state, and after `actions` more turns on the same page
/// (clicks on the counter and scrolls, each answered with a full state).
pub async fn measure_rss(browser: &Browser, a: &Opts, url: &str, n: usize, actions: usize) -> Result<RssRow> {
    let tab = browser.new_tab(tab_options(a)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: true }).await?;
    let first =
        env.step_action(Action::Navigate { url: url.to_string() }, json!({"action": "navigate", "url": url})).await;
    anyhow::ensure!(first.state.error.is_none(), "loading {url}: {:?}", first.state.error);
    let first_rss = rss_mib(browser.process_group());
    for i in 0..actions {
        let action = match i % 4 {
            0 => json!({"action": "scroll", "direction": "down", "pixels": 400}),
            1 => json!({"action": "scroll", "direction": "up", "pixels": 400}),
            _ => {
                json!({"action": "click_element", "element_index": counter_index(env.state())?})
            }
        };
        let turn = env.step(&action.to_string()).await;
        anyhow::ensure!(turn.state.error.is_none(), "action {i} failed: {:?}", turn.state.error);
    }
    let last = rss_mib(browser.process_group());
    env.close().await;
    Ok(RssRow { elements: n, actions, first: first_rss, last })
}

pub struct SemRow {
    pub label: String,
    pub raw_snapshot: Duration,
    pub raw_ax: Duration,
    pub semantic: Duration,
    pub outline_chars: usize,
    pub content_chars: usize,
}

/// `get_browser_state` (semantic_v2) as a tool caller gets it ([`ToolState::measure_semantic`]:
/// through the API, its reply encoded, in a loop of its own as the peers' snapshot
/// tools are timed), beside the raw DOMSnapshot and the full accessibility tree it
/// does not ask for, timed on a tab of their own (the tree released after each read,
/// as it slows later snapshots).
pub async fn measure_semantic(
    browser: &Browser,
    tool: &ToolState,
    a: &Opts,
    url: &str,
    label: String,
    runs: usize,
) -> Result<SemRow> {
    use sightline_cdp::protocol::accessibility::Disable;
    let tab = browser.new_tab(tab_options(a)?).await?;
    tab.navigate(url).await?;
    let params =
        CaptureSnapshot { computed_styles: COMPUTED_STYLES, include_paint_order: true, include_dom_rects: false };
    let (mut snap, mut ax) = (vec![], vec![]);
    for round in 0..=runs {
        let t = Instant::now();
        tab.execute(&GetFullAxTree {}).await?;
        let d2 = t.elapsed();
        tab.execute(&Disable {}).await?;
        let t = Instant::now();
        tab.execute(&params).await?;
        let d1 = t.elapsed();
        if round > 0 {
            snap.push(d1);
            ax.push(d2);
        }
    }
    let content_chars = tab.capture(false).await?.view.page_content.len();
    tab.close().await;
    let (semantic, reply) = tool.measure_semantic(url, runs).await?;
    Ok(SemRow {
        label,
        raw_snapshot: median(snap),
        raw_ax: median(ax),
        semantic,
        outline_chars: reply["outline"].as_str().unwrap_or_default().len(),
        content_chars,
    })
}

pub struct MarkRow {
    pub label: String,
    pub marks: usize,
    pub screenshot: Duration,
    pub mark: Duration,
    pub marks_png: Duration,
    pub draw: Duration,
}

pub async fn measure_marks(browser: &Browser, a: &Opts, url: &str, n: usize, runs: usize) -> Result<MarkRow> {
    use sightline_pack::{Cx, Driver};
    use sightline_page::draw_marks;
    let driver = sightline_chrome::ChromeDriver::new(browser.new_tab(tab_options(a)?).await?);
    let cx = Cx::new(Duration::from_secs(600));
    driver.navigate(&cx, url).await?;
    let (mut shot, mut mark, mut png, mut draw) = (vec![], vec![], vec![], vec![]);
    let mut count = 0;
    for round in 0..=runs {
        let t = Instant::now();
        driver.screenshot(&cx).await?;
        let d1 = t.elapsed();
        let t = Instant::now();
        let set = driver.marks(&cx, false).await?;
        let d2 = t.elapsed();
        count = set.marks.len();
        let t = Instant::now();
        let set = driver.marks(&cx, true).await?;
        let t2 = Instant::now();
        draw_marks(set.screenshot.as_deref().unwrap_or_default(), &set.marks)?;
        let d4 = t2.elapsed();
        let d3 = t.elapsed();
        if round > 0 {
            shot.push(d1);
            mark.push(d2);
            png.push(d3);
            draw.push(d4);
        }
    }
    driver.into_tab().close().await;
    Ok(MarkRow {
        label: format!("{n} elements"),
        marks: count,
        screenshot: median(shot),
        mark: median(mark),
        marks_png: median(png),
        draw: median(draw),
    })
}

pub async fn measure(browser: &Browser, a: &Opts, url: &str, n: usize, runs: usize) -> Result<Row> {
    let tab = browser.new_tab(tab_options(a)?).await?;
    let mut env = Env::new(tab, EnvOptions { screenshot: false }).await?;
    let first =
        env.step_action(Action::Navigate { url: url.to_string() }, json!({"action": "navigate", "url": url})).await;
    anyhow::ensure!(first.state.error.is_none(), "loading {url}: {:?}", first.state.error);
    let tab = env.tab();
    let all_rects =
        CaptureSnapshot { computed_styles: COMPUTED_STYLES, include_paint_order: true, include_dom_rects: true };
    let no_rects = CaptureSnapshot { include_dom_rects: false, ..all_rects.clone() };
    let (mut raw_snap, mut raw_shot, mut no_shot, mut shot, mut click) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut raw_all, mut walk) = (vec![], vec![]);
    // One warm-up round, then interleaved measures so drift hits all alike.
    for round in 0..=runs {
        let t = Instant::now();
        tab.execute(&all_rects).await?;
        let d0 = t.elapsed();
        let t = Instant::now();
        tab.execute(&no_rects).await?;
        let d1 = t.elapsed();
        let t = Instant::now();
        tab.execute(&Evaluate::new(WALK_FLOOR).by_value()).await?;
        let dw = t.elapsed();
        let t = Instant::now();
        tab.execute(&CaptureScreenshot::PNG).await?;
        let d2 = t.elapsed();
        let t = Instant::now();
        let c = tab.capture(false).await?;
        let _ = StateObject::from_view(&c.view, c.screenshot).to_json_line();
        let d3 = t.elapsed();
        let t = Instant::now();
        let c = tab.capture(true).await?;
        let _ = StateObject::from_view(&c.view, c.screenshot).to_json_line();
        let d4 = t.elapsed();
        if round > 0 {
            raw_all.push(d0);
            raw_snap.push(d1);
            walk.push(dw);
            raw_shot.push(d2);
            no_shot.push(d3);
            shot.push(d4);
        }
    }
    for round in 0..=runs {
        let counter = counter_index(env.state())?;
        let t = Instant::now();
        let turn = env.step(&json!({"action": "click_element", "element_index": counter}).to_string()).await;
        let d = t.elapsed();
        anyhow::ensure!(turn.state.error.is_none(), "click failed: {:?}", turn.state.error);
        if round > 0 {
            click.push(d);
        }
    }
    let view = &env.captured().view;
    let row = Row {
        label: format!("{n} elements"),
        raw_all_rects: median(raw_all),
        raw_snapshot: median(raw_snap),
        walk_floor: median(walk),
        raw_screenshot: median(raw_shot),
        state_no_shot: median(no_shot),
        state_shot: median(shot),
        click: median(click),
        elements: view.elements.len(),
        nodes: view.node_count(),
        content_chars: view.page_content.len(),
    };
    eprintln!("  {}: done", row.label);
    env.close().await;
    Ok(row)
}
