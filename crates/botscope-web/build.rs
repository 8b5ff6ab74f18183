//! Embeds the files the demo is built from: the example robots.txt files
//! and logs of `examples/`, and the real robots.txt corpus of the
//! robots.txt engine's tests.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file());
    v.sort();
    v
}

fn list(out: &mut String, name: &str, paths: &[PathBuf]) {
    let _ = writeln!(out, "pub static {name}: &[(&str, &[u8])] = &[");
    for p in paths {
        let file = p
            .file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    ({file:?}, include_bytes!({:?})),",
            p.display().to_string()
        );
    }
    let _ = writeln!(out, "];");
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("../..");
    let mut out = String::new();
    list(&mut out, "ROBOTS", &files(&root.join("examples/robots")));
    list(&mut out, "LOGS", &files(&root.join("examples/logs")));
    list(
        &mut out,
        "CORPUS",
        &files(&root.join("crates/botscope-robotstxt/tests/data/corpus")),
    );
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("demo_files.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}
