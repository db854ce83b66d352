//! `sightline env`: the element-index protocol over JSON lines on stdio. The
//! first State Object goes out once the start page is stable; then one State
//! Object per Action Object read, until EOF, `finish_task`/`fail_task`, or the
//! browser's end.
//!
//! Bounded: a line past `MAX_LINE_BYTES` is discarded as it arrives, and a bad
//! line (too long, not UTF-8, NUL) is `ACTION_VALIDATION_FAILED`, never the end.

use sightline_api::{Env, LineReader, Turn};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvEnd {
    /// The input ended.
    Eof,
    /// `finish_task` or `fail_task`.
    Ended,
    /// The browser is gone (the last State Object says so).
    BrowserGone,
}

/// Write `first`, then answer each line of stdin on stdout.
pub async fn run_stdio(env: &mut Env, first: &Turn) -> std::io::Result<EnvEnd> {
    run(env, first, BufReader::new(tokio::io::stdin()), tokio::io::stdout()).await
}

/// Write `first`, then answer each line of `input` on `out`.
pub async fn run<R, W>(env: &mut Env, first: &Turn, input: R, mut out: W) -> std::io::Result<EnvEnd>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    write_line(&mut out, &first.state.to_json_line()).await?;
    let mut lines = LineReader::new(input);
    while let Some(line) = lines.next_line().await? {
        let turn = match line {
            Ok(line) => env.step(&line).await,
            Err(e) => env.reject(&e),
        };
        write_line(&mut out, &turn.state.to_json_line()).await?;
        if turn.fatal {
            return Ok(EnvEnd::BrowserGone);
        }
        if turn.ended {
            return Ok(EnvEnd::Ended);
        }
    }
    Ok(EnvEnd::Eof)
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, line: &str) -> std::io::Result<()> {
    out.write_all(line.as_bytes()).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}
