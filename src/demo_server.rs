//! The demo's web site: the two pages `sightline demo` drives, embedded in the
//! binary and served on 127.0.0.1:0 for as long as the demo runs. GET only;
//! any other path is a 404 (the dashboard's order links lead there on purpose).

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Path → page.
const PAGES: &[(&str, &str)] =
    &[("/", include_str!("demo_site/index.html")), ("/welcome.html", include_str!("demo_site/welcome.html"))];

/// The running site; stops when dropped.
pub struct DemoSite {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for DemoSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl DemoSite {
    pub async fn start() -> std::io::Result<DemoSite> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    if let Err(e) = answer(stream).await {
                        tracing::debug!(error = %e, "demo site: a request failed");
                    }
                });
            }
        });
        Ok(DemoSite { addr, task })
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// Read one request head, answer it, close the connection.
async fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let target = head.lines().next().and_then(|l| l.split(' ').nth(1)).unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let (status, body) = match PAGES.iter().find(|(p, _)| *p == path) {
        Some((_, page)) => ("200 OK", *page),
        None => ("404 Not Found", "<!doctype html><title>Not found</title><h1>Not found</h1>"),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await
}
