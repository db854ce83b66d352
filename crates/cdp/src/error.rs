use std::time::Duration;

/// Everything that can go wrong talking to a browser over CDP.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CdpError {
    /// No Chromium binary was found; the message says how to install one.
    #[error("no Chromium found ({searched}); install it with `apt-get install -y chromium`, or pass --chrome PATH / set SIGHTLINE_CHROME")]
    ChromiumNotFound { searched: String },
    /// The Chromium binary could not be run at all.
    #[error("cannot run {}: {source}", binary.display())]
    Spawn {
        binary: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Chromium started but did not print its DevTools endpoint.
    #[error("Chromium did not start: {detail}")]
    LaunchFailed { detail: String },
    /// The websocket could not be opened or an endpoint could not be resolved.
    /// (The cause is also in the message: a user reading only the message needs it.)
    #[error("cannot connect to {endpoint}: {source}")]
    Connect {
        endpoint: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The browser answered a command with a protocol error.
    #[error("{method} failed: {message} (code {code})")]
    Protocol { method: String, code: i64, message: String },
    /// The connection to the browser is gone (crash, kill, remote close).
    #[error("browser connection closed")]
    Disconnected,
    /// The target of the session the command was sent to crashed or was
    /// detached before answering; calls on it fail at once instead of timing out.
    #[error("{method} got no answer: the target {reason}")]
    SessionGone { method: String, reason: &'static str },
    /// A command got no answer in time.
    #[error("{method} timed out after {after:?}")]
    Timeout { method: String, after: Duration },
    /// A reply did not have the shape we expected.
    #[error("cannot decode the reply to {method}: {source}")]
    Decode {
        method: String,
        #[source]
        source: serde_json::Error,
    },
    /// `--profile DIR` names a profile another Chromium holds (its `SingletonLock`).
    #[error("the profile {} is in use by Chromium process {pid} on host {host:?}; close that browser or choose another --profile directory", dir.display())]
    ProfileInUse { dir: std::path::PathBuf, host: String, pid: i32 },
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}
