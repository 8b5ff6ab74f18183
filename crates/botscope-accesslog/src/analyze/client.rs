//! One client's counters, sessions and active hours, and the segmented
//! store of all clients.

use std::net::IpAddr;

use thin_vec::ThinVec;

use super::*;

/// One session: a span of activity with no gap over [`SESSION_GAP`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    /// First request.
    pub start: i64,
    /// Last request.
    pub end: i64,
    /// Requests.
    pub requests: u32,
    /// Page requests.
    pub pages: u32,
}

/// Disjoint spans, sorted, each more than the gap apart: the latest
/// inline (`cur`, where nearly every request lands, read without
/// following a pointer), the earlier ones behind one pointer (length and
/// capacity in the allocation, none while there are none). 32 bytes.
#[derive(Debug, Clone)]
pub(super) struct Spans {
    cur: Span,
    done: ThinVec<Span>,
}

impl Spans {
    #[cfg(test)]
    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = &Span> {
        self.done.iter().chain(std::iter::once(&self.cur))
    }

    pub(super) fn new(t: i64, requests: u32, pages: u32) -> Spans {
        Spans {
            cur: Span {
                start: t,
                end: t,
                requests,
                pages,
            },
            done: ThinVec::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.done.len() + 1
    }

    /// Takes a request at `t` in where the latest span can (within the
    /// gap after it, or before it when there is no earlier span it could
    /// reach); otherwise returns the span to set aside: the latest one,
    /// closed by a request more than the gap after it, or a span of the
    /// one request before it. What is set aside is taken back by
    /// [`Spans::settle`]; the earlier spans stay clear of the latest
    /// meanwhile. The fold keeps set-aside spans in the partial's trail,
    /// so a request never follows a pointer out of its client.
    pub(super) fn step(&mut self, t: i64, page: bool) -> Option<Span> {
        let pages = u32::from(page);
        let cur = &mut self.cur;
        let single = Span {
            start: t,
            end: t,
            requests: 1,
            pages,
        };
        if t >= cur.start {
            if t <= cur.end.saturating_add(SESSION_GAP) {
                cur.end = cur.end.max(t);
                cur.requests = cur.requests.saturating_add(1);
                cur.pages = cur.pages.saturating_add(pages);
                return None;
            }
            return Some(std::mem::replace(cur, single));
        }
        if self.done.is_empty() && t >= cur.start.saturating_sub(SESSION_GAP) {
            cur.start = t;
            cur.requests = cur.requests.saturating_add(1);
            cur.pages = cur.pages.saturating_add(pages);
            return None;
        }
        Some(single)
    }

    /// Takes back spans [`Spans::step`] set aside (in any order): the
    /// spans become disjoint, sorted and more than the gap apart again.
    #[cfg(test)]
    pub(super) fn settle(&mut self, aside: &mut [Span]) {
        aside.sort_unstable_by_key(|s| s.start);
        self.merge_in([aside, &[]]);
    }

    /// Takes back set-aside spans already sorted by start.
    pub(super) fn take_back(&mut self, sorted: &[Span]) {
        self.merge_in([sorted, &[]]);
    }

    /// The spans as settling `aside` (sorted by start) into them would
    /// leave them, without settling: the same spans in the same order.
    pub(super) fn with<'a>(&'a self, aside: &'a [Span]) -> impl Iterator<Item = Span> + 'a {
        Merged::new(
            [&self.done, std::slice::from_ref(&self.cur)],
            [aside, &[]],
            |s: &Span| s.start,
            touch,
        )
    }

    /// Takes a request at `t` in, settled at once.
    #[cfg(test)]
    pub(super) fn add(&mut self, t: i64, page: bool) {
        let mut aside: Vec<Span> = self.step(t, page).into_iter().collect();
        self.settle(&mut aside);
    }

    pub(super) fn merge(&mut self, other: &Spans) {
        self.merge_in([&other.done, std::slice::from_ref(&other.cur)]);
    }

    /// Merges spans sorted by start (in two runs, one after the other)
    /// into these. The earlier spans that end more than the gap before the
    /// first of `other` stay where they are: in a log read in order, that
    /// is all of them, and a long history is not copied at each settling.
    fn merge_in(&mut self, other: [&[Span]; 2]) {
        let Some(first) = other.iter().find_map(|r| r.first()) else {
            return;
        };
        // The allocation is kept: settling a history costs none of its own.
        let done = &mut self.done;
        let keep = done.partition_point(|s| s.end.saturating_add(SESSION_GAP) < first.start);
        let tail = done.split_off(keep);
        // Exactly: histories are many and mostly short; a long one grows
        // by the allocator moving its pages, not its bytes. What is kept
        // ends more than the gap before anything merged: nothing merged
        // folds into it.
        done.reserve_exact(tail.len() + 1 + other[0].len() + other[1].len());
        merge_sorted(
            done,
            [&tail, std::slice::from_ref(&self.cur)],
            other,
            |s| s.start,
            touch,
        );
        // `done` has at least self's latest span.
        if let Some(cur) = done.pop() {
            self.cur = cur;
        }
    }
}

/// Two sequences sorted by `key`, each in two runs (its earlier items,
/// then its latest), merged onto the end of `out` (linear, no sort), each
/// item folded into the one before it when `fold` takes it.
fn merge_sorted<T: Copy, K: Ord>(
    out: &mut ThinVec<T>,
    a: [&[T]; 2],
    b: [&[T]; 2],
    key: impl Fn(&T) -> K,
    mut fold: impl FnMut(&mut T, &T) -> bool,
) {
    let mut push = |item: &T| {
        if !out.last_mut().is_some_and(|last| fold(last, item)) {
            out.push(*item);
        }
    };
    let (mut a, mut b) = (Runs::new(a), Runs::new(b));
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        if key(x) <= key(y) {
            push(x);
            a.advance();
        } else {
            push(y);
            b.advance();
        }
    }
    for rest in [a, b] {
        rest.rest().for_each(&mut push);
    }
}

/// A cursor over two runs read one after the other.
struct Runs<'a, T> {
    runs: [&'a [T]; 2],
    run: usize,
    at: usize,
}

impl<'a, T> Runs<'a, T> {
    fn new(runs: [&'a [T]; 2]) -> Self {
        let mut r = Runs {
            runs,
            run: 0,
            at: 0,
        };
        r.skip_empty();
        r
    }

    fn skip_empty(&mut self) {
        while self.run < 2 && self.at >= self.runs[self.run].len() {
            self.run += 1;
            self.at = 0;
        }
    }

    fn peek(&self) -> Option<&'a T> {
        self.runs.get(self.run).and_then(|r| r.get(self.at))
    }

    fn advance(&mut self) {
        self.at += 1;
        self.skip_empty();
    }

    /// What is left, as one iterator.
    fn rest(self) -> impl Iterator<Item = &'a T> {
        let (first, second) = match self.run {
            0 => (&self.runs[0][self.at..], self.runs[1]),
            1 => (&self.runs[1][self.at..], &[][..]),
            _ => (&[][..], &[][..]),
        };
        first.iter().chain(second)
    }
}

/// Folds span `s` into `last` (the span before it in start order) when
/// it starts within the gap after it.
fn touch(last: &mut Span, s: &Span) -> bool {
    let touches = s.start <= last.end.saturating_add(SESSION_GAP);
    if touches {
        join(last, s);
    }
    touches
}

/// Folds the count `p` into `last` when they are of the same hour.
fn same_hour(last: &mut (i32, u32), p: &(i32, u32)) -> bool {
    let same = last.0 == p.0;
    if same {
        last.1 = last.1.saturating_add(p.1);
    }
    same
}

/// Two sequences sorted by a key, each in two runs ([`merge_sorted`]'s
/// input), merged lazily: each item folded into the one before it when
/// `fold` takes it. What [`merge_sorted`] pushes, one item at a time.
struct Merged<'a, T, K, F> {
    a: Runs<'a, T>,
    b: Runs<'a, T>,
    pending: Option<T>,
    key: K,
    fold: F,
}

impl<'a, T: Copy, O: Ord, K: Fn(&T) -> O, F: Fn(&mut T, &T) -> bool> Merged<'a, T, K, F> {
    fn new(a: [&'a [T]; 2], b: [&'a [T]; 2], key: K, fold: F) -> Self {
        Merged {
            a: Runs::new(a),
            b: Runs::new(b),
            pending: None,
            key,
            fold,
        }
    }
}

impl<T: Copy, O: Ord, K: Fn(&T) -> O, F: Fn(&mut T, &T) -> bool> Iterator for Merged<'_, T, K, F> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            // The next item in key order, `a` first on ties (as
            // `merge_sorted` takes them).
            let x = match (self.a.peek(), self.b.peek()) {
                (Some(x), Some(y)) if (self.key)(x) <= (self.key)(y) => {
                    self.a.advance();
                    *x
                }
                (_, Some(y)) => {
                    self.b.advance();
                    *y
                }
                (Some(x), None) => {
                    self.a.advance();
                    *x
                }
                (None, None) => return self.pending.take(),
            };
            match &mut self.pending {
                Some(last) => {
                    if !(self.fold)(last, &x) {
                        return Some(std::mem::replace(last, x));
                    }
                }
                None => self.pending = Some(x),
            }
        }
    }
}

pub(super) fn join(a: &mut Span, b: &Span) {
    a.start = a.start.min(b.start);
    a.end = a.end.max(b.end);
    a.requests = a.requests.saturating_add(b.requests);
    a.pages = a.pages.saturating_add(b.pages);
}

/// Requests per hour (hours since the epoch), sorted by hour: the latest
/// hour inline (where nearly every request lands), the earlier ones behind
/// one pointer ([`Spans`]). 16 bytes.
#[derive(Debug, Clone)]
pub(super) struct Hours {
    cur: (i32, u32),
    earlier: ThinVec<(i32, u32)>,
}

/// The hour of a time, as stored (times are years 1970–9999).
pub(super) fn hour_of(t: i64) -> i32 {
    let h = t.div_euclid(3600);
    i32::try_from(h).unwrap_or(if h < 0 { i32::MIN } else { i32::MAX })
}

impl Hours {
    pub(super) fn new(h: i32, n: u32) -> Hours {
        Hours {
            cur: (h, n),
            earlier: ThinVec::new(),
        }
    }

    pub(super) fn each(&self, mut f: impl FnMut(i64, u32)) {
        for (h, n) in &self.earlier {
            f(i64::from(*h), *n);
        }
        f(i64::from(self.cur.0), self.cur.1);
    }

    /// Counts `n` requests in hour `h` where the latest hour is `h`;
    /// otherwise returns the count to set aside: the latest hour's, when
    /// `h` is later, or `(h, n)` itself. [`Hours::settle`] takes them
    /// back.
    pub(super) fn step(&mut self, h: i32, n: u32) -> Option<(i32, u32)> {
        let cur = &mut self.cur;
        if cur.0 == h {
            cur.1 = cur.1.saturating_add(n);
            None
        } else if h > cur.0 {
            Some(std::mem::replace(cur, (h, n)))
        } else {
            Some((h, n))
        }
    }

    /// Takes back counts [`Hours::step`] set aside (in any order).
    #[cfg(test)]
    pub(super) fn settle(&mut self, aside: &mut [(i32, u32)]) {
        aside.sort_unstable_by_key(|p| p.0);
        self.merge_in([aside, &[]]);
    }

    /// Takes back set-aside counts already sorted by hour.
    pub(super) fn take_back(&mut self, sorted: &[(i32, u32)]) {
        self.merge_in([sorted, &[]]);
    }

    /// The counts as settling `aside` (sorted by hour) into them would
    /// leave them, without settling ([`Spans::with`]).
    pub(super) fn with<'a>(
        &'a self,
        aside: &'a [(i32, u32)],
    ) -> impl Iterator<Item = (i32, u32)> + 'a {
        Merged::new(
            [&self.earlier, std::slice::from_ref(&self.cur)],
            [aside, &[]],
            |p: &(i32, u32)| p.0,
            same_hour,
        )
    }

    /// Counts `n` requests in hour `h`, settled at once.
    #[cfg(test)]
    pub(super) fn add(&mut self, h: i32, n: u32) {
        if let Some(p) = self.step(h, n) {
            self.settle(&mut [p]);
        }
    }

    pub(super) fn merge(&mut self, other: &Hours) {
        self.merge_in([&other.earlier, std::slice::from_ref(&other.cur)]);
    }

    /// Merges counts sorted by hour (in two runs, one after the other)
    /// into these; the earlier hours before the first of `theirs` stay
    /// where they are ([`Spans::merge_in`]).
    fn merge_in(&mut self, theirs: [&[(i32, u32)]; 2]) {
        let Some(first) = theirs.iter().find_map(|r| r.first()) else {
            return;
        };
        let earlier = &mut self.earlier;
        let keep = earlier.partition_point(|p| p.0 < first.0);
        let tail = earlier.split_off(keep);
        earlier.reserve_exact(tail.len() + 1 + theirs[0].len() + theirs[1].len());
        merge_sorted(
            earlier,
            [&tail, std::slice::from_ref(&self.cur)],
            theirs,
            |p| p.0,
            same_hour,
        );
        // `earlier` has at least self's latest hour.
        if let Some(cur) = earlier.pop() {
            self.cur = cur;
        }
    }
}

/// What one client (IP + User-Agent) did. Counters saturate.
///
/// Laid out for the fold: what every request touches comes first, and a
/// client starts on a cache line, so a request reads two lines of it, not
/// three or four (clients are looked up at random in a busy log).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Client {
    /// Requests.
    pub requests: u64,
    /// Response bytes.
    pub bytes: u64,
    pub(super) prev: i64,
    pub(super) sessions: Spans,
    pub(super) hours: Hours,
    /// Responses by class: 1xx, 2xx, 3xx, 4xx, 5xx, other.
    pub status: [u32; 6],
    /// Page requests ([`crate::PathKind::Page`]).
    pub pages: u32,
    /// Asset requests.
    pub assets: u32,
    /// Page requests without a Referer.
    pub pages_without_referer: u32,
    /// The chunk ([`Analyzer::begin_chunk`]) of `prev`.
    pub(super) prev_chunk: u32,
    /// Hashes of the first two distinct paths; `more_paths` past that.
    pub(super) paths: [u32; 2],
    pub(super) more_paths: bool,
    /// The address.
    pub ip: IpAddr,
    /// Requests judged against robots.txt (counted when the fold ends,
    /// from the requests, robots.txt fetches and `unjudged`: a request
    /// touches no counter of its own for being judged).
    pub judged: u32,
    /// Requests the client's robots.txt group disallowed.
    pub disallowed: u32,
    /// Requests other than for robots.txt that no version of robots.txt
    /// in force could judge.
    pub(super) unjudged: u32,
    pub(super) agent: u32,
    /// HEAD requests.
    pub head: u32,
    /// POST requests.
    pub posts: u32,
    /// POST requests 2 seconds or less after the client's previous request
    /// in the same chunk of input (chunks are cut by bytes, so the count
    /// does not depend on which thread reads which chunk).
    pub quick_posts: u32,
    /// robots.txt fetches.
    pub robots_txt: u32,
    /// Requests for files only crawlers look for ([`crate::PathKind::CrawlerOnly`]).
    pub crawler_only: u32,
    /// Requests probing for weak spots ([`crate::PROBES`]).
    pub probes: u32,
    /// Requests with a method no web client sends.
    pub odd_methods: u32,
    /// Requests with an absolute URL as target (proxy probes).
    pub absolute: u32,
}

impl Client {
    pub(super) fn new(ip: IpAddr, agent: u32, t: i64) -> Client {
        Client {
            ip,
            agent,
            requests: 0,
            bytes: 0,
            pages: 0,
            assets: 0,
            head: 0,
            posts: 0,
            quick_posts: 0,
            pages_without_referer: 0,
            status: [0; 6],
            robots_txt: 0,
            crawler_only: 0,
            probes: 0,
            odd_methods: 0,
            absolute: 0,
            judged: 0,
            disallowed: 0,
            unjudged: 0,
            prev: t,
            prev_chunk: u32::MAX,
            paths: [0; 2],
            more_paths: false,
            sessions: Spans::new(t, 0, 0),
            hours: Hours::new(hour_of(t), 0),
        }
    }

    /// A stand-in that owns nothing (for moving clients out of a slot).
    pub(super) fn empty() -> Client {
        Client::new(IpAddr::from([0, 0, 0, 0]), 0, 0)
    }

    /// Index of the client's User-Agent in [`Analysis::agents`].
    pub fn agent(&self) -> usize {
        self.agent as usize
    }

    /// Last request time (the end of the last session): what a client
    /// sets aside always ends before its latest session.
    pub fn last(&self) -> i64 {
        self.sessions.cur.end
    }

    /// Takes what it set aside (sorted) back into its sessions and hours.
    pub(super) fn take_back(&mut self, spans: &[Span], hours: &[(i32, u32)]) {
        if !spans.is_empty() {
            self.sessions.take_back(spans);
        }
        if !hours.is_empty() {
            self.hours.take_back(hours);
        }
    }

    /// Distinct paths requested: 0, 1, 2, or 3 meaning "more than 2".
    pub fn distinct_paths(&self) -> u32 {
        if self.more_paths {
            3
        } else {
            self.paths.iter().filter(|p| **p != 0).count() as u32
        }
    }

    pub(super) fn note_path(&mut self, target: &str) {
        if self.more_paths {
            return;
        }
        // The process's hasher (the threads' clients merge by it), 32 bits
        // of it, never 0.
        use std::hash::BuildHasher;
        let h = (fold::hasher().hash_one(target) as u32).max(1);
        if self.paths[0] == h || self.paths[1] == h {
            return;
        }
        if self.paths[0] == 0 {
            self.paths[0] = h;
        } else if self.paths[1] == 0 {
            self.paths[1] = h;
        } else {
            self.more_paths = true;
        }
    }

    pub(super) fn merge(&mut self, o: &Client) {
        let add = |a: &mut u32, b: u32| *a = a.saturating_add(b);
        self.requests = self.requests.saturating_add(o.requests);
        self.bytes = self.bytes.saturating_add(o.bytes);
        add(&mut self.pages, o.pages);
        add(&mut self.assets, o.assets);
        add(&mut self.head, o.head);
        add(&mut self.posts, o.posts);
        add(&mut self.quick_posts, o.quick_posts);
        add(&mut self.pages_without_referer, o.pages_without_referer);
        for (a, b) in self.status.iter_mut().zip(o.status) {
            add(a, b);
        }
        add(&mut self.robots_txt, o.robots_txt);
        add(&mut self.crawler_only, o.crawler_only);
        add(&mut self.probes, o.probes);
        add(&mut self.odd_methods, o.odd_methods);
        add(&mut self.absolute, o.absolute);
        add(&mut self.judged, o.judged);
        add(&mut self.disallowed, o.disallowed);
        add(&mut self.unjudged, o.unjudged);
        for p in o.paths.into_iter().filter(|p| *p != 0) {
            if self.more_paths {
                break;
            }
            if self.paths.contains(&p) {
                continue;
            }
            if let Some(slot) = self.paths.iter_mut().find(|s| **s == 0) {
                *slot = p;
            } else {
                self.more_paths = true;
            }
        }
        self.more_paths |= o.more_paths;
        self.sessions.merge(&o.sessions);
        self.hours.merge(&o.hours);
    }
}

/// One client with the sessions and hours it set aside: its history as
/// settling would leave it, read without settling. Dereferences to the
/// client's counters.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    client: &'a Client,
    spans: &'a [Span],
    hours: &'a [(i32, u32)],
}

impl std::ops::Deref for History<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client
    }
}

impl<'a> History<'a> {
    /// Sessions, in time order.
    pub fn sessions(&self) -> impl Iterator<Item = Span> + 'a {
        self.client.sessions.with(self.spans)
    }

    /// How many sessions.
    pub fn session_count(&self) -> usize {
        if self.spans.is_empty() {
            self.client.sessions.len()
        } else {
            self.sessions().count()
        }
    }

    /// First request time (the start of the first session: the earliest
    /// start, which the merging keeps).
    pub fn first(&self) -> i64 {
        let s = &self.client.sessions;
        let own = s.done.first().unwrap_or(&s.cur).start;
        self.spans.first().map_or(own, |a| own.min(a.start))
    }

    /// Requests per hour (hour = seconds since the epoch / 3600).
    pub fn each_hour(&self, mut f: impl FnMut(i64, u32)) {
        if self.hours.is_empty() {
            self.client.hours.each(f);
        } else {
            for (h, n) in self.client.hours.with(self.hours) {
                f(i64::from(h), n);
            }
        }
    }
}

/// Entries of the clients, by client index, each client's sorted by
/// key: a trail grouped ([`Aside::group`]).
#[derive(Debug)]
pub(super) struct Aside<T> {
    /// Where each client's entries start in `items`, and one past the
    /// last client's end; empty when there are none.
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for Aside<T> {
    fn default() -> Self {
        Aside {
            start: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl<T: Copy + Default> Aside<T> {
    /// Client `i`'s entries.
    pub(super) fn of(&self, i: usize) -> &[T] {
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Keeps the entries of the first `n` clients only (`n + 1` starts).
    fn truncate(&mut self, n: usize) {
        let last = self.start.last().copied().unwrap_or(0);
        self.start.resize(n + 1, last);
        self.items.truncate(self.start[n] as usize);
    }

    /// The trail's entries (client index, entry) of `clients` clients,
    /// grouped by a counting sort (linear), each client's sorted by
    /// `key`; the trail is emptied.
    pub(super) fn group<K: Ord>(
        trail: &mut Vec<(u32, T)>,
        clients: usize,
        key: impl Fn(&T) -> K,
    ) -> Aside<T> {
        if trail.is_empty() {
            return Aside::default();
        }
        let mut start = vec![0u32; clients + 1];
        for (ci, _) in trail.iter() {
            start[*ci as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut at = start.clone();
        let mut items = vec![T::default(); trail.len()];
        for (ci, x) in trail.drain(..) {
            let slot = &mut at[ci as usize];
            items[*slot as usize] = x;
            *slot += 1;
        }
        for w in start.windows(2) {
            let group = &mut items[w[0] as usize..w[1] as usize];
            if group.len() > 1 {
                group.sort_unstable_by_key(&key);
            }
        }
        Aside { start, items }
    }

    /// The entries of `n` clients of `self` but those of `taken` (sorted
    /// client indices), then those of `theirs`' clients that `kept` keeps,
    /// in order: the entries of clients that keep their places here and
    /// of those appended after them.
    pub(super) fn rebuilt(
        self,
        n: usize,
        taken: &[u32],
        theirs: &Aside<T>,
        kept: &[bool],
    ) -> Aside<T> {
        if self.is_empty() && theirs.is_empty() {
            return Aside::default();
        }
        // Nothing taken and every client of theirs kept: theirs after
        // ours, whole.
        if taken.is_empty() && kept.iter().all(|k| *k) {
            let mut out = self;
            out.truncate(n);
            let base = out.items.len() as u32;
            out.items.extend_from_slice(&theirs.items);
            match theirs.start.get(1..) {
                Some(ends) => out.start.extend(ends.iter().map(|e| e + base)),
                None => out.start.extend(kept.iter().map(|_| base)),
            }
            return out;
        }
        let mut out = Aside {
            start: Vec::with_capacity(n + kept.len() + 1),
            items: Vec::with_capacity(self.items.len() + theirs.items.len()),
        };
        out.start.push(0);
        let mut taken = taken.iter().peekable();
        for i in 0..n {
            if taken.next_if(|&&t| t as usize == i).is_none() {
                out.items.extend_from_slice(self.of(i));
            }
            out.start.push(out.items.len() as u32);
        }
        for (j, _) in kept.iter().enumerate().filter(|(_, k)| **k) {
            out.items.extend_from_slice(theirs.of(j));
            out.start.push(out.items.len() as u32);
        }
        out
    }
}

/// Clients in segments of fixed size: growing never copies, and merging
/// frees the other side's segments as it goes, so peak memory stays near
/// the clients' own size.
#[derive(Debug, Default)]
pub struct Clients {
    pub(super) segs: Vec<Vec<Client>>,
    pub(super) len: usize,
    /// Sessions and hours the clients set aside, not taken back into
    /// them: a worker's last settling leaves them here ([`History`] reads
    /// them), so that its clients' histories are not each grown (an
    /// allocation each) at the end of the fold.
    pub(super) spans: Aside<Span>,
    pub(super) hours: Aside<(i32, u32)>,
}

pub(super) const SEG_BITS: usize = 14;
pub(super) const SEG: usize = 1 << SEG_BITS;

impl Clients {
    pub(super) fn push(&mut self, c: Client) -> u32 {
        if self.segs.last().is_none_or(|s| s.len() == SEG) {
            self.segs.push(Vec::with_capacity(SEG));
        }
        if let Some(seg) = self.segs.last_mut() {
            seg.push(c);
        }
        self.len += 1;
        (self.len - 1) as u32
    }

    /// Number of clients.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every client, in index order.
    pub fn iter(&self) -> impl Iterator<Item = &Client> {
        self.segs.iter().flatten()
    }

    /// Merges `theirs[j]` into client `i` for each `(i, j)` of `pairs`
    /// (each `i` at most once), on up to `threads` threads, each taking
    /// a disjoint range of clients.
    pub(super) fn merge_pairs(
        &mut self,
        pairs: &mut [(u32, u32)],
        theirs: &[&Client],
        threads: usize,
    ) {
        /// Fewer merges are done on the calling thread.
        const PARALLEL_FROM: usize = 1024;
        let threads = threads.max(1);
        if threads == 1 || pairs.len() < PARALLEL_FROM {
            for &(i, j) in pairs.iter() {
                self.get_mut(i).merge(theirs[j as usize]);
            }
            return;
        }
        pairs.sort_unstable_by_key(|p| p.0);
        let pairs = &*pairs;
        /// A range of clients (its first index, the clients) and the
        /// pairs that fall in it.
        type Range<'a> = (usize, &'a mut [Client], &'a [(u32, u32)]);
        let mut work: Vec<Range<'_>> = Vec::new();
        for (si, seg) in self.segs.iter_mut().enumerate() {
            // Client indices are (segment, offset) ([`Clients::get_mut`]).
            let base = si << SEG_BITS;
            let step = seg.len().div_ceil(threads).max(1);
            for (k, range) in seg.chunks_mut(step).enumerate() {
                let lo = base + k * step;
                let hi = lo + range.len();
                let a = pairs.partition_point(|p| (p.0 as usize) < lo);
                let b = pairs.partition_point(|p| (p.0 as usize) < hi);
                if a < b {
                    work.push((lo, range, &pairs[a..b]));
                }
            }
        }
        let mut shares: Vec<Vec<Range<'_>>> = (0..threads).map(|_| Vec::new()).collect();
        for (n, w) in work.into_iter().enumerate() {
            shares[n % threads].push(w);
        }
        std::thread::scope(|s| {
            for share in shares {
                s.spawn(move || {
                    for (lo, range, ps) in share {
                        for &(i, j) in ps {
                            range[i as usize - lo].merge(theirs[j as usize]);
                        }
                    }
                });
            }
        });
    }

    /// Appends, in order, the clients of `segs` (segments as this store
    /// makes them) whose `keep` flag is set, moving them within `segs`'
    /// own allocations: our last segment is topped up first, the rest is
    /// compacted in place and the segments are taken over.
    pub(super) fn append_kept(&mut self, mut segs: Vec<Vec<Client>>, keep: &[bool]) {
        let (mut w, mut wo) = (0usize, 0usize);
        let mut k = 0usize;
        for r in 0..segs.len() {
            for ro in 0..segs[r].len() {
                let keep_it = keep.get(k).copied().unwrap_or(false);
                k += 1;
                if !keep_it {
                    continue;
                }
                self.len += 1;
                if let Some(last) = self.segs.last_mut()
                    && last.len() < SEG
                {
                    last.push(std::mem::replace(&mut segs[r][ro], Client::empty()));
                    continue;
                }
                // (w, wo) is never after (r, ro).
                if w == r {
                    segs[r].swap(wo, ro);
                } else {
                    let (head, tail) = segs.split_at_mut(r);
                    std::mem::swap(&mut head[w][wo], &mut tail[0][ro]);
                }
                wo += 1;
                if wo == SEG {
                    (w, wo) = (w + 1, 0);
                }
            }
        }
        segs.truncate(w + usize::from(wo > 0));
        if wo > 0
            && let Some(last) = segs.last_mut()
        {
            last.truncate(wo);
        }
        self.segs.extend(segs);
    }

    /// Client `i` with what it set aside.
    pub fn history(&self, i: usize) -> History<'_> {
        History {
            client: &self[i],
            spans: self.spans.of(i),
            hours: self.hours.of(i),
        }
    }

    /// Takes what every client set aside back into it.
    pub(super) fn take_back_all(&mut self) {
        let (spans, hours) = (
            std::mem::take(&mut self.spans),
            std::mem::take(&mut self.hours),
        );
        if spans.is_empty() && hours.is_empty() {
            return;
        }
        for i in 0..self.len {
            self.take_back(i as u32, &spans, &hours);
        }
    }

    /// Takes what client `i` set aside, by `spans` and `hours`, back
    /// into it.
    pub(super) fn take_back(&mut self, i: u32, spans: &Aside<Span>, hours: &Aside<(i32, u32)>) {
        let (s, h) = (spans.of(i as usize), hours.of(i as usize));
        if !s.is_empty() || !h.is_empty() {
            self.get_mut(i).take_back(s, h);
        }
    }

    pub(super) fn get_mut(&mut self, i: u32) -> &mut Client {
        let i = i as usize;
        &mut self.segs[i >> SEG_BITS][i & (SEG - 1)]
    }
}

impl std::ops::Index<usize> for Clients {
    type Output = Client;
    fn index(&self, i: usize) -> &Client {
        &self.segs[i >> SEG_BITS][i & (SEG - 1)]
    }
}
