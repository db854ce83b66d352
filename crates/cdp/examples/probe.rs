use serde_json::{json, Value};
use sightline_cdp::*;
#[tokio::main]
async fn main() {
    let c = Chromium::launch(&LaunchOptions::default()).await.unwrap();
    let cl = c.client();
    let t: Value = cl.call(None, "Target.createTarget", json!({"url":"about:blank"})).await.unwrap();
    let a: Value = cl.call(None, "Target.attachToTarget", json!({"targetId": t["targetId"], "flatten": true})).await.unwrap();
    let s = SessionId(a["sessionId"].as_str().unwrap().into());
    let _: Value = cl.call(Some(&s), "Page.enable", json!({})).await.unwrap();
    let url = std::env::args().nth(1).unwrap();
    let r: Value = cl.call(Some(&s), "Page.navigate", json!({"url": url})).await.unwrap();
    println!("nav {r}");
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let _: Value = cl.call(Some(&s), "Runtime.evaluate", json!({"expression":"window.scrollTo(0,200)"})).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let snap: Value = cl.call(Some(&s), "DOMSnapshot.captureSnapshot", json!({"computedStyles":["cursor","display"],"includePaintOrder":true,"includeDOMRects":true})).await.unwrap();
    let strings = snap["strings"].as_array().unwrap();
    let st = |i: &Value| -> String { let i = i.as_i64().unwrap(); if i < 0 { "".into() } else { strings[i as usize].as_str().unwrap().to_string() } };
    for (di, d) in snap["documents"].as_array().unwrap().iter().enumerate() {
        println!("doc {di} url={} scroll=({},{}) frame={}", st(&d["documentURL"]), d["scrollOffsetX"], d["scrollOffsetY"], st(&d["frameId"]));
        let nodes = &d["nodes"]; let lay = &d["layout"];
        println!(" rare: inputValue={} clickable={} checked={} contentDoc={}", nodes["inputValue"], nodes["isClickable"], nodes["inputChecked"], nodes["contentDocumentIndex"]);
        let names = nodes["nodeName"].as_array().unwrap();
        for (li, ni) in lay["nodeIndex"].as_array().unwrap().iter().enumerate() {
            let ni = ni.as_u64().unwrap() as usize;
            let name = st(&names[ni]);
            if name.starts_with('#') { continue; }
            println!("  {ni} {name} bounds={} style={:?} client={} scroll={}", lay["bounds"][li], lay["styles"][li].as_array().unwrap().iter().map(|v| st(v)).collect::<Vec<_>>(), lay["clientRects"][li], lay["scrollRects"][li]);
        }
    }
    let bad: Value = cl.call(Some(&s), "Page.navigate", json!({"url": "http://127.0.0.1:1/"})).await.unwrap();
    println!("bad nav {bad}");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let h: Value = cl.call(Some(&s), "Page.getNavigationHistory", json!({})).await.unwrap();
    println!("history {h}");
    c.close().await;
}
