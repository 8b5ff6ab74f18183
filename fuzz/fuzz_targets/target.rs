//! Request targets from arbitrary bytes: the normal form starts with `/`,
//! is printable ASCII, is its own normal form, holds no empty or dot
//! segment, and is at most three bytes per byte of input (its cost
//! bound); a target `ambiguity` passes has a normal form with none of the
//! spellings it refuses. The same bytes as a `Forwarded` header: one
//! address or none per element, an element the gate writes read back as
//! its address; never a panic.
#![no_main]

use botscope_policy::{ambiguity, forwarded, normalize_target};
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
    if target.starts_with('/') && ambiguity(&target).is_none() {
        for bad in [";", "%5C", "%00", "::$"] {
            assert!(!path.contains(bad), "{target:?} passed as {once:?}");
        }
        for seg in path.split('/').skip(1) {
            assert!(
                !seg.ends_with('.') && !seg.ends_with("%20"),
                "{target:?} passed as {once:?}"
            );
        }
    }
    let hops: Vec<_> = forwarded::hops([target.as_ref()]).collect();
    assert!(hops.len() <= target.len() + 1, "{target:?}");
    for ip in hops.into_iter().flatten() {
        let e = forwarded::element(ip, "http", Some(&target));
        assert_eq!(
            forwarded::hops([e.as_str()]).next(),
            Some(Some(ip)),
            "{e:?}"
        );
    }
});
