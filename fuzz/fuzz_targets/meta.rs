//! Read robots meta tags from arbitrary HTML, X-Robots-Tag values and
//! Content-Usage field lines (AI usage preferences, read together as one
//! Dictionary).
#![no_main]

use botscope_robotstxt::MetaReport;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = MetaReport::from_html(data, "Googlebot");
    let text = String::from_utf8_lossy(data);
    for line in text.lines().take(16) {
        r.add_header(line);
        r.add_usage_header(line);
    }
    if let Some(u) = &r.usage {
        assert!(u.values().all(|v| v == "y" || v == "n"), "{u:?}");
        assert!(
            u.keys()
                .all(|k| botscope_robotstxt::CATEGORIES.contains(&k.as_str())),
            "{u:?}"
        );
    }
    if r.directives.max_snippet.is_some_and(|n| n < -1) {
        panic!("max-snippet below -1");
    }
});
