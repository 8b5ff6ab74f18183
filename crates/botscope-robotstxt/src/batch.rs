//! Many questions over many files: `ROBOTS_PATH<TAB>AGENT<TAB>URL` lines,
//! each robots file compiled when a line first names it (through a
//! loader the caller gives: this crate does no I/O) and found again by its
//! name's bytes, the last one without a lookup, as a bulk audit's lines
//! come grouped by file.
//!
//! While the lines keep to that order, only the last [`RECENT`] files
//! are kept: the batch holds a few compiled files however many it reads
//! (and a hash, eight bytes, of each file's name it let go of), and each
//! new file reuses memory just freed (a bulk audit of
//! thousands of files runs faster for it). A line that comes back to a
//! file already let go of shows the lines are not grouped: from then on
//! every file is kept, so a file is read at most twice.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, RandomState};

use crate::matcher::Decided;
use crate::matcher::compile_for;
use crate::url::{path_at, path_start};
use crate::{Matcher, ParseOptions, Selection, Semantics, Verdict};

/// Files kept while the lines come grouped by file.
pub const RECENT: usize = 64;

/// Agents' product tokens a file is compiled for, at most: past them,
/// every group is compiled.
const WANTED: usize = 16;

/// Agents whose tokens' places in the wanted ones are kept.
const AGENTS_SEEN: usize = 32;

/// The longest agent kept among those seen, and the longest token
/// wanted (a longer one compiles every group): what the batch keeps of
/// agents stays a few KiB, whatever their length (a query line may hold
/// megabytes).
const AGENT_KEPT: usize = 256;

/// A file's name and what it compiled to, or why it could not be loaded.
#[derive(Debug)]
struct Kept {
    name: Box<[u8]>,
    compiled: Result<Matcher, String>,
    /// The wanted tokens it was compiled for: the first `covers`
    /// ([`usize::MAX`]: every group).
    covers: usize,
}

/// Answers query lines.
#[derive(Debug)]
pub struct BatchChecker {
    semantics: Semantics,
    opts: ParseOptions,
    /// Where each kept file is in `compiled`.
    index: HashMap<Box<[u8]>, usize>,
    /// Each place's file and what it compiled to (or why it could not be
    /// loaded); `None` for a free place.
    compiled: Vec<Option<Kept>>,
    /// The places of the files kept, oldest first, and the places freed.
    recent: VecDeque<usize>,
    free: Vec<usize>,
    /// Hashes of the names of the files let go of (a collision only keeps
    /// every file a little early), and whether every file is now kept.
    gone: HashSet<u64>,
    hasher: RandomState,
    keep_all: bool,
    last: Option<(Box<[u8]>, usize)>,
    /// The groups the last line's agent selects in its file (a bulk
    /// audit's lines come grouped by file and agent): the file's place,
    /// the agent's bytes, the selection.
    selected: Option<(usize, Box<[u8]>, Selection)>,
    /// Answers given for the file of the last lines, to give again.
    answers: Answers,
    /// Google's semantics: the product tokens of the agents asked so far
    /// (at most [`WANTED`]), for which alone (and `*`) a file's groups
    /// are compiled; and whether every group is now compiled (more
    /// tokens than that were asked, or files are read again).
    wanted: Vec<Box<[u8]>>,
    whole: bool,
    /// The last agents asked (their bytes) and their places in `wanted`.
    agents_seen: Vec<(Box<[u8]>, Option<usize>)>,
    /// The place of the file whose bytes `scratch` holds, the last one
    /// loaded: compiled again, without reading it, when a new agent asks.
    scratch_of: Option<usize>,
    /// The bytes of the file being compiled, kept from one file to the
    /// next (a bulk audit reads thousands).
    scratch: Vec<u8>,
    /// The last URL up to its path (`https://example.com`), when it had
    /// one: a bulk audit's URLs mostly share it, and a URL that starts
    /// with it and then a path's first byte has its path there.
    site: Vec<u8>,
}

/// Why a line has no verdict.
pub const MALFORMED: &str = "malformed line: expected ROBOTS_PATH<TAB>AGENT<TAB>URL";

impl BatchChecker {
    /// Files are compiled with `semantics` and `opts`.
    pub fn new(semantics: Semantics, opts: ParseOptions) -> Self {
        BatchChecker {
            semantics,
            opts,
            index: HashMap::new(),
            compiled: Vec::new(),
            recent: VecDeque::new(),
            free: Vec::new(),
            gone: HashSet::new(),
            hasher: RandomState::new(),
            keep_all: false,
            last: None,
            selected: None,
            answers: Answers::default(),
            wanted: Vec::new(),
            whole: semantics != Semantics::Google,
            agents_seen: Vec::new(),
            scratch_of: None,
            scratch: Vec::new(),
            site: Vec::new(),
        }
    }

    /// The verdict for one line, or why there is none: the line is
    /// malformed, or `load` could not give the file (its reason, kept for
    /// the later lines naming the same file while the file is kept).
    /// `load` is given the file's path and an empty buffer to fill with
    /// its bytes; it is asked for a file again at most once: when the
    /// lines came back to it after [`RECENT`] other files, or when an
    /// agent asks it that the groups compiled for the agents before did
    /// not foresee (a file is compiled for the agents asked so far).
    pub fn check(
        &mut self,
        line: &[u8],
        load: impl FnOnce(&[u8], &mut Vec<u8>) -> Result<(), String>,
    ) -> Result<Verdict<'_>, &str> {
        let Fields {
            path,
            agent,
            url,
            same_file,
        } = self.fields(line).ok_or(MALFORMED)?;
        let mut load = Some(load);
        // Another file or agent than the last line's: the agent's token
        // is wanted before any file is compiled for this line.
        let same_agent = matches!(&self.selected, Some((_, a, _)) if **a == *agent);
        let again = same_file && same_agent;
        let token = if again { None } else { self.want(agent) };
        let i = match &self.last {
            Some((_, i)) if same_file => *i,
            _ => {
                let i = match self.index.get(path) {
                    Some(&i) => i,
                    None => self.load(path, load.take()),
                };
                self.last = Some((path.into(), i));
                i
            }
        };
        let Some(kept) = &self.compiled[i] else {
            return Err("internal error: a file's place is empty");
        };
        if !again && kept.compiled.is_ok() && !covered(kept.covers, token) {
            self.recompile(i, load.take());
        }
        let Some(kept) = &self.compiled[i] else {
            return Err("internal error: a file's place is empty");
        };
        let m = kept.compiled.as_ref().map_err(String::as_str)?;
        let n = self.site.len();
        let start = if n > 0
            && url.starts_with(&self.site)
            && matches!(url.get(n), Some(b'/' | b'?' | b';'))
        {
            Some(n)
        } else {
            let start = path_start(url);
            self.site.clear();
            self.site.extend_from_slice(&url[..start.unwrap_or(0)]);
            start
        };
        let sel = match &self.selected {
            Some((f, _, sel)) if same_agent && *f == i => sel,
            _ => {
                let sel = m.select(&String::from_utf8_lossy(agent));
                self.answers.agent(i, &sel);
                &self.selected.insert((i, agent.into(), sel)).2
            }
        };
        let path = path_at(url, start);
        let d = self
            .answers
            .answer(&path, || m.decide_selected(sel, &path, &mut 0));
        Ok(m.verdict_of(d))
    }

    /// How many lines were answered with the verdict of an earlier line
    /// for another agent that the file's groups treat alike.
    pub fn reused(&self) -> u64 {
        self.answers.reused
    }

    /// The place in `wanted` of the product token of `agent` (the one
    /// selections compare), added when new; `None` when it is not there
    /// and cannot be (every group is compiled from now on).
    fn want(&mut self, agent: &[u8]) -> Option<usize> {
        if self.semantics != Semantics::Google {
            return None;
        }
        // The answer for an agent's bytes never changes (`wanted` only
        // grows, and not once it is whole): the last few are kept.
        if let Some((_, k)) = self.agents_seen.iter().find(|(a, _)| **a == *agent) {
            return *k;
        }
        let text = String::from_utf8_lossy(agent);
        let token = crate::product_token(&text).as_bytes();
        let k = if let Some(k) = self
            .wanted
            .iter()
            .position(|w| w.eq_ignore_ascii_case(token))
        {
            Some(k)
        } else if self.whole || self.wanted.len() == WANTED || token.len() > AGENT_KEPT {
            self.whole = true;
            None
        } else {
            self.wanted.push(token.into());
            Some(self.wanted.len() - 1)
        };
        if agent.len() <= AGENT_KEPT {
            if self.agents_seen.len() == AGENTS_SEEN {
                self.agents_seen.remove(0);
            }
            self.agents_seen.push((agent.into(), k));
        }
        k
    }

    /// The bytes in `scratch` compiled for the agents wanted now, and
    /// how many wanted tokens that covers ([`Kept::covers`]).
    fn compile_scratch(&self) -> (Result<Matcher, String>, usize) {
        let (wanted, covers) = if self.whole {
            (None, usize::MAX)
        } else {
            (Some(&self.wanted[..]), self.wanted.len())
        };
        let m = compile_for(&self.scratch, self.semantics, &self.opts, wanted);
        (Ok(m), covers)
    }

    /// The file at `path` read into `scratch` through `load` and
    /// compiled ([`BatchChecker::compile_scratch`]), or why it could not
    /// be read. `load` is `None` only by a mistake of this module's.
    fn read_and_compile(
        &mut self,
        path: &[u8],
        load: Option<impl FnOnce(&[u8], &mut Vec<u8>) -> Result<(), String>>,
    ) -> (Result<Matcher, String>, usize) {
        self.scratch.clear();
        self.scratch_of = None;
        let read = match load {
            Some(load) => load(path, &mut self.scratch),
            None => Err("internal error: the file was not read".to_owned()),
        };
        match read {
            Ok(()) => self.compile_scratch(),
            Err(e) => (Err(e), usize::MAX),
        }
    }

    /// Compiles the file at place `i` again, for the agents wanted now:
    /// from the bytes kept when it is the last one loaded, else read
    /// again through `load` (its second reading), every group compiled
    /// and every file kept from then on, so that it is never read a
    /// third time.
    fn recompile(
        &mut self,
        i: usize,
        load: Option<impl FnOnce(&[u8], &mut Vec<u8>) -> Result<(), String>>,
    ) {
        let Some(name) = self.compiled[i].as_ref().map(|k| k.name.clone()) else {
            return;
        };
        let (compiled, covers) = if self.scratch_of == Some(i) {
            self.compile_scratch()
        } else {
            self.keep_all = true;
            self.whole = true;
            let got = self.read_and_compile(&name, load);
            self.scratch_of = Some(i);
            got
        };
        if let Some(kept) = &mut self.compiled[i] {
            kept.compiled = compiled;
            kept.covers = covers;
        }
        // Answers and selections of the file as compiled before.
        self.selected = None;
        self.answers.file = None;
    }

    /// Loads and compiles the file at `path` and returns its place,
    /// letting go of the oldest file kept when the lines are grouped.
    fn load(
        &mut self,
        path: &[u8],
        load: Option<impl FnOnce(&[u8], &mut Vec<u8>) -> Result<(), String>>,
    ) -> usize {
        if !self.keep_all && !self.gone.is_empty() {
            self.keep_all = self.gone.contains(&self.hasher.hash_one(path));
            // A file read a second time is compiled whole, so that it is
            // never read a third.
            self.whole |= self.keep_all;
        }
        if !self.keep_all && self.recent.len() >= RECENT {
            if let Some(old) = self.recent.pop_front()
                && let Some(kept) = self.compiled[old].take()
            {
                self.index.remove(&kept.name);
                self.gone.insert(self.hasher.hash_one(&kept.name));
                self.free.push(old);
            }
            // A place freed may be the one the last selection names.
            self.selected = None;
        }
        self.answers.file = None;
        let (compiled, covers) = self.read_and_compile(path, load);
        let entry = Some(Kept {
            name: Box::from(path),
            compiled,
            covers,
        });
        let i = match self.free.pop() {
            Some(i) => {
                self.compiled[i] = entry;
                i
            }
            None => {
                self.compiled.push(entry);
                self.compiled.len() - 1
            }
        };
        if !self.keep_all {
            self.recent.push_back(i);
        }
        self.index.insert(path.into(), i);
        self.scratch_of = Some(i);
        i
    }
}

/// Whether a file compiled for the first `covers` wanted tokens answers
/// an agent whose token is the `token`th (`None`: not one of them).
fn covered(covers: usize, token: Option<usize>) -> bool {
    covers == usize::MAX || token.is_some_and(|k| k < covers)
}

/// Selections of one file whose answers are kept.
const RUNS: usize = 8;
/// Bytes of paths kept per selection.
const RUN_BYTES: usize = 16 * 1024;

/// Answers given for one file, to give again: a bulk audit asks the
/// same URLs, in the same order, for each of several agents, and agents
/// that fall to the same groups of a file (most fall to `*` alone) get
/// the same verdict for the same path. Per selection (the first
/// [`RUNS`]), the paths asked in order (up to [`RUN_BYTES`]) and their
/// verdicts; a later agent with an equal selection is given the verdict
/// kept at its line's place in its run when the path there is its path.
/// Work per line: one comparison of the path, or the match and a copy of
/// the path.
#[derive(Debug, Default)]
struct Answers {
    /// The place of the file the runs are of.
    file: Option<usize>,
    /// The runs, those past `used` kept for their memory.
    runs: Vec<Run>,
    used: usize,
    /// The run of the current agent, whether it is being recorded (else
    /// replayed), and the place in it of the next line.
    cur: Option<usize>,
    recording: bool,
    pos: usize,
    /// Lines answered with a kept verdict.
    reused: u64,
}

#[derive(Debug)]
struct Run {
    sel: Selection,
    /// The paths asked, one after another, and where each ends.
    paths: Vec<u8>,
    ends: Vec<u32>,
    decided: Vec<Decided>,
}

impl Answers {
    /// The next lines ask for agent whose selection in the file at place
    /// `file` is `sel`.
    fn agent(&mut self, file: usize, sel: &Selection) {
        if self.file != Some(file) {
            self.file = Some(file);
            self.used = 0;
        }
        self.pos = 0;
        self.cur = if let Some(k) = self.runs[..self.used].iter().position(|r| r.sel == *sel) {
            self.recording = false;
            Some(k)
        } else if self.used < RUNS {
            if self.used == self.runs.len() {
                self.runs.push(Run {
                    sel: sel.clone(),
                    paths: Vec::new(),
                    ends: Vec::new(),
                    decided: Vec::new(),
                });
            }
            let run = &mut self.runs[self.used];
            run.sel.clone_from(sel);
            run.paths.clear();
            run.ends.clear();
            run.decided.clear();
            self.recording = true;
            self.used += 1;
            Some(self.used - 1)
        } else {
            None
        };
    }

    /// The verdict for `path` under the current agent's selection: kept,
    /// or `decide`d (and kept).
    #[inline]
    fn answer(&mut self, path: &[u8], decide: impl FnOnce() -> Decided) -> Decided {
        let Some(run) = self.cur.and_then(|k| self.runs.get_mut(k)) else {
            return decide();
        };
        if self.recording {
            let d = decide();
            if run.paths.len() + path.len() <= RUN_BYTES {
                run.paths.extend_from_slice(path);
                run.ends
                    .push(u32::try_from(run.paths.len()).unwrap_or(u32::MAX));
                run.decided.push(d);
            } else {
                // The run is full: it ends here (a later line kept would
                // stand at another line's place).
                self.cur = None;
            }
            return d;
        }
        let at = self.pos;
        self.pos += 1;
        if let Some(&end) = run.ends.get(at) {
            let start = at.checked_sub(1).map_or(0, |p| run.ends[p] as usize);
            if run.paths.get(start..end as usize) == Some(path) {
                self.reused += 1;
                return run.decided[at];
            }
        }
        decide()
    }
}

/// A query line's three fields, and whether its file is the last line's.
struct Fields<'l> {
    path: &'l [u8],
    agent: &'l [u8],
    url: &'l [u8],
    same_file: bool,
}

impl BatchChecker {
    /// A query line's three fields (a path that is not empty, an agent, a
    /// URL without a tab), and whether the path is the last line's. A
    /// bulk audit's lines come grouped by file and agent: a field equal
    /// to the last line's is found by comparing it, not by searching for
    /// its tab (the last one holds none, so a line that starts with it
    /// and a tab has its first tab there).
    #[inline]
    fn fields<'l>(&self, line: &'l [u8]) -> Option<Fields<'l>> {
        let after = |line: &[u8], last: &[u8]| {
            line.get(last.len()) == Some(&b'\t') && line.starts_with(last)
        };
        let (t1, same_file) = match &self.last {
            Some((p, _)) if after(line, p) => (p.len(), true),
            _ => (memchr::memchr(b'\t', line)?, false),
        };
        let rest = &line[t1 + 1..];
        let t2 = match &self.selected {
            Some((_, a, _)) if after(rest, a) => a.len(),
            _ => memchr::memchr(b'\t', rest)?,
        };
        let url = &rest[t2 + 1..];
        (t1 > 0 && memchr::memchr(b'\t', url).is_none()).then(|| Fields {
            path: &line[..t1],
            agent: &rest[..t2],
            url,
            same_file,
        })
    }
}

/// Input read at a time by [`BatchChecker::run`].
const BATCH_BYTES: usize = 1 << 20;
/// The longest query line held: longer ones are answered as malformed.
const MAX_QUERY_LINE: usize = 4 << 20;

impl BatchChecker {
    /// Answers every query line of `input` on `out`, in order, one line
    /// each: `allowed`/`disallowed` or `error<TAB>reason` (escaped), or the
    /// JSON of [`Verdict::to_json`] (`{"verdict":"error","reason"}` for a
    /// line that cannot be answered). Lines end in `\n` or `\r\n`; a line
    /// over 4 MiB is answered as malformed without being held. Robots
    /// files come through `load` (their path and an empty buffer in, the
    /// buffer filled with their bytes).
    pub fn run(
        &mut self,
        mut input: impl std::io::Read,
        mut out: impl std::io::Write,
        json: bool,
        mut load: impl FnMut(&[u8], &mut Vec<u8>) -> Result<(), String>,
    ) -> std::io::Result<()> {
        use std::io::Read;
        let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES * 2);
        // Inside a line over the limit: its bytes are dropped up to its end.
        let mut skipping = false;
        loop {
            let start = buf.len();
            let n = (&mut input)
                .take(BATCH_BYTES as u64)
                .read_to_end(&mut buf)?;
            let ended = n == 0;
            if skipping {
                match memchr::memchr(b'\n', &buf[start..]) {
                    Some(i) => {
                        buf.drain(start..=start + i);
                        skipping = false;
                    }
                    None => {
                        buf.truncate(start);
                        if ended {
                            break;
                        }
                        continue;
                    }
                }
            }
            // Whole lines; the rest waits for the next read (or is the
            // last line, without its newline, at the end).
            let whole = if ended {
                buf.len()
            } else {
                match memchr::memrchr(b'\n', &buf[start..]) {
                    Some(i) => start + i + 1,
                    None if buf.len() > MAX_QUERY_LINE => {
                        // A line that long is not a query: say so, hold nothing.
                        self.answer(&mut out, b"", json, &mut load)?;
                        buf.clear();
                        skipping = true;
                        continue;
                    }
                    None => continue,
                }
            };
            // Each line's end: its newline, or (the last line, without
            // one) the end of the whole.
            let mut at = 0;
            let ends = memchr::memchr_iter(b'\n', &buf[..whole]);
            for end in ends.chain((whole > 0 && buf[whole - 1] != b'\n').then_some(whole)) {
                let line = &buf[at..end];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                self.answer(&mut out, line, json, &mut load)?;
                at = end + 1;
            }
            buf.drain(..whole);
            if ended {
                break;
            }
        }
        Ok(())
    }

    fn answer(
        &mut self,
        out: &mut impl std::io::Write,
        line: &[u8],
        json: bool,
        load: &mut impl FnMut(&[u8], &mut Vec<u8>) -> Result<(), String>,
    ) -> std::io::Result<()> {
        match (self.check(line, load), json) {
            (Ok(v), false) => out.write_all(if v.allowed {
                b"allowed\n"
            } else {
                b"disallowed\n"
            }),
            (Ok(v), true) => writeln!(out, "{}", v.to_json()),
            (Err(e), false) => writeln!(out, "error\t{}", botscope_text::field(e)),
            (Err(e), true) => writeln!(
                out,
                "{}",
                serde_json::json!({ "verdict": "error", "reason": e })
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_loaded_once_errors_kept() {
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        let mut loads = 0;
        let mut load = |p: &[u8], buf: &mut Vec<u8>| {
            loads += 1;
            match p {
                b"a.txt" => {
                    buf.extend_from_slice(b"User-agent: *\nDisallow: /x\n");
                    Ok(())
                }
                _ => Err("no such file".to_owned()),
            }
        };
        assert_eq!(
            b.check(b"a.txt\tbot\t/x", &mut load).map(|v| v.allowed),
            Ok(false)
        );
        assert_eq!(
            b.check(b"a.txt\tbot\t/y", &mut load).map(|v| v.allowed),
            Ok(true)
        );
        assert_eq!(
            b.check(b"b.txt\tbot\t/y", &mut load).err(),
            Some("no such file")
        );
        assert_eq!(
            b.check(b"a.txt\tbot\thttps://h.test/x", &mut load)
                .map(|v| v.allowed),
            Ok(false)
        );
        assert_eq!(
            b.check(b"b.txt\tbot\t/z", &mut load).err(),
            Some("no such file")
        );
        assert_eq!(b.check(b"a.txt\tbot", &mut load).err(), Some(MALFORMED));
        assert_eq!(loads, 2, "each file once");
    }

    /// Lines over `files` files, each file's lines together (`grouped`)
    /// or the files visited twice over, one line each time.
    fn loads(grouped: bool, files: usize) -> (BatchChecker, HashMap<Vec<u8>, usize>) {
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        let mut loads: HashMap<Vec<u8>, usize> = HashMap::new();
        let names: Vec<String> = (0..files).map(|i| format!("f{i}")).collect();
        let order: Vec<(usize, &str)> = if grouped {
            (0..files).flat_map(|i| [(i, "/x"), (i, "/y")]).collect()
        } else {
            (0..2).flat_map(|_| (0..files).map(|i| (i, "/x"))).collect()
        };
        for (i, url) in order {
            let line = format!("{}\tbot\t{url}", names[i]);
            let mut load = |p: &[u8], buf: &mut Vec<u8>| {
                *loads.entry(p.to_vec()).or_default() += 1;
                // Every third file disallows `/x`.
                let body = if i % 3 == 0 {
                    "User-agent: *\nDisallow: /x\n"
                } else {
                    ""
                };
                buf.extend_from_slice(body.as_bytes());
                Ok(())
            };
            let v = b.check(line.as_bytes(), &mut load).map(|v| v.allowed);
            assert_eq!(v, Ok(i % 3 != 0 || url != "/x"), "{line}");
        }
        (b, loads)
    }

    #[test]
    fn grouped_lines_keep_a_few_files_and_read_each_once() {
        let (b, loads) = loads(true, 3 * RECENT);
        assert_eq!(loads.len(), 3 * RECENT);
        assert!(loads.values().all(|&n| n == 1), "each file once");
        let kept = b.compiled.iter().flatten().count();
        assert_eq!(kept, RECENT);
        assert!(b.compiled.len() <= RECENT + 1, "places reused");
        assert!(!b.keep_all);
    }

    #[test]
    fn lines_coming_back_to_a_file_keep_every_file() {
        let (b, loads) = loads(false, 3 * RECENT);
        assert!(b.keep_all);
        // The files let go of before the lines came back are read twice,
        // the others once.
        assert_eq!(loads.values().filter(|&&n| n == 2).count(), 2 * RECENT);
        assert!(loads.values().all(|&n| n <= 2));
        assert_eq!(b.compiled.iter().flatten().count(), 3 * RECENT);
    }

    /// URLs that share the last one's site, or nearly: each line's
    /// verdict is the file's for that URL alone.
    #[test]
    fn a_shared_site_finds_the_same_path() {
        let body =
            b"User-agent: *\nDisallow: /x\nDisallow: /?q\nDisallow: /;p\nDisallow: /q\nAllow: /$\n";
        let m = Matcher::compile(body, Semantics::Google, &ParseOptions::default());
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        let urls = [
            "https://h.test/x",
            "https://h.test/y",
            "https://h.testq",
            "https://h.test?q",
            "https://h.test;p",
            "https://h.test#/x",
            "https://h.testx/x",
            "https://h.test",
            "https://h.test/x",
            "https://h.te/x",
            "//h.test/x",
            "//h.test/y",
            "/x",
            "/x#y",
            "h.test/x",
            "h.test?q",
            "https://h.test/x#frag",
            "https://h.test/",
        ];
        for url in urls {
            let line = format!("a\tbot\t{url}");
            let got = b
                .check(line.as_bytes(), |_, buf| {
                    buf.extend_from_slice(body);
                    Ok(())
                })
                .map(|v| v.allowed);
            assert_eq!(got, Ok(m.check("bot", url).allowed), "{url}");
        }
    }

    #[test]
    fn fields_equal_to_the_last_lines_are_whole_fields() {
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        let mut loaded = Vec::new();
        let mut load = |p: &[u8], buf: &mut Vec<u8>| {
            loaded.push(p.to_vec());
            buf.extend_from_slice(match p {
                b"a" => b"User-agent: bot\nDisallow: /x\n".as_slice(),
                _ => b"User-agent: botb\nDisallow: /y\n".as_slice(),
            });
            Ok(())
        };
        let mut verdict = |line: &[u8]| {
            b.check(line, &mut load)
                .map(|v| v.allowed)
                .map_err(|_| MALFORMED)
        };
        assert_eq!(verdict(b"a\tbot\t/x"), Ok(false));
        // The last file's name and then more: another file.
        assert_eq!(verdict(b"ab\tbot\t/x"), Ok(true));
        assert_eq!(verdict(b"ab\tbotb\t/y"), Ok(false));
        // The last agent's name and then more: another agent.
        assert_eq!(verdict(b"ab\tbotbc\t/y"), Ok(true));
        assert_eq!(verdict(b"ab\tbotb\t/y\tz"), Err(MALFORMED));
        assert_eq!(verdict(b"ab\tbotb"), Err(MALFORMED));
        assert_eq!(verdict(b"\tbotb\t/y"), Err(MALFORMED));
        assert_eq!(verdict(b"a\tbot\t/y"), Ok(true));
        assert_eq!(loaded, [b"a".to_vec(), b"ab".to_vec()]);
    }

    /// Answers `lines` (`(file, agent, url)`, each file's text from
    /// `body`) and checks each verdict, rule and all, against the file's
    /// matcher asked alone.
    fn agrees_with_each_file_alone(
        b: &mut BatchChecker,
        semantics: Semantics,
        lines: &[(String, String, String)],
        body: impl Fn(&str) -> String,
    ) -> HashMap<String, usize> {
        let opts = ParseOptions::default();
        let mut loads: HashMap<String, usize> = HashMap::new();
        for (file, agent, url) in lines {
            let line = format!("{file}\t{agent}\t{url}");
            let text = body(file);
            let got = b.check(line.as_bytes(), |p, buf| {
                *loads
                    .entry(String::from_utf8_lossy(p).into_owned())
                    .or_default() += 1;
                buf.extend_from_slice(text.as_bytes());
                Ok(())
            });
            let m = Matcher::compile(text.as_bytes(), semantics, &opts);
            let want = m.check_path(agent, &crate::path_of(url.as_bytes()));
            assert_eq!(got, Ok(want), "{line}");
        }
        loads
    }

    #[test]
    fn a_file_compiled_for_some_agents_answers_them_as_compiled_whole() {
        let body = b"User-agent: a\nUser-agent: x\nDisallow: /a\n\nUser-agent: b\nDisallow: /b\nAllow: /b/ok\n\nUser-agent: *\nDisallow: /s\n\nUser-agent: A\nAllow: /a/ok\n";
        let opts = ParseOptions::default();
        let whole = Matcher::compile(body, Semantics::Google, &opts);
        let wanted: Vec<Box<[u8]>> = vec![Box::from(&b"a"[..]), Box::from(&b"zz"[..])];
        let part = compile_for(body, Semantics::Google, &opts, Some(&wanted));
        // `b`'s group is passed over.
        assert!(part.heap_size() < whole.heap_size());
        for agent in ["a", "A/1.0", "zz", "other"] {
            for path in ["/a", "/a/ok", "/b", "/b/ok", "/s", "/"] {
                assert_eq!(
                    part.check_path(agent, path.as_bytes()),
                    whole.check_path(agent, path.as_bytes()),
                    "{agent} {path}"
                );
            }
        }
        // The 1996 draft compiles every group.
        let draft = Matcher::compile(body, Semantics::Draft1996, &opts);
        let part = compile_for(body, Semantics::Draft1996, &opts, Some(&wanted));
        assert_eq!(part.heap_size(), draft.heap_size());
    }

    #[test]
    fn a_new_agent_compiles_a_file_again_and_reads_it_twice_at_most() {
        let body = |_: &str| {
            "User-agent: a\nDisallow: /a\n\nUser-agent: b\nDisallow: /b\n\nUser-agent: c\nDisallow: /c\n\nUser-agent: *\nDisallow: /s\n".to_owned()
        };
        let urls = ["/a", "/b", "/c", "/s"];
        let mut q = lines(&["f0"], &["a", "b"], &urls);
        q.extend(lines(&["f1", "f2"], &["a"], &urls));
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        let loads = agrees_with_each_file_alone(&mut b, Semantics::Google, &q, body);
        // `b` came to the last file loaded: compiled again from its bytes.
        assert_eq!(loads.values().max(), Some(&1));
        assert!(!b.whole);
        // `c` comes to files kept but not the last: each read again, and
        // from then on every group is compiled and every file kept; then
        // once more to the first, already whole.
        let mut q = lines(&["f1", "f2", "f0", "f3"], &["c", "a", "b"], &urls);
        q.extend(lines(&["f1"], &["d"], &urls));
        let more = agrees_with_each_file_alone(&mut b, Semantics::Google, &q, body);
        assert_eq!(more.len(), 4);
        assert!(more.values().all(|&n| n == 1), "{more:?}");
        assert!(b.whole && b.keep_all);
        // More agents than are wanted: every group compiled.
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        let many: Vec<String> = (0..WANTED + 2)
            .map(|i| format!("bot{}", char::from(b'a' + i as u8)))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut q = lines(&["g0"], &many, &urls);
        q.extend(lines(&["g1"], &["a", "b", "c", "botz"], &urls));
        let loads = agrees_with_each_file_alone(&mut b, Semantics::Google, &q, body);
        assert!(b.whole);
        assert_eq!(loads.values().max(), Some(&1));
    }

    fn lines(files: &[&str], agents: &[&str], urls: &[&str]) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for f in files {
            for a in agents {
                for u in urls {
                    out.push((f.to_string(), a.to_string(), u.to_string()));
                }
            }
        }
        out
    }

    #[test]
    fn agents_treated_alike_are_given_the_answers_kept() {
        let body =
            "User-agent: googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /x\nAllow: /x/ok\n";
        let agents = ["FooBot", "GPTBot", "Googlebot", "bingbot"];
        let urls = ["/x", "https://h.test/x/ok", "/g", "/y", "/x/ok/z#f"];
        for semantics in [Semantics::Google, Semantics::Draft1996] {
            let mut b = BatchChecker::new(semantics, ParseOptions::default());
            // A first file asks every agent (a file compiled again for a
            // new agent keeps no answers).
            let mut q = lines(&["first"], &agents, &["/"]);
            q.extend(lines(&["first"], &["bot"], &["/"]));
            agrees_with_each_file_alone(&mut b, semantics, &q, |_| body.to_owned());
            let before = b.reused();
            let q = lines(&["a"], &agents, &urls);
            agrees_with_each_file_alone(&mut b, semantics, &q, |_| body.to_owned());
            // GPTBot and bingbot fall to `*` as FooBot did.
            assert_eq!(b.reused() - before, 2 * urls.len() as u64, "{semantics:?}");
            // The same agents again, the URLs in another order: an answer
            // is given again only where the path is the one kept there.
            let mut again = urls;
            again.swap(0, 1);
            let q = lines(&["a"], &["bot", "FooBot"], &again);
            agrees_with_each_file_alone(&mut b, semantics, &q, |_| body.to_owned());
            assert_eq!(
                b.reused() - before,
                2 * urls.len() as u64 + 2 * 3,
                "{semantics:?}"
            );
        }
    }

    #[test]
    fn answers_kept_are_the_files_own() {
        // Files let go of give their places to new ones: each file's
        // answers are its own.
        let names: Vec<String> = (0..3 * RECENT).map(|i| format!("f{i}")).collect();
        let files: Vec<&str> = names.iter().map(String::as_str).collect();
        let q = lines(&files, &["a", "b", "c"], &["/x0", "/x1", "/x2", "/x3"]);
        let body = |f: &str| {
            let n: usize = f[1..].parse().expect("number");
            format!("User-agent: *\nDisallow: /x{}\n", n % 4)
        };
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        agrees_with_each_file_alone(&mut b, Semantics::Google, &q, body);
        // The first file is compiled again for each new agent, and keeps
        // no answers across that.
        assert_eq!(b.reused(), ((3 * RECENT - 1) * 2 * 4) as u64);
        // Lines that go back and forth between files keep no answers
        // across them.
        let mut mixed = q.clone();
        mixed.sort_by(|x, y| (&x.2, &x.1).cmp(&(&y.2, &y.1)));
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        agrees_with_each_file_alone(&mut b, Semantics::Google, &mixed, body);
        assert_eq!(b.reused(), 0);
    }

    #[test]
    fn answers_kept_are_bounded() {
        // Twelve agents, each with a group of its own (more selections
        // than are kept), asked paths longer than a run keeps.
        let mut body = String::new();
        // (Google's product tokens are letters, `-` and `_`.)
        let agents: Vec<String> = (b'a'..b'm').map(|c| format!("bot{}", c as char)).collect();
        for (i, a) in agents.iter().enumerate() {
            body.push_str(&format!("User-agent: {a}\nDisallow: /{i}\n\n"));
        }
        let long = format!("/1{}", "x".repeat(RUN_BYTES / 2));
        let urls = ["/1", "/2", long.as_str(), long.as_str(), "/3"];
        let agents: Vec<&str> = agents.iter().map(String::as_str).collect();
        let mut q = lines(&["first"], &agents, &["/"]);
        q.extend(lines(&["a"], &agents, &urls));
        q.extend(lines(&["a"], &agents, &urls));
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        agrees_with_each_file_alone(&mut b, Semantics::Google, &q, |_| body.clone());
        assert!(b.answers.runs.len() <= RUNS);
        assert!(b.answers.runs.iter().all(|r| r.paths.len() <= RUN_BYTES));
        // The second time round, the first RUNS agents' answers are kept
        // up to the path past the bytes kept.
        assert_eq!(b.reused(), (RUNS * (urls.len() - 2)) as u64);
    }

    #[test]
    fn a_file_in_the_place_of_the_last_one_keeps_none_of_its_answers() {
        // The lines come back to the oldest file kept, then a new file
        // takes its place: the new file's answers are its own.
        let mut files = vec!["f0".to_owned()];
        files.extend((1..RECENT).map(|i| format!("f{i}")));
        files.push("f0".to_owned());
        files.push("new".to_owned());
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let q = lines(&files, &["a"], &["/x", "/y"]);
        let body = |f: &str| match f {
            "new" => "User-agent: *\nDisallow: /y\n".to_owned(),
            _ => "User-agent: *\nDisallow: /x\n".to_owned(),
        };
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        agrees_with_each_file_alone(&mut b, Semantics::Google, &q, body);
        assert!(!b.keep_all);
    }

    #[test]
    fn long_agents_are_not_kept() {
        // Forty agents of 10,000 bytes each, distinct in their last
        // byte: answered as the file answers them, none of them kept.
        let body = |_: &str| "User-agent: *\nDisallow: /x\n".to_owned();
        let long: Vec<String> = (0..40u8)
            .map(|i| format!("{}{}", "a".repeat(10_000), char::from(b'a' + i % 26)))
            .collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        let q = lines(&["f"], &long, &["/x", "/y"]);
        let mut b = BatchChecker::new(Semantics::Google, ParseOptions::default());
        agrees_with_each_file_alone(&mut b, Semantics::Google, &q, body);
        let seen: usize = b.agents_seen.iter().map(|(a, _)| a.len()).sum();
        let wanted: usize = b.wanted.iter().map(|w| w.len()).sum();
        assert_eq!(seen + wanted, 0);
        assert!(b.whole);
    }
}
