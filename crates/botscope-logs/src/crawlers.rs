//! What a log says of each declared robot, address by address: the view
//! behind a crawler's page (BotSeer's crawler search). The report keeps
//! totals; this keeps, per robot, the User-Agent strings seen and every
//! address with its verdict, requests, robots.txt fetches and obedience.

use std::collections::BTreeMap;
use std::net::IpAddr;

use botscope_accesslog::Check;
use serde::Serialize;

use crate::Outcome;

/// One address a robot's User-Agent came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AddressSeen {
    /// The address.
    pub ip: IpAddr,
    /// `verified`, `spoofed`, `unverifiable`, or `unchecked` (the robot is
    /// not in the registry).
    pub verdict: &'static str,
    /// Why, in one sentence (empty when unchecked).
    pub reason: String,
    /// Requests.
    pub requests: u64,
    /// Bytes served.
    pub bytes: u64,
    /// robots.txt fetches.
    pub robots_txt: u64,
    /// Requests judged against robots.txt.
    pub judged: u64,
    /// Requests its robots.txt group disallowed.
    pub disallowed: u64,
    /// First request (Unix seconds).
    pub first: i64,
    /// Last request (Unix seconds).
    pub last: i64,
}

impl AddressSeen {
    /// Whether the address fetched what robots.txt disallowed it.
    pub fn disobeyed(&self) -> bool {
        self.disallowed > 0
    }
}

/// Addresses kept per robot (most requests first).
pub const CRAWLER_ADDRESSES: usize = 1000;

/// User-Agent strings kept per robot (most requests first).
pub const CRAWLER_USER_AGENTS: usize = 100;

/// What the log shows of one robot.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CrawlerSeen {
    /// The User-Agent strings, with their requests, most first (at most
    /// [`CRAWLER_USER_AGENTS`]).
    pub user_agents: Vec<(String, u64)>,
    /// Distinct User-Agent strings in all.
    pub user_agents_total: usize,
    /// Its addresses, most requests first (at most [`CRAWLER_ADDRESSES`]).
    pub addresses: Vec<AddressSeen>,
    /// Distinct addresses in all.
    pub addresses_total: usize,
}

impl Outcome {
    /// Per declared robot of the report (by its name), its User-Agent
    /// strings and addresses, the most active first, within
    /// [`CRAWLER_USER_AGENTS`] and [`CRAWLER_ADDRESSES`].
    pub fn crawlers(&self) -> BTreeMap<String, CrawlerSeen> {
        let a = &self.analysis;
        let mut out: BTreeMap<String, CrawlerSeen> = BTreeMap::new();
        let mut uas: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for (i, c) in a.folded.clients.iter().enumerate() {
            let (ua, agent) = a.agent_of(c);
            let Some(robot) = agent.robot.as_deref() else {
                continue;
            };
            if !self.report.robots.contains_key(robot) {
                continue;
            }
            let checked = self.checks.get(&i);
            let (verdict, reason) = match checked {
                Some(k) => (
                    match k.check {
                        Check::Verified => "verified",
                        Check::Spoofed => "spoofed",
                        Check::Unverifiable => "unverifiable",
                    },
                    k.reason.clone(),
                ),
                None => ("unchecked", String::new()),
            };
            if let Some(ua) = ua {
                *uas.entry(robot.to_owned())
                    .or_default()
                    .entry(ua.to_owned())
                    .or_default() += c.requests;
            }
            out.entry(robot.to_owned())
                .or_default()
                .addresses
                .push(AddressSeen {
                    ip: c.ip,
                    verdict,
                    reason,
                    requests: c.requests,
                    bytes: c.bytes,
                    robots_txt: u64::from(c.robots_txt),
                    judged: u64::from(c.judged),
                    disallowed: u64::from(c.disallowed),
                    first: a.folded.clients.history(i).first(),
                    last: c.last(),
                });
        }
        for (robot, seen) in &mut out {
            // One client per address and User-Agent: fold the addresses.
            let mut by_ip: BTreeMap<IpAddr, AddressSeen> = BTreeMap::new();
            for s in seen.addresses.drain(..) {
                match by_ip.get_mut(&s.ip) {
                    Some(t) => {
                        t.requests += s.requests;
                        t.bytes += s.bytes;
                        t.robots_txt += s.robots_txt;
                        t.judged += s.judged;
                        t.disallowed += s.disallowed;
                        t.first = t.first.min(s.first);
                        t.last = t.last.max(s.last);
                        // The worst verdict shows: spoofed over the others.
                        if rank(s.verdict) > rank(t.verdict) {
                            t.verdict = s.verdict;
                            t.reason = s.reason;
                        }
                    }
                    None => {
                        by_ip.insert(s.ip, s);
                    }
                }
            }
            seen.addresses = by_ip.into_values().collect();
            seen.addresses
                .sort_by(|x, y| y.requests.cmp(&x.requests).then(x.ip.cmp(&y.ip)));
            seen.addresses_total = seen.addresses.len();
            seen.addresses.truncate(CRAWLER_ADDRESSES);
            seen.addresses.shrink_to_fit();
            let mut u: Vec<(String, u64)> =
                uas.remove(robot).unwrap_or_default().into_iter().collect();
            u.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            seen.user_agents_total = u.len();
            u.truncate(CRAWLER_USER_AGENTS);
            seen.user_agents = u;
        }
        out
    }
}

fn rank(verdict: &str) -> u8 {
    match verdict {
        "spoofed" => 3,
        "unverifiable" => 2,
        "verified" => 1,
        _ => 0,
    }
}
