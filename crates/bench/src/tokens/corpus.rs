//! The MiniWoB++ pages and the real documents of `bench tokens`: where they are
//! installed, and the local servers that serve them on `127.0.0.1`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sightline_testkit::Server;

/// The one line the MiniWoB++ tests add to `core/core.js` (`tests/miniwob/harness.rs`).
const SEED_LINE: &str = "\nif (core.QueryString.seed) { Math.seedrandom(core.QueryString.seed); }\n";

/// `?start=1`: the page's first `core.startEpisode()` (its load handler) goes on to start the
/// episode, as a click on the START cover does (`core.startEpisodeReal()`: the problem drawn,
/// the instruction shown, the cover gone), once.
const START_LINE: &str = "\nif (core.QueryString.start) { var startFirst = core.startEpisode; \
core.startEpisode = function () { startFirst(); core.startEpisode = startFirst; core.startEpisodeReal(); }; }\n";

/// `?step=1` (with `start=1`): right after the episode's problem is drawn (the first
/// `core.startEpisodeReal()`, in the same turn of the page's load handler), one step in the
/// page, the first that applies, among the elements inside `#area` that are rendered (client
/// rects) and not disabled, in document order:
///
/// 1. the first text field (`textarea`, or `input` of type text, password, email, search, tel
///    or url): focused, its value set to `sightline`, then `input` and `change` events;
/// 2. else the first checkbox or radio button: `click()`;
/// 3. else the first `select` with more than one option: its last option chosen, a `change` event;
/// 4. else the first `button`, `a` or other `input`, or element with a click handler (an
///    `onclick` property or a jQuery `click` handler of its own): `click()`;
/// 5. else nothing (the mid-task state is the first state).
///
/// The seed fixes the problem, so every reader, each in its own browser, reads the same page.
/// A click can end the episode (a wrong button): the reward display then counts it and the
/// START cover is back, which is that task's state after one step.
pub const STEP_LINE: &str = r#"
if (core.QueryString.step) { (function () {
  var real = core.startEpisodeReal;
  core.startEpisodeReal = function () {
    real();
    core.startEpisodeReal = real;
    var area = document.getElementById('area');
    if (!area) { return; }
    var all = Array.prototype.filter.call(area.querySelectorAll('*'), function (e) {
      return !e.disabled && e.getClientRects().length > 0;
    });
    var pick = function (f) { return all.filter(f)[0]; };
    var fire = function (e, name) { e.dispatchEvent(new Event(name, { bubbles: true })); };
    var e = pick(function (e) {
      return e.tagName === 'TEXTAREA' ||
        (e.tagName === 'INPUT' && ['text', 'password', 'email', 'search', 'tel', 'url'].indexOf(e.type) >= 0);
    });
    if (e) { e.focus(); e.value = 'sightline'; fire(e, 'input'); fire(e, 'change'); return; }
    e = pick(function (e) { return e.tagName === 'INPUT' && (e.type === 'checkbox' || e.type === 'radio'); });
    if (e) { e.click(); return; }
    e = pick(function (e) { return e.tagName === 'SELECT' && e.options.length > 1; });
    if (e) { e.selectedIndex = e.options.length - 1; fire(e, 'change'); return; }
    e = pick(function (e) {
      var own = window.jQuery && jQuery._data ? (jQuery._data(e, 'events') || {}) : {};
      return ['BUTTON', 'A', 'INPUT'].indexOf(e.tagName) >= 0 || typeof e.onclick === 'function' || !!own.click;
    });
    if (e) { e.click(); }
  };
})(); }
"#;

/// The episode's first state.
pub const FIRST_QUERY: &str = "seed=1&start=1";
/// The mid-task state: the first state, then [`STEP_LINE`]'s step.
pub const MID_QUERY: &str = "seed=1&start=1&step=1";

/// The MiniWoB++ pages `./x miniwob` installed.
pub struct MiniWob {
    root: PathBuf,
    /// The task names (file stems), sorted.
    pub tasks: Vec<String>,
}

impl MiniWob {
    pub fn find() -> Result<MiniWob> {
        let root = PathBuf::from(".cache/miniwob/miniwob/html");
        let dir = root.join("miniwob");
        let mut tasks: Vec<String> = std::fs::read_dir(&dir)
            .with_context(|| {
                format!("no MiniWoB++ pages in {} (run `./x miniwob`, which installs them)", dir.display())
            })?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_suffix(".html").map(str::to_string))
            .collect();
        tasks.sort();
        anyhow::ensure!(!tasks.is_empty(), "no task pages in {} (run `./x miniwob`)", dir.display());
        Ok(MiniWob { root, tasks })
    }

    /// The wheel's `html` directory on `127.0.0.1`, `core/core.js` with the three lines added.
    pub async fn serve(&self) -> Result<Server> {
        let mut core_js = std::fs::read(self.root.join("core/core.js")).context("core/core.js")?;
        for line in [SEED_LINE, START_LINE, STEP_LINE] {
            core_js.extend_from_slice(line.as_bytes());
        }
        let site = Server::dir(std::fs::canonicalize(&self.root)?).await?;
        site.page("/core/core.js", core_js);
        Ok(site)
    }
}

/// The fixed document pages: the toolchain's Rust documentation, then Python's.
const RUST_PAGES: [&str; 7] = [
    "/std/index.html",
    "/std/collections/index.html",
    "/std/io/index.html",
    "/std/vec/struct.Vec.html",
    "/std/iter/trait.Iterator.html",
    "/book/ch04-01-what-is-ownership.html",
    "/book/print.html",
];
const PYTHON_PAGES: [&str; 5] =
    ["/library/index.html", "/library/functions.html", "/library/re.html", "/library/json.html", "/library/os.html"];

/// The two trees of documents `tests/documents.rs` reads.
pub struct Documents {
    rust: PathBuf,
    python: PathBuf,
}

impl Documents {
    pub fn find() -> Result<Documents> {
        let out = std::process::Command::new("rustc").args(["--print", "sysroot"]).output().context("run rustc")?;
        let rust = PathBuf::from(String::from_utf8(out.stdout)?.trim()).join("share/doc/rust/html");
        missing_any(&rust, &RUST_PAGES, "rustup component add rust-docs")?;
        let python = PathBuf::from("/usr/share/doc/python3/html");
        missing_any(&python, &PYTHON_PAGES, "./x apps   (or: apt-get install python3-doc)")?;
        Ok(Documents { rust, python })
    }

    /// A server for each tree: Rust's, then Python's.
    pub async fn serve(&self) -> Result<[Server; 2]> {
        Ok([Server::dir(self.rust.clone()).await?, Server::dir(self.python.clone()).await?])
    }

    /// Each page's label and URL.
    pub fn pages(&self, servers: &[Server; 2]) -> Vec<(String, String)> {
        let rust = RUST_PAGES.iter().map(|p| (format!("Rust {p}"), servers[0].url(p)));
        rust.chain(PYTHON_PAGES.iter().map(|p| (format!("Python {p}"), servers[1].url(p)))).collect()
    }
}

fn missing_any(root: &Path, pages: &[&str], install: &str) -> Result<()> {
    for p in pages {
        let file = root.join(p.trim_start_matches('/'));
        anyhow::ensure!(file.is_file(), "the document {} is missing; install it with:  {install}", file.display());
    }
    Ok(())
}
