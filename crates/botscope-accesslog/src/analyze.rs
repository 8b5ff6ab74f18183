//! Aggregation per client (IP + User-Agent): counters, sessions, active
//! hours, robots.txt judgements; partial results from several threads
//! merge into one; then every client is classified, with reasons.
//!
//! Memory is bounded by distinct clients (and, per client, by the
//! distinct sessions and hours it was active), never by lines: a record is
//! folded into its client's counters and forgotten. Sessions tolerate
//! records in any order (rotated files, merged logs, the 49% disorder of
//! real logs): each client keeps disjoint activity spans that grow and
//! join as records arrive.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::net::IpAddr;

use crate::paths::{PathKind, is_absolute, is_common_method, path_kind, probe};
use crate::{MalformedStats, Record};

/// Inactivity that ends a session: 30 minutes.
pub const SESSION_GAP: i64 = 30 * 60;

/// Sample paths kept per client for reasons (probes, disallowed requests).
pub const CLIENT_SAMPLES: usize = 5;

/// Distinct paths counted exactly per robot before the counter becomes
/// approximate (the rarest paths are dropped).
pub const TOP_PATHS_CAP: usize = 4096;

/// Longest request target kept in samples and top-path tables.
const MAX_SAMPLE_PATH: usize = 256;

pub(crate) type Hasher = foldhash::fast::RandomState;
pub(crate) type Map<K, V> = HashMap<K, V, Hasher>;
pub(crate) type Set<T> = std::collections::HashSet<T, Hasher>;

/// What the caller's bot registry says about one User-Agent. Computed once
/// per distinct User-Agent ([`Identify`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agent {
    /// The robot the User-Agent declares: the registry's name, or the
    /// product token of an unregistered robot's User-Agent.
    pub robot: Option<String>,
    /// The robot is in the registry.
    pub registered: bool,
    /// The registry's category (`search`, `ai`, `seo`, `monitor` …).
    pub category: Option<String>,
    /// The User-Agent belongs to an uptime or performance monitor.
    pub monitor: bool,
    /// Why the User-Agent is taken for a robot's.
    pub reason: Option<String>,
    /// The product token whose robots.txt group applies; `None` for the
    /// `*` group.
    pub token: Option<String>,
}

/// User-Agent → [`Agent`]; implemented over the bot registry by the caller.
pub trait Identify: Sync {
    /// What `user_agent` (absent when the log has `-`) says.
    fn identify(&self, user_agent: Option<&str>) -> Agent;
}

/// The site's robots.txt over time; implemented by the caller over the
/// robots.txt engine.
pub trait Policy: Sync {
    /// Whether the group of `token` (`None`: the `*` group) disallowed
    /// `target` at `time`; `None` when no robots.txt was in force then.
    fn disallowed(&self, token: Option<&str>, target: &str, time: i64) -> Option<bool>;
    /// The Crawl-delay, in seconds, for `token` at `time`.
    fn crawl_delay(&self, token: Option<&str>, time: i64) -> Option<f64>;
}

/// No robots.txt known: nothing is judged.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPolicy;

impl Policy for NoPolicy {
    fn disallowed(&self, _: Option<&str>, _: &str, _: i64) -> Option<bool> {
        None
    }
    fn crawl_delay(&self, _: Option<&str>, _: i64) -> Option<f64> {
        None
    }
}

/// One session: a span of activity with no gap over [`SESSION_GAP`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Disjoint spans, sorted, each more than the gap apart. One span is
/// stored inline: most clients have one session.
#[derive(Debug, Clone)]
enum Spans {
    One(Span),
    Many(Vec<Span>),
}

impl Spans {
    fn as_slice(&self) -> &[Span] {
        match self {
            Spans::One(s) => std::slice::from_ref(s),
            Spans::Many(v) => v,
        }
    }

    fn add(&mut self, t: i64, page: bool) {
        let pages = u32::from(page);
        if let Spans::One(s) = self {
            if t >= s.start.saturating_sub(SESSION_GAP) && t <= s.end.saturating_add(SESSION_GAP) {
                s.start = s.start.min(t);
                s.end = s.end.max(t);
                s.requests = s.requests.saturating_add(1);
                s.pages = s.pages.saturating_add(pages);
                return;
            }
            *self = Spans::Many(vec![*s]);
        }
        let Spans::Many(v) = self else { return };
        let span = Span {
            start: t,
            end: t,
            requests: 1,
            pages,
        };
        // Fast path: in order, at or after the last span.
        if let Some(last) = v.last_mut()
            && t >= last.start
        {
            if t <= last.end.saturating_add(SESSION_GAP) {
                last.end = last.end.max(t);
                last.requests = last.requests.saturating_add(1);
                last.pages = last.pages.saturating_add(pages);
            } else {
                v.push(span);
            }
            return;
        }
        // The first span that ends within the gap before t.
        let i = v.partition_point(|s| s.end.saturating_add(SESSION_GAP) < t);
        if i < v.len() && v[i].start.saturating_sub(SESSION_GAP) <= t {
            let s = &mut v[i];
            s.start = s.start.min(t);
            s.end = s.end.max(t);
            s.requests = s.requests.saturating_add(1);
            s.pages = s.pages.saturating_add(pages);
            if i + 1 < v.len() && v[i].end.saturating_add(SESSION_GAP) >= v[i + 1].start {
                let next = v.remove(i + 1);
                join(&mut v[i], &next);
            }
        } else {
            v.insert(i, span);
        }
    }

    fn merge(&mut self, other: &Spans) {
        let mut all: Vec<Span> = self.as_slice().to_vec();
        all.extend_from_slice(other.as_slice());
        all.sort_unstable_by_key(|s| s.start);
        let mut out: Vec<Span> = Vec::with_capacity(all.len());
        for s in all {
            match out.last_mut() {
                Some(last) if s.start <= last.end.saturating_add(SESSION_GAP) => join(last, &s),
                _ => out.push(s),
            }
        }
        *self = if out.len() == 1 {
            Spans::One(out[0])
        } else {
            Spans::Many(out)
        };
    }
}

fn join(a: &mut Span, b: &Span) {
    a.start = a.start.min(b.start);
    a.end = a.end.max(b.end);
    a.requests = a.requests.saturating_add(b.requests);
    a.pages = a.pages.saturating_add(b.pages);
}

/// Requests per hour (hours since the epoch), sorted by hour. 16 bytes:
/// most clients are active within one hour, and the rest pay for a box.
#[derive(Debug, Clone)]
enum Hours {
    One(i32, u32),
    #[allow(clippy::box_collection)]
    Many(Box<Vec<(i32, u32)>>),
}

/// The hour of a time, as stored (times are years 1970–9999).
fn hour_of(t: i64) -> i32 {
    let h = t.div_euclid(3600);
    i32::try_from(h).unwrap_or(if h < 0 { i32::MIN } else { i32::MAX })
}

impl Hours {
    fn each(&self, mut f: impl FnMut(i64, u32)) {
        match self {
            Hours::One(h, n) => f(i64::from(*h), *n),
            Hours::Many(v) => v.iter().for_each(|(h, n)| f(i64::from(*h), *n)),
        }
    }

    fn add(&mut self, h: i32, n: u32) {
        match self {
            Hours::One(h0, n0) if *h0 == h => *n0 = n0.saturating_add(n),
            Hours::One(h0, n0) => {
                let mut v = vec![(*h0, *n0), (h, n)];
                v.sort_unstable_by_key(|p| p.0);
                *self = Hours::Many(Box::new(v));
            }
            Hours::Many(v) => {
                if let Some(last) = v.last_mut()
                    && last.0 == h
                {
                    last.1 = last.1.saturating_add(n);
                    return;
                }
                match v.binary_search_by_key(&h, |p| p.0) {
                    Ok(i) => v[i].1 = v[i].1.saturating_add(n),
                    Err(i) => v.insert(i, (h, n)),
                }
            }
        }
    }

    fn merge(&mut self, other: &Hours) {
        match other {
            Hours::One(h, n) => self.add(*h, *n),
            Hours::Many(v) => v.iter().for_each(|(h, n)| self.add(*h, *n)),
        }
    }
}

/// What one client (IP + User-Agent) did. Counters saturate.
#[derive(Debug, Clone)]
pub struct Client {
    /// The address.
    pub ip: IpAddr,
    agent: u32,
    /// Requests.
    pub requests: u64,
    /// Response bytes.
    pub bytes: u64,
    /// Page requests ([`PathKind::Page`]).
    pub pages: u32,
    /// Asset requests.
    pub assets: u32,
    /// HEAD requests.
    pub head: u32,
    /// POST requests.
    pub posts: u32,
    /// POST requests 2 seconds or less after the client's previous request
    /// in the same chunk of input (chunks are cut by bytes, so the count
    /// does not depend on which thread reads which chunk).
    pub quick_posts: u32,
    /// Page requests without a Referer.
    pub pages_without_referer: u32,
    /// Responses by class: 1xx, 2xx, 3xx, 4xx, 5xx, other.
    pub status: [u32; 6],
    /// robots.txt fetches.
    pub robots_txt: u32,
    /// Requests for files only crawlers look for ([`PathKind::CrawlerOnly`]).
    pub crawler_only: u32,
    /// Requests probing for weak spots ([`crate::PROBES`]).
    pub probes: u32,
    /// Requests with a method no web client sends.
    pub odd_methods: u32,
    /// Requests with an absolute URL as target (proxy probes).
    pub absolute: u32,
    /// Requests judged against robots.txt.
    pub judged: u32,
    /// Requests the client's robots.txt group disallowed.
    pub disallowed: u32,
    prev: i64,
    /// The chunk ([`Analyzer::begin_chunk`]) of `prev`.
    prev_chunk: u32,
    /// Hashes of the first two distinct paths; `more_paths` past that.
    paths: [u32; 2],
    more_paths: bool,
    sessions: Spans,
    hours: Hours,
}

impl Client {
    fn new(ip: IpAddr, agent: u32, t: i64) -> Client {
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
            prev: t,
            prev_chunk: u32::MAX,
            paths: [0; 2],
            more_paths: false,
            sessions: Spans::One(Span {
                start: t,
                end: t,
                requests: 0,
                pages: 0,
            }),
            hours: Hours::One(hour_of(t), 0),
        }
    }

    /// A stand-in that owns nothing (for moving clients out of a slot).
    fn empty() -> Client {
        Client::new(IpAddr::from([0, 0, 0, 0]), 0, 0)
    }

    /// Index of the client's User-Agent in [`Analysis::agents`].
    pub fn agent(&self) -> usize {
        self.agent as usize
    }

    /// Sessions, in time order.
    pub fn sessions(&self) -> &[Span] {
        self.sessions.as_slice()
    }

    /// First request time (the start of the first session).
    pub fn first(&self) -> i64 {
        self.sessions.as_slice().first().map_or(0, |s| s.start)
    }

    /// Last request time (the end of the last session).
    pub fn last(&self) -> i64 {
        self.sessions.as_slice().last().map_or(0, |s| s.end)
    }

    /// Requests per hour (hour = seconds since the epoch / 3600).
    pub fn each_hour(&self, f: impl FnMut(i64, u32)) {
        self.hours.each(f);
    }

    /// Distinct paths requested: 0, 1, 2, or 3 meaning "more than 2".
    pub fn distinct_paths(&self) -> u32 {
        if self.more_paths {
            3
        } else {
            self.paths.iter().filter(|p| **p != 0).count() as u32
        }
    }

    fn note_path(&mut self, target: &str) {
        if self.more_paths {
            return;
        }
        // FNV-1a, never 0.
        let mut h: u32 = 0x811c_9dc5;
        for b in target.bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        let h = h.max(1);
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

    fn merge(&mut self, o: &Client) {
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

/// Clients in segments of fixed size: growing never copies, and merging
/// frees the other side's segments as it goes, so peak memory stays near
/// the clients' own size.
#[derive(Debug, Default)]
pub struct Clients {
    segs: Vec<Vec<Client>>,
    len: usize,
}

const SEG_BITS: usize = 14;
const SEG: usize = 1 << SEG_BITS;

impl Clients {
    fn push(&mut self, c: Client) -> u32 {
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

    /// Appends, in order, the clients of `segs` (segments as this store
    /// makes them) whose `keep` flag is set, moving them within `segs`'
    /// own allocations: our last segment is topped up first, the rest is
    /// compacted in place and the segments are taken over.
    fn append_kept(&mut self, mut segs: Vec<Vec<Client>>, keep: &[bool]) {
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

    fn get_mut(&mut self, i: u32) -> &mut Client {
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

/// Distinct request seconds with counts, for pace and Crawl-delay.
/// Appended in any order; sorted and folded when it doubles.
#[derive(Debug, Clone, Default)]
pub struct Seconds {
    v: Vec<(i64, u32)>,
    folded: usize,
}

impl Seconds {
    fn push(&mut self, t: i64) {
        if let Some(last) = self.v.last_mut()
            && last.0 == t
        {
            last.1 = last.1.saturating_add(1);
            return;
        }
        self.v.push((t, 1));
        if self.v.len() >= 2 * self.folded.max(1024) {
            self.fold();
        }
    }

    fn fold(&mut self) {
        self.v.sort_unstable_by_key(|p| p.0);
        let mut out: Vec<(i64, u32)> = Vec::with_capacity(self.v.len());
        for (t, n) in self.v.drain(..) {
            match out.last_mut() {
                Some(last) if last.0 == t => last.1 = last.1.saturating_add(n),
                _ => out.push((t, n)),
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

    /// The seconds, sorted, with their request counts.
    pub fn sorted(&mut self) -> &[(i64, u32)] {
        if self.folded != self.v.len() {
            self.fold();
        }
        &self.v
    }
}

/// Path counts for one robot: exact up to [`TOP_PATHS_CAP`] distinct
/// paths, then the rarest are dropped (lossy counting), so the top of
/// the table stays right and the memory stays bounded.
#[derive(Debug, Clone, Default)]
pub struct TopPaths {
    counts: Map<Box<str>, u64>,
    /// Paths were dropped: counts are lower bounds.
    pub approximate: bool,
}

impl TopPaths {
    fn add(&mut self, path: &str, n: u64) {
        let path = clip(path);
        match self.counts.get_mut(path) {
            Some(c) => *c += n,
            None => {
                self.counts.insert(path.into(), n);
                if self.counts.len() > TOP_PATHS_CAP {
                    self.prune();
                }
            }
        }
    }

    fn prune(&mut self) {
        self.approximate = true;
        let mut cut = 1;
        while self.counts.len() > TOP_PATHS_CAP / 2 {
            self.counts.retain(|_, c| *c > cut);
            cut *= 2;
        }
    }

    /// The `n` most requested paths, most first (ties by path).
    pub fn top(&self, n: usize) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self.counts.iter().map(|(p, c)| (&**p, *c)).collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.truncate(n);
        v
    }
}

fn clip(s: &str) -> &str {
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
fn keep_first(s: &mut Vec<Example>, more: impl IntoIterator<Item = Example>, distinct: bool) {
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

/// A time window: records outside it are counted and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// Inclusive start (seconds since the epoch).
    pub since: Option<i64>,
    /// Exclusive end.
    pub until: Option<i64>,
}

impl Window {
    fn contains(&self, t: i64) -> bool {
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }
}

/// The state of one thread (or the merged state of all).
#[derive(Debug, Default)]
pub struct Partial {
    agents: Vec<(Option<Box<str>>, Agent)>,
    agent_ix: Map<Box<str>, u32>,
    no_ua: Option<u32>,
    clients: Clients,
    client_ix: Map<(IpAddr, u32), u32>,
    probe_samples: Map<u32, Vec<Example>>,
    disallowed_samples: Map<u32, Vec<Example>>,
    seconds: Map<u32, Seconds>,
    robot_paths: Map<Box<str>, TopPaths>,
    /// Malformed lines by reason.
    pub malformed: MalformedStats,
    /// Lines read (records + malformed lines, minus blank lines).
    pub lines: u64,
    /// Lines that gave a record (including truncated ones).
    pub records: u64,
    /// Records outside the window.
    pub out_of_window: u64,
}

/// Folds records into a [`Partial`]. One per thread.
pub struct Analyzer<'a> {
    identify: &'a dyn Identify,
    policy: &'a dyn Policy,
    window: Window,
    part: Partial,
    chunk: u32,
    /// The previous record's client: (address, agent, client index).
    /// Requests come in runs (a page and its assets, a crawler's burst),
    /// and a run needs no lookup in the large client index.
    last: Option<(IpAddr, u32, u32)>,
}

impl<'a> Analyzer<'a> {
    /// A fresh analyzer.
    pub fn new(identify: &'a dyn Identify, policy: &'a dyn Policy, window: Window) -> Self {
        Analyzer {
            identify,
            policy,
            window,
            part: Partial::default(),
            chunk: 0,
            last: None,
        }
    }

    /// Starts a new chunk of input: pairings between consecutive requests
    /// (a POST right after a page) are only looked for within one chunk,
    /// so that the result does not depend on how chunks are shared out.
    /// Chunk ids must differ between chunks, e.g. their sequence numbers.
    pub fn begin_chunk(&mut self, id: u32) {
        self.chunk = id;
    }

    /// Counts a line that is not a record.
    pub fn malformed(&mut self, reason: crate::Malformed, line: u64) {
        self.part.lines += 1;
        self.part.malformed.add(reason, line);
    }

    fn agent(&mut self, ua: Option<&str>) -> u32 {
        let p = &mut self.part;
        let Some(ua) = ua else {
            if let Some(i) = p.no_ua {
                return i;
            }
            let i = p.agents.len() as u32;
            p.agents.push((None, self.identify.identify(None)));
            p.no_ua = Some(i);
            return i;
        };
        // The previous record's agent, without hashing the whole string.
        if let Some((_, a, _)) = self.last
            && p.agents[a as usize].0.as_deref() == Some(ua)
        {
            return a;
        }
        if let Some(i) = p.agent_ix.get(ua) {
            return *i;
        }
        let i = p.agents.len() as u32;
        p.agents
            .push((Some(ua.into()), self.identify.identify(Some(ua))));
        p.agent_ix.insert(ua.into(), i);
        i
    }

    /// Folds one record (line `line` of the input) into its client.
    pub fn record(&mut self, r: &Record<'_>, line: u64) {
        self.part.lines += 1;
        self.part.records += 1;
        if r.truncated {
            self.part.malformed.add(crate::Malformed::Truncated, line);
        }
        if !self.window.contains(r.time) {
            self.part.out_of_window += 1;
            return;
        }
        let a = self.agent(r.user_agent.as_deref());
        let p = &mut self.part;
        let ci = match self.last {
            Some((ip, la, ci)) if la == a && ip == r.ip => ci,
            _ => match p.client_ix.entry((r.ip, a)) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    let i = p.clients.push(Client::new(r.ip, a, r.time));
                    e.insert(i);
                    i
                }
            },
        };
        self.last = Some((r.ip, a, ci));
        let agent = &p.agents[a as usize].1;
        let target: &str = &r.path;
        let kind = path_kind(target);
        let c = p.clients.get_mut(ci);
        let inc = |x: &mut u32| *x = x.saturating_add(1);
        let fresh = c.requests == 0;
        c.requests += 1;
        c.bytes = c.bytes.saturating_add(r.bytes);
        match kind {
            PathKind::Page => {
                inc(&mut c.pages);
                if r.referer.is_none() {
                    inc(&mut c.pages_without_referer);
                }
            }
            PathKind::Asset => inc(&mut c.assets),
            PathKind::RobotsTxt => inc(&mut c.robots_txt),
            PathKind::CrawlerOnly => inc(&mut c.crawler_only),
        }
        match &*r.method {
            "HEAD" => inc(&mut c.head),
            "POST" => {
                inc(&mut c.posts);
                if c.prev_chunk == self.chunk && (r.time - c.prev).abs() <= 2 {
                    inc(&mut c.quick_posts);
                }
            }
            m if !is_common_method(m) => inc(&mut c.odd_methods),
            _ => {}
        }
        if is_absolute(target) {
            inc(&mut c.absolute);
        }
        let status_class = match r.status {
            100..=599 => usize::from(r.status / 100 - 1),
            _ => 5,
        };
        inc(&mut c.status[status_class]);
        c.prev = r.time;
        c.prev_chunk = self.chunk;
        c.note_path(target);
        if fresh {
            c.sessions = Spans::One(Span {
                start: r.time,
                end: r.time,
                requests: 1,
                pages: u32::from(kind == PathKind::Page),
            });
            c.hours = Hours::One(hour_of(r.time), 1);
        } else {
            c.sessions.add(r.time, kind == PathKind::Page);
            c.hours.add(hour_of(r.time), 1);
        }
        let probed = if probe(target).is_some() {
            inc(&mut c.probes);
            Some(false)
        } else if !is_common_method(&r.method) {
            Some(true)
        } else {
            None
        };
        if let Some(with_method) = probed {
            let s = p.probe_samples.entry(ci).or_default();
            // The sample text is made only when there is room for it.
            if s.len() < CLIENT_SAMPLES {
                let what = if with_method {
                    format!("{} {}", r.method, clip(target))
                } else {
                    clip(target).to_owned()
                };
                if !s.iter().any(|x| x.target == what) {
                    s.push(Example {
                        line,
                        time: r.time,
                        target: what,
                    });
                }
            }
        }
        // robots.txt itself is always allowed (RFC 9309 2.2.2).
        if kind != PathKind::RobotsTxt
            && let Some(d) = self
                .policy
                .disallowed(agent.token.as_deref(), target, r.time)
        {
            let c = p.clients.get_mut(ci);
            inc(&mut c.judged);
            if d {
                inc(&mut c.disallowed);
                let s = p.disallowed_samples.entry(ci).or_default();
                if s.len() < CLIENT_SAMPLES {
                    s.push(Example {
                        line,
                        time: r.time,
                        target: clip(target).to_owned(),
                    });
                }
            }
        }
        if let Some(robot) = &agent.robot {
            p.seconds.entry(ci).or_default().push(r.time);
            match p.robot_paths.get_mut(robot.as_str()) {
                Some(t) => t.add(target, 1),
                None => {
                    let mut t = TopPaths::default();
                    t.add(target, 1);
                    p.robot_paths.insert(robot.as_str().into(), t);
                }
            }
        }
    }

    /// The state so far, to merge with other threads'.
    pub fn into_partial(self) -> Partial {
        self.part
    }
}

impl Partial {
    /// Distinct clients so far.
    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// Folds every thread's state into one and classifies: the largest
    /// takes the others in. The last fold does not index what it adds
    /// (nothing looks a client up afterwards), which saves time and the
    /// index's growth. Clients are classified on `threads` threads.
    pub fn finish_all(mut parts: Vec<Partial>, threads: usize) -> Analysis {
        parts.sort_by_key(|p| std::cmp::Reverse(p.client_count()));
        let mut parts = parts.into_iter();
        let mut all = parts.next().unwrap_or_default();
        let mut rest = parts.peekable();
        while let Some(p) = rest.next() {
            all.fold(p, rest.peek().is_some());
        }
        all.finish(threads)
    }

    /// Folds another thread's state into this one (cheapest with the
    /// larger state as `self`).
    pub fn merge(&mut self, o: Partial) {
        self.fold(o, true);
    }

    fn fold(&mut self, mut o: Partial, index: bool) {
        let mut agent_map: Vec<u32> = Vec::with_capacity(o.agents.len());
        for (ua, agent) in std::mem::take(&mut o.agents) {
            let existing = match &ua {
                None => self.no_ua,
                Some(u) => self.agent_ix.get(&**u).copied(),
            };
            let i = existing.unwrap_or_else(|| {
                let i = self.agents.len() as u32;
                match &ua {
                    None => self.no_ua = Some(i),
                    Some(u) => {
                        self.agent_ix.insert(u.clone(), i);
                    }
                }
                self.agents.push((ua, agent));
                i
            });
            agent_map.push(i);
        }
        let mut client_map: Vec<u32> = Vec::with_capacity(o.clients.len());
        if index {
            self.client_ix.reserve(o.clients.len());
            // Segment by segment: each is freed once moved.
            for seg in std::mem::take(&mut o.clients.segs) {
                for mut c in seg {
                    c.agent = agent_map[c.agent as usize];
                    match self.client_ix.entry((c.ip, c.agent)) {
                        Entry::Occupied(e) => {
                            let i = *e.get();
                            self.clients.get_mut(i).merge(&c);
                            client_map.push(i);
                        }
                        Entry::Vacant(e) => {
                            let i = self.clients.push(c);
                            e.insert(i);
                            client_map.push(i);
                        }
                    }
                }
            }
        } else {
            // The clients of `o` are distinct: those already here are
            // folded in, the others keep their place in `o`'s segments,
            // which are compacted and taken over (no copy, no index).
            let mut segs = std::mem::take(&mut o.clients.segs);
            let mut next = self.clients.len() as u32;
            let mut kept: Vec<bool> = Vec::with_capacity(o.clients.len());
            for c in segs.iter_mut().flatten() {
                c.agent = agent_map[c.agent as usize];
                match self.client_ix.get(&(c.ip, c.agent)) {
                    Some(&i) => {
                        self.clients.get_mut(i).merge(c);
                        client_map.push(i);
                        kept.push(false);
                    }
                    None => {
                        client_map.push(next);
                        next += 1;
                        kept.push(true);
                    }
                }
            }
            self.clients.append_kept(segs, &kept);
        }
        for (ci, samples) in o.probe_samples {
            let s = self
                .probe_samples
                .entry(client_map[ci as usize])
                .or_default();
            keep_first(s, samples, true);
        }
        for (ci, samples) in o.disallowed_samples {
            let s = self
                .disallowed_samples
                .entry(client_map[ci as usize])
                .or_default();
            keep_first(s, samples, false);
        }
        for (ci, secs) in o.seconds {
            self.seconds
                .entry(client_map[ci as usize])
                .or_default()
                .extend_from(&secs);
        }
        for (name, paths) in o.robot_paths {
            match self.robot_paths.get_mut(&name) {
                Some(t) => {
                    t.approximate |= paths.approximate;
                    for (p, n) in paths.counts {
                        t.add(&p, n);
                    }
                }
                None => {
                    self.robot_paths.insert(name, paths);
                }
            }
        }
        self.malformed.merge(&o.malformed);
        self.lines += o.lines;
        self.records += o.records;
        self.out_of_window += o.out_of_window;
    }

    /// Classifies every client, on `threads` threads.
    pub fn finish(mut self, threads: usize) -> Analysis {
        // The index is not needed any more: free it first.
        self.client_ix = Map::default();
        // Segments are classified on all cores, then put in order.
        let agents = &self.agents;
        let class_of = |seg: &[Client]| -> Vec<Class> {
            seg.iter()
                .map(|c| {
                    let (ua, agent) = &agents[c.agent as usize];
                    classify(c, agent, ua.is_none()).0
                })
                .collect()
        };
        let per = self.clients.segs.len().div_ceil(threads.max(1)).max(1);
        let classes: Vec<Class> = if self.clients.segs.len() <= per {
            self.clients.segs.iter().flat_map(|g| class_of(g)).collect()
        } else {
            std::thread::scope(|s| {
                let parts: Vec<_> = self
                    .clients
                    .segs
                    .chunks(per)
                    .map(|segs| {
                        s.spawn(move || {
                            segs.iter()
                                .flat_map(|g| class_of(g))
                                .collect::<Vec<Class>>()
                        })
                    })
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|h| {
                        h.join()
                            .unwrap_or_else(|e| std::panic::resume_unwind(e))
                            .into_iter()
                    })
                    .collect::<Vec<Class>>()
            })
        };
        Analysis {
            agents: self
                .agents
                .into_iter()
                .map(|(ua, a)| (ua.map(String::from), a))
                .collect(),
            clients: self.clients,
            classes,
            probe_samples: self.probe_samples,
            disallowed_samples: self.disallowed_samples,
            seconds: self.seconds,
            robot_paths: self.robot_paths,
            malformed: self.malformed,
            lines: self.lines,
            records: self.records,
            out_of_window: self.out_of_window,
        }
    }
}

/// What a client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A person with a browser.
    Human,
    /// A robot that says so in its User-Agent.
    DeclaredBot,
    /// A robot with a browser's User-Agent (or none).
    UndeclaredBot,
    /// Probes for weak spots.
    Scanner,
    /// An uptime or performance monitor.
    Monitor,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 5] = [
        Class::Human,
        Class::DeclaredBot,
        Class::UndeclaredBot,
        Class::Scanner,
        Class::Monitor,
    ];

    /// The stable name (`declared_bot`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Human => "human",
            Class::DeclaredBot => "declared_bot",
            Class::UndeclaredBot => "undeclared_bot",
            Class::Scanner => "scanner",
            Class::Monitor => "monitor",
        }
    }

    /// Position in [`Class::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for every class but humans.
    pub fn is_robot(self) -> bool {
        self != Class::Human
    }
}

/// One reason for a class: a stable code and a sentence with the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// Stable code (`robots-txt`, `no-assets` …), documented in
    /// docs/log-analysis.md.
    pub code: &'static str,
    /// The evidence, in words.
    pub detail: String,
}

fn reason(code: &'static str, detail: String) -> Reason {
    Reason { code, detail }
}

/// Thresholds of the behavioural signals (documented in docs/log-analysis.md).
mod limits {
    /// Pages before the asset and referer signals count.
    pub const MIN_PAGES: u32 = 3;
    /// Share of pages without a Referer that counts as "no referer".
    pub const NO_REFERER_SHARE: f64 = 0.9;
    /// Pages in one session, and pages per minute, that count as fast.
    pub const FAST_PAGES: u32 = 10;
    /// Pages per minute over a session that count as fast.
    pub const FAST_RATE: f64 = 20.0;
    /// Requests before HEAD and error shares count.
    pub const MIN_REQUESTS: u64 = 4;
    /// Probes that make a scanner whatever else it did.
    pub const PROBES: u32 = 3;
    /// Share of probing requests that makes a scanner.
    pub const PROBE_SHARE: f64 = 0.25;
    /// Requests to one or two paths that make a steady poller a monitor.
    pub const MONITOR_REQUESTS: u64 = 10;
    /// Seconds a poller must span to be a monitor.
    pub const MONITOR_SPAN: i64 = 600;
    /// Disallowed requests that count as a signal.
    pub const DISALLOWED: u32 = 3;
}

/// Peak pages per minute over the client's sessions with at least
/// `FAST_PAGES` pages.
fn peak_rate(c: &Client) -> Option<(f64, u32)> {
    c.sessions()
        .iter()
        .filter(|s| s.pages >= limits::FAST_PAGES)
        .map(|s| {
            let minutes = ((s.end - s.start) as f64 / 60.0).max(1.0 / 60.0);
            (f64::from(s.pages) / minutes, s.pages)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

fn share(n: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// Classifies one client from its counters and its User-Agent, with the
/// reasons (for every class but human). `no_user_agent`: the log had `-`.
pub fn classify(c: &Client, agent: &Agent, no_user_agent: bool) -> (Class, Vec<Reason>) {
    let mut reasons = Vec::new();
    let errors = u64::from(c.status[3]) + u64::from(c.status[4]);
    let probing = u64::from(c.probes) + u64::from(c.odd_methods);
    // Scanners: probes for weak spots. A registered robot never is one.
    if !agent.registered
        && probing > 0
        && (probing >= u64::from(limits::PROBES)
            || share(probing, c.requests) >= limits::PROBE_SHARE)
    {
        if c.probes > 0 {
            reasons.push(reason(
                "probes",
                format!(
                    "{} of {} requests probe for weak spots",
                    c.probes, c.requests
                ),
            ));
        }
        if c.odd_methods > 0 {
            reasons.push(reason(
                "odd-method",
                format!(
                    "{} requests with a method no web client sends",
                    c.odd_methods
                ),
            ));
        }
        if errors > 0 {
            reasons.push(reason(
                "errors",
                format!("{errors} of {} requests answered 4xx/5xx", c.requests),
            ));
        }
        return (Class::Scanner, reasons);
    }
    if agent.monitor {
        reasons.push(reason(
            "monitor-ua",
            agent
                .reason
                .clone()
                .unwrap_or_else(|| "the User-Agent is a monitor's".into()),
        ));
        return (Class::Monitor, reasons);
    }
    if agent.robot.is_some() {
        reasons.push(reason(
            "declared",
            agent
                .reason
                .clone()
                .unwrap_or_else(|| "the User-Agent names a robot".into()),
        ));
        return (Class::DeclaredBot, reasons);
    }
    // A steady poller of one or two paths, loading nothing else.
    if c.requests >= limits::MONITOR_REQUESTS
        && c.distinct_paths() <= 2
        && c.assets == 0
        && c.last() - c.first() >= limits::MONITOR_SPAN
    {
        reasons.push(reason(
            "poller",
            format!(
                "{} requests to {} path(s) over {} minutes, nothing else",
                c.requests,
                c.distinct_paths(),
                (c.last() - c.first()) / 60
            ),
        ));
        return (Class::Monitor, reasons);
    }
    // Undeclared robots: one strong signal, or two weak ones.
    let mut strong = 0;
    if c.robots_txt > 0 {
        strong += 1;
        reasons.push(reason(
            "robots-txt",
            format!("fetched robots.txt {} time(s)", c.robots_txt),
        ));
    }
    if no_user_agent {
        strong += 1;
        reasons.push(reason("no-ua", "sends no User-Agent".into()));
    }
    if c.crawler_only > 0 {
        strong += 1;
        reasons.push(reason(
            "crawler-paths",
            format!(
                "{} request(s) for files only crawlers look for (sitemaps, ads.txt, security.txt)",
                c.crawler_only
            ),
        ));
    }
    if c.quick_posts > 0 {
        strong += 1;
        reasons.push(reason(
            "quick-post",
            format!(
                "{} form POST(s) 2 seconds or less after the previous request",
                c.quick_posts
            ),
        ));
    }
    let mut weak = 0;
    if c.pages >= limits::MIN_PAGES && c.assets == 0 {
        weak += 1;
        reasons.push(reason(
            "no-assets",
            format!("{} pages and no styles, scripts or images", c.pages),
        ));
    }
    if c.pages >= limits::MIN_PAGES
        && share(u64::from(c.pages_without_referer), u64::from(c.pages)) >= limits::NO_REFERER_SHARE
    {
        weak += 1;
        reasons.push(reason(
            "no-referer",
            format!(
                "{} of {} pages without a Referer",
                c.pages_without_referer, c.pages
            ),
        ));
    }
    if let Some((rate, pages)) = peak_rate(c)
        && rate >= limits::FAST_RATE
    {
        weak += 1;
        reasons.push(reason(
            "fast",
            format!("{rate:.0} pages/min over a session of {pages} pages"),
        ));
    }
    if c.requests >= limits::MIN_REQUESTS && share(u64::from(c.head), c.requests) >= 0.5 {
        weak += 1;
        reasons.push(reason(
            "head",
            format!("{} of {} requests are HEAD", c.head, c.requests),
        ));
    }
    if c.requests >= limits::MIN_REQUESTS && share(errors, c.requests) >= 0.5 {
        weak += 1;
        reasons.push(reason(
            "errors",
            format!("{errors} of {} requests answered 4xx/5xx", c.requests),
        ));
    }
    if c.disallowed >= limits::DISALLOWED {
        weak += 1;
        reasons.push(reason(
            "disallowed",
            format!(
                "{} requests robots.txt disallows for every robot",
                c.disallowed
            ),
        ));
    }
    if c.absolute > 0 || probing > 0 {
        weak += 1;
        if c.absolute > 0 {
            reasons.push(reason(
                "absolute-uri",
                format!(
                    "{} request(s) with a full URL, as proxies are probed",
                    c.absolute
                ),
            ));
        } else {
            reasons.push(reason(
                "probes",
                format!("{probing} of {} requests probe for weak spots", c.requests),
            ));
        }
    }
    if strong > 0 || weak >= 2 {
        (Class::UndeclaredBot, reasons)
    } else {
        (Class::Human, Vec::new())
    }
}

/// Every client, classified, with what the report needs.
#[derive(Debug)]
pub struct Analysis {
    /// Distinct User-Agents (`None`: none logged) and what they say.
    pub agents: Vec<(Option<String>, Agent)>,
    /// Distinct clients.
    pub clients: Clients,
    /// Class of each client (same order as `clients`); the reasons are
    /// rebuilt on demand ([`Analysis::reasons`]) so that memory holds one
    /// byte per client.
    pub classes: Vec<Class>,
    probe_samples: Map<u32, Vec<Example>>,
    disallowed_samples: Map<u32, Vec<Example>>,
    seconds: Map<u32, Seconds>,
    robot_paths: Map<Box<str>, TopPaths>,
    /// Malformed lines by reason.
    pub malformed: MalformedStats,
    /// Lines read.
    pub lines: u64,
    /// Records.
    pub records: u64,
    /// Records outside the window.
    pub out_of_window: u64,
}

impl Analysis {
    /// The User-Agent and agent of a client.
    pub fn agent_of(&self, c: &Client) -> (Option<&str>, &Agent) {
        let (ua, a) = &self.agents[c.agent as usize];
        (ua.as_deref(), a)
    }

    /// The class and reasons of client `i`.
    pub fn reasons(&self, i: usize) -> (Class, Vec<Reason>) {
        let c = &self.clients[i];
        let (ua, agent) = &self.agents[c.agent as usize];
        classify(c, agent, ua.is_none())
    }

    /// Probe samples of client `i`.
    pub fn probe_samples(&self, i: usize) -> &[Example] {
        self.probe_samples
            .get(&(i as u32))
            .map_or(&[], Vec::as_slice)
    }

    /// Disallowed-request examples of client `i`.
    pub fn disallowed_examples(&self, i: usize) -> &[Example] {
        self.disallowed_samples
            .get(&(i as u32))
            .map_or(&[], Vec::as_slice)
    }

    /// Request seconds of client `i` (declared robots only).
    pub fn take_seconds(&mut self, i: usize) -> Option<Seconds> {
        self.seconds.remove(&(i as u32))
    }

    /// Path counts of a robot.
    pub fn robot_paths(&self, robot: &str) -> Option<&TopPaths> {
        self.robot_paths.get(robot)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    #[test]
    fn append_kept_keeps_order_and_full_segments() {
        let mk = |n: u32| Client::new(IpAddr::from(n.to_be_bytes()), n, 0);
        let mut a = Clients::default();
        for n in 0..10 {
            a.push(mk(n));
        }
        let mut b = Clients::default();
        let total = 2 * SEG as u32 + 100;
        for n in 0..total {
            b.push(mk(1000 + n));
        }
        let keep: Vec<bool> = (0..total).map(|n| n % 3 != 1).collect();
        a.append_kept(b.segs, &keep);
        let want: Vec<u32> = (0..10)
            .chain((0..total).filter(|n| n % 3 != 1).map(|n| 1000 + n))
            .collect();
        let got: Vec<u32> = a.iter().map(|c| c.agent).collect();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "order differs");
        assert_eq!(a.len(), want.len());
        let (last, full) = a.segs.split_last().expect("segments");
        assert!(full.iter().all(|s| s.len() == SEG) && last.len() <= SEG);
        for (i, n) in want.iter().enumerate() {
            assert_eq!(a[i].agent, *n);
        }
    }

    #[test]
    fn client_record_stays_small() {
        // Memory is bounded by distinct clients: this is the price of one.
        assert!(size_of::<Client>() <= 184, "{}", size_of::<Client>());
    }

    struct Ua;
    impl Identify for Ua {
        fn identify(&self, ua: Option<&str>) -> Agent {
            match ua {
                Some(u) if u.contains("Googlebot") => Agent {
                    robot: Some("Googlebot".into()),
                    registered: true,
                    token: Some("Googlebot".into()),
                    ..Agent::default()
                },
                Some(u) if u.contains("UptimeRobot") => Agent {
                    robot: Some("UptimeRobot".into()),
                    monitor: true,
                    ..Agent::default()
                },
                _ => Agent::default(),
            }
        }
    }

    /// Disallows /private for everyone.
    struct Rules;
    impl Policy for Rules {
        fn disallowed(&self, _: Option<&str>, target: &str, _: i64) -> Option<bool> {
            Some(target.starts_with("/private"))
        }
        fn crawl_delay(&self, _: Option<&str>, _: i64) -> Option<f64> {
            Some(10.0)
        }
    }

    fn rec<'a>(
        ip: &str,
        t: i64,
        method: &'a str,
        path: &'a str,
        referer: bool,
        ua: &'a str,
    ) -> Record<'a> {
        Record {
            vhost: None,
            ip: ip.parse().expect("ip"),
            user: None,
            time: t,
            method: Cow::Borrowed(method),
            path: Cow::Borrowed(path),
            protocol: Cow::Borrowed("HTTP/1.1"),
            status: if path.contains("wp-") { 404 } else { 200 },
            bytes: 100,
            referer: referer.then_some(Cow::Borrowed("https://example.com/")),
            user_agent: (!ua.is_empty()).then_some(Cow::Borrowed(ua)),
            duration_us: None,
            truncated: false,
        }
    }

    const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0";

    fn sample() -> Vec<Record<'static>> {
        let mut v = Vec::new();
        // A human: two visits a day apart, pages with assets and referers.
        for day in 0..2 {
            let t = 1_000_000 + day * 86_400;
            v.push(rec("192.0.2.1", t, "GET", "/", true, FIREFOX));
            v.push(rec("192.0.2.1", t + 1, "GET", "/app.css", true, FIREFOX));
            v.push(rec("192.0.2.1", t + 60, "GET", "/about", true, FIREFOX));
            v.push(rec("192.0.2.1", t + 61, "GET", "/logo.png", true, FIREFOX));
        }
        // A scraper with a browser User-Agent: 12 pages in 12 seconds.
        for k in 0..12 {
            v.push(rec(
                "198.51.100.9",
                1_000_100 + k,
                "GET",
                "/products?id=1",
                false,
                FIREFOX,
            ));
        }
        // A scanner.
        for p in ["/wp-login.php", "/.env", "/wp-admin/"] {
            v.push(rec("203.0.113.5", 1_000_200, "GET", p, false, FIREFOX));
        }
        // Googlebot, into a disallowed area, too fast for its Crawl-delay.
        v.push(rec(
            "66.249.66.1",
            1_000_300,
            "GET",
            "/robots.txt",
            false,
            "Googlebot/2.1",
        ));
        v.push(rec(
            "66.249.66.1",
            1_000_301,
            "GET",
            "/private/a",
            false,
            "Googlebot/2.1",
        ));
        v.push(rec(
            "66.249.66.1",
            1_000_302,
            "GET",
            "/",
            false,
            "Googlebot/2.1",
        ));
        // A monitor, every 5 minutes for an hour.
        for k in 0..12 {
            v.push(rec(
                "192.0.2.77",
                1_000_000 + k * 300,
                "HEAD",
                "/",
                false,
                "UptimeRobot/2.0",
            ));
        }
        // A client without a User-Agent.
        v.push(rec("192.0.2.99", 1_000_000, "GET", "/", false, ""));
        v
    }

    fn run(records: &[Record<'_>], threads: usize) -> Analysis {
        let mut parts = Vec::new();
        for t in 0..threads {
            let mut a = Analyzer::new(&Ua, &Rules, Window::default());
            for (i, r) in records.iter().enumerate() {
                if i % threads == t {
                    a.record(r, i as u64 + 1);
                }
            }
            parts.push(a.into_partial());
        }
        Partial::finish_all(parts, threads)
    }

    fn class_of(a: &Analysis, ip: &str) -> (Class, Vec<&'static str>) {
        let ip: IpAddr = ip.parse().expect("ip");
        let i = a.clients.iter().position(|c| c.ip == ip).expect("client");
        let (class, reasons) = a.reasons(i);
        (class, reasons.iter().map(|r| r.code).collect())
    }

    #[test]
    fn classes_with_reasons() {
        let a = run(&sample(), 1);
        assert_eq!(class_of(&a, "192.0.2.1"), (Class::Human, vec![]));
        let (c, r) = class_of(&a, "198.51.100.9");
        assert_eq!(c, Class::UndeclaredBot);
        assert_eq!(r, ["no-assets", "no-referer", "fast"]);
        let (c, r) = class_of(&a, "203.0.113.5");
        assert_eq!(c, Class::Scanner);
        assert_eq!(r, ["probes", "errors"]);
        assert_eq!(class_of(&a, "66.249.66.1").0, Class::DeclaredBot);
        assert_eq!(class_of(&a, "192.0.2.77").0, Class::Monitor);
        assert_eq!(
            class_of(&a, "192.0.2.99"),
            (Class::UndeclaredBot, vec!["no-ua"])
        );
        let g = a
            .clients
            .iter()
            .position(|c| c.ip.to_string() == "66.249.66.1")
            .expect("g");
        assert_eq!(a.clients[g].robots_txt, 1);
        assert_eq!((a.clients[g].judged, a.clients[g].disallowed), (2, 1));
        assert_eq!(a.disallowed_examples(g)[0].target, "/private/a");
        let human = a
            .clients
            .iter()
            .find(|c| c.ip.to_string() == "192.0.2.1")
            .expect("h");
        assert_eq!(human.sessions().len(), 2);
        assert_eq!((human.pages, human.assets), (4, 4));
    }

    fn summary(a: &Analysis) -> Vec<String> {
        let mut v: Vec<String> = a
            .clients
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (class, reasons) = a.reasons(i);
                let mut hours = Vec::new();
                c.each_hour(|h, n| hours.push((h, n)));
                format!(
                    "{} {:?} {} {} {:?} {:?} {:?} {:?}",
                    c.ip,
                    a.agent_of(c).0,
                    c.requests,
                    class.as_str(),
                    reasons,
                    c.sessions(),
                    hours,
                    (c.first(), c.last(), c.distinct_paths(), c.status)
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn order_and_threads_do_not_change_the_result() {
        let records = sample();
        let base = summary(&run(&records, 1));
        let mut shuffled = records.clone();
        // A fixed permutation: reverse, then interleave.
        shuffled.reverse();
        let (a, b) = shuffled.split_at(shuffled.len() / 2);
        let mixed: Vec<Record<'_>> = a
            .iter()
            .zip(b)
            .flat_map(|(x, y)| [y.clone(), x.clone()])
            .chain(b.iter().skip(a.len()).cloned())
            .collect();
        assert_eq!(mixed.len(), records.len());
        for threads in [1, 2, 3, 7] {
            assert_eq!(summary(&run(&mixed, threads)), base, "{threads} threads");
        }
    }

    #[test]
    fn sessions_join_when_a_gap_is_filled() {
        let mut s = Spans::One(Span {
            start: 0,
            end: 0,
            requests: 1,
            pages: 1,
        });
        s.add(3000, true);
        s.add(6000, true);
        assert_eq!(s.as_slice().len(), 3);
        // 1500 is within 30 minutes of 0 and of 3000: the first two join.
        s.add(1500, false);
        assert_eq!(s.as_slice().len(), 2);
        assert_eq!(
            s.as_slice()[0],
            Span {
                start: 0,
                end: 3000,
                requests: 3,
                pages: 2
            }
        );
        s.add(4500, false);
        assert_eq!(
            s.as_slice(),
            &[Span {
                start: 0,
                end: 6000,
                requests: 5,
                pages: 3
            }]
        );
        // Exactly 30 minutes apart is still the same session.
        let mut t = Spans::One(Span {
            start: 0,
            end: 0,
            requests: 1,
            pages: 0,
        });
        t.add(SESSION_GAP, false);
        t.add(2 * SESSION_GAP + 1, false);
        assert_eq!(t.as_slice().len(), 2);
    }

    #[test]
    fn top_paths_stay_bounded_and_keep_the_heavy_hitters() {
        let mut t = TopPaths::default();
        for i in 0..20_000u32 {
            t.add(&format!("/p/{i}"), 1);
            if i % 10 == 0 {
                t.add("/hot", 1);
            }
        }
        assert!(t.counts.len() <= TOP_PATHS_CAP);
        assert!(t.approximate);
        assert_eq!(t.top(1)[0], ("/hot", 2000));
    }

    #[test]
    fn seconds_fold_counts() {
        let mut s = Seconds::default();
        for t in (0..5000).rev() {
            s.push(t / 2);
        }
        let v = s.sorted();
        assert_eq!(v.len(), 2500);
        assert!(v.iter().all(|p| p.1 == 2));
        assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn window_skips_and_counts() {
        let mut a = Analyzer::new(
            &Ua,
            &NoPolicy,
            Window {
                since: Some(1_000_100),
                until: Some(1_000_200),
            },
        );
        for (i, r) in sample().iter().enumerate() {
            a.record(r, i as u64 + 1);
        }
        let p = a.into_partial();
        assert_eq!(p.records, sample().len() as u64);
        assert_eq!(p.records - p.out_of_window, 12);
    }
}
