//! IP addresses, ranges and CIDRs in one prefix structure, v4 and v6.
//!
//! Every source form (single addresses, inclusive `min`–`max` ranges,
//! CIDR blocks) becomes an inclusive range; ranges of all owners are cut
//! into disjoint segments, each naming the set of owners that cover it.
//! IPv4 lookups go through a table indexed by the top 16 bits, so a lookup
//! is one table read and a short binary search; IPv6 lookups are a binary
//! search. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are IPv4.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::Error;

/// An inclusive range of addresses of one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IpRange {
    /// IPv4, as integers.
    V4(u32, u32),
    /// IPv6, as integers.
    V6(u128, u128),
}

/// An address with IPv4-mapped IPv6 turned into IPv4.
pub fn normalize(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// Reads one address (surrounding whitespace and `[ ]` allowed), IPv4-mapped
/// IPv6 normalised to IPv4.
pub fn parse_ip(s: &str) -> Result<IpAddr, Error> {
    let t = s.trim().trim_start_matches('[').trim_end_matches(']');
    IpAddr::from_str(t)
        .map(normalize)
        .map_err(|_| Error::Ip(format!("`{}` is not an IP address", s.trim())))
}

impl IpRange {
    /// The range holding one address.
    pub fn single(ip: IpAddr) -> IpRange {
        match normalize(ip) {
            IpAddr::V4(a) => IpRange::V4(a.into(), a.into()),
            IpAddr::V6(a) => IpRange::V6(a.into(), a.into()),
        }
    }

    /// An inclusive range; both ends of one family, `min <= max`.
    pub fn from_bounds(min: IpAddr, max: IpAddr) -> Result<IpRange, Error> {
        match (normalize(min), normalize(max)) {
            (IpAddr::V4(a), IpAddr::V4(b)) if u32::from(a) <= u32::from(b) => {
                Ok(IpRange::V4(a.into(), b.into()))
            }
            (IpAddr::V6(a), IpAddr::V6(b)) if u128::from(a) <= u128::from(b) => {
                Ok(IpRange::V6(a.into(), b.into()))
            }
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => Err(Error::Ip(
                format!("range min {min} is greater than max {max}"),
            )),
            _ => Err(Error::Ip(format!(
                "range {min} - {max} mixes IPv4 and IPv6"
            ))),
        }
    }

    /// Reads a CIDR block (`66.249.64.0/19`, `2001:4860:4801::/48`). Host
    /// bits set below the prefix are an error, as in the operators' lists.
    pub fn parse_cidr(s: &str) -> Result<IpRange, Error> {
        let t = s.trim();
        let err = |why: &str| Error::Ip(format!("`{t}` is not a CIDR block: {why}"));
        let (addr, len) = t.split_once('/').ok_or_else(|| err("no `/`"))?;
        let len: u32 = len
            .trim()
            .parse()
            .map_err(|_| err("the prefix length is not a number"))?;
        let ip = IpAddr::from_str(addr.trim()).map_err(|_| err("the address cannot be read"))?;
        match ip {
            IpAddr::V4(a) => {
                if len > 32 {
                    return Err(err("the prefix length is over 32"));
                }
                let host = if len == 32 { 0 } else { u32::MAX >> len };
                let a = u32::from(a);
                if a & host != 0 {
                    return Err(err("bits are set below the prefix length"));
                }
                Ok(IpRange::V4(a, a | host))
            }
            IpAddr::V6(a) => {
                if len > 128 {
                    return Err(err("the prefix length is over 128"));
                }
                let host = if len == 128 { 0 } else { u128::MAX >> len };
                let a6 = u128::from(a);
                if a6 & host != 0 {
                    return Err(err("bits are set below the prefix length"));
                }
                // ::ffff:0:0/96 and longer prefixes inside it are IPv4.
                if len >= 96 && a.to_ipv4_mapped().is_some() {
                    let lo = (a6 & 0xFFFF_FFFF) as u32;
                    let hi = ((a6 | host) & 0xFFFF_FFFF) as u32;
                    return Ok(IpRange::V4(lo, hi));
                }
                Ok(IpRange::V6(a6, a6 | host))
            }
        }
    }

    /// Reads an address, a CIDR block, or `min-max`.
    pub fn parse_any(s: &str) -> Result<IpRange, Error> {
        let t = s.trim();
        if t.contains('/') {
            return IpRange::parse_cidr(t);
        }
        if let Some((a, b)) = t.split_once(" - ").or_else(|| {
            if t.contains(':') {
                None
            } else {
                t.split_once('-')
            }
        }) {
            return IpRange::from_bounds(parse_ip(a)?, parse_ip(b)?);
        }
        parse_ip(t).map(IpRange::single)
    }

    /// True when `ip` is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self, normalize(ip)) {
            (IpRange::V4(a, b), IpAddr::V4(x)) => (*a..=*b).contains(&u32::from(x)),
            (IpRange::V6(a, b), IpAddr::V6(x)) => (*a..=*b).contains(&u128::from(x)),
            _ => false,
        }
    }

    /// The range as the CIDR blocks that cover it exactly.
    pub fn to_cidrs(&self) -> Vec<String> {
        fn split<T>(mut lo: u128, hi: u128, bits: u32, show: impl Fn(u128) -> T) -> Vec<(T, u32)> {
            let mut out = Vec::new();
            loop {
                // Largest block starting at `lo` that fits in [lo, hi].
                let align = if lo == 0 {
                    bits
                } else {
                    lo.trailing_zeros().min(bits)
                };
                let mut size = align;
                while size > 0 && (hi - lo) < ((1u128 << size) - 1) {
                    size -= 1;
                }
                out.push((show(lo), bits - size));
                let last = lo + ((1u128 << size) - 1);
                if last >= hi {
                    return out;
                }
                lo = last + 1;
            }
        }
        match *self {
            IpRange::V4(a, b) => split(a.into(), b.into(), 32, |x| {
                Ipv4Addr::from(x as u32).to_string()
            })
            .into_iter()
            .map(|(ip, len)| format!("{ip}/{len}"))
            .collect(),
            IpRange::V6(a, b) => {
                if a == 0 && b == u128::MAX {
                    return vec!["::/0".to_owned()];
                }
                split(a, b, 127, |x| Ipv6Addr::from(x).to_string())
                    .into_iter()
                    .map(|(ip, len)| format!("{ip}/{}", len + 1))
                    .collect()
            }
        }
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            IpRange::V4(a, b) if a == b => write!(f, "{}", Ipv4Addr::from(a)),
            IpRange::V4(a, b) => write!(f, "{} - {}", Ipv4Addr::from(a), Ipv4Addr::from(b)),
            IpRange::V6(a, b) if a == b => write!(f, "{}", Ipv6Addr::from(a)),
            IpRange::V6(a, b) => write!(f, "{} - {}", Ipv6Addr::from(a), Ipv6Addr::from(b)),
        }
    }
}

impl IpRange {
    /// As a registry writes it: an address, a CIDR block when the range is
    /// exactly one, or `min - max`.
    pub fn written(&self) -> String {
        let single = matches!(*self, IpRange::V4(a, b) if a == b)
            || matches!(*self, IpRange::V6(a, b) if a == b);
        let cidrs = self.to_cidrs();
        if !single && cidrs.len() == 1 {
            cidrs[0].clone()
        } else {
            self.to_string()
        }
    }
}

/// [`IpRange::written`].
impl serde::Serialize for IpRange {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.written())
    }
}

/// Disjoint sorted segments of one family, each naming an owner set.
#[derive(Debug, Clone, Default)]
struct Segments<T> {
    starts: Vec<T>,
    ends: Vec<T>,
    sets: Vec<u32>,
}

impl<T: Copy + Ord> Segments<T> {
    fn find(&self, x: T) -> Option<u32> {
        self.find_in(x, 0, self.starts.len())
    }

    #[inline]
    fn find_in(&self, x: T, lo: usize, hi: usize) -> Option<u32> {
        let i = lo + self.starts[lo..hi].partition_point(|s| *s <= x);
        (i > 0 && x <= self.ends[i - 1]).then(|| self.sets[i - 1])
    }
}

/// Cuts `(start, end, owner)` intervals into disjoint segments with owner
/// sets; `next` (x + 1, `None` at the top) and `prev` (x − 1) make it work
/// for both integer widths.
fn build<T: Copy + Ord>(
    mut iv: Vec<(T, T, u32)>,
    next: impl Fn(T) -> Option<T>,
    prev: impl Fn(T) -> T,
    sets: &mut SetTable,
) -> Segments<T> {
    // Events: owner enters at start, leaves after end.
    let mut bounds: Vec<T> = Vec::with_capacity(iv.len() * 2);
    for &(s, e, _) in &iv {
        bounds.push(s);
        if let Some(n) = next(e) {
            bounds.push(n);
        }
    }
    bounds.sort_unstable();
    bounds.dedup();
    iv.sort_unstable();
    let mut seg = Segments {
        starts: Vec::new(),
        ends: Vec::new(),
        sets: Vec::new(),
    };
    let mut active: Vec<(T, u32)> = Vec::new(); // (end, owner)
    let mut k = 0;
    for (bi, &b) in bounds.iter().enumerate() {
        active.retain(|&(e, _)| e >= b);
        while k < iv.len() && iv[k].0 == b {
            active.push((iv[k].1, iv[k].2));
            k += 1;
        }
        if active.is_empty() {
            continue;
        }
        // Between two boundaries the owners do not change: the segment ends
        // just before the next one (or at the top of the address space).
        let end = match bounds.get(bi + 1) {
            Some(&nb) => prev(nb),
            None => active.iter().map(|a| a.0).max().unwrap_or(b),
        };
        let mut owners: Vec<u32> = active.iter().map(|a| a.1).collect();
        owners.sort_unstable();
        owners.dedup();
        let set = sets.intern(owners);
        // Merge with the previous segment when contiguous and same owners.
        if let (Some(&pe), Some(&ps)) = (seg.ends.last(), seg.sets.last())
            && ps == set
            && next(pe) == Some(b)
        {
            if let Some(last) = seg.ends.last_mut() {
                *last = end;
            }
            continue;
        }
        seg.starts.push(b);
        seg.ends.push(end);
        seg.sets.push(set);
    }
    seg
}

/// Owner sets, stored once each.
#[derive(Debug, Clone, Default)]
struct SetTable {
    sets: Vec<Box<[u32]>>,
    index: std::collections::HashMap<Box<[u32]>, u32>,
}

impl SetTable {
    fn intern(&mut self, owners: Vec<u32>) -> u32 {
        let owners = owners.into_boxed_slice();
        if let Some(&i) = self.index.get(&owners) {
            return i;
        }
        let i = u32::try_from(self.sets.len()).unwrap_or(u32::MAX);
        self.sets.push(owners.clone());
        self.index.insert(owners, i);
        i
    }
}

/// Which owners (numbered by the caller) have published which addresses.
///
/// ```
/// use botscope_botid::{IpIndex, IpRange};
/// let mut b = IpIndex::builder();
/// b.add(IpRange::parse_cidr("66.249.64.0/19").unwrap(), 0);
/// b.add(IpRange::parse_cidr("2001:4860:4801::/48").unwrap(), 0);
/// b.add(IpRange::parse_any("66.249.66.1").unwrap(), 1);
/// let idx = b.build();
/// assert_eq!(idx.lookup("66.249.66.1".parse().unwrap()), &[0, 1]);
/// assert_eq!(idx.lookup("::ffff:66.249.64.9".parse().unwrap()), &[0]);
/// assert!(idx.lookup("8.8.8.8".parse().unwrap()).is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct IpIndex {
    v4: Segments<u32>,
    /// For each top-16-bit prefix, the first segment that may hold it.
    v4_table: Vec<u32>,
    v6: Segments<u128>,
    sets: Vec<Box<[u32]>>,
}

/// Collects ranges for an [`IpIndex`].
#[derive(Debug, Clone, Default)]
pub struct IpIndexBuilder {
    v4: Vec<(u32, u32, u32)>,
    v6: Vec<(u128, u128, u32)>,
}

impl IpIndexBuilder {
    /// Adds a range owned by `owner`.
    pub fn add(&mut self, range: IpRange, owner: u32) {
        match range {
            IpRange::V4(a, b) => self.v4.push((a, b, owner)),
            IpRange::V6(a, b) => self.v6.push((a, b, owner)),
        }
    }

    /// Builds the index.
    pub fn build(self) -> IpIndex {
        let mut sets = SetTable::default();
        let v4 = build(
            self.v4,
            |x: u32| x.checked_add(1),
            |x: u32| x - 1,
            &mut sets,
        );
        let v6 = build(
            self.v6,
            |x: u128| x.checked_add(1),
            |x: u128| x - 1,
            &mut sets,
        );
        // v4_table[p] = first segment whose end reaches prefix p.
        let mut v4_table = vec![0u32; (1 << 16) + 1];
        let mut s = 0usize;
        for (p, slot) in v4_table.iter_mut().enumerate().take(1 << 16) {
            let base = (p as u32) << 16;
            while s < v4.ends.len() && v4.ends[s] < base {
                s += 1;
            }
            *slot = u32::try_from(s).unwrap_or(u32::MAX);
        }
        v4_table[1 << 16] = u32::try_from(v4.starts.len()).unwrap_or(u32::MAX);
        IpIndex {
            v4,
            v4_table,
            v6,
            sets: sets.sets,
        }
    }
}

impl IpIndex {
    /// A builder.
    pub fn builder() -> IpIndexBuilder {
        IpIndexBuilder::default()
    }

    /// The owners whose published addresses include `ip` (sorted, empty
    /// when none).
    #[inline]
    pub fn lookup(&self, ip: IpAddr) -> &[u32] {
        let set = match normalize(ip) {
            IpAddr::V4(a) => self.lookup_v4(u32::from(a)),
            IpAddr::V6(a) => self.v6.find(u128::from(a)),
        };
        set.map_or(&[], |s| &self.sets[s as usize])
    }

    #[inline]
    fn lookup_v4(&self, x: u32) -> Option<u32> {
        let p = (x >> 16) as usize;
        let lo = self.v4_table[p] as usize;
        // Segments starting before the next prefix may hold x.
        let hi = (self.v4_table[p + 1] as usize + 1).min(self.v4.starts.len());
        if lo >= hi {
            return None;
        }
        self.v4.find_in(x, lo, hi)
    }

    /// Number of disjoint segments (IPv4, IPv6).
    pub fn segments(&self) -> (usize, usize) {
        (self.v4.starts.len(), self.v6.starts.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn cidrs_ranges_and_mapped() {
        assert_eq!(
            IpRange::parse_cidr("10.0.0.0/8"),
            Ok(IpRange::V4(0x0A00_0000, 0x0AFF_FFFF))
        );
        assert!(IpRange::parse_cidr("10.0.0.1/8").is_err());
        assert!(IpRange::parse_cidr("10.0.0.0/33").is_err());
        assert!(IpRange::parse_cidr("10.0.0.0").is_err());
        assert_eq!(
            IpRange::parse_cidr("0.0.0.0/0"),
            Ok(IpRange::V4(0, u32::MAX))
        );
        assert_eq!(
            IpRange::parse_cidr("::ffff:1.2.3.0/120"),
            Ok(IpRange::V4(0x0102_0300, 0x0102_03FF))
        );
        assert_eq!(
            IpRange::parse_any("1.2.3.4 - 1.2.3.9").map(|r| r.to_string()),
            Ok("1.2.3.4 - 1.2.3.9".into())
        );
        assert!(IpRange::parse_any("1.2.3.9-1.2.3.4").is_err());
        assert!(IpRange::from_bounds(ip("1.2.3.4"), ip("::1")).is_err());
        assert_eq!(parse_ip(" [::ffff:8.8.8.8] "), Ok(ip("8.8.8.8")));
    }

    #[test]
    fn to_cidrs_round_trip() {
        let r = IpRange::parse_any("10.0.0.1 - 10.0.0.10").expect("range");
        assert_eq!(
            r.to_cidrs(),
            [
                "10.0.0.1/32",
                "10.0.0.2/31",
                "10.0.0.4/30",
                "10.0.0.8/31",
                "10.0.0.10/32"
            ]
        );
        assert_eq!(
            IpRange::parse_cidr("0.0.0.0/0").expect("all").to_cidrs(),
            ["0.0.0.0/0"]
        );
        assert_eq!(
            IpRange::parse_cidr("2001:db8::/32").expect("v6").to_cidrs(),
            ["2001:db8::/32"]
        );
    }

    #[test]
    fn overlapping_owners() {
        let mut b = IpIndex::builder();
        b.add(IpRange::parse_cidr("10.0.0.0/8").expect("a"), 1);
        b.add(IpRange::parse_cidr("10.1.0.0/16").expect("b"), 2);
        b.add(IpRange::parse_any("10.1.2.3").expect("c"), 3);
        b.add(IpRange::parse_cidr("10.2.0.0/16").expect("d"), 1);
        b.add(IpRange::parse_any("255.255.255.255").expect("e"), 4);
        b.add(IpRange::parse_cidr("2001:db8::/32").expect("f"), 5);
        b.add(IpRange::parse_cidr("::/0").expect("g"), 6);
        let idx = b.build();
        assert_eq!(idx.lookup(ip("10.0.0.0")), &[1]);
        assert_eq!(idx.lookup(ip("10.1.0.0")), &[1, 2]);
        assert_eq!(idx.lookup(ip("10.1.2.3")), &[1, 2, 3]);
        assert_eq!(idx.lookup(ip("10.1.2.4")), &[1, 2]);
        assert_eq!(idx.lookup(ip("10.1.255.255")), &[1, 2]);
        assert_eq!(idx.lookup(ip("10.2.0.1")), &[1]);
        assert_eq!(idx.lookup(ip("10.255.255.255")), &[1]);
        assert!(idx.lookup(ip("11.0.0.0")).is_empty());
        assert!(idx.lookup(ip("9.255.255.255")).is_empty());
        assert_eq!(idx.lookup(ip("255.255.255.255")), &[4]);
        assert_eq!(idx.lookup(ip("2001:db8::1")), &[5, 6]);
        assert_eq!(idx.lookup(ip("::1")), &[6]);
        assert_eq!(
            idx.lookup(ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")),
            &[6]
        );
        assert_eq!(
            idx.lookup(ip("::ffff:10.1.2.3")),
            &[1, 2, 3],
            "mapped IPv6 is IPv4"
        );
        assert_eq!(
            idx.segments().0,
            6,
            "10/8 splits into five segments, plus one"
        );
    }

    /// Against a linear scan on many random ranges and probes.
    #[test]
    fn agrees_with_linear_scan() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut ranges = Vec::new();
        let mut b = IpIndex::builder();
        for owner in 0..400u32 {
            let start = (rnd() as u32) & 0xFFFF_0000 | (rnd() as u32 & 0xFFF);
            let len = (rnd() % 70_000) as u32;
            let r = IpRange::V4(start, start.saturating_add(len));
            ranges.push((r, owner % 37));
            b.add(r, owner % 37);
        }
        let idx = b.build();
        for _ in 0..20_000 {
            let probe = if rnd() % 2 == 0 {
                let (IpRange::V4(a, _), _) = ranges[(rnd() % 400) as usize] else {
                    continue;
                };
                a.wrapping_add((rnd() % 80_000) as u32)
            } else {
                rnd() as u32
            };
            let addr = IpAddr::V4(Ipv4Addr::from(probe));
            let mut want: Vec<u32> = ranges
                .iter()
                .filter(|(r, _)| r.contains(addr))
                .map(|(_, o)| *o)
                .collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(idx.lookup(addr), &want[..], "{addr}");
        }
    }
}
