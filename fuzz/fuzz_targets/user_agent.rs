//! User-Agent classification of arbitrary strings, and the verdict built
//! on it.
#![no_main]

use std::sync::OnceLock;

use botscope_botid::{Registry, UaClassifier, verify};
use libfuzzer_sys::fuzz_target;

static STATE: OnceLock<(Registry, UaClassifier)> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let (registry, classifier) = STATE.get_or_init(|| {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        (r, c)
    });
    let ua = String::from_utf8_lossy(data);
    let info = classifier.classify(&ua);
    if info.claimed_bot.is_some() {
        assert!(info.is_bot);
    }
    let ip = if data.len() >= 4 { std::net::IpAddr::from([data[0], data[1], data[2], data[3]]) } else { "192.0.2.1".parse().expect("ip") };
    let _ = verify(registry, ip, Some(&ua), &info, None, Default::default());
});
