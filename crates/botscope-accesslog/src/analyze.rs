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

use crate::MalformedStats;

/// Inactivity that ends a session: 30 minutes.
pub const SESSION_GAP: i64 = 30 * 60;

/// Sample paths kept per client for reasons (probes, disallowed requests).
pub const CLIENT_SAMPLES: usize = 5;

/// Distinct paths counted exactly per robot before the counter becomes
/// approximate (the rarest paths are dropped).
pub const TOP_PATHS_CAP: usize = 4096;

/// Distinct clients (IP + User-Agent) tracked by default; the requests of
/// clients past them count for the site (requests, bytes, paths, days)
/// but not per client, and the report says how many.
pub const MAX_CLIENTS: usize = 4_000_000;

/// Robots whose paths are counted, besides every registered one: the
/// report keeps [`crate::ROBOTS_CAP`] robots, and a made-up robot name per
/// line cannot multiply the counters.
pub const ROBOT_PATH_COUNTERS: usize = 2 * crate::ROBOTS_CAP;

/// Distinct virtual hosts counted; the rest count under [`OTHER_VHOSTS`].
pub const MAX_VHOSTS: usize = 1000;

/// The virtual host the hosts beyond [`MAX_VHOSTS`] count under.
pub const OTHER_VHOSTS: &str = "(other hosts)";

/// Longest request target kept in samples and top-path tables.
const MAX_SAMPLE_PATH: usize = 256;

pub(crate) type Hasher = foldhash::fast::RandomState;
pub(crate) type Map<K, V> = HashMap<K, V, Hasher>;
pub(crate) type Set<T> = std::collections::HashSet<T, Hasher>;

mod agent;
mod classify;
mod client;
mod fold;
mod samples;
mod signed;
#[cfg(test)]
mod tests;

pub use agent::{Agent, Groups, Identify, NoPolicy, Policy, Window};
pub use classify::{Class, DISOBEDIENT_REQUESTS, Reason, classify, is_disobedient};
pub use client::{Client, Clients, History, Span};
pub use fold::{Analyzer, CLOCK_SKEW, LOOKAHEAD, PLAUSIBLE_SINCE, Partial};
pub use samples::{Example, Second, Seconds, TopPaths};
pub use signed::{
    AgentTally, ClientSignatures, MAX_SIGNATURE_AGENTS, NO_AGENT, OTHER_AGENTS, SignatureCheck,
    SignatureCounts, SignatureOutcome, SignatureSeen,
};

use client::{Aside, Hours, SEG_BITS, Spans, hour_of};
use samples::{clip, keep_first};

/// Every client, classified, with what the report needs.
#[derive(Debug)]
pub struct Analysis {
    /// Distinct User-Agents (`None`: none logged) and what they say.
    pub agents: Vec<(Option<String>, Agent)>,
    /// Class of each client (same order as `folded.clients`); the reasons
    /// are rebuilt on demand ([`Analysis::reasons`]) so that memory holds
    /// one byte per client.
    pub classes: Vec<Class>,
    /// What the records folded into.
    pub folded: Folded,
}

/// What records fold into: the same in a thread's [`Partial`] and in the
/// whole [`Analysis`].
#[derive(Debug, Default)]
pub struct Folded {
    /// Distinct clients.
    pub clients: Clients,
    probe_samples: Map<u32, Vec<Example>>,
    disallowed_samples: Map<u32, Vec<Example>>,
    seconds: Map<u32, Seconds>,
    /// Per client with requests for closed paths: how the server answered
    /// them, by [`crate::answer_of`].
    closed_answers: Map<u32, [u32; crate::ANSWERS.len()]>,
    robot_paths: Map<Box<str>, TopPaths>,
    /// Signed requests per client.
    signed: Map<u32, ClientSignatures>,
    /// Signed requests per signature agent (tracked client or not).
    signature_agents: signed::Agents,
    /// Every request's path: the site's top paths.
    site_paths: TopPaths,
    /// Paths answered 404 Not Found.
    not_found: TopPaths,
    /// Per day (days since the epoch, UTC): requests, bytes, 404s.
    days: Map<i64, [u64; 3]>,
    /// Per virtual host (when the format logs one): requests, bytes,
    /// declared robots' requests and bytes, 404s.
    vhosts: Map<Box<str>, [u64; 5]>,
    /// Some robot had no path counter of its own (past
    /// [`ROBOT_PATH_COUNTERS`]).
    pub robot_paths_dropped: bool,
    /// Requests of clients past the cap on distinct clients.
    pub untracked: Untracked,
    /// Malformed lines by reason.
    pub malformed: MalformedStats,
    /// Lines read (records + malformed lines, minus blank lines).
    pub lines: u64,
    /// Lines that gave a record (including truncated ones).
    pub records: u64,
    /// Records outside the window.
    pub out_of_window: u64,
}

/// Requests that count for the site but belong to no tracked client.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Untracked {
    /// Requests.
    pub requests: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Untracked {
    pub(crate) fn add(&mut self, requests: u64, bytes: u64) {
        self.requests += requests;
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

impl Analysis {
    /// The User-Agent and agent of a client.
    pub fn agent_of(&self, c: &Client) -> (Option<&str>, &Agent) {
        let (ua, a) = &self.agents[c.agent as usize];
        (ua.as_deref(), a)
    }

    /// The class and reasons of client `i`.
    pub fn reasons(&self, i: usize) -> (Class, Vec<Reason>) {
        let c = self.folded.clients.history(i);
        let (ua, agent) = &self.agents[c.agent as usize];
        classify(c, agent, ua.is_none())
    }

    /// Probe samples of client `i`.
    pub fn probe_samples(&self, i: usize) -> &[Example] {
        self.folded
            .probe_samples
            .get(&(i as u32))
            .map_or(&[], Vec::as_slice)
    }

    /// Disallowed-request examples of client `i`.
    pub fn disallowed_examples(&self, i: usize) -> &[Example] {
        self.folded
            .disallowed_samples
            .get(&(i as u32))
            .map_or(&[], Vec::as_slice)
    }

    /// How the server answered client `i`'s requests for closed paths.
    pub fn closed_answers(&self, i: usize) -> Option<&[u32; crate::ANSWERS.len()]> {
        self.folded.closed_answers.get(&(i as u32))
    }

    /// Request seconds of client `i` (declared robots only).
    pub fn take_seconds(&mut self, i: usize) -> Option<Seconds> {
        self.folded.seconds.remove(&(i as u32))
    }

    /// The signed requests of client `i`, if it sent any.
    pub fn signed(&self, i: usize) -> Option<&ClientSignatures> {
        u32::try_from(i)
            .ok()
            .and_then(|i| self.folded.signed.get(&i))
    }

    /// Signed requests by signature agent (URL, [`NO_AGENT`] or
    /// [`OTHER_AGENTS`]), in no particular order.
    pub fn signature_agents(&self) -> impl Iterator<Item = (&str, &AgentTally)> + '_ {
        self.folded
            .signature_agents
            .by_agent
            .iter()
            .map(|(a, t)| (&**a, t))
    }

    /// Path counts of a robot.
    pub fn robot_paths(&self, robot: &str) -> Option<&TopPaths> {
        self.folded.robot_paths.get(robot)
    }

    /// Path counts of the whole site.
    pub fn site_paths(&self) -> &TopPaths {
        &self.folded.site_paths
    }

    /// Counts of the paths answered 404 Not Found.
    pub fn not_found(&self) -> &TopPaths {
        &self.folded.not_found
    }

    /// Per day (days since the epoch, UTC): requests, bytes, 404s.
    pub fn days(&self) -> impl Iterator<Item = (i64, [u64; 3])> + '_ {
        self.folded.days.iter().map(|(d, n)| (*d, *n))
    }

    /// Per virtual host: requests, bytes, declared robots' requests and
    /// bytes, 404s. Empty when the log format has no virtual host.
    pub fn vhosts(&self) -> impl Iterator<Item = (&str, [u64; 5])> + '_ {
        self.folded.vhosts.iter().map(|(v, n)| (&**v, *n))
    }
}
