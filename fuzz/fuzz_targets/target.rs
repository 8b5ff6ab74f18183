//! Request targets from arbitrary bytes: the normal form starts with `/`,
//! is printable ASCII, is its own normal form, holds no empty or dot
//! segment, and is at most three bytes per byte of input (its cost
//! bound); never a panic.
#![no_main]

use botscope_policy::normalize_target;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let target = String::from_utf8_lossy(data);
    let once = normalize_target(&target).into_owned();
    assert!(once.starts_with('/'), "{target:?} -> {once:?}");
    assert!(once.bytes().all(|b| b.is_ascii_graphic()), "{once:?}");
    assert!(once.len() <= 3 * target.len() + 1, "{target:?} -> {once:?}");
    assert_eq!(normalize_target(&once), once, "{target:?}");
    let path = once.split('?').next().unwrap_or("");
    for seg in path.split('/').skip(1) {
        assert!(seg != "." && seg != "..", "{once:?}");
    }
    assert!(!path.contains("//"), "{once:?}");
});
