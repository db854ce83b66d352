use serde_json::{json, Value};
use sightline_cdp::*;
use std::time::Instant;
#[tokio::main]
async fn main() {
    let c = Chromium::launch(&LaunchOptions::default()).await.unwrap();
    let cl = c.client();
    let t: Value = cl.call(None, "Target.createTarget", json!({"url":"about:blank"})).await.unwrap();
    let a: Value = cl.call(None, "Target.attachToTarget", json!({"targetId": t["targetId"], "flatten": true})).await.unwrap();
    let s = SessionId(a["sessionId"].as_str().unwrap().into());
    let _: Value = cl.call(Some(&s), "Page.enable", json!({})).await.unwrap();
    let _: Value = cl.call(Some(&s), "Page.setLifecycleEventsEnabled", json!({"enabled": true})).await.unwrap();
    let url = std::env::args().nth(1).unwrap();
    let _: Value = cl.call(Some(&s), "Page.navigate", json!({"url": url})).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let r: Value = cl.call(Some(&s), "Runtime.evaluate", json!({"expression": "(() => {email.value='a@b.c'; password.value='x'; const r = document.querySelector('button').getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]})()", "returnByValue": true})).await.unwrap();
    let (x, y) = (r["result"]["value"][0].as_f64().unwrap(), r["result"]["value"][1].as_f64().unwrap());
    let mut rx = cl.subscribe(None);
    let t0 = Instant::now();
    let _: Value = cl.call(Some(&s), "Input.dispatchMouseEvent", json!({"type":"mouseMoved","x":x,"y":y})).await.unwrap();
    let _: Value = cl.call(Some(&s), "Input.dispatchMouseEvent", json!({"type":"mousePressed","x":x,"y":y,"button":"left","clickCount":1,"buttons":1})).await.unwrap();
    let _: Value = cl.call(Some(&s), "Input.dispatchMouseEvent", json!({"type":"mouseReleased","x":x,"y":y,"button":"left","clickCount":1,"buttons":1})).await.unwrap();
    println!("released at {:?} at {x},{y}", t0.elapsed()); let h: Value = cl.call(Some(&s), "Runtime.evaluate", json!({"expression": "location.href + document.activeElement.outerHTML", "returnByValue": true})).await.unwrap(); println!("{h}");
    let end = Instant::now() + std::time::Duration::from_millis(1500);
    while let Ok(Some(ev)) = tokio::time::timeout_at(end.into(), rx.recv()).await {
        if ev.method.starts_with("Page.") { println!("{:?} {} {}", t0.elapsed(), ev.method, &ev.params.get()[..ev.params.get().len().min(90)]); }
    }
    c.close().await;
}
