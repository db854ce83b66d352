//! Reading agent input one line at a time without trusting it.
//!
//! [`LineReader`] never holds more than [`MAX_LINE_BYTES`] of one line: past
//! the limit it discards the rest of that line as it arrives and reports
//! [`LineError::TooLong`]. A line that is not UTF-8 or that holds a NUL byte is
//! reported too. Either way the stream stays usable: the next call reads the
//! next line. Front ends turn a [`LineError`] into a typed error
//! (`ACTION_VALIDATION_FAILED`, JSON-RPC parse error) and go on.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest input line accepted, in bytes (without the newline): 4 MiB.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// Why a line was not accepted. The rest of the stream is unaffected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    #[error("the line is longer than the limit of {limit} bytes (it was discarded)")]
    TooLong { limit: usize },
    #[error("the line is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 { offset: usize },
    #[error("the line contains a NUL byte at offset {offset}")]
    Nul { offset: usize },
}

/// Lines of at most `limit` bytes from an async reader.
pub struct LineReader<R> {
    inner: R,
    limit: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> LineReader<R> {
        LineReader::with_limit(inner, MAX_LINE_BYTES)
    }

    pub fn with_limit(inner: R, limit: usize) -> LineReader<R> {
        LineReader { inner, limit }
    }

    /// The next line without its `\n` (and a `\r` before it), `Ok(None)` at EOF.
    /// A final line without a newline counts as a line.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Result<String, LineError>>> {
        let mut buf: Vec<u8> = Vec::new();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (part, found) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (&chunk[..i], Some(i)),
                None => (chunk, None),
            };
            if !too_long {
                if buf.len() + part.len() > self.limit {
                    too_long = true;
                    buf = Vec::new();
                } else {
                    buf.extend_from_slice(part);
                }
            }
            let used = found.map_or(chunk.len(), |i| i + 1);
            self.inner.consume(used);
            if found.is_some() {
                break;
            }
        }
        if too_long {
            return Ok(Some(Err(LineError::TooLong { limit: self.limit })));
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if let Some(offset) = buf.iter().position(|b| *b == 0) {
            return Ok(Some(Err(LineError::Nul { offset })));
        }
        Ok(Some(String::from_utf8(buf).map_err(|e| LineError::NotUtf8 { offset: e.utf8_error().valid_up_to() })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(input: &[u8], limit: usize) -> Vec<Result<String, LineError>> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            // A tiny buffer, so lines span many reads.
            let mut r = LineReader::with_limit(tokio::io::BufReader::with_capacity(3, input), limit);
            let mut out = Vec::new();
            while let Some(l) = r.next_line().await.unwrap() {
                out.push(l);
            }
            out
        })
    }

    #[test]
    fn bad_lines_are_reported_and_the_stream_goes_on() {
        let input = b"ok\n\xff\xfe\na\x00b\r\n0123456789ABCDEF\nlast";
        assert_eq!(
            read_all(input, 10),
            vec![
                Ok("ok".into()),
                Err(LineError::NotUtf8 { offset: 0 }),
                Err(LineError::Nul { offset: 1 }),
                Err(LineError::TooLong { limit: 10 }),
                Ok("last".into()),
            ]
        );
        assert_eq!(read_all(b"", 10), vec![]);
        assert_eq!(read_all(b"\n\n", 10), vec![Ok(String::new()), Ok(String::new())]);
        assert_eq!(read_all(b"0123456789\n", 10), vec![Ok("0123456789".into())]);
    }
}
