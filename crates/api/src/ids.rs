//! Opaque ids: a per-session salt plus a counter, never reused in a session.

use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// A short random-looking salt, different for every session.
pub fn salt() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let seed = format!("{nanos}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    Sha256::digest(seed.as_bytes()).iter().take(3).map(|b| format!("{b:02x}")).collect()
}

/// Issues ids in one session's namespace.
#[derive(Debug)]
pub struct Ids {
    pub salt: String,
    next: u64,
}

impl Ids {
    pub fn new() -> Ids {
        Ids { salt: salt(), next: 0 }
    }
    fn n(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
    pub fn target(&mut self) -> String {
        let n = self.n();
        format!("bt-{}-{n}", self.salt)
    }
    pub fn tab(&mut self) -> String {
        let n = self.n();
        format!("tab-{}-{n}", self.salt)
    }
    pub fn snapshot(&mut self) -> String {
        format!("p{}", self.n())
    }
    pub fn continuation(&mut self) -> String {
        let n = self.n();
        format!("bc-{}-{n}", self.salt)
    }
}

impl Default for Ids {
    fn default() -> Self {
        Ids::new()
    }
}
