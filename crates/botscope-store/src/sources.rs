//! What a WARC import reads and what it says at the end: the inputs a
//! user names (paths or URLs, and the lines of a list such as Common
//! Crawl's `robotstxt.paths.gz`), each once; and the inputs' results
//! summed, with a note for each that was resumed or damaged.

use std::path::{Path, PathBuf};

use crate::{Imported, InputResult, StoreError};

/// One input of a WARC import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarcSource {
    /// A file (`-` is the standard input).
    Path(PathBuf),
    /// An `http://` or `https://` URL, downloaded as it is read.
    Url(String),
}

impl WarcSource {
    /// How it is named (and the key it is counted once by).
    pub fn name(&self) -> String {
        match self {
            WarcSource::Path(p) => p.display().to_string(),
            WarcSource::Url(u) => u.clone(),
        }
    }
}

fn is_url(s: &str) -> bool {
    let l = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://")
}

/// The inputs: the arguments (paths or URLs), then each line of `list`
/// (a path or URL; a relative one under `base`, itself a directory or a
/// URL; blank lines and `#` comments skipped), each once, in order.
pub fn warc_sources(args: &[PathBuf], list: Option<&str>, base: &str) -> Vec<WarcSource> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut push = |s: WarcSource| {
        if seen.insert(s.name()) {
            out.push(s);
        }
    };
    for f in args {
        let text = f.display().to_string();
        push(if is_url(&text) {
            WarcSource::Url(text)
        } else {
            WarcSource::Path(f.clone())
        });
    }
    for line in list.unwrap_or_default().lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        push(if is_url(line) {
            WarcSource::Url(line.to_owned())
        } else if Path::new(line).is_absolute() {
            WarcSource::Path(line.into())
        } else if is_url(base) {
            WarcSource::Url(format!(
                "{}/{}",
                base.trim_end_matches('/'),
                line.trim_start_matches('/')
            ))
        } else {
            WarcSource::Path(Path::new(base).join(line))
        });
    }
    out
}

/// The inputs' results summed ([`ImportSummary::of`]).
#[derive(Debug, Default)]
pub struct ImportSummary {
    /// Every input's counts together.
    pub total: Imported,
    /// Inputs an earlier import had read whole: passed over.
    pub already: usize,
    /// An input could not be read to its end, or a record of it was
    /// left out: the import is not whole.
    pub damaged: bool,
    /// A line for each input resumed or damaged (untrusted names
    /// escaped).
    pub notes: Vec<String>,
}

impl ImportSummary {
    /// Sums `results`.
    pub fn of(results: &[InputResult]) -> ImportSummary {
        let mut s = ImportSummary::default();
        for r in results {
            s.already += usize::from(r.already);
            if r.resumed_after > 0 {
                s.notes.push(format!(
                    "{}: resumed after the {} records an earlier import stored",
                    botscope_text::field(&r.name),
                    r.resumed_after
                ));
            }
            let c = &r.counts;
            s.total.records += c.records;
            s.total.robots += c.robots;
            s.total.other += c.other;
            s.total.skipped += c.skipped;
            s.total.bad_http += c.bad_http;
            // A record left out (over the block limit, a header that
            // cannot be read) is a file not wholly imported.
            s.damaged |= c.skipped > 0;
            if let Some(e) = &r.damage {
                s.damaged = true;
                // An input error names its input already.
                let what = match e {
                    StoreError::Input { .. } => e.to_string(),
                    e => format!("{}: {e}", r.name),
                };
                s.notes.push(format!(
                    "warning: {}; the records before it are imported",
                    botscope_text::field(&what)
                ));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_the_arguments_then_the_list_each_once() {
        let args = [
            PathBuf::from("a.warc.gz"),
            PathBuf::from("HTTPS://x.test/b.warc.gz"),
        ];
        let list = "# a comment\n\ncrawl-data/c.warc.gz\n/abs/d.warc.gz\nhttp://y.test/e\ncrawl-data/c.warc.gz\n";
        let got = warc_sources(&args, Some(list), "https://data.test/");
        assert_eq!(
            got,
            [
                WarcSource::Path("a.warc.gz".into()),
                WarcSource::Url("HTTPS://x.test/b.warc.gz".into()),
                WarcSource::Url("https://data.test/crawl-data/c.warc.gz".into()),
                WarcSource::Path("/abs/d.warc.gz".into()),
                WarcSource::Url("http://y.test/e".into()),
            ]
        );
        let under_dir = warc_sources(&[], Some("c.warc.gz\n"), "/data");
        assert_eq!(under_dir, [WarcSource::Path("/data/c.warc.gz".into())]);
    }

    #[test]
    fn a_summary_sums_and_says_what_was_resumed_or_damaged() {
        let counts = |skipped| Imported {
            records: 10,
            robots: 4,
            other: 6,
            skipped,
            bad_http: 1,
        };
        let result = |name: &str, skipped, damage, already, resumed_after| InputResult {
            name: name.into(),
            counts: counts(skipped),
            damage,
            already,
            resumed_after,
        };
        let whole = ImportSummary::of(&[
            result("a", 0, None, true, 0),
            result("b", 0, None, false, 3),
        ]);
        assert_eq!((whole.total.records, whole.total.bad_http), (20, 2));
        assert_eq!(whole.already, 1);
        assert!(!whole.damaged);
        assert_eq!(
            whole.notes,
            ["b: resumed after the 3 records an earlier import stored"]
        );
        let skipped = ImportSummary::of(&[result("a", 1, None, false, 0)]);
        assert!(skipped.damaged && skipped.notes.is_empty());
        let cut = ImportSummary::of(&[result(
            "c\x1b",
            0,
            Some(StoreError::Input {
                name: "c".into(),
                reason: "cut short".into(),
            }),
            false,
            0,
        )]);
        assert!(cut.damaged);
        assert!(cut.notes[0].starts_with("warning: "), "{:?}", cut.notes);
        assert!(cut.notes[0].ends_with("; the records before it are imported"));
    }
}
