//! The honeypot over strangers' bytes: the answer for any `Host`, path and
//! User-Agent, and the ethics report over any log. Neither may panic; an
//! answer is always a status the server can send.
#![no_main]

use std::sync::OnceLock;

use botscope_botid::{Registry, UaClassifier};
use botscope_honeypot::{Design, report};
use libfuzzer_sys::fuzz_target;

fn parts() -> &'static (Registry, UaClassifier, Design) {
    static P: OnceLock<(Registry, UaClassifier, Design)> = OnceLock::new();
    P.get_or_init(|| {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        (r, c, Design::new(16, "hp.test", 2).expect("design"))
    })
}

fuzz_target!(|data: &[u8]| {
    let (registry, classifier, design) = parts();
    let text = String::from_utf8_lossy(data);
    let mut fields = text.splitn(3, '\n');
    let host = fields.next().unwrap_or("");
    let path = fields.next().unwrap_or("");
    let ua = fields.next();
    let a = design.answer(host, path, ua);
    assert!((200..600).contains(&a.status));
    let r = report::report(
        std::io::Cursor::new(data),
        design.clone(),
        registry,
        classifier,
    )
    .expect("reading memory cannot fail");
    for c in &r.crawlers {
        if let Some(s) = c.score {
            assert!((0.0..=100.0).contains(&s));
        }
    }
    let _ = report::text(&r);
    let _ = report::html(&r);
});
