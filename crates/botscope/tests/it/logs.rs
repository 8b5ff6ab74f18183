//! `botscope logs`, run as a user runs it, on the real logs in
//! examples/logs (copies of the shared data set) and on made-up ones.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::{botscope, root, tmp};

fn json_report(args: &[&str], stdin: &[u8]) -> (Value, Output) {
    let mut all = vec!["logs", "analyze", "--format", "json"];
    all.extend_from_slice(args);
    let o = botscope(&all, stdin);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (v, o)
}

const ELASTIC: &str = "examples/logs/elastic_examples_apache_logs.log";
const HACKERS: &str = "examples/logs/nielsbasjes_logparser_hackers-access.log";
const VHOST: &str = "examples/logs/pypi_apachelogs-0.6.1_vhost_combined.log";

/// The four addresses of the elastic log that claim Googlebot from
/// outside Google's published ranges.
const FAKE_GOOGLEBOTS: [&str; 4] = [
    "177.37.188.215",
    "188.35.22.24",
    "200.141.109.74",
    "46.118.127.106",
];

fn googlebot_ips(r: &Value, key: &str) -> BTreeSet<String> {
    r["robots"]["Googlebot"][key]
        .as_array()
        .expect("ips")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Site-wide views: days add up to the site, top paths and 404s are the
/// log's, virtual hosts appear only when the format logs them, and
/// malformed samples name their input.
#[test]
fn days_paths_not_found_vhosts_and_sample_inputs() {
    let (r, o) = json_report(&[ELASTIC, VHOST], b"");
    assert_eq!(o.status.code(), Some(0));
    let days = r["daily"].as_array().expect("daily");
    let sum = |k: &str| days.iter().map(|d| d[k].as_u64().expect("n")).sum::<u64>();
    assert_eq!(sum("requests"), r["site"]["requests"].as_u64().expect("n"));
    assert_eq!(sum("bytes"), r["site"]["bytes"].as_u64().expect("n"));
    let classes = [
        "human",
        "declared_bot",
        "undeclared_bot",
        "scanner",
        "monitor",
    ];
    for d in days {
        let by_class: u64 = classes.iter().map(|k| d[k].as_u64().expect("n")).sum();
        assert_eq!(by_class, d["requests"].as_u64().expect("n"), "{d}");
    }
    assert_eq!(days[0]["day"], "2015-05-17");
    assert_eq!(r["top_paths"][0]["path"], "/favicon.ico");
    assert_eq!(r["top_paths"][0]["requests"], 807);
    let not_found = r["not_found"].as_array().expect("404s");
    assert_eq!(
        not_found[0]["path"],
        "/files/logstash/logstash-1.3.2-monolithic.jar"
    );
    assert_eq!(
        sum("not_found"),
        213,
        "every 404 of the log (awk '$9 == 404')"
    );
    // Only the vhost_combined input logs virtual hosts.
    assert_eq!(r["vhosts"].as_array().expect("vhosts").len(), 1);
    assert_eq!(r["vhosts"][0]["vhost"], "www.varonathe.org:80");
    assert_eq!(r["vhosts"][0]["requests"], 6);
    let samples: Vec<String> = r["malformed"]
        .as_array()
        .expect("malformed")
        .iter()
        .flat_map(|m| m["samples"].as_array().expect("samples").clone())
        .map(|s| format!("{}:{}", s["input"].as_str().expect("input"), s["line"]))
        .collect();
    assert!(samples.contains(&format!("{ELASTIC}:8899")), "{samples:?}");
    assert!(samples.contains(&format!("{VHOST}:5")), "{samples:?}");
    let (r, _) = json_report(&[ELASTIC], b"");
    assert!(r["vhosts"].as_array().expect("vhosts").is_empty());
}

/// The robots table names robots, never a browser or a piece of a host
/// name, and browsers with plugins or app names are not robots.
#[test]
fn robot_names_are_not_browsers() {
    for log in [ELASTIC, VHOST] {
        let (r, o) = json_report(&[log], b"");
        assert_eq!(o.status.code(), Some(0));
        let robots = r["robots"].as_object().expect("robots");
        for name in [
            "IE",
            "Chrome",
            "Opera 9.6",
            "Opera",
            "Mozilla",
            "Firefox",
            "com",
            "net",
        ] {
            assert!(
                !robots.contains_key(name),
                "{log}: {name} listed as a robot"
            );
        }
        assert!(!robots.is_empty());
    }
    let (r, _) = json_report(&[ELASTIC], b"");
    let robots = r["robots"].as_object().expect("robots");
    for name in [
        "tropicdesigns.net",
        "360Spider",
        "Googlebot",
        "Mozilla/4.0 (compatible;)",
    ] {
        assert!(robots.contains_key(name), "{name} missing");
    }
}

/// Each robot and listed client carries the kind of client its
/// User-Agent names, in JSON and CSV.
#[test]
fn robots_and_clients_have_a_client_type() {
    let mut log = String::new();
    for (i, ua) in [
        "python-requests/2.32.3",
        "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)",
        "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ]
    .iter()
    .enumerate()
    {
        log += &format!(
            "192.0.2.{} - - [20/Nov/2026:10:00:0{i} +0000] \"GET / HTTP/1.1\" 200 10 \"-\" \"{ua}\"\n",
            10 + i
        );
    }
    let (r, o) = json_report(&["-"], log.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    let types: BTreeSet<(String, String)> = r["robots"]
        .as_object()
        .expect("robots")
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v["client_type"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    for want in [
        ("python-requests", "library"),
        ("Feedly", "feed-reader"),
        ("UptimeRobot", "monitor"),
        ("Googlebot", "crawler"),
    ] {
        assert!(
            types.contains(&(want.0.to_owned(), want.1.to_owned())),
            "{want:?} in {types:?}"
        );
    }
    let o = botscope(&["logs", "analyze", "--format", "csv", "-"], log.as_bytes());
    let out = String::from_utf8_lossy(&o.stdout);
    let header: Vec<&str> = out.lines().next().unwrap_or("").split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "client_type")
        .unwrap_or_else(|| panic!("no client_type column: {out}"));
    assert!(
        out.lines()
            .any(|l| l.starts_with("python-requests,") && l.split(',').nth(col) == Some("library")),
        "{out}"
    );
}

#[test]
fn elastic_log_spoofed_googlebots_and_the_truncated_line() {
    let (r, o) = json_report(&[ELASTIC], b"");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(r["schema"], "botscope.logs/1");
    assert_eq!(r["lines"]["total"], 10_000);
    assert_eq!(r["lines"]["parsed"], 10_000, "every well-formed line");
    let truncated = r["malformed"]
        .as_array()
        .expect("malformed")
        .iter()
        .find(|m| m["reason"] == "truncated")
        .expect("the truncated line is reported");
    assert_eq!(truncated["sample_lines"][0], 8899);
    let g = &r["robots"]["Googlebot"];
    assert_eq!(g["category"], "search");
    // Offline, outside the published list is not evidence: Google documents
    // reverse DNS as the alternative.
    assert!(googlebot_ips(&r, "spoofed_ips").is_empty());
    assert_eq!(g["verification"]["unverifiable"]["ips"], 4);
    assert!(g["verification"]["verified"]["ips"].as_u64() > Some(0));
    // bingbot's 2015 addresses are not in today's list: unverifiable, not
    // spoofed.
    assert_eq!(r["robots"]["bingbot"]["verification"]["spoofed"]["ips"], 0);

    // With DNS, from a resolver that knows googlebot.com and has no PTR
    // for them: spoofed, with the reason.
    let server = botscope_testkit::Dnsmasq::start(&[
        "--local=/googlebot.com/",
        "--local=/google.com/",
        "--local=/in-addr.arpa/",
        "--host-record=googlebot.com,192.0.2.200",
    ]);
    let dns = server.addr().to_string();
    let (r, o) = json_report(
        &[
            ELASTIC,
            "--verify",
            "--dns",
            &dns,
            "--no-dns-cache",
            "--dns-timeout",
            "2",
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want: BTreeSet<String> = FAKE_GOOGLEBOTS.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(googlebot_ips(&r, "spoofed_ips"), want);
    assert_eq!(
        r["robots"]["Googlebot"]["verification"]["spoofed"]["ips"],
        4
    );
    // The spoofers are listed with the reason.
    let listed: Vec<&Value> = r["spoofed"]["clients"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|c| c["robot"] == "Googlebot")
        .collect();
    assert_eq!(listed.len(), 4);
    assert!(
        listed[0]["verification"]
            .as_str()
            .is_some_and(|s| s.contains("has no PTR record")),
        "{}",
        listed[0]["verification"]
    );
    drop(server);
    // Per-robot fields the report promises.
    for field in [
        "requests",
        "sessions",
        "unique_ips",
        "unique_uas",
        "bytes",
        "robots_txt_fetches",
        "disallowed_requests",
        "disallowed_share",
        "pace",
        "status",
        "first_seen",
        "last_seen",
        "top_paths",
        "verification",
        "category",
    ] {
        assert!(g.get(field).is_some(), "robots.Googlebot.{field}");
    }
    assert!(r["hourly"].as_array().is_some_and(|h| h.len() > 24));
    let share = r["site"]["robot_request_share"].as_f64().expect("share");
    assert!(share > 0.1 && share < 0.9, "{share}");
}

#[test]
fn hackers_log_is_mostly_robots_with_reasons() {
    let (r, _) = json_report(&[HACKERS], b"");
    assert_eq!(r["lines"]["parsed"], 3456);
    assert_eq!(r["lines"]["malformed"], 0);
    let classes = &r["site"]["classes"];
    let n = |k: &str| classes[k]["clients"].as_u64().expect("count");
    let total: u64 = [
        "human",
        "declared_bot",
        "undeclared_bot",
        "scanner",
        "monitor",
    ]
    .iter()
    .map(|k| n(k))
    .sum();
    let robots = n("undeclared_bot") + n("scanner");
    assert!(
        robots * 2 > total,
        "most clients are undeclared robots or scanners: {robots} of {total}"
    );
    for c in r["undeclared_bots"]["clients"].as_array().expect("list") {
        assert!(
            c["reasons"].as_array().is_some_and(|a| !a.is_empty()),
            "{c}"
        );
        // Robots posing as browsers: a type says what the string names.
        assert!(
            c["client_type"].as_str().is_some_and(|t| !t.is_empty()),
            "{c}"
        );
    }
    // The form spammers are caught posting seconds after loading the form.
    let codes: BTreeSet<&str> = r["undeclared_bots"]["clients"]
        .as_array()
        .expect("list")
        .iter()
        .flat_map(|c| c["reasons"].as_array().into_iter().flatten())
        .filter_map(|x| x["code"].as_str())
        .collect();
    assert!(codes.contains("quick-post"), "{codes:?}");
}

#[test]
fn vhost_log_and_its_bad_line() {
    let (r, _) = json_report(&[VHOST], b"");
    assert_eq!(r["lines"]["parsed"], 6);
    assert_eq!(r["lines"]["malformed"], 1);
    assert_eq!(r["malformed"][0]["sample_lines"][0], 5);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).expect("gz");
    gz.finish().expect("gz")
}

/// The same report, however the log is cut, compressed, ordered or fed.
#[test]
fn rotated_gzip_and_stdin_give_the_same_report() {
    let text = std::fs::read(root().join(ELASTIC)).expect("log");
    let lines: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    let (a, b) = lines.split_at(lines.len() / 3);
    let part1: Vec<u8> = a.concat();
    let part2: Vec<u8> = b.concat();
    // access.log.1.gz holds the older part in two gzip members; access.log the rest.
    let mut two_members = gzip(&part1[..part1.len() / 2]);
    two_members.extend(gzip(&part1[part1.len() / 2..]));
    let rotated = tmp("access.log.1.gz", &two_members);
    let current = tmp("access.log", &part2);
    // The inputs differ, and the malformed samples name them.
    let strip = |mut v: Value| {
        v["inputs"] = Value::Null;
        for m in v["malformed"].as_array_mut().into_iter().flatten() {
            m["samples"] = Value::Null;
        }
        v
    };
    let (whole, _) = json_report(&[ELASTIC], b"");
    // Newest first: out of order on purpose.
    let (split, o) = json_report(
        &[
            current.to_str().expect("path"),
            rotated.to_str().expect("path"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0));
    // Line numbers restart per input, so only the samples differ.
    let mut w = strip(whole.clone());
    let mut s = strip(split);
    w["malformed"] = Value::Null;
    s["malformed"] = Value::Null;
    let differ = |a: &Value, b: &Value| -> Vec<String> {
        let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
            return vec!["not objects".into()];
        };
        a.keys()
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect()
    };
    assert_eq!(differ(&w, &s), Vec::<String>::new());
    let (piped, _) = json_report(&["-"], &gzip(&text));
    assert_eq!(differ(&strip(piped), &strip(whole)), Vec::<String>::new());
}

/// Threads share the chunks as they come; the report must not depend on it.
#[test]
fn thread_count_does_not_change_the_report() {
    let text = std::fs::read(root().join(ELASTIC)).expect("log");
    // Several chunks for each thread, and scanners and malformed lines in each.
    let mut log = Vec::new();
    for _ in 0..4 {
        log.extend_from_slice(&text);
        log.extend_from_slice(b"not a log line\n");
    }
    let f = tmp("four.log", &log);
    let path = f.to_str().expect("path");
    let (one, _) = json_report(&[path, "--threads", "1"], b"");
    for n in ["2", "3"] {
        let (many, _) = json_report(&[path, "--threads", n], b"");
        assert!(one == many, "--threads {n} differs from --threads 1");
    }
}

#[test]
fn truncated_gzip_reports_what_came_before() {
    let text = std::fs::read(root().join(ELASTIC)).expect("log");
    let gz = gzip(&text);
    let cut = tmp("cut.log.gz", &gz[..gz.len() * 2 / 3]);
    let (r, o) = json_report(&[cut.to_str().expect("path")], b"");
    assert_eq!(o.status.code(), Some(3), "damaged input: exit 3");
    assert!(String::from_utf8_lossy(&o.stderr).contains("ends early"));
    let lines = r["lines"]["total"].as_u64().expect("lines");
    assert!(lines > 5000 && lines < 10_000, "{lines}");
    assert!(r["inputs"][0]["error"].is_string());
}

#[test]
fn robots_txt_versions_and_crawl_delay() {
    let v1 = tmp("robots-v1.txt", b"User-agent: *\nDisallow: /private/\n");
    let v2 = tmp(
        "robots-v2.txt",
        b"User-agent: *\nDisallow: /private/\n\nUser-agent: Googlebot\nDisallow: /beta/\nCrawl-delay: 10\n",
    );
    let line = |t: &str, path: &str| {
        format!(
            "66.249.66.1 - - [01/Mar/2024:{t} +0000] \"GET {path} HTTP/1.1\" 200 100 \"-\" \"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)\"\n"
        )
    };
    let mut log = String::new();
    // Before v2 (from 12:00): /beta/ is allowed, /private/ is not.
    log += &line("11:00:00", "/beta/a");
    log += &line("11:00:01", "/private/a");
    // Under v2: Googlebot's own group has no /private/ rule, /beta/ is out.
    log += &line("12:00:00", "/beta/b");
    log += &line("12:00:05", "/private/b");
    log += &line("12:00:30", "/robots.txt");
    log += &line("12:00:31", "/");
    let f = tmp("compliance.log", log.as_bytes());
    let v1_arg = v1.to_str().expect("path").to_owned();
    let v2_arg = format!("2024-03-01T12:00:00Z={}", v2.to_str().expect("path"));
    let (r, o) = json_report(
        &[
            f.to_str().expect("path"),
            "--robots",
            &v1_arg,
            "--robots",
            &v2_arg,
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let g = &r["robots"]["Googlebot"];
    assert_eq!(g["judged_requests"], 5, "robots.txt itself is never judged");
    assert_eq!(g["disallowed_requests"], 2);
    let paths: Vec<&str> = g["disallowed_examples"]
        .as_array()
        .expect("examples")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(paths, ["/private/a", "/beta/b"]);
    assert_eq!(g["pace"]["crawl_delay_s"], 10.0);
    // Under v2: gaps of 5, 25 and 1 seconds; 5 and 1 are under 10.
    assert_eq!(g["pace"]["crawl_delay_breaches"], 2);
    assert_eq!(r["robots_txt"][1]["from"], "2024-03-01T12:00:00Z");
}

#[test]
fn bad_input_is_counted_not_fatal() {
    let mut junk: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    junk.extend_from_slice(b"\n");
    // Enough readable lines (10 of about 400) for the input to be a log.
    for _ in 0..10 {
        junk.extend_from_slice(
            b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326 \"-\" \"caf\xe9 \xff\"\n",
        );
    }
    junk.extend_from_slice(
        b"1.2.3.4 - - [10/Oct/99999:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326 \"-\" \"x\"\n",
    );
    let f = tmp("junk.log", &junk);
    let (r, o) = json_report(
        &[f.to_str().expect("path"), "--log-format", "combined"],
        b"",
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        r["lines"]["parsed"], 10,
        "the non-UTF-8 User-Agent lines are read"
    );
    assert!(r["lines"]["malformed"].as_u64() >= Some(2));
    let reasons: BTreeSet<&str> = r["malformed"]
        .as_array()
        .expect("malformed")
        .iter()
        .filter_map(|m| m["reason"].as_str())
        .collect();
    assert!(reasons.contains("bad-time"), "{reasons:?}");
    // An unknown directive is a clear error, exit 2.
    let o = botscope(&["logs", "analyze", ELASTIC, "--log-format", "%h %Z"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--log-format"));
    // A missing file too.
    let o = botscope(&["logs", "analyze", "no/such.log"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_gigabyte_line_costs_no_memory() {
    let args = [
        "logs",
        "analyze",
        "--format",
        "json",
        "--log-format",
        "combined",
        "-",
    ];
    let o = crate::command().args(args).output_with(|mut i| {
        let block = vec![b'a'; 1 << 20];
        for _ in 0..1024 {
            if i.write_all(&block).is_err() {
                return;
            }
        }
        let _ = i.write_all(
            b"\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"x\"\n",
        );
    });
    assert_eq!(o.status.code(), Some(0));
    let r: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(r["lines"]["total"], 2);
    assert_eq!(r["lines"]["parsed"], 1);
    assert_eq!(r["malformed"][0]["reason"], "too-long");
    assert_eq!(r["malformed"][0]["sample_lines"][0], 1);
}

#[test]
fn text_and_csv() {
    let o = botscope(&["logs", "analyze", ELASTIC], b"");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("10000 lines, 10000 parsed"), "{text}");
    assert!(text.contains("spoofed robots: "));
    let o = botscope(&["logs", "analyze", ELASTIC, "--format", "csv"], b"");
    let csv = String::from_utf8_lossy(&o.stdout);
    let mut rows = csv.lines();
    assert!(
        rows.next()
            .is_some_and(|h| h.starts_with("robot,category,registered,requests,"))
    );
    let google = rows.find(|r| r.starts_with("Googlebot,")).expect("row");
    assert!(google.starts_with("Googlebot,search,true,543,"), "{google}");
}

/// `logs export-lists` of the elastic log into a fresh directory.
fn export_elastic_lists(name: &str) -> std::path::PathBuf {
    export_lists(name, &[ELASTIC])
}

/// `logs export-lists ARGS…` into a fresh directory, which must succeed.
fn export_lists(name: &str, args: &[&str]) -> std::path::PathBuf {
    let out = crate::scratch(name).join("out");
    let mut all = vec!["logs", "export-lists", "--out-dir", crate::arg(&out)];
    all.extend_from_slice(args);
    let o = botscope(&all, b"");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

#[test]
fn export_lists_sorts_requesters() {
    let out = export_elastic_lists("lists");
    let has = |dir: &str, ip: &str| out.join(dir).join(ip).exists();
    // Offline, a Googlebot from outside the published list has no evidence
    // against it: not on the blocklist.
    for ip in FAKE_GOOGLEBOTS {
        assert!(!has("suspect-bots", ip), "{ip}: no evidence offline");
        assert!(has("other-bots", ip), "{ip}");
    }
    // AhrefsBot is verified by its list alone: outside it is evidence.
    let suspects = std::fs::read_dir(out.join("suspect-bots"))
        .expect("suspect-bots")
        .count();
    assert!(suspects > 0, "list-only spoofers are suspects");
    let ok: Vec<String> = std::fs::read_dir(out.join("all-ok-bots"))
        .expect("all-ok-bots")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!ok.is_empty());
    assert!(out.join("googlebot").is_dir(), "a per-bot list");
    assert!(!ok.iter().any(|ip| has("suspect-bots", ip)));
}

#[test]
fn html_report_renders_in_chromium_without_console_errors() {
    // The detector works: a broken page is caught.
    let broken = tmp(
        "broken.html",
        b"<html><body><script>nosuchfn();</script></body></html>",
    );
    let (_, console) = chromium(&broken);
    assert!(
        console.iter().any(|l| l.contains("Uncaught")),
        "console errors must be visible: {console:?}"
    );
    let page = crate::scratch("report").join("report.html");
    let o = botscope(
        &[
            "logs",
            "analyze",
            ELASTIC,
            HACKERS,
            VHOST,
            "--format",
            "html",
            "--out",
            page.to_str().expect("path"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0));
    let html = std::fs::read_to_string(&page).expect("page");
    // No robots.txt was given: "Disallowed" says nothing was checked, not 0.
    let robots = html
        .split("id=\"robots\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the robots table");
    assert!(robots.contains("not checked"), "{robots}");
    // Data in the tables may quote URLs; the page itself loads nothing.
    for external in ["src=", "href="] {
        assert!(!html.contains(external), "no external resource: {external}");
    }
    assert!(!html.contains("<link"), "no stylesheet links");
    let (dom, console) = chromium(&page);
    assert!(console.is_empty(), "console: {console:?}");
    assert!(dom.contains("data-ready=\"1\""), "the script ran");
    let table = dom.split("id=\"robots\"").nth(1).expect("robot table");
    let table = table.split("</table>").next().expect("end");
    assert!(table.matches("<tr>").count() > 20, "rows for the robots");
    assert!(table.contains("Googlebot"));
    assert!(dom.contains("<svg"), "charts");
    // Read at 1,400 px: the page is no wider than the window (wide tables
    // scroll inside their box), and long paths are cut with the whole
    // path in their title.
    let width: u32 = dom
        .split("data-width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .and_then(|w| w.parse().ok())
        .expect("the page measured its width");
    assert!(width <= 1400, "the page is {width} px wide");
    assert!(
        dom.contains(
            "<code class=\"path\" title=\"/files/logstash/logstash-1.3.2-monolithic.jar\">"
        )
    );
    // What GoAccess users look for: days, top paths, 404s, virtual hosts.
    for id in ["days", "top-paths", "not-found", "vhosts"] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "table {id}");
    }
    let days = dom.split("id=\"days\"").nth(1).expect("days");
    let days = days.split("</table>").next().expect("end");
    for day in ["2015-05-17", "2015-05-20", "2019-05-06"] {
        assert!(days.contains(day), "{day}");
    }
    // Malformed samples name their file.
    assert!(dom.contains("pypi_apachelogs-0.6.1_vhost_combined.log:5"));
    assert!(dom.contains("elastic_examples_apache_logs.log:8899"));
    crate::a11y::assert_accessible("the logs analyze report", &page);
}

/// Opens a page in headless Chromium: (DOM after scripts, console lines).
fn chromium(page: &Path) -> (String, Vec<String>) {
    let profile = crate::scratch(&format!(
        "chromium-{}",
        page.file_name().and_then(|n| n.to_str()).unwrap_or("p")
    ));
    let p = botscope_testkit::chromium(&format!("file://{}", page.display()), &profile);
    (p.dom, p.console)
}

/// Strangers' bytes reach no terminal, spreadsheet or reader raw: text,
/// CSV and HTML escape control and bidi characters (CSV neutralises
/// formulas too); JSON keeps the exact string.
#[test]
fn untrusted_bytes_are_escaped_in_every_format() {
    // As Apache writes it: control bytes as `\xHH` (the reader decodes them).
    let clear = "EvilBot/1.0 \\x1b[2J\\x1b]0;owned\\x07";
    let bidi = "gnimoc \u{202E}1.0.0.721 morf crawler";
    let formula = "=cmd|' /C calc'!A0 crawler";
    let mut log = String::new();
    for (i, ua) in [clear, bidi, formula].iter().enumerate() {
        for s in 0..3 {
            log.push_str(&format!(
                "203.0.113.{} - - [10/Oct/2025:13:55:{s:02} +0000] \"GET /\\x1b[2J{s} HTTP/1.1\" 200 10 \"-\" \"{ua}\"\n",
                i + 1
            ));
        }
    }
    let file = tmp("hostile-uas.log", log.as_bytes());
    let run = |format: &str| {
        let o = botscope(
            &["logs", "analyze", crate::arg(&file), "--format", format],
            b"",
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).expect("utf-8")
    };
    for format in ["text", "csv", "html"] {
        let out = run(format);
        assert!(!out.contains('\u{1b}'), "{format}: a raw ESC");
        assert!(!out.contains('\u{7}'), "{format}: a raw BEL");
        assert!(!out.contains('\u{202E}'), "{format}: a raw bidi override");
        let shown = if format == "text" {
            "\\u{202e}"
        } else {
            "\\x1b[2J"
        };
        assert!(out.contains(shown), "{format}: the escape is shown:\n{out}");
    }
    let csv = run("csv");
    for line in csv.lines() {
        for cell in line.split(',') {
            let cell = cell.trim_start_matches('"');
            assert!(!cell.starts_with('='), "a formula cell: {line}");
        }
    }
    let json = run("json");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert!(
        json.contains("\\u001b[2J"),
        "JSON keeps the exact bytes, escaped by JSON"
    );
    assert_eq!(
        v["robots"]["EvilBot"]["top_paths"][0]["path"], "/\u{1b}[2J0",
        "JSON keeps the exact path"
    );
}

/// Input that is not a log in the format (random bytes, the wrong
/// `--log-format`) is exit 4 with the reasons; a window that holds no
/// request, or ends before it begins, is exit 2. Nothing is written: an
/// earlier report at `--out` stays.
#[test]
fn unreadable_input_and_empty_windows_write_nothing() {
    let out = tmp("kept-report.json", b"{\"earlier\": \"report\"}");
    let mut noise = Vec::new();
    let mut x: u32 = 12345;
    for _ in 0..100_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        noise.push((x >> 16) as u8);
    }
    let random = tmp("random.bin", &noise);
    let cases: [(Vec<&str>, i32, &str); 4] = [
        (vec![crate::arg(&random)], 4, "could be read as a log"),
        (
            vec![ELASTIC, "--log-format", "common"],
            4,
            "is --log-format right?",
        ),
        (
            vec![ELASTIC, "--since", "2020-01-01", "--until", "2019-01-01"],
            2,
            "the window ends before it begins",
        ),
        (
            vec![ELASTIC, "--since", "2020-01-01"],
            2,
            "no request lies between",
        ),
    ];
    for (args, code, msg) in cases {
        let mut all = vec![
            "logs",
            "analyze",
            "--format",
            "json",
            "--out",
            crate::arg(&out),
        ];
        all.extend_from_slice(&args);
        let o = botscope(&all, b"");
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert_eq!(
            std::fs::read(&out).expect("report"),
            b"{\"earlier\": \"report\"}",
            "{args:?}: the earlier report stays"
        );
    }
    // An empty input is no error: it holds no request and says so.
    let (r, o) = json_report(&["-"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(r["lines"]["total"], 0);
}

/// Undeclared robots (browsers' User-Agents, crawlers' behaviour) have a
/// list of their own.
#[test]
fn undeclared_robots_get_their_own_list() {
    let out = export_elastic_lists("undeclared");
    let (r, _) = json_report(&[ELASTIC], b"");
    let undeclared: Vec<String> = r["undeclared_bots"]["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .filter_map(|c| c["ip"].as_str().map(str::to_owned))
        .collect();
    assert!(!undeclared.is_empty());
    let listed = |ip: &str| out.join("undeclared-bots").join(ip).is_file();
    let elsewhere = |ip: &str| {
        ["suspect-bots", "other-bots"]
            .iter()
            .any(|d| out.join(d).join(ip).is_file())
    };
    assert!(
        undeclared.iter().all(|ip| listed(ip) || elsewhere(ip)),
        "every undeclared robot is listed (or in a list a verdict chose)"
    );
    assert!(undeclared.iter().any(|ip| listed(ip)));
}

/// Offline, claims outside the published lists are unverifiable, and the
/// report says how many and what decides them.
#[test]
fn the_report_says_what_decides_the_unverifiable_claims() {
    let o = botscope(&["logs", "analyze", ELASTIC, "--format", "text"], b"");
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    let note = out
        .lines()
        .find(|l| l.contains("could not be decided"))
        .unwrap_or_else(|| panic!("no note on the unverifiable claims:\n{out}"));
    assert!(
        note.contains("--verify") && note.contains("botscope data update"),
        "{note}"
    );
    assert!(note.starts_with(|c: char| c.is_ascii_digit()), "{note}");
}

/// A robot that breaks robots.txt is in `disobedient-bots`, whether it is
/// in a registry or not; a verified crawler's breaches and a robot's one
/// or two closed fetches are not enough to list it.
#[test]
fn robots_that_break_robots_txt_are_listed_disobedient() {
    let robots = tmp(
        "disobedient-robots.txt",
        b"User-agent: *\nDisallow: /private/\n",
    );
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let mut log = String::new();
    let mut line = |ip: &str, s: u32, path: &str, ua: &str| {
        log += &format!(
            "{ip} - - [20/Nov/2026:10:{:02}:{:02} +0000] \"GET {path} HTTP/1.1\" 200 100 \"-\" \"{ua}\"\n",
            s / 60,
            s % 60
        );
    };
    for s in 0..150 {
        line(
            "192.0.2.10",
            s,
            &format!("/private/{s}"),
            "python-requests/2.32.3",
        );
        line("192.0.2.11", s, &format!("/public/{s}"), "curl/8.5.0");
    }
    for s in 0..2 {
        line(
            "192.0.2.12",
            s,
            &format!("/private/{s}"),
            "Go-http-client/1.1",
        );
    }
    for s in 0..5 {
        line("66.249.66.200", s, &format!("/private/{s}"), googlebot);
        line("66.249.66.200", s + 10, "/public/", googlebot);
    }
    let f = tmp("disobedient.log", log.as_bytes());
    let out = export_lists(
        "disobedient",
        &[crate::arg(&f), "--robots", crate::arg(&robots)],
    );
    let listed = |dir: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(out.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(listed("disobedient-bots"), ["192.0.2.10"]);
    assert_eq!(listed("all-ok-bots"), ["66.249.66.200"], "verified stays");
    assert!(listed("suspect-bots").is_empty());
    // The report lists the same robots as disobedient, with how many
    // closed paths each asked for, in every format.
    let (r, o) = json_report(&[crate::arg(&f), "--robots", crate::arg(&robots)], b"");
    assert_eq!(o.status.code(), Some(0));
    let d = &r["disobedient"];
    assert_eq!(d["total"], 1, "{d}");
    assert_eq!(d["clients"][0]["ip"], "192.0.2.10");
    assert_eq!(d["clients"][0]["robot"], "python-requests");
    assert_eq!(d["clients"][0]["disallowed_requests"], 150);
    let o = botscope(
        &[
            "logs",
            "analyze",
            crate::arg(&f),
            "--robots",
            crate::arg(&robots),
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let at = text
        .find("\ndisobedient robots")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(text[at..].contains("192.0.2.10"), "{text}");
    assert!(
        text[at..].contains("150 of 150 requests robots.txt closed"),
        "{text}"
    );
    // Numbers in their number: one client, not "1 clients".
    assert!(
        text[at..].contains("closed): 1 client, 150 requests"),
        "{text}"
    );
    let o = botscope(
        &[
            "logs",
            "analyze",
            crate::arg(&f),
            "--robots",
            crate::arg(&robots),
            "--format",
            "html",
        ],
        b"",
    );
    let html = String::from_utf8_lossy(&o.stdout);
    assert!(
        html.contains("id=\"disobedient\""),
        "the HTML report has the list"
    );
}

/// A robot's row counts its own addresses only: what impostors did under
/// its name (requests, bytes, disallowed requests) is a row of its own,
/// in JSON, text, CSV and HTML. GPTBot is verified by OpenAI's published
/// ranges alone, so an address outside them is refuted offline.
#[test]
fn impostors_are_a_row_of_their_own_not_the_robots() {
    let robots = tmp(
        "impostor-robots.txt",
        b"User-agent: *\nDisallow: /private/\n",
    );
    let ua = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot";
    let mut log = String::new();
    for s in 0..20u32 {
        log += &format!(
            "20.171.207.97 - - [20/Nov/2026:10:00:{s:02} +0000] \"GET /public/{s} HTTP/1.1\" 200 1000 \"-\" \"{ua}\"\n"
        );
    }
    for (k, ip) in ["203.0.113.7", "198.51.100.8", "192.0.2.9"]
        .iter()
        .enumerate()
    {
        for s in 0..4u32 {
            log += &format!(
                "{ip} - - [20/Nov/2026:11:0{k}:{s:02} +0000] \"GET /private/{s} HTTP/1.1\" 200 50 \"-\" \"{ua}\"\n"
            );
        }
    }
    let f = tmp("impostors.log", log.as_bytes());
    let args = [crate::arg(&f), "--robots", crate::arg(&robots)];
    let (r, o) = json_report(&args, b"");
    assert_eq!(o.status.code(), Some(0));
    let g = &r["robots"]["GPTBot"];
    assert_eq!(g["requests"], 20, "{g}");
    assert_eq!(g["bytes"], 20_000);
    assert_eq!(g["unique_ips"], 1);
    assert_eq!(g["disallowed_requests"], 0, "the real GPTBot broke nothing");
    assert_eq!(g["disallowed_examples"], serde_json::json!([]));
    let i = &g["impostors"];
    assert_eq!(i["requests"], 12, "{i}");
    assert_eq!(i["bytes"], 600);
    assert_eq!(i["unique_ips"], 3);
    assert_eq!(i["disallowed_requests"], 12);
    assert_eq!(i["disallowed_share"], 1.0);
    assert_eq!(i["first_seen"], "2026-11-20T11:00:00Z");
    // The site still counts every robot request it was asked for.
    assert_eq!(r["site"]["disallowed_requests"], 12);

    let text =
        String::from_utf8_lossy(&botscope(&[&["logs", "analyze"][..], &args].concat(), b"").stdout)
            .into_owned();
    let row = |label: &str| {
        text.lines()
            .find(|l| l.split("  ").next() == Some(label))
            .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // robot, requests, ips, bytes (2 words), robots.txt, disallowed (2)…
    let own = row("GPTBot");
    assert_eq!(&own[1..3], ["20", "1"], "{own:?}");
    assert_eq!(&own[6..8], ["0", "(0.0%)"], "{own:?}");
    let fake = row("GPTBot (spoofed)");
    assert_eq!(&fake[2..4], ["12", "3"], "{fake:?}");
    assert_eq!(&fake[7..9], ["12", "(100.0%)"], "{fake:?}");

    let csv = String::from_utf8_lossy(
        &botscope(
            &[&["logs", "analyze", "--format", "csv"][..], &args].concat(),
            b"",
        )
        .stdout,
    )
    .into_owned();
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let head = rdr.headers().expect("header").clone();
    let col = |name: &str| head.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.expect("row")).collect();
    let got: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                &r[col("robot")],
                &r[col("claim")],
                &r[col("requests")],
                &r[col("disallowed_requests")],
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("GPTBot", "own", "20", "0"),
            ("GPTBot", "spoofed", "12", "12")
        ]
    );

    let html = String::from_utf8_lossy(
        &botscope(
            &[&["logs", "analyze", "--format", "html"][..], &args].concat(),
            b"",
        )
        .stdout,
    )
    .into_owned();
    assert!(
        html.contains("(spoofed)</span>"),
        "the impostors' row is marked"
    );
    // The report with robots.txt judged and spoofed claims (sections the
    // plain report lacks) is as readable.
    let page = tmp("impostors.html", html.as_bytes());
    crate::a11y::assert_accessible(
        "the logs analyze report with robots.txt and impostors",
        &page,
    );
}
