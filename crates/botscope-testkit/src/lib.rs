//! Shared support for botscope's tests and benches: the deterministic
//! synthetic access log ([`synthlog`]) (the web of robots.txt files is
//! `botscope_store::synth`), running a command hermetically
//! ([`Run`], [`json`]), headless Chromium ([`chromium`]), a dnsmasq on loopback
//! ([`Dnsmasq`]), HTML normalised for snapshots ([`normalize_html`]), and
//! small IP-owner databases with a file server to fetch them from ([`ipdb`]),
//! a bounded HTTP load with nginx's static rate beside it ([`load`]), and
//! raw HTTP answers read off a connection ([`http`]), and an application
//! that records exactly what it receives ([`recorder`]).
//!
//! ```
//! let mut log = Vec::new();
//! botscope_testkit::synthlog::write(&mut log, 100, 1).unwrap();
//! assert!(log.iter().filter(|&&b| b == b'\n').count() >= 100);
//! ```

#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

mod browser;
mod dns;
mod html;
pub mod http;
pub mod ipdb;
pub mod load;
pub mod olp;
pub mod pg;
pub mod recorder;
pub mod redis;
mod run;
mod server;
pub mod synthlog;
pub mod webdriver;

use std::path::PathBuf;

pub use browser::{Page, chromium, chromium_exe};
pub use dns::{Dnsmasq, free_port};
pub use html::normalize_html;
pub use redis::Redis;
pub use run::{Run, write_file};
pub use server::{Ready, Spawned, Stop, connect_from, page_server, spawn_server, trickle};

/// The workspace root (where `examples/` and `Cargo.toml` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A temporary directory, removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("botscope-test-")
        .tempdir()
        .expect("a temporary directory")
}

/// Standard output of a run as JSON (panics with its stderr when it is not).
pub fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// A crafted robots.txt of `n` groups, each naming its own robot
/// (`robot-aaaa`, `robot-baaa`, … : Google's product tokens are letters,
/// `-` and `_`) and closing its own path: the shape that costs a reader
/// one selection per group. `robot_name(i)` is the `i`th name.
pub fn many_named_groups(n: usize) -> Vec<u8> {
    let mut body = Vec::new();
    for i in 0..n {
        body.extend_from_slice(
            format!("User-agent: {}\nDisallow: /p{i}\n\n", robot_name(i)).as_bytes(),
        );
    }
    body
}

/// The `i`th robot of [`many_named_groups`].
pub fn robot_name(mut i: usize) -> String {
    let mut s = String::from("robot-");
    for _ in 0..4 {
        s.push(char::from(b'a' + (i % 26) as u8));
        i /= 26;
    }
    s
}

/// The value after `name` on an example program's command line.
pub fn example_arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// `--corpus DIR` of an example program, else the real files checked in.
pub fn example_corpus() -> PathBuf {
    example_arg("--corpus").map_or_else(
        || root().join("crates/botscope-robotstxt/tests/data/corpus"),
        PathBuf::from,
    )
}

/// The code block of `docs/PAGE` that follows the text `after` and opens
/// with "```lang" (what a test runs as the page prints it).
pub fn doc_block(page: &str, after: &str, lang: &str) -> String {
    let path = root().join("docs").join(page);
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let from = doc
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in docs/{page}"));
    let open = format!("```{lang}\n");
    let at = from
        + doc[from..]
            .find(&open)
            .unwrap_or_else(|| panic!("a {lang} block after {after:?} in docs/{page}"))
        + open.len();
    let len = doc[at..]
        .find("```")
        .unwrap_or_else(|| panic!("the block's end in docs/{page}"));
    doc[at..at + len].to_owned()
}
