//! What is kept beside the counters: request seconds for pace, path counts
//! per robot, example requests.

use super::*;

/// One second of a robot's requests: how many, how many of them were
/// for robots.txt, and how many for paths its robots.txt closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Second {
    /// Seconds since the epoch.
    pub t: i64,
    /// Requests in this second.
    pub requests: u32,
    /// Of them, for robots.txt.
    pub robots_txt: u32,
    /// Of them, for paths the robot's group closed then.
    pub closed: u32,
}

impl Second {
    fn absorb(&mut self, o: &Second) {
        self.requests = self.requests.saturating_add(o.requests);
        self.robots_txt = self.robots_txt.saturating_add(o.robots_txt);
        self.closed = self.closed.saturating_add(o.closed);
    }
}

/// Distinct request seconds with counts, for pace, Crawl-delay and
/// compliance. Appended in any order; sorted and folded when it doubles.
#[derive(Debug, Clone, Default)]
pub struct Seconds {
    pub(super) v: Vec<Second>,
    pub(super) folded: usize,
}

impl Seconds {
    /// Adds a request at `t`, for robots.txt or not, to a closed path or
    /// not.
    pub fn push(&mut self, t: i64, robots_txt: bool, closed: bool) {
        let one = Second {
            t,
            requests: 1,
            robots_txt: u32::from(robots_txt),
            closed: u32::from(closed),
        };
        if let Some(last) = self.v.last_mut()
            && last.t == t
        {
            last.absorb(&one);
            return;
        }
        self.v.push(one);
        if self.v.len() >= 2 * self.folded.max(1024) {
            self.fold();
        }
    }

    pub(super) fn fold(&mut self) {
        self.v.sort_unstable_by_key(|p| p.t);
        let mut out: Vec<Second> = Vec::with_capacity(self.v.len());
        for s in self.v.drain(..) {
            match out.last_mut() {
                Some(last) if last.t == s.t => last.absorb(&s),
                _ => out.push(s),
            }
        }
        self.folded = out.len();
        self.v = out;
    }

    /// Adds another set of seconds (folded lazily, when the set doubles).
    pub fn extend_from(&mut self, o: &Seconds) {
        self.v.extend_from_slice(&o.v);
        if self.v.len() >= 2 * self.folded.max(1024) {
            self.fold();
        }
    }

    /// The seconds, sorted, each once.
    pub fn sorted(&mut self) -> &[Second] {
        if self.folded != self.v.len() {
            self.fold();
        }
        &self.v
    }
}

/// Path counts for one robot: exact up to [`TOP_PATHS_CAP`] distinct
/// paths, then the rarest are dropped (lossy counting), so the top of
/// the table stays right and the memory stays bounded. The paths live in
/// one text buffer (compacted when the rarest are dropped), so a new path
/// costs no allocation of its own.
#[derive(Debug, Clone, Default)]
pub struct TopPaths {
    table: hashbrown::HashTable<PathCount>,
    /// The paths' bytes, each a whole `&str` as it came.
    text: Vec<u8>,
    hasher: Hasher,
    /// Paths were dropped: counts are lower bounds.
    pub approximate: bool,
}

/// A path (a slice of [`TopPaths::text`]) and its count.
#[derive(Debug, Clone, Copy)]
struct PathCount {
    hash: u64,
    start: u32,
    len: u32,
    count: u64,
}

impl TopPaths {
    pub(super) fn add(&mut self, path: &str, n: u64) {
        use std::hash::BuildHasher;
        let path = clip(path);
        let hash = self.hasher.hash_one(path);
        let text = &self.text;
        let at = |e: &PathCount| &text[e.start as usize..(e.start + e.len) as usize];
        if let Some(e) = self
            .table
            .find_mut(hash, |e| e.hash == hash && at(e) == path.as_bytes())
        {
            e.count += n;
            return;
        }
        // `clip` keeps paths short and the table small: the text stays far
        // below 4 GiB.
        let start = self.text.len() as u32;
        self.text.extend_from_slice(path.as_bytes());
        let e = PathCount {
            hash,
            start,
            len: path.len() as u32,
            count: n,
        };
        self.table.insert_unique(hash, e, |e| e.hash);
        if self.table.len() > TOP_PATHS_CAP {
            self.prune();
        }
    }

    /// Distinct paths counted.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// No path counted.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub(super) fn prune(&mut self) {
        self.approximate = true;
        let mut cut = 1;
        while self.table.len() > TOP_PATHS_CAP / 2 {
            self.table.retain(|e| e.count > cut);
            cut *= 2;
        }
        // The survivors move to the front in the order of their text, each
        // down over room already passed: no second buffer, whose fresh
        // pages a busy counter would touch at every prune.
        let mut live: Vec<&mut PathCount> = self.table.iter_mut().collect();
        live.sort_unstable_by_key(|e| e.start);
        let mut at = 0usize;
        for e in live {
            let (s, l) = (e.start as usize, e.len as usize);
            self.text.copy_within(s..s + l, at);
            e.start = at as u32;
            at += l;
        }
        self.text.truncate(at);
    }

    fn entries(&self) -> impl Iterator<Item = (&str, u64)> {
        self.table.iter().map(|e| {
            let b = &self.text[e.start as usize..(e.start + e.len) as usize];
            // Always whole: each path went in as a `&str`.
            (std::str::from_utf8(b).unwrap_or_default(), e.count)
        })
    }

    /// Adds another counter's counts.
    pub(super) fn merge(&mut self, o: TopPaths) {
        self.approximate |= o.approximate;
        // The most counted first, ties by path: which paths a prune during
        // the merge keeps does not depend on the order of `o`'s table (its
        // hasher's seed), so a log gives the same top paths every time.
        for (p, n) in o.top(usize::MAX) {
            self.add(p, n);
        }
    }

    /// The `n` most requested paths, most first (ties by path).
    pub fn top(&self, n: usize) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self.entries().collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.truncate(n);
        v
    }
}

pub(super) fn clip(s: &str) -> &str {
    if s.len() <= MAX_SAMPLE_PATH {
        return s;
    }
    let mut end = MAX_SAMPLE_PATH;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A request kept as an example (a probe, a disallowed request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// Its line (in its input).
    pub line: u64,
    /// When.
    pub time: i64,
    /// The request target (with the method for odd methods).
    pub target: String,
}

/// Keeps the first [`CLIENT_SAMPLES`] examples by line, each target once
/// when `distinct`: the same whatever the order of records and merges.
pub(super) fn keep_first(
    s: &mut Vec<Example>,
    more: impl IntoIterator<Item = Example>,
    distinct: bool,
) {
    s.extend(more);
    s.sort_by(|a, b| a.line.cmp(&b.line).then_with(|| a.target.cmp(&b.target)));
    if distinct {
        let mut seen: Vec<String> = Vec::with_capacity(CLIENT_SAMPLES);
        s.retain(|e| {
            if seen.contains(&e.target) {
                false
            } else {
                seen.push(e.target.clone());
                true
            }
        });
    }
    s.truncate(CLIENT_SAMPLES);
}
