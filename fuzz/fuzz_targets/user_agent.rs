//! User-Agent classification of arbitrary strings (robot or not, and the
//! kind of client), and the verdict built on it.
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
    if let Some(bot) = &info.claimed_bot {
        assert!(info.is_bot);
        // A registered robot's type is its category's.
        let category = registry.get(bot).and_then(|b| b.category);
        assert_eq!(
            info.client_type,
            botscope_botid::ClientType::of_category(category)
        );
    }
    if ua.trim().is_empty() {
        assert_eq!(info.client_type, botscope_botid::ClientType::Unknown);
    }
    let ip = if data.len() >= 4 {
        std::net::IpAddr::from([data[0], data[1], data[2], data[3]])
    } else {
        "192.0.2.1".parse().expect("ip")
    };
    let _ = verify(registry, ip, Some(&ua), &info, None, Default::default());
    // The display name of a robot: never empty, never longer than the
    // User-Agent, no whitespace at either end.
    if let Some(name) = botscope_botid::robot_name(&ua) {
        assert!(!name.is_empty() && name.len() <= ua.len(), "{name:?}");
        assert_eq!(name.trim(), name, "{name:?}");
    }
});
