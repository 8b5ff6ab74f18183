//! The botscope command, run as a user runs it: arguments in, stdout,
//! stderr and exit status out. Output formats are contracts; snapshots
//! keep them stable.

mod a11y;
mod canary;
mod cli;
mod data;
mod docs;
mod harvest;
mod inprocess;
mod logs;
mod package;
mod policy;
mod reference;
mod research;
mod serve;
mod snapshots;
mod standalone;
mod store;
mod terms;
mod webbotauth;
mod workers;

use std::path::{Path, PathBuf};
use std::process::Output;

pub use botscope_testkit::root;

/// This test process's scratch space (under cargo's target directory).
pub fn scratch_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("it-{}", std::process::id()))
}

/// A fresh, empty directory named `name`.
pub fn scratch(name: &str) -> PathBuf {
    let d = scratch_root().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}

/// The home every run gets: no user registry or DNS cache from the machine.
pub fn home() -> PathBuf {
    scratch_root().join("home")
}

/// Writes a file in the scratch space and returns its path.
pub fn tmp(name: &str, body: &[u8]) -> PathBuf {
    botscope_testkit::write_file(&scratch_root().join("files"), name, body)
}

/// The command, hermetic, run from the workspace root.
pub fn command() -> botscope_testkit::Run {
    botscope_testkit::Run::new(env!("CARGO_BIN_EXE_botscope"), &home())
}

/// Runs botscope with `args`, `stdin` on standard input.
pub fn botscope(args: &[&str], stdin: &[u8]) -> Output {
    command().args(args).stdin(stdin).output()
}

/// Runs botscope with no input.
pub fn run(args: &[&str]) -> Output {
    botscope(args, b"")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Path as a `&str` argument.
pub fn arg(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The venv the test command makes (pyarrow, DuckDB), or `BOTSCOPE_PYTHON`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BOTSCOPE_PYTHON") {
        return p.into();
    }
    let venv = root().join("target/pyenv/bin/python");
    assert!(
        venv.exists(),
        "{} is missing: the test command in README (scripts/test) makes it with pyarrow and DuckDB",
        venv.display()
    );
    venv
}

/// Runs `crates/botscope/tests/py/SCRIPT FILE` in the venv and reads the
/// JSON it prints.
pub fn python_json(script: &str, file: &Path) -> serde_json::Value {
    let py = std::process::Command::new(python())
        .arg(root().join("crates/botscope/tests/py").join(script))
        .arg(file)
        .output()
        .expect("python runs");
    assert!(
        py.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&py.stderr)
    );
    serde_json::from_slice(&py.stdout).expect("json")
}
