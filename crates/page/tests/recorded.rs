//! Data-driven tests of the page model on recorded captures.
//!
//! Each `captures/NAME.json` was saved with `sightline state URL --record FILE`
//! from a fixture page. The test rebuilds the view offline and compares it with
//! `captures/NAME.expected`. After an intended change, regenerate with
//! `UPDATE_EXPECT=1 cargo test -p sightline-page` and review the diff.

use std::path::Path;

use sightline_page::{token, Capture, PageView, Role};

fn render(view: &PageView) -> String {
    let mut out = String::new();
    out.push_str(&format!("url: {}\nelements: {}\n", view.url, view.elements.len()));
    for e in &view.elements {
        let d = &e.descriptor;
        out.push_str(&format!(
            "{} | tag={} role={:?} text={:?} name={:?} value={:?} type={:?} href={:?} checked={:?} at=({:.0},{:.0})\n",
            token(e),
            d.tag,
            d.role.as_ref().map(Role::as_str),
            d.text_content,
            d.name,
            d.value,
            d.type_,
            d.href,
            d.checked,
            e.click_point.0,
            e.click_point.1
        ));
    }
    out.push_str("--- page_content ---\n");
    out.push_str(&view.page_content);
    out.push_str(&format!("\n--- state_hash ---\n{}\n", view.state_hash()));
    out
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures");
    let capture: Capture =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
    let actual = render(&PageView::build(&capture));
    let expected_path = dir.join(format!("{name}.expected"));
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if actual != expected {
        panic!("{name}: the view changed.\n--- expected ---\n{expected}\n--- actual ---\n{actual}\n(UPDATE_EXPECT=1 to accept)");
    }
}

#[test]
fn kinds() {
    check("kinds");
}

#[test]
fn hidden() {
    check("hidden");
}

#[test]
fn form() {
    check("form");
}

/// The same capture always gives the same hash, and the hash sees scrolling.
#[test]
fn hash_is_deterministic_and_sees_scroll() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures");
    let text = std::fs::read_to_string(dir.join("kinds.json")).unwrap();
    let a: Capture = serde_json::from_str(&text).unwrap();
    let b: Capture = serde_json::from_str(&text).unwrap();
    let (va, vb) = (PageView::build(&a), PageView::build(&b));
    assert_eq!(va.state_hash(), vb.state_hash());
    let scrolled = sightline_page::state_hash(&va.url, &va.page_content, (0.0, 10.0), &va.elements);
    assert_ne!(va.state_hash(), scrolled);
}
