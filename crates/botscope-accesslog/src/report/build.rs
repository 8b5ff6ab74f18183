//! The report from an analysis: one pass over the clients (site totals,
//! classes, hours, robots, the lists), then each robot and list finished.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::net::IpAddr;

use super::*;
use crate::analyze::{Analysis, Class, Map, Policy, Second, Seconds, Set, TopPaths};
use crate::time::format_rfc3339;

/// What the addresses of one standing did under a robot's name.
struct Part {
    requests: u64,
    sessions: u64,
    ips: Set<IpAddr>,
    uas: Set<usize>,
    bytes: u64,
    robots_txt: u64,
    judged: u64,
    disallowed: u64,
    examples: Vec<(i64, IpAddr, String)>,
    status: [u64; 6],
    first: i64,
    last: i64,
    classes: [u64; 5],
    /// Requests of its clients that probe for weak spots (class
    /// `scanner`).
    scanning: u64,
}

impl Default for Part {
    fn default() -> Part {
        Part {
            requests: 0,
            sessions: 0,
            ips: Set::default(),
            uas: Set::default(),
            bytes: 0,
            robots_txt: 0,
            judged: 0,
            disallowed: 0,
            examples: Vec::new(),
            status: [0; 6],
            first: i64::MAX,
            last: i64::MIN,
            classes: [0; 5],
            scanning: 0,
        }
    }
}

impl Part {
    /// Adds client `i` (of class index `ci`).
    fn add(&mut self, a: &Analysis, i: usize, ci: usize) {
        let c = a.folded.clients.history(i);
        self.requests += c.requests;
        self.sessions += c.session_count() as u64;
        self.ips.insert(c.ip);
        self.uas.insert(c.agent());
        self.bytes += c.bytes;
        self.robots_txt += u64::from(c.robots_txt);
        self.judged += u64::from(c.judged);
        self.disallowed += u64::from(c.disallowed);
        for (k, n) in c.status.iter().enumerate() {
            self.status[k] += u64::from(*n);
        }
        self.first = self.first.min(c.first());
        self.last = self.last.max(c.last());
        self.classes[ci] += 1;
        if ci == Class::Scanner.index() {
            self.scanning += c.requests;
        }
        for e in a.disallowed_examples(i) {
            self.examples.push((e.time, c.ip, e.target.clone()));
        }
    }

    fn finish(mut self) -> Figures {
        self.examples.sort();
        let seen = |t: i64| {
            if self.requests > 0 {
                format_rfc3339(t)
            } else {
                String::new()
            }
        };
        Figures {
            requests: self.requests,
            sessions: self.sessions,
            unique_ips: self.ips.len() as u64,
            unique_uas: self.uas.len() as u64,
            bytes: self.bytes,
            robots_txt_fetches: self.robots_txt,
            judged_requests: self.judged,
            disallowed_requests: self.disallowed,
            disallowed_share: ratio(self.disallowed, self.judged),
            disallowed_examples: self
                .examples
                .iter()
                .take(5)
                .map(|(t, ip, p)| Disallowed {
                    time: format_rfc3339(*t),
                    ip: *ip,
                    path: p.clone(),
                })
                .collect(),
            status: STATUS_NAMES
                .iter()
                .zip(self.status)
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| (*k, n))
                .collect(),
            first_seen: seen(self.first),
            last_seen: seen(self.last),
            classes: Class::ALL
                .iter()
                .zip(self.classes)
                .filter(|(_, n)| *n > 0)
                .map(|(c, n)| (c.as_str(), n))
                .collect(),
        }
    }
}

#[derive(Default)]
struct RobotAcc {
    category: Option<String>,
    client_type: Option<&'static str>,
    registered: bool,
    token: Option<String>,
    /// Its own addresses (all but the refuted ones).
    own: Part,
    /// The addresses verification refuted.
    impostors: Part,
    verification: Verification,
    ips_by_check: [Set<IpAddr>; 4],
    spoofed_ips: Map<IpAddr, u64>,
    seconds: Seconds,
    signatures: Option<crate::SignatureCounts>,
    enforcement: crate::Enforcement,
}

const STATUS_NAMES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"];

fn pace(seconds: &mut Seconds, policy: &dyn Policy, token: Option<&str>) -> Pace {
    let s = seconds.sorted();
    let mut breaches = 0u64;
    let mut gaps: Vec<i64> = Vec::new();
    let mut zero_gaps = 0u64;
    let mut peak = 0u64;
    let mut minute = (i64::MIN, 0u64);
    for (i, &Second { t, requests: n, .. }) in s.iter().enumerate() {
        let n = u64::from(n);
        zero_gaps += n - 1;
        let m = t.div_euclid(60);
        if minute.0 == m {
            minute.1 += n;
        } else {
            minute = (m, n);
        }
        peak = peak.max(minute.1);
        let delay = policy.crawl_delay(token, t).filter(|d| *d > 0.0);
        if delay.is_some() {
            breaches += n - 1;
        }
        if i > 0 {
            let gap = t - s[i - 1].t;
            gaps.push(gap);
            if delay.is_some_and(|d| (gap as f64) < d) {
                breaches += 1;
            }
        }
    }
    let total = gaps.len() as u64 + zero_gaps;
    let median_gap_s = (total > 0).then(|| {
        let mid = total / 2;
        if mid < zero_gaps {
            0.0
        } else {
            let k = (mid - zero_gaps) as usize;
            let (_, v, _) = gaps.select_nth_unstable(k);
            *v as f64
        }
    });
    let crawl_delay_s = s.last().and_then(|l| policy.crawl_delay(token, l.t));
    Pace {
        median_gap_s,
        peak_requests_per_minute: peak,
        crawl_delay_s,
        crawl_delay_breaches: breaches,
    }
}

fn ratio(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        (n as f64 / of as f64 * 1e6).round() / 1e6
    }
}

/// Distinct addresses, counted here or on another thread.
enum Distinct {
    Spawned(std::thread::JoinHandle<u64>),
    Counted(u64),
}

impl RobotAcc {
    fn new(agent: &crate::Agent) -> RobotAcc {
        RobotAcc {
            category: agent.category.clone(),
            client_type: agent.client_type,
            registered: agent.registered,
            token: agent.token.clone(),
            ..RobotAcc::default()
        }
    }

    /// Adds client `i` (of class index `ci`, with its verification): to
    /// the robot's own figures, or to its impostors' when verification
    /// refuted the claim.
    fn add(&mut self, a: &mut Analysis, i: usize, ci: usize, check: Option<Check>) {
        if check == Some(Check::Spoofed) {
            self.impostors.add(a, i, ci);
        } else {
            self.own.add(a, i, ci);
        }
        let c = &a.folded.clients[i];
        if let Some(s) = a.signed(i) {
            self.signatures.get_or_insert_default().merge(&s.counts);
        }
        let k = match check {
            Some(Check::Verified) => 0,
            Some(Check::Spoofed) => 1,
            Some(Check::Unverifiable) => 2,
            None => 3,
        };
        let counts = [
            &mut self.verification.verified,
            &mut self.verification.spoofed,
            &mut self.verification.unverifiable,
            &mut self.verification.unchecked,
        ];
        counts[k].requests += c.requests;
        if self.ips_by_check[k].insert(c.ip) {
            counts[k].ips += 1;
        }
        if k == 1 {
            *self.spoofed_ips.entry(c.ip).or_default() += c.requests;
        }
        if k == 0
            && let Some(answers) = a.closed_answers(i)
        {
            self.enforcement.add(answers);
        }
        if k != 1
            && let Some(s) = a.take_seconds(i)
        {
            self.seconds.extend_from(&s);
        }
    }

    /// The robot's entry in the report.
    fn finish(mut self, name: &str, a: &Analysis, policy: &dyn Policy) -> Robot {
        let top = a.robot_paths(name);
        let claimed = self.own.requests + self.impostors.requests;
        // Typed by what it did: a robot whose requests are mostly probes
        // for secrets and exploits is a scanner, whatever its User-Agent
        // says (a registered robot never is one).
        let scanning = self.own.scanning + self.impostors.scanning;
        let client_type = if !self.registered && claimed > 0 && scanning * 2 > claimed {
            "scanner"
        } else {
            self.client_type.unwrap_or("unknown")
        };
        Robot {
            category: self.category,
            client_type,
            registered: self.registered,
            figures: self.own.finish(),
            impostors: (self.impostors.requests > 0).then(|| self.impostors.finish()),
            pace: pace(&mut self.seconds, policy, self.token.as_deref()),
            compliance: (policy.judges() && !self.seconds.sorted().is_empty()).then(|| {
                crate::Compliance::of(self.seconds.sorted(), policy, self.token.as_deref())
            }),
            top_paths: top
                .map(|t| {
                    t.top(TOP_PATHS)
                        .into_iter()
                        .map(|(p, n)| PathCount {
                            path: p.to_owned(),
                            requests: n,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            top_paths_approximate: match top {
                Some(t) => t.approximate,
                None => a.folded.robot_paths_dropped && claimed > 0,
            },
            verification: self.verification,
            spoofed_ips: {
                // Most requests first, then by address: the same for any
                // input order.
                let mut v: Vec<(u64, IpAddr)> =
                    self.spoofed_ips.iter().map(|(ip, n)| (*n, *ip)).collect();
                v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                v.into_iter().take(SPOOFED_IPS).map(|(_, ip)| ip).collect()
            },
            signatures: self.signatures,
            enforcement: (self.enforcement.closed_requests > 0).then_some(self.enforcement),
        }
    }
}

/// Signed requests by agent, most first.
fn signature_agents(a: &Analysis) -> Vec<SignatureAgent> {
    let mut v: Vec<SignatureAgent> = a
        .signature_agents()
        .map(|(agent, t)| SignatureAgent {
            agent: agent.to_owned(),
            robot: None,
            counts: t.counts,
            unverified: t.counts.unverified(),
            reasons: t.reasons.clone(),
        })
        .collect();
    v.sort_by(|x, y| {
        y.counts
            .signed
            .cmp(&x.counts.signed)
            .then_with(|| x.agent.cmp(&y.agent))
    });
    v
}

/// Distinct addresses, by sorting (a hash set's random inserts would miss
/// the cache at every client); on another thread when there are threads
/// to spare, while the pass runs.
fn distinct_addresses(a: &Analysis, threads: usize) -> Distinct {
    let mut v4: Vec<u32> = Vec::with_capacity(a.folded.clients.len());
    let mut v6: Vec<u128> = Vec::new();
    for c in a.folded.clients.iter() {
        match c.ip {
            IpAddr::V4(x) => v4.push(x.to_bits()),
            IpAddr::V6(x) => v6.push(x.to_bits()),
        }
    }
    let mut count = move || {
        v4.sort_unstable();
        v4.dedup();
        v6.sort_unstable();
        v6.dedup();
        (v4.len() + v6.len()) as u64
    };
    if threads > 1 {
        Distinct::Spawned(std::thread::spawn(count))
    } else {
        Distinct::Counted(count())
    }
}

/// Where a User-Agent's requests go in the report.
#[derive(Clone, Copy)]
enum Slot {
    /// No robot declared.
    None,
    /// The robot at this index.
    Kept(usize),
    /// A robot past the cap.
    Omitted,
}

/// Requests per hour and class: in a table over the hours of the log's
/// days when they span at most [`HourTable::DENSE`] hours (a count is an
/// index, not a hash lookup), in a map otherwise.
struct HourTable {
    /// The first hour of the table.
    base: i64,
    dense: Vec<[u64; 5]>,
    sparse: Map<i64, [u64; 5]>,
}

impl HourTable {
    /// Ten years of hours (7 MB of counts) at most in the table.
    const DENSE: i64 = 10 * 366 * 24;

    /// A table for hours within `days` (days since the epoch).
    fn over(days: impl Iterator<Item = i64>) -> HourTable {
        let (lo, hi) = days.fold((i64::MAX, i64::MIN), |(lo, hi), d| (lo.min(d), hi.max(d)));
        let hours = hi.saturating_sub(lo).saturating_add(1).saturating_mul(24);
        let len = if lo <= hi && hours <= Self::DENSE {
            hours
        } else {
            0
        };
        HourTable {
            base: lo.saturating_mul(24),
            dense: vec![[0; 5]; usize::try_from(len).unwrap_or(0)],
            sparse: Map::default(),
        }
    }

    fn add(&mut self, hour: i64, class: usize, n: u64) {
        let slot = usize::try_from(hour.wrapping_sub(self.base))
            .ok()
            .and_then(|i| self.dense.get_mut(i));
        match slot {
            Some(counts) => counts[class] += n,
            None => self.sparse.entry(hour).or_default()[class] += n,
        }
    }

    /// Adds the counts of another table made `over` the same days (so
    /// their dense parts line up).
    fn merge(&mut self, o: HourTable) {
        debug_assert!(self.base == o.base && self.dense.len() == o.dense.len());
        for (x, y) in self.dense.iter_mut().zip(&o.dense) {
            for (a, b) in x.iter_mut().zip(y) {
                *a += b;
            }
        }
        for (h, counts) in o.sparse {
            for (class, n) in counts.into_iter().enumerate() {
                if n > 0 {
                    self.add(h, class, n);
                }
            }
        }
    }

    /// The hours with a request, in order.
    fn into_sorted(self) -> Vec<(i64, [u64; 5])> {
        let base = self.base;
        let mut v: Vec<(i64, [u64; 5])> = self
            .dense
            .into_iter()
            .enumerate()
            .filter(|(_, n)| n.iter().any(|&x| x > 0))
            .map(|(i, n)| (base + i as i64, n))
            .chain(self.sparse)
            .collect();
        v.sort_unstable_by_key(|(h, _)| *h);
        v
    }
}

/// The robots' entries, filled from their clients in order.
struct Pass {
    /// For each User-Agent, its robot's place in `robots`.
    agent_robot: Vec<Slot>,
    robots: Vec<(String, RobotAcc)>,
    /// How many robots are past [`ROBOTS_CAP`] (their clients are
    /// counted in [`Tally::omitted`]).
    omitted: u64,
}

/// The fewest clients a thread of [`build`]'s pass takes: fewer cost
/// less to add up than a thread costs to start.
const CLIENTS_PER_THREAD: usize = 32_768;

/// What a pass over a range of clients adds up apart from the robots'
/// entries; ranges' tallies add up to the whole one's, in order.
struct Tally {
    /// The clients of robots with an entry, in order: (client, robot,
    /// class index, verdict).
    robot_clients: Vec<(usize, usize, usize, Option<Check>)>,
    /// The clients of the robots past the cap, counted together.
    omitted: OmittedRobots,
    classes: [ClassTotals; 5],
    hourly: HourTable,
    /// Clients active per day.
    visitors: Map<i64, u64>,
    /// Undeclared robots, scanners, monitors, spoofers, disobedient
    /// robots.
    lists: [Vec<usize>; 5],
    requests: u64,
    bytes: u64,
    robot_requests: u64,
    robot_bytes: u64,
    disallowed: u64,
    first: i64,
    last: i64,
}

impl Pass {
    /// Robots by agent: each client adds to its agent's robot without a
    /// lookup by name. At most [`ROBOTS_CAP`] robots get their own entry
    /// (every registered robot first, then the most requests, then by
    /// name): a log of a million made-up robot names costs a report of a
    /// thousand, and the rest are counted in `robots_omitted`.
    fn new(a: &Analysis) -> Pass {
        let mut per_agent = vec![0u64; a.agents.len()];
        for i in 0..a.folded.clients.len() {
            let c = &a.folded.clients[i];
            per_agent[c.agent()] += c.requests;
        }
        let mut by_name: Map<&str, (bool, u64)> = Map::default();
        for ((_, agent), n) in a.agents.iter().zip(&per_agent) {
            // An agent whose clients were all past the cap on clients
            // has no requests here.
            if *n == 0 {
                continue;
            }
            if let Some(name) = agent.robot.as_deref() {
                let e = by_name.entry(name).or_default();
                e.0 |= agent.registered;
                e.1 += n;
            }
        }
        let kept: Option<Set<&str>> = (by_name.len() > ROBOTS_CAP).then(|| {
            let mut v: Vec<(&str, (bool, u64))> = by_name.iter().map(|(k, v)| (*k, *v)).collect();
            let order = |x: &(&str, (bool, u64)), y: &(&str, (bool, u64))| {
                y.1.0
                    .cmp(&x.1.0)
                    .then(y.1.1.cmp(&x.1.1))
                    .then_with(|| x.0.cmp(y.0))
            };
            v.select_nth_unstable_by(ROBOTS_CAP, order);
            v.truncate(ROBOTS_CAP);
            v.into_iter().map(|(k, _)| k).collect()
        });
        let omitted = kept
            .as_ref()
            .map_or(0, |k| (by_name.len() - k.len()) as u64);
        let mut robot_ix: Map<&str, usize> = Map::default();
        let mut robots: Vec<(String, RobotAcc)> = Vec::new();
        let agent_robot = a
            .agents
            .iter()
            .map(|(_, agent)| {
                let Some(name) = agent.robot.as_deref() else {
                    return Slot::None;
                };
                if kept.as_ref().is_some_and(|k| !k.contains(name)) {
                    return Slot::Omitted;
                }
                Slot::Kept(*robot_ix.entry(name).or_insert_with(|| {
                    robots.push((name.to_owned(), RobotAcc::new(agent)));
                    robots.len() - 1
                }))
            })
            .collect();
        Pass {
            agent_robot,
            robots,
            omitted,
        }
    }
}

impl Tally {
    fn new(a: &Analysis) -> Tally {
        Tally {
            robot_clients: Vec::new(),
            omitted: OmittedRobots::default(),
            classes: Default::default(),
            hourly: HourTable::over(a.days().map(|(d, _)| d)),
            visitors: Map::default(),
            lists: Default::default(),
            requests: 0,
            bytes: 0,
            robot_requests: 0,
            robot_bytes: 0,
            disallowed: 0,
            first: i64::MAX,
            last: i64::MIN,
        }
    }

    /// Adds client `i`; `agent_robot`: [`Pass::agent_robot`].
    fn add(&mut self, a: &Analysis, agent_robot: &[Slot], i: usize, check: Option<Check>) {
        let c = a.folded.clients.history(i);
        let class = a.classes[i];
        self.requests += c.requests;
        self.bytes += c.bytes;
        self.first = self.first.min(c.first());
        self.last = self.last.max(c.last());
        let ci = class.index();
        let t = &mut self.classes[ci];
        t.clients += 1;
        t.requests += c.requests;
        t.bytes += c.bytes;
        let (hourly, visitors) = (&mut self.hourly, &mut self.visitors);
        // Hours come in order: a day's hours one after the other.
        let mut day = None;
        c.each_hour(|h, n| {
            hourly.add(h, ci, u64::from(n));
            let d = h.div_euclid(24);
            if day != Some(d) {
                day = Some(d);
                *visitors.entry(d).or_default() += 1;
            }
        });
        if class.is_robot() {
            self.robot_requests += c.requests;
            self.robot_bytes += c.bytes;
            self.disallowed += u64::from(c.disallowed);
        }
        match class {
            Class::UndeclaredBot => self.lists[0].push(i),
            Class::Scanner => self.lists[1].push(i),
            Class::Monitor => self.lists[2].push(i),
            _ => {}
        }
        if check == Some(Check::Spoofed) {
            self.lists[3].push(i);
        }
        if crate::is_disobedient(class, c.disallowed, check) {
            self.lists[4].push(i);
        }
        match agent_robot[c.agent()] {
            Slot::Kept(ri) => self.robot_clients.push((i, ri, ci, check)),
            Slot::Omitted => {
                self.omitted.clients += 1;
                self.omitted.requests += c.requests;
                self.omitted.bytes += c.bytes;
            }
            Slot::None => {}
        }
    }

    /// Adds the tally of the clients after these.
    fn merge(&mut self, o: Tally) {
        self.robot_clients.extend(o.robot_clients);
        self.omitted.clients += o.omitted.clients;
        self.omitted.requests += o.omitted.requests;
        self.omitted.bytes += o.omitted.bytes;
        for (x, y) in self.classes.iter_mut().zip(o.classes) {
            x.clients += y.clients;
            x.requests += y.requests;
            x.bytes += y.bytes;
        }
        self.hourly.merge(o.hourly);
        for (d, n) in o.visitors {
            *self.visitors.entry(d).or_default() += n;
        }
        for (x, y) in self.lists.iter_mut().zip(o.lists) {
            x.extend(y);
        }
        self.requests += o.requests;
        self.bytes += o.bytes;
        self.robot_requests += o.robot_requests;
        self.robot_bytes += o.robot_bytes;
        self.disallowed += o.disallowed;
        self.first = self.first.min(o.first);
        self.last = self.last.max(o.last);
    }

    /// The tally of every client, on up to `threads` threads (a range of
    /// clients each, at least `per_thread` of them).
    fn of<S: BuildHasher + Sync>(
        a: &Analysis,
        agent_robot: &[Slot],
        checks: &HashMap<usize, Checked, S>,
        threads: usize,
        per_thread: usize,
    ) -> Tally {
        let n = a.folded.clients.len();
        let parts = threads.clamp(1, (n / per_thread.max(1)).max(1));
        let range = |r: std::ops::Range<usize>| {
            let mut t = Tally::new(a);
            for i in r {
                t.add(a, agent_robot, i, checks.get(&i).map(|k| k.check));
            }
            t
        };
        let size = n.div_ceil(parts);
        std::thread::scope(|s| {
            let rest: Vec<_> = (1..parts)
                .map(|k| s.spawn(move || range(k * size..((k + 1) * size).min(n))))
                .collect();
            let mut all = range(0..size.min(n));
            for h in rest {
                all.merge(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            all
        })
    }
}

/// Client `i` as the lists show it.
fn client_entry<S: BuildHasher>(
    a: &Analysis,
    i: usize,
    checks: &HashMap<usize, Checked, S>,
) -> ClientEntry {
    let c = a.folded.clients.history(i);
    let (ua, agent) = a.agent_of(&c);
    let (class, reasons) = a.reasons(i);
    let mut samples: Vec<String> = a
        .probe_samples(i)
        .iter()
        .map(|e| e.target.clone())
        .collect();
    samples.extend(
        a.disallowed_examples(i)
            .iter()
            .map(|e| format!("disallowed: {}", e.target)),
    );
    ClientEntry {
        ip: c.ip,
        user_agent: ua.map(str::to_owned),
        client_type: agent.client_type.unwrap_or("unknown"),
        robot: agent.robot.clone(),
        class: class.as_str(),
        requests: c.requests,
        sessions: c.session_count() as u64,
        pages: u64::from(c.pages),
        bytes: c.bytes,
        disallowed_requests: u64::from(c.disallowed),
        first_seen: format_rfc3339(c.first()),
        last_seen: format_rfc3339(c.last()),
        reasons: reasons
            .iter()
            .map(|r| ReasonOut {
                code: r.code,
                detail: r.detail.clone(),
            })
            .collect(),
        samples,
        verification: checks.get(&i).map(|k| k.reason.clone()),
        asn: None,
        as_org: None,
        country: None,
    }
}

/// The first [`LIST_LIMIT`] clients of a list by requests.
fn client_list<S: BuildHasher>(
    a: &Analysis,
    mut l: Vec<usize>,
    checks: &HashMap<usize, Checked, S>,
) -> ClientList {
    // Most requests first, then by address and User-Agent: a total order
    // (a client is an address and a User-Agent), so the listed clients do
    // not depend on the input order.
    let order = |x: &usize, y: &usize| {
        let (cx, cy) = (&a.folded.clients[*x], &a.folded.clients[*y]);
        cy.requests
            .cmp(&cx.requests)
            .then(cx.ip.cmp(&cy.ip))
            .then_with(|| a.agent_of(cx).0.cmp(&a.agent_of(cy).0))
    };
    let total = l.len() as u64;
    let requests = l.iter().map(|i| a.folded.clients[*i].requests).sum();
    if l.len() > LIST_LIMIT {
        l.select_nth_unstable_by(LIST_LIMIT, order);
        l.truncate(LIST_LIMIT);
    }
    l.sort_unstable_by(order);
    ClientList {
        total,
        requests,
        clients: l.iter().map(|i| client_entry(a, *i, checks)).collect(),
    }
}

/// The malformed-line counts, and how many lines were not understood
/// (a truncated last field is understood).
fn malformed(a: &Analysis) -> (Vec<MalformedCount>, u64) {
    let m = &a.folded.malformed;
    let counts = m
        .reasons()
        .map(|(r, n, s)| MalformedCount {
            reason: r.as_str(),
            count: n,
            sample_lines: s.to_vec(),
            samples: Vec::new(),
        })
        .collect();
    let truncated: u64 = m
        .reasons()
        .filter(|(r, _, _)| *r == crate::Malformed::Truncated)
        .map(|(_, n, _)| n)
        .sum();
    (counts, m.total() - truncated)
}

/// Per day: the fold's requests, bytes and 404s, the visitors, and the
/// requests per class summed from the hours.
fn days(a: &Analysis, hourly: &[(i64, [u64; 5])], visitors: &Map<i64, u64>) -> Vec<Day> {
    let mut classes: Map<i64, [u64; 5]> = Map::default();
    for (h, n) in hourly {
        let d = classes.entry(h.div_euclid(24)).or_default();
        for k in 0..5 {
            d[k] += n[k];
        }
    }
    let mut days: Vec<(i64, [u64; 3])> = a.days().collect();
    days.sort_unstable_by_key(|(d, _)| *d);
    days.into_iter()
        .map(|(d, n)| {
            let c = classes.get(&d).copied().unwrap_or_default();
            let mut day = format_rfc3339(d * 86_400);
            day.truncate(10);
            Day {
                day,
                requests: n[0],
                bytes: n[1],
                visitors: visitors.get(&d).copied().unwrap_or(0),
                not_found: n[2],
                human: c[0],
                declared_bot: c[1],
                undeclared_bot: c[2],
                scanner: c[3],
                monitor: c[4],
            }
        })
        .collect()
}

/// The `n` top paths of a counter.
fn path_counts(t: &TopPaths, n: usize) -> Vec<PathCount> {
    t.top(n)
        .into_iter()
        .map(|(path, requests)| PathCount {
            path: path.to_owned(),
            requests,
        })
        .collect()
}

/// Virtual hosts, most requests first (ties by name).
fn vhosts(a: &Analysis) -> Vec<Vhost> {
    let mut v: Vec<Vhost> = a
        .vhosts()
        .map(|(name, n)| Vhost {
            vhost: name.to_owned(),
            requests: n[0],
            bytes: n[1],
            robot_requests: n[2],
            robot_bytes: n[3],
            not_found: n[4],
        })
        .collect();
    v.sort_unstable_by(|x, y| {
        y.requests
            .cmp(&x.requests)
            .then_with(|| x.vhost.cmp(&y.vhost))
    });
    v
}

/// Requests per hour and class, by hour.
fn hours(hourly: Vec<(i64, [u64; 5])>) -> Vec<Hour> {
    hourly
        .into_iter()
        .map(|(h, n)| Hour {
            hour: format_rfc3339(h * 3600),
            requests: n.iter().sum(),
            human: n[0],
            declared_bot: n[1],
            undeclared_bot: n[2],
            scanner: n[3],
            monitor: n[4],
        })
        .collect()
}

/// Builds the report. `checks[&i]` is the verification of client `i` (for
/// clients that claim a registered robot). With `threads` above one, the
/// distinct addresses are counted on a second thread meanwhile.
pub fn build<S: BuildHasher + Sync>(
    a: &mut Analysis,
    checks: &HashMap<usize, Checked, S>,
    policy: &dyn Policy,
    threads: usize,
) -> Report {
    build_in(a, checks, policy, threads, CLIENTS_PER_THREAD)
}

/// [`build`], the pass over the clients on threads of at least
/// `per_thread` clients each.
fn build_in<S: BuildHasher + Sync>(
    a: &mut Analysis,
    checks: &HashMap<usize, Checked, S>,
    policy: &dyn Policy,
    threads: usize,
    per_thread: usize,
) -> Report {
    let distinct = distinct_addresses(a, threads);
    let mut p = Pass::new(a);
    let mut t = Tally::of(a, &p.agent_robot, checks, threads, per_thread);
    for &(i, ri, ci, check) in &t.robot_clients {
        p.robots[ri].1.add(a, i, ci, check);
    }
    let unique_ips = match distinct {
        Distinct::Spawned(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
        Distinct::Counted(n) => n,
    };
    let a = &*a;
    let [undeclared, scanners, monitors, spoofed, disobedient] =
        std::mem::take(&mut t.lists).map(|l| client_list(a, l, checks));
    let robots: BTreeMap<String, Robot> = p
        .robots
        .into_iter()
        .collect::<BTreeMap<String, RobotAcc>>()
        .into_iter()
        .map(|(name, r)| {
            let robot = r.finish(&name, a, policy);
            (name, robot)
        })
        .collect();
    let (malformed, not_understood) = malformed(a);
    let hourly = t.hourly.into_sorted();
    // The site's totals include the requests of untracked clients.
    let requests = t.requests + a.folded.untracked.requests;
    let bytes = t.bytes.saturating_add(a.folded.untracked.bytes);
    Report {
        schema: SCHEMA,
        inputs: Vec::new(),
        robots_txt: Vec::new(),
        compliance: crate::Compliance::total(robots.values().filter_map(|r| r.compliance.as_ref())),
        lines: Lines {
            total: a.folded.lines,
            parsed: a.folded.records,
            malformed: not_understood,
            out_of_window: a.folded.out_of_window,
            analyzed: a.folded.records - a.folded.out_of_window,
        },
        malformed,
        period: (t.first <= t.last).then(|| Period {
            first: format_rfc3339(t.first),
            last: format_rfc3339(t.last),
        }),
        site: Site {
            requests,
            bytes,
            clients: a.folded.clients.len() as u64,
            unique_ips,
            robot_requests: t.robot_requests,
            robot_bytes: t.robot_bytes,
            robot_request_share: ratio(t.robot_requests, requests),
            robot_byte_share: ratio(t.robot_bytes, bytes),
            classes: Class::ALL
                .iter()
                .zip(t.classes)
                .map(|(c, t)| (c.as_str(), t))
                .collect(),
            disallowed_requests: t.disallowed,
        },
        daily: days(a, &hourly, &t.visitors),
        hourly: hours(hourly),
        top_paths: path_counts(a.site_paths(), SITE_TOP_PATHS),
        top_paths_approximate: a.site_paths().approximate,
        not_found: path_counts(a.not_found(), SITE_TOP_PATHS),
        not_found_approximate: a.not_found().approximate,
        vhosts: vhosts(a),
        robots,
        robots_omitted: OmittedRobots {
            robots: p.omitted,
            ..t.omitted
        },
        untracked: a.folded.untracked,
        undeclared_bots: undeclared,
        scanners,
        monitors,
        spoofed,
        disobedient,
        signature_agents: signature_agents(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{Agent, Analyzer, Identify, LOOKAHEAD, NoPolicy, Partial, Window};

    /// Robots by a word of their User-Agent.
    struct Words;
    impl Identify for Words {
        fn identify(&self, ua: Option<&str>) -> Agent {
            let ua = ua.unwrap_or_default();
            let robot = ["Googlebot", "bingbot", "Baiduspider", "YandexBot"]
                .into_iter()
                .find(|w| ua.contains(w))
                .map(str::to_owned)
                .or_else(|| {
                    ua.to_ascii_lowercase()
                        .contains("bot")
                        .then(|| "other".into())
                });
            Agent {
                registered: robot.as_deref().is_some_and(|r| r != "other"),
                token: robot.clone(),
                robot,
                ..Agent::default()
            }
        }
    }

    /// The example log's lines and its format.
    fn example_log() -> (Vec<&'static [u8]>, crate::LogFormat) {
        let text = include_bytes!("../../../../examples/logs/elastic_examples_apache_logs.log");
        let lines: Vec<&[u8]> = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        let format = crate::detect(&lines[..200]).expect("format");
        (lines, format)
    }

    /// The pass over the clients in ranges on several threads gives the
    /// report one pass gives, to the byte: sums, lists in order, robots'
    /// entries from their clients in order.
    #[test]
    fn a_pass_in_ranges_reports_as_one_pass() {
        let (lines, format) = example_log();
        let analysis = || {
            let mut an = Analyzer::new(&Words, &NoPolicy, Window::default());
            for (i, l) in lines.iter().enumerate() {
                if let Ok(r) = format.parse_line(l) {
                    an.record(&r, i as u64 + 1);
                }
            }
            Partial::finish_all(vec![an.into_partial()], 1)
        };
        let checks: HashMap<usize, Checked> = HashMap::new();
        let one = build_in(&mut analysis(), &checks, &NoPolicy, 1, 1);
        assert!(one.site.clients > 1000 && !one.robots.is_empty());
        let json = |r: &Report| serde_json::to_string(r).expect("json");
        for (threads, per_thread) in [(2, 1), (3, 1), (4, 500)] {
            let many = build_in(&mut analysis(), &checks, &NoPolicy, threads, per_thread);
            assert_eq!(json(&many), json(&one), "{threads} threads");
        }
    }

    /// Records folded with their clients looked up ahead
    /// ([`Analyzer::record_all`]) report as records folded one at a time,
    /// to the byte, in groups of any size, with malformed lines between
    /// them and with clients past the cap.
    #[test]
    fn records_looked_up_ahead_fold_as_one_at_a_time() {
        let (lines, format) = example_log();
        let checks: HashMap<usize, Checked> = HashMap::new();
        let json = |r: &Report| serde_json::to_string(r).expect("json");
        for cap in [usize::MAX, 300] {
            let report = |group: usize| {
                let mut an =
                    Analyzer::new(&Words, &NoPolicy, Window::default()).with_max_clients(cap);
                let mut records = Vec::new();
                for (i, l) in lines.iter().enumerate() {
                    let n = i as u64 + 1;
                    // Every 500th line cut short: malformed between records.
                    let l = if i % 500 == 7 { &l[..10] } else { l };
                    match format.parse_line(l) {
                        Ok(r) if group == 0 => an.record(&r, n),
                        Ok(r) => {
                            records.push((r, n));
                            if records.len() == group {
                                an.record_all(&records);
                                records.clear();
                            }
                        }
                        Err(e) => {
                            an.record_all(&records);
                            records.clear();
                            an.malformed(e, n);
                        }
                    }
                }
                an.record_all(&records);
                let mut analysis = Partial::finish_all(vec![an.into_partial()], 1);
                json(&build_in(&mut analysis, &checks, &NoPolicy, 1, 1))
            };
            let one = report(0);
            assert!(one.contains("\"malformed\""), "{}", &one[..200]);
            for group in [1, 2, 7, LOOKAHEAD, 100, lines.len()] {
                assert_eq!(report(group), one, "groups of {group}, cap {cap}");
            }
        }
    }

    /// Hours within the log's days are counted in the table, any others
    /// beside it; both come out in order, hours without a request left
    /// out.
    #[test]
    fn hour_table_counts_in_and_out_of_its_days() {
        let mut t = HourTable::over([20_000, 20_002, 20_001].into_iter());
        assert_eq!(t.dense.len(), 3 * 24);
        for (h, class) in [(480_000, 0), (480_071, 4), (480_000, 1), (480_000, 0)] {
            t.add(h, class, 1);
        }
        t.add(479_999, 2, 5);
        t.add(-3, 3, 2);
        t.add(i64::MAX, 0, 1);
        assert_eq!(
            t.into_sorted(),
            [
                (-3, [0, 0, 0, 2, 0]),
                (479_999, [0, 0, 5, 0, 0]),
                (480_000, [2, 1, 0, 0, 0]),
                (480_071, [0, 0, 0, 0, 1]),
                (i64::MAX, [1, 0, 0, 0, 0]),
            ]
        );
        // A log spanning centuries keeps its hours in the map alone.
        let mut wide = HourTable::over([0, 100 * 366].into_iter());
        assert!(wide.dense.is_empty());
        wide.add(5, 0, 1);
        assert_eq!(wide.into_sorted(), [(5, [1, 0, 0, 0, 0])]);
        assert!(HourTable::over(std::iter::empty()).dense.is_empty());
    }
}
