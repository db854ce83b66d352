//! The `sightline` binary driven as a user's program would: through pipes.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
}

struct Session {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Session {
    fn start(url: &str) -> Session {
        let mut child = bin()
            .args(["env", url, "--no-screenshot"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sightline");
        let out = BufReader::new(child.stdout.take().unwrap());
        Session { child, out }
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).expect("read a line");
        assert!(!line.is_empty(), "sightline closed stdout early");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn send(&mut self, line: &str) -> Value {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        self.read()
    }

    fn wait(mut self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert_no_leftovers(self.child.id());
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "sightline did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// No process still runs with the profile directory of sightline process `pid`,
/// and the directory is gone.
fn assert_no_leftovers(pid: u32) {
    let marker = format!("sightline-profile-{pid}-");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut alive = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
                if String::from_utf8_lossy(&cmd).contains(&marker) {
                    alive.push(entry.file_name().to_string_lossy().to_string());
                }
            }
        }
        let dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&marker))
            .collect();
        if alive.is_empty() && dirs.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left behind: processes {alive:?}, profile dirs {}", dirs.len());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn env_loop_through_a_pipe() {
    world();
    let mut s = Session::start(&url("/form.html"));
    let first = s.read();
    for k in ["url", "page_content", "element_index", "screenshot", "state_hash"] {
        assert!(first.get(k).is_some(), "{k} missing");
    }
    assert_eq!(first["screenshot"], "");
    assert!(first.get("error").is_none());
    let q = first["element_index"].as_object().unwrap().iter().find(|(_, d)| d["attributes"]["name"] == "q").unwrap().0.clone();
    let typed = s.send(&json!({"action": "input_text", "element_index": q.parse::<u64>().unwrap(), "text": "!"}).to_string());
    assert_eq!(typed["element_index"][&q]["attributes"]["value"], "abc!");
    assert_ne!(typed["state_hash"], first["state_hash"]);
    // A malformed line gets an error and the loop goes on.
    let bad = s.send("this is not json");
    assert_eq!(bad["error"]["code"], "ACTION_VALIDATION_FAILED");
    assert_eq!(bad["state_hash"], typed["state_hash"]);
    let missing = s.send(r#"{"action":"click_element","element_index":99}"#);
    assert_eq!(missing["error"]["code"], "INVALID_ELEMENT_INDEX");
    assert!(missing["error"]["message"].as_str().unwrap().contains("99"));
    assert_eq!(missing["error"]["failed_action"], json!({"action": "click_element", "element_index": 99}));
    let last = s.send(r#"{"action":"finish_task","message":"all good"}"#);
    assert_eq!(last["task"], json!({"status": "finished", "message": "all good"}));
    assert_eq!(s.wait(), 0);
}

#[test]
fn env_exits_cleanly_on_eof_and_on_signals() {
    world();
    let mut s = Session::start(&url("/kinds.html"));
    s.read();
    drop(s.child.stdin.take());
    assert_eq!(s.wait(), 0, "EOF exits 0");
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let mut s = Session::start(&url("/kinds.html"));
        s.read();
        // SAFETY: signalling the child we spawned.
        unsafe {
            libc::kill(s.child.id() as i32, sig);
        }
        assert_eq!(s.wait(), code);
    }
}

#[test]
fn state_prints_one_state_object() {
    world();
    let out = bin().args(["state", &url("/kinds.html"), "--pretty", "--no-screenshot"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("{\n"), "pretty JSON");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["page_content"].as_str().unwrap().contains("# Every interactive kind"));
    assert!(out.stderr.is_empty() || !String::from_utf8_lossy(&out.stderr).contains('{'), "logs stay off stdout");
}

#[test]
fn bad_command_lines_say_what_is_wrong() {
    let out = bin().args(["env", "not-a-url"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("absolute URL"));
    let out = bin().args(["env", "http://127.0.0.1:1/", "--viewport", "wide"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("WIDTHxHEIGHT"));
    let out = bin().args(["frobnicate"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command"));
    let out = bin().args(["state", "http://127.0.0.1:1/", "--chrome", "/nonexistent/chromium"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("apt-get install -y chromium"), "{err}");
    let out = bin().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("sightline env URL"));
}
