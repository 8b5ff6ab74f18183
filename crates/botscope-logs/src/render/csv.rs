//! The report as CSV: one row per robot, most requests first, written by
//! the `csv` crate from a typed row.

use botscope_accesslog::Report;
use serde::{Serialize, Serializer};

use super::robot_rows;

/// CSV columns, in order (a stable contract, docs/log-analysis.md).
pub const CSV_COLUMNS: &[&str] = &[
    "robot",
    "category",
    "registered",
    "requests",
    "sessions",
    "unique_ips",
    "unique_uas",
    "bytes",
    "robots_txt_fetches",
    "judged_requests",
    "disallowed_requests",
    "disallowed_share",
    "crawl_delay_s",
    "crawl_delay_breaches",
    "median_gap_s",
    "peak_requests_per_minute",
    "status_2xx",
    "status_3xx",
    "status_4xx",
    "status_5xx",
    "first_seen",
    "last_seen",
    "verified_ips",
    "spoofed_ips",
    "unverifiable_ips",
    "unchecked_ips",
    "top_path",
    "signed_requests",
    "verified_signatures",
    "client_type",
    "study_sessions",
    "study_sessions_reading_robots_txt",
    "study_judged_sessions",
    "study_compliant_sessions",
    "verified_closed_requests",
    "verified_closed_answered",
    "claim",
];

/// Numbers as Rust shows them (`0.5`, `2`), the form the columns promise.
fn shown<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn shown_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_str(""),
    }
}

/// One robot's row; the fields are the columns, in order.
#[derive(Debug, Serialize)]
struct Row<'a> {
    /// Strangers' text (a robot is named from its User-Agent, the path is
    /// the client's): a cell that would run as a formula is neutralised.
    robot: std::borrow::Cow<'a, str>,
    category: Option<&'a str>,
    registered: bool,
    requests: u64,
    sessions: u64,
    unique_ips: u64,
    unique_uas: u64,
    bytes: u64,
    robots_txt_fetches: u64,
    judged_requests: u64,
    disallowed_requests: u64,
    #[serde(serialize_with = "shown")]
    disallowed_share: f64,
    #[serde(serialize_with = "shown_opt")]
    crawl_delay_s: Option<f64>,
    crawl_delay_breaches: u64,
    #[serde(serialize_with = "shown_opt")]
    median_gap_s: Option<f64>,
    peak_requests_per_minute: u64,
    status_2xx: u64,
    status_3xx: u64,
    status_4xx: u64,
    status_5xx: u64,
    first_seen: &'a str,
    last_seen: &'a str,
    verified_ips: u64,
    spoofed_ips: u64,
    unverifiable_ips: u64,
    unchecked_ips: u64,
    top_path: std::borrow::Cow<'a, str>,
    signed_requests: u64,
    verified_signatures: u64,
    client_type: &'a str,
    /// Kim et al.'s sessions (5 minutes' quiet): all, those that read
    /// robots.txt, those begun under a directive, those that complied
    /// (empty without a robots.txt).
    study_sessions: Option<u64>,
    study_sessions_reading_robots_txt: Option<u64>,
    study_judged_sessions: Option<u64>,
    study_compliant_sessions: Option<u64>,
    /// Stated versus enforced: closed requests from verified addresses,
    /// and those answered 2xx.
    verified_closed_requests: u64,
    verified_closed_answered: u64,
    /// `own` (the robot's addresses) or `spoofed` (addresses that
    /// claimed it falsely: their row carries no robot-wide figures).
    claim: &'static str,
}

/// One row per robot, with a header, and a row for its impostors below
/// it when there were any.
pub fn csv(r: &Report) -> String {
    to_csv(robot_rows(r).into_iter().map(|row| {
        let (b, f) = (row.robot, row.figures);
        // The robot-wide figures (pace, verification, signatures, the
        // studies) belong to its own row.
        let own = (!row.spoofed).then_some(b);
        let status = |k: &str| f.status.get(k).copied().unwrap_or(0);
        let compliance = own.and_then(|b| b.compliance.as_ref());
        let enforcement = own.and_then(|b| b.enforcement.as_ref());
        let signatures = own.and_then(|b| b.signatures);
        let verification = match own {
            Some(b) => b.verification,
            None => botscope_accesslog::Verification {
                spoofed: botscope_accesslog::CheckCount {
                    ips: f.unique_ips,
                    requests: f.requests,
                },
                ..Default::default()
            },
        };
        Row {
            robot: botscope_text::csv_cell(row.name),
            category: b.category.as_deref(),
            registered: b.registered,
            requests: f.requests,
            sessions: f.sessions,
            unique_ips: f.unique_ips,
            unique_uas: f.unique_uas,
            bytes: f.bytes,
            robots_txt_fetches: f.robots_txt_fetches,
            judged_requests: f.judged_requests,
            disallowed_requests: f.disallowed_requests,
            disallowed_share: f.disallowed_share,
            crawl_delay_s: own.and_then(|b| b.pace.crawl_delay_s),
            crawl_delay_breaches: own.map_or(0, |b| b.pace.crawl_delay_breaches),
            median_gap_s: own.and_then(|b| b.pace.median_gap_s),
            peak_requests_per_minute: own.map_or(0, |b| b.pace.peak_requests_per_minute),
            status_2xx: status("2xx"),
            status_3xx: status("3xx"),
            status_4xx: status("4xx"),
            status_5xx: status("5xx"),
            first_seen: &f.first_seen,
            last_seen: &f.last_seen,
            verified_ips: verification.verified.ips,
            spoofed_ips: verification.spoofed.ips,
            unverifiable_ips: verification.unverifiable.ips,
            unchecked_ips: verification.unchecked.ips,
            top_path: botscope_text::csv_cell(
                own.and_then(|b| b.top_paths.first())
                    .map_or("", |p| p.path.as_str()),
            ),
            signed_requests: signatures.map_or(0, |s| s.signed),
            verified_signatures: signatures.map_or(0, |s| s.verified),
            client_type: b.client_type,
            study_sessions: compliance.map(|c| c.sessions),
            study_sessions_reading_robots_txt: compliance.map(|c| c.sessions_reading_robots_txt),
            study_judged_sessions: compliance.map(|c| c.judged_sessions()),
            study_compliant_sessions: compliance.map(|c| c.compliant_sessions()),
            verified_closed_requests: enforcement.map_or(0, |e| e.closed_requests),
            verified_closed_answered: enforcement
                .map_or(0, botscope_accesslog::Enforcement::answered),
            claim: row.claim(),
        }
    }))
}

fn to_csv<'a>(rows: impl Iterator<Item = Row<'a>>) -> String {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    // Writing to memory cannot fail.
    let _ = w.write_record(CSV_COLUMNS);
    for row in rows {
        let _ = w.serialize(row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_quoting() {
        let row = Row {
            robot: botscope_text::csv_cell("@Bot, \"the\" crawler"),
            category: None,
            registered: false,
            requests: 3,
            sessions: 1,
            unique_ips: 1,
            unique_uas: 1,
            bytes: 10,
            robots_txt_fetches: 0,
            judged_requests: 2,
            disallowed_requests: 1,
            disallowed_share: 0.5,
            crawl_delay_s: Some(10.0),
            crawl_delay_breaches: 0,
            median_gap_s: None,
            peak_requests_per_minute: 3,
            status_2xx: 3,
            status_3xx: 0,
            status_4xx: 0,
            status_5xx: 0,
            first_seen: "2025-11-22T00:00:00Z",
            last_seen: "2025-11-22T00:00:02Z",
            verified_ips: 0,
            spoofed_ips: 0,
            unverifiable_ips: 0,
            unchecked_ips: 1,
            top_path: botscope_text::csv_cell("=/a\nb"),
            signed_requests: 2,
            verified_signatures: 1,
            client_type: "crawler",
            study_sessions: Some(2),
            study_sessions_reading_robots_txt: Some(1),
            study_judged_sessions: Some(2),
            study_compliant_sessions: Some(1),
            verified_closed_requests: 3,
            verified_closed_answered: 2,
            claim: "own",
        };
        let out = to_csv([row].into_iter());
        let mut lines = out.split('\n');
        assert_eq!(lines.next(), Some(CSV_COLUMNS.join(",").as_str()));
        assert_eq!(
            lines.next(),
            Some(
                "\"'@Bot, \"\"the\"\" crawler\",,false,3,1,1,1,10,0,2,1,0.5,10,0,,3,3,0,0,0,\
                 2025-11-22T00:00:00Z,2025-11-22T00:00:02Z,0,0,0,1,'=/a\\x0ab,2,1,crawler,2,1,2,1,3,2,own"
            ),
            "formulas neutralised, a newline escaped"
        );
        assert_eq!(lines.next(), Some(""));
        assert_eq!(
            to_csv(std::iter::empty()),
            format!("{}\n", CSV_COLUMNS.join(","))
        );
    }
}
