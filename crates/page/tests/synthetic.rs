//! Hand-built captures for rules that are easiest to see in isolation:
//! paint order decides occlusion, in-flow siblings never cover each other,
//! pointer-events:none layers do not block, clipping hides.

use serde_json::json;
use sightline_page::{Capture, PageView};

/// One node: (parent, name, attrs, layout: Option<(rect, paint, styles)>).
type SynthNode<'a> = (i64, &'a str, &'a [(&'a str, &'a str)], Option<([f64; 4], i64, [&'a str; 8])>);

/// A one-document capture.
fn capture(nodes: &[SynthNode]) -> Capture {
    let mut strings: Vec<String> = Vec::new();
    let mut s = |v: &str| -> i64 {
        if let Some(i) = strings.iter().position(|x| x == v) {
            return i as i64;
        }
        strings.push(v.to_string());
        strings.len() as i64 - 1
    };
    let url = s("http://t.test/");
    let mut parent_index = vec![];
    let mut node_type = vec![];
    let mut node_name = vec![];
    let mut node_value = vec![];
    let mut backend = vec![];
    let mut attributes = vec![];
    let (mut li, mut styles, mut bounds, mut paints, mut text) = (vec![], vec![], vec![], vec![], vec![]);
    for (i, (p, name, attrs, layout)) in nodes.iter().enumerate() {
        parent_index.push(*p);
        let is_text = name.starts_with('#');
        node_type.push(if *name == "#document" {
            9
        } else if is_text {
            3
        } else {
            1
        });
        node_name.push(s(name));
        node_value.push(if is_text && *name == "#text" { s(attrs.first().map(|a| a.1).unwrap_or("")) } else { -1 });
        backend.push(i as i64 + 1);
        attributes.push(attrs.iter().filter(|_| !is_text).flat_map(|(k, v)| [s(k), s(v)]).collect::<Vec<_>>());
        if let Some((r, paint, st)) = layout {
            li.push(i);
            styles.push(st.iter().map(|v| s(v)).collect::<Vec<_>>());
            bounds.push(r.to_vec());
            paints.push(*paint);
            text.push(if is_text { s(attrs.first().map(|a| a.1).unwrap_or("")) } else { -1 });
        }
    }
    let v = json!({
        "viewport": {"width": 800, "height": 600},
        "frames": [{"snapshot": {"strings": strings, "documents": [{
            "documentURL": url, "title": -1, "baseURL": url, "frameId": -1,
            "nodes": {"parentIndex": parent_index, "nodeType": node_type, "nodeName": node_name, "nodeValue": node_value,
                      "backendNodeId": backend, "attributes": attributes},
            "layout": {"nodeIndex": li, "styles": styles, "bounds": bounds, "text": text, "paintOrders": paints},
        }]}, "owner": null}]
    });
    serde_json::from_value(v).unwrap()
}

const BLOCK: [&str; 8] = ["block", "visible", "1", "auto", "auto", "visible", "visible", "static"];
const FIXED: [&str; 8] = ["block", "visible", "1", "auto", "auto", "visible", "visible", "fixed"];
const NO_POINTER: [&str; 8] = ["block", "visible", "1", "auto", "none", "visible", "visible", "fixed"];
const CLIPS: [&str; 8] = ["block", "visible", "1", "auto", "auto", "hidden", "hidden", "relative"];

fn labels(v: &PageView) -> Vec<String> {
    v.elements.iter().map(|e| e.label.clone()).collect()
}

#[test]
fn a_higher_layer_covers_and_a_sibling_in_flow_does_not() {
    let c = capture(&[
        (-1, "#document", &[], None),
        (0, "HTML", &[], Some(([0., 0., 800., 600.], 0, BLOCK))),
        (1, "BODY", &[], Some(([0., 0., 800., 600.], 0, BLOCK))),
        (2, "BUTTON", &[("aria-label", "under")], Some(([10., 10., 100., 30.], 1, BLOCK))),
        (2, "BUTTON", &[("aria-label", "beside")], Some(([10., 50., 100., 30.], 1, BLOCK))),
        // A long text box of a later node overlapping the first button: same layer, not a cover.
        (2, "P", &[], Some(([0., 0., 800., 100.], 1, BLOCK))),
        // A fixed overlay above the first button only.
        (2, "DIV", &[("id", "overlay")], Some(([0., 0., 300., 45.], 5, FIXED))),
    ]);
    let v = PageView::build(&c);
    assert_eq!(labels(&v), ["beside"]);
    assert_eq!(v.covered.len(), 1);
    assert_eq!(v.node(v.covered[0].by).and_then(|n| n.attr("id")), Some("overlay"));
}

#[test]
fn pointer_events_none_layers_do_not_cover() {
    let c = capture(&[
        (-1, "#document", &[], None),
        (0, "HTML", &[], Some(([0., 0., 800., 600.], 0, BLOCK))),
        (1, "BODY", &[], Some(([0., 0., 800., 600.], 0, BLOCK))),
        (2, "BUTTON", &[("aria-label", "ok")], Some(([10., 10., 100., 30.], 1, BLOCK))),
        (2, "DIV", &[], Some(([0., 0., 800., 600.], 9, NO_POINTER))),
    ]);
    assert_eq!(labels(&PageView::build(&c)), ["ok"]);
}

#[test]
fn overflow_clips_and_the_viewport_bounds() {
    let c = capture(&[
        (-1, "#document", &[], None),
        (0, "HTML", &[], Some(([0., 0., 800., 3000.], 0, BLOCK))),
        (1, "BODY", &[], Some(([0., 0., 800., 3000.], 0, BLOCK))),
        (2, "DIV", &[], Some(([0., 0., 100., 30.], 0, CLIPS))),
        (3, "BUTTON", &[("aria-label", "clipped")], Some(([300., 0., 100., 30.], 1, BLOCK))),
        (3, "BUTTON", &[("aria-label", "inside")], Some(([10., 0., 50., 30.], 1, BLOCK))),
        (2, "BUTTON", &[("aria-label", "below")], Some(([10., 900., 50., 30.], 1, BLOCK))),
    ]);
    let v = PageView::build(&c);
    assert_eq!(labels(&v), ["inside"]);
    assert!(v.page_content.contains("[1]button \"inside\""), "{}", v.page_content);
}

#[test]
fn index_marks_are_the_marks_numbered_by_element_index() {
    let c = capture(&[
        (-1, "#document", &[], None),
        (0, "HTML", &[], Some(([0., 0., 800., 600.], 0, BLOCK))),
        (1, "BODY", &[], Some(([0., 0., 800., 600.], 0, BLOCK))),
        (2, "SELECT", &[("aria-label", "size")], Some(([10., 10., 100., 30.], 1, BLOCK))),
        (3, "OPTION", &[("value", "s")], None),
        (2, "BUTTON", &[("title", "Go")], Some(([10., 50., 100., 30.], 1, BLOCK))),
    ]);
    let v = PageView::build(&c);
    let marks = v.marks();
    let by_index = v.index_marks();
    // The option of the closed select has no mark: the button is mark 2 but element 3.
    assert_eq!(marks.iter().map(|m| m.id).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(by_index.iter().map(|m| m.id).collect::<Vec<_>>(), [1, 3]);
    for (m, i) in marks.iter().zip(&by_index) {
        assert_eq!((&m.name, m.element_index, m.x, m.w), (&i.name, i.element_index, i.x, i.w));
    }
    assert_eq!(by_index[1].name, "Go");
    // On the wire a mark is {id, tag, role, name, x, y, w, h}: the element index stays inside.
    let wire = serde_json::to_value(&marks[1]).unwrap();
    assert_eq!(wire.as_object().unwrap().keys().collect::<Vec<_>>(), ["h", "id", "name", "role", "tag", "w", "x", "y"]);
}
