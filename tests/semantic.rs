//! The tool API and semantic snapshots against real Chromium.

use crate::common;

use common::*;
use serde_json::{json, Value};
use sightline_api::Api;

struct Bound {
    session: String,
    target: String,
    tab: String,
}

impl Bound {
    fn addr(&self) -> Value {
        json!({ "session": self.session, "target_id": self.target, "tab_id": self.tab })
    }
    fn with(&self, extra: Value) -> Value {
        let mut v = self.addr();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    }
}

async fn bind(api: &Api, session: &str, path: &str) -> Bound {
    let b = ok(api, "bind_browser", json!({ "session": session })).await;
    let bound = Bound {
        session: session.into(),
        target: b["target_id"].as_str().unwrap().into(),
        tab: b["tabs"][0]["tab_id"].as_str().unwrap().into(),
    };
    let target = if path.starts_with("http") { path.to_string() } else { url(path) };
    ok(api, "browser_navigate", bound.with(json!({ "url": target }))).await;
    bound
}

async fn semantic(api: &Api, b: &Bound, extra: Value) -> Value {
    let mut args = b.with(json!({ "snapshot_format": "semantic_v2" }));
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    ok(api, "get_browser_state", args).await
}

fn find_ref<'a>(snap: &'a Value, name: &str) -> &'a Value {
    snap["refs"]
        .as_array()
        .unwrap()
        .iter()
        .chain(snap["content_refs"].as_array().unwrap())
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no ref named {name:?} in\n{}", snap["outline"].as_str().unwrap_or_default()))
}

fn rule(e: &sightline_api::ToolError) -> &str {
    match e.detail.as_deref() {
        Some(sightline_api::ErrorDetail::Rule { rule }) => rule,
        _ => "",
    }
}

#[test]
fn every_visibility_value_and_omission_counter() {
    run(async {
        let api = api();
        let b = bind(&api, "vis", "/visibility.html").await;
        let s = semantic(&api, &b, json!({})).await;
        for k in
            ["status", "mode", "target_id", "tab_id", "snapshot", "page", "outline", "refs", "content_refs", "oopif"]
        {
            assert!(s.get(k).is_some(), "{k} missing");
        }
        assert_eq!(s["status"], "ok");
        assert_eq!(s["mode"], "snapshot");
        assert_eq!(s["snapshot"]["format"], "semantic_v2");
        assert_eq!(s["snapshot"]["scope"], "viewport");
        assert_eq!(s["page"]["title"], "Visibility");
        assert_eq!(find_ref(&s, "In viewport")["visibility"], "in_viewport");
        assert_eq!(find_ref(&s, "Under the overlay")["visibility"], "page_occluded");
        assert_eq!(find_ref(&s, "Near the viewport")["visibility"], "near_viewport");
        let o = &s["snapshot"]["omitted"];
        assert!(o["css_hidden"].as_u64().unwrap() >= 3, "{o}");
        assert!(o["offscreen"].as_u64().unwrap() >= 2, "{o}");
        assert!(o["no_layout"].as_u64().unwrap() >= 1, "{o}");
        assert!(o["page_occluded"].as_u64().unwrap() >= 1, "{o}");
        assert_eq!(o["budget"], 0);
        assert_eq!(s["snapshot"]["complete"], true);
        assert!(s["snapshot"]["continuation"].is_null());
        let outline = s["outline"].as_str().unwrap();
        for hidden in ["Display none", "Visibility hidden", "Hidden attribute", "Far offscreen"] {
            assert!(!outline.contains(hidden), "{hidden} in outline:\n{outline}");
        }
        assert!(outline.contains("[page_occluded]") && outline.contains("[near_viewport]"), "{outline}");
        // A query reaches offscreen nodes, with their visibility.
        let q = semantic(&api, &b, json!({ "query": "Far offscreen" })).await;
        assert_eq!(q["snapshot"]["scope"], "query");
        assert_eq!(find_ref(&q, "Far offscreen")["visibility"], "offscreen");
        // Every ref has the seed's fields, and actions from the closed set.
        for r in s["refs"].as_array().unwrap() {
            for k in ["ref", "role", "name", "value", "states", "actions", "frame", "visibility"] {
                assert!(r.get(k).is_some(), "{k} missing in {r}");
            }
            for a in r["actions"].as_array().unwrap() {
                assert!(["click", "type", "select", "check", "scroll"].contains(&a.as_str().unwrap()), "{a}");
            }
            assert!(!r["ref"].as_str().unwrap().contains("node"), "opaque refs");
        }
        ok(&api, "end_session", json!({ "session": "vis" })).await;
    })
}

#[test]
fn an_open_dialog_ranks_first() {
    run(async {
        let api = api();
        let b = bind(&api, "dlg", "/dialog.html").await;
        let s = semantic(&api, &b, json!({ "node_budget": 4 })).await;
        let outline = s["outline"].as_str().unwrap();
        assert!(outline.contains("dialog \"Confirm delete\""), "{outline}");
        assert!(outline.contains("button \"Cancel\"") && outline.contains("button \"Delete\""), "{outline}");
        assert!(!outline.contains("Button 1\""), "background buttons come later:\n{outline}");
        assert_eq!(s["snapshot"]["selected_nodes"], 4);
        assert!(s["snapshot"]["omitted"]["budget"].as_u64().unwrap() > 0);
        assert_eq!(s["snapshot"]["complete"], false);
        // The buttons behind the backdrop say they are covered.
        let rest = semantic(&api, &b, json!({ "query": "Button 7" })).await;
        assert_eq!(find_ref(&rest, "Button 7")["visibility"], "page_occluded");
        ok(&api, "end_session", json!({ "session": "dlg" })).await;
    })
}

#[test]
fn continuations_page_through_a_snapshot_once() {
    run(async {
        let api = api();
        let b = bind(&api, "cont", "/kinds.html").await;
        let first = semantic(&api, &b, json!({ "node_budget": 10 })).await;
        let total = first["snapshot"]["total_nodes"].as_u64().unwrap();
        assert!(total > 20, "{first}");
        let mut seen: Vec<String> = Vec::new();
        let mut segments = 0;
        let mut page = first.clone();
        let mut used = Vec::new();
        loop {
            segments += 1;
            assert_eq!(page["snapshot"]["id"], first["snapshot"]["id"], "same stored snapshot");
            for r in page["refs"].as_array().unwrap().iter().chain(page["content_refs"].as_array().unwrap()) {
                seen.push(r["ref"].as_str().unwrap().to_string());
            }
            let Some(c) = page["snapshot"]["continuation"].as_str().map(str::to_string) else { break };
            used.push(c.clone());
            page = semantic(&api, &b, json!({ "continuation": c })).await;
        }
        assert!(segments >= 3, "two continuations at least, got {segments} segments");
        assert_eq!(page["snapshot"]["complete"], true);
        let unique: std::collections::HashSet<_> = seen.iter().collect();
        assert_eq!(unique.len(), seen.len(), "no ref twice");
        assert_eq!(seen.len() as u64, total);
        // Single-use.
        let e = fails(
            &api,
            "get_browser_state",
            b.with(json!({ "snapshot_format": "semantic_v2", "continuation": used[0] })),
        )
        .await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "continuation_used"));
        // Not combinable with a query.
        let fresh = semantic(&api, &b, json!({ "node_budget": 5 })).await;
        let c = fresh["snapshot"]["continuation"].as_str().unwrap();
        let e = fails(
            &api,
            "get_browser_state",
            b.with(json!({ "snapshot_format": "semantic_v2", "continuation": c, "query": "x" })),
        )
        .await;
        assert_eq!(e.code.as_str(), "invalid_params");
        // Not from another session.
        let other = bind(&api, "cont-other", "/kinds.html").await;
        let e = fails(
            &api,
            "get_browser_state",
            other.with(json!({ "snapshot_format": "semantic_v2", "continuation": c })),
        )
        .await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "continuation_foreign"));
        // A newer snapshot retires the old continuation.
        semantic(&api, &b, json!({})).await;
        let e =
            fails(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v2", "continuation": c })))
                .await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "newer_snapshot"));
        api.shutdown().await;
    })
}

#[test]
fn every_invalidation_rule_is_named() {
    run(async {
        let api = api();
        let b = bind(&api, "inv", "/form.html").await;
        let s1 = semantic(&api, &b, json!({})).await;
        let go = find_ref(&s1, "Go")["ref"].as_str().unwrap().to_string();
        semantic(&api, &b, json!({})).await;
        let e = fails(&api, "browser_click", b.with(json!({ "ref": go }))).await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "newer_snapshot"), "{e:?}");
        let s3 = semantic(&api, &b, json!({})).await;
        let go = find_ref(&s3, "Go")["ref"].as_str().unwrap().to_string();
        ok(&api, "browser_navigate", b.with(json!({ "url": url("/kinds.html") }))).await;
        let e = fails(&api, "browser_click", b.with(json!({ "ref": go }))).await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "navigation"), "{e:?}");
        // Reconnect: a new target generation; the old target and its refs are dead.
        let s4 = semantic(&api, &b, json!({})).await;
        let link = s4["refs"][0]["ref"].as_str().unwrap().to_string();
        let again = ok(&api, "bind_browser", json!({ "session": "inv", "reconnect": true })).await;
        assert_ne!(again["target_id"], b.target);
        let e = fails(&api, "browser_click", b.with(json!({ "ref": link }))).await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "target_generation"), "{e:?}");
        let e = fails(&api, "list_tabs", json!({ "session": "inv", "target_id": b.target })).await;
        assert_eq!(rule(&e), "target_generation");
        // end_session removes the namespace.
        ok(&api, "end_session", json!({ "session": "inv" })).await;
        let e = fails(&api, "list_tabs", json!({ "session": "inv", "target_id": again["target_id"] })).await;
        assert_eq!((e.code.as_str(), rule(&e)), ("capability_expired", "session_ended"));
        // Mismatched ids.
        let b2 = bind(&api, "inv2", "/form.html").await;
        let e =
            fails(&api, "get_browser_state", json!({ "session": "inv2", "target_id": "bt-nope-1", "tab_id": b2.tab }))
                .await;
        assert_eq!(e.code.as_str(), "target_mismatch");
        let e = fails(
            &api,
            "get_browser_state",
            json!({ "session": "inv2", "target_id": b2.target, "tab_id": "tab-nope-9" }),
        )
        .await;
        assert_eq!(e.code.as_str(), "tab_not_found");
        let e =
            fails(&api, "get_browser_state", json!({ "session": "nobody", "target_id": b2.target, "tab_id": b2.tab }))
                .await;
        assert_eq!(e.code.as_str(), "session_not_found");
        api.shutdown().await;
    })
}

#[test]
fn mutations_reprove_and_refuse_what_a_ref_does_not_offer() {
    run(async {
        let api = api();
        let b = bind(&api, "mut", "/form.html").await;
        let s = semantic(&api, &b, json!({})).await;
        let q = s["refs"].as_array().unwrap().iter().find(|r| r["value"] == "abc").unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        ok(&api, "browser_type", b.with(json!({ "ref": q, "text": "xyz", "overwrite": true }))).await;
        let go = find_ref(&s, "Go")["ref"].as_str().unwrap().to_string();
        let e = fails(&api, "browser_type", b.with(json!({ "ref": go, "text": "no" }))).await;
        assert_eq!(e.code.as_str(), "browser_action_unavailable");
        assert_eq!(e.detail_json()["actions"], json!(["click"]));
        let one = s["refs"].as_array().unwrap().iter().find(|r| r["actions"] == json!(["select"])).unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        let sel = ok(&api, "browser_select", b.with(json!({ "ref": one, "option": "Yankee" }))).await;
        assert_eq!(sel["selected"], "Yankee");
        let e = fails(&api, "browser_select", b.with(json!({ "ref": one, "option": "Nope" }))).await;
        assert!(e.message.contains("Xray"), "{e:?}");
        let cb = s["refs"].as_array().unwrap().iter().find(|r| r["role"] == "checkbox").unwrap();
        assert_eq!(cb["actions"], json!(["click", "check"]));
        let s2 = semantic(&api, &b, json!({})).await;
        assert!(s2["outline"].as_str().unwrap().contains(": xyz"), "{}", s2["outline"]);
        assert!(
            s2["outline"].as_str().unwrap().contains("[value=y]") || s2["outline"].as_str().unwrap().contains("Yankee"),
            "{}",
            s2["outline"]
        );
        // Enter through press_key submits the form (and navigates).
        let q2 = s2["refs"].as_array().unwrap().iter().find(|r| r["value"] == "xyz").unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        ok(&api, "browser_click", b.with(json!({ "ref": q2 }))).await;
        let k = ok(&api, "browser_press_key", b.with(json!({ "key": "Enter" }))).await;
        assert_eq!(k["navigated"], true);
        let e = fails(&api, "browser_press_key", b.with(json!({ "key": "Hyper" }))).await;
        assert_eq!(e.code.as_str(), "invalid_params");

        // Node liveness and frame loader proofs.
        let v = bind(&api, "proofs", "/visibility.html").await;
        let s = semantic(&api, &v, json!({})).await;
        let victim = find_ref(&s, "Victim")["ref"].as_str().unwrap().to_string();
        let remover = find_ref(&s, "Remove the victim")["ref"].as_str().unwrap().to_string();
        ok(&api, "browser_click", v.with(json!({ "ref": remover }))).await;
        let e = fails(&api, "browser_click", v.with(json!({ "ref": victim }))).await;
        assert_eq!(
            (e.code.as_str(), e.detail_json()["proof"].as_str()),
            ("proof_failed", Some("node_liveness")),
            "{e:?}"
        );
        let next = find_ref(&s, "Next page in frame");
        assert_ne!(next["frame"], "main");
        let frame_button = find_ref(&s, "Frame button")["ref"].as_str().unwrap().to_string();
        ok(&api, "browser_click", v.with(json!({ "ref": next["ref"] }))).await;
        let e = fails(&api, "browser_click", v.with(json!({ "ref": frame_button }))).await;
        assert_eq!(
            (e.code.as_str(), e.detail_json()["proof"].as_str()),
            ("proof_failed", Some("frame_loader")),
            "{e:?}"
        );
        // An offscreen ref is scrolled into view and clicked.
        let far = semantic(&api, &v, json!({ "query": "Far offscreen" })).await;
        let far_ref = find_ref(&far, "Far offscreen")["ref"].as_str().unwrap().to_string();
        ok(&api, "browser_click", v.with(json!({ "ref": far_ref }))).await;
        let after = semantic(&api, &v, json!({})).await;
        assert_eq!(find_ref(&after, "Far offscreen")["visibility"], "in_viewport");
        let sc = ok(&api, "browser_scroll", v.with(json!({ "direction": "up", "pixels": 5000 }))).await;
        assert_eq!(sc["page_scroll"], json!([0, 0]));
        api.shutdown().await;
    })
}

#[test]
fn frames_shadow_roots_and_popups() {
    run(async {
        let api = api();
        let port = world().other.addr().port();
        let b = bind(&api, "frames", &format!("/frames.html?other={port}")).await;
        let s = semantic(&api, &b, json!({})).await;
        assert_eq!(s["oopif"], json!({ "status": "attached", "frames": 1 }), "{}", s["outline"]);
        let cross = find_ref(&s, "Button in cross").clone();
        let same = find_ref(&s, "Button in same").clone();
        assert_ne!(cross["frame"], "main");
        assert_ne!(same["frame"], "main");
        assert_ne!(cross["frame"], same["frame"]);
        assert!(s["outline"].as_str().unwrap().contains("Shadow button"));
        ok(&api, "browser_click", b.with(json!({ "ref": cross["ref"] }))).await;
        let s2 = semantic(&api, &b, json!({ "query": "Clicked in cross" })).await;
        assert!(s2["outline"].as_str().unwrap().contains("Clicked in cross"), "{}", s2["outline"]);
        // scope_ref: just one subtree.
        let v = bind(&api, "popup", "/visibility.html").await;
        let s = semantic(&api, &v, json!({})).await;
        let link = find_ref(&s, "Open a popup")["ref"].as_str().unwrap().to_string();
        ok(&api, "browser_click", v.with(json!({ "ref": link }))).await;
        let tabs = ok(&api, "list_tabs", json!({ "session": "popup", "target_id": v.target })).await;
        let tabs = tabs["tabs"].as_array().unwrap();
        assert_eq!(tabs.len(), 2, "{tabs:?}");
        assert_eq!(tabs[1]["opener"], v.tab.as_str());
        assert_eq!(tabs[1]["title"], "Popup");
        let popup = tabs[1]["tab_id"].as_str().unwrap().to_string();
        let opened =
            ok(&api, "open_tab", json!({ "session": "popup", "target_id": v.target, "url": url("/kinds.html") })).await;
        assert_eq!(opened["tabs"].as_array().unwrap().len(), 3);
        ok(&api, "close_tab", json!({ "session": "popup", "target_id": v.target, "tab_id": popup })).await;
        let e = fails(&api, "get_browser_state", json!({ "session": "popup", "target_id": v.target, "tab_id": popup }))
            .await;
        assert_eq!(rule(&e), "tab_closed");
        api.shutdown().await;
    })
}

// Issue 19: `close_tab` located its tab, released the session lock, and then
// expected to find it again. Two concurrent closes of one tab (MCP runs
// requests concurrently) both pass `locate` while a navigation holds the lock;
// the tokio mutex is fair, so the second close is checked before the first
// closes. The loser gets the typed error, and the session goes on.
#[test]
fn two_concurrent_closes_of_one_tab_give_one_typed_error() {
    run(async {
        let api = api();
        let b = bind(&api, "race", "/form.html").await;
        let opened =
            ok(&api, "open_tab", json!({ "session": "race", "target_id": b.target, "url": url("/kinds.html") })).await;
        let other = opened["tabs"][1]["tab_id"].as_str().unwrap().to_string();
        let close = json!({ "session": "race", "target_id": b.target, "tab_id": other });
        let (nav, first, second) = tokio::join!(
            api.dispatch("browser_navigate", b.with(json!({ "url": url("/kinds.html?delay=300") }))),
            api.dispatch("close_tab", close.clone()),
            api.dispatch("close_tab", close.clone()),
        );
        nav.expect("the navigation holding the lock succeeds");
        let (won, lost) = match (first, second) {
            (Ok(w), Err(l)) | (Err(l), Ok(w)) => (w, l),
            (a, b) => panic!("exactly one close succeeds: {a:?} / {b:?}"),
        };
        assert_eq!(won.value["tabs"].as_array().unwrap().len(), 1, "{}", won.value);
        assert_eq!(lost.code.as_str(), "capability_expired", "{lost:?}");
        assert_eq!(rule(&lost), "tab_closed");
        // The session survives: its remaining tab answers.
        let tabs = ok(&api, "list_tabs", json!({ "session": "race", "target_id": b.target })).await;
        assert_eq!(tabs["tabs"].as_array().unwrap().len(), 1, "{tabs}");
        let s = semantic(&api, &b, json!({})).await;
        assert_eq!(s["status"], "ok");
        api.shutdown().await;
    })
}

// Issue 17, item 5: a frame of another origin on the same site (another port of
// 127.0.0.1) shares the page's process; its nodes live in the frame's own world.
#[test]
fn a_ref_in_a_same_site_cross_origin_frame_is_clicked() {
    run(async {
        let api = api();
        let port = world().other.addr().port();
        let b = bind(&api, "xorigin", &format!("/frames.html?origin=http://127.0.0.1:{port}")).await;
        let s = semantic(&api, &b, json!({})).await;
        let cross = find_ref(&s, "Button in cross").clone();
        assert_ne!(cross["frame"], "main");
        ok(&api, "browser_click", b.with(json!({ "ref": cross["ref"] }))).await;
        let s2 = semantic(&api, &b, json!({ "query": "Clicked in cross" })).await;
        assert!(s2["outline"].as_str().unwrap().contains("Clicked in cross"), "{}", s2["outline"]);
        // Typing reaches the frame's field too.
        let s = semantic(&api, &b, json!({})).await;
        let fields: Vec<&Value> = s["refs"].as_array().unwrap().iter().filter(|r| r["name"] == "frame input").collect();
        assert_eq!(fields.len(), 2, "{}", s["outline"]);
        let cross_field = fields.iter().find(|r| r["frame"] == cross["frame"]).unwrap()["ref"].clone();
        ok(&api, "browser_type", b.with(json!({ "ref": cross_field, "text": "typed" }))).await;
        let s = semantic(&api, &b, json!({ "query": "frame input" })).await;
        assert!(s["outline"].as_str().unwrap().contains("typed"), "{}", s["outline"]);
        api.shutdown().await;
    })
}

#[test]
fn scope_ref_dom_refs_and_the_element_index_protocol() {
    run(async {
        let api = api();
        let b = bind(&api, "misc", "/form.html").await;
        let s = semantic(&api, &b, json!({})).await;
        let form = s["content_refs"].as_array().unwrap().iter().find(|r| r["role"] == "form").unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        let scoped = semantic(&api, &b, json!({ "scope_ref": form })).await;
        assert_eq!(scoped["snapshot"]["scope"], "subtree");
        let outline = scoped["outline"].as_str().unwrap();
        assert!(outline.starts_with("- form") && !outline.contains("heading"), "{outline}");
        // dom_refs_v1 is the default format.
        let d = ok(&api, "get_browser_state", b.addr()).await;
        assert_eq!(d["snapshot"]["format"], "dom_refs_v1");
        assert_eq!(d["truncated"], false);
        let go = d["refs"].as_array().unwrap().iter().find(|r| r["text"] == "Go").unwrap()["ref"]
            .as_str()
            .unwrap()
            .to_string();
        // A ref number past u32 is no element: it must not wrap around to element 1.
        let (snap, n) = go.split_once(':').unwrap();
        let wrapped = format!("{snap}:{}", n.parse::<u64>().unwrap() + (1u64 << 32));
        let e = fails(&api, "browser_click", b.with(json!({ "ref": wrapped }))).await;
        assert_eq!(e.code.as_str(), "snapshot_not_found", "{e:?}");
        let small = ok(&api, "get_browser_state", b.with(json!({ "node_budget": 3 }))).await;
        assert_eq!(small["truncated"], true);
        assert_eq!(small["refs"].as_array().unwrap().len(), 3);
        let _ = go;
        let e = fails(&api, "get_browser_state", b.with(json!({ "snapshot_format": "semantic_v3" }))).await;
        assert_eq!(e.code.as_str(), "invalid_params");
        let e = fails(&api, "get_browser_state", b.with(json!({ "node_budget": 0 }))).await;
        assert_eq!(e.code.as_str(), "invalid_params");
        let e = fails(&api, "get_browser_state", b.with(json!({ "bogus": 1 }))).await;
        assert!(e.message.contains("bogus"), "{e:?}");
        // get_state / act: the element-index protocol through the same API.
        let st = ok(&api, "get_state", b.with(json!({ "screenshot": false }))).await;
        let idx = st["element_index"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(_, d)| d["attributes"]["name"] == "q")
            .unwrap()
            .0
            .parse::<u64>()
            .unwrap();
        let st2 =
            ok(&api, "act", b.with(json!({ "action": { "action": "input_text", "element_index": idx, "text": "!" } })))
                .await;
        assert_eq!(st2["element_index"][idx.to_string()]["attributes"]["value"], "abc!");
        let bad =
            ok(&api, "act", b.with(json!({ "action": { "action": "click_element", "element_index": 999 } }))).await;
        assert_eq!(bad["error"]["code"], "INVALID_ELEMENT_INDEX");
        assert_eq!(bad["state_hash"], st2["state_hash"]);
        // Each get_state call honours its own screenshot flag.
        let shot = api.dispatch("get_state", b.with(json!({ "screenshot": true }))).await.unwrap();
        assert!(shot.image.is_some(), "get_state {{screenshot:true}} after {{screenshot:false}} has an image");
        let none = api.dispatch("get_state", b.with(json!({ "screenshot": false }))).await.unwrap();
        assert!(none.image.is_none());
        let e = fails(&api, "no_such_tool", json!({})).await;
        assert_eq!(e.code.as_str(), "unknown_tool");
        api.shutdown().await;
    })
}

#[test]
fn an_oversized_dom_gives_a_partial_snapshot() {
    run(async {
        let api = api();
        let b = bind(&api, "big", "/kinds.html").await;
        let s = semantic(&api, &b, json!({ "dom_node_limit": 40 })).await;
        assert_eq!(s["snapshot"]["complete"], false);
        assert!(s["snapshot"]["continuation"].is_null());
        assert!(s["snapshot"]["omitted"]["unknown"].as_u64().unwrap() > 0, "{}", s["snapshot"]);
        let full = semantic(&api, &b, json!({})).await;
        assert_eq!(full["snapshot"]["complete"], true);
        assert!(full["snapshot"]["total_nodes"].as_u64() > s["snapshot"]["total_nodes"].as_u64());
        api.shutdown().await;
    })
}

#[test]
fn outline_text_joins_inline_boxes_as_rendered() {
    run(async {
        let api = api();
        let b = bind(&api, "text", "/fidelity/text.html").await;
        let s = semantic(&api, &b, json!({})).await;
        let outline = s["outline"].as_str().unwrap();
        for want in ["$42.99", "e-mail H2O Select Paris, then", "Deneen\\\" into the box"] {
            assert!(outline.contains(want), "{want:?} not in outline:\n{outline}");
        }
        api.shutdown().await;
    })
}

/// Loose text in `<body>` is a line of its own, as in Chromium's tree, not a
/// text node holding the whole page.
#[test]
fn loose_body_text_does_not_hold_the_page() {
    run(async {
        let api = api();
        let b = bind(&api, "body-text", "/fidelity/body-text.html").await;
        let s = semantic(&api, &b, json!({})).await;
        let outline = s["outline"].as_str().unwrap();
        let lines: Vec<&str> = outline.lines().collect();
        assert!(lines.first().is_some_and(|l| l.starts_with("- text \"Disk usage: 80%\"")), "{outline}");
        for top in ["- heading \"Storage\"", "- button \"Clean up\"", "- paragraph \"Last run today\""] {
            assert!(lines.iter().any(|l| l.starts_with(top)), "{top:?} is not at the top level:\n{outline}");
        }
        api.shutdown().await;
    })
}

/// A list item or cell whose text all belongs to the links and nested lists in
/// it shows no name of its own (the mdBook and Django pattern); one with its own
/// text keeps it. Names leave out `aria-hidden` parts.
#[test]
fn containers_do_not_repeat_the_names_of_what_they_hold() {
    run(async {
        let api = api();
        let b = bind(&api, "containers", "/semantic.html").await;
        let s = semantic(&api, &b, json!({ "query": "Getting Started" })).await;
        let outline = s["outline"].as_str().unwrap();
        let unnamed =
            |role: &str, outline: &str| outline.lines().any(|l| l.trim_start().starts_with(&format!("- {role} [")));
        assert!(unnamed("listitem", outline) && outline.contains("link \"Getting Started\""), "{outline}");
        let s = semantic(&api, &b, json!({ "query": "Groups" })).await;
        let outline = s["outline"].as_str().unwrap();
        assert!(unnamed("rowheader", outline) && outline.contains("link \"Groups\""), "{outline}");
        let s = semantic(&api, &b, json!({ "query": "Unsure" })).await;
        assert!(s["outline"].as_str().unwrap().contains("cell \"Unsure\""), "{}", s["outline"]);
        api.shutdown().await;
    })
}

/// semantic_v2 read from the DOM alone gives what the join with Chromium's
/// accessibility tree gives, on every fixture.
#[test]
fn semantic_from_the_dom_matches_the_accessibility_join() {
    run(async {
        let other_port = world().other.addr().port();
        let mut pages: Vec<String> = vec![format!("/frames.html?other={other_port}")];
        for dir in [fixtures_dir(), fixtures_dir().join("fidelity"), fixtures_dir().join("hostile")] {
            let prefix = if dir.ends_with("fidelity") {
                "/fidelity/"
            } else if dir.ends_with("hostile") {
                "/hostile/"
            } else {
                "/"
            };
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .expect("fixtures")
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| {
                    n.ends_with(".html")
                        && !["loop.html", "never.html", "renav.html", "popups.html"].contains(&n.as_str())
                })
                .collect();
            names.sort();
            pages.extend(names.into_iter().map(|n| format!("{prefix}{n}")));
        }
        let mut differ = Vec::new();
        for path in &pages {
            let env = env(path).await;
            let tab = env.tab();
            if let Some(diff) = semantic_against_the_ax_tree(tab).await {
                differ.push(format!("{path}:{diff}"));
            }
            env.close().await;
        }
        assert!(differ.is_empty(), "{} pages differ:\n{}", differ.len(), differ.join("\n"));
    })
}

/// The semantic_v2 viewport scope of one capture: the outline of every node in
/// scope (refs by backend node id, so two captures compare) and what it omits.
async fn viewport_scope(tab: &sightline_browser::Tab, walk: bool) -> (String, bool) {
    use sightline_page::semantic::{self, Scope, SemanticOptions};
    let opts = sightline_browser::CaptureOptions {
        whole_document: true,
        semantic_walk: walk,
        walk_small_pages: walk,
        ..Default::default()
    };
    let mut c = tab.capture_with(opts).await.expect("capture");
    let mut tree = semantic::build(&mut c.view, SemanticOptions::default());
    if let Some(far) = c.far {
        tree.far = far;
    }
    let plan = semantic::plan(&tree, &Scope::Viewport);
    let outline = semantic::outline(&tree, &plan.ranked, |i| tree.nodes[i].backend_node_id.to_string());
    (format!("{outline}\nomitted: {:?}", plan.omitted), c.far.is_some())
}

/// semantic_v2's viewport scope from the viewport walk, which keeps the near
/// margin and counts what it leaves out (`far.js`), is the scope of a capture
/// of the whole document: the same nodes, names and states, the same omission
/// counts, on every fixture and on long pages scrolled.
#[test]
fn walk_counts_equal_the_full_capture_s() {
    run(async {
        // An inventory of 1,250 rows (the bench's 5,000-control page), built in the page.
        const INVENTORY: &str = "document.body.innerHTML = '<h1>Inventory</h1>' + Array.from({length: 1250}, (_, i) => \
            `<div class=row style='display:flex;gap:8px'><div class=c><b>SKU-${i}</b></div><div class=c><span>Qty ${i % 9 + 1}</span></div>\
            <div class=c><button><span aria-hidden=true>+</span> Add ${i}</button></div><div class=c><button hidden>Remove ${i}</button></div>\
            <div class=c><a href='#item-${i}'><span>Item ${i}</span></a></div><div class=c><label><input type=checkbox> <span>Select ${i}</span></label></div></div>`).join('')";
        let mut pages: Vec<(String, String)> = vec![
            ("/long.html".into(), "scrollTo(0, 3000)".into()),
            ("/long.html".into(), "scrollTo(0, 9011)".into()),
            ("/long.html".into(), "scrollTo(0, document.body.scrollHeight)".into()),
            ("/nested-out-of-flow.html".into(), "scrollTo(0, 3000)".into()),
            ("/semantic.html".into(), "scrollTo(0, 400)".into()),
            ("/kinds.html".into(), INVENTORY.into()),
            ("/kinds.html".into(), format!("{INVENTORY}; scrollTo(0, 20000)")),
        ];
        pages.extend(fixture_pages().into_iter().map(|p| (p, String::new())));
        let mut differ = Vec::new();
        let mut counted = Vec::new();
        for (path, setup) in &pages {
            let env = env(path).await;
            if !setup.is_empty() {
                eval(&env, setup).await;
            }
            let tab = env.tab();
            for attempt in 0..4 {
                let (full, _) = viewport_scope(tab, false).await;
                let (walked, was_counted) = viewport_scope(tab, true).await;
                let (again, _) = viewport_scope(tab, false).await;
                if full != again {
                    assert!(attempt < 3, "{path} never held still");
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    continue;
                }
                if was_counted {
                    counted.push(format!("{path} {setup}"));
                    if walked != full {
                        differ.push(format!("{path} ({setup}):\n  full: {full}\n  walk: {walked}"));
                    }
                }
                break;
            }
            env.close().await;
        }
        eprintln!("counted by the walk: {} of {} pages", counted.len(), pages.len());
        assert!(counted.len() * 2 > pages.len(), "the walk counted only {counted:?}");
        for must in ["/long.html scrollTo(0, 3000)", "/long.html scrollTo(0, 9011)", "/far-cases.html "] {
            assert!(counted.iter().any(|c| c == must), "{must} was not walked: {counted:?}");
        }
        assert!(counted.iter().filter(|c| c.starts_with("/kinds.html document")).count() == 2, "{counted:?}");
        assert!(differ.is_empty(), "the walk's semantic_v2 differs on {} pages:\n{}", differ.len(), differ.join("\n"));
    })
}

/// `far-cases.html` holds, far below the viewport, text that `far.js` reads
/// from where a first visible text child stands among the element children
/// (before, between and after them, after a hidden target, through display:
/// contents), not from the child nodes again: the walk counts it as the full
/// capture does (`walk_counts_equal_the_full_capture_s` too), and both the
/// hidden and the offscreen bucket hold some of it.
#[test]
fn far_cases_are_counted_as_the_full_capture_counts_them() {
    run(async {
        let env = env("/far-cases.html").await;
        let tab = env.tab();
        let (full, _) = viewport_scope(tab, false).await;
        let (walked, counted) = viewport_scope(tab, true).await;
        assert!(counted, "far-cases.html was not counted by the walk");
        assert_eq!(walked, full, "the walk's count differs from the full capture's");
        let count = |name: &str| -> usize {
            let at = full.find(&format!("{name}: ")).unwrap_or_else(|| panic!("no {name} in {full}")) + name.len() + 2;
            full[at..].split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse().ok()).unwrap()
        };
        for bucket in ["css_hidden", "offscreen"] {
            assert!(count(bucket) > 0, "{bucket} is empty: {full}");
        }
        env.close().await;
    })
}
