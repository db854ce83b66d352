//! Real documents (issue 17, item 6): large pages nobody here wrote, read by semantic_v2
//! from the DOM and compared with Chromium's own accessibility tree, node by node, as the
//! fixture equivalence test does (`semantic_against_the_ax_tree`); and every element of the
//! element index that Chromium names has a name (`ax_names::names_lost`).
//!
//! - rustdoc and the Rust book, which the Rust toolchain ships (`rustc --print sysroot` +
//!   `share/doc/rust/html`, the `rust-docs` component of rustup's default profile);
//! - Python's library reference from Debian's `python3-doc` (`/usr/share/doc/python3/html`),
//!   which `./x test` installs.
//!
//! Each tree of documents is served by the fixture server on 127.0.0.1.

use crate::ax_names;
use crate::common;

use std::path::PathBuf;

use common::{env, run, semantic_against_the_ax_tree};

/// The HTML documentation the Rust toolchain ships.
fn rust_docs() -> PathBuf {
    let out = std::process::Command::new("rustc").args(["--print", "sysroot"]).output().expect("run rustc");
    let root =
        PathBuf::from(String::from_utf8(out.stdout).expect("sysroot is UTF-8").trim()).join("share/doc/rust/html");
    assert!(
        root.join("std/index.html").is_file(),
        "\n\nThe Rust documentation is missing at {}.\nInstall it with:  rustup component add rust-docs\n\n",
        root.display()
    );
    root
}

/// Python's HTML documentation from Debian's python3-doc.
fn python_docs() -> PathBuf {
    let root = PathBuf::from("/usr/share/doc/python3/html");
    assert!(
        root.join("library/functions.html").is_file(),
        "\n\nPython's documentation is missing at {}.\nInstall it with:  ./x test   (or: apt-get install python3-doc)\n\n",
        root.display()
    );
    root
}

/// Each page of `root`, loaded and compared; the differences of all pages.
async fn compare(root: PathBuf, pages: &[&str]) -> Vec<String> {
    let server = sightline_testkit::Server::dir(root).await.expect("serve the documents");
    let mut differ = Vec::new();
    for page in pages {
        let env = env(&server.url(page)).await;
        if let Some(diff) = semantic_against_the_ax_tree(env.tab()).await {
            differ.push(format!("{page}:{diff}"));
        }
        for lost in ax_names::names_lost(env.tab()).await {
            differ.push(format!("{page}: unnamed in the element index: {lost}"));
        }
        env.close().await;
    }
    differ
}

/// The standard library's front page: a sidebar of crates and modules, item tables.
#[test]
fn rustdoc_std_index_reads_as_the_ax_tree() {
    run(async {
        let differ = compare(rust_docs(), &["/std/index.html"]).await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

/// One of rustdoc's largest pages: `Vec`, with hundreds of methods and trait impls in
/// collapsible `<details>`, source links and anchors.
#[test]
fn rustdoc_vec_reads_as_the_ax_tree() {
    run(async {
        let differ = compare(rust_docs(), &["/std/vec/struct.Vec.html"]).await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

/// The Rust book (mdBook): a chapter with a table of contents sidebar, code blocks with
/// buttons, and the theme and search controls.
#[test]
fn rust_book_chapter_reads_as_the_ax_tree() {
    run(async {
        let differ = compare(rust_docs(), &["/book/ch04-01-what-is-ownership.html"]).await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}

/// Sphinx: Python's built-in functions, a long page of definitions, tables and links.
#[test]
fn python_functions_reads_as_the_ax_tree() {
    run(async {
        let differ = compare(python_docs(), &["/library/functions.html"]).await;
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    })
}
