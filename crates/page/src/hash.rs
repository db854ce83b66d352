//! The state hash: SHA-256 over a canonical text of what the agent can see.

use sha2::{Digest, Sha256};

use crate::interactive::Element;

/// The canonical form hashed into `state_hash` (documented in README):
///
/// ```text
/// sightline-state-v1
/// url <url>
/// scroll <x> <y>
/// elements <JSON array, one [tag, role, aria-label, text_content, name, value,
///           placeholder, type, href, checked, disabled] per element, in index order>
/// content
/// <page_content>
/// ```
///
/// Scroll offsets are whole CSS pixels of the main frame.
pub fn canonical(url: &str, page_content: &str, scroll: (f64, f64), elements: &[Element]) -> String {
    let rows: Vec<serde_json::Value> = elements
        .iter()
        .map(|e| {
            let d = &e.descriptor;
            serde_json::json!([
                d.tag,
                d.role,
                d.aria_label,
                d.text_content,
                d.name,
                d.value,
                d.placeholder,
                d.type_,
                d.href,
                d.checked,
                e.disabled
            ])
        })
        .collect();
    format!(
        "sightline-state-v1\nurl {url}\nscroll {} {}\nelements {}\ncontent\n{page_content}",
        scroll.0.round() as i64,
        scroll.1.round() as i64,
        serde_json::Value::Array(rows)
    )
}

/// Hex SHA-256 of [`canonical`].
pub fn state_hash(url: &str, page_content: &str, scroll: (f64, f64), elements: &[Element]) -> String {
    let digest = Sha256::digest(canonical(url, page_content, scroll, elements).as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        use std::fmt::Write;
        let _ = write!(hex, "{b:02x}");
    }
    hex
}
