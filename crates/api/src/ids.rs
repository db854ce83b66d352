//! Opaque ids: a per-session salt plus a counter, never reused in a session.
//!
//! Each kind of id is a type with `Display` (its wire form) and `FromStr`
//! (the wire form parsed back): [`TargetId`] `bt-<salt>-<n>`, [`TabId`]
//! `tab-<salt>-<n>`, [`ContinuationId`] `bc-<salt>-<n>`, [`SnapshotId`]
//! `p<n>` and [`RefId`] `p<n>:<element>`. A string that does not parse names
//! no id of the session, so lookups answer it as they answer an unknown id.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use sightline_page::{ElementIndex, IndexError};

/// A short random-looking salt, different for every session.
pub fn salt() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let seed = format!("{nanos}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    Sha256::digest(seed.as_bytes()).iter().take(3).map(|b| format!("{b:02x}")).collect()
}

/// A string that is not an id of the kind asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a {kind} id")]
pub struct IdError {
    pub kind: &'static str,
    pub text: String,
}

/// `<prefix>-<salt>-<n>`: the salt and the counter.
fn parse_salted(s: &str, prefix: &str, kind: &'static str) -> Result<(String, u64), IdError> {
    let bad = || IdError { kind, text: s.to_string() };
    let rest = s.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')).ok_or_else(bad)?;
    let (salt, n) = rest.split_once('-').ok_or_else(bad)?;
    if salt.is_empty() || !salt.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let n = n.parse::<u64>().map_err(|_| bad())?;
    Ok((salt.to_string(), n))
}

macro_rules! salted_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            salt: String,
            n: u64,
        }

        impl $name {
            /// The salt of the session that issued it.
            pub fn salt(&self) -> &str {
                &self.salt
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "-{}-{}"), self.salt, self.n)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                parse_salted(s, $prefix, $kind).map(|(salt, n)| $name { salt, n })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "pattern": concat!("^", $prefix, "-[0-9a-f]+-[0-9]+$"),
                    "description": concat!("An opaque ", $kind, " id."),
                })
            }
        }
    };
}

salted_id!(
    /// A target generation (one browser binding of a session): `bt-<salt>-<n>`.
    TargetId, "bt", "target"
);
salted_id!(
    /// A tab of a session: `tab-<salt>-<n>`.
    TabId, "tab", "tab"
);
salted_id!(
    /// The rest of a snapshot, single-use: `bc-<salt>-<n>`.
    ContinuationId, "bc", "continuation"
);

/// A snapshot of a tab: `p<n>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SnapshotId(u64);

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p{}", self.0)
    }
}

impl FromStr for SnapshotId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<SnapshotId, IdError> {
        let n = s.strip_prefix('p').filter(|n| n.bytes().all(|b| b.is_ascii_digit()));
        n.and_then(|n| n.parse().ok()).map(SnapshotId).ok_or_else(|| IdError { kind: "snapshot", text: s.to_string() })
    }
}

impl serde::Serialize for SnapshotId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl schemars::JsonSchema for SnapshotId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SnapshotId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "pattern": "^p[0-9]+$", "description": "A snapshot id." })
    }
}

/// The JSON Schema of a ref (`p<n>:<number>`), for reply fields that carry one.
pub(crate) fn ref_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "pattern": "^p[0-9]+:[0-9]+$", "description": "A ref: p<snapshot>:<number>." })
}

impl SnapshotId {
    /// The ref of element (or semantic node) number `n` in this snapshot.
    pub fn at(self, n: u32) -> String {
        format!("{self}:{n}")
    }
}

/// A ref: an element (or semantic node) number in a snapshot, `p<n>:<number>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RefId {
    pub snapshot: SnapshotId,
    pub index: ElementIndex,
}

/// Why a string is not a ref.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    /// Not of the form `p<n>:<number>`.
    #[error(transparent)]
    Malformed(#[from] IdError),
    /// The number is past the largest element index: it names no element.
    #[error(transparent)]
    TooLarge(IndexError),
    /// `p…:<number>` whose snapshot part is no snapshot id (so names no snapshot).
    #[error("{snapshot:?} is no snapshot id")]
    UnknownSnapshot { snapshot: String },
}

impl fmt::Display for RefId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.snapshot, self.index.get())
    }
}

impl FromStr for RefId {
    type Err = RefError;
    fn from_str(r: &str) -> Result<RefId, RefError> {
        let bad = || IdError { kind: "ref", text: r.to_string() };
        let (snap, n) = r.split_once(':').ok_or_else(bad)?;
        if !snap.starts_with('p') {
            return Err(bad().into());
        }
        let index = n.parse::<ElementIndex>().map_err(|e| match e {
            IndexError::TooLarge { .. } => RefError::TooLarge(e),
            _ => RefError::Malformed(bad()),
        })?;
        let snapshot =
            snap.parse::<SnapshotId>().map_err(|_| RefError::UnknownSnapshot { snapshot: snap.to_string() })?;
        Ok(RefId { snapshot, index })
    }
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
    pub fn target(&mut self) -> TargetId {
        TargetId { salt: self.salt.clone(), n: self.n() }
    }
    pub fn tab(&mut self) -> TabId {
        TabId { salt: self.salt.clone(), n: self.n() }
    }
    pub fn snapshot(&mut self) -> SnapshotId {
        SnapshotId(self.n())
    }
    pub fn continuation(&mut self) -> ContinuationId {
        ContinuationId { salt: self.salt.clone(), n: self.n() }
    }
}

impl Default for Ids {
    fn default() -> Self {
        Ids::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_reads_back_what_it_writes() {
        let mut ids = Ids::new();
        let t = ids.target();
        assert_eq!(t.to_string().parse::<TargetId>().unwrap(), t);
        assert!(t.to_string().parse::<TabId>().is_err(), "a target id is no tab id");
        let tab = ids.tab();
        assert_eq!(tab.to_string().parse::<TabId>().unwrap(), tab);
        let c = ids.continuation();
        assert_eq!(c.to_string().parse::<ContinuationId>().unwrap().salt(), ids.salt);
        let p = ids.snapshot();
        assert_eq!(p.to_string().parse::<SnapshotId>().unwrap(), p);
        let r: RefId = p.at(7).parse().unwrap();
        assert_eq!((r.snapshot, r.index.get()), (p, 7));
        assert_eq!(r.to_string(), p.at(7));
        for bad in ["", "bt-", "bt-zz-1", "bt-ab-", "bt-ab-x", "tab-ab-1-2"] {
            assert!(bad.parse::<TargetId>().is_err(), "{bad}");
        }
        for bad in ["p", "p-1", "q1", "p1x"] {
            assert!(bad.parse::<SnapshotId>().is_err(), "{bad}");
        }
        assert!(matches!("p1".parse::<RefId>(), Err(RefError::Malformed(_))));
        assert!(matches!("x1:2".parse::<RefId>(), Err(RefError::Malformed(_))));
        assert!(matches!("pq:2".parse::<RefId>(), Err(RefError::UnknownSnapshot { .. })));
        assert!(matches!("p1:99999999999".parse::<RefId>(), Err(RefError::TooLarge(_))));
    }
}
