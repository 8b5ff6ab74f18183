//! Inputs to an [`Analysis`]: every input read in chunks of whole lines by
//! the calling thread, parsed and folded by `threads` worker threads, the
//! partials merged and the clients classified.

use std::sync::Arc;

use botscope_accesslog::{
    Analysis, Analyzer, Identify, Input, LogFormat, Malformed, Partial, Policy, SignatureCheck,
    Window,
};

use crate::input::{self, Source};
use crate::{Error, Progress, Warning};

/// Lines examined to detect the log format.
const DETECT_LINES: usize = 50;

/// How to read the logs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The log format; detected per input from its first lines when `None`.
    pub format: Option<LogFormat>,
    /// Only requests within this window.
    pub window: Window,
    /// Parsing threads (at least one); the reading runs on the caller's.
    pub threads: usize,
    /// Distinct clients tracked at most ([`botscope_accesslog::MAX_CLIENTS`]
    /// by default); past them requests count for the site only, and the
    /// report's `untracked` says how many.
    pub max_clients: usize,
}

impl Settings {
    /// From command-line flags: a log format spec (detected when `None`),
    /// `--since`/`--until` dates (`YYYY-MM-DD` or RFC 3339) and the
    /// threads; the message names the flag that is wrong.
    pub fn from_flags(
        log_format: Option<&str>,
        since: Option<&str>,
        until: Option<&str>,
        threads: usize,
    ) -> Result<Settings, String> {
        let date = |v: Option<&str>, flag: &str| {
            v.map(|s| {
                crate::parse_when(s)
                    .ok_or_else(|| format!("--{flag} {s:?} is not a date (YYYY-MM-DD or RFC 3339)"))
            })
            .transpose()
        };
        Ok(Settings {
            format: log_format
                .map(LogFormat::from_spec)
                .transpose()
                .map_err(|e| format!("--log-format: {e}"))?,
            window: Window {
                since: date(since, "since")?,
                until: date(until, "until")?,
            },
            threads: threads.max(1),
            max_clients: botscope_accesslog::MAX_CLIENTS,
        })
    }
}

/// What reading gave: the analysis and, per input, what was read.
#[derive(Debug)]
pub struct Read {
    /// The clients, their classes and everything counted.
    pub analysis: Analysis,
    /// Per input: name, bytes, lines, the error that ended it.
    pub inputs: Vec<Input>,
    /// What a reader of the report should know.
    pub warnings: Vec<Warning>,
    /// The threads it ran on (the report is built with as many).
    pub threads: usize,
}

impl Read {
    /// Whether an input was damaged (the analysis covers what came before).
    pub fn damaged(&self) -> bool {
        self.inputs.iter().any(|i| i.error.is_some())
    }
}

/// Reads, parses and analyses every input. Inputs are opened first, so a
/// missing file is an error before any work; a damaged one ends early,
/// and everything before the damage is counted. Signed requests are
/// checked by `signatures`.
pub fn read(
    sources: Vec<Source>,
    settings: &Settings,
    identify: &dyn Identify,
    policy: &dyn Policy,
    signatures: &dyn SignatureCheck,
    progress: &dyn Progress,
) -> Result<Read, Error> {
    if let (Some(since), Some(until)) = (settings.window.since, settings.window.until)
        && since > until
    {
        return Err(Error::BackwardWindow { since, until });
    }
    let mut readers = Vec::with_capacity(sources.len());
    for s in sources {
        let name = s.name();
        let r = input::open(s, progress).map_err(|source| Error::Open {
            path: name.clone(),
            source,
        })?;
        readers.push((name, r));
    }
    let threads = settings.threads.max(1);
    // Each chunk goes with its input's first line number across all inputs
    // less one: the analysis numbers lines across inputs, one after the
    // other, and the report names each sample's input.
    let (tx, rx) =
        crossbeam_channel::bounded::<(Arc<LogFormat>, u32, u64, input::Chunk)>(threads * 2);
    // Chunk buffers go back to the reader once parsed: a handful are
    // allocated, whatever the input's size.
    let (back_tx, back_rx) = crossbeam_channel::unbounded::<Vec<u8>>();
    let mut inputs: Vec<Input> = Vec::new();
    let mut warnings: Vec<Warning> = Vec::new();
    let window = settings.window;
    let max_clients = settings.max_clients;
    let shared = crate::identify::Shared::new(identify);
    let identify: &dyn Identify = &shared;
    let partials: Vec<Partial> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let rx = rx.clone();
                let back = back_tx.clone();
                s.spawn(move || {
                    let mut an = Analyzer::new(identify, policy, window)
                        .with_max_clients(max_clients)
                        .with_signatures(signatures);
                    for (format, seq, offset, chunk) in rx {
                        an.begin_chunk(seq);
                        for (n, line) in input::lines(&chunk) {
                            let n = offset + n;
                            match line {
                                None => an.malformed(Malformed::TooLong, n),
                                Some(l) => match format.parse_line(l) {
                                    Ok(r) => an.record(&r, n),
                                    Err(Malformed::Empty) => {}
                                    Err(reason) => an.malformed(reason, n),
                                },
                            }
                        }
                        let mut data = chunk.data;
                        data.clear();
                        let _ = back.send(data);
                    }
                    an.into_partial()
                })
            })
            .collect();
        drop(rx);
        // Chunk sequence numbers, across inputs.
        let mut seq = 0u32;
        let mut offset = 0u64;
        for (name, r) in readers {
            let mut format: Option<Arc<LogFormat>> = settings.format.clone().map(Arc::new);
            let mut guessed = false;
            let fresh = || back_rx.try_recv().unwrap_or_else(|_| input::buffer());
            let stats = input::chunks(r, fresh, |chunk| {
                let fmt = format.get_or_insert_with(|| {
                    let sample: Vec<&[u8]> = input::lines(&chunk)
                        .filter_map(|(_, l)| l)
                        .take(DETECT_LINES)
                        .collect();
                    Arc::new(botscope_accesslog::detect(&sample).unwrap_or_else(|| {
                        guessed = true;
                        LogFormat::preset("combined").unwrap_or_else(LogFormat::json)
                    }))
                });
                seq = (seq + 1) % u32::MAX;
                tx.send((fmt.clone(), seq, offset, chunk)).is_ok()
            });
            offset += stats.lines;
            let mut note = |w: Warning| {
                progress.warn(&w);
                warnings.push(w);
            };
            if guessed {
                note(Warning::FormatGuessed {
                    input: name.clone(),
                });
            }
            if let Some(e) = &stats.error {
                note(Warning::InputDamaged {
                    input: name.clone(),
                    error: e.clone(),
                    lines: stats.lines,
                });
            }
            inputs.push(Input {
                name,
                bytes: stats.bytes,
                lines: stats.lines,
                error: stats.error,
            });
        }
        drop(tx);
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    Ok(Read {
        analysis: Partial::finish_all(partials, threads),
        inputs,
        warnings,
        threads,
    })
}
