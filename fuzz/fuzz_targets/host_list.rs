//! Host lists: any bytes give distinct, valid, lowercase host names plus
//! counted junk, never a panic.
#![no_main]

use std::collections::HashSet;

use botscope_text::host_of;
use botscope_text::hosts::read_host_list;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(l) = read_host_list(data) else { return };
    let mut seen = HashSet::new();
    for (_, h) in &l.hosts {
        assert!(!h.is_empty() && h.len() <= 253, "{h:?}");
        assert_eq!(h, &h.to_ascii_lowercase());
        assert_eq!(
            host_of(h).as_deref(),
            Some(h.as_str()),
            "a host is its own host"
        );
        assert!(seen.insert(h.clone()), "{h} twice");
    }
    assert!(l.junk.len() <= 5 && l.junk.len() as u64 <= l.junk_count);
});
