//! The studies' methods on any bytes: Somesite's probes are at most one a
//! line (plus `/` and the dummy path), its judgement stays within its
//! work budget (plus one index or one probe's match) or says it is past
//! it, and Consent in Crisis's parser gives every agent a class. The
//! input is read as a robots.txt, and as a recipe for a file whose probes
//! all agree with `/` (so that every probe is asked about).
#![no_main]

use botscope_index::Restriction;
use botscope_index::studies::{Method, cic, somesite_counted, somesite_probes};
use botscope_robotstxt::Semantics;
use libfuzzer_sys::fuzz_target;

fn recipe(data: &[u8]) -> Vec<u8> {
    let lines = usize::from(data.first().copied().unwrap_or(0)) * 8;
    let stars = usize::from(data.get(1).copied().unwrap_or(0)) % 16;
    let mut b = b"User-agent: *\n".to_vec();
    for i in 0..lines {
        b.extend_from_slice(b"Allow: /");
        for _ in 0..stars {
            b.extend_from_slice(b"a*");
        }
        b.extend_from_slice(format!("p{i}\n").as_bytes());
    }
    b
}

fuzz_target!(|data: &[u8]| {
    // No line can name the last: a line ends at its line break.
    let agents: Vec<String> = ["GPTBot", "Kangaroo Bot", "*", "b1", "no\nagent"]
        .map(str::to_owned)
        .to_vec();
    for body in [data.to_vec(), recipe(data)] {
        let text = String::from_utf8_lossy(&body);
        let probes = somesite_probes(&text);
        assert!(probes.len() <= text.split('\n').count() + 2);
        let cap = 50_000;
        let mut work = 0;
        let r = somesite_counted(&body, &agents, cap, &mut work);
        let slack = 4 * (body.len() as u64 + 64) * 64;
        assert!(work <= cap + slack, "{work} units for {} bytes", body.len());
        if let Some(r) = r {
            assert_eq!(r.len(), agents.len());
        }
        let c = cic(&body, &agents);
        assert_eq!(c.len(), agents.len());
        // An agent the file cannot name exactly takes `*`'s class.
        assert_eq!(c[4], cic(&body, &["*".to_owned()])[0]);
        let (j, _) = Method::Cic.judge(&body, &agents, Semantics::Google);
        assert_eq!(j, c);
        let _: &[Restriction] = &j;
    }
});
