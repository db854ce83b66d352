//! `sightline mcp`: the tool API as an MCP server on stdio (named driver
//! sessions over one [`sightline_api::Api`], session handles on a hub of
//! their own), or, with `--config HOST`, the entry an MCP host needs to start
//! this very binary (or to reach a running `sightline serve` with `--http`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::Value;
use sightline_server::{BrowserSource, HubConfig};

use crate::cli::{BrowserOpts, ConfigHost, FileOpts, McpOpts, StorageOpts, ToolsOpts};
use crate::launch;

/// The environment variable a `--http` entry's bearer token comes from (and
/// the one Codex reads it from at run time).
pub const TOKEN_VAR: &str = "SIGHTLINE_TOKEN";

/// The name the entry gives the server in the host.
const SERVER_NAME: &str = "sightline";

pub async fn run(o: &McpOpts) -> Result<u8> {
    if let Some(host) = o.config {
        let entry = match &o.http {
            Some(url) => {
                if !server_args(&o.tools)?.is_empty() {
                    bail!("--http points at a running `sightline serve`: browser, file and storage options belong to its command line");
                }
                Entry::Http {
                    url: mcp_url(url)?,
                    token: std::env::var(TOKEN_VAR).ok().filter(|t| !t.trim().is_empty()),
                }
            }
            None => {
                let mut args = server_args(&o.tools)?;
                if let Some(live) = o.live {
                    args.extend(["--live".to_string(), live.to_string()]);
                }
                Entry::Stdio { command: current_exe()?, args }
            }
        };
        print!("{}", snippet(host, &entry));
        eprintln!("sightline: {}", where_it_goes(host, &entry));
        return Ok(0);
    }
    let egress = launch::egress(&o.tools.browser)?;
    let api = std::sync::Arc::new(api(&o.tools, egress.clone())?);
    let handles = handles_config(&o.tools, egress)?;
    if let Some(listen) = o.live {
        launch::live_view(&api, listen, "mcp").await?;
    }
    Box::pin(sightline_server::serve_stdio(api, handles)).await?;
    Ok(0)
}

/// The Api of `bind_browser`'s named driver sessions, as `rpc`'s, behind the same egress policy.
fn api(o: &ToolsOpts, egress: std::sync::Arc<sightline_api::Egress>) -> Result<sightline_api::Api> {
    let opts = sightline_api::ApiOptions {
        browser: launch::browser_options(&o.browser, o.storage.profile.clone(), &egress),
        tab: launch::tab_options(&o.browser)?,
        storage_state: crate::storage_cmd::storage_state(o.storage.storage_state.as_deref())?,
    };
    Ok(sightline_api::Api::new(opts)
        .with_egress(egress)
        .with_files(crate::file_access::file_access(&o.files, false, false)?))
}

/// The hub session handles (`session_open`) live on: contexts of one
/// browser launched (or attached) as the command line says, opened on the
/// first `session_open`. No idle timeout: a handle lives until
/// `session_close` or the end of the process. `--profile` and
/// `--storage-state` are `bind_browser`'s; `session_open` takes `storage_state`.
fn handles_config(o: &ToolsOpts, egress: std::sync::Arc<sightline_api::Egress>) -> Result<HubConfig> {
    let source = match &o.browser.connect {
        Some(url) => BrowserSource::Connect(url.clone()),
        None => BrowserSource::Launch(launch::browser_options(&o.browser, None, &egress).launch),
    };
    Ok(HubConfig {
        source,
        max_sessions: 32,
        idle_timeout: Duration::from_secs(365 * 24 * 3600),
        queue_limit: 8,
        tab: launch::tab_options(&o.browser)?,
        egress: Some(egress),
        files: crate::file_access::file_access(&o.files, false, true)?,
        start_limit: sightline_server::DEFAULT_START_LIMIT,
        warm: 0,
        warm_auto: None,
    })
}

/// What the host runs or reaches.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// This binary, `mcp` and the options given, on stdio.
    Stdio { command: String, args: Vec<String> },
    /// A running `sightline serve`'s Streamable HTTP endpoint.
    Http { url: String, token: Option<String> },
}

fn current_exe() -> Result<String> {
    let exe = std::env::current_exe().context("finding this binary's path")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.into_os_string().into_string().map_err(|p| anyhow::anyhow!("this binary's path is not UTF-8: {p:?}"))
}

/// `--http`'s URL: absolute http(s).
fn mcp_url(url: &str) -> Result<String> {
    let u = sightline_policy::Url::parse(url).with_context(|| format!("--http {url:?} is not an absolute URL"))?;
    if !matches!(u.scheme(), "http" | "https") {
        bail!("--http {url:?}: expected the http:// or https:// URL of a running `sightline serve`'s /mcp");
    }
    if u.path() != "/mcp" {
        eprintln!("sightline: note: `sightline serve` answers MCP at /mcp; {url} has path {}", u.path());
    }
    Ok(u.to_string())
}

/// The options given, as the host passes them back to `sightline mcp`
/// (paths made absolute: the host starts it in a directory of its own).
/// Every field is named, so a new option cannot be left out unnoticed.
fn server_args(o: &ToolsOpts) -> Result<Vec<String>> {
    let ToolsOpts { storage, files, browser } = o;
    let StorageOpts { storage_state, profile } = storage;
    let FileOpts { files, downloads, download_limit } = files;
    let BrowserOpts { viewport, connect, chrome, settle_ms, allow, block, block_private, no_chrome_sandbox } = browser;
    let mut args = Vec::new();
    let mut value = |flag: &str, v: Option<String>| {
        if let Some(v) = v {
            args.push(flag.to_string());
            args.push(v);
        }
    };
    value("--viewport", viewport.clone());
    value("--connect", connect.clone());
    value("--chrome", chrome.as_deref().map(absolute).transpose()?);
    value("--settle-ms", settle_ms.clone());
    value("--files", files.as_deref().map(absolute).transpose()?);
    value("--downloads", downloads.as_deref().map(absolute).transpose()?);
    value("--download-limit", download_limit.clone());
    value("--storage-state", storage_state.as_deref().map(absolute).transpose()?);
    value("--profile", profile.as_deref().map(absolute).transpose()?);
    for a in allow {
        value("--allow", Some(a.clone()));
    }
    for b in block {
        value("--block", Some(b.clone()));
    }
    if *block_private {
        args.push("--block-private".into());
    }
    if *no_chrome_sandbox {
        args.push("--no-chrome-sandbox".into());
    }
    Ok(args)
}

fn absolute(p: &Path) -> Result<String> {
    let abs: PathBuf = std::path::absolute(p).with_context(|| format!("making {} absolute", p.display()))?;
    abs.into_os_string().into_string().map_err(|p| anyhow::anyhow!("{p:?} is not UTF-8"))
}

/// The entry for `host`, exactly as it goes into the host's file (or, for
/// Claude Code, the command line that adds it), newline-terminated.
pub fn snippet(host: ConfigHost, entry: &Entry) -> String {
    let header = |token: &Option<String>| token.as_ref().map(|t| format!("Bearer {t}"));
    match (host, entry) {
        (ConfigHost::ClaudeCode, Entry::Stdio { command, args }) => {
            let mut words = vec!["claude", "mcp", "add", SERVER_NAME, "--", command, "mcp"];
            words.extend(args.iter().map(String::as_str));
            format!("{}\n", words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" "))
        }
        (ConfigHost::ClaudeCode, Entry::Http { url, token }) => {
            let mut words = vec!["claude".to_string(), "mcp".into(), "add".into(), "--transport".into(), "http".into()];
            words.extend([SERVER_NAME.to_string(), url.clone()]);
            if let Some(h) = header(token) {
                words.extend(["--header".to_string(), format!("Authorization: {h}")]);
            }
            format!("{}\n", words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" "))
        }
        (ConfigHost::Codex, Entry::Stdio { command, args }) => {
            let mut all = vec!["mcp".to_string()];
            all.extend(args.iter().cloned());
            let args = all.iter().map(|a| toml_string(a)).collect::<Vec<_>>().join(", ");
            format!("[mcp_servers.{SERVER_NAME}]\ncommand = {}\nargs = [{args}]\n", toml_string(command))
        }
        (ConfigHost::Codex, Entry::Http { url, token }) => {
            // Codex refuses a token written in its config: it reads it from the variable.
            let bearer = match token {
                Some(_) => format!("bearer_token_env_var = {}\n", toml_string(TOKEN_VAR)),
                None => String::new(),
            };
            format!("[mcp_servers.{SERVER_NAME}]\nurl = {}\n{bearer}", toml_string(url))
        }
        (ConfigHost::ClaudeDesktop | ConfigHost::Cursor | ConfigHost::Vscode | ConfigHost::Json, entry) => {
            let key = if host == ConfigHost::Vscode { "servers" } else { "mcpServers" };
            let doc = J::O(vec![(key.into(), J::O(vec![(SERVER_NAME.into(), json_server(host, entry))]))]);
            format!("{}\n", doc.pretty(0))
        }
    }
}

/// JSON with its keys in the order written (a host's file reads `command` before `args`).
enum J {
    S(String),
    A(Vec<J>),
    O(Vec<(String, J)>),
}

impl J {
    fn s(s: impl Into<String>) -> J {
        J::S(s.into())
    }

    fn pretty(&self, indent: usize) -> String {
        let pad = |n: usize| "  ".repeat(n);
        match self {
            J::S(s) => Value::String(s.clone()).to_string(),
            J::A(items) if items.is_empty() => "[]".into(),
            J::A(items) => {
                let inner: Vec<String> =
                    items.iter().map(|j| format!("{}{}", pad(indent + 1), j.pretty(indent + 1))).collect();
                format!("[\n{}\n{}]", inner.join(",\n"), pad(indent))
            }
            J::O(pairs) if pairs.is_empty() => "{}".into(),
            J::O(pairs) => {
                let inner: Vec<String> = pairs
                    .iter()
                    .map(|(k, j)| format!("{}{}: {}", pad(indent + 1), Value::String(k.clone()), j.pretty(indent + 1)))
                    .collect();
                format!("{{\n{}\n{}}}", inner.join(",\n"), pad(indent))
            }
        }
    }
}

/// One server's object in a JSON host file.
fn json_server(host: ConfigHost, entry: &Entry) -> J {
    let bearer = |t: &str| format!("Bearer {t}");
    let mut o: Vec<(String, J)> = Vec::new();
    match (host, entry) {
        (_, Entry::Stdio { command, args }) => {
            if matches!(host, ConfigHost::Vscode | ConfigHost::Json) {
                o.push(("type".into(), J::s("stdio")));
            }
            o.push(("command".into(), J::s(command.as_str())));
            o.push(("args".into(), J::A(stdio_args(args).into_iter().map(J::S).collect())));
        }
        // Claude Desktop's file takes stdio servers only: the mcp-remote bridge speaks Streamable HTTP for it.
        (ConfigHost::ClaudeDesktop, Entry::Http { url, token }) => {
            let mut args = vec![J::s("-y"), J::s("mcp-remote"), J::s(url.as_str())];
            if url.starts_with("http://") {
                args.push(J::s("--allow-http"));
            }
            if token.is_some() {
                args.extend([J::s("--header"), J::s("Authorization:${SIGHTLINE_AUTH}")]);
            }
            o.push(("command".into(), J::s("npx")));
            o.push(("args".into(), J::A(args)));
            if let Some(t) = token {
                o.push(("env".into(), J::O(vec![("SIGHTLINE_AUTH".into(), J::S(bearer(t)))])));
            }
        }
        (_, Entry::Http { url, token }) => {
            if host != ConfigHost::Cursor {
                o.push(("type".into(), J::s("http")));
            }
            o.push(("url".into(), J::s(url.as_str())));
            if let Some(t) = token {
                o.push(("headers".into(), J::O(vec![("Authorization".into(), J::S(bearer(t)))])));
            }
        }
    }
    J::O(o)
}

fn stdio_args(args: &[String]) -> Vec<String> {
    std::iter::once("mcp".to_string()).chain(args.iter().cloned()).collect()
}

/// Where the snippet goes, for stderr.
fn where_it_goes(host: ConfigHost, entry: &Entry) -> String {
    let token_note = match entry {
        Entry::Http { token: Some(_), .. } if host != ConfigHost::Codex => {
            " It holds your token: keep it private."
        }
        Entry::Http { token: Some(_), .. } => " Codex reads the token from $SIGHTLINE_TOKEN where it runs.",
        Entry::Http { token: None, .. } => {
            " No $SIGHTLINE_TOKEN was set, so it sends no Authorization header (right for a `sightline serve` without --token-file)."
        }
        Entry::Stdio { .. } => "",
    };
    let place = match host {
        ConfigHost::ClaudeCode => "run this command (add `--scope project` to share it through .mcp.json).",
        ConfigHost::ClaudeDesktop => {
            "merge this into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Linux: ~/.config/Claude/), then restart Claude Desktop."
        }
        ConfigHost::Cursor => "merge this into .cursor/mcp.json (this project) or ~/.cursor/mcp.json (every project).",
        ConfigHost::Vscode => "merge this into .vscode/mcp.json.",
        ConfigHost::Codex => "add this table to ~/.codex/config.toml.",
        ConfigHost::Json => "merge this into your MCP host's mcpServers.",
    };
    format!("{place}{token_note}")
}

/// A word for a POSIX shell: as is when it is plain, else in single quotes.
fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_strings_are_quoted_for_their_language() {
        assert_eq!(shell_quote("/usr/bin/sightline"), "/usr/bin/sightline");
        assert_eq!(shell_quote("/opt/my tools/sightline"), "'/opt/my tools/sightline'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("Authorization: Bearer x"), "'Authorization: Bearer x'");
        assert_eq!(toml_string(r#"C:\x "y""#), r#""C:\\x \"y\"""#);
        assert_eq!(toml_string("a\u{1}"), "\"a\\u0001\"");
    }
}
