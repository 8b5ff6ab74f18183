//! The report of `botscope logs analyze`: per robot (BotSeer 3.2), per
//! site, per hour, and the lists of undeclared robots, scanners, monitors
//! and spoofers with their reasons. Field names are a stable contract,
//! documented in docs/log-analysis.md (schema `botscope.logs/1`).

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::Serialize;

mod build;

pub use build::build;

/// The schema name and version written into every JSON report.
pub const SCHEMA: &str = "botscope.logs/1";

/// Clients shown per list (undeclared bots, scanners …); `total` counts all.
pub const LIST_LIMIT: usize = 500;

/// Top paths shown per robot.
pub const TOP_PATHS: usize = 10;

/// Top paths and 404 paths shown for the whole site.
pub const SITE_TOP_PATHS: usize = 25;

/// Declared robots given their own entry; the rest are counted together
/// in [`Report::robots_omitted`].
pub const ROBOTS_CAP: usize = 1000;

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
    /// The robots' sessions by the directive in force when each began,
    /// all listed robots together (Kim et al., 2025: compliance by
    /// strictness); empty without a robots.txt.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compliance: Vec<crate::Under>,
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
    /// Per day (UTC): requests, bytes, visitors, 404s, requests per class.
    pub daily: Vec<Day>,
    /// The site's most requested paths.
    pub top_paths: Vec<PathCount>,
    /// Paths were dropped while counting: `top_paths` counts are lower bounds.
    pub top_paths_approximate: bool,
    /// The paths most answered 404 Not Found.
    pub not_found: Vec<PathCount>,
    /// `not_found` counts are lower bounds.
    pub not_found_approximate: bool,
    /// Per virtual host, most requests first; empty when the log format
    /// has no virtual host (`%v`).
    pub vhosts: Vec<Vhost>,
    /// Declared robots, keyed by name: every registered robot, then the
    /// unregistered ones with the most requests, [`ROBOTS_CAP`] in all.
    pub robots: BTreeMap<String, Robot>,
    /// The declared robots past [`ROBOTS_CAP`], counted together.
    pub robots_omitted: OmittedRobots,
    /// Requests of clients past the cap on distinct clients: counted in
    /// the site's requests, bytes, days and paths, but in no client,
    /// class or list (zero unless the log has more distinct clients than
    /// the analysis tracks).
    pub untracked: crate::analyze::Untracked,
    /// Robots with a browser's User-Agent (or none).
    pub undeclared_bots: ClientList,
    /// Clients probing for weak spots.
    pub scanners: ClientList,
    /// Uptime and performance monitors.
    pub monitors: ClientList,
    /// Clients claiming a robot from an address that is not the robot's.
    pub spoofed: ClientList,
    /// Robots whose address was not verified that fetched at least
    /// [`crate::DISOBEDIENT_REQUESTS`] paths robots.txt closed to them
    /// (empty without a robots.txt): the `disobedient-bots` list.
    pub disobedient: ClientList,
    /// Signed requests by signature agent, most requests first (empty
    /// when the log format has no signature headers or none was signed).
    pub signature_agents: Vec<SignatureAgent>,
}

impl Report {
    /// Sets the inputs read and names each malformed sample's input: the
    /// analysis numbers lines across all inputs, one after the other
    /// (`lines` of each input, in order).
    pub fn set_inputs(&mut self, inputs: Vec<Input>) {
        for m in &mut self.malformed {
            m.samples = m
                .sample_lines
                .iter()
                .map(|&n| {
                    let mut before = 0u64;
                    for i in &inputs {
                        if n <= before + i.lines {
                            return LineAt {
                                input: i.name.clone(),
                                line: n - before,
                            };
                        }
                        before += i.lines;
                    }
                    LineAt {
                        input: inputs.last().map(|i| i.name.clone()).unwrap_or_default(),
                        line: n,
                    }
                })
                .collect();
            m.sample_lines = m.samples.iter().map(|s| s.line).collect();
        }
        self.inputs = inputs;
    }
}

/// Declared robots that have no entry of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OmittedRobots {
    /// How many robots.
    pub robots: u64,
    /// Their clients.
    pub clients: u64,
    /// Their requests.
    pub requests: u64,
    /// Their bytes.
    pub bytes: u64,
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

/// One day (UTC).
#[derive(Debug, Clone, Serialize)]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Requests.
    pub requests: u64,
    /// Response bytes.
    pub bytes: u64,
    /// Clients (address and User-Agent) with a request that day.
    pub visitors: u64,
    /// Requests answered 404 Not Found.
    pub not_found: u64,
    /// Requests of humans.
    pub human: u64,
    /// Requests of declared robots.
    pub declared_bot: u64,
    /// Requests of undeclared robots.
    pub undeclared_bot: u64,
    /// Requests of scanners.
    pub scanner: u64,
    /// Requests of monitors.
    pub monitor: u64,
}

/// One virtual host.
#[derive(Debug, Clone, Serialize)]
pub struct Vhost {
    /// The host as logged (with `:port` when the format has it); hosts
    /// beyond the first thousand count under `(other hosts)`.
    pub vhost: String,
    /// Requests.
    pub requests: u64,
    /// Response bytes.
    pub bytes: u64,
    /// Requests of declared robots.
    pub robot_requests: u64,
    /// Response bytes to declared robots.
    pub robot_bytes: u64,
    /// Requests answered 404 Not Found.
    pub not_found: u64,
}

/// Where a sample line is: its input and its line number there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineAt {
    /// The input's name (`-` for standard input).
    pub input: String,
    /// The line number in that input (1-based).
    pub line: u64,
}

/// Malformed lines of one reason.
#[derive(Debug, Clone, Serialize)]
pub struct MalformedCount {
    /// Stable reason name (`bad-time` …).
    pub reason: &'static str,
    /// Lines.
    pub count: u64,
    /// The first line numbers, each in its input.
    pub sample_lines: Vec<u64>,
    /// The same lines with their inputs.
    pub samples: Vec<LineAt>,
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

/// What the addresses of one standing did under a robot's name: the
/// robot's own (verified, or not refuted), or its impostors'.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
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
    /// Responses by class (`2xx` …, `other`).
    pub status: BTreeMap<&'static str, u64>,
    /// RFC 3339; empty when there was no request.
    pub first_seen: String,
    /// RFC 3339; empty when there was no request.
    pub last_seen: String,
    /// Clients of each class (a declared robot can be a scanner or a
    /// monitor).
    pub classes: BTreeMap<&'static str, u64>,
}

/// Everything about one declared robot (BotSeer 3.2).
#[derive(Debug, Clone, Serialize)]
pub struct Robot {
    /// Registry category (`search`, `ai`, `seo` …).
    pub category: Option<String>,
    /// The kind of client its User-Agent names (`crawler`,
    /// `feed-reader`, `preview`, `library`, `monitor`, `scanner`, …: the
    /// first User-Agent seen declaring it).
    pub client_type: &'static str,
    /// In the registry.
    pub registered: bool,
    /// What its own addresses did: every address that claims it except
    /// those verification refuted (verified, undecided and, for a robot
    /// in no registry, unchecked ones). Impostors are in
    /// [`Robot::impostors`], never here.
    #[serde(flatten)]
    pub figures: Figures,
    /// Pace and Crawl-delay.
    pub pace: Pace,
    /// Most requested paths under its name (impostors' requests
    /// included: paths are counted before addresses are checked).
    pub top_paths: Vec<PathCount>,
    /// Some rare paths were dropped while counting (very many distinct
    /// paths): the counts are lower bounds.
    pub top_paths_approximate: bool,
    /// Verification of its addresses.
    pub verification: Verification,
    /// Addresses that claimed it falsely, most requests first (at most
    /// [`SPOOFED_IPS`]).
    pub spoofed_ips: Vec<IpAddr>,
    /// What the addresses that claimed it falsely did, when there were
    /// any: a row of their own, apart from the robot's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impostors: Option<Figures>,
    /// Its signed requests (HTTP Message Signatures), when it sent any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signatures: Option<crate::SignatureCounts>,
    /// Its compliance with robots.txt per directive and per version (Kim
    /// et al., 2025), from its verified and unchecked addresses (spoofed
    /// ones left out); only when a robots.txt was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compliance: Option<crate::Compliance>,
    /// Stated versus enforced: its requests for closed paths from its
    /// verified addresses, by how the server answered them; only when a
    /// robots.txt was given and such requests were made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<crate::Enforcement>,
}

impl Robot {
    /// Requests under its name: its own and its impostors'.
    pub fn claimed_requests(&self) -> u64 {
        self.figures.requests + self.impostors.as_ref().map_or(0, |f| f.requests)
    }
}

/// One signature agent's requests (Web Bot Auth).
#[derive(Debug, Clone, Serialize)]
pub struct SignatureAgent {
    /// Its URL as the requests named it, [`crate::NO_AGENT`] or
    /// [`crate::OTHER_AGENTS`].
    pub agent: String,
    /// The registered robot that publishes this agent (set by the caller
    /// from the registry), if any.
    pub robot: Option<String>,
    /// Requests signed, verified and invalid.
    #[serde(flatten)]
    pub counts: crate::SignatureCounts,
    /// Requests neither verified nor invalid.
    pub unverified: u64,
    /// Why requests were not verified, with how many each.
    pub reasons: BTreeMap<String, u64>,
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
    /// The kind of client its User-Agent names (`browser`, `crawler`,
    /// `feed-reader`, `preview`, `library`, `os-service`, `media-player`,
    /// `headless`, `monitor`, `scanner`, `unknown`).
    pub client_type: &'static str,
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
    /// Requests robots.txt closed to it (0 without a robots.txt).
    pub disallowed_requests: u64,
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
    /// The AS number that announces the address (null without an
    /// IP-owner database; filled in by the caller).
    pub asn: Option<u32>,
    /// The organisation of that AS.
    pub as_org: Option<String>,
    /// The country the address is placed in (ISO 3166-1 alpha-2).
    pub country: Option<String>,
}

impl ClientEntry {
    /// `AS15169 Google LLC, US`, or what of it is known; `None` when
    /// nothing is.
    pub fn network(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(a) = self.asn {
            parts.push(match &self.as_org {
                Some(o) => format!("AS{a} {o}"),
                None => format!("AS{a}"),
            });
        }
        parts.extend(self.country.clone());
        (!parts.is_empty()).then(|| parts.join(", "))
    }
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
