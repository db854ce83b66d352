//! Who is calling: the principals of `--token-file`, and the bearer-token check.
//!
//! A token file holds one principal per line: `name token`, or a bare `token`
//! named `token-N` by its position among the file's tokens. Blank lines and
//! lines starting with `#` are skipped. Without a token file there is one
//! principal, [`Principal::anonymous`] (allowed on a loopback bind only).
//!
//! A token never leaves this module: not in `Debug`, not in an error, not in
//! a log line. [`Principals::authenticate`] compares the given token with every
//! principal's in constant time, so neither a token's bytes nor which
//! principal's token was nearly right can be timed.

use std::fmt;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The shortest token accepted.
pub const MIN_TOKEN_LEN: usize = 16;

/// The longest principal name accepted.
pub const MAX_NAME_LEN: usize = 64;

/// A caller: sessions belong to the principal that created them.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Principal(Arc<str>);

impl Principal {
    /// The one principal of a server without tokens.
    pub fn anonymous() -> Principal {
        Principal(Arc::from("anonymous"))
    }

    /// Its name (from the token file; never the token).
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Principal({:?})", self.0)
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a token file was refused. No variant carries a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenFileError {
    /// The file could not be opened or read.
    #[error("cannot read it")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Group or others have some permission on the file.
    #[error("mode {mode:04o} lets group or others read the tokens; allow its owner only: chmod 600 {}", path.display())]
    TooOpen { path: PathBuf, mode: u32 },
    /// The file holds no token.
    #[error("it holds no token (one per line: `name token`, or a bare token)")]
    Empty,
    /// A line has more than two words.
    #[error("line {line}: expected `name token` or a bare token, found {words} words")]
    Malformed { line: usize, words: usize },
    /// A token is too short to resist guessing.
    #[error("line {line}: the token is shorter than {min} characters")]
    TooShort { line: usize, min: usize },
    /// A name is too long or has characters other than letters, digits, `.`, `_`, `-`.
    #[error("line {line}: a name has at most {max} letters, digits, '.', '_' or '-'", max = MAX_NAME_LEN)]
    BadName { line: usize },
    /// Two lines name the same principal.
    #[error("line {line}: the name {name:?} is already used on line {first}")]
    DuplicateName { line: usize, first: usize, name: String },
    /// Two lines hold the same token: it would not say who calls.
    #[error("line {line}: the same token as line {first}")]
    DuplicateToken { line: usize, first: usize },
}

struct Entry {
    principal: Principal,
    token: Box<[u8]>,
}

/// The principals a server knows. Empty: no token is asked for, and every
/// caller is [`Principal::anonymous`].
#[derive(Clone, Default)]
pub struct Principals {
    entries: Arc<[Entry]>,
}

impl fmt::Debug for Principals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names only: a token is never printed.
        f.debug_list().entries(self.entries.iter().map(|e| e.principal.name())).finish()
    }
}

fn good_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl Principals {
    /// No tokens: one anonymous principal.
    pub fn anonymous() -> Principals {
        Principals::default()
    }

    /// One principal, `token-1`, holding `token` (a token file of one bare token).
    pub fn single(token: &str) -> Result<Principals, TokenFileError> {
        if token.len() < MIN_TOKEN_LEN {
            return Err(TokenFileError::TooShort { line: 1, min: MIN_TOKEN_LEN });
        }
        let entry = Entry { principal: Principal(Arc::from("token-1")), token: token.as_bytes().into() };
        Ok(Principals { entries: Arc::from([entry]) })
    }

    /// Read a token file, refusing it when group or others have any
    /// permission on it (the mode is read from the opened file).
    pub fn load(path: &Path) -> Result<Principals, TokenFileError> {
        let read = |source| TokenFileError::Read { path: path.to_path_buf(), source };
        let mut f = std::fs::File::open(path).map_err(read)?;
        let mode = f.metadata().map_err(read)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(TokenFileError::TooOpen { path: path.to_path_buf(), mode });
        }
        let mut text = String::new();
        f.read_to_string(&mut text).map_err(read)?;
        Principals::parse(&text)
    }

    /// Parse a token file's text.
    pub fn parse(text: &str) -> Result<Principals, TokenFileError> {
        let mut entries: Vec<Entry> = Vec::new();
        let mut lines_of: Vec<usize> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let words: Vec<&str> = raw.split_whitespace().collect();
            let (name, token) = match words.as_slice() {
                [] => continue,
                [first, ..] if first.starts_with('#') => continue,
                [token] => (format!("token-{}", entries.len() + 1), *token),
                [name, token] => {
                    if !good_name(name) {
                        return Err(TokenFileError::BadName { line });
                    }
                    (name.to_string(), *token)
                }
                _ => return Err(TokenFileError::Malformed { line, words: words.len() }),
            };
            if token.len() < MIN_TOKEN_LEN {
                return Err(TokenFileError::TooShort { line, min: MIN_TOKEN_LEN });
            }
            for (e, first) in entries.iter().zip(&lines_of) {
                if e.principal.name() == name {
                    return Err(TokenFileError::DuplicateName { line, first: *first, name });
                }
                if constant_time_eq(&e.token, token.as_bytes()) {
                    return Err(TokenFileError::DuplicateToken { line, first: *first });
                }
            }
            entries.push(Entry { principal: Principal(Arc::from(name)), token: token.as_bytes().into() });
            lines_of.push(line);
        }
        if entries.is_empty() {
            return Err(TokenFileError::Empty);
        }
        Ok(Principals { entries: entries.into() })
    }

    /// Whether callers must present a token.
    pub fn require_token(&self) -> bool {
        !self.entries.is_empty()
    }

    /// The principals' names, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.principal.name()).collect()
    }

    /// The principal whose token `given` is. Every token is compared in full,
    /// whichever matches, so the time taken depends only on the lengths.
    pub fn authenticate(&self, given: &[u8]) -> Option<Principal> {
        if self.entries.is_empty() {
            return Some(Principal::anonymous());
        }
        let mut found = None;
        for e in self.entries.iter() {
            let eq = constant_time_eq(given, &e.token);
            if eq && found.is_none() {
                found = Some(e.principal.clone());
            }
        }
        found
    }
}

/// Equal in time independent of where the bytes first differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u8 | ((a.len() ^ b.len()) >> 8) as u8;
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0xff);
        diff |= x ^ y;
    }
    diff == 0 && a.len() == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "alpha-0123456789abcdef";
    const B: &str = "bravo-0123456789abcdef";

    #[test]
    fn constant_time_compare() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(!constant_time_eq(b"x", b""));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn names_tokens_comments_and_positions() {
        let p = Principals::parse(&format!("# team\n\nalice {A}\n  {B}  \n")).unwrap();
        assert_eq!(p.names(), ["alice", "token-2"]);
        assert_eq!(p.authenticate(A.as_bytes()).unwrap().name(), "alice");
        assert_eq!(p.authenticate(B.as_bytes()).unwrap().name(), "token-2");
        assert!(p.authenticate(b"").is_none());
        assert!(p.authenticate(&A.as_bytes()[..A.len() - 1]).is_none());
        assert!(p.require_token());
        // The file of one bare token that `--token-file` always took.
        assert_eq!(Principals::parse(&format!("{A}\n")).unwrap().names(), ["token-1"]);
        let one = Principals::single(A).unwrap();
        assert_eq!(
            (one.names(), one.authenticate(A.as_bytes()).map(|p| p.to_string())),
            (vec!["token-1"], Some("token-1".into()))
        );
        assert!(Principals::single("short").is_err());
    }

    #[test]
    fn anonymous_without_tokens() {
        let p = Principals::anonymous();
        assert!(!p.require_token());
        assert_eq!(p.authenticate(b"anything"), Some(Principal::anonymous()));
    }

    #[test]
    fn refusals_name_the_line_and_never_the_token() {
        let cases: [(String, &str); 6] = [
            (String::new(), "it holds no token (one per line: `name token`, or a bare token)"),
            (format!("alice {A} extra"), "line 1: expected `name token` or a bare token, found 3 words"),
            ("\nalice tinytok".into(), "line 2: the token is shorter than 16 characters"),
            (format!("al/ice {A}"), "line 1: a name has at most 64 letters, digits, '.', '_' or '-'"),
            (format!("alice {A}\nalice {B}"), "line 2: the name \"alice\" is already used on line 1"),
            (format!("alice {A}\n# x\nbob {A}"), "line 3: the same token as line 1"),
        ];
        for (text, want) in cases {
            assert_eq!(Principals::parse(&text).unwrap_err().to_string(), want, "{text:?}");
        }
        let p = Principals::parse(&format!("alice {A}\nbob {B}")).unwrap();
        assert_eq!(format!("{p:?}"), "[\"alice\", \"bob\"]");
    }

    #[test]
    fn a_file_others_can_read_is_refused() {
        let dir = std::env::temp_dir().join(format!("sightline-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("tokens");
        std::fs::write(&f, format!("alice {A}\n")).unwrap();
        for (mode, ok) in [(0o600, true), (0o400, true), (0o644, false), (0o640, false), (0o602, false)] {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
            match Principals::load(&f) {
                Ok(p) => assert!(ok, "{mode:o} accepted: {p:?}"),
                Err(e) => {
                    assert!(!ok, "{mode:o} refused: {e}");
                    assert!(matches!(e, TokenFileError::TooOpen { mode: m, .. } if m == mode), "{e:?}");
                    let chmod = format!("chmod 600 {}", f.display());
                    assert_eq!(
                        e.to_string(),
                        format!("mode {mode:04o} lets group or others read the tokens; allow its owner only: {chmod}")
                    );
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
