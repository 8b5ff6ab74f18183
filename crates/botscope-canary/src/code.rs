//! The mark of one client in one period, and its two spellings: the code
//! (`bsc-` and base32), which carries the client and the period encrypted
//! and authenticated under the site's canary key, so that the key alone
//! reads it back; and the phrase (three words of a fixed list and two
//! digits), derived from the same inputs, read back through the issuance
//! record.
//!
//! The code is a deterministic authenticated encryption (SIV): a 64-bit
//! tag, HMAC-SHA256 of the plaintext under one subkey, is the IV of a
//! keystream (HMAC-SHA256 of the tag and a counter under another) that
//! the plaintext is XORed with. The same client in the same period gets
//! the same code; a code made under another key, or changed by a bit,
//! reads as nothing (one chance in 2^64).

use std::net::IpAddr;

use ring::hmac;
use serde::Serialize;

/// What every code starts with.
pub const PREFIX: &str = "bsc-";
/// The fewest bytes of a canary key.
pub const MIN_KEY_BYTES: usize = 32;
/// Periods are counted in seconds from 2020-01-01T00:00:00Z (a `u32`
/// reaches 2156).
pub const EPOCH: u64 = 1_577_836_800;
/// The longest bot name a code carries (longer ones are cut).
pub const MAX_BOT_BYTES: usize = 32;
/// The longest code, in base32 letters after the prefix.
pub const MAX_CODE_LETTERS: usize = 80;
const TAG: usize = 8;

/// The User-Agent families a code names a client by (their place in this
/// list is what the code carries: the list only grows at its end).
pub const FAMILIES: &[&str] = &[
    "other",
    "chrome",
    "firefox",
    "safari",
    "edge",
    "opera",
    "headless-chrome",
    "samsung-internet",
    "curl",
    "wget",
    "python-requests",
    "python-urllib",
    "python-aiohttp",
    "python-httpx",
    "go-http-client",
    "java",
    "okhttp",
    "node",
    "scrapy",
    "apache-httpclient",
    "libwww-perl",
    "php",
    "empty",
];

/// A User-Agent family: a place in [`FAMILIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Family(u8);

impl Family {
    /// The family of `user_agent`, by the words that name it (the more
    /// specific first: HeadlessChrome and Edge say Chrome too, Chrome
    /// says Safari).
    pub fn of(user_agent: &str) -> Family {
        let ua = user_agent.to_ascii_lowercase();
        if ua.trim().is_empty() {
            return Family::named("empty");
        }
        const RULES: &[(&str, &str)] = &[
            ("headlesschrome", "headless-chrome"),
            ("scrapy", "scrapy"),
            ("python-requests", "python-requests"),
            ("python-urllib", "python-urllib"),
            ("aiohttp", "python-aiohttp"),
            ("python-httpx", "python-httpx"),
            ("go-http-client", "go-http-client"),
            ("okhttp", "okhttp"),
            ("apache-httpclient", "apache-httpclient"),
            ("libwww-perl", "libwww-perl"),
            ("guzzlehttp", "php"),
            ("php/", "php"),
            ("node-fetch", "node"),
            ("axios/", "node"),
            ("undici", "node"),
            ("java/", "java"),
            ("curl/", "curl"),
            ("wget/", "wget"),
            ("edg/", "edge"),
            ("edge/", "edge"),
            ("opr/", "opera"),
            ("opera", "opera"),
            ("samsungbrowser", "samsung-internet"),
            ("firefox/", "firefox"),
            ("chrome/", "chrome"),
            ("crios/", "chrome"),
            ("safari/", "safari"),
        ];
        RULES
            .iter()
            .find(|(word, _)| ua.contains(word))
            .map_or(Family(0), |(_, f)| Family::named(f))
    }

    fn named(name: &str) -> Family {
        Family(
            FAMILIES
                .iter()
                .position(|f| *f == name)
                .and_then(|i| u8::try_from(i).ok())
                .unwrap_or(0),
        )
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        FAMILIES
            .get(usize::from(self.0))
            .copied()
            .unwrap_or("other")
    }
}

impl<'de> serde::Deserialize<'de> for Family {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Family, D::Error> {
        let name = String::deserialize(d)?;
        FAMILIES
            .iter()
            .position(|f| *f == name)
            .and_then(|i| u8::try_from(i).ok())
            .map(Family)
            .ok_or_else(|| serde::de::Error::custom(format!("no User-Agent family {name:?}")))
    }
}

impl Serialize for Family {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Who a page was marked for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Client {
    /// A client the gate verified (by published addresses, reverse DNS
    /// or signature): its registry name, whatever its address.
    Verified {
        /// The registry name.
        bot: String,
    },
    /// Any other client: its network (/24 or /48), the network's AS when
    /// the owner database knows it, and its User-Agent family.
    Network {
        /// The network's first address.
        network: IpAddr,
        /// Its prefix length (24 or 48).
        prefix: u8,
        /// The AS announcing it, when known.
        asn: Option<u32>,
        /// The User-Agent family.
        family: Family,
    },
}

impl Client {
    /// An unverified client from `ip` (IPv4 /24, IPv6 /48; an IPv4-mapped
    /// IPv6 address is IPv4) sending `user_agent`.
    pub fn network(ip: IpAddr, asn: Option<u32>, user_agent: &str) -> Client {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let (network, prefix) = match ip {
            IpAddr::V4(v4) => {
                let o = v4.octets();
                (IpAddr::from([o[0], o[1], o[2], 0]), 24)
            }
            IpAddr::V6(v6) => {
                let s = v6.segments();
                (IpAddr::from([s[0], s[1], s[2], 0, 0, 0, 0, 0]), 48)
            }
        };
        Client::Network {
            network,
            prefix,
            asn,
            family: Family::of(user_agent),
        }
    }

    /// In words: `Googlebot (verified)`, `198.51.100.0/24 (AS64500) chrome`.
    pub fn describe(&self) -> String {
        match self {
            Client::Verified { bot } => format!("{bot} (verified)"),
            Client::Network {
                network,
                prefix,
                asn,
                family,
            } => match asn {
                Some(a) => format!("{network}/{prefix} (AS{a}) {}", family.name()),
                None => format!("{network}/{prefix} {}", family.name()),
            },
        }
    }
}

/// A client in a period: what a page is marked with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct Mark {
    /// Who.
    pub client: Client,
    /// When its period began (Unix seconds).
    pub period_start: u64,
}

impl Mark {
    /// `client`'s mark for the period of `period_secs` seconds holding
    /// `now` (Unix seconds; periods are counted from [`EPOCH`]).
    pub fn at(client: Client, now: u64, period_secs: u64) -> Mark {
        let p = period_secs.max(1);
        let since = now.saturating_sub(EPOCH);
        let start = EPOCH + since / p * p;
        // Past 2156 the period stays the last one a code can say.
        let start = start.min(EPOCH + u64::from(u32::MAX));
        Mark {
            client,
            period_start: start,
        }
    }

    /// The bytes the code encrypts: a kind byte (0 verified, 1 IPv4, 2
    /// IPv6; 4 added with an AS), then the bot's name (its length first)
    /// or the network's leading bytes, the AS and the family; then the
    /// period's start.
    fn plaintext(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(40);
        match &self.client {
            Client::Verified { bot } => {
                let mut end = bot.len().min(MAX_BOT_BYTES);
                while !bot.is_char_boundary(end) {
                    end -= 1;
                }
                p.push(0);
                p.push(u8::try_from(end).unwrap_or(0));
                p.extend_from_slice(&bot.as_bytes()[..end]);
            }
            Client::Network {
                network,
                asn,
                family,
                ..
            } => {
                let with_asn = if asn.is_some() { 4 } else { 0 };
                match network {
                    IpAddr::V4(v4) => {
                        p.push(1 | with_asn);
                        p.extend_from_slice(&v4.octets()[..3]);
                    }
                    IpAddr::V6(v6) => {
                        p.push(2 | with_asn);
                        p.extend_from_slice(&v6.octets()[..6]);
                    }
                }
                if let Some(a) = asn {
                    p.extend_from_slice(&a.to_be_bytes());
                }
                p.push(family.0);
            }
        }
        let since = u32::try_from(self.period_start.saturating_sub(EPOCH)).unwrap_or(u32::MAX);
        p.extend_from_slice(&since.to_be_bytes());
        p
    }

    /// The mark `plaintext` says, when it is one.
    fn read(p: &[u8]) -> Option<Mark> {
        let (&kind, rest) = p.split_first()?;
        let (client, rest) = match kind & 3 {
            0 if kind == 0 => {
                let (&n, rest) = rest.split_first()?;
                let n = usize::from(n);
                let name = std::str::from_utf8(rest.get(..n)?).ok()?;
                (
                    Client::Verified {
                        bot: name.to_owned(),
                    },
                    &rest[n..],
                )
            }
            k @ (1 | 2) => {
                let len = if k == 1 { 3 } else { 6 };
                let net = rest.get(..len)?;
                let network = if k == 1 {
                    IpAddr::from([net[0], net[1], net[2], 0])
                } else {
                    let mut o = [0u8; 16];
                    o[..6].copy_from_slice(net);
                    IpAddr::from(o)
                };
                let mut rest = &rest[len..];
                let asn = if kind & 4 != 0 {
                    let a = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
                    rest = &rest[4..];
                    Some(a)
                } else {
                    None
                };
                let (&f, rest) = rest.split_first()?;
                if usize::from(f) >= FAMILIES.len() || kind & !7 != 0 {
                    return None;
                }
                (
                    Client::Network {
                        network,
                        prefix: if k == 1 { 24 } else { 48 },
                        asn,
                        family: Family(f),
                    },
                    rest,
                )
            }
            _ => return None,
        };
        let since: [u8; 4] = rest.try_into().ok()?;
        Some(Mark {
            client,
            period_start: EPOCH + u64::from(u32::from_be_bytes(since)),
        })
    }
}

/// Why a canary key is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortKey(pub usize);

impl std::fmt::Display for ShortKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a canary key is at least {MIN_KEY_BYTES} bytes ({} given): make one with `head -c 32 /dev/urandom > canary.key`",
            self.0
        )
    }
}

impl std::error::Error for ShortKey {}

/// The site's canary key, split into its three uses.
#[derive(Clone)]
pub struct CanaryKey {
    tag: hmac::Key,
    stream: hmac::Key,
    phrase: hmac::Key,
}

impl std::fmt::Debug for CanaryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CanaryKey(…)")
    }
}

impl CanaryKey {
    /// From the key's bytes (at least [`MIN_KEY_BYTES`]).
    pub fn new(bytes: &[u8]) -> Result<CanaryKey, ShortKey> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(ShortKey(bytes.len()));
        }
        let root = hmac::Key::new(hmac::HMAC_SHA256, bytes);
        let sub = |label: &str| {
            hmac::Key::new(
                hmac::HMAC_SHA256,
                hmac::sign(&root, label.as_bytes()).as_ref(),
            )
        };
        Ok(CanaryKey {
            tag: sub("botscope canary tag"),
            stream: sub("botscope canary stream"),
            phrase: sub("botscope canary phrase"),
        })
    }

    fn keystream(&self, tag: &[u8], out: &mut [u8]) {
        for (i, block) in out.chunks_mut(32).enumerate() {
            let mut msg = tag.to_vec();
            msg.push(u8::try_from(i).unwrap_or(u8::MAX));
            let ks = hmac::sign(&self.stream, &msg);
            for (b, k) in block.iter_mut().zip(ks.as_ref()) {
                *b ^= k;
            }
        }
    }

    /// The code of `m`: `bsc-` and its base32 (lower case).
    pub fn code(&self, m: &Mark) -> String {
        let mut p = m.plaintext();
        let tag = hmac::sign(&self.tag, &p);
        let tag = &tag.as_ref()[..TAG];
        self.keystream(tag, &mut p);
        let mut bytes = tag.to_vec();
        bytes.extend_from_slice(&p);
        let mut s = String::from(PREFIX);
        s.push_str(
            &data_encoding::BASE32_NOPAD
                .encode(&bytes)
                .to_ascii_lowercase(),
        );
        s
    }

    /// The mark a code says (with or without its prefix, any case), when
    /// it was made under this key.
    pub fn decode(&self, code: &str) -> Option<Mark> {
        let letters = code
            .get(..PREFIX.len())
            .filter(|p| p.eq_ignore_ascii_case(PREFIX))
            .map_or(code, |_| &code[PREFIX.len()..]);
        if letters.len() > MAX_CODE_LETTERS {
            return None;
        }
        let bytes = data_encoding::BASE32_NOPAD
            .decode(letters.to_ascii_uppercase().as_bytes())
            .ok()?;
        if bytes.len() <= TAG {
            return None;
        }
        let (tag, ct) = bytes.split_at(TAG);
        let mut p = ct.to_vec();
        self.keystream(tag, &mut p);
        // The tag compared in constant time.
        let full = hmac::sign(&self.tag, &p);
        let differ = full.as_ref()[..TAG]
            .iter()
            .zip(tag)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if differ != 0 {
            return None;
        }
        Mark::read(&p)
    }

    /// The phrase of `m`: three words of the fixed list and two digits,
    /// from the HMAC of the same bytes the code encrypts.
    pub fn phrase(&self, m: &Mark) -> crate::phrase::Phrase {
        let h = hmac::sign(&self.phrase, &m.plaintext());
        crate::phrase::Phrase::from_digest(h.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> CanaryKey {
        CanaryKey::new(&[b; 32]).expect("key")
    }

    #[test]
    fn codes_read_back_under_their_key_only() {
        let k = key(1);
        let marks = [
            Mark::at(
                Client::Verified {
                    bot: "Googlebot".into(),
                },
                1_800_000_000,
                7 * 86_400,
            ),
            Mark::at(
                Client::network(
                    "198.51.100.77".parse().unwrap_or([0, 0, 0, 0].into()),
                    Some(64_500),
                    "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36",
                ),
                1_800_000_000,
                3_600,
            ),
            Mark::at(
                Client::network(
                    "2001:db8:1:2::9".parse().unwrap_or([0, 0, 0, 0].into()),
                    None,
                    "curl/8.5",
                ),
                1_800_000_000,
                1,
            ),
        ];
        for m in &marks {
            let c = k.code(m);
            assert!(c.starts_with(PREFIX), "{c}");
            assert!(c.len() <= PREFIX.len() + 40, "{c}");
            assert_eq!(k.decode(&c).as_ref(), Some(m));
            assert_eq!(k.decode(&c.to_ascii_uppercase()).as_ref(), Some(m));
            assert_eq!(k.decode(&c[PREFIX.len()..]).as_ref(), Some(m));
            // The same client, the same period: the same code.
            assert_eq!(k.code(m), c);
            // Another key reads nothing; neither does a changed letter.
            assert_eq!(key(2).decode(&c), None);
            for i in PREFIX.len()..c.len() {
                let mut b = c.clone().into_bytes();
                b[i] = if b[i] == b'a' { b'b' } else { b'a' };
                let changed = String::from_utf8(b).unwrap_or_default();
                assert_eq!(k.decode(&changed), None, "{changed}");
            }
        }
        assert_eq!(
            marks[1].client.describe(),
            "198.51.100.0/24 (AS64500) chrome"
        );
        assert_eq!(marks[2].client.describe(), "2001:db8:1::/48 curl");
        // The next period, another code; the same network, the same.
        let next = Mark::at(marks[1].client.clone(), 1_800_000_000 + 3_600, 3_600);
        assert_ne!(k.code(&next), k.code(&marks[1]));
        let neighbour = Mark::at(
            Client::network(
                "198.51.100.3".parse().unwrap_or([0, 0, 0, 0].into()),
                Some(64_500),
                "Chrome/131.0 Safari/537.36",
            ),
            1_800_000_000,
            3_600,
        );
        assert_eq!(k.code(&neighbour), k.code(&marks[1]));
        assert!(CanaryKey::new(&[0; 31]).is_err());
        for junk in ["", "bsc-", "bsc-aa", "bsc-!!!!", &"a".repeat(500)] {
            assert_eq!(k.decode(junk), None);
        }
    }

    #[test]
    fn families_are_told_by_their_words() {
        for (ua, f) in [
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 Safari/537.36",
                "headless-chrome",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/130.0 Safari/537.36 Edg/130.0",
                "edge",
            ),
            (
                "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 Version/17.0 Safari/605.1.15",
                "safari",
            ),
            (
                "Mozilla/5.0 (X11; rv:130.0) Gecko/20100101 Firefox/130.0",
                "firefox",
            ),
            ("python-requests/2.31.0", "python-requests"),
            ("", "empty"),
            ("SomethingElse/1.0", "other"),
        ] {
            assert_eq!(Family::of(ua).name(), f, "{ua}");
        }
    }
}
