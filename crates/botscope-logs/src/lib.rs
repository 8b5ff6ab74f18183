//! The log-analysis pipeline, shared by the command line and the web
//! server: inputs (files, gzip, stdin, any reader) are read in chunks of
//! whole lines, parsed and folded on the caller's number of threads, each
//! client's robot identified from the registry, requests judged against
//! the site's robots.txt versions, claimed robots verified (published
//! addresses, and FCrDNS evidence the caller gathered), and the result
//! built into a [`Report`] rendered as JSON, text, CSV or HTML, with the
//! lists a web server consults per request.
//!
//! Nothing is printed: warnings come back in the result and through
//! [`Progress`], which also hears of bytes read.
//!
//! ```
//! use botscope_logs::{Job, NoProgress, Settings, Source};
//! let log = br#"66.249.66.1 - - [17/May/2015:10:05:03 +0000] "GET /robots.txt HTTP/1.1" 200 52 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
//! "#;
//! let registry = botscope_botid::Registry::bundled();
//! let job = Job::new(&registry, Default::default(), 1).unwrap();
//! let settings = Settings { format: None, window: Default::default(), threads: 1, max_clients: 1_000_000, keep_threads: false };
//! let source = Source::Reader("access.log".into(), Box::new(&log[..]));
//! let read = job.read(vec![source], &settings, &NoProgress).unwrap();
//! // Offline: no FCrDNS evidence; the published addresses decide.
//! let no_owners = botscope_botid::NoOwners;
//! let outcome = job.finish(read, &std::collections::HashMap::new(), &no_owners, false);
//! assert_eq!(outcome.report.robots["Googlebot"].verification.verified.ips, 1);
//! let text = botscope_logs::render::text(&outcome.report);
//! assert!(text.starts_with("1 lines, 1 parsed"));
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod crawlers;
mod identify;
mod input;
mod join;
pub mod lists;
mod pipeline;
pub mod render;
mod robots;
mod signatures;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;

use botscope_accesslog::{Analysis, Report};
use botscope_botid::{FcrdnsEvidence, Lists, Registry, UaClassifier};

pub use crawlers::{AddressSeen, CRAWLER_ADDRESSES, CRAWLER_USER_AGENTS, CrawlerSeen};
pub use identify::RegistryIdentify;
pub use input::{CHUNK_BYTES, Chunk, ReadStats, Source, buffer, chunks, lines, open};
pub use join::{Checks, dns_wanted, verify_clients};
pub use pipeline::{Read, Settings, read};
pub use robots::{RobotsSpec, RobotsTxt, parse_when};
pub use signatures::{Directories, LogSignatures, Offline};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input could not be opened.
    #[error("failed to open {path}")]
    Open {
        /// The input.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be read.
    #[error("failed to read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("failed to write {}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written safely.
    #[error(transparent)]
    File(#[from] botscope_os::Error),
    /// The worker threads could not be started.
    #[error("cannot start the worker threads: {0}")]
    Threads(String),
    /// A date that is not one.
    #[error("{what}: {value:?} is not a date (YYYY-MM-DD or RFC 3339)")]
    NotADate {
        /// Where it was given.
        what: String,
        /// The value.
        value: String,
    },
    /// The window ends before it begins.
    #[error(
        "the window ends before it begins (since {} is after until {}): no request can fall in it",
        botscope_accesslog::format_rfc3339(*since),
        botscope_accesslog::format_rfc3339(*until)
    )]
    BackwardWindow {
        /// Its start (Unix seconds).
        since: i64,
        /// Its end (Unix seconds).
        until: i64,
    },
    /// Several robots.txt versions without dates.
    #[error("give dates (DATE=FILE) when there are several robots.txt versions")]
    UndatedVersions,
    /// The place for a list directory holds something else.
    #[error("{} exists and is not a directory botscope made", path.display())]
    NotOurs {
        /// The path.
        path: PathBuf,
    },
    /// The User-Agent classifier could not be built.
    #[error(transparent)]
    Classifier(#[from] botscope_botid::Error),
    /// Not possible on this platform.
    #[error("{0}")]
    Unsupported(&'static str),
}

/// Share of lines that must be read for a report to mean anything: under
/// it, the format is wrong (or the input is not a log).
pub const MIN_READABLE_SHARE: f64 = 0.01;

/// Why a report on this input would mislead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputProblem {
    /// No line, or under 1% of the lines, could be read in the format:
    /// the wrong `--log-format`, or not a log.
    Unreadable {
        /// Lines read as records.
        parsed: u64,
        /// Non-blank lines.
        total: u64,
        /// The most common reasons, most lines first.
        reasons: Vec<(&'static str, u64)>,
    },
    /// Lines were read, but none lies in the window.
    EmptyWindow {
        /// Records before or after it.
        out_of_window: u64,
    },
}

impl std::fmt::Display for InputProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputProblem::Unreadable {
                parsed,
                total,
                reasons,
            } => {
                write!(
                    f,
                    "only {parsed} of {total} lines could be read as a log in this format"
                )?;
                if !reasons.is_empty() {
                    let r: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
                    write!(f, " ({})", r.join(", "))?;
                }
                f.write_str("; is --log-format right? Nothing was written")
            }
            InputProblem::EmptyWindow { out_of_window } => write!(
                f,
                "no request lies between --since and --until: all {out_of_window} are outside; \
                 nothing was written"
            ),
        }
    }
}

impl Outcome {
    /// Whether the report would mislead: an input (almost) nothing of
    /// which could be read, or a window that holds no request. An empty
    /// input is no problem: it holds no request, and says so.
    pub fn problem(&self) -> Option<InputProblem> {
        let l = &self.report.lines;
        if l.total > 0 && (l.parsed as f64) < l.total as f64 * MIN_READABLE_SHARE {
            let mut reasons: Vec<(&'static str, u64)> = self
                .report
                .malformed
                .iter()
                .map(|m| (m.reason, m.count))
                .collect();
            reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
            reasons.truncate(3);
            return Some(InputProblem::Unreadable {
                parsed: l.parsed,
                total: l.total,
                reasons,
            });
        }
        if l.parsed > 0 && l.analyzed == 0 && l.out_of_window > 0 {
            return Some(InputProblem::EmptyWindow {
                out_of_window: l.out_of_window,
            });
        }
        None
    }
}

/// Something a reader of the report should know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// No known format fits an input's first lines; it was read as combined.
    FormatGuessed {
        /// The input.
        input: String,
    },
    /// An input ended early (a truncated gzip, a read error); the report
    /// covers the lines before.
    InputDamaged {
        /// The input.
        input: String,
        /// What happened.
        error: String,
        /// Lines read before it.
        lines: u64,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::FormatGuessed { input } => write!(
                f,
                "{input}: no known log format fits the first lines; reading it as combined \
                 (give --log-format)"
            ),
            Warning::InputDamaged {
                input,
                error,
                lines,
            } => write!(
                f,
                "{input}: {error}; the report covers the {lines} lines before it"
            ),
        }
    }
}

/// Hears of the work as it goes: bytes read (raw, before gzip) and
/// warnings. Called from the reading thread.
pub trait Progress: Sync {
    /// `n` more bytes were read.
    fn read(&self, n: u64) {
        let _ = n;
    }
    /// A warning (also returned in the result).
    fn warn(&self, warning: &Warning) {
        let _ = warning;
    }
    /// True once the caller wants the reading to end (an interrupt): each
    /// input then ends at its next read, as an input error.
    fn stopped(&self) -> bool {
        false
    }
}

/// Progress that nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// One analysis job: the registry, its User-Agent classifier and the
/// site's robots.txt versions, for any number of runs.
#[derive(Debug)]
pub struct Job<'r> {
    registry: &'r Registry,
    classifier: UaClassifier,
    robots: RobotsTxt,
}

/// The result of a run.
#[derive(Debug)]
pub struct Outcome {
    /// The report (schema `botscope.logs/1`).
    pub report: Report,
    /// The web-server lists (empty unless asked for).
    pub lists: Lists,
    /// Whether an input was damaged (the report covers what came before).
    pub damaged: bool,
    /// Warnings, in the order they arose.
    pub warnings: Vec<Warning>,
    /// The analysis the report was built from (the clients, for pages
    /// that show more than the report).
    pub analysis: Analysis,
    /// The verdict of each client that claims a registered robot, by its
    /// index in the analysis.
    pub checks: Checks,
}

impl<'r> Job<'r> {
    /// A job over `registry` and the site's robots.txt versions; its
    /// User-Agent classifier is compiled on up to `threads` threads.
    pub fn new(
        registry: &'r Registry,
        robots: RobotsTxt,
        threads: usize,
    ) -> Result<Job<'r>, Error> {
        let classifier = UaClassifier::bundled_on(registry, threads)?;
        Ok(Job {
            registry,
            classifier,
            robots,
        })
    }

    /// Reads and analyses the inputs (see [`read`]); signed requests are
    /// counted by agent and left unverified (no directory is fetched).
    pub fn read(
        &self,
        sources: Vec<Source>,
        settings: &Settings,
        progress: &dyn Progress,
    ) -> Result<Read, Error> {
        self.read_signed(sources, settings, progress, &Offline)
    }

    /// Reads and analyses the inputs, checking each signed request with
    /// the key directories `directories` gives for the agents it names.
    pub fn read_signed(
        &self,
        sources: Vec<Source>,
        settings: &Settings,
        progress: &dyn Progress,
        directories: &dyn Directories,
    ) -> Result<Read, Error> {
        let identify = RegistryIdentify::new(self.registry, &self.classifier);
        let signatures = LogSignatures::new(directories);
        read(
            sources,
            settings,
            &identify,
            &self.robots,
            &signatures,
            progress,
        )
    }

    /// The distinct addresses whose verdict would use FCrDNS: the caller
    /// gathers their evidence (botscope-dns) before [`Job::finish`].
    pub fn dns_wanted(&self, read: &Read) -> Vec<(IpAddr, Vec<String>)> {
        dns_wanted(&read.analysis, self.registry)
    }

    /// Verifies, builds the report and, when `lists`, the web-server lists.
    /// `owners` names the network and country of each address listed (and
    /// is evidence against a claim from a network its operator does not
    /// use).
    pub fn finish<S: std::hash::BuildHasher>(
        &self,
        read: Read,
        evidence: &HashMap<IpAddr, FcrdnsEvidence, S>,
        owners: &dyn botscope_botid::Owners,
        lists: bool,
    ) -> Outcome {
        let Read {
            mut analysis,
            inputs,
            warnings,
            threads,
        } = read;
        let (checks, lists) = verify_clients(&analysis, self.registry, evidence, owners, lists);
        let mut report = botscope_accesslog::build(&mut analysis, &checks, &self.robots, threads);
        for l in [
            &mut report.undeclared_bots,
            &mut report.scanners,
            &mut report.monitors,
            &mut report.spoofed,
        ] {
            for c in &mut l.clients {
                let o = owners.owner(c.ip);
                (c.asn, c.as_org, c.country) = (o.asn, o.as_org, o.country);
            }
        }
        for a in &mut report.signature_agents {
            a.robot = self.registry.signed_by(&a.agent).map(|b| b.name.clone());
        }
        let damaged = inputs.iter().any(|i| i.error.is_some());
        report.set_inputs(inputs);
        report.robots_txt = self.robots.described().to_vec();
        Outcome {
            report,
            lists,
            damaged,
            warnings,
            analysis,
            checks,
        }
    }
}
