//! Lint arbitrary bytes: never panics, every diagnostic points into the
//! file, and the work stays near-linear: the step counter is bounded by a
//! multiple of the bytes parsed (the old pairwise checks were quadratic).
#![no_main]

use botscope_robotstxt::{ParseOptions, Robots, lint_counted};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = ParseOptions {
        max_bytes: Some(4096),
    };
    let robots = Robots::parse_with(data, &opts);
    let (diags, steps) = lint_counted(&robots);
    for d in diags {
        assert!(d.line <= robots.lines.saturating_add(1), "{d}");
        assert!(!d.message.is_empty());
    }
    let n = robots.parsed_bytes as u64 + 16;
    assert!(steps <= 64 * n, "{steps} steps for {n} bytes");
});
