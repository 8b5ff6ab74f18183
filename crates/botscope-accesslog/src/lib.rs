//! Access logs: lines in, records out. Parsing never fails on bad bytes: a
//! line is a [`Record`] or a [`Malformed`] reason, and [`MalformedStats`]
//! counts the reasons with the first line numbers as samples, so a report
//! can say exactly how much it did not understand. No I/O.
//!
//! ```
//! use botscope_accesslog::{detect, LogFormat, MalformedStats};
//! let lines: Vec<&[u8]> = vec![
//!     br#"66.249.66.1 - - [17/May/2015:10:05:03 +0000] "GET /robots.txt HTTP/1.1" 200 52 "-" "Googlebot/2.1""#,
//!     b"Bad line",
//! ];
//! let format = detect(&lines).unwrap();
//! assert_eq!(format.name(), "combined");
//! let mut bad = MalformedStats::default();
//! for (i, l) in lines.iter().enumerate() {
//!     if let Err(reason) = format.parse_line(l) {
//!         bad.add(reason, i as u64 + 1);
//!     }
//! }
//! assert_eq!(bad.total(), 1);
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod analyze;
mod compliance;
mod format;
mod json;
mod parse;
mod paths;
mod record;
mod report;
mod time;

use std::collections::BTreeMap;

pub use analyze::{
    Agent, AgentTally, Analysis, Analyzer, CLIENT_SAMPLES, CLOCK_SKEW, Class, Client,
    ClientSignatures, Clients, DISOBEDIENT_REQUESTS, Example, Folded, Groups, Identify, LOOKAHEAD,
    MAX_CLIENTS, MAX_SIGNATURE_AGENTS, NO_AGENT, NoPolicy, OTHER_AGENTS, PLAUSIBLE_SINCE, Partial,
    Policy, ROBOT_PATH_COUNTERS, Reason, SESSION_GAP, Second, Seconds, SignatureCheck,
    SignatureCounts, SignatureOutcome, SignatureSeen, Span, TOP_PATHS_CAP, TopPaths, Untracked,
    Window, classify, is_disobedient,
};
pub use compliance::{
    ANSWERS, Compliance, Directive, Enforcement, STUDY_SESSION_GAP, Under, UnderVersion, answer_of,
};
pub use format::{COMBINED, COMMON, Error, Field, LogFormat, VHOST_COMBINED};
pub use paths::{PROBES, PathKind, is_absolute, is_common_method, path_kind, path_only, probe};
pub use record::{MAX_LINE_BYTES, Malformed, Record, Signed};
pub use report::{
    Check, CheckCount, Checked, ClassTotals, ClientEntry, ClientList, Day, Disallowed, Figures,
    Hour, Input, LIST_LIMIT, LineAt, Lines, MalformedCount, OmittedRobots, Pace, PathCount, Period,
    ROBOTS_CAP, ReasonOut, Report, Robot, RobotsTxtVersion, SCHEMA, SITE_TOP_PATHS, SPOOFED_IPS,
    SignatureAgent, Site, TOP_PATHS, Verification, Vhost, build,
};
pub use time::{format_rfc3339, parse_clf_time, parse_clf_time_whole, parse_iso_time};

/// Sample line numbers kept per reason.
pub const SAMPLES: usize = 5;

/// Malformed lines, counted per reason, with the first line numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MalformedStats {
    by_reason: BTreeMap<Malformed, (u64, Vec<u64>)>,
}

impl MalformedStats {
    /// Counts one line.
    pub fn add(&mut self, reason: Malformed, line: u64) {
        let e = self.by_reason.entry(reason).or_default();
        e.0 += 1;
        if e.1.len() < SAMPLES {
            e.1.push(line);
        }
    }

    /// Adds another tally (from another thread). The samples stay the
    /// first line numbers of all, whatever order the tallies merge in.
    pub fn merge(&mut self, other: &MalformedStats) {
        for (r, (n, samples)) in &other.by_reason {
            let e = self.by_reason.entry(*r).or_default();
            e.0 += n;
            e.1.extend_from_slice(samples);
            e.1.sort_unstable();
            e.1.dedup();
            e.1.truncate(SAMPLES);
        }
    }

    /// Lines counted, all reasons.
    pub fn total(&self) -> u64 {
        self.by_reason.values().map(|v| v.0).sum()
    }

    /// (reason, count, sample line numbers), in reason order.
    pub fn reasons(&self) -> impl Iterator<Item = (Malformed, u64, &[u64])> {
        self.by_reason
            .iter()
            .map(|(r, (n, s))| (*r, *n, s.as_slice()))
    }
}

/// Picks the format that reads most of `sample` (the first lines of a
/// log): vhost_combined, combined, common or JSON lines.
pub fn detect(sample: &[&[u8]]) -> Option<LogFormat> {
    let candidates = ["vhost_combined", "combined", "common", "json"];
    candidates
        .iter()
        .filter_map(|n| LogFormat::preset(n))
        .map(|f| {
            let ok = sample.iter().filter(|l| f.parse_line(l).is_ok()).count();
            (ok, f)
        })
        .filter(|(ok, _)| *ok > 0)
        .max_by_key(|(ok, _)| *ok)
        .map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_samples_are_the_first_lines_in_any_order() {
        let mut a = MalformedStats::default();
        let mut b = MalformedStats::default();
        for l in [40, 50, 60, 70, 80, 90] {
            a.add(Malformed::BadTime, l);
        }
        for l in [1, 2, 45] {
            b.add(Malformed::BadTime, l);
        }
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab, ba);
        let (_, n, samples) = ab.reasons().next().expect("one reason");
        assert_eq!((n, samples), (9, &[1, 2, 40, 45, 50][..]));
    }
}
