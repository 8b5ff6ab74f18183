//! Verdicts straight from a WARC file, without a store or an index: each
//! robots.txt capture read as `botscope store import` reads it (the same
//! fetch policy, the same size cap), and judged per agent by each method
//! asked. This is what `botscope.spark` runs inside Spark's executors:
//! one call per WARC file, no process per record.

use std::collections::HashMap;
use std::io::BufRead;

use botscope_robotstxt::{FetchPolicy, Semantics};
use botscope_store::{Imported, StoreError};

use crate::Restriction;
use crate::studies::Method;

/// Bytes of bodies remembered with their verdicts in one file: equal
/// files (hosting platforms serve thousands of sites one robots.txt) are
/// judged once.
const MEMO_BYTES: usize = 16 * 1024 * 1024;

/// One robots.txt capture, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureVerdict {
    /// The crawl the file's last `warcinfo` record named (`isPartOf`).
    pub crawl: Option<String>,
    /// The host (lower case), as the store keys its sites.
    pub host: String,
    /// When it was captured (`WARC-Date`, Unix seconds).
    pub time: i64,
    /// The HTTP status.
    pub status: Option<u16>,
    /// The fetch policy's outcome (`parse`, `allow-all`, `disallow-all`, …).
    pub outcome: String,
    /// It brought a robots.txt to parse (the store's "found"): only then
    /// are there verdicts.
    pub found: bool,
    /// Per agent (in the order asked), per method (in the order asked):
    /// its restriction. Empty when not `found`.
    pub verdicts: Vec<Vec<Restriction>>,
    /// A method was past its work budget on this file, which was judged
    /// as the exact engine judges it (as trends counts it).
    pub past_budget: bool,
}

/// A WARC file's captures, judged.
#[derive(Debug, Default)]
pub struct WarcVerdicts {
    /// In file order.
    pub captures: Vec<CaptureVerdict>,
    /// What was read.
    pub counts: Imported,
    /// The file was damaged here: the captures before it are kept.
    pub damage: Option<StoreError>,
}

/// Reads one (decompressed) WARC stream and judges each robots.txt
/// capture that brought a file for each of `agents` by each of `methods`
/// (`semantics` for the exact engine). Bodies are cut at `policy`'s size
/// cap as the store cuts them. `note` hears of records skipped and
/// responses that cannot be read. Each file costs what its methods cost
/// ([`crate::studies::STUDY_WORK_CAP`] per method and file at most).
pub fn warc_verdicts(
    input: impl BufRead,
    agents: &[String],
    methods: &[Method],
    semantics: Semantics,
    policy: &FetchPolicy,
    note: &mut dyn FnMut(&str),
) -> WarcVerdicts {
    let mut out = WarcVerdicts::default();
    let mut memo: HashMap<Vec<u8>, (Vec<Vec<Restriction>>, bool)> = HashMap::new();
    let mut memo_bytes = 0usize;
    let mut counts = Imported::default();
    let damage =
        botscope_store::read_captures(input, policy, 0, &mut counts, note, &mut |a, crawl| {
            let found = a.body.is_some();
            let (verdicts, past_budget) = match &a.body {
                None => (Vec::new(), false),
                Some(body) => match memo.get(body) {
                    Some(v) => v.clone(),
                    None => {
                        let v = judge(body, agents, methods, semantics);
                        if memo_bytes + body.len() <= MEMO_BYTES {
                            memo_bytes += body.len();
                            memo.insert(body.clone(), v.clone());
                        }
                        v
                    }
                },
            };
            out.captures.push(CaptureVerdict {
                crawl: crawl.map(str::to_owned),
                host: a.host,
                time: a.time,
                status: a.status,
                outcome: a.outcome,
                found,
                verdicts,
                past_budget,
            });
            Ok(())
        });
    out.counts = counts;
    out.damage = match damage {
        Ok(d) => d,
        Err(e) => Some(e),
    };
    out
}

/// Per agent, per method, and whether a method was past its budget.
fn judge(
    body: &[u8],
    agents: &[String],
    methods: &[Method],
    semantics: Semantics,
) -> (Vec<Vec<Restriction>>, bool) {
    let mut per = vec![Vec::with_capacity(methods.len()); agents.len()];
    let mut past = false;
    for m in methods {
        let (r, p) = m.judge(body, agents, semantics);
        past |= p;
        for (slot, r) in per.iter_mut().zip(r) {
            slot.push(r);
        }
    }
    (per, past)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(uri: &str, date: &str, status: &str, body: &str) -> Vec<u8> {
        let block = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let mut out = Vec::new();
        botscope_store::warc::write_record(
            &mut out,
            &[
                ("WARC-Type", "response".into()),
                ("WARC-Target-URI", uri.into()),
                ("WARC-Date", date.into()),
            ],
            block.as_bytes(),
        )
        .expect("write");
        out
    }

    #[test]
    fn judges_each_capture_by_each_method() {
        let mut warc = Vec::new();
        botscope_store::warc::write_record(
            &mut warc,
            &[("WARC-Type", "warcinfo".into())],
            b"software: x\r\nisPartOf: CC-MAIN-2025-05\r\n",
        )
        .expect("write");
        // GPTBot has a group of its own; CCBot meets `*`'s.
        let body = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n";
        warc.extend(response(
            "https://A.example/robots.txt",
            "2025-01-20T10:00:00Z",
            "200 OK",
            body,
        ));
        warc.extend(response(
            "https://b.example/robots.txt",
            "2025-01-21T10:00:00Z",
            "404 Not Found",
            "gone",
        ));
        warc.extend(response(
            "https://c.example/robots.txt",
            "2025-01-22T10:00:00Z",
            "200 OK",
            body,
        ));
        let agents = vec!["GPTBot".to_owned(), "CCBot".to_owned()];
        let got = warc_verdicts(
            &warc[..],
            &agents,
            &[Method::Somesite, Method::Cic],
            Semantics::Google,
            &FetchPolicy::default(),
            &mut |_| {},
        );
        assert!(got.damage.is_none());
        assert_eq!(got.counts.robots, 3);
        let hosts: Vec<&str> = got.captures.iter().map(|c| c.host.as_str()).collect();
        assert_eq!(hosts, ["a.example", "b.example", "c.example"]);
        let a = &got.captures[0];
        assert_eq!(a.crawl.as_deref(), Some("CC-MAIN-2025-05"));
        assert_eq!(a.time, 1_737_367_200);
        assert!(a.found);
        assert_eq!(
            a.verdicts,
            [
                [Restriction::Full, Restriction::Full],
                [Restriction::Partial, Restriction::Partial]
            ]
        );
        let b = &got.captures[1];
        assert!(!b.found && b.verdicts.is_empty());
        assert_eq!((b.status, b.outcome.as_str()), (Some(404), "allow-all"));
        assert_eq!(got.captures[2].verdicts, a.verdicts);
    }

    #[test]
    fn a_damaged_file_keeps_what_came_before() {
        let mut warc = response(
            "http://a.example/robots.txt",
            "2025-01-20T10:00:00Z",
            "200 OK",
            "User-agent: *\nDisallow: /\n",
        );
        warc.extend_from_slice(
            b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 999\r\n\r\nshort",
        );
        let got = warc_verdicts(
            &warc[..],
            &["x".to_owned()],
            &[Method::Exact],
            Semantics::Google,
            &FetchPolicy::default(),
            &mut |_| {},
        );
        assert_eq!(got.captures.len(), 1);
        assert_eq!(got.captures[0].verdicts, [[Restriction::Full]]);
        assert!(got.damage.is_some());
    }
}
