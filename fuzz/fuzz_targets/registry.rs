//! Registry files and published lists from arbitrary bytes: an error with a
//! line or a registry that round-trips, never a panic.
#![no_main]

use botscope_botid::{Registry, import_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Registry::parse("fuzz.yaml", &text) {
        Ok(r) => {
            let again = Registry::parse("again", &r.to_yaml())
                .expect("a registry reads back what it writes");
            assert_eq!(again.bots().len(), r.bots().len());
            for b in r.bots() {
                for range in b.ranges().take(4) {
                    let _ = r.owners_of(match range {
                        botscope_botid::IpRange::V4(a, _) => std::net::IpAddr::V4(a.into()),
                        botscope_botid::IpRange::V6(a, _) => std::net::IpAddr::V6(a.into()),
                    });
                }
            }
        }
        Err(errors) => assert!(!errors.is_empty()),
    }
    let _ = import_list(&text);
});
