//! The issuance record: for each mark the gate put in a page, its phrase
//! and code, and when it was served (first, last, how many pages). The
//! gate keeps it bounded and exports it as JSON lines
//! (`/.botscope/canary.jsonl`); `find` reads it back to resolve phrases.

use std::io::{BufRead, Read as _};

use serde::{Deserialize, Serialize};

use crate::code::Mark;
use crate::phrase::Phrase;

/// What the record says of the mark's pages, when it is in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Served {
    /// The first page marked with it (Unix seconds).
    pub first: u64,
    /// The last.
    pub last: u64,
    /// Pages marked with it.
    pub pages: u64,
}

/// One mark issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// Its phrase.
    pub phrase: Phrase,
    /// Its code.
    pub code: String,
    /// The client and the period.
    #[serde(flatten)]
    pub mark: Mark,
    /// The first page marked with it (Unix seconds).
    pub first_served: u64,
    /// The last.
    pub last_served: u64,
    /// Pages marked with it.
    pub pages: u64,
}

impl Issue {
    /// `mark`'s entry, made under `key`, served as `served` says.
    pub fn new(key: &crate::code::CanaryKey, mark: Mark, served: &Served) -> Issue {
        Issue {
            phrase: key.phrase(&mark),
            code: key.code(&mark),
            mark,
            first_served: served.first,
            last_served: served.last,
            pages: served.pages,
        }
    }
}

/// The longest line of a record read back.
pub const MAX_LINE: usize = 4_096;

/// What [`read`] read: the entries, and the lines it could not (counted,
/// never silently skipped).
#[derive(Debug, Default)]
pub struct Read {
    /// The entries, at most the `max` asked for.
    pub issues: Vec<Issue>,
    /// Lines that are not an entry (or longer than [`MAX_LINE`]).
    pub malformed: u64,
    /// Entries past `max`, not read.
    pub over: u64,
}

/// Reads a record's JSON lines, at most `max` entries.
pub fn read(mut r: &mut dyn BufRead, max: usize) -> std::io::Result<Read> {
    let mut out = Read::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut r)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(out);
        }
        if line.len() > MAX_LINE {
            out.malformed += 1;
            // The rest of the line.
            loop {
                line.clear();
                let m = (&mut r).take(1 << 16).read_until(b'\n', &mut line)?;
                if m == 0 || line.last() == Some(&b'\n') {
                    break;
                }
            }
            continue;
        }
        let l = line.trim_ascii();
        if l.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Issue>(l) {
            Ok(i) if out.issues.len() < max => out.issues.push(i),
            Ok(_) => out.over += 1,
            Err(_) => out.malformed += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::{CanaryKey, Client};

    #[test]
    fn the_record_reads_back_what_was_written_and_counts_the_rest() {
        let key = CanaryKey::new(&[5; 32]).expect("key");
        let marks = [
            Mark::at(
                Client::Verified {
                    bot: "GPTBot".into(),
                },
                1_800_000_000,
                86_400,
            ),
            Mark::at(
                Client::network(
                    "2001:db8::1".parse().unwrap_or([0, 0, 0, 0].into()),
                    Some(64_496),
                    "Mozilla/5.0 Firefox/130.0",
                ),
                1_800_000_000,
                86_400,
            ),
        ];
        let issues: Vec<Issue> = marks
            .iter()
            .map(|m| Issue {
                phrase: key.phrase(m),
                code: key.code(m),
                mark: m.clone(),
                first_served: 1,
                last_served: 2,
                pages: 3,
            })
            .collect();
        let mut text = String::new();
        for i in &issues {
            text.push_str(&serde_json::to_string(i).unwrap_or_default());
            text.push('\n');
        }
        text.push_str("not json\n");
        text.push_str(&"x".repeat(MAX_LINE + 5));
        text.push('\n');
        text.push_str(&serde_json::to_string(&issues[0]).unwrap_or_default());
        let r = read(&mut text.as_bytes(), 2).expect("read");
        assert_eq!(r.issues, issues);
        assert_eq!((r.malformed, r.over), (2, 1));
        assert!(text.contains("\"family\":\"firefox\""), "{text}");
        assert!(text.contains("\"kind\":\"verified\""), "{text}");
    }
}
