//! Command-line parsing in two stages: raw words become plain data (`Args`),
//! then `Args` is checked into the options the commands take.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

pub const USAGE: &str = "\
sightline — a real browser for AI agents, over the element-index protocol

USAGE:
    sightline env URL [OPTIONS]      JSON-lines loop: first State Object, then one per action read on stdin
    sightline state URL [OPTIONS]    print one State Object [--pretty] [--out FILE]
                                     [--explain: list covered elements and what covers them on stderr]
                                     [--record FILE: save the raw capture, the page model's input, as JSON]
    sightline demo [--out DIR]       drive a built-in local site through a scripted run
    sightline run URL --task \"…\" --model PROVIDER:MODEL [--max-steps N] [--vision] [--trace DIR]
                  [--base-url URL] [--no-tools] [--quiet | --json]
                                     an agent on a real LLM API (openai:MODEL, anthropic:MODEL); key from
                                     $SIGHTLINE_API_KEY, $OPENAI_API_KEY or $ANTHROPIC_API_KEY
    sightline trace view DIR [--out FILE.html]    one self-contained HTML page for a run's trace
    sightline trace replay DIR                    send a trace's actions again against a fresh browser
    sightline rpc [OPTIONS]          the tool API as JSON-RPC 2.0 over stdio (methods = tool names, plus list_tools)
    sightline mcp [OPTIONS]          the same tools as a Model Context Protocol server over stdio
    sightline serve [--listen 127.0.0.1:8931] [--token-file FILE] [--max-sessions N] [--idle-timeout 300s]
                    [--grid URL | --connect URL]
                                     HTTP API and MCP (Streamable HTTP at /mcp): many isolated sessions
    sightline marks URL --out marks.png [--json]
                                     Set-of-Marks: numbered boxes over the visible interactive elements
    sightline script FILE.js [--url URL] [--allow PREFIX]... [--allow-private] [--timeout S]
                     [--vision-url URL --vision-model NAME] [--describe]
                                     run agent JavaScript against a policy-gated `browser` global

OPTIONS:
    --viewport WIDTHxHEIGHT   viewport in CSS pixels (default 1280x720)
    --no-screenshot           leave the screenshot field empty (\"\")
    --mark-new                env: mark elements new since the previous state in page_content (*[12]button \"Save\")
    --connect URL             attach to a running browser (ws://… or wss://…/devtools/browser/…, or http://host:port)
    --chrome PATH             Chromium binary (else $SIGHTLINE_CHROME, then chromium on PATH)
    --settle-ms MS            the most one wait for a stable page may take (default 3000)
    --allow PREFIX            egress: only URLs under these prefixes (repeatable; scheme, host, port, path)
    --block PREFIX            egress: refuse URLs under these prefixes (repeatable; wins over --allow)
    --block-private           egress: refuse private, loopback, link-local, CGNAT, unique-local addresses
                              (script does this by default; --allow-private lifts it)
    --no-chrome-sandbox       run Chromium without its sandbox (always so when running as root)
    --storage-state FILE      env, state, rpc, mcp: start signed in, from cookies and localStorage saved in
                              Playwright's storageState JSON (by --save-storage-state, save_storage_state, Playwright)
    --save-storage-state FILE env, state: write the session's cookies and localStorage there at exit (mode 0600)
    --profile DIR             env, state, rpc, mcp: a persistent Chromium profile (kept; refused while another
                              Chromium holds it, and with --connect)
    --vision-url URL          OpenAI-compatible base URL (…/v1) for browser.ask/askMarks; key in $SIGHTLINE_VISION_API_KEY or $OPENAI_API_KEY
    --files DIR               env, rpc, mcp, serve, script: upload_file (script: browser.uploadMark) may choose files
                              inside DIR only (else uploads are off)
    --downloads DIR           env, rpc, mcp, serve, script: downloads land in DIR (serve: DIR/SESSION); default a temporary
                              directory per session, removed when it ends
    --download-limit SIZE     the largest download kept (bytes, or 512K, 100M, 2G; default 100M); larger is cancelled
    --log FILTER              diagnostics on stderr: a level (error, warn, info, debug, trace) or a RUST_LOG-style
                              filter (sightline_browser=debug,warn); wins over $RUST_LOG; default warn
    -h, --help                this text
    -V, --version             version
";

#[derive(Debug, Default)]
pub struct Args {
    pub command: String,
    pub positional: Vec<String>,
    pub viewport: Option<String>,
    pub no_screenshot: bool,
    pub mark_new: bool,
    pub connect: Option<String>,
    pub chrome: Option<PathBuf>,
    pub settle_ms: Option<String>,
    pub pretty: bool,
    pub explain: bool,
    pub record: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub help: bool,
    pub version: bool,
    /// `--log FILTER`: the tracing filter (every command takes it).
    pub log: Option<String>,
    // Set-of-Marks pack.
    pub json: bool,
    pub url: Option<String>,
    pub allow: Vec<String>,
    pub allow_private: bool,
    pub timeout: Option<String>,
    pub describe: bool,
    pub vision_url: Option<String>,
    pub vision_model: Option<String>,
    // Agent runner.
    pub task: Option<String>,
    pub model: Option<String>,
    pub max_steps: Option<String>,
    pub vision: bool,
    pub trace: Option<PathBuf>,
    pub base_url: Option<String>,
    pub quiet: bool,
    pub no_tools: bool,
    pub retry_base_ms: Option<String>,
    // Egress policy and browser hardening.
    pub block: Vec<String>,
    pub block_private: bool,
    pub no_chrome_sandbox: bool,
    // Server.
    pub listen: Option<String>,
    pub token_file: Option<PathBuf>,
    pub max_sessions: Option<String>,
    pub idle_timeout: Option<String>,
    pub grid: Option<String>,
    pub grid_wait: Option<String>,
    // Files: uploads from, downloads to.
    pub files: Option<PathBuf>,
    pub downloads: Option<PathBuf>,
    pub download_limit: Option<String>,
    // Signed-in sessions.
    pub storage_state: Option<PathBuf>,
    pub save_storage_state: Option<PathBuf>,
    pub profile: Option<PathBuf>,
}

/// Options of every command that drives a browser.
const BROWSER: &[&str] = &[
    "--viewport",
    "--connect",
    "--chrome",
    "--settle-ms",
    "--allow",
    "--block",
    "--block-private",
    "--no-chrome-sandbox",
];

/// Options every command takes (besides `-h`/`-V`).
pub const GLOBAL: &[&str] = &["--log"];

/// Appended to every command's `--help`.
pub const GLOBAL_HELP: &str = "
Global options:
    --log FILTER    diagnostics on stderr: a level (error, warn, info, debug, trace) or a
                    RUST_LOG-style filter such as sightline_browser=debug,warn; wins over
                    $RUST_LOG; default warn. stdout carries only the command's output.
";

/// One subcommand: the options it accepts (besides `-h`/`-V` and [`GLOBAL`]) and its `--help`.
pub struct CommandSpec {
    pub name: &'static str,
    /// Its own options.
    pub own: &'static [&'static str],
    /// Whether it also takes the browser options ([`BROWSER`]).
    pub browser: bool,
    pub help: &'static str,
}

/// Every subcommand. `sightline CMD --help` prints its `help`; an option a
/// command does not take is an error that names the commands that do.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "env",
        own: &["--no-screenshot", "--files", "--downloads", "--download-limit", "--storage-state", "--save-storage-state", "--profile", "--mark-new"],
        browser: true,
        help: "sightline env URL [OPTIONS]\n\nThe element-index protocol over JSON lines: the first State Object once URL is stable,\nthen one State Object per Action Object read on stdin. EOF or finish_task/fail_task ends it.\nFiles: --files DIR (upload_file chooses files inside DIR only), --downloads DIR (default: a temporary\ndirectory per session, removed at exit), --download-limit SIZE (default 100M; larger downloads are cancelled).\n\nSigned in: --storage-state FILE starts from saved cookies and localStorage (Playwright's storageState\nJSON), --save-storage-state FILE writes them at exit (mode 0600), --profile DIR keeps a Chromium profile.\n\nExamples:\n    printf '%s\\n' '{\"action\":\"click_element\",\"element_index\":3}' | sightline env https://example.com/ --no-screenshot\n    sightline env http://127.0.0.1:8000/ --viewport 1024x768 --block-private --allow http://127.0.0.1:8000/\n    sightline env http://127.0.0.1:8000/admin/ --save-storage-state signed-in.json   # sign in, then EOF\n    sightline env http://127.0.0.1:8000/admin/ --storage-state signed-in.json\n",
    },
    CommandSpec {
        name: "state",
        own: &[
            "--no-screenshot", "--pretty", "--out", "--explain", "--record", "--storage-state", "--save-storage-state",
            "--profile",
        ],
        browser: true,
        help: "sightline state URL [--pretty] [--out FILE] [--explain] [--record FILE] [OPTIONS]\n\nPrint one State Object.\n\nExamples:\n    sightline state https://example.com/ --pretty --no-screenshot\n    sightline state URL --explain           # covered elements and what covers them, on stderr\n    sightline state URL --record c.json     # the raw capture, the page model's input\n",
    },
    CommandSpec {
        name: "demo",
        own: &["--out"],
        browser: true,
        help: "sightline demo [--out DIR]\n\nDrive a built-in local site through a scripted run and print each step.\n\nExample:\n    sightline demo --out /tmp/sightline-demo\n",
    },
    CommandSpec {
        name: "run",
        own: &[
            "--no-screenshot", "--task", "--model", "--max-steps", "--vision", "--trace", "--base-url", "--no-tools",
            "--quiet", "--json", "--retry-base-ms",
        ],
        browser: true,
        help: "sightline run URL --task \"…\" --model PROVIDER:MODEL [--max-steps N] [--vision] [--trace DIR]\n              [--base-url URL] [--no-tools] [--quiet | --json]\n\nAn agent on a real LLM API (openai:MODEL, anthropic:MODEL); key from $SIGHTLINE_API_KEY,\n$OPENAI_API_KEY or $ANTHROPIC_API_KEY.\n\nExample:\n    sightline run https://example.com/ --task \"Find the contact page\" --model openai:gpt-4o --trace /tmp/run1\n",
    },
    CommandSpec {
        name: "trace",
        own: &["--out"],
        browser: true,
        help: "sightline trace view DIR [--out FILE.html]\nsightline trace replay DIR\n\nView a run's trace as one HTML page, or send its actions again against a fresh browser.\n\nExample:\n    sightline trace view /tmp/run1 --out run1.html\n",
    },
    CommandSpec {
        name: "rpc",
        own: &["--files", "--downloads", "--download-limit", "--storage-state", "--profile"],
        browser: true,
        help: "sightline rpc [OPTIONS]\n\nThe tool API as JSON-RPC 2.0 over stdio; methods are tool names, plus list_tools.\nFiles: --files DIR (upload_file chooses files inside DIR only), --downloads DIR (default: a temporary\ndirectory per session, removed at exit), --download-limit SIZE (default 100M; larger downloads are cancelled).\n\nExample:\n    echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_tools\"}' | sightline rpc\n",
    },
    CommandSpec {
        name: "mcp",
        own: &["--files", "--downloads", "--download-limit", "--storage-state", "--profile"],
        browser: true,
        help: "sightline mcp [OPTIONS]\n\nThe same tools as a Model Context Protocol server over stdio.\nFiles: --files DIR (upload_file chooses files inside DIR only), --downloads DIR (default: a temporary\ndirectory per session, removed at exit), --download-limit SIZE (default 100M; larger downloads are cancelled).\n\nExample (an MCP client's server entry):\n    {\"command\": \"sightline\", \"args\": [\"mcp\", \"--block-private\"]}\n",
    },
    CommandSpec {
        name: "serve",
        own: &[
            "--listen", "--token-file", "--max-sessions", "--idle-timeout", "--grid", "--grid-wait", "--files",
            "--downloads", "--download-limit",
        ],
        browser: true,
        help: "sightline serve [--listen 127.0.0.1:8931] [--token-file FILE] [--max-sessions N] [--idle-timeout 300s]\n                [--grid URL | --connect URL] [OPTIONS]\n\nHTTP API and MCP (Streamable HTTP at /mcp) for many isolated sessions. A non-loopback\n--listen needs --token-file.\n\n--token-file FILE holds one principal per line, `name token` or a bare token (named token-N),\ntokens of 16 characters or more; FILE must be readable by its owner only (chmod 600).\nEach principal sees and drives only the sessions it created.\n--grid URL: each session is a browser from Selenium Grid 4. --grid-wait 30s: how long a new session\nwaits for a free Grid slot; then 503 grid_full with Retry-After (a browser the Grid hands out later,\nor one whose client hung up, is deleted at once).\nFiles: --files DIR (upload_file chooses files inside DIR only), --downloads DIR (default: a temporary\ndirectory per session, removed at exit), --download-limit SIZE (default 100M; larger downloads are cancelled).\n\nExamples:\n    sightline serve\n    sightline serve --listen 0.0.0.0:8931 --token-file ~/.config/sightline/tokens\n    sightline serve --grid http://127.0.0.1:4444 --max-sessions 10\n",
    },
    CommandSpec {
        name: "marks",
        own: &["--out", "--json"],
        browser: true,
        help: "sightline marks URL --out marks.png [--json]\n\nSet-of-Marks: numbered boxes over the visible interactive elements.\n\nExample:\n    sightline marks https://example.com/ --out marks.png --json\n",
    },
    CommandSpec {
        name: "script",
        own: &[
            "--url", "--allow-private", "--timeout", "--describe", "--vision-url", "--vision-model", "--files",
            "--downloads", "--download-limit",
        ],
        browser: true,
        help: "sightline script FILE.js [--url URL] [--allow PREFIX]... [--allow-private] [--timeout S]\n                 [--files DIR] [--downloads DIR] [--download-limit SIZE]\n                 [--vision-url URL --vision-model NAME] [--describe]\n\nRun agent JavaScript against a policy-gated `browser` global (private addresses refused by default).\nFiles: --files DIR (browser.uploadMark(id, names) chooses files inside DIR only; without it uploads\nare refused), --downloads DIR (default: a temporary directory, removed at exit), --download-limit SIZE\n(default 100M; larger downloads are cancelled). browser.downloads() lists them; a summary goes to stderr.\n\nExamples:\n    sightline script task.js --url https://example.com/ --allow https://example.com/\n    sightline script upload.js --url http://127.0.0.1:8000/form --allow-private --files ./to-send --downloads ./got\n    sightline script --describe\n",
    },
];

/// The spec of a subcommand.
pub fn command(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Every option `a` was given must be one of its command's.
fn check_options(command: &str, seen: &[String]) -> Result<()> {
    let Some(spec) = self::command(command) else { return Ok(()) };
    for flag in seen {
        if matches!(flag.as_str(), "-h" | "--help" | "-V" | "--version") || GLOBAL.contains(&flag.as_str()) {
            continue;
        }
        let ok = spec.own.contains(&flag.as_str()) || (spec.browser && BROWSER.contains(&flag.as_str()));
        if !ok {
            let takers: Vec<&str> = COMMANDS
                .iter()
                .filter(|c| c.own.contains(&flag.as_str()) || (c.browser && BROWSER.contains(&flag.as_str())))
                .map(|c| c.name)
                .collect();
            let hint =
                if takers.is_empty() { String::new() } else { format!(" (it is an option of: {})", takers.join(", ")) };
            bail!("{flag} is not an option of `sightline {command}`{hint}; see `sightline {command} --help`");
        }
    }
    Ok(())
}

pub fn parse(words: impl IntoIterator<Item = String>) -> Result<Args> {
    let mut a = Args::default();
    let mut seen: Vec<String> = Vec::new();
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        if w.starts_with('-') && w.len() > 1 {
            seen.push(w.clone());
        }
        let mut value = |name: &str| it.next().with_context(|| format!("{name} needs a value"));
        match w.as_str() {
            "-h" | "--help" => a.help = true,
            "-V" | "--version" => a.version = true,
            "--log" => a.log = Some(value("--log")?),
            "--viewport" => a.viewport = Some(value("--viewport")?),
            "--no-screenshot" => a.no_screenshot = true,
            "--mark-new" => a.mark_new = true,
            "--connect" => a.connect = Some(value("--connect")?),
            "--chrome" => a.chrome = Some(value("--chrome")?.into()),
            "--settle-ms" => a.settle_ms = Some(value("--settle-ms")?),
            "--pretty" => a.pretty = true,
            "--explain" => a.explain = true,
            "--record" => a.record = Some(value("--record")?.into()),
            "--out" => a.out = Some(value("--out")?.into()),
            "--json" => a.json = true,
            "--url" => a.url = Some(value("--url")?),
            "--allow" => a.allow.push(value("--allow")?),
            "--allow-private" => a.allow_private = true,
            "--timeout" => a.timeout = Some(value("--timeout")?),
            "--describe" => a.describe = true,
            "--vision-url" => a.vision_url = Some(value("--vision-url")?),
            "--vision-model" => a.vision_model = Some(value("--vision-model")?),
            "--task" => a.task = Some(value("--task")?),
            "--model" => a.model = Some(value("--model")?),
            "--max-steps" => a.max_steps = Some(value("--max-steps")?),
            "--vision" => a.vision = true,
            "--trace" => a.trace = Some(value("--trace")?.into()),
            "--base-url" => a.base_url = Some(value("--base-url")?),
            "--quiet" => a.quiet = true,
            "--no-tools" => a.no_tools = true,
            "--retry-base-ms" => a.retry_base_ms = Some(value("--retry-base-ms")?),
            "--block" => a.block.push(value("--block")?),
            "--block-private" => a.block_private = true,
            "--no-chrome-sandbox" => a.no_chrome_sandbox = true,
            "--listen" => a.listen = Some(value("--listen")?),
            "--token-file" => a.token_file = Some(value("--token-file")?.into()),
            "--max-sessions" => a.max_sessions = Some(value("--max-sessions")?),
            "--idle-timeout" => a.idle_timeout = Some(value("--idle-timeout")?),
            "--grid" => a.grid = Some(value("--grid")?),
            "--grid-wait" => a.grid_wait = Some(value("--grid-wait")?),
            "--files" => a.files = Some(value("--files")?.into()),
            "--downloads" => a.downloads = Some(value("--downloads")?.into()),
            "--download-limit" => a.download_limit = Some(value("--download-limit")?),
            "--storage-state" => a.storage_state = Some(value("--storage-state")?.into()),
            "--save-storage-state" => a.save_storage_state = Some(value("--save-storage-state")?.into()),
            "--profile" => a.profile = Some(value("--profile")?.into()),
            s if s.starts_with('-') && s.len() > 1 => bail!("unknown option {s}\n\n{USAGE}"),
            _ if a.command.is_empty() => a.command = w,
            _ => a.positional.push(w),
        }
    }
    check_options(&a.command, &seen)?;
    if a.profile.is_some() && a.connect.is_some() {
        bail!("--profile applies to a browser Sightline launches; it cannot be used with --connect");
    }
    Ok(a)
}

/// `WIDTHxHEIGHT` → (w, h).
pub fn viewport(s: Option<&str>) -> Result<(u32, u32)> {
    let Some(s) = s else { return Ok((1280, 720)) };
    let (w, h) = s.split_once(['x', 'X']).with_context(|| format!("--viewport expects WIDTHxHEIGHT, got {s}"))?;
    let (w, h): (u32, u32) = (w.parse().context("viewport width")?, h.parse().context("viewport height")?);
    if !(100..=8000).contains(&w) || !(100..=8000).contains(&h) {
        bail!("--viewport sides must be between 100 and 8000 pixels, got {s}");
    }
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_options() {
        let a = parse(["env", "http://x.test/", "--viewport", "800x600", "--no-screenshot"].map(String::from)).unwrap();
        assert_eq!(a.command, "env");
        assert_eq!(a.positional, ["http://x.test/"]);
        assert_eq!(viewport(a.viewport.as_deref()).unwrap(), (800, 600));
        assert!(a.no_screenshot);
        assert!(parse(["env", "--bogus"].map(String::from)).is_err());
        // An option of another command is refused, naming the commands that take it.
        let e = parse(["env", "http://x.test/", "--pretty"].map(String::from)).unwrap_err().to_string();
        assert!(e.contains("--pretty is not an option of `sightline env`") && e.contains("state"), "{e}");
        let e = parse(["rpc", "--task", "x"].map(String::from)).unwrap_err().to_string();
        assert!(e.contains("it is an option of: run"), "{e}");
        assert!(parse(["state", "http://x.test/", "--pretty", "--block-private"].map(String::from)).is_ok());
        // --log is global: every command takes it.
        for c in COMMANDS {
            let a = parse([c.name, "--log", "debug"].map(String::from)).unwrap();
            assert_eq!(a.log.as_deref(), Some("debug"), "{}", c.name);
        }
        assert!(parse(["env", "--log"].map(String::from)).is_err(), "--log needs a value");
        for c in COMMANDS {
            assert!(c.help.starts_with(&format!("sightline {}", c.name)), "{}", c.name);
            assert!(c.help.contains("Example"), "{} --help has examples", c.name);
        }
        assert!(viewport(Some("800")).is_err());
        assert!(viewport(Some("5x5")).is_err());
    }
}
