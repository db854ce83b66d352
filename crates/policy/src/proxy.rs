//! The egress proxy: every request Chromium makes passes through here.
//!
//! It speaks just enough HTTP/1.1 for a browser's proxy traffic: `CONNECT
//! host:port` (HTTPS, WebSockets) and absolute-form requests (`GET
//! http://host/path`, plain HTTP). For each it runs [`Policy::resolve`] /
//! [`Policy::resolve_url`], which resolves the host once and checks every
//! address, then connects to one of those checked addresses, never to the
//! name again. A refusal is answered `403` with the rule in the body and in an
//! `X-Sightline-Refused` header, and recorded in a bounded log. Those
//! `X-Sightline-*` headers are the proxy's alone: they are taken out of every
//! upstream answer, so no page can pass its own load off as refused or failed.
//!
//! Plain-HTTP connections carry one request each: the upstream request gets
//! `Connection: close`, so a browser cannot reuse a connection checked for one
//! host to reach another.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use crate::{Policy, Refused};

/// The longest request head accepted (request line and headers).
const MAX_HEAD: usize = 32 << 10;
/// Refusals kept for callers that want to explain a failed load.
const LOG_LEN: usize = 64;
/// Connections handled at once; more wait for a slot.
const MAX_CONNECTIONS: usize = 512;
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// One refused request.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// Increasing number, for "refusals since" queries.
    pub seq: u64,
    /// `host:port` for tunnels, the URL for plain requests.
    pub target: String,
    pub refused: Refused,
}

#[derive(Default)]
struct Log {
    next: u64,
    entries: VecDeque<Refusal>,
}

/// A running proxy on 127.0.0.1. Dropping it stops accepting connections.
pub struct EgressProxy {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl EgressProxy {
    /// Listen on 127.0.0.1 (a free port) and enforce `policy` on every request.
    /// Must be called within a tokio runtime; the proxy runs on it.
    pub fn start(policy: Arc<Policy>) -> std::io::Result<EgressProxy> {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(std_listener)?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Log::default()));
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let task_log = log.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok(permit) = slots.clone().acquire_owned().await else { return };
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (policy, log) = (policy.clone(), task_log.clone());
                tokio::spawn(async move {
                    let _ = handle(stream, &policy, &log).await;
                    drop(permit);
                });
            }
        });
        Ok(EgressProxy { addr, log, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Chromium switches that send all of its traffic through this proxy:
    /// loopback too (`<-loopback>` removes the implicit bypass), and WebRTC
    /// kept off non-proxied UDP.
    pub fn chromium_flags(&self) -> Vec<String> {
        vec![
            format!("--proxy-server=http://{}", self.addr),
            "--proxy-bypass-list=<-loopback>".to_string(),
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".to_string(),
            "--webrtc-ip-handling-policy=disable_non_proxied_udp".to_string(),
        ]
    }

    /// The sequence number the next refusal will get.
    pub fn next_seq(&self) -> u64 {
        self.log.lock().unwrap().next
    }

    /// Refusals recorded with `seq >= since` (the log keeps the last 64).
    pub fn refusals_since(&self, since: u64) -> Vec<Refusal> {
        self.log.lock().unwrap().entries.iter().filter(|r| r.seq >= since).cloned().collect()
    }
}

fn record(log: &Mutex<Log>, target: String, refused: Refused) {
    let mut l = log.lock().unwrap();
    let seq = l.next;
    l.next += 1;
    if l.entries.len() == LOG_LEN {
        l.entries.pop_front();
    }
    l.entries.push_back(Refusal { seq, target, refused });
}

async fn refuse(mut client: TcpStream, log: &Mutex<Log>, target: String, refused: Refused) -> std::io::Result<()> {
    let body = format!("Sightline's egress policy refused this request (rule {}): {refused}\n", refused.rule());
    let head = format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nX-Sightline-Refused: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        refused.rule(),
        body.len()
    );
    record(log, target, refused);
    client.write_all(head.as_bytes()).await?;
    client.write_all(body.as_bytes()).await?;
    client.shutdown().await
}

/// Chromium's name for a failed connection, carried to the browser layer in the
/// `X-Sightline-Egress-Error` header: through a proxy, Chromium would otherwise
/// show our 502 as a page instead of a failed load.
fn net_error(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => "ERR_CONNECTION_REFUSED",
        K::TimedOut => "ERR_CONNECTION_TIMED_OUT",
        K::ConnectionReset | K::ConnectionAborted => "ERR_CONNECTION_RESET",
        K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable => "ERR_ADDRESS_UNREACHABLE",
        _ => "ERR_CONNECTION_FAILED",
    }
}

async fn bad_gateway(mut client: TcpStream, status: &str, net_error: &str, detail: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nX-Sightline-Egress-Error: {net_error}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{detail}",
        detail.len()
    );
    client.write_all(head.as_bytes()).await?;
    client.shutdown().await
}

/// Read the request head; returns (head, bytes read past it).
async fn read_head(client: &mut TcpStream) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i + 4]).into_owned();
            return Ok(Some((head, buf[i + 4..].to_vec())));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
    }
}

async fn connect_checked(addrs: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for a in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(a)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = e,
            Err(_) => last = std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"),
        }
    }
    Err(last)
}

async fn handle(mut client: TcpStream, policy: &Policy, log: &Mutex<Log>) -> std::io::Result<()> {
    let Ok(Ok(Some((head, rest)))) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await else {
        return Ok(());
    };
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (method, target, version) =
        (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method.eq_ignore_ascii_case("CONNECT") {
        // Authority form: host:port, IPv6 in brackets. Parsed by the URL parser, so
        // the host is normalised exactly as a URL's would be.
        let parsed = target.rsplit_once(':').and_then(|(host, port)| {
            let port: u16 = port.parse().ok()?;
            let u = Url::parse(&format!("http://{host}/")).ok()?;
            let plain = u.username().is_empty() && u.password().is_none() && u.path() == "/" && u.port().is_none();
            plain.then(|| Some((u.host()?.to_owned(), port))).flatten()
        });
        let Some((host, port)) = parsed else {
            return bad_gateway(client, "400 Bad Request", "ERR_INVALID_URL", "bad CONNECT target").await;
        };
        let addrs = match policy.resolve(&host, port).await {
            Ok(a) => a,
            Err(refused) => return refuse(client, log, target.to_string(), refused).await,
        };
        let mut upstream = match connect_checked(&addrs).await {
            Ok(s) => s,
            Err(e) => return bad_gateway(client, "502 Bad Gateway", net_error(&e), &e.to_string()).await,
        };
        client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await?;
        upstream.write_all(&rest).await?;
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        return Ok(());
    }
    let Some(url) = Url::parse(target).ok().filter(|u| u.scheme() == "http") else {
        return bad_gateway(
            client,
            "400 Bad Request",
            "ERR_INVALID_URL",
            "expected an absolute http:// URL or CONNECT",
        )
        .await;
    };
    let addrs = match policy.resolve_url(&url).await {
        Ok(a) => a,
        Err(refused) => return refuse(client, log, url.to_string(), refused).await,
    };
    let mut upstream = match connect_checked(&addrs).await {
        Ok(s) => s,
        Err(e) => return bad_gateway(client, "502 Bad Gateway", net_error(&e), &e.to_string()).await,
    };
    let mut origin_form = url.path().to_string();
    if let Some(q) = url.query() {
        origin_form.push('?');
        origin_form.push_str(q);
    }
    let mut out = format!("{method} {origin_form} {version}\r\n");
    for h in lines.filter(|l| !l.is_empty()) {
        let name = h.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        if matches!(name.as_str(), "connection" | "proxy-connection" | "proxy-authorization" | "keep-alive") {
            continue;
        }
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    upstream.write_all(out.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    // The request body goes on up while the answer comes down, its heads cleaned.
    let (mut from_client, mut to_client) = client.split();
    let (mut from_upstream, mut to_upstream) = upstream.split();
    let up = async {
        let _ = tokio::io::copy(&mut from_client, &mut to_upstream).await;
        let _ = to_upstream.shutdown().await;
    };
    let down = async {
        if relay_heads(&mut from_upstream, &mut to_client).await.is_ok() {
            let _ = tokio::io::copy(&mut from_upstream, &mut to_client).await;
        }
        let _ = to_client.shutdown().await;
    };
    tokio::join!(up, down);
    Ok(())
}

/// The most a response head may hold (Chromium's own limit).
const MAX_RESPONSE_HEAD: usize = 256 << 10;

/// Relay an upstream's response heads (any `1xx` interim ones, then the final
/// one) without the `X-Sightline-*` headers, which only this proxy's own answers
/// may carry: a page cannot pass its own load off as refused or failed. Every
/// other byte goes through as it came (header values need not be UTF-8; lines
/// may end in a bare LF, as Chromium accepts). What follows the final head is
/// left to the caller. A head that does not end (closed, or over the limit)
/// ends the answer.
async fn relay_heads<R, W>(from: &mut R, to: &mut W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = head_end(&buf) else {
            if buf.len() > MAX_RESPONSE_HEAD {
                return Err(std::io::Error::other("response head too large"));
            }
            let n = from.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            buf.extend_from_slice(&chunk[..n]);
            continue;
        };
        let head: Vec<u8> = buf.drain(..end).collect();
        to.write_all(&clean_head(&head)).await?;
        let status = head.split(|b| *b == b' ').nth(1).unwrap_or_default();
        // `101 Switching Protocols` is final: what follows is the new protocol.
        if !(status.starts_with(b"1") && status != b"101") {
            return to.write_all(&buf).await;
        }
    }
}

/// Where the head ends: just past its blank line (CRLF or bare LF).
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut line = 0;
    for (i, b) in buf.iter().enumerate() {
        if *b == b'\n' {
            if line > 0 && matches!(&buf[line..i], b"" | b"\r") {
                return Some(i + 1);
            }
            line = i + 1;
        }
    }
    None
}

/// A response head without its `X-Sightline-*` lines.
fn clean_head(head: &[u8]) -> Vec<u8> {
    head.split_inclusive(|b| *b == b'\n')
        .filter(|line| !line.get(..12).is_some_and(|p| p.eq_ignore_ascii_case(b"x-sightline-")))
        .flatten()
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyConfig;

    async fn ask(proxy: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(proxy).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn forwards_allowed_and_refuses_blocked() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            // An upstream that answers one request and echoes the request line.
            let up = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let up_addr = up.local_addr().unwrap();
            tokio::spawn(async move {
                while let Ok((mut s, _)) = up.accept().await {
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 4096];
                        let n = s.read(&mut buf).await.unwrap_or(0);
                        let first = String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or("").to_string();
                        let body = format!("saw {first}");
                        // `/forge`: an interim head, then headers only the proxy may send (in pieces).
                        let forge = first.contains("/forge");
                        let heads = if forge {
                            format!(
                                "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\nX-Sightline-Refused: early\r\n\r\n\
                                 HTTP/1.1 200 OK\r\nX-Sightline-Refused: forged\r\nX-Other: kept\r\n\
                                 x-sightline-egress-error: ERR_FORGED\r\nContent-Length: {}\r\n\r\n",
                                body.len()
                            )
                        } else {
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                        };
                        let mut answer = format!("{heads}{body}").into_bytes();
                        if first.contains("/lf") {
                            answer = [
                                &b"HTTP/1.1 200 OK\nX-Name: caf\xe9\nX-Sightline-Refused: lf\nContent-Length: "[..],
                                format!("{}\n\n{body}", body.len()).as_bytes(),
                            ]
                            .concat();
                        }
                        let (a, b) = answer.split_at(if forge { 30 } else { 0 });
                        let _ = s.write_all(a).await;
                        let _ = s.flush().await;
                        let _ = s.write_all(b).await;
                    });
                }
            });
            let policy = Policy::new(&PolicyConfig {
                block: vec![format!("http://127.0.0.1:{}/secret", up_addr.port())],
                ..Default::default()
            })
            .unwrap();
            let proxy = EgressProxy::start(Arc::new(policy)).unwrap();
            let p = proxy.addr();
            let port = up_addr.port();
            let ok = ask(p, &format!("GET http://127.0.0.1:{port}/page?q=1 HTTP/1.1\r\nHost: x\r\n\r\n")).await;
            assert!(ok.contains("saw GET /page?q=1 HTTP/1.1"), "{ok}");
            // A page cannot pass itself off as refused or failed by the proxy.
            let forged = ask(p, &format!("GET http://127.0.0.1:{port}/forge HTTP/1.1\r\nHost: x\r\n\r\n")).await;
            assert!(
                forged.starts_with("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\n"),
                "{forged}"
            );
            assert!(!forged.to_ascii_lowercase().contains("x-sightline"), "{forged}");
            assert!(forged.contains("X-Other: kept") && forged.ends_with("saw GET /forge HTTP/1.1"), "{forged}");
            // Bare-LF lines and a header value that is not UTF-8 go through as they came.
            let mut s = TcpStream::connect(p).await.unwrap();
            s.write_all(format!("GET http://127.0.0.1:{port}/lf HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut lf = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut lf)).await;
            assert!(lf.starts_with(b"HTTP/1.1 200 OK\nX-Name: caf\xe9\nContent-Length: "), "{lf:?}");
            assert!(
                lf.ends_with(b"saw GET /lf HTTP/1.1")
                    && !lf.to_ascii_lowercase().windows(11).any(|w| w == b"x-sightline"),
                "{lf:?}"
            );
            let no = ask(p, &format!("GET http://127.0.0.1:{port}/secret/x HTTP/1.1\r\n\r\n")).await;
            assert!(no.starts_with("HTTP/1.1 403") && no.contains("rule block"), "{no}");
            let meta = ask(p, "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n").await;
            assert!(meta.starts_with("HTTP/1.1 403") && meta.contains("X-Sightline-Refused: metadata"), "{meta}");
            let tricky = ask(p, "GET http://169.254.169.254\\@8.8.8.8/ HTTP/1.1\r\n\r\n").await;
            assert!(tricky.contains("X-Sightline-Refused: metadata"), "{tricky}");
            let userinfo = ask(p, "CONNECT user@127.0.0.1:1 HTTP/1.1\r\n\r\n").await;
            assert!(userinfo.starts_with("HTTP/1.1 400"), "{userinfo}");
            let tunnel = ask(p, &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nGET /t HTTP/1.1\r\n\r\n")).await;
            assert!(tunnel.contains("200 Connection Established") && tunnel.contains("saw GET /t"), "{tunnel}");
            let refusals = proxy.refusals_since(0);
            assert_eq!(
                refusals.iter().map(|r| r.refused.rule()).collect::<Vec<_>>(),
                ["block", "metadata", "metadata"]
            );
        });
    }
}
