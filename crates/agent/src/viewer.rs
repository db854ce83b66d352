//! `sightline trace view`: one self-contained HTML page for a trace.
//!
//! Everything a trace holds may come from an untrusted page or model (titles,
//! texts, URLs, replies, even the run's status and image file names), so every
//! string is escaped for text and attribute context alike, CSS classes come
//! from a fixed set, and image names must be plain file names inside the trace.

use std::fmt::Write;
use std::path::Path;

use base64::Engine;

use crate::trace::{read, Record};

/// Escape for HTML text and (double- or single-quoted) attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The CSS class of an outcome or status: one of a fixed set, never the text itself.
fn class_of(status: &str) -> &'static str {
    if status == "ok" || status == "finished" {
        "ok"
    } else {
        "bad"
    }
}

fn data_uri(dir: &Path, file: &Option<String>) -> Option<String> {
    let name = file.as_ref()?;
    // Only a plain file name inside the trace directory: never a path out of it.
    let plain = !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != "..";
    if !plain {
        return None;
    }
    let bytes = std::fs::read(dir.join(name)).ok()?;
    Some(format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}

/// Render the trace in `dir` as HTML.
pub fn render(dir: &Path) -> std::io::Result<String> {
    let records = read(dir)?;
    let mut head = String::new();
    let mut turns = String::new();
    let (mut steps, mut tokens, mut ms) = (0usize, 0usize, 0u64);
    let mut end = None;
    for r in &records {
        match r {
            Record::Run { task, url, model, max_steps, vision, .. } => {
                let _ = write!(
                    head,
                    "<p><b>Task:</b> {}</p><p><b>Start:</b> {} · <b>Model:</b> {} · <b>Max steps:</b> {max_steps} · <b>Vision:</b> {vision}</p>",
                    esc(task),
                    esc(url),
                    esc(model)
                );
            }
            Record::Turn(t) => {
                steps += 1;
                tokens += t.prompt_tokens;
                ms += t.model_ms + t.act_ms + t.capture_ms;
                let action = t.action.as_ref().map(|a| a.to_string()).unwrap_or_else(|| "—".into());
                let class = class_of(&t.outcome);
                let _ = write!(
                    turns,
                    "<section class=\"turn\" id=\"step-{}\"><h2>Step {} <span class=\"{class}\">{}</span></h2>",
                    t.step,
                    t.step,
                    esc(&t.outcome)
                );
                let _ = write!(
                    turns,
                    "<p class=\"url\">{}</p><p><b>Action:</b> <code>{}</code></p>",
                    esc(&t.url),
                    esc(&action)
                );
                if let Some(m) = &t.outcome_message {
                    let _ = write!(turns, "<p class=\"error\">{}</p>", esc(m));
                }
                if let Some(e) = &t.shown_error {
                    let _ = write!(turns, "<p class=\"shown\">Shown to the model: {}</p>", esc(&e.to_string()));
                }
                let _ = write!(
                    turns,
                    "<p class=\"timing\">model {} ms · act {} ms · capture {} ms · ~{} prompt tokens</p>",
                    t.model_ms, t.act_ms, t.capture_ms, t.prompt_tokens
                );
                turns.push_str("<div class=\"shots\">");
                for (label, file, highlight) in
                    [("screenshot", &t.screenshot, true), ("marks", &t.marks_screenshot, false)]
                {
                    let Some(uri) = data_uri(dir, file) else { continue };
                    let _ = write!(
                        turns,
                        "<figure><div class=\"frame\"><img alt=\"{label} of step {}\" src=\"{uri}\">",
                        t.step
                    );
                    if let (true, Some([x, y, w, h])) = (highlight, t.target_box) {
                        let (vw, vh) = (t.viewport[0].max(1) as f64, t.viewport[1].max(1) as f64);
                        let _ = write!(
                            turns,
                            "<div class=\"target\" style=\"left:{:.3}%;top:{:.3}%;width:{:.3}%;height:{:.3}%\"></div>",
                            x / vw * 100.0,
                            y / vh * 100.0,
                            w / vw * 100.0,
                            h / vh * 100.0
                        );
                    }
                    let _ = write!(turns, "</div><figcaption>{label}</figcaption></figure>");
                }
                turns.push_str("</div>");
                for (i, reply) in t.replies.iter().enumerate() {
                    let _ = write!(
                        turns,
                        "<details><summary>model reply {}</summary><pre>{}</pre></details>",
                        i + 1,
                        esc(reply)
                    );
                }
                let _ = write!(
                    turns,
                    "<details><summary>page_content</summary><pre>{}</pre></details></section>",
                    esc(&t.page_content)
                );
            }
            Record::End { status, message, total_ms, .. } => {
                end = Some((status.clone(), message.clone()));
                // The run's wall time, startup included, when the run ended cleanly.
                ms = *total_ms;
            }
        }
    }
    let ending = match &end {
        Some((s, m)) => format!("<p class=\"end {}\"><b>{}</b>: {}</p>", class_of(s), esc(s), esc(m)),
        None => "<p class=\"end bad\"><b>unfinished</b>: the trace stops here (the run was interrupted)</p>".into(),
    };
    Ok(format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sightline trace</title><style>
body{{font-family:system-ui,sans-serif;margin:24px;max-width:1400px;color:#222}}
.totals{{display:flex;gap:24px;font-size:18px}} .turn{{border-top:1px solid #ccc;padding:12px 0}}
.ok{{color:#1a7f37}} .bad{{color:#c62828}} .error{{color:#c62828}} .url{{color:#555;font-size:13px}}
.shots{{display:flex;gap:16px;flex-wrap:wrap}} figure{{margin:0;max-width:640px}} .frame{{position:relative}}
.frame img{{width:100%;display:block;border:1px solid #ddd}}
.target{{position:absolute;border:3px solid #ff1744;box-shadow:0 0 0 3px rgba(255,23,68,.3);box-sizing:border-box}}
pre{{white-space:pre-wrap;background:#f6f8fa;padding:8px;max-height:300px;overflow:auto}} code{{background:#f6f8fa}}
</style></head><body><h1>Sightline run</h1>{head}
<div class="totals"><span><b>{steps}</b> steps</span><span><b>{:.1}</b> s</span><span><b>~{tokens}</b> prompt tokens</span></div>
{ending}{turns}</body></html>"#,
        ms as f64 / 1000.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{TraceWriter, Turn};

    #[test]
    fn hostile_strings_stay_text() {
        let dir = std::env::temp_dir().join(format!("sightline-viewer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let evil = "\"'><img src=x onerror=alert(1)><script>alert(2)</script>";
        let mut w = TraceWriter::create(&dir).unwrap();
        w.record(&Record::Run {
            task: evil.into(),
            url: evil.into(),
            model: evil.into(),
            max_steps: 1,
            vision: false,
            started_unix_ms: 0,
        })
        .unwrap();
        let turn: Turn = serde_json::from_value(serde_json::json!({
            "step": 1, "url": evil, "state_hash": evil, "page_content": evil, "element_index": {},
            "shown_error": evil, "screenshot": "../../../../etc/passwd", "marks_screenshot": "/etc/hostname",
            "prompt_chars": 0, "prompt_tokens": 0, "replies": [evil], "action": {"action": evil},
            "target_box": null, "viewport": [10, 10], "outcome": evil, "outcome_message": evil,
            "model_ms": 0, "act_ms": 0, "capture_ms": 0
        }))
        .unwrap();
        w.record(&Record::Turn(Box::new(turn))).unwrap();
        w.record(&Record::End { status: evil.into(), message: evil.into(), steps: 1, total_ms: 1, prompt_tokens: 0 })
            .unwrap();
        let html = render(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(!html.contains("<img src=x"), "{html}");
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("\"'>"), "an attribute was closed: {html}");
        assert!(!html.contains("data:image/png"), "a path outside the trace was read");
        assert!(html.contains("class=\"end bad\""));
        assert_eq!(html.matches("<img").count(), 0);
    }
}
