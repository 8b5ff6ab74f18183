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

/// Which thread folds which line. Every thread reads every chunk and
/// decides alike, from the chunk and those before it, so that each line is
/// folded by exactly one thread.
///
/// A format whose lines give the client's address without parsing
/// ([`LogFormat::client_key`]: `combined`, `common`, `vhost_combined`)
/// shares clients out by the address's hash: a client's requests go to
/// one thread, in order, so the threads hold disjoint clients (each a
/// part of the memory, which its caches hold better), and the last fold
/// has nothing to merge. When one thread would get much more than its
/// share (a log one client dominates), chunks go whole to one thread in
/// turn instead, until the lines split evenly again; so do the chunks of
/// other formats (JSON). Either way the analysis is the same: a client on
/// two threads is merged at the end.
struct Shares {
    threads: usize,
    hasher: foldhash::fast::FixedState,
    /// This chunk's lines have keys.
    keyed: bool,
    /// This chunk is shared out by client.
    by_client: bool,
    /// The last keyed chunk's lines split evenly between the threads.
    balanced: bool,
    /// This chunk's thread when it is not shared by client.
    whole: usize,
    /// This chunk's lines per thread, by client.
    counts: Vec<u64>,
}

impl Shares {
    fn new(threads: usize) -> Shares {
        Shares {
            threads: threads.max(1),
            hasher: foldhash::fast::FixedState::with_seed(0x6c6f_6773),
            keyed: false,
            by_client: false,
            balanced: true,
            whole: 0,
            counts: vec![0; threads.max(1)],
        }
    }

    /// Chunk `seq` begins, `keyed` if its format has client keys.
    fn begin_chunk(&mut self, seq: u32, keyed: bool) {
        self.keyed = keyed && self.threads > 1;
        self.by_client = self.keyed && self.balanced;
        self.whole = seq as usize % self.threads;
        self.counts.fill(0);
    }

    /// Whether thread `me` has nothing to do in this chunk.
    fn skips(&self, me: usize) -> bool {
        !self.keyed && self.whole != me
    }

    /// The thread that folds `line` (number `n`).
    fn owner(&mut self, format: &LogFormat, line: Option<&[u8]>, n: u64) -> usize {
        if !self.keyed {
            return self.whole;
        }
        let t = self.threads as u64;
        let by_key = match line.and_then(|l| format.client_key(l)) {
            Some(k) => {
                use std::hash::BuildHasher;
                (self.hasher.hash_one(k) % t) as usize
            }
            None => (n % t) as usize,
        };
        self.counts[by_key] += 1;
        if self.by_client { by_key } else { self.whole }
    }

    /// The chunk ends: whether the next is shared by client depends on
    /// how evenly this one's lines would have split.
    fn end_chunk(&mut self) {
        if self.keyed {
            let total: u64 = self.counts.iter().sum();
            let most = self.counts.iter().copied().max().unwrap_or(0);
            // Past 5/4 of a thread's share, the busiest thread takes
            // longer than merging the clients the threads share would.
            self.balanced = most * self.threads as u64 * 4 <= total * 5;
        }
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
    // other, and the report names each sample's input. Every thread gets
    // every chunk and folds the lines that are its own (see `Shares`).
    type Work = Arc<(Arc<LogFormat>, u32, u64, input::Chunk)>;
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..threads)
        .map(|_| crossbeam_channel::bounded::<Work>(8))
        .unzip();
    // Chunk buffers go back to the reader once every thread is done with
    // them: a handful are allocated, whatever the input's size.
    let (back_tx, back_rx) = crossbeam_channel::unbounded::<Vec<u8>>();
    let mut inputs: Vec<Input> = Vec::new();
    let mut warnings: Vec<Warning> = Vec::new();
    let window = settings.window;
    let max_clients = settings.max_clients;
    let shared = crate::identify::Shared::new(identify);
    let identify: &dyn Identify = &shared;
    let partials: Vec<Partial> = std::thread::scope(|s| {
        let workers: Vec<_> = rxs
            .into_iter()
            .enumerate()
            .map(|(me, rx)| {
                let back = back_tx.clone();
                s.spawn(move || {
                    let mut an = Analyzer::new(identify, policy, window)
                        .with_max_clients(max_clients)
                        .with_signatures(signatures);
                    let mut shares = Shares::new(threads);
                    for work in rx {
                        let (format, seq, offset, chunk) = &*work;
                        an.begin_chunk(*seq);
                        shares.begin_chunk(*seq, format.has_client_key());
                        let skip = shares.skips(me);
                        for (n, line) in input::lines(chunk).filter(|_| !skip) {
                            let n = offset + n;
                            if shares.owner(format, line, n) != me {
                                continue;
                            }
                            match line {
                                None => an.malformed(Malformed::TooLong, n),
                                Some(l) => match format.parse_line(l) {
                                    Ok(r) => an.record(&r, n),
                                    Err(Malformed::Empty) => {}
                                    Err(reason) => an.malformed(reason, n),
                                },
                            }
                        }
                        shares.end_chunk();
                        // The last thread done with a chunk sends its buffer back.
                        if let Some((_, _, _, chunk)) = Arc::into_inner(work) {
                            let _ = back.send(chunk.into_buffer());
                        }
                    }
                    an.into_partial()
                })
            })
            .collect();
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
                let work = Arc::new((fmt.clone(), seq, offset, chunk));
                txs.iter().all(|tx| tx.send(work.clone()).is_ok())
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
        drop(txs);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(ip: &str) -> Vec<u8> {
        format!(r#"{ip} - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8""#)
            .into_bytes()
    }

    /// Owners of a chunk's lines, as thread 0 sees them.
    fn chunk(s: &mut Shares, seq: u32, f: &LogFormat, lines: &[Vec<u8>]) -> Vec<usize> {
        s.begin_chunk(seq, f.has_client_key());
        let owners = lines
            .iter()
            .enumerate()
            .map(|(n, l)| s.owner(f, Some(l), n as u64))
            .collect();
        s.end_chunk();
        owners
    }

    #[test]
    fn clients_by_address_until_one_dominates() {
        let f = LogFormat::preset("combined").expect("combined");
        let mut s = Shares::new(2);
        let many: Vec<Vec<u8>> = (0..400)
            .map(|i| line(&format!("198.51.100.{}", i % 256)))
            .collect();
        let owners = chunk(&mut s, 1, &f, &many);
        // A client's lines go to one thread; both threads get some.
        for (l, o) in many.iter().zip(&owners) {
            let first = many.iter().position(|m| m == l).expect("there");
            assert_eq!(owners[first], *o);
        }
        assert!(owners.contains(&0) && owners.contains(&1));
        // One client: this chunk still by address, the next ones whole,
        // to the threads in turn.
        let one = vec![line("203.0.113.1"); 400];
        let owners = chunk(&mut s, 2, &f, &one);
        assert!(owners.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(chunk(&mut s, 3, &f, &one), vec![1; 400]);
        assert_eq!(chunk(&mut s, 4, &f, &many), vec![0; 400]);
        // Balanced again: by address.
        assert_eq!(chunk(&mut s, 5, &f, &many), owners_of(&many));
        // JSON has no address without parsing: whole chunks.
        let j = LogFormat::json();
        assert_eq!(chunk(&mut s, 7, &j, &many), vec![1; 400]);
        s.begin_chunk(8, false);
        assert!(s.skips(1) && !s.skips(0));
    }

    fn owners_of(lines: &[Vec<u8>]) -> Vec<usize> {
        let f = LogFormat::preset("combined").expect("combined");
        let mut s = Shares::new(2);
        chunk(&mut s, 1, &f, lines)
    }
}
