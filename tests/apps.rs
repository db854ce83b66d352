//! Real apps, end to end (issue 8, section 4).

mod common;
#[path = "apps/harness.rs"]
mod harness;

use common::*;
use harness::*;
use serde_json::json;

#[test]
fn explore() {
    run(async {
        let dj = Django::start();
        let mut env = env(&dj.url("/admin/")).await;
        println!("{}", env.state().page_content);
        let s = admin_login(&mut env, &dj).await;
        println!("---\n{}", s.page_content);
        let (_srv, url) = todomvc().await;
        let s = act(&mut env, json!({"action":"navigate","url": url})).await;
        println!("---\n{}", s.page_content);
    })
}
