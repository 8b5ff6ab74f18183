//! Access-log lines and format strings from arbitrary bytes: a record or a
//! reason, never a panic.
#![no_main]

use botscope_accesslog::{LogFormat, detect};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for name in ["combined", "common", "vhost_combined", "json"] {
        if let Some(f) = LogFormat::preset(name) {
            let _ = f.parse_line(data);
        }
    }
    // The first line as a format string, the rest as lines in that format.
    let mut parts = data.splitn(2, |&b| b == b'\n');
    let spec = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let rest = parts.next().unwrap_or_default();
    if let Ok(f) = LogFormat::from_spec(&spec) {
        for line in rest.split(|&b| b == b'\n') {
            if let Ok(r) = f.parse_line(line) {
                assert!(r.status == 0 || (100..=999).contains(&r.status));
            }
        }
    }
    let lines: Vec<&[u8]> = rest.split(|&b| b == b'\n').take(20).collect();
    let _ = detect(&lines);
});
