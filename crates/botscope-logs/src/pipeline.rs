//! Inputs to an [`Analysis`]: every input read in chunks of whole lines by
//! the calling thread, parsed and folded by `threads` worker threads, the
//! partials merged and the clients classified.

use std::sync::{Arc, Mutex};

use botscope_accesslog::{
    Analysis, Analyzer, Identify, Input, LOOKAHEAD, LogFormat, Malformed, Partial, Policy, Record,
    SignatureCheck, Window,
};

use crate::input::{self, Source};
use crate::{Error, Progress, Warning};

/// Lines examined to detect the log format.
const DETECT_LINES: usize = 50;

/// Worker threads kept from one read to the next, each set used by one
/// read at a time. A server that analyses upload after upload folds
/// them on the same threads, and what each thread's libraries keep for
/// it (a regular expression's per-thread search caches) is kept once:
/// new threads for each upload left the earlier threads' caches behind,
/// and the server grew by tens of megabytes over its first uploads.
static IDLE: Mutex<Vec<rayon::ThreadPool>> = Mutex::new(Vec::new());

/// A set of at least `n` worker threads, this read's alone until it is
/// dropped (then idle for the next read).
struct Workers(Option<rayon::ThreadPool>);

impl Workers {
    fn take(n: usize) -> Result<Workers, Error> {
        let idle = {
            let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
            idle.iter()
                .position(|p| p.current_num_threads() >= n)
                .map(|i| idle.swap_remove(i))
        };
        let pool = match idle {
            Some(p) => p,
            None => rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("botscope-fold-{i}"))
                .build()
                .map_err(|e| Error::Threads(e.to_string()))?,
        };
        Ok(Workers(Some(pool)))
    }

    fn pool(&self) -> &rayon::ThreadPool {
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("taken until dropped"))
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        }
    }
}

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
    /// Fold on worker threads kept from one read to the next (a server
    /// that reads upload after upload: what libraries keep per thread is
    /// kept once); otherwise on threads of this read's own.
    pub keep_threads: bool,
}

/// Which thread folds which line, decided by the reader once per chunk
/// ([`Shares::plan`]), so that each line is folded by exactly one thread
/// and no thread looks at another's lines.
///
/// A format whose lines give the client's address without parsing
/// ([`LogFormat::client_key`]: `combined`, `common`, `vhost_combined`)
/// shares clients out by the address's hash: a client's requests go to
/// one thread, in order, so the threads hold disjoint clients (each a
/// part of the memory, which its caches hold better), and the last fold
/// has nothing to merge. When one thread would get much more than its
/// share of a chunk (a log one client dominates), the chunk goes whole to
/// one thread instead, the threads taking such chunks in turn; so do the
/// chunks of other formats (JSON). Either way the analysis is the same: a
/// client on two threads is merged at the end.
struct Shares {
    threads: usize,
    hasher: foldhash::fast::FixedState,
}

/// A chunk's lines for its threads.
#[derive(Debug, PartialEq)]
enum Plan {
    /// Every line to this thread.
    Whole(usize),
    /// Per thread, its lines.
    Split(Vec<Vec<Line>>),
}

/// One line of a chunk: its number (from the chunk's first) and its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Line {
    n: u32,
    start: u32,
    /// [`Line::TOO_LONG`] for a line over the limit (skipped by the reader).
    len: u32,
}

impl Line {
    const TOO_LONG: u32 = u32::MAX;

    fn bytes<'c>(&self, chunk: &'c [u8]) -> Option<&'c [u8]> {
        (self.len != Line::TOO_LONG)
            .then(|| &chunk[self.start as usize..self.start as usize + self.len as usize])
    }
}

impl Shares {
    fn new(threads: usize) -> Shares {
        Shares {
            threads: threads.max(1),
            hasher: foldhash::fast::FixedState::with_seed(0x6c6f_6773),
        }
    }

    /// Which thread folds which of chunk `seq`'s lines.
    fn plan(&self, seq: u32, format: &LogFormat, chunk: &input::Chunk) -> Plan {
        let whole = seq as usize % self.threads;
        if self.threads < 2 || !format.has_client_key() {
            return Plan::Whole(whole);
        }
        use std::hash::BuildHasher;
        let t = self.threads as u64;
        let bytes = chunk.bytes();
        let base = bytes.as_ptr() as usize;
        // Lines of about 200 bytes or more, each thread its share.
        let room = bytes.len() / 200 / self.threads + 16;
        let mut per: Vec<Vec<Line>> = (0..self.threads)
            .map(|_| Vec::with_capacity(room))
            .collect();
        // No access log's lines average under 24 bytes: past that many
        // lines the chunk goes whole, so a plan never holds more than half
        // its chunk's size (12 bytes a line).
        let most = bytes.len() / 24 + 16;
        for (k, (n, line)) in input::lines(chunk).enumerate() {
            if k == most {
                return Plan::Whole(whole);
            }
            // A chunk holds far fewer than 2^32 lines and bytes.
            let rel = (n - chunk.first_line) as u32;
            let (owner, line) = match line {
                None => (
                    n % t,
                    Line {
                        n: rel,
                        start: 0,
                        len: Line::TOO_LONG,
                    },
                ),
                Some(l) => {
                    let owner = match format.client_key(l) {
                        Some(k) => self.hasher.hash_one(k) % t,
                        None => n % t,
                    };
                    let start = (l.as_ptr() as usize - base) as u32;
                    (
                        owner,
                        Line {
                            n: rel,
                            start,
                            len: l.len() as u32,
                        },
                    )
                }
            };
            per[owner as usize].push(line);
        }
        let total: usize = per.iter().map(Vec::len).sum();
        let busiest = per.iter().map(Vec::len).max().unwrap_or(0);
        // Past 5/4 of a thread's share, the busiest thread takes longer
        // than merging the clients the threads share would.
        if busiest * self.threads * 4 <= total * 5 {
            Plan::Split(per)
        } else {
            Plan::Whole(whole)
        }
    }
}

/// Parses and folds `lines` (numbered from `offset`), the records
/// [`LOOKAHEAD`] at a time ([`Analyzer::record_all`]) and in order with
/// the malformed lines.
fn fold_lines<'c>(
    an: &mut Analyzer<'_>,
    format: &LogFormat,
    offset: u64,
    lines: impl Iterator<Item = (u64, Option<&'c [u8]>)>,
) {
    // Parsed in place: a record is not copied on its way to the fold.
    let mut records: Vec<(Record<'c>, u64)> = vec![(Record::blank(), 0); LOOKAHEAD];
    let mut k = 0;
    for (n, line) in lines {
        let malformed = match line.map(|l| format.parse_line_into(l, &mut records[k].0)) {
            Some(Ok(())) => {
                records[k].1 = offset + n;
                k += 1;
                if k == LOOKAHEAD {
                    an.record_all(&records);
                    k = 0;
                }
                continue;
            }
            Some(Err(Malformed::Empty)) => continue,
            Some(Err(reason)) => reason,
            None => Malformed::TooLong,
        };
        an.record_all(&records[..k]);
        k = 0;
        an.malformed(malformed, offset + n);
    }
    an.record_all(&records[..k]);
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
    // every chunk and folds the lines the reader's plan gives it (see
    // `Shares`).
    type Work = Arc<(Arc<LogFormat>, u32, u64, input::Chunk, Plan)>;
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
    // A line dated after now (and a clock's skew) is malformed.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let plausible_until = now.saturating_add(botscope_accesslog::CLOCK_SKEW);
    let shared = crate::identify::Shared::new(identify);
    let identify: &dyn Identify = &shared;
    let done: Vec<Mutex<Option<Partial>>> = (0..threads).map(|_| Mutex::new(None)).collect();
    // One worker: folds the lines the plans give it, and leaves its
    // partial analysis in `done`.
    let worker = |me: usize,
                  rx: crossbeam_channel::Receiver<Work>,
                  back: crossbeam_channel::Sender<Vec<u8>>| {
        let mut an = Analyzer::new(identify, policy, window)
            .with_plausible(Window {
                since: Some(botscope_accesslog::PLAUSIBLE_SINCE),
                until: Some(plausible_until),
            })
            .with_max_clients(max_clients)
            .with_signatures(signatures);
        for work in rx {
            let (format, seq, offset, chunk, plan) = &*work;
            an.begin_chunk(*seq);
            match plan {
                Plan::Whole(t) if *t == me => {
                    fold_lines(&mut an, format, *offset, input::lines(chunk));
                }
                Plan::Whole(_) => {}
                Plan::Split(per) => {
                    let bytes = chunk.bytes();
                    fold_lines(
                        &mut an,
                        format,
                        *offset,
                        per[me]
                            .iter()
                            .map(|l| (chunk.first_line + u64::from(l.n), l.bytes(bytes))),
                    );
                }
            }
            // The last thread done with a chunk sends its buffer back.
            if let Some((_, _, _, chunk, _)) = Arc::into_inner(work) {
                let _ = back.send(chunk.into_buffer());
            }
        }
        *done[me].lock().unwrap_or_else(|e| e.into_inner()) = Some(an.into_partial());
    };
    // The reader, on this thread: every input in chunks to every worker.
    let reader = |txs: Vec<crossbeam_channel::Sender<Work>>| {
        // Chunk sequence numbers, across inputs.
        let mut seq = 0u32;
        let shares = Shares::new(threads);
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
                let plan = shares.plan(seq, fmt, &chunk);
                let work = Arc::new((fmt.clone(), seq, offset, chunk, plan));
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
    };
    if settings.keep_threads {
        let workers = Workers::take(threads)?;
        workers.pool().in_place_scope(|s| {
            for (me, rx) in rxs.into_iter().enumerate() {
                let back = back_tx.clone();
                s.spawn(move |_| worker(me, rx, back));
            }
            reader(txs);
        });
    } else {
        std::thread::scope(|s| {
            for (me, rx) in rxs.into_iter().enumerate() {
                let back = back_tx.clone();
                s.spawn(move || worker(me, rx, back));
            }
            reader(txs);
        });
    }
    // Every worker ended (a panic in one is raised by the scope).
    let partials: Vec<Partial> = done
        .into_iter()
        .filter_map(|d| d.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    // The shared answers (one per distinct User-Agent, up to 100,000) are
    // freed beside the merge rather than before or after it.
    let analysis = std::thread::scope(|s| {
        s.spawn(move || drop(shared));
        Partial::finish_all(partials, threads)
    });
    Ok(Read {
        analysis,
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

    /// Owners of a chunk's lines.
    fn chunk(s: &Shares, seq: u32, f: &LogFormat, lines: &[Vec<u8>]) -> Vec<usize> {
        let mut data = lines.join(&b'\n');
        data.push(b'\n');
        let mut got = None;
        let read = input::chunks(&data[..], input::buffer, |c| {
            assert!(got.is_none(), "one chunk");
            got = Some(s.plan(seq, f, &c));
            // The lines a plan gives are the chunk's, whole.
            if let Some(Plan::Split(per)) = &got {
                for l in per.iter().flatten() {
                    let n = l.n as usize;
                    assert_eq!(l.bytes(c.bytes()), Some(&lines[n][..]));
                }
            }
            true
        });
        assert_eq!(read.lines, lines.len() as u64);
        let mut owners = vec![usize::MAX; lines.len()];
        match got.expect("one chunk") {
            Plan::Whole(t) => owners.fill(t),
            Plan::Split(per) => {
                for (t, ls) in per.iter().enumerate() {
                    for l in ls {
                        owners[l.n as usize] = t;
                    }
                }
            }
        }
        owners
    }

    #[test]
    fn clients_by_address_unless_one_dominates() {
        let f = LogFormat::preset("combined").expect("combined");
        let s = Shares::new(2);
        let many: Vec<Vec<u8>> = (0..400)
            .map(|i| line(&format!("198.51.100.{}", i % 256)))
            .collect();
        let owners = chunk(&s, 1, &f, &many);
        // A client's lines go to one thread; both threads get some.
        for (l, o) in many.iter().zip(&owners) {
            let first = many.iter().position(|m| m == l).expect("there");
            assert_eq!(owners[first], *o);
        }
        assert!(owners.contains(&0) && owners.contains(&1));
        // One client: whole chunks, to the threads in turn.
        let one = vec![line("203.0.113.1"); 400];
        assert_eq!(chunk(&s, 3, &f, &one), vec![1; 400]);
        assert_eq!(chunk(&s, 4, &f, &one), vec![0; 400]);
        // Balanced again: by address.
        assert_eq!(chunk(&s, 5, &f, &many), owners);
        // JSON has no address without parsing: whole chunks.
        let j = LogFormat::json();
        assert_eq!(chunk(&s, 7, &j, &many), vec![1; 400]);
        // Lines too short for a log's: whole, however many clients.
        let tiny: Vec<Vec<u8>> = (0..400).map(|i| format!("{i}").into_bytes()).collect();
        assert_eq!(chunk(&s, 8, &f, &tiny), vec![0; 400]);
        // One thread takes everything.
        assert_eq!(chunk(&Shares::new(1), 7, &f, &many), vec![0; 400]);
    }
}
