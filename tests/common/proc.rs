//! The `sightline` binary as a user's program drives it: a child speaking JSON
//! lines through pipes, whose reads time out instead of hanging the test.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one answer of the binary may take in these tests (a hang guard, not a measure).
pub const ACT: Duration = Duration::from_secs(30);

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
}

pub struct Proc {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    /// `sightline ARGS…` with its stdin and stdout piped, stderr dropped.
    pub fn start(args: &[&str]) -> Proc {
        Proc::spawn(bin().args(args))
    }

    /// A prepared command (arguments, environment) run the same way.
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("run sightline");
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Proc { child, stdin, lines }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line as JSON, within `limit`.
    pub fn read(&self, limit: Duration) -> Value {
        let line = self.lines.recv_timeout(limit).unwrap_or_else(|e| panic!("no answer within {limit:?}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Send one line and take its answer, which must come within `limit`.
    pub fn ask(&mut self, bytes: &[u8], limit: Duration) -> (Value, Duration) {
        let t = Instant::now();
        self.write(bytes);
        let v = self.read(limit);
        (v, t.elapsed())
    }

    /// Send one line, answered within [`ACT`].
    pub fn send(&mut self, line: &str) -> Value {
        self.ask(line.as_bytes(), ACT).0
    }

    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Its exit code, once it exits by itself within 20 s.
    pub fn exit_code(&mut self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "sightline did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait for it to exit (a signal, or the end of its input); it leaves nothing behind.
    pub fn wait(mut self) -> i32 {
        let code = self.exit_code();
        super::assert_no_leftovers(self.child.id());
        code
    }

    /// Close stdin; it exits within 20 s and leaves nothing behind.
    pub fn finish(mut self) -> i32 {
        self.close_stdin();
        self.wait()
    }
}
