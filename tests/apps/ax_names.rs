//! A yardstick for the element index on pages nobody here wrote: no element that
//! Chromium's accessibility tree names is left without a name by Sightline's DOM rules
//! (issue 17, item 3: "names a person would read").
//!
//! One capture with Chromium's full accessibility tree; the page model is built again from
//! that raw capture, so the names are the DOM rules' own (without the few names a capture
//! asks Chromium for, one element at a time, when the rules give none), and each indexed
//! element is looked up in the accessibility tree by its backend node.

use std::collections::HashMap;

use sightline_browser::{CaptureOptions, Tab};

/// A name made only of private-use characters (an icon font's glyph) is no name.
fn is_a_name(name: &str) -> bool {
    name.chars().any(|c| !c.is_whitespace() && !('\u{E000}'..='\u{F8FF}').contains(&c))
}

/// Each indexed element that Chromium names and Sightline leaves unnamed, as
/// `[N] tag: Chromium names it ROLE "NAME"`.
pub async fn names_lost(tab: &Tab) -> Vec<String> {
    let captured =
        tab.capture_with(CaptureOptions { accessibility: true, ..Default::default() }).await.expect("capture");
    let mut ax: HashMap<(usize, i64), (String, String)> = HashMap::new();
    for (frame, capture) in captured.capture.frames.iter().enumerate() {
        for node in capture.ax.iter().flatten().filter(|n| !n.ignored) {
            let (Some(backend), Some(name)) = (node.backend_dom_node_id, node.name.as_ref().and_then(|n| n.as_str()))
            else {
                continue;
            };
            let role = node.role.as_ref().and_then(|r| r.as_str()).unwrap_or_default();
            ax.insert((frame, backend), (role.to_string(), name.to_string()));
        }
    }
    let view = sightline_page::PageView::build(&captured.capture);
    view.elements
        .iter()
        .filter(|e| !is_a_name(&e.label))
        .filter_map(|e| {
            let (role, name) = ax.get(&(e.frame, e.backend_node_id))?;
            is_a_name(name).then(|| format!("[{}] {}: Chromium names it {role} {name:?}", e.index, e.descriptor.tag))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_a_name;

    #[test]
    fn an_icon_glyph_is_no_name() {
        assert!(!is_a_name("\u{f040}"));
        assert!(!is_a_name(" \u{f1f8} "));
        assert!(!is_a_name(""));
        assert!(is_a_name("Edit Record"));
        assert!(is_a_name("✖"));
    }
}
