//! The command line as types: [`Command`] has one variant per command, each
//! with its own options struct ([`options`]); the options several commands
//! share are flattened groups ([`BrowserOpts`], [`FileOpts`], [`StorageOpts`]).
//! clap derives the parser and every `--help` from these definitions;
//! [`parse`] words its refusals and keeps the exit codes.
//!
//! Values keep the text the user gave (`--settle-ms`, `--max-sessions`, …) and
//! are checked by the command that uses them, with the same messages and exit
//! codes as ever: a malformed command line is exit 2, a command that cannot do
//! its job exit 1.

mod options;
mod parse;

use clap::{Parser, Subcommand};

pub use options::*;
pub use parse::{parse, viewport};

/// The text every command's `--help` ends with (`--log` is global).
macro_rules! with_global_help {
    ($text:expr) => {
        concat!(
            $text,
            "
Global options:
    --log FILTER    diagnostics on stderr: a level (error, warn, info, debug, trace) or a
                    RUST_LOG-style filter such as sightline_browser=debug,warn; wins over
                    $RUST_LOG; default warn. stdout carries only the command's output.
"
        )
    };
}

/// The files sentence of `env`, `rpc`, `mcp` and `serve`.
macro_rules! files_help {
    () => {
        "Files: --files DIR (upload_file chooses files inside DIR only), --downloads DIR (default: a temporary
directory per session, removed at exit), --download-limit SIZE (default 100M; larger downloads are cancelled).
"
    };
}

#[derive(Debug, Parser)]
#[command(
    name = "sightline",
    version,
    about = "sightline — a real browser for AI agents, over the element-index protocol",
    override_usage = "sightline COMMAND [OPTIONS]   (sightline COMMAND --help for one command)",
    disable_help_subcommand = true,
    subcommand_required = true,
    arg_required_else_help = true,
    propagate_version = true,
    after_help = with_global_help!("")
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Diagnostics on stderr: a level or a RUST_LOG-style filter (see below).
    #[arg(long, global = true, value_name = "FILTER", hide = true)]
    pub log: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// JSON-lines loop: first State Object, then one per action read on stdin
    #[command(
        override_usage = "sightline env URL [OPTIONS]",
        args_override_self = true,
        after_help = with_global_help!(concat!(
            "The element-index protocol over JSON lines: the first State Object once URL is stable,
then one State Object per Action Object read on stdin. EOF or finish_task/fail_task ends it.
", files_help!(), "
Signed in: --storage-state FILE starts from saved cookies and localStorage (Playwright's storageState
JSON), --save-storage-state FILE writes them at exit (mode 0600), --profile DIR keeps a Chromium profile.

Examples:
    printf '%s\\n' '{\"action\":\"click_element\",\"element_index\":3}' | sightline env https://example.com/ --no-screenshot
    sightline env http://127.0.0.1:8000/ --viewport 1024x768 --block-private --allow http://127.0.0.1:8000/
    sightline env http://127.0.0.1:8000/admin/ --save-storage-state signed-in.json   # sign in, then EOF
    sightline env http://127.0.0.1:8000/admin/ --storage-state signed-in.json
    sightline env http://127.0.0.1:8000/login --record-script login.js   # then: sightline script login.js --url URL
"))
    )]
    Env(EnvOpts),
    /// Print one State Object
    #[command(
        override_usage = "sightline state URL [--pretty] [--out FILE] [--explain] [--record FILE] [OPTIONS]",
        args_override_self = true,
        after_help = with_global_help!("Examples:
    sightline state https://example.com/ --pretty --no-screenshot
    sightline state URL --explain           # covered elements and what covers them, on stderr
    sightline state URL --record c.json     # the raw capture, the page model's input
")
    )]
    State(StateOpts),
    /// Drive a built-in local site through a scripted run and print each step
    #[command(
        override_usage = "sightline demo [--out DIR]",
        args_override_self = true,
        after_help = with_global_help!("Example:
    sightline demo --out /tmp/sightline-demo
")
    )]
    Demo(DemoOpts),
    /// An agent on a real LLM API (openai:MODEL, anthropic:MODEL)
    #[command(
        override_usage = "sightline run URL --task \"…\" --model PROVIDER:MODEL [--max-steps N] [--vision] [--trace DIR]
              [--base-url URL] [--no-tools] [--quiet | --json]",
        args_override_self = true,
        after_help = with_global_help!("The API key comes from $SIGHTLINE_API_KEY, $OPENAI_API_KEY or $ANTHROPIC_API_KEY.

Example:
    sightline run https://example.com/ --task \"Find the contact page\" --model openai:gpt-4o --trace /tmp/run1
")
    )]
    Run(RunOpts),
    /// View a run's trace as one HTML page, or send its actions again against a fresh browser
    #[command(
        override_usage = "sightline trace view DIR [--out FILE.html]\n       sightline trace replay DIR",
        after_help = with_global_help!("Example:
    sightline trace view /tmp/run1 --out run1.html
")
    )]
    Trace(TraceOpts),
    /// The tool API as JSON-RPC 2.0 over stdio (methods = tool names, plus list_tools)
    #[command(
        override_usage = "sightline rpc [OPTIONS]",
        args_override_self = true,
        after_help = with_global_help!(concat!(files_help!(), "
Example:
    echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_tools\"}' | sightline rpc
"))
    )]
    Rpc(RpcOpts),
    /// The same tools as a Model Context Protocol server over stdio
    #[command(
        override_usage = "sightline mcp [OPTIONS]\n       sightline mcp --config HOST [--http URL] [OPTIONS]",
        args_override_self = true,
        after_help = with_global_help!(concat!(files_help!(), "
MCP revisions 2025-11-25 (initialize; bind_browser {session} names driver sessions) and 2026-07-28
(server/discover, stateless; session_open returns a handle every tool takes), whichever the client offers.

--config HOST prints the server entry for an MCP host instead of serving: claude-code (a `claude mcp add`
command), claude-desktop (claude_desktop_config.json), cursor (.cursor/mcp.json), vscode (.vscode/mcp.json),
codex (~/.codex/config.toml), json (a plain mcpServers entry). It runs this binary (its absolute path) with
the other options given. --http URL points the host at a running `sightline serve` (its /mcp URL) instead,
with the bearer token from $SIGHTLINE_TOKEN in an Authorization header (codex reads $SIGHTLINE_TOKEN itself).

Examples:
    sightline mcp --config claude-code --block-private
    sightline mcp --config vscode --http http://127.0.0.1:8931/mcp
    {\"command\": \"sightline\", \"args\": [\"mcp\", \"--block-private\"]}   (an MCP client's server entry)
"))
    )]
    Mcp(McpOpts),
    /// What an agent needs to use Sightline well, as skills (Markdown), from the tool and action tables
    #[command(
        override_usage = "sightline skills [NAME]",
        args_override_self = true,
        after_help = with_global_help!("Without NAME: the skills, one a line. With NAME: that skill, as a SKILL.md (front matter, then
Markdown), generated from the tool table, the action table and the error codes of this binary.

Examples:
    sightline skills
    sightline skills core
    sightline skills element-index > ~/.claude/skills/sightline-element-index/SKILL.md
")
    )]
    Skills(SkillsOpts),
    /// HTTP API and MCP (Streamable HTTP at /mcp): many isolated sessions
    #[command(
        override_usage = "sightline serve [--listen 127.0.0.1:8931] [--token-file FILE] [--max-sessions N] [--idle-timeout 300s]
                [--start-limit 4] [--warm N|auto] [--grid URL | --connect URL] [OPTIONS]",
        args_override_self = true,
        after_help = with_global_help!(concat!("A non-loopback --listen needs --token-file.

--token-file FILE holds one principal per line, `name token` or a bare token (named token-N),
tokens of 16 characters or more; FILE must be readable by its owner only (chmod 600).
Each principal sees and drives only the sessions it created.
--grid URL: each session is a browser from Selenium Grid 4. --grid-wait 30s: how long a new session
waits for a free Grid slot; then 503 grid_full with Retry-After (a browser the Grid hands out later,
or one whose client hung up, is deleted at once).
--start-limit 4: session starts under way at once; more wait their turn, first come first served
(a start holds its turn until its first page has loaded, 2 s at most), so under a burst the first
sessions are ready early instead of all at the end. --warm N: keep N browser contexts, each with
its blank tab, opened ahead of demand (before the server listens, then refilled one at a time
while no request is in flight); a new session takes one and only loads its page. Each costs the
memory of an idle tab. With --grid, N Grid browsers are kept, each holding a Grid slot (given back
at shutdown). A session asking for another viewport or a storage state is opened as usual.
--warm auto (the default): none at first; after a burst of session starts (asked for within 5 s
of each other), as many as the largest burst, refilled the same way, all closed once no session
has started for 10 minutes. With --grid, a warm browser is given back for each request (anyone's)
waiting in the Grid's queue that no free slot answers, and none is taken unless a slot is free.
--warm 0: no pool.
", files_help!(), "
Examples:
    sightline serve
    sightline serve --listen 0.0.0.0:8931 --token-file ~/.config/sightline/tokens
    sightline serve --grid http://127.0.0.1:4444 --max-sessions 10
    sightline serve --warm 8
"))
    )]
    Serve(ServeOpts),
    /// Set-of-Marks: numbered boxes over the visible interactive elements
    #[command(
        override_usage = "sightline marks URL --out marks.png [--json]",
        args_override_self = true,
        after_help = with_global_help!("Example:
    sightline marks https://example.com/ --out marks.png --json
")
    )]
    Marks(MarksOpts),
    /// Run agent JavaScript against a policy-gated `browser` global
    #[command(
        override_usage = "sightline script FILE.js [--url URL] [--allow PREFIX]... [--allow-private] [--timeout S]
                 [--files DIR] [--downloads DIR] [--download-limit SIZE]
                 [--vision-url URL --vision-model NAME] [--describe]",
        args_override_self = true,
        after_help = with_global_help!("Private addresses are refused by default.
Files: --files DIR (browser.uploadMark(id, names) chooses files inside DIR only; without it uploads
are refused), --downloads DIR (default: a temporary directory, removed at exit), --download-limit SIZE
(default 100M; larger downloads are cancelled). browser.downloads() lists them; a summary goes to stderr.

Examples:
    sightline script task.js --url https://example.com/ --allow https://example.com/
    sightline script upload.js --url http://127.0.0.1:8000/form --allow-private --files ./to-send --downloads ./got
    sightline script --describe
")
    )]
    Script(ScriptOpts),
}
