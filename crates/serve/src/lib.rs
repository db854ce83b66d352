//! A tiny HTTP/1.1 server on loopback for fixture pages, the demo site and
//! benchmark pages. It serves files from a directory and/or pages from memory,
//! binds `127.0.0.1:0` by default, and understands one test hook: a
//! `delay=MS` query parameter holds the response back that long (for slow
//! images, late XHRs and timeouts).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server serves.
#[derive(Default)]
struct Site {
    root: Option<PathBuf>,
    pages: HashMap<String, (String, Vec<u8>)>,
}

/// A running server; stops when dropped.
pub struct Server {
    addr: SocketAddr,
    site: Arc<RwLock<Site>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "css" => "text/css",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        _ => "text/plain; charset=utf-8",
    }
}

impl Server {
    /// Serve files under `root` on `127.0.0.1:0`.
    pub async fn dir(root: impl Into<PathBuf>) -> std::io::Result<Server> {
        Server::start("127.0.0.1:0", Some(root.into())).await
    }

    /// Serve only in-memory pages (add them with [`Server::page`]) on `127.0.0.1:0`.
    pub async fn memory() -> std::io::Result<Server> {
        Server::start("127.0.0.1:0", None).await
    }

    pub async fn start(bind: &str, root: Option<PathBuf>) -> std::io::Result<Server> {
        let listener = TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        let site = Arc::new(RwLock::new(Site { root, pages: HashMap::new() }));
        let s = site.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = serve(stream, s).await;
                });
            }
        });
        Ok(Server { addr, site, task })
    }

    /// Add or replace an in-memory page (`path` starts with `/`).
    pub fn page(&self, path: &str, body: impl Into<Vec<u8>>) {
        let ct = if path.ends_with('/') { "text/html; charset=utf-8" } else { content_type(path) };
        self.site.write().unwrap().pages.insert(path.to_string(), (ct.to_string(), body.into()));
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

async fn serve(mut stream: TcpStream, site: Arc<RwLock<Site>>) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 || buf.len() > 64 * 1024 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let delay = query.split('&').find_map(|kv| kv.strip_prefix("delay=")).and_then(|v| v.parse::<u64>().ok());
    if let Some(ms) = delay {
        tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
    }
    let found = lookup(&site, path);
    let (status, ct, body) = match found {
        Some((ct, body)) => ("200 OK", ct, body),
        None => (
            "404 Not Found",
            "text/html; charset=utf-8".to_string(),
            b"<!doctype html><title>404</title><h1>Not found</h1>".to_vec(),
        ),
    };
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(header.as_bytes()).await?;
    stream.write_all(&body).await?;
    stream.shutdown().await
}

fn lookup(site: &RwLock<Site>, path: &str) -> Option<(String, Vec<u8>)> {
    let site = site.read().unwrap();
    if let Some((ct, body)) = site.pages.get(path) {
        return Some((ct.clone(), body.clone()));
    }
    let root = site.root.as_ref()?;
    let rel = path.trim_start_matches('/');
    if rel.split('/').any(|seg| seg == "..") {
        return None;
    }
    let mut file = root.join(rel);
    if file.is_dir() {
        file = file.join("index.html");
    }
    let body = std::fs::read(&file).ok()?;
    Some((content_type(&file.to_string_lossy()).to_string(), body))
}
