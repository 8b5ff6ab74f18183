//! Many questions over many files: `ROBOTS_PATH<TAB>AGENT<TAB>URL` lines,
//! each robots file compiled the first time a line names it (through a
//! loader the caller gives: this crate does no I/O) and found again by its
//! name's bytes, the last one without a lookup, as a bulk audit's lines
//! come grouped by file.

use std::collections::HashMap;

use crate::{Matcher, ParseOptions, Selection, Semantics, Verdict, path_of};

/// Answers query lines.
#[derive(Debug)]
pub struct BatchChecker {
    semantics: Semantics,
    opts: ParseOptions,
    index: HashMap<Box<[u8]>, usize>,
    compiled: Vec<Result<Matcher, String>>,
    last: Option<(Box<[u8]>, usize)>,
    /// The groups the last line's agent selects in its file (a bulk
    /// audit's lines come grouped by file and agent): the file's index,
    /// the agent's bytes, the selection.
    selected: Option<(usize, Box<[u8]>, Selection)>,
    /// The bytes of the file being compiled, kept from one file to the
    /// next (a bulk audit reads thousands).
    scratch: Vec<u8>,
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
            last: None,
            selected: None,
            scratch: Vec::new(),
        }
    }

    /// The verdict for one line, or why there is none: the line is
    /// malformed, or `load` could not give the file (its reason, kept for
    /// every later line naming the same file). `load` is given the file's
    /// path and an empty buffer to fill with its bytes.
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
        let i = match &self.last {
            Some((_, i)) if same_file => *i,
            _ => {
                let i = match self.index.get(path) {
                    Some(&i) => i,
                    None => {
                        self.scratch.clear();
                        let m = load(path, &mut self.scratch)
                            .map(|()| Matcher::compile(&self.scratch, self.semantics, &self.opts));
                        self.compiled.push(m);
                        self.index.insert(path.into(), self.compiled.len() - 1);
                        self.compiled.len() - 1
                    }
                };
                self.last = Some((path.into(), i));
                i
            }
        };
        let m = self.compiled[i].as_ref().map_err(String::as_str)?;
        let sel = match &self.selected {
            Some((f, a, sel)) if *f == i && **a == *agent => sel,
            _ => {
                let sel = m.select(&String::from_utf8_lossy(agent));
                &self.selected.insert((i, agent.into(), sel)).2
            }
        };
        Ok(m.check_selected(sel, &path_of(url)))
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
}
