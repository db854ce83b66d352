//! semantic_v2 and the element index on recorded captures, without a browser.
//!
//! `captures/semantic.json` and `captures/visibility.json` were saved with
//! `sightline state URL --no-screenshot --record FILE` from
//! `tests/fixtures/semantic.html` and `tests/fixtures/visibility.html`
//! (served on 127.0.0.1). The recorder saves no accessibility tree, so these
//! hold the DOM rules semantic_v2 falls back on (`aria`), which
//! `tests/semantic.rs` compares with Chromium's own tree on the live page.

use sightline_page::semantic::{self, Omitted, Scope, SemNode, SemanticOptions, SemanticTree, Visibility};
use sightline_page::{token, Capture, PageView, Role, State};

fn load(name: &str) -> PageView {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/captures/{name}.json"));
    let capture: Capture = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    PageView::build(&capture)
}

fn tree(view: &mut PageView) -> SemanticTree {
    semantic::build(view, SemanticOptions::default())
}

fn named<'t>(t: &'t SemanticTree, role: Role, name: &str) -> &'t SemNode {
    t.nodes.iter().find(|n| n.role == role && n.name == name).unwrap_or_else(|| {
        panic!("no {role} {name:?} in {:?}", t.nodes.iter().map(|n| (&n.role, &n.name)).collect::<Vec<_>>())
    })
}

#[test]
fn the_element_index_of_the_semantic_fixture() {
    let v = load("semantic");
    assert!(v.url.ends_with("/semantic.html"), "{}", v.url);
    let tokens: Vec<String> = v.elements.iter().map(token).collect();
    assert_eq!(tokens.len(), 18, "{tokens:#?}");
    assert_eq!(tokens[0], "[1]link \"Home\"");
    assert_eq!(tokens[5], "[6]treeitem \"src\" expanded");
    assert_eq!(tokens[8], "[9]button \"Shown options\" expanded");
    assert_eq!(tokens[13], "[14]input \"Upload\" no-file");
    assert_eq!(tokens[17], "[18]switch \"Wi-Fi\" checked");
    // The label names its file input: page_content shows it as a bare marker beside it.
    assert_eq!(v.elements[12].label_for.map(|i| i.get()), Some(14));
    assert!(v.page_content.contains("[13]label [14]input \"Upload\" no-file"), "{}", v.page_content);
    assert_eq!(v.elements[4].descriptor.role, Some(Role::Button));
    assert_eq!(v.elements[16].descriptor.role, Some(Role::Button), "role=button on a div");
}

#[test]
fn roles_names_and_states_from_the_dom() {
    let mut v = load("semantic");
    let t = tree(&mut v);
    // Two labels of rendered controls are no nodes of their own: their controls carry their text.
    assert_eq!(t.nodes.len(), 68);
    assert_eq!(named(&t, Role::Heading, "Roles and states").states, vec![State::Level(1)]);
    assert_eq!(named(&t, Role::Heading, "Leveled by ARIA").states, vec![State::Level(4)]);
    assert_eq!(named(&t, Role::Heading, "A div heading").states, vec![State::Level(3)]);
    assert_eq!(named(&t, Role::Tab, "List").states, vec![State::Disabled(false), State::Selected(true)]);
    assert_eq!(named(&t, Role::Tab, "Board").states, vec![State::Disabled(false), State::Selected(false)]);
    assert_eq!(named(&t, Role::Button, "Open menu").states, vec![State::Disabled(false), State::Expanded(false)]);
    assert_eq!(
        named(&t, Role::TreeItem, "src").states,
        vec![State::Disabled(false), State::Expanded(true), State::Selected(false), State::Level(1)]
    );
    assert_eq!(named(&t, Role::Checkbox, "Pick Ada").states, vec![State::Disabled(false), State::Checked(false)]);
    assert_eq!(named(&t, Role::Switch, "Wi-Fi").states, vec![State::Disabled(false), State::Checked(true)]);
    // A file input is the button Chromium makes of it, named by its label.
    assert!(named(&t, Role::Button, "Upload").is_action());
    // Header cells by scope and by where they stand; a caption names its table.
    assert_eq!(named(&t, Role::ColumnHeader, "Model").parent, Some(55));
    assert_eq!(t.nodes.iter().filter(|n| n.role == Role::RowHeader).count(), 2);
    assert_eq!(t.nodes[55].role, Role::Table);
    named(&t, Role::Table, "People");
    named(&t, Role::Region, "Notes");
    named(&t, Role::Dialog, "Inline dialog");
    // A list item holding another list names itself by all its text.
    named(&t, Role::ListItem, "Outer Inner");
    // aria-hidden subtrees and closed <details> content are counted, not listed.
    assert!(t.nodes.iter().all(|n| n.name != "Hidden by aria" && n.name != "Hidden details text"));
    assert_eq!(t.css_hidden, 4);
    assert_eq!(named(&t, Role::Label, "Toggle Table of Contents").visibility, Visibility::NoLayout);
    let actions = t.nodes.iter().filter(|n| n.is_action()).count();
    assert_eq!(actions, 22);
}

#[test]
fn the_viewport_plan_of_the_semantic_fixture() {
    let mut v = load("semantic");
    let t = tree(&mut v);
    let p = semantic::plan(&t, &Scope::Viewport);
    assert_eq!(p.omitted, Omitted { css_hidden: 4, no_layout: 1, ..Default::default() });
    assert_eq!(p.ranked.len(), 67);
    // An open dialog ranks first, with what is inside it; then visible actions, in document order.
    let first: Vec<&str> = p.ranked[..4].iter().map(|&i| t.nodes[i].name.as_str()).collect();
    assert_eq!(first, vec!["Inline dialog", "OK", "Home", "Docs"]);
    assert!(t.nodes[p.ranked[0]].priority && !t.nodes[p.ranked[2]].priority);
    assert_eq!(
        semantic::outline(&t, &p.ranked[..4], |i| format!("s1:{}", i + 1)),
        "- link \"Home\" [ref=s1:3]\n- link \"Docs\" [ref=s1:4]\n- dialog \"Inline dialog\" [ref=s1:24]\n  - button \"OK\" [ref=s1:25]"
    );
    let q = semantic::plan(&t, &Scope::Query("wi-fi".into()));
    let hit: Vec<&str> = q.ranked.iter().map(|&i| t.nodes[i].role.as_str()).collect();
    // A match comes with its semantic ancestors, ranked like the rest: the action before its landmark.
    assert_eq!(hit, vec!["switch", "main"]);
}

#[test]
fn every_visibility_in_one_capture() {
    let mut v = load("visibility");
    // The element index: what can be clicked, the frame's controls included; the
    // button under the fixed overlay is covered, by the overlay.
    let labels: Vec<&str> = v.elements.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(
        labels,
        vec!["In viewport", "Remove the victim", "Victim", "Open a popup", "Next page in frame", "Frame button"]
    );
    assert_eq!(v.elements[5].frame, 0, "a same-origin frame is in the main capture");
    assert_eq!(v.frame_ids().count(), 2);
    let covered: Vec<(&str, Option<&str>)> =
        v.covered.iter().map(|c| (v.node(c.node).unwrap().tag(), v.node(c.by).and_then(|n| n.attr("class")))).collect();
    assert_eq!(covered, vec![("button", Some("overlay"))]);
    let t = tree(&mut v);
    let vis = |name: &str| t.nodes.iter().find(|n| n.name == name).map(|n| n.visibility);
    assert_eq!(vis("In viewport"), Some(Visibility::InViewport));
    assert_eq!(vis("Under the overlay"), Some(Visibility::PageOccluded));
    assert_eq!(vis("Covered text"), Some(Visibility::PageOccluded));
    assert_eq!(vis("Near the viewport"), Some(Visibility::NearViewport));
    assert_eq!(vis("Far offscreen"), Some(Visibility::Offscreen));
    assert_eq!(vis("Far text"), Some(Visibility::Offscreen));
    assert_eq!(vis("Display none"), None);
    assert_eq!(t.nodes.iter().filter(|n| n.visibility == Visibility::NoLayout).count(), 1, "the empty link");
    assert_eq!(t.css_hidden, 3, "display:none, visibility:hidden and the hidden attribute");
    assert_eq!(named(&t, Role::Button, "Frame button").doc, 1);
    let p = semantic::plan(&t, &Scope::Viewport);
    // The occluded button stays (it is an action); the occluded paragraph is left out.
    assert_eq!(
        p.omitted,
        Omitted { css_hidden: 3, offscreen: 2, page_occluded: 1, no_layout: 1, ..Default::default() }
    );
    assert_eq!(p.ranked.len(), 11);
}
