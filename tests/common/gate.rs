//! A loopback page server whose pages load only when the test says so.

/// A loopback page server whose pages load only when the test says so: a
/// request is answered once `release` is called. `seen` counts the requests.
pub struct Gate {
    pub base: String,
    state: std::sync::Arc<(std::sync::Mutex<(usize, bool)>, std::sync::Condvar)>,
}

impl Gate {
    pub fn start() -> Gate {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = std::sync::Arc::new((std::sync::Mutex::new((0usize, false)), std::sync::Condvar::new()));
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let st = st.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let mut head = Vec::new();
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match std::io::Read::read(&mut conn, &mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let (lock, cv) = &*st;
                    let mut g = lock.lock().unwrap();
                    g.0 += 1;
                    cv.notify_all();
                    while !g.1 {
                        g = cv.wait(g).unwrap();
                    }
                    drop(g);
                    let body = "<!doctype html><title>Held</title><p>released</p>";
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = std::io::Write::write_all(&mut conn, reply.as_bytes());
                });
            }
        });
        Gate { base, state }
    }

    /// Block until the gate has seen `n` requests.
    pub fn wait_seen(&self, n: usize) {
        let (lock, cv) = &*self.state;
        let mut g = lock.lock().unwrap();
        while g.0 < n {
            g = cv.wait(g).unwrap();
        }
    }

    pub fn released(&self) -> bool {
        self.state.0.lock().unwrap().1
    }

    pub fn release(&self) {
        let (lock, cv) = &*self.state;
        lock.lock().unwrap().1 = true;
        cv.notify_all();
    }
}

/// A session whose start page the gate holds does not hold up another one's
/// start: the second session is created, start page and all, while the first
/// still waits; once released, the first completes with its page.
pub fn a_held_start_does_not_hold_up_the_next(srv: &super::InProcServer) {
    use serde_json::json;
    let gate = Gate::start();
    let first = {
        let (u, page) = (srv.url("/v1/sessions"), format!("{}/held", gate.base));
        std::thread::spawn(move || super::post(&u, json!({ "url": page, "screenshot": false })))
    };
    gate.wait_seen(1);
    let (_, second) = super::new_session(srv, json!({ "url": super::url("/signin.html"), "screenshot": false }));
    assert!(second["state"]["page_content"].as_str().unwrap().contains("Sign In"), "{second}");
    assert!(!gate.released() && !first.is_finished(), "the first start was still held");
    gate.release();
    let (status, v) = first.join().unwrap();
    assert_eq!(status, 201, "{v}");
    assert!(v["state"]["page_content"].as_str().unwrap().contains("released"), "{v}");
}
