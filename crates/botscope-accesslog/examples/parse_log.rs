//! Parses a whole log on one thread and prints lines/s and the malformed
//! tally; for profiling the parser.
//! `cargo run --release -p botscope-accesslog --example parse_log -- FILE`

use botscope_accesslog::{MalformedStats, detect};

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../../examples/logs/elastic_examples_apache_logs.log".into());
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let Some(format) = detect(&lines[..lines.len().min(200)]) else {
        eprintln!("{path}: no known format");
        return;
    };
    let start = std::time::Instant::now();
    let mut bad = MalformedStats::default();
    let mut bytes_sent = 0u64;
    for (i, l) in lines.iter().enumerate() {
        match format.parse_line(l) {
            Ok(r) => {
                bytes_sent += r.bytes;
                if r.truncated {
                    bad.add(botscope_accesslog::Malformed::Truncated, i as u64 + 1);
                }
            }
            Err(e) => bad.add(e, i as u64 + 1),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let rate = lines.len() as f64 / secs;
    println!(
        "{path}: {} lines as {} in {secs:.2} s = {rate:.0} lines/s, {bytes_sent} bytes sent",
        lines.len(),
        format.name()
    );
    for (reason, n, samples) in bad.reasons() {
        println!("  {}: {n} (lines {samples:?})", reason.as_str());
    }
}
