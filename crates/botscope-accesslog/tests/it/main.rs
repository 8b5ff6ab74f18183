//! The real logs shipped in examples/logs.

use std::path::PathBuf;

use botscope_accesslog::{LogFormat, Malformed, MalformedStats, detect};

fn log(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/logs")
            .join(name),
    )
    .expect("example log")
}

fn run(bytes: &[u8]) -> (String, usize, MalformedStats, Vec<String>) {
    let lines: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let format = detect(&lines[..lines.len().min(100)]).expect("a format");
    let mut bad = MalformedStats::default();
    let mut ok = 0;
    let mut uas = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match format.parse_line(l) {
            Ok(r) => {
                ok += 1;
                if r.truncated {
                    bad.add(Malformed::Truncated, i as u64 + 1);
                }
                uas.push(r.user_agent.map(|u| u.into_owned()).unwrap_or_default());
            }
            Err(reason) => bad.add(reason, i as u64 + 1),
        }
    }
    (format.name().to_owned(), ok, bad, uas)
}

#[test]
fn elastic_combined_every_line_and_the_truncated_one() {
    let (format, ok, bad, uas) = run(&log("elastic_examples_apache_logs.log"));
    assert_eq!(format, "combined");
    assert_eq!(
        ok, 10_000,
        "every line is a record, the truncated one recovered"
    );
    let reasons: Vec<(Malformed, u64, Vec<u64>)> =
        bad.reasons().map(|(r, n, s)| (r, n, s.to_vec())).collect();
    assert_eq!(reasons, vec![(Malformed::Truncated, 1, vec![8899])]);
    assert!(uas[8898].contains("Googlebot/2.1"));
}

#[test]
fn hackers_log() {
    let (format, ok, bad, _) = run(&log("nielsbasjes_logparser_hackers-access.log"));
    assert_eq!(format, "combined");
    assert_eq!(ok, 3_456);
    assert_eq!(bad.total(), 0);
}

#[test]
fn vhost_combined_with_one_bad_line() {
    let (format, ok, bad, _) = run(&log("pypi_apachelogs-0.6.1_vhost_combined.log"));
    assert_eq!(format, "vhost_combined");
    assert_eq!(ok, 6);
    assert_eq!(bad.total(), 1);
    assert_eq!(
        bad.reasons().next().map(|(_, _, s)| s.to_vec()),
        Some(vec![5])
    );
}

#[test]
fn nginx_and_apache_strings_read_the_same_line() {
    let line = br#"203.0.113.9 - - [06/May/2019:06:28:21 +0000] "GET /help.php HTTP/1.1" 301 592 "-" "curl/8.0" 0.012"#;
    let nginx = LogFormat::nginx(r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time"#).expect("nginx");
    let apache = LogFormat::apache(r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %T"#)
        .expect("apache");
    let a = nginx.parse_line(line).expect("nginx line");
    let b = apache.parse_line(line).expect("apache line");
    assert_eq!(
        (a.ip, a.time, a.status, a.bytes),
        (b.ip, b.time, b.status, b.bytes)
    );
    assert_eq!(a.duration_us, Some(12_000));
    assert_eq!(
        b.duration_us,
        Some(12_000),
        "a fractional %T is read as written"
    );
}

#[test]
fn json_lines() {
    let f = LogFormat::preset("json").expect("json");
    let r = f
        .parse_line(br#"{"remote_addr":"::ffff:192.0.2.1","time_iso8601":"2026-11-22T10:00:00+00:00","request":"GET /a?b HTTP/2.0","status":"200","body_bytes_sent":512,"http_user_agent":"GPTBot/1.2","request_time":"0.250"}"#)
        .expect("json line");
    assert_eq!(r.ip.to_string(), "192.0.2.1");
    assert_eq!(
        (r.path.as_ref(), r.status, r.bytes, r.duration_us),
        ("/a?b", 200, 512, Some(250_000))
    );
    assert_eq!(
        f.parse_line(b"{\"status\":200}").err(),
        Some(Malformed::MissingField)
    );
    assert_eq!(f.parse_line(b"[1,2]").err(), Some(Malformed::BadJson));
}

#[test]
fn never_panics_on_junk() {
    let f = LogFormat::preset("combined").expect("combined");
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    for _ in 0..20_000 {
        let n = (state % 200) as usize;
        let line: Vec<u8> = (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let alphabet = b" \"[]-:/\\x0123456789GETHTP.\xff";
                alphabet[(state % alphabet.len() as u64) as usize]
            })
            .collect();
        let _ = f.parse_line(&line);
        let _ = LogFormat::json().parse_line(&line);
    }
}

/// The probe found in each request target of the real logs is the one a
/// plain search finds: the leftmost, and at one place the first listed,
/// ASCII case ignored (whatever prefilter the search uses).
#[test]
fn probes_in_real_targets_are_those_a_plain_search_finds() {
    let plain = |t: &str| -> Option<&'static str> {
        let lower = t.to_ascii_lowercase();
        (0..lower.len()).find_map(|at| {
            botscope_accesslog::PROBES
                .iter()
                .find(|p| lower[at..].starts_with(&p.to_ascii_lowercase()))
                .copied()
        })
    };
    let mut found = 0;
    for name in [
        "elastic_examples_apache_logs.log",
        "nielsbasjes_logparser_hackers-access.log",
        "pypi_apachelogs-0.6.1_vhost_combined.log",
    ] {
        let bytes = log(name);
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let format = detect(&lines[..lines.len().min(100)]).expect("a format");
        for l in lines {
            let Ok(r) = format.parse_line(l) else {
                continue;
            };
            let want = plain(&r.path);
            assert_eq!(
                botscope_accesslog::probe(&r.path),
                want,
                "{name}: {}",
                r.path
            );
            found += usize::from(want.is_some());
        }
    }
    assert!(found > 30, "the logs hold probes: {found}");
}
