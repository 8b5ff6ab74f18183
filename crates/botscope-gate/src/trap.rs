//! Trap links: paths no honest client asks for, and what their hits
//! catch.
//!
//! Every trap lives under one prefix per deployment, derived from the
//! gate's key (a fleet shares it), never a constant a scraper could skip:
//! `/t-<10 base32 letters>/`. The prefix is disallowed in every group of
//! the robots.txt the gate serves, and so is the `robots` kind's path
//! beneath it, which is linked nowhere: a request for it comes from a
//! client that read robots.txt and did the opposite, caught on the first
//! request. Any other path under the prefix is a link the gate did not
//! make (forged, or from an old key): logged, an `anchor` strike at most,
//! never a catch by itself.
//!
//! A catch is held per exact address (an IPv4 /32, an IPv6 /64) for the
//! policy's `hold:`; once `widen:` distinct addresses of one /24 or /48
//! are caught, the catch covers the network. It is never keyed on a
//! User-Agent. Memory is bounded: addresses and networks are kept in
//! two-generation maps of [`MAX_CAUGHT`] entries each, whatever clients send.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use botscope_policy::{TrapKind, Trapped, Traps};
use ring::hmac;
use std::sync::{Mutex, PoisonError};

use crate::recent::Recent;

/// Addresses (and, apart, networks) held at most.
pub const MAX_CAUGHT: usize = 262_144;
/// Distinct anchor links remembered per address within the window.
const STRIKES: usize = 4;

/// Where a deployment's traps live, derived from its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `/t-<10 letters>/`.
    pub prefix: String,
    /// The `robots` kind's path: `<prefix><8 letters>`.
    pub robots: String,
}

fn base32(bytes: &[u8], n: usize) -> String {
    const A: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(n);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 && out.len() < n {
            bits -= 5;
            out.push(char::from(A[((acc >> bits) & 31) as usize]));
        }
    }
    out
}

impl Paths {
    /// The paths of the deployment whose key is `key`.
    pub fn of(key: &[u8]) -> Paths {
        let k = hmac::Key::new(hmac::HMAC_SHA256, key);
        let p = hmac::sign(&k, b"botscope trap prefix 1");
        let r = hmac::sign(&k, b"botscope trap robots 1");
        let prefix = format!("/t-{}/", base32(p.as_ref(), 10));
        let robots = format!("{prefix}{}", base32(r.as_ref(), 8));
        Paths { prefix, robots }
    }

    /// What a request for `path` (path and query, in normal form) is to
    /// the traps: `None` when it is not under the prefix.
    pub fn hit(&self, path: &str) -> Option<Hit> {
        let p = path.split(['?', '#']).next().unwrap_or(path);
        if !p.starts_with(&self.prefix) {
            return None;
        }
        Some(if p == self.robots {
            Hit::Robots
        } else {
            Hit::Unknown
        })
    }

    /// `body` (a robots.txt) with the prefix and the `robots` path
    /// disallowed in every group, right after each group's `User-agent`
    /// lines (a crawler with a group of its own never reads the `*`
    /// group); a file without a group gains a `User-agent: *` one.
    pub fn inject(&self, body: &[u8]) -> Vec<u8> {
        let lines = format!("Disallow: {}\nDisallow: {}\n", self.prefix, self.robots);
        // Lone CRs end lines for crawlers: as newlines here, so that the
        // lines are counted as the parser counts them.
        let body: std::borrow::Cow<'_, [u8]> = if memchr::memchr(b'\r', body).is_some() {
            let mut v = Vec::with_capacity(body.len());
            let mut i = 0;
            while i < body.len() {
                match body[i] {
                    b'\r' if body.get(i + 1) == Some(&b'\n') => {}
                    b'\r' => v.push(b'\n'),
                    b => v.push(b),
                }
                i += 1;
            }
            v.into()
        } else {
            body.into()
        };
        let robots = botscope_robotstxt::Robots::parse(&body);
        // The line after which each group's Disallow lines go.
        let mut after: Vec<u32> = robots
            .groups
            .iter()
            .filter_map(|g| g.user_agents.iter().map(|u| u.line).max())
            .collect();
        after.sort_unstable();
        after.dedup();
        let mut out = Vec::with_capacity(body.len() + lines.len() * (after.len() + 1) + 16);
        if after.is_empty() {
            out.extend_from_slice(b"User-agent: *\n");
            out.extend_from_slice(lines.as_bytes());
            out.extend_from_slice(&body);
            return out;
        }
        let mut next = after.iter().peekable();
        for (i, line) in body.split_inclusive(|&b| b == b'\n').enumerate() {
            out.extend_from_slice(line);
            let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
            if next.peek() == Some(&&n) {
                next.next();
                if !line.ends_with(b"\n") {
                    out.push(b'\n');
                }
                out.extend_from_slice(lines.as_bytes());
            }
        }
        // A crawler no group names reads the `*` group: without one it
        // has no rules, and the trap paths would be open to it.
        if !robots.groups.iter().any(|g| g.is_global()) {
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            out.extend_from_slice(b"\nUser-agent: *\n");
            out.extend_from_slice(lines.as_bytes());
        }
        out
    }
}

/// What a request under the trap prefix is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// The `robots` kind's path.
    Robots,
    /// A link the gate made for a page it served, its signature good.
    Link(Link),
    /// A link of the gate's form whose time is past ([`LINK_TTL`]).
    Expired,
    /// A path the gate never made (forged, or from another key).
    Unknown,
}

/// How long a page's trap links stay good, in seconds.
pub const LINK_TTL: u64 = 86_400;
/// Bytes of a link's token before its encoding: kind, time, network,
/// User-Agent digest, nonce, then the HMAC-SHA256 tag.
const LINK_BYTES: usize = 1 + 4 + 7 + 4 + 4 + 32;
/// Characters of a link's token (URL-safe base64, no padding).
pub const LINK_CHARS: usize = (LINK_BYTES * 8).div_ceil(6);

/// What a good link says of the page it was served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// `script` or `anchor`.
    pub kind: TrapKind,
    /// When the page was served (Unix seconds).
    pub issued: u64,
    /// The network the page went to (/24 or /48).
    pub network: IpAddr,
    /// A digest of the User-Agent it went to.
    pub user_agent: u32,
    /// The page's nonce: two links of one page share it.
    pub nonce: u32,
}

impl Link {
    /// The link's identity among a client's strikes.
    pub fn id(&self) -> u64 {
        (u64::from(self.nonce) << 32) | (self.issued & 0xffff_ffff)
    }
}

fn ua_digest(user_agent: &str) -> u32 {
    let d = ring::digest::digest(&ring::digest::SHA256, user_agent.as_bytes());
    u32::from_be_bytes([d.as_ref()[0], d.as_ref()[1], d.as_ref()[2], d.as_ref()[3]])
}

fn network_bytes(ip: IpAddr) -> [u8; 7] {
    let mut out = [0u8; 7];
    match botscope_policy::network_of(ip).0 {
        IpAddr::V4(v4) => {
            out[0] = 4;
            out[1..4].copy_from_slice(&v4.octets()[..3]);
        }
        IpAddr::V6(v6) => {
            out[0] = 6;
            out[1..7].copy_from_slice(&v6.octets()[..6]);
        }
    }
    out
}

fn network_of_bytes(b: &[u8]) -> Option<IpAddr> {
    match b[0] {
        4 => Some(IpAddr::from([b[1], b[2], b[3], 0])),
        6 => {
            let mut o = [0u8; 16];
            o[..6].copy_from_slice(&b[1..7]);
            Some(IpAddr::from(o))
        }
        _ => None,
    }
}

/// Makes and reads a deployment's signed trap links (no state per link).
pub struct Signer {
    key: hmac::Key,
    paths: Paths,
}

impl Signer {
    /// Under the gate's key.
    pub fn new(key: &[u8]) -> Signer {
        Signer {
            key: hmac::Key::new(hmac::HMAC_SHA256, key),
            paths: Paths::of(key),
        }
    }

    /// The deployment's paths.
    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// A link of `kind` for a page served to `ip` sending `user_agent` at
    /// `now` (Unix seconds), with the page's `nonce`.
    pub fn link(
        &self,
        kind: TrapKind,
        ip: IpAddr,
        user_agent: &str,
        now: u64,
        nonce: u32,
    ) -> String {
        use base64::Engine as _;
        let mut b = Vec::with_capacity(LINK_BYTES);
        b.push(kind as u8);
        b.extend_from_slice(&u32::try_from(now).unwrap_or(u32::MAX).to_be_bytes());
        b.extend_from_slice(&network_bytes(ip));
        b.extend_from_slice(&ua_digest(user_agent).to_be_bytes());
        b.extend_from_slice(&nonce.to_be_bytes());
        let tag = hmac::sign(&self.key, &b);
        b.extend_from_slice(tag.as_ref());
        format!(
            "{}{}",
            self.paths.prefix,
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&b)
        )
    }

    /// What a request for `path` (path and query, in normal form) is to
    /// the traps at `now`: `None` when it is not under the prefix. Cost:
    /// one HMAC of 20 bytes at most, whatever the path.
    pub fn hit(&self, path: &str, now: u64) -> Option<Hit> {
        use base64::Engine as _;
        let hit = self.paths.hit(path)?;
        if hit == Hit::Robots {
            return Some(hit);
        }
        let p = path.split(['?', '#']).next().unwrap_or(path);
        let token = &p[self.paths.prefix.len()..];
        if token.len() != LINK_CHARS {
            return Some(Hit::Unknown);
        }
        let Ok(b) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token) else {
            return Some(Hit::Unknown);
        };
        if b.len() != LINK_BYTES
            || hmac::verify(&self.key, &b[..LINK_BYTES - 32], &b[LINK_BYTES - 32..]).is_err()
        {
            return Some(Hit::Unknown);
        }
        let kind = match b[0] {
            1 => TrapKind::Script,
            2 => TrapKind::Anchor,
            _ => return Some(Hit::Unknown),
        };
        let issued = u64::from(u32::from_be_bytes([b[1], b[2], b[3], b[4]]));
        let Some(network) = network_of_bytes(&b[5..12]) else {
            return Some(Hit::Unknown);
        };
        if issued > now.saturating_add(60) || now.saturating_sub(issued) > LINK_TTL {
            return Some(Hit::Expired);
        }
        Some(Hit::Link(Link {
            kind,
            issued,
            network,
            user_agent: u32::from_be_bytes([b[12], b[13], b[14], b[15]]),
            nonce: u32::from_be_bytes([b[16], b[17], b[18], b[19]]),
        }))
    }

    /// The links a page served to `ip` sending `user_agent` at `now`
    /// carries, for the kinds `t` switches on, as HTML to put before
    /// `</body>`: a `script` link inside `<script type="ignore">`, which
    /// no browser, HTML parser or screen reader follows; an `anchor`
    /// link, `hidden`, `nofollow`, out of the tab order, whose text says
    /// what it is (a person without CSS may read it).
    pub fn snippet(&self, t: &Traps, ip: IpAddr, user_agent: &str, now: u64, nonce: u32) -> String {
        let mut out = String::new();
        if t.has(TrapKind::Script) {
            let l = self.link(TrapKind::Script, ip, user_agent, now, nonce);
            out.push_str(&format!(
                "<script type=\"ignore\"><a href=\"{l}\">{l}</a></script>"
            ));
        }
        if t.has(TrapKind::Anchor) {
            let l = self.link(TrapKind::Anchor, ip, user_agent, now, nonce);
            out.push_str(&format!(
                "<a href=\"{l}\" hidden rel=\"nofollow\" tabindex=\"-1\">A trap for crawlers that ignore robots.txt: do not follow this link.</a>"
            ));
        }
        out
    }
}

/// What a hit came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Caught by this kind.
    Caught(TrapKind),
    /// An anchor strike that does not catch (yet).
    Strike,
    /// A path the gate never made: logged, an anchor strike at most.
    Forged,
    /// A client known by its identity, or a network the owner exempts.
    Exempt,
    /// The kind is not switched on, or a HEAD (counted, never a strike).
    Ignored,
}

impl Outcome {
    /// The event's name (`catch`, `strike`, `forged`, `exempt`, `ignored`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Caught(_) => "catch",
            Outcome::Strike => "strike",
            Outcome::Forged => "forged",
            Outcome::Exempt => "exempt",
            Outcome::Ignored => "ignored",
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Catch {
    /// By kind, the latest catch's time (ms).
    at: [Option<u64>; 3],
    /// Anchor strikes: a link's digest, its time, whether the gate made it.
    strikes: Vec<(u64, u64, bool)>,
}

#[derive(Debug, Clone, Default)]
struct NetCatch {
    /// Distinct caught addresses (their digests), at most `widen`.
    addresses: Vec<u64>,
    /// By kind, when the catch covered the network.
    at: [Option<u64>; 3],
}

/// The catches of one gate (a fleet's are shared through its state).
pub struct Catches {
    inner: Mutex<(Recent<IpAddr, Catch>, Recent<IpAddr, NetCatch>)>,
    /// Catches held (0: a request asks nothing).
    held: AtomicUsize,
    /// Hits by kind, caught by kind, exempt, forged: for `/metrics`.
    pub counts: Counts,
}

/// What `/metrics` shows of the traps.
#[derive(Debug, Default)]
pub struct Counts {
    /// Requests for a trap path, by kind (robots, script, anchor) and
    /// for paths the gate never made.
    pub hits: [AtomicU64; 4],
    /// Catches by kind.
    pub caught: [AtomicU64; 3],
    /// Hits from clients exempt.
    pub exempt: AtomicU64,
    /// Pages served with links, by kind.
    pub served: [AtomicU64; 3],
    /// HTML pages the gate could not put links in (an encoding it does
    /// not rewrite).
    pub not_injected: AtomicU64,
}

impl Default for Catches {
    fn default() -> Catches {
        Catches {
            inner: Mutex::new((Recent::new(MAX_CAUGHT), Recent::new(MAX_CAUGHT))),
            held: AtomicUsize::new(0),
            counts: Counts::default(),
        }
    }
}

/// One catch held, as a blocklist gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The address and its prefix: /32 or /64 for an address caught,
    /// /24 or /48 for a network the catch covers.
    pub network: (IpAddr, u8),
    /// The kinds that caught it ([`TrapKind::bit`]).
    pub kinds: u8,
    /// When its catch ends (ms).
    pub until_ms: u64,
}

impl Listed {
    /// `203.0.113.9`, `2001:db8:1:2::/64`, `192.0.2.0/24`.
    pub fn value(&self) -> String {
        match self.network {
            (ip, 32) if ip.is_ipv4() => ip.to_string(),
            (ip, n) => format!("{ip}/{n}"),
        }
    }

    /// Whether it is one address (CrowdSec's `ip` scope) rather than a
    /// network (`range`).
    pub fn is_address(&self) -> bool {
        matches!(self.network, (ip, 32) if ip.is_ipv4())
    }

    /// The kinds, as written (`robots,script`).
    pub fn kinds(&self) -> String {
        TrapKind::ALL
            .iter()
            .filter(|(_, k)| self.kinds & k.bit() != 0)
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A span of milliseconds as Go writes a duration (`23h59m10s`, `5m0s`,
/// `10s`), rounded up to the second: what `cscli decisions import` reads.
pub fn go_duration(ms: u64) -> String {
    let s = ms.div_ceil(1000).max(1);
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}

/// The key of an address's catch: the address (IPv4), its /64 (IPv6).
pub fn address_key(ip: IpAddr) -> IpAddr {
    match botscope_botid::normalize(ip) {
        IpAddr::V6(v6) => {
            let mut s = v6.segments();
            for x in &mut s[4..] {
                *x = 0;
            }
            IpAddr::from(s)
        }
        v4 => v4,
    }
}

fn digest(ip: IpAddr) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = foldhash::fast::FixedState::with_seed(7).build_hasher();
    std::hash::Hash::hash(&ip, &mut h);
    h.finish()
}

impl Catches {
    /// Records a hit of `kind` from `ip` at `now_ms` (a link's digest
    /// `link` and whether the gate made it, for anchor strikes) and says
    /// what it came to. The caller has ruled out exempt clients, HEAD and
    /// prefetches.
    pub fn record(
        &self,
        ip: IpAddr,
        kind: TrapKind,
        link: u64,
        genuine: bool,
        now_ms: u64,
        t: &Traps,
    ) -> Outcome {
        let addr = address_key(ip);
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut c = g.0.get(&addr).unwrap_or_default();
        let outcome = match kind {
            TrapKind::Robots | TrapKind::Script if genuine => Outcome::Caught(kind),
            _ => {
                // Anchor: a second distinct link within the window catches,
                // if at least one of them was the gate's.
                c.strikes
                    .retain(|s| now_ms.saturating_sub(s.1) <= t.window_ms && s.0 != link);
                c.strikes.push((link, now_ms, genuine));
                if c.strikes.len() > STRIKES {
                    c.strikes.remove(0);
                }
                if c.strikes.len() >= 2 && c.strikes.iter().any(|s| s.2) {
                    c.strikes.clear();
                    Outcome::Caught(TrapKind::Anchor)
                } else if genuine {
                    Outcome::Strike
                } else {
                    Outcome::Forged
                }
            }
        };
        if let Outcome::Caught(k) = outcome {
            let first = c.at.iter().all(Option::is_none);
            c.at[k as usize] = Some(now_ms);
            self.counts.caught[k as usize].fetch_add(1, Ordering::Relaxed);
            if first {
                self.held.fetch_add(1, Ordering::Relaxed);
            }
            if t.widen > 0 {
                let (net, _) = botscope_policy::network_of(ip);
                let mut n = g.1.get(&net).unwrap_or_default();
                let d = digest(addr);
                if !n.addresses.contains(&d) && n.addresses.len() < t.widen as usize {
                    n.addresses.push(d);
                }
                if n.addresses.len() >= t.widen as usize {
                    n.at[k as usize] = Some(now_ms);
                }
                g.1.insert(net, n);
            }
        }
        g.0.insert(addr, c);
        outcome
    }

    /// A catch another gate of the fleet made (`addr`, an address key:
    /// [`address_key`]), at `at_ms`: held as this gate's own.
    pub fn apply(&self, addr: IpAddr, kind: TrapKind, at_ms: u64, t: &Traps) {
        let addr = address_key(addr);
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut c = g.0.get(&addr).unwrap_or_default();
        if c.at.iter().all(Option::is_none) {
            self.held.fetch_add(1, Ordering::Relaxed);
        }
        let slot = &mut c.at[kind as usize];
        *slot = Some(slot.map_or(at_ms, |x| x.max(at_ms)));
        g.0.insert(addr, c);
        if t.widen > 0 {
            let (net, _) = botscope_policy::network_of(addr);
            let mut n = g.1.get(&net).unwrap_or_default();
            let d = digest(addr);
            if !n.addresses.contains(&d) && n.addresses.len() < t.widen as usize {
                n.addresses.push(d);
            }
            if n.addresses.len() >= t.widen as usize {
                let slot = &mut n.at[kind as usize];
                *slot = Some(slot.map_or(at_ms, |x| x.max(at_ms)));
            }
            g.1.insert(net, n);
        }
    }

    /// What a hit of the trap paths from `ip` at `now_ms` comes to,
    /// counted: nothing for a HEAD or a prefetch (`quiet`); exempt for a
    /// client known by its identity (`exempt`) or in a network the policy
    /// exempts; else a catch, a strike or a forged link as the kind says.
    /// The gate and `policy replay` both judge through it.
    pub fn judge(
        &self,
        t: &Traps,
        hit: Hit,
        ip: IpAddr,
        quiet: bool,
        exempt: bool,
        now_ms: u64,
    ) -> Outcome {
        let slot = match hit {
            Hit::Robots => 0,
            Hit::Link(l) => l.kind as usize,
            Hit::Expired | Hit::Unknown => 3,
        };
        self.counts.hits[slot].fetch_add(1, Ordering::Relaxed);
        if quiet {
            return Outcome::Ignored;
        }
        let ip_n = botscope_botid::normalize(ip);
        if exempt || t.exempt.iter().any(|r| r.contains(ip_n)) {
            self.counts.exempt.fetch_add(1, Ordering::Relaxed);
            return Outcome::Exempt;
        }
        match hit {
            Hit::Robots if t.has(TrapKind::Robots) => {
                self.record(ip, TrapKind::Robots, 0, true, now_ms, t)
            }
            Hit::Robots => Outcome::Ignored,
            Hit::Link(l) if t.has(l.kind) => self.record(ip, l.kind, l.id(), true, now_ms, t),
            Hit::Link(_) => Outcome::Ignored,
            // A link the gate never made, or one past its time: an anchor
            // strike at most, never a catch by itself.
            Hit::Expired | Hit::Unknown if t.has(TrapKind::Anchor) => {
                self.record(ip, TrapKind::Anchor, u64::MAX, false, now_ms, t)
            }
            Hit::Expired | Hit::Unknown => Outcome::Forged,
        }
    }

    /// The catches held against `ip` (its address, or its network once
    /// widened) at `now_ms`.
    pub fn trapped(&self, ip: IpAddr, now_ms: u64, t: &Traps) -> Trapped {
        if self.held.load(Ordering::Relaxed) == 0 {
            return Trapped::NONE;
        }
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = Trapped::NONE;
        let mut add = |at: &[Option<u64>; 3]| {
            for (_, k) in TrapKind::ALL {
                if let Some(when) = at[k as usize] {
                    let age = now_ms.saturating_sub(when);
                    if age <= t.hold_ms {
                        out = out.with(k, age);
                    }
                }
            }
        };
        if let Some(c) = g.0.get(&address_key(ip)) {
            add(&c.at);
        }
        if t.widen > 0
            && let Some(n) = g.1.get(&botscope_policy::network_of(ip).0)
        {
            add(&n.at);
        }
        out
    }

    /// Every catch held at `now_ms`: each caught address (an IPv6 /64)
    /// and each network the catch was widened to, with the kinds that
    /// caught it and when its catch ends (ms), addresses first.
    pub fn list(&self, now_ms: u64, t: &Traps) -> Vec<Listed> {
        let g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let live = |at: &[Option<u64>; 3]| {
            let mut kinds = 0u8;
            let mut until = 0u64;
            for (_, k) in TrapKind::ALL {
                if let Some(when) = at[k as usize]
                    && now_ms.saturating_sub(when) <= t.hold_ms
                {
                    kinds |= k.bit();
                    until = until.max(when.saturating_add(t.hold_ms));
                }
            }
            (kinds != 0).then_some((kinds, until))
        };
        let mut out: Vec<Listed> =
            g.0.entries()
                .filter_map(|(ip, c)| {
                    let (kinds, until_ms) = live(&c.at)?;
                    let prefix = if ip.is_ipv4() { 32 } else { 64 };
                    Some(Listed {
                        network: (*ip, prefix),
                        kinds,
                        until_ms,
                    })
                })
                .collect();
        out.extend(g.1.entries().filter_map(|(net, n)| {
            let (kinds, until_ms) = live(&n.at)?;
            let prefix = if net.is_ipv4() { 24 } else { 48 };
            Some(Listed {
                network: (*net, prefix),
                kinds,
                until_ms,
            })
        }));
        out
    }

    /// Forgets every catch (`POST /.botscope/...`, tests).
    pub fn clear(&self) {
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        g.0.clear();
        g.1.clear();
        self.held.store(0, Ordering::Relaxed);
    }
}

/// A key and its links' signer.
type KeyedSigner = (Arc<Vec<u8>>, Arc<Signer>);

/// A robots.txt as read, the trap paths, the file served.
type Injected = (Arc<[u8]>, Paths, Arc<[u8]>);

/// The gate's traps: the robots.txt files with their trap lines (made
/// once per file and key), and the catches.
#[derive(Default)]
pub struct TrapState {
    /// The catches.
    pub catches: Catches,
    /// Injected files: the file as read (held, so that its address is
    /// not reused while cached), the key's paths, the file served.
    served: Mutex<Vec<Injected>>,
    signer: Mutex<Option<KeyedSigner>>,
    /// The fleet's catches read so far: the time of the last (Redis's
    /// clock), and the members read at that time (read again, as the next
    /// read starts there).
    fleet: Mutex<(u64, Vec<String>)>,
    /// The tarpit: refusals held now, and per network the refusals held
    /// lately and the last one's time.
    held: Arc<AtomicUsize>,
    /// Refusals the tarpit held, in all.
    pub held_total: AtomicU64,
    slowed: Mutex<Option<Recent<IpAddr, (u32, u64)>>>,
}

/// A refusal held by the tarpit: its place, given back when dropped.
pub struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A catch as the fleet's state holds it: `address|kind|nonce|hold`
/// (the hold in ms, for whoever exports it without the policy).
pub fn member(ip: IpAddr, kind: TrapKind, nonce: u32, hold_ms: u64) -> String {
    format!(
        "{}|{}|{nonce:08x}|{hold_ms}",
        address_key(ip),
        kind.as_str()
    )
}

/// A member's address and kind, if it reads.
pub fn read_member(m: &str) -> Option<(IpAddr, TrapKind)> {
    let mut p = m.split('|');
    let ip = p.next()?.parse().ok()?;
    let kind = TrapKind::parse(p.next()?)?;
    Some((ip, kind))
}

impl TrapState {
    /// The links' signer under `key` (made once per key).
    pub fn signer(&self, key: &Arc<Vec<u8>>) -> Arc<Signer> {
        let mut g = self.signer.lock().unwrap_or_else(PoisonError::into_inner);
        match &*g {
            Some((k, s)) if Arc::ptr_eq(k, key) || k == key => s.clone(),
            _ => {
                let s = Arc::new(Signer::new(key));
                *g = Some((key.clone(), s.clone()));
                s
            }
        }
    }

    /// Takes in the fleet's catches read from the time [`TrapState::read_from`]
    /// gave: each one new to this gate held as its own. Returns how many
    /// were new.
    pub fn take_fleets(&self, read: &[(String, u64)], t: &Traps) -> usize {
        let mut f = self.fleet.lock().unwrap_or_else(PoisonError::into_inner);
        let mut new = 0;
        for (m, at) in read {
            if *at == f.0 && f.1.contains(m) {
                continue;
            }
            if *at > f.0 {
                f.0 = *at;
                f.1.clear();
            }
            if f.1.len() < crate::state::CATCHES_PER_READ {
                f.1.push(m.clone());
            }
            if let Some((ip, kind)) = read_member(m) {
                self.catches.apply(ip, kind, *at, t);
                new += 1;
            }
        }
        new
    }

    /// Where the next read of the fleet's catches starts (Redis's clock,
    /// ms): the last one read, or `hold` before `now_ms` at first.
    pub fn read_from(&self, now_ms: u64, t: &Traps) -> u64 {
        let f = self.fleet.lock().unwrap_or_else(PoisonError::into_inner);
        if f.0 == 0 {
            now_ms.saturating_sub(t.hold_ms)
        } else {
            f.0
        }
    }

    /// How long to hold a refusal of a caught client from `ip` at
    /// `now_ms` (a second, doubling with each refusal its network had
    /// within the hold, up to `tarpit.max_ms`), and its place among the
    /// refusals held: `None` when `tarpit.held` are held already (then
    /// it is sent at once). Memory: a bounded map of networks.
    pub fn tarpit(&self, ip: IpAddr, now_ms: u64, t: &Traps) -> Option<(u64, Held)> {
        let tp = t.tarpit?;
        if self.held.fetch_add(1, Ordering::Relaxed) >= tp.held as usize {
            self.held.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        let held = Held(self.held.clone());
        let (net, _) = botscope_policy::network_of(ip);
        let mut g = self.slowed.lock().unwrap_or_else(PoisonError::into_inner);
        let map = g.get_or_insert_with(|| Recent::new(65_536));
        let n = match map.get(&net) {
            Some((n, last)) if now_ms.saturating_sub(last) <= t.hold_ms => n.saturating_add(1),
            _ => 1,
        };
        map.insert(net, (n, now_ms));
        drop(g);
        self.held_total.fetch_add(1, Ordering::Relaxed);
        let ms = 1_000u64
            .checked_shl((n - 1).min(20))
            .unwrap_or(u64::MAX)
            .min(tp.max_ms);
        Some((ms, held))
    }

    /// Refusals the tarpit holds now.
    pub fn held_now(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// The trap paths under `key`.
    pub fn paths(&self, key: &Arc<Vec<u8>>) -> Paths {
        self.signer(key).paths().clone()
    }

    /// `body` as served with the traps' lines.
    pub fn served(&self, body: &Arc<[u8]>, paths: &Paths) -> Arc<[u8]> {
        let mut g = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, s)) = g
            .iter()
            .find(|(b, p, _)| Arc::ptr_eq(b, body) && p == paths)
        {
            return s.clone();
        }
        let s: Arc<[u8]> = paths.inject(body).into();
        if g.len() >= 64 {
            g.clear();
        }
        g.push((body.clone(), paths.clone(), s.clone()));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traps() -> Traps {
        Traps {
            kinds: 0b111,
            widen: 3,
            ..Traps::default()
        }
    }

    #[test]
    fn paths_are_the_keys_and_every_group_disallows_them() {
        let a = Paths::of(b"a key of thirty-two bytes or more!!");
        let b = Paths::of(b"another key of thirty-two bytes or more");
        assert_ne!(a.prefix, b.prefix);
        assert!(a.prefix.starts_with("/t-") && a.prefix.len() == 14, "{a:?}");
        assert!(a.robots.starts_with(&a.prefix) && a.robots.len() == 22);
        assert_eq!(a.hit(&a.robots), Some(Hit::Robots));
        assert_eq!(a.hit(&format!("{}?x=1", a.robots)), Some(Hit::Robots));
        assert_eq!(a.hit(&a.prefix), Some(Hit::Unknown));
        assert_eq!(a.hit(&format!("{}zz", a.prefix)), Some(Hit::Unknown));
        assert_eq!(a.hit("/t-other/"), None);
        for body in [
            &b"User-agent: Googlebot\nUser-agent: bingbot\nDisallow: /x\n\nUser-agent: *\nAllow: /\nSitemap: /s.xml"[..],
            b"User-agent: GPTBot\r\nDisallow: /\r\n\r\nUser-agent: *\r\nDisallow:",
            b"User-agent: a\rDisallow: /p\rUser-agent: *\rDisallow: /q",
            b"# nothing but a comment\n",
            b"",
            b"Disallow: /before-any-group\nUser-agent: *",
            b"User-agent: a\nDisallow: /x\n\nUser- *\nAllow: /\n",
        ] {
            let served = a.inject(body);
            let m = botscope_robotstxt::Matcher::new(&served);
            for agent in ["Googlebot", "bingbot", "GPTBot", "a", "SomeBot"] {
                assert!(
                    !m.check_path(agent, a.robots.as_bytes()).allowed,
                    "{agent} {}",
                    String::from_utf8_lossy(&served)
                );
                assert!(!m.check_path(agent, a.prefix.as_bytes()).allowed);
            }
            // Everything else reads as before.
            let before = botscope_robotstxt::Matcher::new(body);
            for (agent, p) in [("Googlebot", "/x"), ("SomeBot", "/x"), ("a", "/p"), ("GPTBot", "/q"), ("x", "/q")] {
                assert_eq!(
                    m.check_path(agent, p.as_bytes()).allowed,
                    before.check_path(agent, p.as_bytes()).allowed,
                    "{agent} {p} {}",
                    String::from_utf8_lossy(&served)
                );
            }
        }
    }

    #[test]
    fn certain_kinds_catch_at_once_anchors_on_the_second_link_forged_never_alone() {
        let t = traps();
        let c = Catches::default();
        let ip: IpAddr = "198.51.100.7".parse().expect("ip");
        assert_eq!(c.trapped(ip, 0, &t), Trapped::NONE);
        assert_eq!(
            c.record(ip, TrapKind::Robots, 0, true, 1_000, &t),
            Outcome::Caught(TrapKind::Robots)
        );
        assert!(
            c.trapped(ip, 5_000, &t)
                .by(TrapKind::Robots.bit(), Some(4_000))
        );
        // Held for `hold`, then gone.
        assert!(!c.trapped(ip, 1_000 + t.hold_ms + 1, &t).any());
        // Anchors: one link twice is one strike; a second link catches.
        let b: IpAddr = "2001:db8:1:2:3::9".parse().expect("ip");
        assert_eq!(
            c.record(b, TrapKind::Anchor, 1, true, 0, &t),
            Outcome::Strike
        );
        assert_eq!(
            c.record(b, TrapKind::Anchor, 1, true, 10, &t),
            Outcome::Strike
        );
        assert!(!c.trapped(b, 20, &t).any());
        assert_eq!(
            c.record(b, TrapKind::Anchor, 2, true, 30, &t),
            Outcome::Caught(TrapKind::Anchor)
        );
        // The same /64 is the same client.
        let b2: IpAddr = "2001:db8:1:2:ffff::1".parse().expect("ip");
        assert!(c.trapped(b2, 40, &t).any());
        // Outside the window, a strike starts over.
        let d: IpAddr = "203.0.113.5".parse().expect("ip");
        c.record(d, TrapKind::Anchor, 1, true, 0, &t);
        assert_eq!(
            c.record(d, TrapKind::Anchor, 2, true, t.window_ms + 1, &t),
            Outcome::Strike
        );
        // Forged links alone, however many, catch nobody.
        let f: IpAddr = "203.0.113.77".parse().expect("ip");
        for n in 0..10 {
            assert_eq!(
                c.record(f, TrapKind::Anchor, n, false, n, &t),
                Outcome::Forged
            );
        }
        assert!(!c.trapped(f, 20, &t).any());
    }

    #[test]
    fn a_network_is_caught_only_after_enough_of_its_addresses() {
        let t = traps();
        let c = Catches::default();
        let one: IpAddr = "192.0.2.1".parse().expect("ip");
        let other: IpAddr = "192.0.2.200".parse().expect("ip");
        // One client caught again and again never widens.
        for n in 0..10 {
            c.record(one, TrapKind::Robots, 0, true, n, &t);
        }
        assert!(!c.trapped(other, 20, &t).any());
        c.record(
            "192.0.2.2".parse().expect("ip"),
            TrapKind::Script,
            0,
            true,
            30,
            &t,
        );
        assert!(!c.trapped(other, 40, &t).any());
        c.record(
            "192.0.2.3".parse().expect("ip"),
            TrapKind::Script,
            0,
            true,
            50,
            &t,
        );
        let tr = c.trapped(other, 60, &t);
        assert!(tr.by(TrapKind::Script.bit(), None) && !tr.by(TrapKind::Robots.bit(), None));
        // Another network is untouched; `widen: 0` never widens.
        assert!(!c.trapped("192.0.3.1".parse().expect("ip"), 60, &t).any());
        let never = Traps {
            widen: 0,
            ..traps()
        };
        let c = Catches::default();
        for n in 0..10u8 {
            c.record(
                IpAddr::from([192, 0, 2, n]),
                TrapKind::Robots,
                0,
                true,
                0,
                &never,
            );
        }
        assert!(!c.trapped(other, 1, &never).any());
    }

    #[test]
    fn durations_are_written_as_go_writes_them() {
        for (ms, want) in [
            (1, "1s"),
            (59_000, "59s"),
            (60_000, "1m0s"),
            (3_600_000, "1h0m0s"),
            (86_399_001, "24h0m0s"),
            (86_350_000, "23h59m10s"),
        ] {
            assert_eq!(go_duration(ms), want);
        }
    }

    #[test]
    fn the_list_holds_addresses_and_widened_networks_until_their_end() {
        let t = traps();
        let c = Catches::default();
        for n in 1..=3u8 {
            c.record(
                IpAddr::from([192, 0, 2, n]),
                TrapKind::Robots,
                0,
                true,
                1_000,
                &t,
            );
        }
        c.record(
            "2001:db8:1:2::5".parse().expect("ip"),
            TrapKind::Script,
            0,
            true,
            2_000,
            &t,
        );
        let mut l: Vec<String> = c.list(3_000, &t).iter().map(Listed::value).collect();
        l.sort();
        assert_eq!(
            l,
            [
                "192.0.2.0/24",
                "192.0.2.1",
                "192.0.2.2",
                "192.0.2.3",
                "2001:db8:1:2::/64"
            ]
        );
        assert!(c.list(2_000 + t.hold_ms + 1, &t).is_empty());
    }

    #[test]
    fn a_million_distinct_trap_urls_cost_one_check_each_and_no_memory() {
        let s = Signer::new(b"a key of thirty-two bytes or more!!");
        let t = traps();
        let c = Catches::default();
        let ip: IpAddr = "198.51.100.9".parse().expect("ip");
        let prefix = s.paths().prefix.clone();
        let mut forged = 0;
        for n in 0..1_000_000u32 {
            // Tokens of every length up to twice a link's, most of the
            // right length but not signed.
            let len = (n as usize * 7) % (2 * LINK_CHARS + 1);
            let token: String = (0..len)
                .map(|i| char::from(b'A' + ((n as usize + i) % 26) as u8))
                .collect();
            match s.hit(&format!("{prefix}{token}"), 1_000) {
                Some(Hit::Unknown) => {
                    forged += 1;
                    assert_eq!(
                        c.record(ip, TrapKind::Anchor, u64::MAX, false, u64::from(n), &t),
                        Outcome::Forged
                    );
                }
                other => panic!("{other:?} for {token}"),
            }
        }
        assert_eq!(forged, 1_000_000);
        assert!(!c.trapped(ip, 1_000_000, &t).any());
        let g = c.inner.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(g.0.len(), 1);
        assert!(g.0.entries().all(|(_, c)| c.strikes.len() <= STRIKES));
    }

    #[test]
    fn links_are_signed_bound_and_expire() {
        let s = Signer::new(b"a key of thirty-two bytes or more!!");
        let other = Signer::new(b"another key of thirty-two bytes or more");
        let ip: IpAddr = "203.0.113.7".parse().expect("ip");
        let l = s.link(TrapKind::Script, ip, "crawler/1", 1_000, 42);
        assert_eq!(l.len(), s.paths().prefix.len() + LINK_CHARS);
        let Some(Hit::Link(got)) = s.hit(&l, 1_000) else {
            panic!("{l}")
        };
        assert_eq!(
            (got.kind, got.issued, got.nonce),
            (TrapKind::Script, 1_000, 42)
        );
        assert_eq!(got.network, "203.0.113.0".parse::<IpAddr>().expect("ip"));
        assert_eq!(s.hit(&l, 1_000 + LINK_TTL + 1), Some(Hit::Expired));
        assert_eq!(s.hit(&l, 900), Some(Hit::Expired), "from the future");
        // Another deployment's link is not under this prefix; moved under
        // it, its signature fails.
        let theirs = other.link(TrapKind::Script, ip, "crawler/1", 1_000, 42);
        assert_eq!(s.hit(&theirs, 1_000), None);
        let moved = format!(
            "{}{}",
            s.paths().prefix,
            &theirs[other.paths().prefix.len()..]
        );
        assert_eq!(s.hit(&moved, 1_000), Some(Hit::Unknown));
        // Every one-character change is caught.
        for i in s.paths().prefix.len()..l.len() {
            let mut b = l.clone().into_bytes();
            b[i] = if b[i] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(b).expect("ascii");
            assert!(
                matches!(s.hit(&changed, 1_000), Some(Hit::Unknown)),
                "{changed}"
            );
        }
    }

    #[test]
    fn a_flood_of_addresses_holds_bounded_memory() {
        let t = traps();
        let c = Catches::default();
        for n in 0..(MAX_CAUGHT as u32 * 2) {
            c.record(
                IpAddr::from(n.to_be_bytes()),
                TrapKind::Robots,
                0,
                true,
                0,
                &t,
            );
        }
        let g = c.inner.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(g.0.len() <= MAX_CAUGHT && g.1.len() <= MAX_CAUGHT);
    }
}
