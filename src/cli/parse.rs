//! Parsing: clap's matches into [`Cli`], and clap's errors worded as Sightline
//! words them, with the exit codes the commands have always had.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, FromArgMatches};

use super::{Cli, Command};

/// A command line that did not parse: what to print, where, and the exit code.
#[derive(Debug)]
pub struct Refused {
    pub text: String,
    /// Help and version go to stdout; errors to stderr.
    pub to_stdout: bool,
    pub code: u8,
}

/// The whole command, with the synopsis of every command at the end of `sightline --help`.
pub fn command() -> clap::Command {
    let cmd = Cli::command();
    let mut synopsis = String::from("Commands in full:\n");
    for sub in cmd.get_subcommands() {
        let usage = sub.clone().render_usage().to_string();
        let usage = usage.trim_start_matches("Usage:").trim();
        for line in usage.lines().map(str::trim) {
            let indent = if line.starts_with("sightline ") { "    " } else { "        " };
            synopsis.push_str(&format!("{indent}{line}\n"));
        }
    }
    let after = format!("{synopsis}{}", cmd.get_after_help().map(|h| h.to_string()).unwrap_or_default());
    cmd.after_help(after)
}

/// The top-level help (`sightline --help`, and `sightline` alone).
pub fn usage() -> String {
    command().render_help().to_string()
}

/// Parse the words after the program name.
pub fn parse(words: impl IntoIterator<Item = String>) -> Result<Cli, Refused> {
    let words: Vec<String> = words.into_iter().collect();
    let matches = command()
        .try_get_matches_from(std::iter::once("sightline".to_string()).chain(words.iter().cloned()))
        .map_err(|e| refused(e, &words))?;
    let cli = Cli::from_arg_matches(&matches).map_err(|e| refused(e, &words))?;
    let (profile, connect) = match &cli.command {
        Command::Env(o) => (&o.storage.profile, &o.browser.connect),
        Command::State(o) => (&o.storage.profile, &o.browser.connect),
        Command::Rpc(o) => (&o.tools.storage.profile, &o.tools.browser.connect),
        Command::Mcp(o) => (&o.tools.storage.profile, &o.tools.browser.connect),
        _ => (&None, &None),
    };
    if profile.is_some() && connect.is_some() {
        return Err(Refused {
            text: "sightline: --profile applies to a browser Sightline launches; it cannot be used with --connect\n"
                .into(),
            to_stdout: false,
            code: 2,
        });
    }
    Ok(cli)
}

/// clap's error as Sightline words it: an option of another command names the
/// commands that take it; an unknown command and a missing argument are exit 1
/// (as a command that cannot start), every other malformed line exit 2.
fn refused(e: clap::Error, words: &[String]) -> Refused {
    let cmd = command();
    let name = words.iter().find(|w| cmd.find_subcommand(w.as_str()).is_some()).cloned();
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let error = |text: String, code: u8| Refused { text: format!("sightline: {text}\n"), to_stdout: false, code };
    match e.kind() {
        ErrorKind::DisplayHelp => Refused { text: e.render().to_string(), to_stdout: true, code: 0 },
        ErrorKind::DisplayVersion => {
            Refused { text: format!("sightline {}\n", env!("CARGO_PKG_VERSION")), to_stdout: true, code: 0 }
        }
        // `sightline` alone: the usage on stdout, exit 2.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand if name.is_none() => {
            Refused { text: usage(), to_stdout: true, code: 2 }
        }
        // `sightline trace` without `view` or `replay`: its usage, exit 1.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            Refused { text: e.render().to_string(), to_stdout: false, code: 1 }
        }
        ErrorKind::InvalidSubcommand => {
            let word = context(ContextKind::InvalidSubcommand).unwrap_or_default();
            error(format!("unknown command '{word}'\n\n{}", usage()), 1)
        }
        ErrorKind::MissingRequiredArgument => error(clap_text(&e), 1),
        ErrorKind::UnknownArgument => match (context(ContextKind::InvalidArg), name) {
            // An option before the command word: clap reads it as the top level's.
            (Some(flag), Some(name))
                if words.iter().position(|w| *w == flag) < words.iter().position(|w| *w == name) =>
            {
                error(format!("{flag} goes after the command: `sightline {name} … {flag}`"), 2)
            }
            (Some(flag), Some(name)) if flag.starts_with("--") => {
                let long = flag.split('=').next().unwrap_or(&flag).trim_start_matches("--").to_string();
                let takers = takers(&cmd, &long);
                let hint = if takers.is_empty() {
                    String::new()
                } else {
                    format!(" (it is an option of: {})", takers.join(", "))
                };
                error(format!("{flag} is not an option of `sightline {name}`{hint}; see `sightline {name} --help`"), 2)
            }
            _ => error(clap_text(&e), 2),
        },
        _ => error(clap_text(&e), 2),
    }
}

/// clap's message without its `error: ` prefix.
fn clap_text(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.trim_start_matches("error: ").trim_end().to_string()
}

/// The commands that take `--long` (a `trace` action's option counts for `trace`).
fn takers(cmd: &clap::Command, long: &str) -> Vec<String> {
    fn takes(c: &clap::Command, long: &str) -> bool {
        c.get_arguments().any(|a| a.get_long() == Some(long) && !a.is_global_set())
            || c.get_subcommands().any(|s| takes(s, long))
    }
    cmd.get_subcommands().filter(|s| takes(s, long)).map(|s| s.get_name().to_string()).collect()
}

/// `WIDTHxHEIGHT` → (w, h); 1280x720 without one.
pub fn viewport(s: Option<&str>) -> anyhow::Result<(u32, u32)> {
    let Some(s) = s else { return Ok((1280, 720)) };
    sightline_browser::parse_viewport(s).map_err(|e| anyhow::anyhow!("--viewport {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &[&str]) -> Result<Cli, Refused> {
        parse(words.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_commands_and_options() {
        let a = parse_words(&["env", "http://x.test/", "--viewport", "800x600", "--no-screenshot"]).unwrap();
        let Command::Env(e) = &a.command else { panic!("{a:?}") };
        assert_eq!(e.url, "http://x.test/");
        assert_eq!(viewport(e.browser.viewport.as_deref()).unwrap(), (800, 600));
        assert!(e.no_screenshot);
        assert!(parse_words(&["env", "--bogus"]).is_err());
        // An option of another command is refused, naming the commands that take it.
        let e = parse_words(&["env", "http://x.test/", "--pretty"]).unwrap_err().text;
        assert!(e.contains("--pretty is not an option of `sightline env`") && e.contains("state"), "{e}");
        let e = parse_words(&["rpc", "--task", "x"]).unwrap_err().text;
        assert!(e.contains("it is an option of: run"), "{e}");
        assert!(parse_words(&["state", "http://x.test/", "--pretty", "--block-private"]).is_ok());
        // --log is global: every command takes it.
        let cmd = command();
        for c in cmd.get_subcommands() {
            let name = c.get_name();
            let mut words = vec![name];
            // The least each command needs besides --log.
            words.extend(match name {
                "env" | "state" | "run" | "marks" => &["http://x.test/"][..],
                "trace" => &["view", "/tmp/t"][..],
                "script" => &["--describe"][..],
                _ => &[][..],
            });
            words.extend(match name {
                "run" => &["--task", "t", "--model", "openai:m"][..],
                "marks" => &["--out", "m.png"][..],
                _ => &[][..],
            });
            words.extend(["--log", "debug"]);
            let a = parse_words(&words).unwrap_or_else(|e| panic!("{name}: {}", e.text));
            assert_eq!(a.log.as_deref(), Some("debug"), "{name}");
        }
        assert!(parse_words(&["env", "--log"]).is_err(), "--log needs a value");
        for c in cmd.get_subcommands() {
            let help = c.clone().render_help().to_string();
            assert!(help.contains(&format!("sightline {}", c.get_name())), "{help}");
            assert!(help.contains("Example"), "{} --help has examples", c.get_name());
        }
        assert!(viewport(Some("800")).is_err());
        assert!(viewport(Some("5x5")).is_err());
    }

    #[test]
    fn refusals_keep_their_exit_codes() {
        assert_eq!(parse_words(&[]).unwrap_err().code, 2, "no command: the usage, exit 2");
        assert_eq!(parse_words(&["frobnicate"]).unwrap_err().code, 1);
        assert!(parse_words(&["frobnicate"]).unwrap_err().text.contains("unknown command"));
        assert_eq!(parse_words(&["serve", "--token", "x"]).unwrap_err().code, 2);
        let e = parse_words(&["env", "http://x.test/", "--profile", "/tmp/p", "--connect", "ws://c"]).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.text.contains("cannot be used with --connect"), "{}", e.text);
        let help = parse_words(&["--help"]).unwrap_err();
        assert!(help.to_stdout && help.code == 0 && help.text.contains("sightline env URL"), "{}", help.text);
        assert!(parse_words(&["rpc", "--help"]).unwrap_err().text.contains("--log FILTER"));
        assert!(parse_words(&["script", "--describe"]).is_ok(), "--describe needs no file");
        let e = parse_words(&["--no-screenshot", "env", "http://x.test/"]).unwrap_err();
        assert!(e.code == 2 && e.text.contains("goes after the command"), "{}", e.text);
        assert_eq!(parse_words(&["--log", "debug", "env", "http://x.test/"]).unwrap().log.as_deref(), Some("debug"));
    }
}
