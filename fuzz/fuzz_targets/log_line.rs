//! Access-log lines and format strings from arbitrary bytes: a record or a
//! reason, never a panic, the same parsed into a reused record and by the
//! format's steps alone as by the hand-written reader; then the
//! records through the whole analysis (two threads' partials merged,
//! classified, reported): no panic, every record counted once, and the
//! same report with the records folded a few at a time, their clients
//! looked up ahead (`Analyzer::record_all`); and every time after a `[`
//! read as it is read in full.
#![no_main]

use botscope_accesslog::{
    Agent, Analyzer, Identify, LogFormat, Partial, Policy, Record, Report, Window, build, detect,
    parse_clf_time, parse_clf_time_whole,
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

/// Two threads' partials merged, classified and reported.
fn report_of(parts: [Analyzer<'_>; 2]) -> Report {
    let [a, b] = parts;
    let mut all = Partial::finish_all(vec![a.into_partial(), b.into_partial()], 2);
    build(
        &mut all,
        &std::collections::HashMap::<usize, _>::new(),
        &Rules,
        2,
    )
}

fuzz_target!(|data: &[u8]| {
    // One record reused across formats: nothing of one line stays.
    let mut reused = Record::blank();
    let nginx = LogFormat::nginx(
        r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#,
    )
    .ok();
    let formats = ["combined", "common", "vhost_combined", "json"]
        .into_iter()
        .map(LogFormat::preset)
        .chain([nginx]);
    for f in formats.flatten() {
        let once = f.parse_line(data);
        // The common log format's family is read by hand: as its steps read it.
        assert_eq!(once, f.clone().by_steps().parse_line(data));
        let again = f.parse_line_into(data, &mut reused);
        match once {
            Ok(r) => assert!(again.is_ok() && reused == r),
            Err(e) => assert_eq!(again, Err(e)),
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
        let mut ahead = [
            Analyzer::new(&Ua, &Rules, Window::default()),
            Analyzer::new(&Ua, &Rules, Window::default()),
        ];
        let mut pending: [Vec<(Record<'_>, u64)>; 2] = [Vec::new(), Vec::new()];
        let mut records = 0u64;
        let steps = f.clone().by_steps();
        for (n, line) in rest.split(|&b| b == b'\n').enumerate() {
            let (t, at) = (n % 2, n as u64 + 1);
            let parsed = f.parse_line(line);
            assert_eq!(parsed, steps.parse_line(line));
            match parsed {
                Ok(r) => {
                    assert!(r.status == 0 || (100..=999).contains(&r.status));
                    records += 1;
                    parts[t].record(&r, at);
                    pending[t].push((r, at));
                    if pending[t].len() == 3 {
                        ahead[t].record_all(&pending[t]);
                        pending[t].clear();
                    }
                }
                Err(reason) => {
                    parts[t].malformed(reason, at);
                    ahead[t].record_all(&pending[t]);
                    pending[t].clear();
                    ahead[t].malformed(reason, at);
                }
            }
        }
        for (a, p) in ahead.iter_mut().zip(&pending) {
            a.record_all(p);
        }
        let report = report_of(parts);
        let json = serde_json::to_string(&report).unwrap_or_default();
        assert_eq!(
            serde_json::to_string(&report_of(ahead)).unwrap_or_default(),
            json
        );
        assert_eq!(report.lines.parsed, records);
        assert_eq!(report.site.requests, records);
    }
    let lines: Vec<&[u8]> = rest.split(|&b| b == b'\n').take(20).collect();
    let _ = detect(&lines);
    // Every time after a `[`, read in turn (the day each remembers for
    // the next): as read in full; and each with the next one's time of
    // day, so that the remembered day answers for times of day the
    // fuzzer chooses.
    let times: Vec<&[u8]> = (0..data.len())
        .filter(|&i| data[i] == b'[')
        .map(|i| &data[i + 1..data.len().min(i + 27)])
        .collect();
    for (k, t) in times.iter().enumerate() {
        assert_eq!(parse_clf_time(t), parse_clf_time_whole(t));
        if let Some(u) = times.get(k + 1)
            && t.len() == 26
            && u.len() >= 20
        {
            let v = [&t[..12], &u[12..20], &t[20..]].concat();
            assert_eq!(parse_clf_time(&v), parse_clf_time_whole(&v));
        }
    }
});
