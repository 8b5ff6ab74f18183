//! Rates: `N/s|min|h per ip|network|asn|identity|user_agent`, counted per
//! key with the generic cell rate algorithm (a key may send N requests in
//! a burst, then one every period/N), in a table the caller owns and
//! bounds.
//!
//! The table is sharded (16 locks), each shard holding at most its share
//! of [`Rates::new`]'s key bound. A key whose state has run out (its
//! theoretical arrival time is past) carries no information and is swept
//! when a shard is full; a shard still full after a sweep puts new keys in
//! one bucket per rule until the next sweep, so a flood of new addresses
//! is counted as one client, never as memory. A sweep costs the shard's
//! size and runs at most once per eighth of it in insertions: the work
//! per request is bounded by a constant.

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
    fn interval(&self) -> u64 {
        (self.period_ms / u64::from(self.count)).max(1)
    }

    /// How far ahead of now a key may run: its burst.
    fn tolerance(&self) -> u64 {
        self.period_ms.saturating_sub(self.interval())
    }
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

#[derive(Debug, Default)]
struct Shard {
    /// Key hash → theoretical arrival time (ms).
    tat: HashMap<u64, u64, BuildU64>,
    /// Insertions refused or made since the last sweep.
    since_sweep: usize,
    /// Whether the last sweep left the shard full.
    saturated: bool,
    /// Per rule: the bucket new keys share while the shard is saturated.
    overflow: HashMap<u32, u64>,
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
            Some(t) => *t,
            None => {
                if s.tat.len() >= per_shard {
                    s.since_sweep += 1;
                    if !s.saturated || s.since_sweep >= per_shard / 8 {
                        s.tat.retain(|_, t| *t > now);
                        s.since_sweep = 0;
                        s.saturated = s.tat.len() >= per_shard;
                    }
                }
                if s.tat.len() >= per_shard {
                    // Full of live keys: new keys share one bucket.
                    let t = s.overflow.get(&rule).copied().unwrap_or(0);
                    let (next, wait) = gcra(rate, t, now);
                    if wait.is_none() {
                        s.overflow.insert(rule, next);
                    }
                    return wait;
                }
                0
            }
        };
        let (next, wait) = gcra(rate, tat, now);
        if wait.is_none() {
            s.tat.insert(key, next);
        }
        wait
    }
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

    #[test]
    fn a_flood_of_new_keys_stays_bounded_and_shares_one_bucket() {
        let rates = Rates::new(1600);
        let rate = Rate::parse("2/s per ip").expect("rate");
        let mut limited = 0;
        for i in 0..200_000u32 {
            let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i);
            let f = Facts {
                ip: ip.into(),
                ..facts("0.0.0.0", 5_000)
            };
            if rates.hit(0, &rate, &f).is_some() {
                limited += 1;
            }
        }
        assert!(rates.len() <= 1600, "{}", rates.len());
        // Past the bound, new keys shared one bucket of two.
        assert!(limited > 190_000, "{limited}");
        // Once the keys run out (a second later) the table takes new ones.
        let f = Facts {
            ip: "203.0.113.9".parse().expect("ip"),
            ..facts("0.0.0.0", 7_000)
        };
        assert_eq!(rates.hit(0, &rate, &f), None);
        assert!(rates.len() <= 1600);
    }
}
