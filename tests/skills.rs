//! `sightline skills` and `sightline mcp --config`, run as a user runs them: the
//! skills hold every row of the tables this binary runs on, and each host's entry
//! starts (or reaches) a server that answers.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use common::*;
use serde_json::{json, Value};

fn sightline(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sightline"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR")).env_remove("SIGHTLINE_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("sightline")
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

const SKILLS: [&str; 4] = ["core", "element-index", "semantic", "mcp"];

#[test]
fn skills_list_and_print_each_as_a_skill_md() {
    let list = stdout(&sightline(&["skills"], &[]));
    for name in SKILLS {
        assert!(list.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} not listed:\n{list}");
    }
    for name in SKILLS {
        let text = stdout(&sightline(&["skills", name], &[]));
        let front = format!("---\nname: sightline-{name}\ndescription: ");
        assert!(text.starts_with(&front), "{name}:\n{}", &text[..200.min(text.len())]);
        assert!(text.contains("\n---\n\n# "), "{name}: front matter, then a title");
    }
    let refused = sightline(&["skills", "nope"], &[]);
    assert_eq!(refused.status.code(), Some(1));
    let e = String::from_utf8_lossy(&refused.stderr);
    assert!(e.contains("no skill \"nope\"") && SKILLS.iter().all(|s| e.contains(s)), "{e}");
}

/// Generated, so nothing can drift: every tool row (whatever rows this build has),
/// its description, every action, every error code, every lifetime rule, every handle tool.
#[test]
fn skills_hold_every_row_of_the_tables() {
    let core = stdout(&sightline(&["skills", "core"], &[]));
    for t in sightline_api::TOOLS {
        assert!(core.contains(&format!("### `{}`", t.name)), "core lacks the tool {}", t.name);
        assert!(core.contains(t.description), "core lacks {}'s description", t.name);
        let schema = (t.schema)();
        for field in schema["properties"].as_object().unwrap().keys() {
            assert!(core.contains(&format!("- `{field}` (")), "core lacks {}'s field {field}", t.name);
        }
    }
    for c in sightline_api::ToolCode::ALL {
        assert!(core.contains(&format!("- `{}`: ", c.as_str())), "core lacks the code {c}");
    }
    let ei = stdout(&sightline(&["skills", "element-index"], &[]));
    for a in sightline_api::ACTION_TABLE {
        assert!(ei.contains(&format!("### `{}`", a.name)), "element-index lacks {}", a.name);
        assert!(
            ei.contains(a.summary) && ei.contains(a.example),
            "element-index lacks {}'s summary or example",
            a.name
        );
        for f in a.fields {
            assert!(ei.contains(&format!("- `{}` (", f.name)), "element-index lacks {}.{}", a.name, f.name);
        }
    }
    for code in ["ACTION_VALIDATION_FAILED", "INVALID_ELEMENT_INDEX", "ELEMENT_NOT_INTERACTIVE", "NAVIGATION_FAILED"] {
        assert!(ei.contains(&format!("- `{code}`: ")), "element-index lacks {code}");
    }
    let sem = stdout(&sightline(&["skills", "semantic"], &[]));
    for rule in
        ["newer_snapshot", "navigation", "target_generation", "session_ended", "continuation_used", "tab_closed"]
    {
        assert!(sem.contains(&format!("- `{rule}`: ")), "semantic lacks the rule {rule}");
    }
    for t in sightline_api::TOOLS.iter().filter(|t| (t.schema)()["properties"].get("ref").is_some()) {
        assert!(sem.contains(&format!("- `{}`: ", t.name)), "semantic lacks the ref tool {}", t.name);
    }
    let mcp = stdout(&sightline(&["skills", "mcp"], &[]));
    for h in sightline_server::HANDLE_TOOLS {
        assert!(mcp.contains(&format!("### `{}`", h.name)) && mcp.contains(h.description), "mcp lacks {}", h.name);
    }
    for host in ["claude-code", "claude-desktop", "cursor", "vscode", "codex", "json"] {
        assert!(mcp.contains(&format!("- `{host}`: ")), "mcp lacks the host {host}");
    }
}

/// Every key of a real State Object is explained by the element-index skill.
#[test]
fn the_element_index_skill_explains_every_key_of_a_real_state_object() {
    world();
    let state: Value =
        serde_json::from_str(&stdout(&sightline(&["state", &url("/signin.html"), "--no-screenshot"], &[])))
            .expect("a State Object");
    let ei = stdout(&sightline(&["skills", "element-index"], &[]));
    for key in state.as_object().unwrap().keys() {
        assert!(ei.contains(&format!("- `{key}`: ")), "element-index does not explain {key}");
    }
    let element = state["element_index"]["1"].as_object().unwrap();
    for key in element.keys().chain(element["attributes"].as_object().unwrap().keys()) {
        assert!(ei.contains(&format!("\"{key}\"")), "element-index's example lacks the descriptor's {key}");
    }
}

fn exe() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_sightline")).unwrap().to_str().unwrap().to_string()
}

/// The stdio entry of each host: this binary by its absolute path, `mcp` and the options given (paths absolute).
#[test]
fn each_hosts_stdio_entry_runs_this_binary_with_the_options_given() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let fixtures = fixtures.to_str().unwrap();
    let args = ["mcp", "--viewport", "800x600", "--files", fixtures, "--block-private"];
    let given = ["--block-private", "--viewport", "800x600", "--files", "tests/fixtures"];
    let entry = |host: &str| {
        let mut a = vec!["mcp", "--config", host];
        a.extend(given);
        stdout(&sightline(&a, &[]))
    };
    let cc = entry("claude-code");
    assert_eq!(cc, format!("claude mcp add sightline -- {} {}\n", exe(), args.join(" ")));
    for (host, key, typed) in [
        ("claude-desktop", "mcpServers", false),
        ("cursor", "mcpServers", false),
        ("vscode", "servers", true),
        ("json", "mcpServers", true),
    ] {
        let v: Value = serde_json::from_str(&entry(host)).unwrap_or_else(|e| panic!("{host}: {e}"));
        let s = &v[key]["sightline"];
        assert_eq!(s["command"], exe(), "{host}: {v}");
        assert_eq!(s["args"], json!(args), "{host}: {v}");
        assert_eq!(s["type"] == "stdio", typed, "{host}: {v}");
        let text = entry(host);
        assert!(text.find("\"command\"") < text.find("\"args\""), "{host}: command before args\n{text}");
    }
    let codex = entry("codex");
    let quoted: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    assert_eq!(codex, format!("[mcp_servers.sightline]\ncommand = \"{}\"\nargs = [{}]\n", exe(), quoted.join(", ")),);
}

/// The `json` entry, run as a host would run it, answers MCP 2026-07-28's `server/discover`.
#[test]
fn the_printed_stdio_entry_starts_a_server_that_answers() {
    let v: Value = serde_json::from_str(&stdout(&sightline(&["mcp", "--config", "json"], &[]))).unwrap();
    let s = &v["mcpServers"]["sightline"];
    let args: Vec<&str> = s["args"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let mut child = Command::new(s["command"].as_str().unwrap())
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let discover = json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    } } });
    writeln!(stdin, "{discover}").unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert!(answer["result"]["supportedVersions"].as_array().unwrap().contains(&json!("2026-07-28")), "{answer}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `--http URL`: each host's entry for a running `sightline serve`, with the token of
/// `$SIGHTLINE_TOKEN` (Codex names the variable instead: it refuses a token written in its file).
#[test]
fn each_hosts_http_entry_carries_the_token_header() {
    let url = "http://127.0.0.1:8931/mcp";
    let token = "tok-0123456789abcdef";
    let with =
        |host: &str| stdout(&sightline(&["mcp", "--config", host, "--http", url], &[("SIGHTLINE_TOKEN", token)]));
    let without = |host: &str| stdout(&sightline(&["mcp", "--config", host, "--http", url], &[]));
    assert_eq!(
        with("claude-code"),
        format!("claude mcp add --transport http sightline {url} --header 'Authorization: Bearer {token}'\n")
    );
    assert_eq!(without("claude-code"), format!("claude mcp add --transport http sightline {url}\n"));
    assert_eq!(
        with("codex"),
        format!("[mcp_servers.sightline]\nurl = \"{url}\"\nbearer_token_env_var = \"SIGHTLINE_TOKEN\"\n")
    );
    assert!(!with("codex").contains(token), "Codex reads the token from the variable");
    for (host, key) in [("cursor", "mcpServers"), ("vscode", "servers"), ("json", "mcpServers")] {
        let v: Value = serde_json::from_str(&with(host)).unwrap();
        let s = &v[key]["sightline"];
        assert_eq!(s["url"], url, "{host}: {v}");
        assert_eq!(s["headers"]["Authorization"], format!("Bearer {token}"), "{host}: {v}");
        assert_eq!(s["type"] == "http", host != "cursor", "{host}: {v}");
        let v: Value = serde_json::from_str(&without(host)).unwrap();
        assert!(v[key]["sightline"].get("headers").is_none(), "{host}: {v}");
    }
    // Claude Desktop takes stdio servers only: the mcp-remote bridge, the header from its env.
    let v: Value = serde_json::from_str(&with("claude-desktop")).unwrap();
    let s = &v["mcpServers"]["sightline"];
    assert_eq!(s["command"], "npx");
    assert_eq!(
        s["args"],
        json!(["-y", "mcp-remote", url, "--allow-http", "--header", "Authorization:${SIGHTLINE_AUTH}"]),
        "{v}"
    );
    assert_eq!(s["env"]["SIGHTLINE_AUTH"], format!("Bearer {token}"));
}

/// The `json` HTTP entry reaches a real `sightline serve --token-file`: its URL and header are
/// accepted, and without the header the server refuses.
#[test]
fn the_printed_http_entry_reaches_a_running_serve() {
    world();
    let token = "carol-0123456789abcdef";
    let file = token_file("skills", &format!("carol {token}\n"), 0o600);
    let mut srv = ServeProc::with_tokens(&file, &[]);
    let printed =
        stdout(&sightline(&["mcp", "--config", "json", "--http", &srv.url("/mcp")], &[("SIGHTLINE_TOKEN", token)]));
    let v: Value = serde_json::from_str(&printed).unwrap();
    let s = &v["mcpServers"]["sightline"];
    let discover = json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    } } })
    .to_string();
    let auth = s["headers"]["Authorization"].as_str().unwrap();
    let routing = [
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let mut with_auth = routing.to_vec();
    with_auth.push(("authorization", auth));
    let (status, _, _) = http("POST", s["url"].as_str().unwrap(), Some(&discover), &with_auth);
    assert_eq!(status, 200, "the printed URL and header are accepted");
    let (status, _, _) = http("POST", s["url"].as_str().unwrap(), Some(&discover), &routing);
    assert_eq!(status, 401, "and the header is what lets it in");
    assert_eq!(srv.terminate(20).and_then(|s| s.code()), Some(0));
}

#[test]
fn config_refusals_say_what_is_wrong() {
    let o = sightline(&["mcp", "--http", "http://127.0.0.1:8931/mcp"], &[]);
    assert_eq!(o.status.code(), Some(1), "--http without --config");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--config"));
    let o = sightline(&["mcp", "--config", "cursor", "--http", "http://127.0.0.1:8931/mcp", "--block-private"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("belong to its command line"));
    let o = sightline(&["mcp", "--config", "cursor", "--http", "ftp://127.0.0.1/mcp"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("http:// or https://"));
    let o = sightline(&["mcp", "--config", "emacs"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("claude-code") && e.contains("codex"), "{e}");
}
