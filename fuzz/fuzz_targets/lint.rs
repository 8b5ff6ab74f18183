//! Lint arbitrary bytes: never panics, every diagnostic points into the file.
#![no_main]

use botscope_robotstxt::{ParseOptions, Robots, lint};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = ParseOptions { max_bytes: Some(4096) };
    let robots = Robots::parse_with(data, &opts);
    for d in lint(&robots) {
        assert!(d.line <= robots.lines.saturating_add(1), "{d}");
        assert!(!d.message.is_empty());
    }
});
