//! What each version says to every agent, kept at index time: under each
//! semantics the restriction of an agent no group names and of every name
//! the file gives a group, and the usage preferences it states. Any
//! agent's restriction follows from them exactly ([`Matcher::names`],
//! [`pick_name`]), so `trends` counts stored values instead of parsing
//! bodies, for every agent, registry token or not. Pure: bytes in, values
//! out.

use std::collections::HashMap;

use botscope_robotstxt::{Matcher, Robots, Selection, Semantics, pick_name};

use crate::Restriction;

/// Counted work (as the matcher counts it) spent on one file's
/// restrictions at most, per semantics; past it the semantics is not kept
/// and trends compute that file from its body.
pub const CLASS_WORK_CAP: u64 = crate::BIAS_WORK_CAP;

/// Bytes of names kept per semantics at most (a file naming thousands of
/// robots); past them the semantics is not kept.
pub const CLASS_NAME_BYTES: usize = 32 * 1024;

/// The format of the stored value.
const FORMAT: u8 = 1;

/// The statements of usage preferences counted, in the order of their bit.
pub(crate) fn statements() -> impl Iterator<Item = String> {
    let usage = botscope_robotstxt::CATEGORIES
        .iter()
        .flat_map(|c| ["y", "n"].map(|v| format!("usage:{c}={v}")));
    let signal = botscope_robotstxt::SIGNALS
        .iter()
        .flat_map(|s| ["yes", "no"].map(|v| format!("signal:{s}={v}")));
    // Content-Signal's `use` levels (Cloudflare, July 2026), after the
    // yes/no signals: bits of values stored before them keep their place.
    let levels = botscope_robotstxt::USE_LEVELS
        .iter()
        .map(|l| format!("signal:use={l}"));
    usage.chain(signal).chain(levels)
}

/// What one file states about usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stated {
    /// A Content-Usage rule.
    pub usage: bool,
    /// A Content-Signal line.
    pub signal: bool,
    /// A `License` line (RSL): the site names a licence.
    pub license: bool,
    /// Bit `i`: the `i`th of the vocabulary's statements is made.
    pub statements: u16,
}

impl Stated {
    /// The usage preferences `robots` states anywhere: only the
    /// vocabulary's categories and the policy's signals with their defined
    /// values are counted as statements.
    pub fn of(robots: &Robots) -> Stated {
        let mut out = Stated::default();
        let cats = botscope_robotstxt::CATEGORIES;
        let sigs = botscope_robotstxt::SIGNALS;
        for rule in robots.groups.iter().flat_map(|g| g.content_usage.iter()) {
            out.usage = true;
            for (k, v) in &rule.value.usage {
                if let Some(i) = cats.iter().position(|c| c == k) {
                    match v.as_str() {
                        "y" => out.statements |= 1 << (2 * i),
                        "n" => out.statements |= 1 << (2 * i + 1),
                        _ => {}
                    }
                }
            }
        }
        out.license = !robots.licenses.is_empty();
        let base = 2 * cats.len();
        let levels = base + 2 * sigs.len();
        for line in robots
            .content_signals
            .iter()
            .chain(robots.groups.iter().flat_map(|g| g.content_signals.iter()))
        {
            out.signal = true;
            for sig in &line.value {
                if sig.name == "use" {
                    if let Some(i) = botscope_robotstxt::USE_LEVELS
                        .iter()
                        .position(|l| *l == sig.value)
                    {
                        out.statements |= 1 << (levels + i);
                    }
                    continue;
                }
                if let Some(i) = sigs.iter().position(|s| *s == sig.name) {
                    match sig.value.as_str() {
                        "yes" => out.statements |= 1 << (base + 2 * i),
                        "no" => out.statements |= 1 << (base + 2 * i + 1),
                        _ => {}
                    }
                }
            }
        }
        out
    }

    /// The statements made, as `usage:train-ai=n`, `signal:ai-train=no`.
    pub fn made(&self) -> impl Iterator<Item = String> + '_ {
        statements()
            .enumerate()
            .filter(|(i, _)| self.statements & (1 << i) != 0)
            .map(|(_, s)| s)
    }
}

/// Under one semantics: the restriction an unnamed agent meets, and each
/// name's (in [`Matcher::names`] order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// An agent no group names.
    pub unnamed: Restriction,
    /// The names, lower-cased, with the restriction of the agents they
    /// select; under Google's rules the names whose restriction is the
    /// unnamed one are left out (an exact token either names or not).
    pub names: Vec<(Vec<u8>, Restriction)>,
}

/// What a version says to every agent under both semantics, and the usage
/// preferences it states.
///
/// ```
/// use botscope_index::{Classes, Restriction};
/// use botscope_robotstxt::Semantics;
/// let c = Classes::of(b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp\n");
/// assert_eq!(c.restriction(Semantics::Google, "GPTBot"), Some(Restriction::Full));
/// assert_eq!(c.restriction(Semantics::Google, "CCBot"), Some(Restriction::Partial));
/// assert_eq!(Classes::decode(&c.encode()), Some(c));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classes {
    /// Under Google's rules (`None`: past the work or name budget).
    pub google: Option<Said>,
    /// Under the 1996 draft.
    pub draft1996: Option<Said>,
    /// The usage preferences stated.
    pub stated: Stated,
}

impl Classes {
    /// The classes of `body`, parsed and compiled here.
    pub fn of(body: &[u8]) -> Classes {
        let opts = botscope_robotstxt::ParseOptions::default();
        let robots = Robots::parse_with(body, &opts);
        let g = Matcher::compile(body, Semantics::Google, &opts);
        let d = Matcher::compile(body, Semantics::Draft1996, &opts);
        Classes::with(&robots, &g, &d)
    }

    /// The classes of a file already parsed and compiled under both
    /// semantics.
    pub fn with(robots: &Robots, google: &Matcher, draft1996: &Matcher) -> Classes {
        Classes::knowing(
            robots,
            [google, draft1996],
            [HashMap::new(), HashMap::new()],
        )
    }

    /// [`Classes::with`], the classes of some selections known already
    /// (the bias tables ask every named robot's).
    pub(crate) fn knowing(
        robots: &Robots,
        [google, draft1996]: [&Matcher; 2],
        [kg, kd]: [HashMap<Selection, Restriction>; 2],
    ) -> Classes {
        let dir = crate::bias::dir_of(robots);
        Classes {
            google: said(google, &dir, CLASS_WORK_CAP, kg),
            draft1996: said(draft1996, &dir, CLASS_WORK_CAP, kd),
            stated: Stated::of(robots),
        }
    }

    /// Under `semantics`.
    pub fn said(&self, semantics: Semantics) -> Option<&Said> {
        match semantics {
            Semantics::Google => self.google.as_ref(),
            Semantics::Draft1996 => self.draft1996.as_ref(),
        }
    }

    /// The restriction `agent` meets under `semantics` (`None`: not kept).
    pub fn restriction(&self, semantics: Semantics, agent: &str) -> Option<Restriction> {
        let s = self.said(semantics)?;
        let keys: Vec<&[u8]> = s.names.iter().map(|(n, _)| n.as_slice()).collect();
        Some(pick_name(semantics, &keys, agent).map_or(s.unnamed, |i| s.names[i].1))
    }

    /// The restrictions of `agents` under `semantics`, in order (`None`: not
    /// kept).
    pub fn restrictions(
        &self,
        semantics: Semantics,
        agents: &[String],
    ) -> Option<Vec<Restriction>> {
        let s = self.said(semantics)?;
        let keys: Vec<&[u8]> = s.names.iter().map(|(n, _)| n.as_slice()).collect();
        Some(
            agents
                .iter()
                .map(|a| pick_name(semantics, &keys, a).map_or(s.unnamed, |i| s.names[i].1))
                .collect(),
        )
    }

    /// The stored form (the index's `classes` column).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![
            FORMAT,
            u8::from(self.stated.usage)
                | (u8::from(self.stated.signal) << 1)
                | (u8::from(self.stated.license) << 2),
        ];
        out.extend_from_slice(&self.stated.statements.to_le_bytes());
        for s in [&self.google, &self.draft1996] {
            let Some(s) = s else {
                out.push(0xFF);
                continue;
            };
            out.push(class_byte(s.unnamed));
            varint(&mut out, s.names.len() as u64);
            for (n, r) in &s.names {
                varint(&mut out, n.len() as u64);
                out.extend_from_slice(n);
                out.push(class_byte(*r));
            }
        }
        out
    }

    /// Reads [`Classes::encode`]'s form; `None` for anything else.
    pub fn decode(b: &[u8]) -> Option<Classes> {
        let mut r = Reader { b, at: 0 };
        if r.byte()? != FORMAT {
            return None;
        }
        let flags = r.byte()?;
        let statements = u16::from_le_bytes([r.byte()?, r.byte()?]);
        let mut sems = [None, None];
        for s in &mut sems {
            let unnamed = r.byte()?;
            if unnamed == 0xFF {
                continue;
            }
            let n = usize::try_from(r.varint()?).ok()?;
            let mut names = Vec::with_capacity(n.min(b.len()));
            for _ in 0..n {
                let len = usize::try_from(r.varint()?).ok()?;
                let name = r.take(len)?.to_vec();
                names.push((name, class_of(r.byte()?)?));
            }
            *s = Some(Said {
                unnamed: class_of(unnamed)?,
                names,
            });
        }
        if r.at != b.len() {
            return None;
        }
        let [google, draft1996] = sems;
        Some(Classes {
            google,
            draft1996,
            stated: Stated {
                usage: flags & 1 != 0,
                signal: flags & 2 != 0,
                license: flags & 4 != 0,
                statements,
            },
        })
    }
}

/// Reads the stored classes of many versions for one list of agents:
/// each agent's product token found once, each value read in place.
pub(crate) struct Decider<'a> {
    semantics: Semantics,
    agents: &'a [String],
    /// Google's rules: lower-cased product token → the agents with it.
    tokens: HashMap<Vec<u8>, Vec<usize>>,
}

impl<'a> Decider<'a> {
    pub(crate) fn new(semantics: Semantics, agents: &'a [String]) -> Decider<'a> {
        let mut tokens: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        if semantics == Semantics::Google {
            for (i, a) in agents.iter().enumerate() {
                tokens
                    .entry(
                        botscope_robotstxt::product_token(a)
                            .as_bytes()
                            .to_ascii_lowercase(),
                    )
                    .or_default()
                    .push(i);
            }
        }
        Decider {
            semantics,
            agents,
            tokens,
        }
    }

    /// Each agent's restriction in the stored value `b` into `out` (one
    /// byte per agent, as stored), and what it states; `None` when the
    /// value does not keep this semantics (or is not one).
    pub(crate) fn decide(&self, b: &[u8], out: &mut Vec<u8>) -> Option<Stated> {
        let mut r = Reader { b, at: 0 };
        if r.byte()? != FORMAT {
            return None;
        }
        let flags = r.byte()?;
        let statements = u16::from_le_bytes([r.byte()?, r.byte()?]);
        let skip = match self.semantics {
            Semantics::Google => 0,
            Semantics::Draft1996 => 1,
        };
        for _ in 0..skip {
            if r.byte()? != 0xFF {
                for _ in 0..r.varint()? {
                    let len = usize::try_from(r.varint()?).ok()?;
                    r.take(len)?;
                    r.byte()?;
                }
            }
        }
        let unnamed = r.byte()?;
        class_of(unnamed)?;
        out.clear();
        out.resize(self.agents.len(), unnamed);
        let n = r.varint()?;
        match self.semantics {
            Semantics::Google => {
                for _ in 0..n {
                    let len = usize::try_from(r.varint()?).ok()?;
                    let name = r.take(len)?;
                    let c = r.byte()?;
                    if let Some(ix) = self.tokens.get(name) {
                        for &i in ix {
                            out[i] = c;
                        }
                    }
                }
            }
            Semantics::Draft1996 => {
                let mut decided = vec![false; self.agents.len()];
                for _ in 0..n {
                    let len = usize::try_from(r.varint()?).ok()?;
                    let name = r.take(len)?;
                    let c = r.byte()?;
                    for (i, a) in self.agents.iter().enumerate() {
                        if !decided[i] && pick_name(Semantics::Draft1996, &[name], a).is_some() {
                            decided[i] = true;
                            out[i] = c;
                        }
                    }
                }
            }
        }
        Some(Stated {
            usage: flags & 1 != 0,
            signal: flags & 2 != 0,
            license: flags & 4 != 0,
            statements,
        })
    }
}

/// A stored class byte as a restriction.
pub(crate) fn restriction_of(b: u8) -> Restriction {
    class_of(b).unwrap_or(Restriction::None)
}

/// The restrictions under one matcher, within `cap` units of work.
fn said(
    m: &Matcher,
    dir: &[(String, Vec<u8>)],
    cap: u64,
    mut known: HashMap<Selection, Restriction>,
) -> Option<Said> {
    let mut work = 0u64;
    let mut class = |sel: &Selection, work: &mut u64| -> Option<Restriction> {
        if let Some(r) = known.get(sel) {
            return Some(*r);
        }
        let ix = m.index_selection(sel, work);
        let mut r = Restriction::None;
        if !m.check_indexed(&ix, b"/", work).allowed {
            r = Restriction::Full;
        } else {
            for (_, p) in dir {
                if *work > cap {
                    return None;
                }
                if !m.check_indexed(&ix, p, work).allowed {
                    r = Restriction::Partial;
                    break;
                }
            }
        }
        if *work > cap {
            return None;
        }
        known.insert(sel.clone(), r);
        Some(r)
    };
    let unnamed = class(&m.unnamed(), &mut work)?;
    let mut names = Vec::new();
    let mut bytes = 0usize;
    for (name, sel) in m.names() {
        let r = class(&sel, &mut work)?;
        if m.semantics() == Semantics::Google && r == unnamed {
            continue;
        }
        bytes += name.len() + 2;
        if bytes > CLASS_NAME_BYTES {
            return None;
        }
        names.push((name, r));
    }
    Some(Said { unnamed, names })
}

fn class_byte(r: Restriction) -> u8 {
    match r {
        Restriction::None => 0,
        Restriction::Partial => 1,
        Restriction::Full => 2,
    }
}

fn class_of(b: u8) -> Option<Restriction> {
    match b {
        0 => Some(Restriction::None),
        1 => Some(Restriction::Partial),
        2 => Some(Restriction::Full),
        _ => None,
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let x = *self.b.get(self.at)?;
        self.at += 1;
        Some(x)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let x = self.byte()?;
            v |= u64::from(x & 0x7F) << shift;
            if x & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every agent's restriction from the stored classes equals the one
    /// computed from the body, under both semantics, on crafted files
    /// where names overlap.
    #[test]
    fn stored_classes_equal_the_bodys() {
        let bodies: [&[u8]; 5] = [
            b"User-agent: bot\nDisallow: /a\n\nUser-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n",
            b"User-agent: *\nDisallow: /\n\nUser-agent: GPTBot\nAllow: /\n",
            b"User-agent: gpt\nDisallow: /\n\nUser-agent: gptbot\nAllow: /\nDisallow: /x\n",
            b"",
            b"Disallow: /orphan\nUser-agent: A\nUser-agent: *\nDisallow: /p\n",
        ];
        let agents: Vec<String> = [
            "GPTBot",
            "gpt",
            "Googlebot",
            "bot",
            "robot",
            "*",
            "ccbot",
            "a",
            "A/2.0",
            "",
        ]
        .map(str::to_owned)
        .to_vec();
        for body in bodies {
            let c = Classes::of(body);
            for sem in [Semantics::Google, Semantics::Draft1996] {
                let mut out = Vec::new();
                Decider::new(sem, &agents)
                    .decide(&c.encode(), &mut out)
                    .expect("kept");
                let got: Vec<Restriction> = out.into_iter().map(restriction_of).collect();
                assert_eq!(got, crate::restrictions(body, &agents, sem), "{sem:?}");
            }
            let c = Classes::decode(&c.encode()).expect("round trip");
            for sem in [Semantics::Google, Semantics::Draft1996] {
                assert_eq!(
                    c.restrictions(sem, &agents),
                    Some(crate::restrictions(body, &agents, sem)),
                    "{sem:?} {}",
                    String::from_utf8_lossy(body)
                );
            }
        }
    }

    #[test]
    fn too_many_names_are_not_kept_and_say_so() {
        let body = botscope_testkit::many_named_groups(5_000);
        let name = botscope_testkit::robot_name;
        let c = Classes::of(&body);
        assert_eq!(c.google, None);
        assert_eq!(c.draft1996, None);
        assert_eq!(c.restriction(Semantics::Google, &name(1)), None);
        assert_eq!(Classes::decode(&c.encode()), Some(c));
    }

    #[test]
    fn statements_and_garbage() {
        let c = Classes::of(
            b"User-agent: *\nContent-Usage: train-ai=n\nContent-Signal: ai-train=no, search=yes\n",
        );
        assert!(c.stated.usage && c.stated.signal);
        assert_eq!(
            c.stated.made().collect::<Vec<_>>(),
            [
                "usage:train-ai=n",
                "signal:search=yes",
                "signal:ai-train=no"
            ]
        );
        for bad in [
            &b""[..],
            b"\x02",
            b"\x01\x00\x00\x00\x09",
            b"\x01\x00\x00\x00\x00\x05",
        ] {
            assert_eq!(Classes::decode(bad), None);
        }
    }
}
