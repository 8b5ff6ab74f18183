//! Rates: `N/s|min|h per ip|network|asn|identity|user_agent`, counted per
//! key with the generic cell rate algorithm (a key may send N requests in
//! a burst, then one every period/N), in a table the caller owns and
//! bounds.
//!
//! The table is sharded (16 locks), each shard holding at most its share
//! of [`Rates::new`]'s key bound. A key whose state has run out (its
//! theoretical arrival time is past) carries no information and is swept
//! when a shard is full. A flood is charged to its own network (the /24 or
//! /48 of the client): a shard still full after a sweep evicts the keys of
//! the network holding most of them, and that network's new keys then
//! share one bucket per rule, its own, until a sweep finds room. When no
//! network holds many (a flood from everywhere at once), each network's
//! new keys share a bucket of that network. A visitor from another network
//! is never counted with the flood. The keys of `per network` and `per
//! asn` rules (one per network) are never evicted. A sweep or an eviction
//! costs the shard's size and runs at most once per sixty-fourth of it in
//! insertions: the work per request is bounded by a constant.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::IpAddr;
use std::sync::Mutex;

use crate::model::{Facts, Identity};

/// What a rate is counted per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Per {
    /// The client's address.
    Ip,
    /// Its network: the /24 of an IPv4 address, the /48 of an IPv6 one.
    Network,
    /// Its AS (its network when no owner database knows the AS).
    Asn,
    /// A verified bot's name (all its addresses together); the address
    /// for any other client.
    Identity,
    /// The User-Agent string.
    UserAgent,
}

impl Per {
    const ALL: [(&'static str, Per); 5] = [
        ("ip", Per::Ip),
        ("network", Per::Network),
        ("asn", Per::Asn),
        ("identity", Per::Identity),
        ("user_agent", Per::UserAgent),
    ];

    /// The name as written.
    pub fn as_str(self) -> &'static str {
        Per::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("ip", |(n, _)| n)
    }
}

/// A rate: `count` requests per `period_ms`, per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    /// Requests allowed per period (and in a burst).
    pub count: u32,
    /// The period in milliseconds.
    pub period_ms: u64,
    /// What it is counted per.
    pub per: Per,
}

/// Largest count a rate may name.
pub const MAX_COUNT: u32 = 1_000_000;

impl Rate {
    /// Reads `N/s|min|h per ip|network|asn|identity|user_agent` (the unit
    /// also as `sec`, `second`, `m`, `minute`, `hour`).
    pub fn parse(s: &str) -> Result<Rate, String> {
        let form = "a rate is written `N/s|min|h per ip|network|asn|identity|user_agent` (e.g. `10/s per ip`)";
        let mut words = s.split_whitespace();
        let (Some(amount), Some(kw), Some(per), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(form.to_owned());
        };
        if kw != "per" {
            return Err(form.to_owned());
        }
        let (n, unit) = amount.split_once('/').ok_or_else(|| form.to_owned())?;
        let count: u32 = n
            .parse()
            .ok()
            .filter(|c| (1..=MAX_COUNT).contains(c))
            .ok_or_else(|| {
                format!(
                    "`{}` is not a count from 1 to {MAX_COUNT}",
                    botscope_text::field(n)
                )
            })?;
        let period_ms = match unit {
            "s" | "sec" | "second" => 1_000,
            "m" | "min" | "minute" => 60_000,
            "h" | "hour" => 3_600_000,
            other => {
                return Err(format!(
                    "`{}` is not a unit of time: s, min or h",
                    botscope_text::field(other)
                ));
            }
        };
        let per = Per::ALL
            .iter()
            .find(|(name, _)| *name == per)
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                format!(
                    "`per {}`: a rate is counted per ip, network, asn, identity or user_agent",
                    botscope_text::field(per)
                )
            })?;
        Ok(Rate {
            count,
            period_ms,
            per,
        })
    }

    /// The time between two requests at the rate, in milliseconds (at least
    /// one).
    pub fn interval(&self) -> u64 {
        (self.period_ms / u64::from(self.count)).max(1)
    }

    /// How far ahead of now a key may run: its burst.
    pub fn tolerance(&self) -> u64 {
        self.period_ms.saturating_sub(self.interval())
    }
}

/// Where a policy's rates are counted: [`Rates`] in memory, or a store
/// many gates share.
pub trait RateStore {
    /// Counts `f` against `rate` of rule `rule`: `None` when under the
    /// rate (the request is counted), or how long until it is under again
    /// (the request is not counted). `decides`: whether a limit here ends
    /// the decision (false for a `label` rule's rate, after which the
    /// policy goes on).
    fn hit(&self, rule: u32, rate: &Rate, f: &Facts, decides: bool) -> Option<u64>;
}

impl RateStore for Rates {
    fn hit(&self, rule: u32, rate: &Rate, f: &Facts, _decides: bool) -> Option<u64> {
        Rates::hit(self, rule, rate, f)
    }
}

/// The key of `f` for `rate` in rule `rule` as text, the same in every
/// process (a shared store's key; [`Rates`] hashes it with a key of its
/// own instead): the rule, what it counts per, and the value.
pub fn shared_key(rule: u32, rate: &Rate, f: &Facts) -> String {
    let value = match rate.per {
        Per::Ip => botscope_botid::normalize(f.ip).to_string(),
        Per::Network => {
            let (net, bits) = network_of(f.ip);
            format!("{net}/{bits}")
        }
        Per::Asn => match f.asn {
            Some(a) => format!("AS{a}"),
            None => {
                let (net, bits) = network_of(f.ip);
                format!("{net}/{bits}")
            }
        },
        Per::Identity => match (f.identity, f.bot) {
            (Identity::Verified, Some(b)) => format!("bot:{}", b.to_ascii_lowercase()),
            _ => botscope_botid::normalize(f.ip).to_string(),
        },
        Per::UserAgent => format!("ua:{}", f.user_agent),
    };
    format!("{rule}|{}|{value}", rate.per.as_str())
}

/// The network a rate counts an address in: /24 for IPv4, /48 for IPv6.
pub fn network_of(ip: IpAddr) -> (IpAddr, u8) {
    match botscope_botid::normalize(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (IpAddr::from([o[0], o[1], o[2], 0]), 24)
        }
        IpAddr::V6(v6) => {
            let mut s = v6.segments();
            for x in &mut s[3..] {
                *x = 0;
            }
            (IpAddr::from(s), 48)
        }
    }
}

/// Keys held at most by default (about 24 bytes each).
pub const DEFAULT_MAX_KEYS: usize = 1 << 20;

const SHARDS: usize = 16;

/// One key's state: its theoretical arrival time, the network it is
/// charged to, and whether an eviction may take it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    tat: u64,
    net: u32,
    /// A `per network` or `per asn` key: one per network, never evicted.
    keep: bool,
}

#[derive(Debug, Default)]
struct Shard {
    /// Key hash → its state.
    tat: HashMap<u64, Slot, BuildU64>,
    /// Network → keys it holds that an eviction may take.
    nets: HashMap<u32, u32, BuildU64>,
    /// Insertions refused or made since the last sweep.
    since_sweep: usize,
    /// Whether the last sweep left the shard full.
    saturated: bool,
    /// Networks evicted since the last sweep that found room: their new
    /// keys share their own bucket.
    crowded: std::collections::HashSet<u32, BuildU64>,
    /// Per rule and network: the bucket new keys of a crowded network (or
    /// of any network, while no network can be evicted) share.
    overflow: HashMap<(u32, u32), u64>,
}

impl Shard {
    /// Drops the keys whose state has run out, and counts again what
    /// each network holds.
    fn sweep(&mut self, now: u64, per_shard: usize) {
        self.tat.retain(|_, s| s.tat > now);
        self.nets.clear();
        for s in self.tat.values().filter(|s| !s.keep) {
            *self.nets.entry(s.net).or_insert(0) += 1;
        }
        self.overflow.retain(|_, t| *t > now);
        self.since_sweep = 0;
        self.saturated = self.tat.len() >= per_shard;
        if !self.saturated {
            self.crowded.clear();
        }
    }

    /// Evicts the keys of the network holding most, when it holds at
    /// least `least`; returns it.
    fn evict_heaviest(&mut self, least: u32) -> Option<u32> {
        let (&net, &n) = self.nets.iter().max_by_key(|(_, n)| **n)?;
        if n < least {
            return None;
        }
        self.tat.retain(|_, s| s.keep || s.net != net);
        self.nets.remove(&net);
        if self.crowded.len() >= 4096 {
            self.crowded.clear();
        }
        self.crowded.insert(net);
        Some(net)
    }
}

/// The hash of a key is already a keyed 64-bit hash: used as is.
#[derive(Debug, Default, Clone, Copy)]
struct BuildU64;

#[derive(Debug, Default)]
struct U64Hasher(u64);

impl Hasher for U64Hasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(*b) ^ (self.0 >> 56);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl BuildHasher for BuildU64 {
    type Hasher = U64Hasher;
    fn build_hasher(&self) -> U64Hasher {
        U64Hasher(0)
    }
}

/// The rate state of one policy: every key of every `rate:` rule, bounded.
/// Shared by the requests of a gate (`&self`), or owned by one replay.
#[derive(Debug)]
pub struct Rates {
    shards: Box<[Mutex<Shard>]>,
    per_shard: usize,
    /// Keys are hashed with a key of this table's own: a client cannot
    /// choose addresses that collide.
    hasher: foldhash::fast::RandomState,
}

impl Default for Rates {
    fn default() -> Rates {
        Rates::new(DEFAULT_MAX_KEYS)
    }
}

impl Rates {
    /// A table holding at most `max_keys` keys (at least 16).
    pub fn new(max_keys: usize) -> Rates {
        Rates {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            per_shard: (max_keys / SHARDS).max(1),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).tat.len())
            .sum()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key of `f` for `rate` in rule `rule`, hashed.
    fn key(&self, rule: u32, rate: &Rate, f: &Facts) -> u64 {
        let mut h = self.hasher.build_hasher();
        rule.hash(&mut h);
        rate.per.hash(&mut h);
        match rate.per {
            Per::Ip => botscope_botid::normalize(f.ip).hash(&mut h),
            Per::Network => network_of(f.ip).hash(&mut h),
            Per::Asn => match f.asn {
                Some(a) => (0u8, a).hash(&mut h),
                None => (1u8, network_of(f.ip)).hash(&mut h),
            },
            Per::Identity => match (f.identity, f.bot) {
                (Identity::Verified, Some(b)) => (0u8, b.to_ascii_lowercase()).hash(&mut h),
                _ => (1u8, botscope_botid::normalize(f.ip)).hash(&mut h),
            },
            Per::UserAgent => f.user_agent.hash(&mut h),
        }
        h.finish()
    }

    /// Counts `f` against `rate` of rule `rule`: `None` when under the
    /// rate (the request is counted), or how long until it is under again
    /// (the request is not counted, so a client that slows down gets
    /// through at the rate).
    pub fn hit(&self, rule: u32, rate: &Rate, f: &Facts) -> Option<u64> {
        let key = self.key(rule, rate, f);
        let now = f.now_ms;
        let shard = &self.shards[(key >> 60) as usize % SHARDS];
        let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
        let per_shard = self.per_shard;
        let tat = match s.tat.get(&key) {
            Some(slot) => slot.tat,
            None => {
                let net = self.hasher.hash_one(network_of(f.ip)) as u32;
                let keep = matches!(rate.per, Per::Network | Per::Asn);
                if !keep && s.crowded.contains(&net) {
                    return overflow(&mut s, (rule, net), rate, now, per_shard);
                }
                if s.tat.len() >= per_shard {
                    s.since_sweep += 1;
                    if !s.saturated || s.since_sweep >= (per_shard / 64).max(1) {
                        s.sweep(now, per_shard);
                        if s.saturated {
                            // Still full of live keys: the network holding
                            // most pays, when it holds a share worth the
                            // eviction's cost (a sixty-fourth).
                            let least = u32::try_from(per_shard / 64).unwrap_or(u32::MAX).max(2);
                            if s.evict_heaviest(least) == Some(net) && !keep {
                                return overflow(&mut s, (rule, net), rate, now, per_shard);
                            }
                        }
                    }
                }
                if s.tat.len() >= per_shard {
                    // Full, no network to evict yet: this network's new
                    // keys share its own bucket.
                    return overflow(&mut s, (rule, net), rate, now, per_shard);
                }
                if !keep {
                    *s.nets.entry(net).or_insert(0) += 1;
                }
                s.tat.insert(key, Slot { tat: 0, net, keep });
                0
            }
        };
        let (next, wait) = gcra(rate, tat, now);
        if wait.is_none()
            && let Some(slot) = s.tat.get_mut(&key)
        {
            slot.tat = next;
        }
        wait
    }
}

/// Counts a request in the bucket `(rule, network)` new keys share (at
/// most a quarter of a shard of them; past it the oldest buckets go).
fn overflow(s: &mut Shard, at: (u32, u32), rate: &Rate, now: u64, per_shard: usize) -> Option<u64> {
    let t = match s.overflow.get(&at) {
        Some(t) => *t,
        None => {
            if s.overflow.len() >= (per_shard / 4).max(16) {
                s.overflow.retain(|_, t| *t > now);
                if s.overflow.len() >= (per_shard / 4).max(16) {
                    s.overflow.clear();
                }
            }
            0
        }
    };
    let (next, wait) = gcra(rate, t, now);
    if wait.is_none() {
        s.overflow.insert(at, next);
    }
    wait
}

/// One step of the generic cell rate algorithm: the new theoretical
/// arrival time when the request conforms, or the wait when it does not.
fn gcra(rate: &Rate, tat: u64, now: u64) -> (u64, Option<u64>) {
    let start = tat.max(now);
    let ahead = start - now;
    if ahead > rate.tolerance() {
        (tat, Some(ahead - rate.tolerance()))
    } else {
        (start + rate.interval(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Signature;

    fn facts(ip: &str, now_ms: u64) -> Facts<'static> {
        Facts {
            ip: ip.parse().expect("ip"),
            method: "GET",
            path: "/",
            user_agent: "ua",
            identity: Identity::Unclaimed,
            bot: None,
            category: crate::BROWSER,
            signature: Signature::None,
            asn: None,
            lists: 0,
            robots: None,
            now_ms,
            navigation: true,
            passed: false,
            trapped: crate::Trapped::NONE,
        }
    }

    #[test]
    fn rates_are_read_as_written() {
        let r = Rate::parse("10/s per ip").expect("rate");
        assert_eq!((r.count, r.period_ms, r.per), (10, 1000, Per::Ip));
        let r = Rate::parse("  600/min   per network ").expect("rate");
        assert_eq!((r.count, r.period_ms, r.per), (600, 60_000, Per::Network));
        assert_eq!(
            Rate::parse("1/h per user_agent").expect("r").per,
            Per::UserAgent
        );
        for bad in [
            "10/s",
            "10 per ip",
            "0/s per ip",
            "10/day per ip",
            "10/s per host",
            "x/s per ip",
            "10/s by ip",
        ] {
            assert!(Rate::parse(bad).is_err(), "{bad}");
        }
        // The count quoted back is escaped (a fuzz finding: an ESC in it).
        let e = Rate::parse("60\x1b0/min per ip").expect_err("not a count");
        assert!(e.contains("`60\\x1b0`") && !e.contains('\x1b'), "{e}");
    }

    #[test]
    fn a_burst_then_the_rate() {
        let rates = Rates::new(1024);
        let rate = Rate::parse("5/s per ip").expect("rate");
        // Five at once pass, the sixth waits 200 ms.
        for _ in 0..5 {
            assert_eq!(rates.hit(0, &rate, &facts("192.0.2.1", 10_000)), None);
        }
        assert_eq!(rates.hit(0, &rate, &facts("192.0.2.1", 10_000)), Some(200));
        // Another address has its own key; another rule its own count.
        assert_eq!(rates.hit(0, &rate, &facts("192.0.2.2", 10_000)), None);
        assert_eq!(rates.hit(1, &rate, &facts("192.0.2.1", 10_000)), None);
        // After 200 ms one more passes.
        assert_eq!(rates.hit(0, &rate, &facts("192.0.2.1", 10_200)), None);
        assert!(rates.hit(0, &rate, &facts("192.0.2.1", 10_200)).is_some());
        // Per network, the /24 is one key.
        let net = Rate::parse("1/s per network").expect("rate");
        assert_eq!(rates.hit(2, &net, &facts("198.51.100.1", 0)), None);
        assert!(rates.hit(2, &net, &facts("198.51.100.200", 0)).is_some());
        assert_eq!(rates.hit(2, &net, &facts("198.51.101.1", 0)), None);
        let v6 = |s: &str| facts(s, 0);
        assert_eq!(rates.hit(2, &net, &v6("2001:db8:1::1")), None);
        assert!(rates.hit(2, &net, &v6("2001:db8:1:ffff::2")).is_some());
    }

    /// Found by a probe: a flood from one IPv6 /48 filled the table, and
    /// then every new visitor, from any network, shared one bucket with it
    /// and was limited on its first request. The flood is now charged to
    /// its own network.
    #[test]
    fn a_flood_is_charged_to_its_own_network() {
        let rates = Rates::new(4096);
        let per_ip = Rate::parse("60/min per ip").expect("rate");
        let per_net = Rate::parse("1000/min per network").expect("rate");
        let flood = |i: u32, now_ms: u64| Facts {
            ip: IpAddr::from([0x2001, 0xdb8, 0x66, (i >> 16) as u16, i as u16, 0, 0, 1]),
            ..facts("0.0.0.0", now_ms)
        };
        let (mut limited, mut net_limited) = (0, 0);
        for i in 0..30_000u32 {
            let f = flood(i, 1_000 + u64::from(i / 100));
            if rates.hit(0, &per_ip, &f).is_some() {
                limited += 1;
            }
            if rates.hit(1, &per_net, &f).is_some() {
                net_limited += 1;
            }
            assert!(rates.len() <= 4096, "{}", rates.len());
        }
        // Past the bound, the flood's new addresses share its own bucket.
        // (the table itself, and a burst of its bucket in each shard).
        assert!(limited > 24_000, "{limited}");
        // Its network's own key was never evicted: the network rate held.
        assert!(net_limited > 28_900, "{net_limited}");
        // Visitors from thirty other networks: each its own, first
        // request allowed, in both rules.
        for v in 0..30u8 {
            let f = Facts {
                ip: IpAddr::from([198, 51, v, 7]),
                ..facts("0.0.0.0", 1_400)
            };
            assert_eq!(rates.hit(0, &per_ip, &f), None, "visitor {v}");
            assert_eq!(rates.hit(1, &per_net, &f), None, "visitor {v}");
            let f6 = Facts {
                ip: IpAddr::from([0x2001, 0xdb8, 0x100 + u16::from(v), 0, 0, 0, 0, 1]),
                ..f
            };
            assert_eq!(rates.hit(0, &per_ip, &f6), None, "visitor {v} over IPv6");
        }
        // Once the keys run out (a minute later) the table takes the flood's
        // network on its own again.
        let f = flood(40_000, 200_000);
        assert_eq!(rates.hit(0, &per_ip, &f), None);
        assert!(rates.len() <= 4096);
    }

    /// A flood from many networks at once, none holding much: each
    /// network's new keys share that network's bucket, bounded work and
    /// memory, and a visitor from a quiet network is still alone.
    #[test]
    fn a_flood_from_everywhere_stays_bounded() {
        let rates = Rates::new(1600);
        let rate = Rate::parse("2/s per ip").expect("rate");
        for i in 0..200_000u32 {
            let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i);
            let f = Facts {
                ip: ip.into(),
                ..facts("0.0.0.0", 5_000)
            };
            let _ = rates.hit(0, &rate, &f);
        }
        assert!(rates.len() <= 1600, "{}", rates.len());
        let f = Facts {
            ip: "203.0.113.9".parse().expect("ip"),
            ..facts("0.0.0.0", 5_000)
        };
        assert_eq!(rates.hit(0, &rate, &f), None);
        assert_eq!(rates.hit(0, &rate, &f), None);
        assert!(
            rates.hit(0, &rate, &f).is_some(),
            "its own rate still holds"
        );
    }
}
