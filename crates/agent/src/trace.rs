//! Run traces: `trace.jsonl` (one record a line) plus PNG files beside it.
//!
//! Every line is written, flushed and synced before the run goes on, and image
//! files are written before the line that names them, so a killed run leaves a
//! readable trace up to its last turn.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Run { task: String, url: String, model: String, max_steps: usize, vision: bool, started_unix_ms: u64 },
    Turn(Box<Turn>),
    End { status: String, message: String, steps: usize, total_ms: u64, prompt_tokens: usize },
}

/// One turn: the state the model saw, what it said, what was sent, what happened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Turn {
    pub step: usize,
    pub url: String,
    pub state_hash: String,
    pub page_content: String,
    pub element_index: Value,
    /// The error the model was shown (from its previous action), if any.
    pub shown_error: Option<Value>,
    pub screenshot: Option<String>,
    pub marks_screenshot: Option<String>,
    pub prompt_chars: usize,
    pub prompt_tokens: usize,
    /// Raw reply bodies (more than one after a repair or a repeat).
    pub replies: Vec<String>,
    /// The validated action sent, if any.
    pub action: Option<Value>,
    /// The target's box in the screenshot (CSS pixels): [x, y, w, h].
    pub target_box: Option<[f64; 4]>,
    pub viewport: [u32; 2],
    /// `ok`, or the protocol error code, or `refused` / `invalid` when the runner stopped it.
    pub outcome: String,
    pub outcome_message: Option<String>,
    pub model_ms: u64,
    pub act_ms: u64,
    pub capture_ms: u64,
}

pub struct TraceWriter {
    dir: PathBuf,
    file: File,
}

impl TraceWriter {
    pub fn create(dir: &Path) -> std::io::Result<TraceWriter> {
        std::fs::create_dir_all(dir)?;
        let file = OpenOptions::new().create(true).write(true).truncate(true).open(dir.join("trace.jsonl"))?;
        Ok(TraceWriter { dir: dir.to_path_buf(), file })
    }

    /// Write an image next to the trace; returns its file name.
    pub fn image(&mut self, name: &str, png: &[u8]) -> std::io::Result<String> {
        let mut f = File::create(self.dir.join(name))?;
        f.write_all(png)?;
        f.sync_data()?;
        Ok(name.to_string())
    }

    pub fn record(&mut self, r: &Record) -> std::io::Result<()> {
        let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()?;
        self.file.sync_data()
    }
}

/// Read a trace; a torn last line (a run killed mid-write) is skipped.
pub fn read(dir: &Path) -> std::io::Result<Vec<Record>> {
    let f = File::open(dir.join("trace.jsonl"))?;
    let mut out = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line?;
        if let Ok(r) = serde_json::from_str::<Record>(&line) {
            out.push(r);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_skipped_and_turns_round_trip() {
        let dir = std::env::temp_dir().join(format!("sightline-torn-{}", std::process::id()));
        let mut w = TraceWriter::create(&dir).unwrap();
        w.record(&Record::Run {
            task: "t".into(),
            url: "http://x.test/".into(),
            model: "m".into(),
            max_steps: 3,
            vision: false,
            started_unix_ms: 1,
        })
        .unwrap();
        let turn = Turn {
            step: 1,
            url: "http://x.test/".into(),
            state_hash: "h".into(),
            page_content: "c".into(),
            element_index: serde_json::json!({}),
            shown_error: None,
            screenshot: None,
            marks_screenshot: None,
            prompt_chars: 1,
            prompt_tokens: 1,
            replies: vec!["r".into()],
            action: Some(serde_json::json!({"action": "finish_task", "message": "m"})),
            target_box: Some([1.0, 2.0, 3.0, 4.0]),
            viewport: [800, 600],
            outcome: "ok".into(),
            outcome_message: None,
            model_ms: 5,
            act_ms: 6,
            capture_ms: 7,
        };
        w.record(&Record::Turn(Box::new(turn.clone()))).unwrap();
        drop(w);
        // A run killed mid-write leaves half a line.
        let mut f = OpenOptions::new().append(true).open(dir.join("trace.jsonl")).unwrap();
        f.write_all(b"{\"type\":\"turn\",\"step\":2,\"url").unwrap();
        let records = read(&dir).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1], Record::Turn(Box::new(turn)));
        let html = crate::viewer::render(&dir).unwrap();
        assert!(html.contains("unfinished") && html.contains("class=\"turn\""), "{html}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
