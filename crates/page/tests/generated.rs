//! The page model is total: whatever capture it is given (deep, wide, cyclic
//! parent links, ids pointing anywhere, missing or absurd layout, odd strings),
//! `PageView::build` returns a view and every view of it renders, without
//! panicking, overflowing the stack or looping. Captures are generated from a
//! fixed-seed generator so a failure replays exactly.

use serde_json::{json, Value};
use sightline_page::{Capture, PageView};

/// xorshift64*: small, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn float(&mut self) -> Value {
        match self.below(12) {
            0 => json!(-1e9),
            1 => json!(1e12),
            2 => json!(0.0),
            _ => json!(self.int(-50, 1500) as f64 + 0.25),
        }
    }
}

const NAMES: &[&str] = &[
    "#document",
    "HTML",
    "BODY",
    "DIV",
    "SPAN",
    "A",
    "BUTTON",
    "INPUT",
    "SELECT",
    "OPTION",
    "TEXTAREA",
    "LABEL",
    "DETAILS",
    "SUMMARY",
    "DIALOG",
    "IFRAME",
    "svg",
    "title",
    "TABLE",
    "TR",
    "TD",
    "BR",
    "PRE",
    "UL",
    "LI",
    "H1",
    "#text",
    "::before",
    "::after",
    "::marker",
    "IMG",
    "H9",
    "",
    "ÜNÏCODE",
    "#comment",
];
const STRINGS: &[&str] = &[
    "",
    " ",
    "\n\n",
    "x",
    "role",
    "button",
    "aria-label",
    "inert",
    "open",
    "tabindex",
    "0",
    "-1",
    "contenteditable",
    "true",
    "for",
    "id",
    "a",
    "aria-labelledby",
    "a b c",
    "type",
    "checkbox",
    "range",
    "file",
    "href",
    "javascript:x",
    "hidden",
    "block",
    "inline",
    "inline-block",
    "table-cell",
    "table-row",
    "none",
    "pre",
    "pre-line",
    "fixed",
    "pointer",
    "0.001",
    "NaN",
    "\u{a0}\u{a0}",
    "\"quoted\"",
    "\u{202e}rtl",
    "𝔘𝔫𝔦",
    "visible",
    "scroll",
    "auto",
];

fn snapshot(r: &mut Rng, n: usize, docs: usize) -> Value {
    let strings: Vec<&str> = STRINGS.iter().chain(NAMES.iter()).copied().collect();
    let s_len = strings.len() as i64;
    let mut documents = Vec::new();
    for _ in 0..docs {
        let shape = r.below(4);
        let mut parent = Vec::new();
        for i in 0..n as i64 {
            parent.push(match shape {
                // deep: a chain
                0 => i - 1,
                // wide: all under the root
                1 => {
                    if i == 0 {
                        -1
                    } else {
                        0
                    }
                }
                // anything, cycles and out-of-range included
                2 => r.int(-3, n as i64 + 3),
                // a tree
                _ => {
                    if i == 0 {
                        -1
                    } else {
                        r.int(0, i - 1)
                    }
                }
            });
        }
        let node_type: Vec<i64> = (0..n)
            .map(|i| if i == 0 { 9 } else { r.pick(&["1", "1", "1", "3", "3", "11", "8"]).parse().unwrap() })
            .collect();
        let name_index = |r: &mut Rng| STRINGS.len() as i64 + r.below(NAMES.len() as u64) as i64;
        let node_name: Vec<i64> =
            (0..n).map(|_| if r.below(30) == 0 { r.int(-5, s_len + 5) } else { name_index(r) }).collect();
        let node_value: Vec<i64> = (0..n).map(|_| r.int(-1, s_len - 1)).collect();
        let attributes: Vec<Vec<i64>> =
            (0..n).map(|_| (0..r.below(7)).map(|_| r.int(-2, s_len + 2)).collect()).collect();
        let mut laid: Vec<i64> = Vec::new();
        for _ in 0..n {
            if r.below(4) != 0 {
                laid.push(r.int(-2, n as i64 + 2));
            }
        }
        let styles: Vec<Vec<i64>> =
            laid.iter().map(|_| (0..r.below(11)).map(|_| r.int(-1, s_len - 1)).collect()).collect();
        let bounds: Vec<Value> =
            laid.iter().map(|_| json!((0..r.below(6)).map(|_| r.float()).collect::<Vec<_>>())).collect();
        let rects = |r: &mut Rng| -> Vec<Value> {
            laid.iter().map(|_| json!((0..r.below(6)).map(|_| r.float()).collect::<Vec<_>>())).collect()
        };
        let client_rects = rects(r);
        let scroll_rects = rects(r);
        let text: Vec<i64> = laid.iter().map(|_| r.int(-1, s_len - 1)).collect();
        let paint: Vec<i64> = laid.iter().map(|_| r.int(-5, 50)).collect();
        let boxes: Vec<i64> = (0..r.below(20)).map(|_| r.int(-1, laid.len() as i64 + 1)).collect();
        let box_bounds: Vec<Value> =
            boxes.iter().map(|_| json!([r.float(), r.float(), r.float(), r.float()])).collect();
        let rare = |r: &mut Rng| json!({ "index": (0..r.below(5)).map(|_| r.int(0, n as i64 + 3)).collect::<Vec<_>>(), "value": (0..r.below(5)).map(|_| r.int(-2, s_len + 2)).collect::<Vec<_>>() });
        let rare_bool =
            |r: &mut Rng| json!({ "index": (0..r.below(5)).map(|_| r.int(0, n as i64 + 3)).collect::<Vec<_>>() });
        let content_doc = json!({ "index": (0..r.below(3)).map(|_| r.int(0, n as i64)).collect::<Vec<_>>(), "value": (0..r.below(3)).map(|_| r.int(-1, docs as i64 + 1)).collect::<Vec<_>>() });
        let laid_u: Vec<i64> = laid.iter().map(|&x| x.max(0)).collect();
        let boxes_u: Vec<i64> = boxes.iter().map(|&x| x.max(0)).collect();
        documents.push(json!({
            "documentURL": r.int(-1, s_len - 1), "title": r.int(-1, s_len - 1), "baseURL": r.int(-1, s_len - 1), "frameId": r.int(-1, s_len - 1),
            "scrollOffsetX": r.float(), "scrollOffsetY": r.float(), "contentWidth": r.float(), "contentHeight": r.float(),
            "nodes": {
                "parentIndex": parent, "nodeType": node_type, "nodeName": node_name, "nodeValue": node_value,
                "backendNodeId": (0..n as i64).map(|i| if r.below(10) == 0 { 7 } else { i + 1 }).collect::<Vec<_>>(),
                "attributes": attributes, "shadowRootType": rare(r), "pseudoType": rare(r), "textValue": rare(r), "inputValue": rare(r),
                "inputChecked": rare_bool(r), "optionSelected": rare_bool(r), "isClickable": rare_bool(r), "contentDocumentIndex": content_doc,
            },
            "layout": { "nodeIndex": laid_u, "styles": styles, "bounds": bounds, "text": text, "paintOrders": paint, "clientRects": client_rects, "scrollRects": scroll_rects },
            "textBoxes": { "layoutIndex": boxes_u, "bounds": box_bounds },
        }));
    }
    json!({ "strings": strings, "documents": documents })
}

fn capture(r: &mut Rng) -> Option<Capture> {
    let n = match r.below(10) {
        0 => 1,
        1 => 600,
        _ => r.int(2, 80) as usize,
    };
    let frames = r.int(1, 3) as usize;
    let frames: Vec<Value> = (0..frames)
        .map(|f| {
            let docs = r.int(1, 3) as usize;
            let snap = snapshot(r, n, docs);
            json!({
                "snapshot": snap,
                "owner": if f == 0 || r.below(3) == 0 { Value::Null } else { json!({ "frame": r.int(0, 3), "backend_node_id": r.int(0, 10) }) },
                "pointer_listeners": (0..r.below(4)).map(|_| r.int(0, 20)).collect::<Vec<_>>(),
                "focused": r.int(-1, 20),
            })
        })
        .collect();
    let v = json!({ "viewport": { "width": r.int(0, 2000), "height": r.int(0, 2000) }, "frames": frames });
    serde_json::from_value(v).ok()
}

#[test]
fn any_capture_gives_a_view() {
    let mut r = Rng(0x5eed_1234_abcd_0001);
    let mut built = 0;
    for _ in 0..250 {
        let Some(c) = capture(&mut r) else { continue };
        let view = PageView::build(&c);
        // Every derived view renders too.
        let _ = view.state_hash();
        let _ = view.marks();
        for e in &view.elements {
            assert!(view.page_content.contains(&format!("[{}]", e.index)), "element {} missing from the text", e.index);
        }
        built += 1;
    }
    assert!(built > 200, "the generator should give valid captures, got {built}");
}

/// A page 100,000 elements deep: no walk may follow the depth with the call stack.
#[test]
fn a_very_deep_page_does_not_overflow_the_stack() {
    let n = 100_000i64;
    let mut strings =
        vec!["DIV".to_string(), "#text".to_string(), "deep".to_string(), "#document".to_string(), "block".to_string()];
    strings.push("BUTTON".into());
    let parent: Vec<i64> = (0..n).map(|i| i - 1).collect();
    let node_type: Vec<i64> = (0..n)
        .map(|i| {
            if i == 0 {
                9
            } else if i == n - 1 {
                3
            } else {
                1
            }
        })
        .collect();
    let node_name: Vec<i64> = (0..n)
        .map(|i| {
            if i == 0 {
                3
            } else if i == n - 1 {
                1
            } else if i == n - 2 {
                5
            } else {
                0
            }
        })
        .collect();
    let node_value: Vec<i64> = (0..n).map(|i| if i == n - 1 { 2 } else { -1 }).collect();
    let laid: Vec<i64> = (0..n).collect();
    let styles: Vec<Vec<i64>> = (0..n).map(|_| vec![4]).collect();
    let bounds: Vec<Vec<f64>> = (0..n).map(|_| vec![0.0, 0.0, 100.0, 20.0]).collect();
    let text: Vec<i64> = (0..n).map(|i| if i == n - 1 { 2 } else { -1 }).collect();
    let v = json!({ "viewport": { "width": 800, "height": 600 }, "frames": [{ "snapshot": { "strings": strings, "documents": [{
        "documentURL": -1, "title": -1, "baseURL": -1, "frameId": -1,
        "nodes": { "parentIndex": parent, "nodeType": node_type, "nodeName": node_name, "nodeValue": node_value,
                   "backendNodeId": (1..=n).collect::<Vec<_>>(), "attributes": (0..n).map(|_| Vec::<i64>::new()).collect::<Vec<_>>() },
        "layout": { "nodeIndex": laid, "styles": styles, "bounds": bounds, "text": text, "paintOrders": (0..n).collect::<Vec<_>>() },
    }]}, "owner": null }] });
    let c: Capture = serde_json::from_value(v).unwrap();
    // Run on a thread with a small stack, so recursion by depth would fail here too.
    let view = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let v = PageView::build(&c);
            (v.page_content.clone(), v.elements.len(), v.marks().len(), v.state_hash())
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert_eq!(view.1, 1, "{}", view.0);
    assert!(view.0.contains("[1]button \"deep\""), "{}", view.0);
}
