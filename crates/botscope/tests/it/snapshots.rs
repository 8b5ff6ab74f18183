//! Whole outputs, snapshotted: `logs analyze` in every format on the
//! shipped logs and on the synthetic log, and the store's totals and
//! export. These are the contracts the pipelines keep wherever they live.
//! HTML is compared as its token stream (tags, sorted attributes, decoded
//! text), so the serialisation may change but not what a browser reads.

use std::path::PathBuf;

use crate::{arg, run, scratch};

const LOGS: [(&str, &str); 3] = [
    ("elastic", "examples/logs/elastic_examples_apache_logs.log"),
    (
        "hackers",
        "examples/logs/nielsbasjes_logparser_hackers-access.log",
    ),
    (
        "vhost",
        "examples/logs/pypi_apachelogs-0.6.1_vhost_combined.log",
    ),
];

const FORMATS: [&str; 4] = ["json", "csv", "text", "html"];

/// The synthetic log (8,000 lines, seed 1), written once per process.
fn synthetic() -> PathBuf {
    static LOG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let p = scratch("synthetic").join("synthetic.log");
        let f = std::fs::File::create(&p).expect("create");
        botscope_testkit::synthlog::write(f, 8_000, 1).expect("write");
        p
    })
    .clone()
}

fn analyze(log: &str, format: &str, extra: &[&str]) -> String {
    let mut args = vec!["logs", "analyze", "--format", format, log];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Scratch paths differ from run to run.
    let scratch = crate::scratch_root().display().to_string();
    let out = String::from_utf8(o.stdout)
        .expect("UTF-8 output")
        .replace(&scratch, "[scratch]");
    if format == "html" {
        botscope_testkit::normalize_html(&out)
    } else {
        out
    }
}

#[test]
fn logs_analyze_shipped_logs() {
    for (name, log) in LOGS {
        for format in FORMATS {
            insta::assert_snapshot!(format!("logs_{name}_{format}"), analyze(log, format, &[]));
        }
    }
}

#[test]
fn logs_analyze_synthetic_log() {
    let log = synthetic();
    for format in FORMATS {
        insta::assert_snapshot!(
            format!("logs_synthetic_{format}"),
            analyze(arg(&log), format, &[])
        );
    }
}

#[test]
fn logs_analyze_with_dated_robots_txt() {
    let log = synthetic();
    let old = crate::tmp(
        "snap-robots-old.txt",
        b"User-agent: *\nDisallow: /private/\nCrawl-delay: 5\n",
    );
    let new = crate::tmp(
        "snap-robots-new.txt",
        b"User-agent: *\nDisallow: /private/\nDisallow: /search\n\nUser-agent: GPTBot\nDisallow: /\n",
    );
    let old = format!("{}", old.display());
    let new = format!("2025-11-22T00:20:00Z={}", new.display());
    let json = analyze(
        arg(&log),
        "json",
        &["--robots", &old, "--robots", &new, "--threads", "3"],
    );
    // What the robots.txt versions change: the versions, the site's
    // disallowed count and each robot's figures. (The file names are the
    // test's scratch paths.)
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let part = serde_json::json!({
        "robots_txt": v["robots_txt"],
        "compliance": v["compliance"],
        "site": v["site"],
        "robots": v["robots"],
    });
    insta::assert_snapshot!(serde_json::to_string_pretty(&part).expect("json"));
    // The compliance tables as a person reads them.
    let text = analyze(arg(&log), "text", &["--robots", &old, "--robots", &new]);
    let tables = text
        .find("\nrobots.txt compliance")
        .map(|i| &text[i..])
        .expect("compliance tables");
    let tables = tables.split("\nspoofed robots").next().unwrap_or(tables);
    insta::assert_snapshot!("logs_analyze_with_dated_robots_txt_text", tables);
}

#[test]
fn store_stats_and_export() {
    let d = scratch("store-snapshot");
    let (_, warc) = crate::store::sample_warc();
    let input = d.join("crawl.warc.gz");
    std::fs::write(&input, &warc).expect("write");
    let db = d.join("s.db");
    let o = run(&[
        "store",
        "import",
        "--db",
        arg(&db),
        "--format",
        "warc",
        arg(&input),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = run(&["store", "stats", "--db", arg(&db)]);
    let path = db.display().to_string();
    insta::assert_snapshot!(
        "store_stats_text",
        String::from_utf8_lossy(&text.stdout).replace(&path, "[db]")
    );
    let json = run(&["store", "stats", "--db", arg(&db), "--format", "json"]);
    let mut v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    // Maps print in a stable order.
    v.sort_all_objects();
    insta::assert_snapshot!(
        "store_stats_json",
        serde_json::to_string_pretty(&v).expect("json")
    );
    let jsonl = run(&["store", "export", "--db", arg(&db), "--format", "jsonl"]);
    insta::assert_snapshot!("store_export_jsonl", String::from_utf8_lossy(&jsonl.stdout));
}
