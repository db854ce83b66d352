//! Test support for the inline unit tests: small pages written as element
//! trees, turned into a real [`Capture`] (the `DOMSnapshot` shape) so that the
//! rules under test run on the same input as in production.
//!
//! Every element and text gets a layout box of its own, one 18px row under
//! the other in document order and painted in that order, unless a test says
//! otherwise ([`El::at`], [`El::unrendered`], [`El::style`]).

use serde_json::json;

use crate::arena::{Arena, NodeId};
use crate::capture::Capture;
use crate::PageView;

/// One node of a hand-written page.
pub(crate) struct El {
    tag: String,
    attrs: Vec<(String, String)>,
    children: Vec<El>,
    /// For a `#text` node.
    text: Option<String>,
    rect: Option<[f64; 4]>,
    rendered: bool,
    styles: Vec<(usize, String)>,
    checked: bool,
}

/// An element with attributes and children.
pub(crate) fn el(tag: &str, attrs: &[(&str, &str)], children: Vec<El>) -> El {
    El {
        tag: tag.to_string(),
        attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        children,
        text: None,
        rect: None,
        rendered: true,
        styles: Vec::new(),
        checked: false,
    }
}

/// A text node.
pub(crate) fn text(t: &str) -> El {
    El { text: Some(t.to_string()), ..el("#text", &[], Vec::new()) }
}

impl El {
    /// Its border box, in viewport CSS pixels.
    pub fn at(mut self, x: f64, y: f64, w: f64, h: f64) -> El {
        self.rect = Some([x, y, w, h]);
        self
    }
    /// No layout object for it or anything inside it (`display: none`).
    pub fn unrendered(mut self) -> El {
        self.rendered = false;
        self
    }
    /// A computed style, by its name in [`crate::COMPUTED_STYLES`].
    pub fn style(mut self, name: &str, value: &str) -> El {
        let i = crate::capture::COMPUTED_STYLES.iter().position(|s| *s == name).expect("a captured style");
        self.styles.push((i, value.to_string()));
        self
    }
    /// A checked checkbox or radio button.
    pub fn checked(mut self) -> El {
        self.checked = true;
        self
    }
}

fn display_of(tag: &str) -> &'static str {
    match tag {
        "a" | "span" | "b" | "i" | "em" | "strong" | "label" | "img" | "code" => "inline",
        "input" | "button" | "select" | "textarea" => "inline-block",
        "li" => "list-item",
        _ => "block",
    }
}

struct Out {
    strings: Vec<String>,
    parent: Vec<i64>,
    node_type: Vec<i64>,
    name: Vec<i64>,
    value: Vec<i64>,
    attributes: Vec<Vec<i64>>,
    checked: Vec<usize>,
    layout_node: Vec<usize>,
    styles: Vec<Vec<i64>>,
    bounds: Vec<Vec<f64>>,
    text: Vec<i64>,
    paint: Vec<i64>,
    row: f64,
}

impl Out {
    fn s(&mut self, v: &str) -> i64 {
        if let Some(i) = self.strings.iter().position(|x| x == v) {
            return i as i64;
        }
        self.strings.push(v.to_string());
        self.strings.len() as i64 - 1
    }

    fn add(&mut self, e: &El, parent: i64, rendered: bool) {
        let rendered = rendered && e.rendered;
        let i = self.parent.len();
        self.parent.push(parent);
        self.node_type.push(if e.text.is_some() { 3 } else { 1 });
        let name = if e.text.is_some() { "#text".to_string() } else { e.tag.to_uppercase() };
        let name = self.s(&name);
        self.name.push(name);
        let value = match &e.text {
            Some(t) => self.s(t),
            None => -1,
        };
        self.value.push(value);
        let attrs = e.attrs.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect::<Vec<_>>();
        let attrs = attrs.iter().map(|a| self.s(a)).collect();
        self.attributes.push(attrs);
        if e.checked {
            self.checked.push(i);
        }
        if rendered {
            let rect = e.rect.unwrap_or_else(|| {
                let r = [0.0, self.row, 300.0, 18.0];
                self.row += 20.0;
                r
            });
            let display = if e.text.is_some() { "inline" } else { display_of(&e.tag) };
            let mut styles = vec![
                display,
                "visible",
                "1",
                "auto",
                "auto",
                "visible",
                "visible",
                "static",
                "normal",
                "rgba(0, 0, 0, 0)",
                "none",
            ]
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
            for (k, v) in &e.styles {
                styles[*k] = v.clone();
            }
            let styles = styles.iter().map(|s| self.s(s)).collect();
            self.layout_node.push(i);
            self.styles.push(styles);
            self.bounds.push(rect.to_vec());
            self.text.push(value);
            self.paint.push(self.paint.len() as i64 + 1);
        }
        for c in &e.children {
            self.add(c, i as i64, rendered);
        }
    }
}

/// A one-document capture of `<html><body>…body…</body></html>` in an 800×600 viewport.
pub(crate) fn capture(body: Vec<El>) -> Capture {
    let mut out = Out {
        strings: Vec::new(),
        parent: vec![-1],
        node_type: vec![9],
        name: Vec::new(),
        value: vec![-1],
        attributes: vec![Vec::new()],
        checked: Vec::new(),
        layout_node: Vec::new(),
        styles: Vec::new(),
        bounds: Vec::new(),
        text: Vec::new(),
        paint: Vec::new(),
        row: 0.0,
    };
    let doc = out.s("#document");
    out.name.push(doc);
    let url = out.s("http://t.test/");
    let html = el("html", &[], vec![el("body", &[], body).at(0.0, 0.0, 800.0, 600.0)]).at(0.0, 0.0, 800.0, 600.0);
    out.add(&html, 0, true);
    let backend: Vec<i64> = (1..=out.parent.len() as i64).collect();
    let v = json!({
        "viewport": {"width": 800, "height": 600},
        "frames": [{"snapshot": {"strings": out.strings, "documents": [{
            "documentURL": url, "title": -1, "baseURL": url, "frameId": -1,
            "nodes": {"parentIndex": out.parent, "nodeType": out.node_type, "nodeName": out.name,
                      "nodeValue": out.value, "backendNodeId": backend, "attributes": out.attributes,
                      "inputChecked": {"index": out.checked}},
            "layout": {"nodeIndex": out.layout_node, "styles": out.styles, "bounds": out.bounds,
                       "text": out.text, "paintOrders": out.paint},
        }]}, "owner": null}]
    });
    serde_json::from_value(v).expect("a capture")
}

/// The joined tree of a hand-written page.
pub(crate) fn arena(body: Vec<El>) -> Arena {
    Arena::build(&capture(body))
}

/// The view of a hand-written page.
pub(crate) fn view(body: Vec<El>) -> PageView {
    PageView::build(&capture(body))
}

/// The element with this `id` attribute.
pub(crate) fn by_id(arena: &Arena, id: &str) -> NodeId {
    arena.ids().find(|&n| arena.node(n).attr("id") == Some(id)).unwrap_or_else(|| panic!("no element #{id}"))
}
