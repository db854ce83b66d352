//! The options structs: one per command, and the groups several commands share.

use std::path::PathBuf;

use clap::Subcommand;

/// Options of every command that drives a browser.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BrowserOpts {
    /// Viewport in CSS pixels (default 1280x720)
    #[arg(long, value_name = "WIDTHxHEIGHT")]
    pub viewport: Option<String>,
    /// Attach to a running browser (ws://… or wss://…/devtools/browser/…, or http://host:port)
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Chromium binary (else $SIGHTLINE_CHROME, then chromium on PATH)
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// The most one wait for a stable page may take (default 3000)
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<String>,
    /// Egress: only URLs under these prefixes (repeatable; scheme, host, port, path)
    #[arg(long, value_name = "PREFIX")]
    pub allow: Vec<String>,
    /// Egress: refuse URLs under these prefixes (repeatable; wins over --allow)
    #[arg(long, value_name = "PREFIX")]
    pub block: Vec<String>,
    /// Egress: refuse private, loopback, link-local, CGNAT, unique-local addresses
    #[arg(long)]
    pub block_private: bool,
    /// Run Chromium without its sandbox (always so when running as root)
    #[arg(long)]
    pub no_chrome_sandbox: bool,
}

/// Where uploads come from and downloads go.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FileOpts {
    /// upload_file may choose files inside DIR only (else uploads are off)
    #[arg(long, value_name = "DIR")]
    pub files: Option<PathBuf>,
    /// Downloads land in DIR (serve: DIR/SESSION); default a temporary directory per session, removed when it ends
    #[arg(long, value_name = "DIR")]
    pub downloads: Option<PathBuf>,
    /// The largest download kept (bytes, or 512K, 100M, 2G; default 100M); larger is cancelled
    #[arg(long, value_name = "SIZE")]
    pub download_limit: Option<String>,
}

/// A signed-in start: saved storage state, or a persistent profile.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StorageOpts {
    /// Start signed in, from cookies and localStorage saved in Playwright's storageState JSON
    #[arg(long, value_name = "FILE")]
    pub storage_state: Option<PathBuf>,
    /// A persistent Chromium profile (kept; refused while another Chromium holds it, and with --connect)
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct EnvOpts {
    /// The start page
    #[arg(value_name = "URL")]
    pub url: String,
    /// Leave the screenshot field empty ("")
    #[arg(long)]
    pub no_screenshot: bool,
    /// Mark elements new since the previous state in page_content (*[12]button "Save")
    #[arg(long)]
    pub mark_new: bool,
    /// Write the session's cookies and localStorage there at exit (mode 0600)
    #[arg(long, value_name = "FILE")]
    pub save_storage_state: Option<PathBuf>,
    /// Write what the loop did as a replayable script there when it ends (`sightline script FILE --url URL`)
    #[arg(long, value_name = "FILE")]
    pub record_script: Option<PathBuf>,
    /// Serve the tab's live view on HOST:PORT (loopback), so request_human can hand it to a person (port 0: any free one)
    #[arg(long, value_name = "HOST:PORT")]
    pub live: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub storage: StorageOpts,
    #[command(flatten)]
    pub files: FileOpts,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

#[derive(Debug, Clone, clap::Args)]
pub struct StateOpts {
    /// The page
    #[arg(value_name = "URL")]
    pub url: String,
    /// Indented JSON
    #[arg(long)]
    pub pretty: bool,
    /// Write the State Object to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// List covered elements and what covers them on stderr
    #[arg(long)]
    pub explain: bool,
    /// Save the raw capture, the page model's input, as JSON
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Leave the screenshot field empty ("")
    #[arg(long)]
    pub no_screenshot: bool,
    /// Write the session's cookies and localStorage there at exit (mode 0600)
    #[arg(long, value_name = "FILE")]
    pub save_storage_state: Option<PathBuf>,
    #[command(flatten)]
    pub storage: StorageOpts,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

#[derive(Debug, Clone, clap::Args)]
pub struct DemoOpts {
    /// Where the screenshots go (default a temporary directory)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

#[derive(Debug, Clone, clap::Args)]
pub struct RunOpts {
    /// The start page
    #[arg(value_name = "URL")]
    pub url: String,
    /// What the agent is to do
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub task: String,
    /// openai:MODEL or anthropic:MODEL
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub model: String,
    /// The most steps (1–500, default 25)
    #[arg(long, value_name = "N")]
    pub max_steps: Option<String>,
    /// Send a screenshot with each turn
    #[arg(long)]
    pub vision: bool,
    /// Record the run's trace in DIR (for `sightline trace`)
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,
    /// The provider's API base URL (an OpenAI- or Anthropic-compatible endpoint)
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Ask for actions as JSON text instead of tool calls
    #[arg(long)]
    pub no_tools: bool,
    /// Print only the outcome
    #[arg(long)]
    pub quiet: bool,
    /// Print the outcome as one JSON object
    #[arg(long)]
    pub json: bool,
    /// Leave screenshots out of the states
    #[arg(long)]
    pub no_screenshot: bool,
    /// First retry delay after a rate limit (tests)
    #[arg(long, value_name = "MS", hide = true)]
    pub retry_base_ms: Option<String>,
    /// Let the agent hand the browser to you (request_human): print its live link and open it
    #[arg(long)]
    pub human: bool,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

#[derive(Debug, Clone, clap::Args)]
pub struct TraceOpts {
    #[command(subcommand)]
    pub action: TraceAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TraceAction {
    /// One self-contained HTML page for a run's trace
    #[command(override_usage = "sightline trace view DIR [--out FILE.html]", args_override_self = true)]
    View {
        /// The run's trace directory (`sightline run --trace DIR`)
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Where the page goes (default DIR/trace.html)
        #[arg(long, value_name = "FILE.html")]
        out: Option<PathBuf>,
    },
    /// Send a trace's actions again against a fresh browser
    #[command(override_usage = "sightline trace replay DIR [OPTIONS]", args_override_self = true)]
    Replay {
        /// The run's trace directory
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        #[command(flatten)]
        browser: BrowserOpts,
    },
}

/// `rpc` and `mcp`: the tool API's sessions.
#[derive(Debug, Clone, clap::Args)]
pub struct ToolsOpts {
    #[command(flatten)]
    pub storage: StorageOpts,
    #[command(flatten)]
    pub files: FileOpts,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

/// `rpc`: the tool API's sessions, and where a person may take one over.
#[derive(Debug, Clone, clap::Args)]
pub struct RpcOpts {
    /// Serve live views on HOST:PORT (loopback), so request_human can hand a tab to a person (port 0: any free one)
    #[arg(long, value_name = "HOST:PORT")]
    pub live: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub tools: ToolsOpts,
}

/// `mcp`: serve the tools over MCP on stdio, or print an MCP host's entry for them.
#[derive(Debug, Clone, clap::Args)]
pub struct McpOpts {
    /// Print the MCP server entry for HOST instead of serving
    #[arg(long, value_name = "HOST")]
    pub config: Option<ConfigHost>,
    /// With --config: a running `sightline serve`'s MCP URL (http://HOST:PORT/mcp) instead of stdio
    #[arg(long, value_name = "URL", requires = "config")]
    pub http: Option<String>,
    /// Serve live views on HOST:PORT (loopback), so request_human can hand a tab to a person (port 0: any free one)
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "http")]
    pub live: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub tools: ToolsOpts,
}

/// The MCP hosts `mcp --config` writes an entry for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfigHost {
    /// A `claude mcp add` command line
    ClaudeCode,
    /// claude_desktop_config.json
    ClaudeDesktop,
    /// .cursor/mcp.json
    Cursor,
    /// .vscode/mcp.json
    Vscode,
    /// ~/.codex/config.toml
    Codex,
    /// A plain mcpServers entry
    Json,
}

/// `skills`: one skill, or the list.
#[derive(Debug, Clone, clap::Args)]
pub struct SkillsOpts {
    /// The skill to print (without it: the list)
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ServeOpts {
    /// Address to listen on (default 127.0.0.1:8931; a non-loopback one needs --token-file)
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,
    /// The principals and their bearer tokens, one per line (chmod 600)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The most sessions at once (default 32)
    #[arg(long, value_name = "N")]
    pub max_sessions: Option<String>,
    /// End a session idle this long (300s, 5m, 1h; default 300s)
    #[arg(long, value_name = "DURATION")]
    pub idle_timeout: Option<String>,
    /// Each session is a browser from this Selenium Grid 4
    #[arg(long, value_name = "URL")]
    pub grid: Option<String>,
    /// How long a new session waits for a free Grid slot (default 30s)
    #[arg(long, value_name = "DURATION")]
    pub grid_wait: Option<String>,
    /// Session starts under way at once; more wait their turn in order (default 4)
    #[arg(long, value_name = "N")]
    pub start_limit: Option<String>,
    /// Browser contexts kept open ahead of demand, so a session start only loads its page: N, or
    /// auto (the default: as many as the largest recent burst of starts; none once idle 10 min)
    #[arg(long, value_name = "N|auto")]
    pub warm: Option<String>,
    #[command(flatten)]
    pub files: FileOpts,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

#[derive(Debug, Clone, clap::Args)]
pub struct MarksOpts {
    /// The page
    #[arg(value_name = "URL")]
    pub url: String,
    /// The PNG to write
    #[arg(long, value_name = "FILE.png")]
    pub out: PathBuf,
    /// Print the marks as JSON
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub browser: BrowserOpts,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ScriptOpts {
    /// The script (not needed with --describe)
    #[arg(value_name = "FILE.js", required_unless_present = "describe")]
    pub file: Option<String>,
    /// The start page (trusted: its whole origin)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Let the script reach private addresses
    #[arg(long)]
    pub allow_private: bool,
    /// The script's time limit in seconds (0.1–3600, default 30)
    #[arg(long, value_name = "S")]
    pub timeout: Option<String>,
    /// Print the `browser` primitives the script can call
    #[arg(long)]
    pub describe: bool,
    /// OpenAI-compatible base URL (…/v1) for browser.ask/askMarks; key in $SIGHTLINE_VISION_API_KEY or $OPENAI_API_KEY
    #[arg(long, value_name = "URL")]
    pub vision_url: Option<String>,
    /// The vision model's name
    #[arg(long, value_name = "NAME")]
    pub vision_model: Option<String>,
    #[command(flatten)]
    pub files: FileOpts,
    #[command(flatten)]
    pub browser: BrowserOpts,
}
