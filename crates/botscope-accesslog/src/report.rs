//! The report of `botscope logs analyze`: per robot (BotSeer 3.2), per
//! site, per hour, and the lists of undeclared robots, scanners, monitors
//! and spoofers with their reasons. Field names are a stable contract,
//! documented in docs/log-analysis.md (schema `botscope.logs/1`).

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::net::IpAddr;

use serde::Serialize;

use crate::analyze::{Analysis, Class, Map, Policy, Seconds, Set};
use crate::time::format_rfc3339;

/// The schema name and version written into every JSON report.
pub const SCHEMA: &str = "botscope.logs/1";

/// Clients shown per list (undeclared bots, scanners …); `total` counts all.
pub const LIST_LIMIT: usize = 500;

/// Top paths shown per robot.
pub const TOP_PATHS: usize = 10;

/// Spoofing addresses shown per robot.
pub const SPOOFED_IPS: usize = 20;

/// What verification of a claimed robot found for one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The address is the robot's (published list or FCrDNS).
    Verified,
    /// The address is not the robot's.
    Spoofed,
    /// Could not be decided (no published addresses offline, DNS failed).
    Unverifiable,
}

/// A [`Check`] with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The outcome.
    pub check: Check,
    /// Why, in one sentence.
    pub reason: String,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The inputs read (set by the caller).
    pub inputs: Vec<Input>,
    /// The robots.txt versions judged against (set by the caller).
    pub robots_txt: Vec<RobotsTxtVersion>,
    /// Line counts.
    pub lines: Lines,
    /// Lines not understood, by reason, with the first line numbers.
    pub malformed: Vec<MalformedCount>,
    /// First and last request analysed.
    pub period: Option<Period>,
    /// Site-level figures.
    pub site: Site,
    /// Requests per hour and class.
    pub hourly: Vec<Hour>,
    /// Declared robots, keyed by name.
    pub robots: BTreeMap<String, Robot>,
    /// Robots with a browser's User-Agent (or none).
    pub undeclared_bots: ClientList,
    /// Clients probing for weak spots.
    pub scanners: ClientList,
    /// Uptime and performance monitors.
    pub monitors: ClientList,
    /// Clients claiming a robot from an address that is not the robot's.
    pub spoofed: ClientList,
}

/// One input (file or stdin).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Input {
    /// Path, or `-` for stdin.
    pub name: String,
    /// Bytes read (after decompression).
    pub bytes: u64,
    /// Lines read.
    pub lines: u64,
    /// The error that ended reading early (the lines before it count).
    pub error: Option<String>,
}

/// One robots.txt version.
#[derive(Debug, Clone, Serialize)]
pub struct RobotsTxtVersion {
    /// Its file.
    pub file: String,
    /// In force from (RFC 3339), or `null`: from the beginning.
    pub from: Option<String>,
}

/// Line counts.
#[derive(Debug, Clone, Serialize)]
pub struct Lines {
    /// Non-blank lines read.
    pub total: u64,
    /// Lines that gave a record.
    pub parsed: u64,
    /// Lines not understood (truncated records are also parsed).
    pub malformed: u64,
    /// Records outside `--since`/`--until`.
    pub out_of_window: u64,
    /// Records analysed.
    pub analyzed: u64,
}

/// Malformed lines of one reason.
#[derive(Debug, Clone, Serialize)]
pub struct MalformedCount {
    /// Stable reason name (`bad-time` …).
    pub reason: &'static str,
    /// Lines.
    pub count: u64,
    /// The first line numbers (per input when several inputs).
    pub sample_lines: Vec<u64>,
}

/// A time span.
#[derive(Debug, Clone, Serialize)]
pub struct Period {
    /// RFC 3339.
    pub first: String,
    /// RFC 3339.
    pub last: String,
}

/// Requests, bytes and clients of one class.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ClassTotals {
    /// Distinct clients (IP + User-Agent).
    pub clients: u64,
    /// Requests.
    pub requests: u64,
    /// Bytes.
    pub bytes: u64,
}

/// Site-level figures.
#[derive(Debug, Clone, Serialize)]
pub struct Site {
    /// Requests analysed.
    pub requests: u64,
    /// Bytes served.
    pub bytes: u64,
    /// Distinct clients (IP + User-Agent).
    pub clients: u64,
    /// Distinct addresses.
    pub unique_ips: u64,
    /// Requests by robots of any class.
    pub robot_requests: u64,
    /// Bytes to robots of any class.
    pub robot_bytes: u64,
    /// robot_requests / requests.
    pub robot_request_share: f64,
    /// robot_bytes / bytes.
    pub robot_byte_share: f64,
    /// Per class (`human`, `declared_bot`, `undeclared_bot`, `scanner`, `monitor`).
    pub classes: BTreeMap<&'static str, ClassTotals>,
    /// Robot requests robots.txt disallowed.
    pub disallowed_requests: u64,
}

/// One hour.
#[derive(Debug, Clone, Serialize)]
pub struct Hour {
    /// Start of the hour, RFC 3339.
    pub hour: String,
    /// All requests.
    pub requests: u64,
    /// Requests by class.
    pub human: u64,
    /// Requests by class.
    pub declared_bot: u64,
    /// Requests by class.
    pub undeclared_bot: u64,
    /// Requests by class.
    pub scanner: u64,
    /// Requests by class.
    pub monitor: u64,
}

/// Clients and addresses behind one verification outcome.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CheckCount {
    /// Distinct addresses.
    pub ips: u64,
    /// Their requests.
    pub requests: u64,
}

/// Verification counts of one robot.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Verification {
    /// The robot's own addresses.
    pub verified: CheckCount,
    /// Addresses that are not the robot's.
    pub spoofed: CheckCount,
    /// Addresses that could not be decided.
    pub unverifiable: CheckCount,
    /// Not checked (the robot is not in the registry).
    pub unchecked: CheckCount,
}

/// The robot's pace and its Crawl-delay.
#[derive(Debug, Clone, Serialize)]
pub struct Pace {
    /// Median seconds between consecutive requests (all its addresses
    /// except spoofed ones).
    pub median_gap_s: Option<f64>,
    /// Most requests in one minute.
    pub peak_requests_per_minute: u64,
    /// The Crawl-delay in force for the robot at its last request.
    pub crawl_delay_s: Option<f64>,
    /// Requests that came sooner after the previous one than the
    /// Crawl-delay in force allowed.
    pub crawl_delay_breaches: u64,
}

/// A disallowed request.
#[derive(Debug, Clone, Serialize)]
pub struct Disallowed {
    /// RFC 3339.
    pub time: String,
    /// The client address.
    pub ip: IpAddr,
    /// The request target.
    pub path: String,
}

/// A path and its requests.
#[derive(Debug, Clone, Serialize)]
pub struct PathCount {
    /// Request target.
    pub path: String,
    /// Requests.
    pub requests: u64,
}

/// Everything about one declared robot (BotSeer 3.2).
#[derive(Debug, Clone, Serialize)]
pub struct Robot {
    /// Registry category (`search`, `ai`, `seo` …).
    pub category: Option<String>,
    /// In the registry.
    pub registered: bool,
    /// Requests.
    pub requests: u64,
    /// Sessions (30 minutes of inactivity end one), summed over clients.
    pub sessions: u64,
    /// Distinct addresses.
    pub unique_ips: u64,
    /// Distinct User-Agent strings.
    pub unique_uas: u64,
    /// Bytes served.
    pub bytes: u64,
    /// robots.txt fetches.
    pub robots_txt_fetches: u64,
    /// Requests judged against robots.txt (a version was in force).
    pub judged_requests: u64,
    /// Requests its robots.txt group disallowed.
    pub disallowed_requests: u64,
    /// disallowed / judged.
    pub disallowed_share: f64,
    /// Up to 5 disallowed requests.
    pub disallowed_examples: Vec<Disallowed>,
    /// Pace and Crawl-delay.
    pub pace: Pace,
    /// Responses by class (`2xx` …, `other`).
    pub status: BTreeMap<&'static str, u64>,
    /// RFC 3339.
    pub first_seen: String,
    /// RFC 3339.
    pub last_seen: String,
    /// Most requested paths.
    pub top_paths: Vec<PathCount>,
    /// Some rare paths were dropped while counting (very many distinct
    /// paths): the counts are lower bounds.
    pub top_paths_approximate: bool,
    /// Verification of its addresses.
    pub verification: Verification,
    /// Addresses that claimed it falsely, most requests first (at most
    /// [`SPOOFED_IPS`]).
    pub spoofed_ips: Vec<IpAddr>,
    /// Clients of each class (a declared robot can be a scanner or a
    /// monitor).
    pub classes: BTreeMap<&'static str, u64>,
}

/// One reason, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct ReasonOut {
    /// Stable code.
    pub code: &'static str,
    /// The evidence.
    pub detail: String,
}

/// One client in a list.
#[derive(Debug, Clone, Serialize)]
pub struct ClientEntry {
    /// Address.
    pub ip: IpAddr,
    /// User-Agent, if logged.
    pub user_agent: Option<String>,
    /// The robot the User-Agent declares.
    pub robot: Option<String>,
    /// Class.
    pub class: &'static str,
    /// Requests.
    pub requests: u64,
    /// Sessions.
    pub sessions: u64,
    /// Pages.
    pub pages: u64,
    /// Bytes.
    pub bytes: u64,
    /// RFC 3339.
    pub first_seen: String,
    /// RFC 3339.
    pub last_seen: String,
    /// Why it is in the list.
    pub reasons: Vec<ReasonOut>,
    /// Sample requests (probes, disallowed paths).
    pub samples: Vec<String>,
    /// Verification reason (spoofed list).
    pub verification: Option<String>,
}

/// A list of clients, largest first.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClientList {
    /// All clients of the list.
    pub total: u64,
    /// Their requests.
    pub requests: u64,
    /// The first [`LIST_LIMIT`] by requests.
    pub clients: Vec<ClientEntry>,
}

#[derive(Default)]
struct RobotAcc {
    category: Option<String>,
    registered: bool,
    token: Option<String>,
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
    verification: Verification,
    ips_by_check: [Set<IpAddr>; 4],
    spoofed_ips: Map<IpAddr, u64>,
    seconds: Seconds,
    classes: [u64; 5],
}

const STATUS_NAMES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "other"];

fn pace(seconds: &mut Seconds, policy: &dyn Policy, token: Option<&str>) -> Pace {
    let s = seconds.sorted();
    let mut breaches = 0u64;
    let mut gaps: Vec<i64> = Vec::new();
    let mut zero_gaps = 0u64;
    let mut peak = 0u64;
    let mut minute = (i64::MIN, 0u64);
    for (i, &(t, n)) in s.iter().enumerate() {
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
            let gap = t - s[i - 1].0;
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
    let crawl_delay_s = s.last().and_then(|(t, _)| policy.crawl_delay(token, *t));
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

/// Builds the report. `checks[&i]` is the verification of client `i` (for
/// clients that claim a registered robot). With `threads` above one, the
/// distinct addresses are counted on a second thread meanwhile.
pub fn build<S: BuildHasher>(
    a: &mut Analysis,
    checks: &std::collections::HashMap<usize, Checked, S>,
    policy: &dyn Policy,
    threads: usize,
) -> Report {
    // Robots by agent: each client adds to its agent's robot without a
    // lookup by name.
    let mut robot_ix: Map<&str, usize> = Map::default();
    let mut accs: Vec<(String, RobotAcc)> = Vec::new();
    let agent_robot: Vec<Option<usize>> = a
        .agents
        .iter()
        .map(|(_, agent)| {
            let name = agent.robot.as_deref()?;
            Some(*robot_ix.entry(name).or_insert_with(|| {
                accs.push((
                    name.to_owned(),
                    RobotAcc {
                        category: agent.category.clone(),
                        registered: agent.registered,
                        token: agent.token.clone(),
                        first: i64::MAX,
                        last: i64::MIN,
                        ..RobotAcc::default()
                    },
                ));
                accs.len() - 1
            }))
        })
        .collect();
    drop(robot_ix);
    let mut class_totals: [ClassTotals; 5] = Default::default();
    let mut hourly: Map<i64, [u64; 5]> = Map::default();
    let mut lists: [Vec<usize>; 4] = Default::default();

    // Distinct addresses by sorting (a hash set's random inserts would miss
    // the cache at every client), on another core while the loop runs.
    let mut v4: Vec<u32> = Vec::with_capacity(a.folded.clients.len());
    let mut v6: Vec<u128> = Vec::new();
    for c in a.folded.clients.iter() {
        match c.ip {
            IpAddr::V4(x) => v4.push(x.to_bits()),
            IpAddr::V6(x) => v6.push(x.to_bits()),
        }
    }
    let mut count_distinct = move || {
        v4.sort_unstable();
        v4.dedup();
        v6.sort_unstable();
        v6.dedup();
        (v4.len() + v6.len()) as u64
    };
    let distinct = if threads > 1 {
        Distinct::Spawned(std::thread::spawn(count_distinct))
    } else {
        Distinct::Counted(count_distinct())
    };
    let (mut requests, mut bytes, mut robot_requests, mut robot_bytes, mut disallowed) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for i in 0..a.folded.clients.len() {
        let c = &a.folded.clients[i];
        let class = a.classes[i];
        requests += c.requests;
        bytes += c.bytes;
        first = first.min(c.first());
        last = last.max(c.last());
        let ci = class.index();
        let t = &mut class_totals[ci];
        t.clients += 1;
        t.requests += c.requests;
        t.bytes += c.bytes;
        c.each_hour(|h, n| hourly.entry(h).or_default()[ci] += u64::from(n));
        if class.is_robot() {
            robot_requests += c.requests;
            robot_bytes += c.bytes;
            disallowed += u64::from(c.disallowed);
        }
        match class {
            Class::UndeclaredBot => lists[0].push(i),
            Class::Scanner => lists[1].push(i),
            Class::Monitor => lists[2].push(i),
            _ => {}
        }
        let check = checks.get(&i);
        if check.is_some_and(|k| k.check == Check::Spoofed) {
            lists[3].push(i);
        }
        let Some(ri) = agent_robot[c.agent()] else {
            continue;
        };
        let r = &mut accs[ri].1;
        r.requests += c.requests;
        r.sessions += c.sessions().len() as u64;
        r.ips.insert(c.ip);
        r.uas.insert(c.agent());
        r.bytes += c.bytes;
        r.robots_txt += u64::from(c.robots_txt);
        r.judged += u64::from(c.judged);
        r.disallowed += u64::from(c.disallowed);
        for (k, n) in c.status.iter().enumerate() {
            r.status[k] += u64::from(*n);
        }
        r.first = r.first.min(c.first());
        r.last = r.last.max(c.last());
        r.classes[ci] += 1;
        for e in a.disallowed_examples(i) {
            r.examples.push((e.time, c.ip, e.target.clone()));
        }
        let k = match check.map(|k| k.check) {
            Some(Check::Verified) => 0,
            Some(Check::Spoofed) => 1,
            Some(Check::Unverifiable) => 2,
            None => 3,
        };
        let counts = [
            &mut r.verification.verified,
            &mut r.verification.spoofed,
            &mut r.verification.unverifiable,
            &mut r.verification.unchecked,
        ];
        counts[k].requests += c.requests;
        if r.ips_by_check[k].insert(c.ip) {
            counts[k].ips += 1;
        }
        if k == 1 {
            *r.spoofed_ips.entry(c.ip).or_default() += c.requests;
        }
        if k != 1
            && let Some(s) = a.take_seconds(i)
        {
            r.seconds.extend_from(&s);
        }
    }
    let unique_ips = match distinct {
        Distinct::Spawned(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
        Distinct::Counted(n) => n,
    };
    let classes: BTreeMap<&'static str, ClassTotals> = Class::ALL
        .iter()
        .zip(class_totals)
        .map(|(c, t)| (c.as_str(), t))
        .collect();
    let mut hourly: Vec<(i64, [u64; 5])> = hourly.into_iter().collect();
    hourly.sort_unstable_by_key(|(h, _)| *h);
    let robots: BTreeMap<String, RobotAcc> = accs.into_iter().collect();
    let a = &*a;
    let entry = |i: usize, a: &Analysis| -> ClientEntry {
        let c = &a.folded.clients[i];
        let (ua, agent) = a.agent_of(c);
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
            robot: agent.robot.clone(),
            class: class.as_str(),
            requests: c.requests,
            sessions: c.sessions().len() as u64,
            pages: u64::from(c.pages),
            bytes: c.bytes,
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
        }
    };
    let [undeclared, scanners, monitors, spoofed] = lists.map(|mut l| {
        // Most requests first, then by address and User-Agent: a total
        // order (a client is an address and a User-Agent), so the listed
        // clients do not depend on the input order.
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
            clients: l.iter().map(|i| entry(*i, a)).collect(),
        }
    });
    let robots: BTreeMap<String, Robot> = robots
        .into_iter()
        .map(|(name, mut r)| {
            r.examples.sort();
            let top = a.robot_paths(&name);
            let robot = Robot {
                category: r.category,
                registered: r.registered,
                requests: r.requests,
                sessions: r.sessions,
                unique_ips: r.ips.len() as u64,
                unique_uas: r.uas.len() as u64,
                bytes: r.bytes,
                robots_txt_fetches: r.robots_txt,
                judged_requests: r.judged,
                disallowed_requests: r.disallowed,
                disallowed_share: ratio(r.disallowed, r.judged),
                disallowed_examples: r
                    .examples
                    .iter()
                    .take(5)
                    .map(|(t, ip, p)| Disallowed {
                        time: format_rfc3339(*t),
                        ip: *ip,
                        path: p.clone(),
                    })
                    .collect(),
                pace: pace(&mut r.seconds, policy, r.token.as_deref()),
                status: STATUS_NAMES
                    .iter()
                    .zip(r.status)
                    .filter(|(_, n)| *n > 0)
                    .map(|(k, n)| (*k, n))
                    .collect(),
                first_seen: format_rfc3339(r.first),
                last_seen: format_rfc3339(r.last),
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
                top_paths_approximate: top.is_some_and(|t| t.approximate),
                verification: r.verification,
                spoofed_ips: {
                    // Most requests first, then by address: the same for
                    // any input order.
                    let mut v: Vec<(u64, IpAddr)> =
                        r.spoofed_ips.iter().map(|(ip, n)| (*n, *ip)).collect();
                    v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                    v.into_iter().take(SPOOFED_IPS).map(|(_, ip)| ip).collect()
                },
                classes: Class::ALL
                    .iter()
                    .zip(r.classes)
                    .filter(|(_, n)| *n > 0)
                    .map(|(c, n)| (c.as_str(), n))
                    .collect(),
            };
            (name, robot)
        })
        .collect();
    let malformed: Vec<MalformedCount> = a
        .folded
        .malformed
        .reasons()
        .map(|(r, n, s)| MalformedCount {
            reason: r.as_str(),
            count: n,
            sample_lines: s.to_vec(),
        })
        .collect();
    let not_understood = a.folded.malformed.total()
        - a.folded
            .malformed
            .reasons()
            .filter(|(r, _, _)| *r == crate::Malformed::Truncated)
            .map(|(_, n, _)| n)
            .sum::<u64>();
    Report {
        schema: SCHEMA,
        inputs: Vec::new(),
        robots_txt: Vec::new(),
        lines: Lines {
            total: a.folded.lines,
            parsed: a.folded.records,
            malformed: not_understood,
            out_of_window: a.folded.out_of_window,
            analyzed: a.folded.records - a.folded.out_of_window,
        },
        malformed,
        period: (first <= last).then(|| Period {
            first: format_rfc3339(first),
            last: format_rfc3339(last),
        }),
        site: Site {
            requests,
            bytes,
            clients: a.folded.clients.len() as u64,
            unique_ips,
            robot_requests,
            robot_bytes,
            robot_request_share: ratio(robot_requests, requests),
            robot_byte_share: ratio(robot_bytes, bytes),
            classes,
            disallowed_requests: disallowed,
        },
        hourly: hourly
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
            .collect(),
        robots,
        undeclared_bots: undeclared,
        scanners,
        monitors,
        spoofed,
    }
}
