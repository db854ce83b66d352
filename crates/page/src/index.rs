//! [`ElementIndex`]: the one number that names an element, from the page model
//! through the browser layer to the wire.

use std::fmt;
use std::num::{IntErrorKind, NonZeroU32};
use std::str::FromStr;

/// A 1-based element number: position `i` of a list is index `i + 1`.
///
/// It names an element of the element index (the `element_index` of an action,
/// the `N` of a `[N]` token and of a dom_refs ref `p3:N`) and a node of a
/// semantic snapshot (`p3:N`). On the wire it is a plain JSON number or the
/// decimal digits of a ref; parsing refuses zero and anything past `u32::MAX`
/// (it never wraps around to a small index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct ElementIndex(NonZeroU32);

/// Why a number is not an [`ElementIndex`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// Indexes start at 1.
    #[error("element indexes start at 1, got 0")]
    Zero,
    /// Past the largest index (`u32::MAX`).
    #[error("{value} is past the largest element index ({})", u32::MAX)]
    TooLarge { value: String },
    /// Not a decimal number.
    #[error("{text:?} is not a decimal number")]
    NotANumber { text: String },
}

impl ElementIndex {
    /// The first element.
    pub const FIRST: ElementIndex = ElementIndex(NonZeroU32::MIN);

    /// `None` for 0.
    pub fn new(n: u32) -> Option<ElementIndex> {
        NonZeroU32::new(n).map(ElementIndex)
    }

    /// The index of list position `i` (0-based). Positions past `u32::MAX - 1`
    /// share the last index; no page has that many elements.
    pub fn from_position(i: usize) -> ElementIndex {
        ElementIndex(
            u32::try_from(i).ok().and_then(|i| NonZeroU32::new(i.saturating_add(1))).unwrap_or(NonZeroU32::MAX),
        )
    }

    /// The number itself (≥ 1).
    pub fn get(self) -> u32 {
        self.0.get()
    }

    /// The 0-based list position it names.
    pub fn position(self) -> usize {
        self.0.get() as usize - 1
    }

    /// The item it names in a list numbered from 1.
    pub fn of<T>(self, items: &[T]) -> Option<&T> {
        items.get(self.position())
    }
}

impl TryFrom<u64> for ElementIndex {
    type Error = IndexError;
    fn try_from(n: u64) -> Result<ElementIndex, IndexError> {
        let small = u32::try_from(n).map_err(|_| IndexError::TooLarge { value: n.to_string() })?;
        ElementIndex::new(small).ok_or(IndexError::Zero)
    }
}

impl FromStr for ElementIndex {
    type Err = IndexError;
    /// Decimal digits, as Rust reads an unsigned integer.
    fn from_str(s: &str) -> Result<ElementIndex, IndexError> {
        match s.parse::<NonZeroU32>() {
            Ok(n) => Ok(ElementIndex(n)),
            Err(e) => Err(match e.kind() {
                IntErrorKind::Zero => IndexError::Zero,
                IntErrorKind::PosOverflow => IndexError::TooLarge { value: s.to_string() },
                _ => IndexError::NotANumber { text: s.to_string() },
            }),
        }
    }
}

impl fmt::Display for ElementIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<ElementIndex> for u32 {
    fn from(i: ElementIndex) -> u32 {
        i.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_decimal_and_refuses_zero_and_overflow() {
        assert_eq!("4".parse::<ElementIndex>().map(ElementIndex::get), Ok(4));
        assert_eq!("4294967295".parse::<ElementIndex>().map(ElementIndex::get), Ok(u32::MAX));
        assert_eq!("0".parse::<ElementIndex>(), Err(IndexError::Zero));
        assert_eq!("000".parse::<ElementIndex>(), Err(IndexError::Zero));
        // 2^32 + 1 must not wrap around to element 1.
        assert_eq!("4294967297".parse::<ElementIndex>(), Err(IndexError::TooLarge { value: "4294967297".into() }));
        assert!(matches!("99999999999999999999999".parse::<ElementIndex>(), Err(IndexError::TooLarge { .. })));
        for bad in ["", "-1", " 4", "4a", "1.5"] {
            assert!(matches!(bad.parse::<ElementIndex>(), Err(IndexError::NotANumber { .. })), "{bad:?}");
        }
    }

    #[test]
    fn converts_from_wire_numbers_and_positions() {
        assert_eq!(ElementIndex::try_from(1u64), Ok(ElementIndex::FIRST));
        assert_eq!(ElementIndex::try_from(0u64), Err(IndexError::Zero));
        assert!(matches!(ElementIndex::try_from((1u64 << 32) + 1), Err(IndexError::TooLarge { .. })));
        assert_eq!(ElementIndex::from_position(0), ElementIndex::FIRST);
        assert_eq!(ElementIndex::from_position(6).get(), 7);
        assert_eq!(ElementIndex::from_position(6).position(), 6);
        assert_eq!(ElementIndex::from_position(usize::MAX).get(), u32::MAX);
        assert_eq!(ElementIndex::new(2).unwrap().of(&["a", "b"]), Some(&"b"));
        assert_eq!(serde_json::to_string(&ElementIndex::new(12).unwrap()).unwrap(), "12");
    }
}
