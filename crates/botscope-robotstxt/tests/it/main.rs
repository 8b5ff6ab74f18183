//! Integration tests of botscope-robotstxt: conformance vectors, seed
//! tables, RFC 9309 cases, and robustness on real and hostile input.

mod alloc;
mod conformance;
mod cost;
mod draft1996;
mod rfc9309;
mod robustness;

use std::path::PathBuf;

/// Path of a file under `tests/data`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Reads a JSON-lines file under `tests/data`.
pub fn jsonl(name: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(data(name)).expect("vector file");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}
