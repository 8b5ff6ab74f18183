//! Records folded into a thread's [`Partial`]; partials merged and
//! classified into the [`Analysis`].

use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::OnceLock;

use hashbrown::HashTable;

use super::*;
use crate::Record;
use crate::paths::{PathKind, is_absolute, is_common_method, path_kind, probe};

/// A client of another partial that was not taken in (past the cap).
const DROPPED: u32 = u32::MAX;

/// The state of one thread (or the merged state of all).
#[derive(Debug)]
pub struct Partial {
    /// Each agent's User-Agent. Apart from its [`Agent`], so that the
    /// check of a record's User-Agent against its client's reads a dense
    /// table (16 bytes an agent, which the cache keeps) before the text.
    pub(super) agent_ua: Vec<Option<Box<str>>>,
    pub(super) agents: Vec<Agent>,
    /// For each agent: it is a robot's. Dense, so that a browser's request
    /// does not read its agent (a cache miss in a busy log).
    pub(super) robot: Vec<bool>,
    /// For each agent: its token's groups in the policy
    /// ([`Policy::groups`]), found once for all its requests.
    pub(super) agent_groups: Vec<Option<Groups>>,
    /// Each agent's User-Agent hashed ([`ua_hash`]).
    pub(super) agent_hash: Vec<u64>,
    /// Agents by [`ua_hash`] (no User-Agent is an agent too).
    pub(super) agent_ix: HashTable<u32>,
    /// Clients by [`client_hash`] of their address's key and their
    /// agent's hash: a record finds its client without looking its agent
    /// up, and the index grows without reading its clients.
    pub(super) client_ix: HashTable<Slot>,
    /// Sessions and hours the clients set aside ([`Spans::step`],
    /// [`Hours::step`]), by client, until [`Partial::settle`].
    pub(super) trail: Trail,
    /// Distinct clients tracked at most; the requests of the others are
    /// counted in [`Folded::untracked`].
    pub(super) max_clients: usize,
    /// What the records folded into.
    pub folded: Folded,
}

impl Default for Partial {
    fn default() -> Partial {
        Partial {
            agent_ua: Vec::new(),
            agents: Vec::new(),
            robot: Vec::new(),
            agent_groups: Vec::new(),
            agent_hash: Vec::new(),
            agent_ix: HashTable::new(),
            client_ix: HashTable::new(),
            trail: Trail::default(),
            max_clients: MAX_CLIENTS,
            folded: Folded::default(),
        }
    }
}

/// What clients set aside as they go: a session a later request closed
/// (or one long before the latest), an hour passed. Appended where the
/// fold is, so that a request in a busy log touches its client and
/// nothing behind it; taken back into the clients, all at once, by
/// [`Partial::settle`].
#[derive(Debug, Default)]
pub(super) struct Trail {
    spans: Vec<(u32, Span)>,
    hours: Vec<(u32, (i32, u32))>,
}

/// A trail's sessions and hours, grouped by client.
type Grouped = (Aside<Span>, Aside<(i32, u32)>);

impl Trail {
    /// The entries of `clients` clients grouped by client, the trail
    /// emptied.
    fn grouped(&mut self, clients: usize) -> Grouped {
        (
            Aside::group(&mut self.spans, clients, |s| s.start),
            Aside::group(&mut self.hours, clients, |p| p.0),
        )
    }
}

/// Entries a trail holds before it is settled (4 MB of sessions), or
/// [`TRAIL_PER_CLIENT`] per client when that is more: memory stays near
/// what the clients themselves take, and a settling (linear in the trail
/// and the clients) costs a few steps per entry.
const TRAIL_SETTLE: usize = 1 << 17;

/// Trail entries per client before a settling. A settling reads each
/// client's history where the allocator put it (a cache miss each in a
/// busy log) and grows it: in a log whose clients come back hours apart,
/// settling after four entries a client rather than one took about a
/// twentieth of the processor time off, for at most 176 bytes a client
/// (a client is 192).
const TRAIL_PER_CLIENT: usize = 4;

/// Records whose clients [`Analyzer::record_all`] looks up before it
/// folds them: enough lookups to keep the memory busy, few enough that
/// the clients read stay in the cache until folded.
pub const LOOKAHEAD: usize = 32;

/// The earliest time a record may have: 1990-01-01 (before the web).
pub const PLAUSIBLE_SINCE: i64 = 631_152_000;

/// How far past the analysis's now a record may be dated (clocks
/// skewed, time zones written wrong): two days.
pub const CLOCK_SKEW: i64 = 2 * 86_400;

/// A client's entry in the client index: its place, its agent and its
/// address's key ([`ip_key`]), so that a lookup tells its client from
/// the others of its bucket without reading any of them (a cache miss
/// each in a busy log): only the client it finds is read, to confirm.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    client: u32,
    agent: u32,
    ip: u32,
}

/// Folds records into a [`Partial`]. One per thread.
pub struct Analyzer<'a> {
    pub(super) identify: &'a dyn Identify,
    pub(super) policy: &'a dyn Policy,
    pub(super) window: Window,
    /// Times a record may have (any, unless the caller says); a record
    /// outside is malformed.
    pub(super) plausible: Window,
    pub(super) part: Partial,
    pub(super) chunk: u32,
    /// The previous record's client: its User-Agent's hash and its index
    /// entry.
    /// Requests come in runs (a page and its assets, a crawler's burst),
    /// and a run needs no lookup in the large client index.
    pub(super) last: Option<(u64, Slot)>,
    /// The policy judges requests ([`Policy::judges`]).
    pub(super) judges: bool,
    /// Checks signed requests; without one they are counted, undecided.
    pub(super) signatures: Option<&'a dyn SignatureCheck>,
}

impl<'a> Analyzer<'a> {
    /// A fresh analyzer.
    pub fn new(identify: &'a dyn Identify, policy: &'a dyn Policy, window: Window) -> Self {
        Analyzer {
            identify,
            policy,
            window,
            plausible: Window::default(),
            part: Partial::default(),
            chunk: 0,
            last: None,
            judges: policy.judges(),
            signatures: None,
        }
    }

    /// Records dated outside `times` are malformed (`implausible-time`):
    /// a reader gives [`PLAUSIBLE_SINCE`] to its own now and
    /// [`CLOCK_SKEW`], so that a line dated 9999 neither stretches the
    /// report over eight thousand years nor hides among the log's days.
    pub fn with_plausible(mut self, times: Window) -> Self {
        self.plausible = times;
        self
    }

    /// Checks the signature of every signed request with `check` (at the
    /// cost of one signature verification per signed request).
    pub fn with_signatures(mut self, check: &'a dyn SignatureCheck) -> Self {
        self.signatures = Some(check);
        self
    }

    /// Tracks at most `n` distinct clients (IP + User-Agent); the
    /// requests of clients past them are counted in
    /// [`Folded::untracked`] and the report says so. Bounds memory by the
    /// cap, not by the input: a log of a million made-up clients costs
    /// what `n` clients cost.
    pub fn with_max_clients(mut self, n: usize) -> Self {
        self.part.max_clients = n;
        self
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
        self.part.folded.lines += 1;
        self.part.folded.malformed.add(reason, line);
    }

    /// Folds one record (line `line` of the input) into its client.
    pub fn record(&mut self, r: &Record<'_>, line: u64) {
        let uh = ua_hash(r.user_agent.as_deref());
        if let Some(j) = self.fold(r, line, uh, None) {
            self.judge(r, line, j);
        }
    }

    /// Folds records (each with its line number) in their order, as
    /// [`Analyzer::record`] one after the other does, but faster in a log
    /// of many clients: the clients of [`LOOKAHEAD`] records are looked up
    /// before any of them is folded, so that the reads of the client index
    /// and of the clients (cache misses when there are many) overlap
    /// instead of each waiting for the one before.
    pub fn record_all(&mut self, records: &[(Record<'_>, u64)]) {
        for group in records.chunks(LOOKAHEAD) {
            let mut ahead = [(0u64, None); LOOKAHEAD];
            // The hashes first, then the lookups: each lookup's reads do
            // not wait for the next one's hashing.
            for ((r, _), a) in group.iter().zip(&mut ahead) {
                a.0 = ua_hash(r.user_agent.as_deref());
            }
            // Candidates by the index alone, each client's two lines
            // read as it is found: the reads of one record's client do
            // not wait for another's.
            for ((r, _), a) in group.iter().zip(&mut ahead) {
                a.1 = self.part.candidate(r, a.0);
                if let Some(s) = a.1 {
                    let c = &self.part.folded.clients[s.client as usize];
                    std::hint::black_box((c.requests, c.pages));
                }
            }
            // Then confirmed (address and User-Agent), or looked up
            // again in full when the candidate was another client.
            for ((r, _), a) in group.iter().zip(&mut ahead) {
                if let Some(s) = a.1
                    && !self.part.is(&s, r, a.0)
                {
                    a.1 = self.part.find(r, a.0);
                }
            }
            // A client looked up before an earlier record of the group
            // added it is found again by the fold; clients never move.
            let mut later = [None; LOOKAHEAD];
            for (((r, line), (uh, found)), j) in group.iter().zip(ahead).zip(&mut later) {
                *j = self.fold(r, *line, uh, found);
            }
            // The group's requests judged one after the other, the
            // robots.txt index read once for all of them rather than
            // brought back into the cache between two folds. Each client's
            // judged requests keep their order.
            for ((r, line), j) in group.iter().zip(later) {
                if let Some(j) = j {
                    self.judge(r, *line, j);
                }
            }
        }
    }

    /// Judges `r` (line `line`), a request the fold left for later, and
    /// counts the verdict for its client.
    fn judge(&mut self, r: &Record<'_>, line: u64, j: Judge) {
        let p = &mut self.part;
        let verdict = match &p.agent_groups[j.agent as usize] {
            Some(g) => self.policy.disallowed_in(g, &r.path, r.time),
            None => {
                self.policy
                    .disallowed(p.agents[j.agent as usize].token.as_deref(), &r.path, r.time)
            }
        };
        p.note_verdict(j.client, false, verdict, r, line);
    }

    /// Folds `r`, its User-Agent's hash `uh`, into its client, `found`
    /// when already looked up.
    /// Returns the request when it is to be judged later ([`Judge`]):
    /// a request of a client that is not a robot, whose verdict nothing
    /// else in the fold reads.
    fn fold(&mut self, r: &Record<'_>, line: u64, uh: u64, found: Option<Slot>) -> Option<Judge> {
        if !self.plausible.contains(r.time) {
            self.malformed(crate::Malformed::ImplausibleTime, line);
            return None;
        }
        self.part.folded.lines += 1;
        self.part.folded.records += 1;
        if r.truncated {
            self.part
                .folded
                .malformed
                .add(crate::Malformed::Truncated, line);
        }
        if !self.window.contains(r.time) {
            self.part.folded.out_of_window += 1;
            return None;
        }
        let trail = &self.part.trail;
        if trail.spans.len().max(trail.hours.len())
            >= TRAIL_SETTLE.max(TRAIL_PER_CLIENT * self.part.folded.clients.len())
        {
            self.part.settle();
        }
        let ua = r.user_agent.as_deref();
        let p = &mut self.part;
        // The client: looked up already, the previous record's, or found
        // by its address and the User-Agent's hash.
        let found = match (found, self.last) {
            (Some(s), _) => Some(s),
            (None, Some((h, s))) if h == uh && p.is(&s, r, uh) => Some(s),
            _ => p.find(r, uh),
        };
        let slot = match found {
            Some(s) => Some(s),
            // Past the cap, no client (nor agent) is added.
            None if p.folded.clients.len() >= p.max_clients => None,
            None => {
                let a = match p.find_agent(ua, uh) {
                    Some(a) => a,
                    None => {
                        let agent = self.identify.identify(ua);
                        let groups = if self.judges {
                            self.policy.groups(agent.token.as_deref())
                        } else {
                            None
                        };
                        p.add_agent(ua.map(Into::into), uh, agent, groups)
                    }
                };
                Some(p.add_client(Client::new(r.ip, a, r.time)))
            }
        };
        let seen = r.signed.is_signed().then(|| {
            let seen = self
                .signatures
                .map_or_else(signed::unchecked, |c| c.check(r));
            p.folded.signature_agents.add(&seen);
            seen
        });
        let Some(slot) = slot else {
            // Past the cap: the request counts for the site, not for a
            // client.
            let f = &mut p.folded;
            f.untracked.add(1, r.bytes);
            f.per_record(r, false);
            return None;
        };
        if let Some(seen) = &seen {
            p.folded.signed.entry(slot.client).or_default().add(seen);
        }
        self.last = Some((uh, slot));
        let (ci, a) = (slot.client, slot.agent);
        let robot = p.robot[a as usize];
        let target: &str = &r.path;
        let kind = path_kind(target);
        let c = p.folded.clients.get_mut(ci);
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
            c.sessions = Spans::new(r.time, 1, u32::from(kind == PathKind::Page));
            c.hours = Hours::new(hour_of(r.time), 1);
        } else {
            if let Some(s) = c.sessions.step(r.time, kind == PathKind::Page) {
                p.trail.spans.push((ci, s));
            }
            if let Some(h) = c.hours.step(hour_of(r.time), 1) {
                p.trail.hours.push((ci, h));
            }
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
            let s = p.folded.probe_samples.entry(ci).or_default();
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
        // robots.txt itself is always allowed (RFC 9309 2.2.2). A robot's
        // verdict is read below (its seconds); anyone else's is found
        // with the rest of the group's.
        let judged = kind != PathKind::RobotsTxt && self.judges;
        let mut later = None;
        let mut closed = false;
        if judged && robot {
            let verdict = match &p.agent_groups[a as usize] {
                Some(g) => self.policy.disallowed_in(g, target, r.time),
                None => {
                    let token = p.agents[a as usize].token.as_deref();
                    self.policy.disallowed(token, target, r.time)
                }
            };
            closed = p.note_verdict(ci, true, verdict, r, line);
        } else if judged {
            later = Some(Judge {
                client: ci,
                agent: a,
            });
        }
        p.folded.per_record(r, robot);
        let agent = &p.agents[a as usize];
        if robot && let Some(name) = agent.robot.as_deref() {
            let f = &mut p.folded;
            f.seconds
                .entry(ci)
                .or_default()
                .push(r.time, kind == PathKind::RobotsTxt, closed);
            let room = f.robot_paths.len() < ROBOT_PATH_COUNTERS || agent.registered;
            match f.robot_paths.get_mut(name) {
                Some(t) => t.add(target, 1),
                // Path counters for the first robots, and for every
                // registered one: made-up robot names cannot multiply
                // them.
                None if room => {
                    let mut t = TopPaths::default();
                    t.add(target, 1);
                    f.robot_paths.insert(name.into(), t);
                }
                None => f.robot_paths_dropped = true,
            }
        }
        later
    }

    /// The state so far, to merge with other threads', with the sessions
    /// and hours its clients set aside grouped beside them
    /// ([`Clients::history`] reads them): taking them back into each
    /// client would grow each one's history, an allocation each.
    pub fn into_partial(mut self) -> Partial {
        if self.judges {
            let clients = &mut self.part.folded.clients;
            for k in 0..clients.len() {
                let c = clients.get_mut(k as u32);
                let judged = c.requests - u64::from(c.robots_txt) - u64::from(c.unjudged);
                c.judged = u32::try_from(judged).unwrap_or(u32::MAX);
            }
        }
        self.part.set_aside();
        self.part
    }
}

/// A request the fold leaves to be judged with the rest of its group:
/// its client and agent.
#[derive(Clone, Copy)]
struct Judge {
    client: u32,
    agent: u32,
}

impl Partial {
    /// Counts `verdict` (closed, open or not judged) for a request of
    /// client `ci` (a robot's when `robot`): its closed requests, their
    /// first samples, and a robot's answers to them. Returns whether the
    /// request was closed. An open request, nearly every one, counts
    /// nothing and costs no call.
    #[inline(always)]
    fn note_verdict(
        &mut self,
        ci: u32,
        robot: bool,
        verdict: Option<bool>,
        r: &Record<'_>,
        line: u64,
    ) -> bool {
        match verdict {
            Some(false) => false,
            None => {
                let c = self.folded.clients.get_mut(ci);
                c.unjudged = c.unjudged.saturating_add(1);
                false
            }
            Some(true) => {
                self.note_closed(ci, robot, r, line);
                true
            }
        }
    }

    /// [`Partial::note_verdict`] of a closed request.
    #[inline(never)]
    fn note_closed(&mut self, ci: u32, robot: bool, r: &Record<'_>, line: u64) {
        let inc = |x: &mut u32| *x = x.saturating_add(1);
        let c = self.folded.clients.get_mut(ci);
        // A client's samples are its first closed requests: a client that
        // has them all needs no look at them.
        let full = c.disallowed as usize >= CLIENT_SAMPLES;
        inc(&mut c.disallowed);
        // Enforcement is measured on robots' requests only.
        if robot {
            let k = crate::answer_of(r.status);
            inc(&mut self.folded.closed_answers.entry(ci).or_default()[k]);
        }
        if !full {
            let s = self.folded.disallowed_samples.entry(ci).or_default();
            if s.len() < CLIENT_SAMPLES {
                s.push(Example {
                    line,
                    time: r.time,
                    target: clip(&r.path).to_owned(),
                });
            }
        }
    }
}

impl Folded {
    /// What every record adds, tracked client or not: the site's paths,
    /// 404s, days and virtual hosts.
    fn per_record(&mut self, r: &Record<'_>, robot: bool) {
        let target: &str = &r.path;
        self.site_paths.add(target, 1);
        let not_found = u64::from(r.status == 404);
        if not_found == 1 {
            self.not_found.add(target, 1);
        }
        let day = self.days.entry(r.time.div_euclid(86_400)).or_default();
        day[0] += 1;
        day[1] = day[1].saturating_add(r.bytes);
        day[2] += not_found;
        if let Some(v) = &r.vhost {
            let key: &str = if self.vhosts.len() < MAX_VHOSTS || self.vhosts.contains_key(&**v) {
                v
            } else {
                OTHER_VHOSTS
            };
            let n = match self.vhosts.get_mut(key) {
                Some(n) => n,
                None => self.vhosts.entry(key.into()).or_default(),
            };
            let robot = u64::from(robot);
            n[0] += 1;
            n[1] = n[1].saturating_add(r.bytes);
            n[2] += robot;
            n[3] = n[3].saturating_add(robot * r.bytes);
            n[4] += not_found;
        }
    }
}

impl Partial {
    /// Takes what the clients set aside back into them: the trail's
    /// entries grouped by client (a counting sort, linear), then merged
    /// into each client's sorted sessions and hours.
    pub(super) fn settle(&mut self) {
        if let Some((spans, hours)) = self.trail_grouped() {
            let clients = &mut self.folded.clients;
            for i in 0..clients.len() {
                clients.take_back(i as u32, &spans, &hours);
            }
        }
    }

    /// Groups the trail beside the clients, by client, for
    /// [`Clients::history`] to read, after taking back what was there.
    pub(super) fn set_aside(&mut self) {
        if let Some(grouped) = self.trail_grouped() {
            let clients = &mut self.folded.clients;
            (clients.spans, clients.hours) = grouped;
        }
    }

    /// The trail grouped by client, if it holds anything; what the
    /// clients had aside is then taken back into them first.
    fn trail_grouped(&mut self) -> Option<Grouped> {
        let (spans, hours) = self.trail.grouped(self.folded.clients.len());
        if spans.is_empty() && hours.is_empty() {
            return None;
        }
        self.folded.clients.take_back_all();
        Some((spans, hours))
    }

    /// Whether index entry `s` is the client of record `r` (its
    /// User-Agent's hash `uh`): the hash, the address, then the
    /// User-Agent's text.
    fn is(&self, s: &Slot, r: &Record<'_>, uh: u64) -> bool {
        s.ip == ip_key(r.ip)
            && self.agent_hash[s.agent as usize] == uh
            && self.folded.clients[s.client as usize].ip == r.ip
            && self.agent_ua[s.agent as usize].as_deref() == r.user_agent.as_deref()
    }

    /// The client of record `r` (its User-Agent's hash `uh`), if known.
    fn find(&self, r: &Record<'_>, uh: u64) -> Option<Slot> {
        self.client_ix
            .find(client_hash(ip_key(r.ip), uh), |s| self.is(s, r, uh))
            .copied()
    }

    /// The entry that is most likely record `r`'s client (its
    /// User-Agent's hash `uh`), found without reading a client: its
    /// agent's hash and its address's key match. To be confirmed
    /// ([`Partial::is`]).
    fn candidate(&self, r: &Record<'_>, uh: u64) -> Option<Slot> {
        let ip = ip_key(r.ip);
        self.client_ix
            .find(client_hash(ip, uh), |s| {
                s.ip == ip && self.agent_hash[s.agent as usize] == uh
            })
            .copied()
    }

    /// The agent of User-Agent `ua` (hash `h`), if known.
    fn find_agent(&self, ua: Option<&str>, h: u64) -> Option<u32> {
        self.agent_ix
            .find(h, |&i| self.agent_ua[i as usize].as_deref() == ua)
            .copied()
    }

    /// Adds an agent not yet known, its User-Agent's hash `h`.
    fn add_agent(
        &mut self,
        ua: Option<Box<str>>,
        h: u64,
        agent: Agent,
        groups: Option<Groups>,
    ) -> u32 {
        let i = self.agents.len() as u32;
        self.robot.push(agent.robot.is_some());
        self.agent_groups.push(groups);
        self.agent_ua.push(ua);
        self.agents.push(agent);
        self.agent_hash.push(h);
        let hashes = &self.agent_hash;
        self.agent_ix.insert_unique(h, i, |&j| hashes[j as usize]);
        i
    }

    /// The client of address `ip` and agent `a`, if known.
    fn find_client(&self, ip: IpAddr, a: u32) -> Option<u32> {
        let key = ip_key(ip);
        self.client_ix
            .find(client_hash(key, self.agent_hash[a as usize]), |s| {
                s.ip == key && s.agent == a && self.folded.clients[s.client as usize].ip == ip
            })
            .map(|s| s.client)
    }

    /// Adds a client not yet known (its agent is); its index entry.
    fn add_client(&mut self, c: Client) -> Slot {
        let (ip, agent) = (ip_key(c.ip), c.agent);
        let h = client_hash(ip, self.agent_hash[agent as usize]);
        let client = self.folded.clients.push(c);
        let slot = Slot { client, agent, ip };
        let hashes = &self.agent_hash;
        self.client_ix.insert_unique(h, slot, |s| rehash(hashes, s));
        slot
    }

    /// Distinct clients so far.
    pub fn client_count(&self) -> usize {
        self.folded.clients.len()
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
            all.fold(p, rest.peek().is_some(), threads);
        }
        all.finish(threads)
    }

    /// Folds another thread's state into this one (cheapest with the
    /// larger state as `self`).
    pub fn merge(&mut self, o: Partial) {
        self.fold(o, true, 1);
    }

    /// Folds `o` in; `index`: the clients it adds are indexed (more folds
    /// to come). The last fold merges the clients both sides have on
    /// `threads` threads.
    pub(super) fn fold(&mut self, mut o: Partial, index: bool, threads: usize) {
        self.settle();
        o.settle();
        let mut agent_map: Vec<u32> = Vec::with_capacity(o.agents.len());
        let hashes = std::mem::take(&mut o.agent_hash);
        let uas = std::mem::take(&mut o.agent_ua);
        for (((ua, agent), h), groups) in uas
            .into_iter()
            .zip(std::mem::take(&mut o.agents))
            .zip(hashes)
            .zip(std::mem::take(&mut o.agent_groups))
        {
            let i = match self.find_agent(ua.as_deref(), h) {
                Some(i) => i,
                None => self.add_agent(ua, h, agent, groups),
            };
            agent_map.push(i);
        }
        let mut client_map: Vec<u32> = Vec::with_capacity(o.folded.clients.len());
        if index {
            // Clients move one at a time here: what they set aside is
            // taken back into them first.
            self.folded.clients.take_back_all();
            o.folded.clients.take_back_all();
            let hashes = &self.agent_hash;
            self.client_ix
                .reserve(o.folded.clients.len(), |s| rehash(hashes, s));
            // Segment by segment: each is freed once moved.
            for seg in std::mem::take(&mut o.folded.clients.segs) {
                for mut c in seg {
                    c.agent = agent_map[c.agent as usize];
                    match self.find_client(c.ip, c.agent) {
                        Some(i) => {
                            self.folded.clients.get_mut(i).merge(&c);
                            client_map.push(i);
                        }
                        None if self.folded.clients.len() >= self.max_clients => {
                            self.folded.untracked.add(c.requests, c.bytes);
                            client_map.push(DROPPED);
                        }
                        None => client_map.push(self.add_client(c).client),
                    }
                }
            }
        } else {
            // The clients of `o` are distinct: those already here are
            // folded in, the others keep their place in `o`'s segments,
            // which are compacted and taken over (no copy, no index).
            let mut segs = std::mem::take(&mut o.folded.clients.segs);
            let theirs_aside = (
                std::mem::take(&mut o.folded.clients.spans),
                std::mem::take(&mut o.folded.clients.hours),
            );
            let mine_aside = (
                std::mem::take(&mut self.folded.clients.spans),
                std::mem::take(&mut self.folded.clients.hours),
            );
            let mine = self.folded.clients.len();
            let mut next = mine as u32;
            let mut kept: Vec<bool> = Vec::with_capacity(o.folded.clients.len());
            // (client here, client of `o` in order): merged below.
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            for (j, c) in segs.iter_mut().flatten().enumerate() {
                c.agent = agent_map[c.agent as usize];
                match self.find_client(c.ip, c.agent) {
                    Some(i) => {
                        pairs.push((i, j as u32));
                        client_map.push(i);
                        kept.push(false);
                    }
                    None if next as usize >= self.max_clients => {
                        self.folded.untracked.add(c.requests, c.bytes);
                        client_map.push(DROPPED);
                        kept.push(false);
                    }
                    None => {
                        client_map.push(next);
                        next += 1;
                        kept.push(true);
                    }
                }
            }
            // A client on both sides is merged whole: what each side set
            // aside is taken back into it first. Pairs are in the order of
            // `o`'s clients.
            let mut taken: Vec<u32> = Vec::with_capacity(pairs.len());
            let mut left = pairs.iter().peekable();
            for (j, c) in segs.iter_mut().flatten().enumerate() {
                if let Some(&(i, _)) = left.next_if(|p| p.1 as usize == j) {
                    let (s, h) = &theirs_aside;
                    c.take_back(s.of(j), h.of(j));
                    self.folded
                        .clients
                        .take_back(i, &mine_aside.0, &mine_aside.1);
                    taken.push(i);
                }
            }
            taken.sort_unstable();
            let theirs: Vec<&Client> = segs.iter().flatten().collect();
            self.folded
                .clients
                .merge_pairs(&mut pairs, &theirs, threads);
            drop(theirs);
            self.folded.clients.append_kept(segs, &kept);
            // The rest stays aside, each client's under its new place.
            let clients = &mut self.folded.clients;
            clients.spans = mine_aside.0.rebuilt(mine, &taken, &theirs_aside.0, &kept);
            clients.hours = mine_aside.1.rebuilt(mine, &taken, &theirs_aside.1, &kept);
        }
        // Per-client tables follow their clients to their new places.
        let map = &client_map;
        remap(
            &mut self.folded.probe_samples,
            o.folded.probe_samples,
            map,
            |s, x| keep_first(s, x, true),
        );
        remap(
            &mut self.folded.disallowed_samples,
            o.folded.disallowed_samples,
            map,
            |s, x| keep_first(s, x, false),
        );
        remap(&mut self.folded.seconds, o.folded.seconds, map, |s, x| {
            s.extend_from(&x)
        });
        remap(
            &mut self.folded.closed_answers,
            o.folded.closed_answers,
            map,
            |s, x| {
                for (a, b) in s.iter_mut().zip(x) {
                    *a = a.saturating_add(b);
                }
            },
        );
        remap(&mut self.folded.signed, o.folded.signed, map, |s, x| {
            s.merge(x)
        });
        self.folded
            .signature_agents
            .merge(o.folded.signature_agents);
        for (name, paths) in o.folded.robot_paths {
            match self.folded.robot_paths.get_mut(&name) {
                Some(t) => t.merge(paths),
                None => {
                    self.folded.robot_paths.insert(name, paths);
                }
            }
        }
        self.folded.robot_paths_dropped |= o.folded.robot_paths_dropped;
        let u = o.folded.untracked;
        self.folded.untracked.add(u.requests, u.bytes);
        self.folded.site_paths.merge(o.folded.site_paths);
        self.folded.not_found.merge(o.folded.not_found);
        for (d, n) in o.folded.days {
            let m = self.folded.days.entry(d).or_default();
            for k in 0..3 {
                m[k] = m[k].saturating_add(n[k]);
            }
        }
        for (v, n) in o.folded.vhosts {
            let key =
                if self.folded.vhosts.len() < MAX_VHOSTS || self.folded.vhosts.contains_key(&v) {
                    v
                } else {
                    OTHER_VHOSTS.into()
                };
            let m = self.folded.vhosts.entry(key).or_default();
            for k in 0..5 {
                m[k] = m[k].saturating_add(n[k]);
            }
        }
        self.folded.malformed.merge(&o.folded.malformed);
        self.folded.lines += o.folded.lines;
        self.folded.records += o.folded.records;
        self.folded.out_of_window += o.folded.out_of_window;
    }

    /// Classifies every client, on `threads` threads.
    pub fn finish(mut self, threads: usize) -> Analysis {
        self.settle();
        // The index is not needed any more: free it first.
        self.client_ix = HashTable::new();
        // Segments are classified on all cores, then put in order.
        let (agents, uas) = (&self.agents, &self.agent_ua);
        let clients = &self.folded.clients;
        // The clients of segments `segs` (segment indices).
        let class_of = |segs: std::ops::Range<usize>| -> Vec<Class> {
            let end = clients.len().min(segs.end << SEG_BITS);
            ((segs.start << SEG_BITS)..end)
                .map(|k| {
                    let c = clients.history(k);
                    let i = c.agent as usize;
                    classify::class_of(c, &agents[i], uas[i].is_none())
                })
                .collect()
        };
        let nsegs = clients.segs.len();
        let per = nsegs.div_ceil(threads.max(1)).max(1);
        let classes: Vec<Class> = if nsegs <= per {
            class_of(0..nsegs)
        } else {
            std::thread::scope(|s| {
                let parts: Vec<_> = (0..nsegs)
                    .step_by(per)
                    .map(|a| {
                        let class_of = &class_of;
                        s.spawn(move || class_of(a..(a + per).min(nsegs)))
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
                .agent_ua
                .into_iter()
                .zip(self.agents)
                .map(|(ua, a)| (ua.map(String::from), a))
                .collect(),
            classes,
            folded: self.folded,
        }
    }
}

/// Moves a per-client table of another partial into `into`, each entry
/// under its client's place here (`client_map`), merged with what is
/// there; the entries of dropped clients go.
fn remap<V: Default>(
    into: &mut Map<u32, V>,
    from: Map<u32, V>,
    client_map: &[u32],
    mut merge: impl FnMut(&mut V, V),
) {
    for (ci, v) in from {
        let to = client_map[ci as usize];
        if to != DROPPED {
            merge(into.entry(to).or_default(), v);
        }
    }
}

/// The hasher of User-Agents, clients and a client's distinct paths: one
/// per process, so that every thread's hashes agree and a merge reuses
/// them; seeded at random, so that made-up User-Agents and paths cannot
/// be chosen to collide.
pub(super) fn hasher() -> &'static Hasher {
    static STATE: OnceLock<Hasher> = OnceLock::new();
    STATE.get_or_init(Hasher::default)
}

/// A User-Agent's hash (no User-Agent has one too).
fn ua_hash(ua: Option<&str>) -> u64 {
    hasher().hash_one(ua)
}

/// An address in 32 bits: an IPv4 address itself, an IPv6 one hashed.
/// Clients are told apart by their whole address; the key only spares
/// reading them.
pub(super) fn ip_key(ip: IpAddr) -> u32 {
    match ip {
        IpAddr::V4(v4) => u32::from(v4),
        IpAddr::V6(v6) => (hasher().hash_one(v6) >> 32) as u32,
    }
}

/// A client's hash: its address's key and its User-Agent's hash.
fn client_hash(ip_key: u32, ua_hash: u64) -> u64 {
    hasher().hash_one((ip_key, ua_hash))
}

/// An index entry's hash, for the index's growth (no client is read).
fn rehash(agent_hash: &[u64], s: &Slot) -> u64 {
    client_hash(s.ip, agent_hash[s.agent as usize])
}
