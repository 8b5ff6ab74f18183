//! Access-log lines and format strings from arbitrary bytes: a record or a
//! reason, never a panic; then the records through the whole analysis
//! (two threads' partials merged, classified, reported): no panic, and
//! every record counted once.
#![no_main]

use botscope_accesslog::{
    Agent, Analyzer, Identify, LogFormat, Partial, Policy, Window, build, detect,
};
use libfuzzer_sys::fuzz_target;

struct Ua;
impl Identify for Ua {
    fn identify(&self, ua: Option<&str>) -> Agent {
        match ua {
            Some(u) if u.contains("bot") => Agent {
                robot: Some(u.chars().take(8).collect()),
                registered: u.len() % 2 == 0,
                token: Some("bot".into()),
                monitor: u.contains("up"),
                ..Agent::default()
            },
            _ => Agent::default(),
        }
    }
}

struct Rules;
impl Policy for Rules {
    fn disallowed(&self, _: Option<&str>, target: &str, time: i64) -> Option<bool> {
        (time % 3 != 0).then(|| target.contains('x'))
    }
    fn crawl_delay(&self, _: Option<&str>, time: i64) -> Option<f64> {
        (time % 2 == 0).then_some(5.0)
    }
}

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
        let mut parts = [
            Analyzer::new(&Ua, &Rules, Window::default()),
            Analyzer::new(&Ua, &Rules, Window::default()),
        ];
        let mut records = 0u64;
        for (n, line) in rest.split(|&b| b == b'\n').enumerate() {
            match f.parse_line(line) {
                Ok(r) => {
                    assert!(r.status == 0 || (100..=999).contains(&r.status));
                    records += 1;
                    parts[n % 2].record(&r, n as u64 + 1);
                }
                Err(reason) => parts[n % 2].malformed(reason, n as u64 + 1),
            }
        }
        let [a, b] = parts;
        let mut all = Partial::finish_all(vec![a.into_partial(), b.into_partial()], 2);
        let report = build(
            &mut all,
            &std::collections::HashMap::<usize, _>::new(),
            &Rules,
            2,
        );
        assert_eq!(report.lines.parsed, records);
        assert_eq!(report.site.requests, records);
        let _ = serde_json::to_string(&report);
    }
    let lines: Vec<&[u8]> = rest.split(|&b| b == b'\n').take(20).collect();
    let _ = detect(&lines);
});
