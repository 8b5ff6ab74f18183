//! The compiled matcher: parse once, answer many queries without
//! allocating.

use std::borrow::Cow;

use crate::agent::product_token;
use crate::parse::RuleKind;
use crate::scan::ParseOptions;
use crate::url::{Recoded, Recoding, path_of};

mod compile;
pub(crate) use compile::compile_for;
mod glob;
mod indexed;
pub use glob::SCAN_PER_PATTERN_BYTE;
pub(crate) use glob::pattern_matches;
use glob::{glob_matches, glob_tail, unanchored};
pub use indexed::IndexedSelection;

/// Which reading of robots.txt to apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Semantics {
    /// RFC 9309 as Google's reference parser implements it: longest match
    /// wins, Allow wins a tie, `*` and `$` wildcards, product-token
    /// user-agent match, all groups for an agent merged.
    #[default]
    Google,
    /// The 1996 draft: the first record whose User-agent value is a
    /// case-insensitive substring of the robot's name (else the `*`
    /// record), the first matching rule in file order, `%XX` decoded
    /// except `%2F`, no wildcards.
    Draft1996,
}

impl Semantics {
    /// `google` or `draft1996`.
    pub fn as_str(self) -> &'static str {
        match self {
            Semantics::Google => "google",
            Semantics::Draft1996 => "draft1996",
        }
    }
}

impl std::str::FromStr for Semantics {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "google" | "rfc9309" => Ok(Semantics::Google),
            "draft1996" | "1996" => Ok(Semantics::Draft1996),
            _ => Err(format!(
                "unknown semantics `{s}` (expected google or draft1996)"
            )),
        }
    }
}

/// Which group decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupMatch {
    /// One or more groups naming the agent.
    Specific,
    /// The `*` group(s).
    Global,
    /// No group applies: everything is allowed.
    None,
}

/// The rule that decided a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchedRule<'m> {
    /// 1-based line number of the rule.
    pub line: u32,
    /// Allow or Disallow.
    pub kind: RuleKind,
    /// The pattern as matched (normalised: `%xx` in upper case, non-ASCII
    /// percent-encoded under Google's semantics, `%XX` decoded under the
    /// 1996 draft). A wildcard-free pattern with non-ASCII bytes is kept as
    /// written and reported so.
    pub pattern: &'m [u8],
}

impl MatchedRule<'_> {
    /// The pattern as text.
    pub fn pattern_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.pattern)
    }
}

/// The answer to "may this agent fetch this URL?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict<'m> {
    /// True when the URL may be fetched.
    pub allowed: bool,
    /// The rule that decided, if any matched. An allowed verdict can name
    /// a rule: an Allow, or an empty Disallow (which allows everything).
    pub rule: Option<MatchedRule<'m>>,
    /// Which group applied.
    pub group: GroupMatch,
}

const F_ALLOW: u8 = 1;
const F_EXACT: u8 = 2;
const F_GLOB: u8 = 4;
/// Google's `index.html` rule: an Allow of `/dir/index.htm…` also allows
/// exactly `/dir/`.
const F_DIR: u8 = 8;

/// The pattern is stored as written (it has non-ASCII bytes and no
/// wildcard) and is escaped on the fly when matched, so that a compiled
/// file stays within twice its size.
const F_RAW: u8 = 64;

/// A wildcard rule whose literal start is only `/` (`/*.php$`): its
/// `head` holds two adjacent literal bytes (the rarest pair in URLs) that
/// any matching path contains side by side, a filter before the full
/// match.
const F_PROBE: u8 = 128;

/// The rule's literal text starts with `/` and a known byte at index 1.
const F_HEAD1: u8 = 16;
/// … and a known byte at index 2.
const F_HEAD2: u8 = 32;

#[derive(Debug, Clone, Copy)]
struct CRule {
    off: u32,
    line: u32,
    len: u16,
    priority: u16,
    flags: u8,
    /// Bytes 1 and 2 of the literal start of the pattern: a cheap filter
    /// before the full comparison (they fit in the struct's padding).
    head: [u8; 2],
    /// How many bytes the pattern's stored start has that a matching
    /// path starts with (its literal start, up to a `*` or a final `$`;
    /// 0 when stored as written, [`F_RAW`]), at most 255: its first eight
    /// are compared as one word before the full match ([`WORD`]).
    lit: u8,
}

impl CRule {
    /// Match order within a group as one number, highest first: longest
    /// pattern, then Allow before Disallow, then earlier line.
    #[inline]
    fn rank(&self) -> u64 {
        (u64::from(self.priority) << 33)
            | (u64::from(self.flags & F_ALLOW) << 32)
            | u64::from(u32::MAX - self.line)
    }
}

#[derive(Debug, Clone, Copy)]
struct CGroup {
    rules_start: u32,
    crawl_delay: f32,
    global: bool,
    /// Google's semantics: how much longer than the shortest path it
    /// matches a rule of the group can be (its `*`s and its end anchor),
    /// at most: a rule whose priority passes a path's length by more
    /// cannot match it ([`Matcher::best_in_group`] starts after them).
    slack: u16,
}

#[derive(Debug, Clone, Copy)]
struct CAgent {
    off: u32,
    len: u16,
    group: u32,
}

/// A robots.txt file compiled for matching.
///
/// ```
/// use botscope_robotstxt::{Matcher, Semantics};
/// let m = Matcher::new(b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n");
/// assert!(!m.is_allowed("Googlebot", "https://example.com/private/x"));
/// let v = m.check("Mozilla/5.0 (compatible; Googlebot/2.1)", "https://example.com/private/ok/1");
/// assert!(v.allowed);
/// assert_eq!(v.rule.map(|r| r.line), Some(3));
/// ```
#[derive(Debug, Clone)]
pub struct Matcher {
    semantics: Semantics,
    arena: Box<[u8]>,
    rules: Box<[CRule]>,
    groups: Box<[CGroup]>,
    agents: Box<[CAgent]>,
    /// Google's semantics: the agents ordered by lower-cased token, then
    /// group, each (token, group) pair once, so that a query visits each
    /// group naming its token once, found by binary search.
    by_token: Box<[u32]>,
    /// Per rule, its head filter, two bytes ([`head_of`]), kept apart
    /// from the rules so that a group's filters are tested sixteen at a
    /// time; empty when no group has that many rules (two bytes a rule
    /// are then not worth it).
    heads: Box<[u8]>,
}

/// Rules whose head filters are tested at once.
const HEAD_CHUNK: usize = 16;

/// A head byte a rule does not know, and a path byte past the path's
/// end: `#`, which no pattern holds (it starts a comment). A path byte
/// `#` is only ever accepted by a lane that accepts any byte; a rule's
/// `#`, were there one, would accept any byte: a weaker filter, never a
/// wrong verdict.
const ANY: u8 = b'#';

/// Bytes of a rule's literal start compared as one word with the
/// path's first bytes ([`Matcher::word_agrees`]). No pattern holds a
/// zero (a NUL ends its line), and a path shorter than a word is padded
/// with zeros: a rule longer than the path never agrees.
const WORD: usize = 8;

/// A path's first [`WORD`] bytes, zeros past its end.
#[inline]
fn path_word(path: &[u8]) -> u64 {
    let mut w = [0u8; WORD];
    if let Some(first) = path.get(..WORD) {
        w.copy_from_slice(first);
    } else {
        w[..path.len()].copy_from_slice(path);
    }
    u64::from_le_bytes(w)
}

/// A path's bytes 1 and 2 as a head.
#[inline]
fn path_head(path: &[u8]) -> [u8; 2] {
    [
        path.get(1).copied().unwrap_or(ANY),
        path.get(2).copied().unwrap_or(ANY),
    ]
}

/// A rule's head filter: the bytes 1 and 2 its literal start gives,
/// [`ANY`] where it gives none.
fn head_of(r: &CRule) -> [u8; 2] {
    let mut lanes = [ANY, ANY];
    if r.flags & F_HEAD1 != 0 {
        lanes[0] = r.head[0];
        if r.flags & F_HEAD2 != 0 {
            lanes[1] = r.head[1];
        }
    }
    lanes
}

/// The groups that apply to one agent, found once and asked about many
/// paths ([`Matcher::select`], [`Matcher::check_selected`]). Two agents
/// with equal selections get equal verdicts on every path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Selection {
    /// Indices of the groups, in file order.
    groups: Vec<u32>,
    specific: bool,
}

impl Selection {
    /// Which kind of group applies.
    pub fn group_match(&self) -> GroupMatch {
        if self.specific {
            GroupMatch::Specific
        } else if self.groups.is_empty() {
            GroupMatch::None
        } else {
            GroupMatch::Global
        }
    }
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Which of `names` (a [`Matcher::names`] list under `semantics`, names
/// lower-cased) selects `agent` (a product token or a whole User-Agent
/// header): under Google's rules the one equal to the agent's product
/// token, under the 1996 draft the first one the agent contains; `None`
/// when no name does (the agent gets [`Matcher::unnamed`]). Costs the
/// names' length at most once per byte of the agent.
pub fn pick_name<N: AsRef<[u8]>>(semantics: Semantics, names: &[N], agent: &str) -> Option<usize> {
    match semantics {
        Semantics::Google => {
            let token = product_token(agent).as_bytes();
            names
                .iter()
                .position(|n| n.as_ref().eq_ignore_ascii_case(token))
        }
        Semantics::Draft1996 => names.iter().position(|n| {
            let n = n.as_ref();
            !n.is_empty() && contains_ignore_case(agent.as_bytes(), n)
        }),
    }
}

/// ASCII case-insensitive order of byte strings.
fn cmp_ignore_case(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.iter()
        .map(u8::to_ascii_lowercase)
        .cmp(b.iter().map(u8::to_ascii_lowercase))
}

/// Where a pair of adjacent bytes falls in [`PathBytes`]'s set.
#[inline]
fn pair_slot(a: u8, b: u8) -> usize {
    (((u32::from(a) << 8) | u32::from(b)).wrapping_mul(0x9E37_79B1) >> 24) as usize
}

/// The pairs of adjacent bytes of one path, found once per query when
/// enough wildcard rules ask: a rule needing a pair the path lacks cannot
/// match.
#[derive(Default)]
struct PathBytes {
    /// The bytes of the path, a bit each, built at the first probed
    /// wildcard rule (a load and an or per byte): a rule needing a pair
    /// one of whose bytes the path lacks cannot match.
    seen: Option<[u64; 4]>,
    /// Probed wildcard rules met so far (the set is built at the fourth:
    /// building it costs about what three rules matched outright do).
    met: u8,
    /// A byte per slot ([`pair_slot`]): building it is a store per pair,
    /// none waiting for another (a bit set's read-modify-write per pair
    /// made each wait for the one before).
    set: Option<[bool; 256]>,
}

impl PathBytes {
    /// Whether the path may match a rule probing `head` (false only when
    /// it surely cannot). Building the set is one pass over the path,
    /// added to `work` as a rule's comparison over it would be.
    #[inline]
    fn admits(&mut self, path: &[u8], head: [u8; 2], work: &mut u64) -> bool {
        let seen = self.seen.get_or_insert_with(|| {
            *work += 1 + (path.len() >> 5) as u64;
            let mut seen = [0u64; 4];
            for &b in path {
                seen[usize::from(b >> 6)] |= 1 << (b & 63);
            }
            seen
        });
        let has = |b: u8| seen[usize::from(b >> 6)] >> (b & 63) & 1 == 1;
        if !(has(head[0]) && has(head[1])) {
            return false;
        }
        let set = match &self.set {
            Some(set) => set,
            None => {
                self.met += 1;
                if self.met < 4 {
                    return true;
                }
                *work += 1 + (path.len() >> 5) as u64;
                let set = self.set.insert([false; 256]);
                for w in path.windows(2) {
                    set[pair_slot(w[0], w[1])] = true;
                }
                set
            }
        };
        set[pair_slot(head[0], head[1])]
    }
}

/// Matches a pattern stored as written (non-ASCII, no wildcard) against a
/// path, escaping the pattern on the fly.
fn raw_matches(path: &[u8], raw: &[u8], flags: u8) -> bool {
    let (lit, exact) = if flags & F_DIR != 0 {
        (
            &raw[..memchr::memrchr(b'/', raw).map_or(0, |i| i + 1)],
            true,
        )
    } else if flags & F_EXACT != 0 {
        (&raw[..raw.len() - 1], true)
    } else {
        (raw, false)
    };
    let mut p = path.iter();
    for b in Recoded::new(lit, Recoding::Escape) {
        if p.next() != Some(&b) {
            return false;
        }
    }
    !exact || p.next().is_none()
}

/// Case-insensitive ASCII substring test.
fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// The 1996 draft's prefix match, decoding `%XX` in the path on the fly.
fn draft_prefix(path: &[u8], pat: &[u8]) -> bool {
    let mut p = Recoded::new(path, Recoding::DraftDecode);
    pat.iter().all(|&b| p.next() == Some(b))
}

/// A verdict without its borrow of the matcher, its rule by place
/// ([`Matcher::verdict_of`]): kept by a batch to answer again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decided {
    allowed: bool,
    rule: Option<u32>,
    group: GroupMatch,
}

impl Decided {
    /// Google's verdict from the best rule that matched: none, or an
    /// empty pattern, allows.
    fn google(best: Option<Best>, group: GroupMatch) -> Decided {
        Decided {
            allowed: match best {
                Some(b) if b.priority > 0 => b.allow,
                _ => true,
            },
            rule: best.map(|b| b.idx),
            group,
        }
    }
}

/// The best match so far: highest [`CRule::rank`] wins (longest pattern,
/// then Allow, then earliest line).
#[derive(Clone, Copy)]
struct Best {
    rank: u64,
    priority: u16,
    allow: bool,
    idx: u32,
}

impl Matcher {
    /// Compiles `input` under Google's semantics with the default parse cap.
    pub fn new(input: &[u8]) -> Matcher {
        Matcher::compile(input, Semantics::Google, &ParseOptions::default())
    }

    /// Compiles `input` under the given semantics and options.
    pub fn compile(input: &[u8], semantics: Semantics, opts: &ParseOptions) -> Matcher {
        compile::compile(input, semantics, opts)
    }

    /// The semantics this matcher applies.
    pub fn semantics(&self) -> Semantics {
        self.semantics
    }

    /// Heap bytes held by the compiled form.
    pub fn heap_size(&self) -> usize {
        self.arena.len()
            + size_of_val(&*self.rules)
            + size_of_val(&*self.groups)
            + size_of_val(&*self.agents)
            + size_of_val(&*self.by_token)
            + size_of_val(&*self.heads)
    }

    /// The groups naming `token` (Google's semantics), each once, in file
    /// order.
    fn named_groups<'a>(&'a self, token: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
        let lo = self.by_token.partition_point(|&i| {
            cmp_ignore_case(self.token(&self.agents[i as usize]), token).is_lt()
        });
        self.by_token[lo..]
            .iter()
            .map(|&i| &self.agents[i as usize])
            .take_while(move |a| self.token(a).eq_ignore_ascii_case(token))
            .map(|a| a.group as usize)
    }

    /// The groups that apply to `agent` (a product token or a whole
    /// User-Agent header, as for [`Matcher::check`]).
    pub fn select(&self, agent: &str) -> Selection {
        self.select_counted(agent, &mut 0)
    }

    /// Like [`Matcher::select`], adding the work done to `work` (one unit
    /// per agent token compared, as for
    /// [`Matcher::check_selected_counted`]).
    pub fn select_counted(&self, agent: &str, work: &mut u64) -> Selection {
        match self.semantics {
            Semantics::Google => {
                let token = product_token(agent);
                *work += 1 + u64::from(usize::BITS - self.by_token.len().leading_zeros());
                let groups: Vec<u32> = self.named_groups(token.as_bytes()).map(to_u32).collect();
                *work += groups.len() as u64;
                if groups.is_empty() {
                    *work += self.groups.len() as u64;
                    Selection {
                        groups: (0..self.groups.len())
                            .filter(|&g| self.groups[g].global)
                            .map(to_u32)
                            .collect(),
                        specific: false,
                    }
                } else {
                    Selection {
                        groups,
                        specific: true,
                    }
                }
            }
            Semantics::Draft1996 => {
                let (gi, m) = self.draft_record_counted(agent.as_bytes(), work);
                Selection {
                    groups: gi.map(to_u32).into_iter().collect(),
                    specific: m == GroupMatch::Specific,
                }
            }
        }
    }

    /// The names agents are compared with, each with the selection it
    /// makes, in the order [`pick_name`] tries them: under Google's rules
    /// each distinct product token of the file, lower-cased (an agent
    /// whose product token equals it selects every group naming it);
    /// under the 1996 draft each record's name in file order, lower-cased,
    /// each once (an agent selects the record of the first name it
    /// contains). An agent that no name selects gets [`Matcher::unnamed`].
    /// Together they give any agent's selection without the file
    /// ([`Matcher::select`] equals the selection [`pick_name`] finds).
    ///
    /// ```
    /// use botscope_robotstxt::{Matcher, Semantics, pick_name};
    /// let m = Matcher::new(b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp\n");
    /// let names = m.names();
    /// let keys: Vec<&[u8]> = names.iter().map(|(n, _)| n.as_slice()).collect();
    /// assert_eq!(pick_name(Semantics::Google, &keys, "GPTBot/1.1"), Some(0));
    /// assert_eq!(names[0].1, m.select("gptbot"));
    /// assert_eq!(pick_name(Semantics::Google, &keys, "Googlebot"), None);
    /// assert_eq!(m.unnamed(), m.select("Googlebot"));
    /// ```
    pub fn names(&self) -> Vec<(Vec<u8>, Selection)> {
        let mut out: Vec<(Vec<u8>, Selection)> = Vec::new();
        match self.semantics {
            Semantics::Google => {
                for &i in &*self.by_token {
                    let a = &self.agents[i as usize];
                    let tok = self.token(a);
                    match out.last_mut() {
                        Some((name, sel)) if name.eq_ignore_ascii_case(tok) => {
                            sel.groups.push(a.group);
                        }
                        _ => out.push((
                            tok.to_ascii_lowercase(),
                            Selection {
                                groups: vec![a.group],
                                specific: true,
                            },
                        )),
                    }
                }
            }
            Semantics::Draft1996 => {
                let mut seen = std::collections::HashSet::new();
                for a in &*self.agents {
                    let tok = self.token(a).to_ascii_lowercase();
                    if tok.is_empty() || !seen.insert(tok.clone()) {
                        continue;
                    }
                    out.push((
                        tok,
                        Selection {
                            groups: vec![a.group],
                            specific: true,
                        },
                    ));
                }
            }
        }
        out
    }

    /// The number of rules in the groups of a selection of this matcher:
    /// what a query under it tests at most, and what indexing it
    /// ([`Matcher::index_selection`]) costs.
    pub fn rules_in(&self, sel: &Selection) -> usize {
        sel.groups
            .iter()
            .map(|&g| self.group_rules(g as usize).len())
            .sum()
    }

    /// The work [`Matcher::index_selection`] counts for a selection of this
    /// matcher, at most: one unit per rule and per literal byte (a pattern
    /// byte, three for one escaped when indexed). A caller
    /// that tests rules ([`Matcher::check_selected_counted`]) until their
    /// work passes a few times this, then indexes, never pays much more
    /// than the better of the two would have cost.
    pub fn index_cost(&self, sel: &Selection) -> u64 {
        sel.groups
            .iter()
            .flat_map(|&g| self.group_rules(g as usize))
            .map(|r| 1 + u64::from(r.len) * if r.flags & F_RAW != 0 { 3 } else { 1 })
            .sum()
    }

    /// The selection of an agent that no group names (the `*` groups, or
    /// none).
    pub fn unnamed(&self) -> Selection {
        match self.semantics {
            Semantics::Google => Selection {
                groups: (0..self.groups.len())
                    .filter(|&g| self.groups[g].global)
                    .map(to_u32)
                    .collect(),
                specific: false,
            },
            Semantics::Draft1996 => Selection {
                groups: self
                    .groups
                    .iter()
                    .position(|g| g.global)
                    .map(to_u32)
                    .into_iter()
                    .collect(),
                specific: false,
            },
        }
    }

    /// The selections of many agents, as [`Matcher::select_counted`] makes
    /// them one by one, adding the work to `work`. Under the 1996 draft the
    /// agents' tokens are searched for in each name at once (Aho-Corasick),
    /// so a file of thousands of agents costs the names' length, not the
    /// number of agents for each name.
    pub fn select_many(&self, agents: &[&str], work: &mut u64) -> Vec<Selection> {
        if self.semantics == Semantics::Google || agents.len() < 8 {
            return agents
                .iter()
                .map(|a| self.select_counted(a, work))
                .collect();
        }
        let ids: Vec<usize> = (0..self.agents.len())
            .filter(|&i| self.agents[i].len > 0)
            .collect();
        *work += ids.len() as u64 + (self.arena.len() >> 5) as u64;
        let Ok(ac) = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(ids.iter().map(|&i| self.token(&self.agents[i])))
        else {
            return agents
                .iter()
                .map(|a| self.select_counted(a, work))
                .collect();
        };
        let global = self.groups.iter().position(|g| g.global);
        agents
            .iter()
            .map(|a| {
                *work += 1 + (a.len() >> 3) as u64;
                let mut first: Option<usize> = None;
                for m in ac.find_overlapping_iter(a.as_bytes()) {
                    *work += 1;
                    let i = ids[m.pattern().as_usize()];
                    first = Some(first.map_or(i, |f| f.min(i)));
                }
                match first {
                    Some(i) => Selection {
                        groups: vec![self.agents[i].group],
                        specific: true,
                    },
                    None => Selection {
                        groups: global.map(to_u32).into_iter().collect(),
                        specific: false,
                    },
                }
            })
            .collect()
    }

    /// The verdict for `path` (as for [`Matcher::check_path`]) under the
    /// groups of a selection made by this matcher.
    pub fn check_selected(&self, sel: &Selection, path: &[u8]) -> Verdict<'_> {
        self.check_selected_counted(sel, path, &mut 0)
    }

    /// Like [`Matcher::check_selected`], adding the work done to `work`:
    /// one unit per rule looked at, and one per 32 bytes of pattern and
    /// path compared in full. The count depends only on the file and the
    /// query, so callers bound their work by it, not by a clock.
    pub fn check_selected_counted(
        &self,
        sel: &Selection,
        path: &[u8],
        work: &mut u64,
    ) -> Verdict<'_> {
        self.verdict_of(self.decide_selected(sel, path, work))
    }

    /// [`Matcher::check_selected_counted`]'s verdict, its rule by place.
    pub(crate) fn decide_selected(&self, sel: &Selection, path: &[u8], work: &mut u64) -> Decided {
        let group = sel.group_match();
        match self.semantics {
            Semantics::Google => {
                let mut best = None;
                let bytes = &mut PathBytes::default();
                for &g in &sel.groups {
                    best = self.best_in_group(g as usize, path, best, bytes, work);
                }
                Decided::google(best, group)
            }
            Semantics::Draft1996 => match sel.groups.first() {
                Some(&g) => self.draft_in(g as usize, path, group, work),
                None => Decided {
                    allowed: true,
                    rule: None,
                    group,
                },
            },
        }
    }

    /// The verdict a [`Decided`] of this matcher stands for.
    pub(crate) fn verdict_of(&self, d: Decided) -> Verdict<'_> {
        Verdict {
            allowed: d.allowed,
            rule: d.rule.map(|idx| self.matched(idx)),
            group: d.group,
        }
    }

    fn group_rules(&self, gi: usize) -> &[CRule] {
        let start = self.groups[gi].rules_start as usize;
        let end = self
            .groups
            .get(gi + 1)
            .map_or(self.rules.len(), |g| g.rules_start as usize);
        &self.rules[start..end]
    }

    fn pattern(&self, r: &CRule) -> &[u8] {
        &self.arena[r.off as usize..r.off as usize + usize::from(r.len)]
    }

    fn token(&self, a: &CAgent) -> &[u8] {
        &self.arena[a.off as usize..a.off as usize + usize::from(a.len)]
    }

    /// May `agent` fetch `url`? `agent` is a product token (`Googlebot`) or
    /// a whole User-Agent header, which is reduced to its product token.
    /// `url` is an absolute URL, a scheme-less one, or a path.
    pub fn is_allowed(&self, agent: &str, url: &str) -> bool {
        self.check(agent, url).allowed
    }

    /// Like [`Matcher::is_allowed`], with the deciding rule.
    pub fn check(&self, agent: &str, url: &str) -> Verdict<'_> {
        self.check_path(agent, &path_of(url.as_bytes()))
    }

    /// Like [`Matcher::check`], adding the work done to `work` (as
    /// [`Matcher::check_selected_counted`] counts it): the tests and the
    /// fuzz targets bound a query's cost by it.
    pub fn check_counted(&self, agent: &str, url: &str, work: &mut u64) -> Verdict<'_> {
        let sel = self.select_counted(agent, work);
        self.check_selected_counted(&sel, &path_of(url.as_bytes()), work)
    }

    /// Like [`Matcher::check`] for a path that starts with `/` (path,
    /// params and query, as [`crate::path_of`] returns it).
    pub fn check_path(&self, agent: &str, path: &[u8]) -> Verdict<'_> {
        match self.semantics {
            Semantics::Google => self.check_google(product_token(agent).as_bytes(), path),
            Semantics::Draft1996 => self.check_draft(agent.as_bytes(), path),
        }
    }

    /// The best-ranked rule of a group that matches `path`, or `best` if
    /// that ranks higher. Rules are in rank order, so the first match is
    /// the group's best.
    fn best_in_group(
        &self,
        gi: usize,
        path: &[u8],
        best: Option<Best>,
        bytes: &mut PathBytes,
        work: &mut u64,
    ) -> Option<Best> {
        let start = self.groups[gi].rules_start as usize;
        let rules = self.group_rules(gi);
        let found = |i: usize, r: &CRule| Best {
            rank: r.rank(),
            priority: r.priority,
            allow: r.flags & F_ALLOW != 0,
            idx: to_u32(start + i),
        };
        let pw = path_word(path);
        // Rules are longest first: those longer than any path of this
        // length they could match are passed over.
        let longest = path.len() + usize::from(self.groups[gi].slack);
        if self.heads.is_empty() {
            for (i, r) in rules.iter().enumerate() {
                if usize::from(r.priority) > longest {
                    continue;
                }
                *work += 1;
                if best.is_some_and(|b| b.rank >= r.rank()) {
                    // Rules are in rank order: nothing further can win.
                    break;
                }
                if r.flags & F_HEAD1 != 0
                    && (path.get(1) != Some(&r.head[0])
                        || (r.flags & F_HEAD2 != 0 && path.get(2) != Some(&r.head[1])))
                {
                    continue;
                }
                if self
                    .word_agrees(r, pw)
                    .unwrap_or_else(|| self.rule_matches(r, path, bytes, work))
                {
                    return Some(found(i, r));
                }
            }
            return best;
        }
        let heads = &self.heads[2 * start..2 * (start + rules.len())];
        // The path's head once per byte of a chunk's heads.
        let ph = path_head(path);
        let mut want = [0u8; 2 * HEAD_CHUNK];
        for (i, w) in want.iter_mut().enumerate() {
            *w = ph[i & 1];
        }
        let first = rules.partition_point(|r| usize::from(r.priority) > longest);
        for (c, chunk) in heads
            .chunks(2 * HEAD_CHUNK)
            .enumerate()
            .skip(first / HEAD_CHUNK)
        {
            let base = c * HEAD_CHUNK;
            if best.is_some_and(|b| b.rank >= rules[base].rank()) {
                // Rules are in rank order: nothing further can win.
                break;
            }
            *work += (chunk.len() / 2) as u64;
            // Bit 2k: rule k's byte 1 agrees, bit 2k+1: its byte 2 does.
            let mut bytes_agree = 0u32;
            for (j, (&h, &w)) in chunk.iter().zip(&want).enumerate() {
                bytes_agree |= u32::from(h == w || h == ANY) << j;
            }
            // Bit 2k: rule k's head agrees.
            let mut agree = bytes_agree & (bytes_agree >> 1) & 0x5555_5555;
            if base < first {
                agree &= u32::MAX << (2 * (first - base));
            }
            while agree != 0 {
                let i = base + agree.trailing_zeros() as usize / 2;
                agree &= agree - 1;
                let r = &rules[i];
                if best.is_some_and(|b| b.rank >= r.rank()) {
                    return best;
                }
                if self
                    .word_agrees(r, pw)
                    .unwrap_or_else(|| self.rule_matches(r, path, bytes, work))
                {
                    return Some(found(i, r));
                }
            }
        }
        best
    }

    /// Whether the path whose first bytes are `pw` ([`path_word`]) starts
    /// with the first [`WORD`] bytes of `r`'s literal start: false only
    /// when `r` surely does not match, true and the match itself when `r`
    /// is a plain literal no longer than a word (`Some`).
    #[inline]
    fn word_agrees(&self, r: &CRule, pw: u64) -> Option<bool> {
        let k = usize::from(r.lit).min(WORD);
        let at = r.off as usize;
        let mut w = [0u8; WORD];
        match self.arena.get(at..at + WORD) {
            Some(word) => w.copy_from_slice(word),
            // The arena's last bytes: what is past its end is compared
            // with nothing (`k` is at most the pattern's length).
            None => {
                let tail = self.arena.get(at..).unwrap_or_default();
                w[..tail.len()].copy_from_slice(tail);
            }
        }
        let mask = u64::MAX.checked_shr(8 * (WORD - k) as u32).unwrap_or(0);
        if (u64::from_le_bytes(w) ^ pw) & mask != 0 {
            return Some(false);
        }
        let plain = r.flags & (F_GLOB | F_EXACT | F_RAW) == 0 && usize::from(r.len) == k;
        plain.then_some(true)
    }

    /// Does `path` match rule `r` in full (its head filter passed)?
    #[inline]
    fn rule_matches(&self, r: &CRule, path: &[u8], bytes: &mut PathBytes, work: &mut u64) -> bool {
        let pat = self.pattern(r);
        if r.flags & F_GLOB != 0 && r.flags & F_RAW == 0 {
            // A wildcard match counts the bytes it examines (at most the
            // path plus nine times the pattern: `glob`).
            let mut scanned = 0;
            let m = (r.flags & F_PROBE == 0 || bytes.admits(path, r.head, work))
                && if usize::from(r.lit) < usize::from(u8::MAX) {
                    // The literal start is known (its first `*` is at
                    // `lit`), and [`Matcher::word_agrees`] has compared
                    // it with the path when it fits in a word.
                    let (body, anchored) = unanchored(pat);
                    let start = usize::from(r.lit);
                    scanned += start.min(path.len()) as u64;
                    (start <= WORD || path.starts_with(&body[..start]))
                        && path.len() >= start
                        && glob_tail(path, start, &body[start..], anchored, &mut scanned)
                } else {
                    glob_matches(path, pat, &mut scanned)
                };
            *work += (pat.len() as u64 + scanned) >> 5;
            return m;
        }
        *work += ((pat.len() + path.len()) >> 5) as u64;
        if r.flags & F_RAW != 0 {
            raw_matches(path, pat, r.flags)
        } else if r.flags & F_EXACT != 0 {
            let n = if r.flags & F_DIR != 0 {
                usize::from(r.priority) - 1
            } else {
                pat.len() - 1
            };
            path == &pat[..n]
        } else {
            path.starts_with(pat)
        }
    }

    fn check_google(&self, agent: &[u8], path: &[u8]) -> Verdict<'_> {
        let mut best: Option<Best> = None;
        let mut specific = false;
        let work = &mut 0;
        let bytes = &mut PathBytes::default();
        for g in self.named_groups(agent) {
            specific = true;
            best = self.best_in_group(g, path, best, bytes, work);
        }
        let group = if specific {
            GroupMatch::Specific
        } else {
            let mut any = false;
            for gi in 0..self.groups.len() {
                if self.groups[gi].global {
                    any = true;
                    best = self.best_in_group(gi, path, best, bytes, work);
                }
            }
            if any {
                GroupMatch::Global
            } else {
                GroupMatch::None
            }
        };
        self.google_verdict(best, group)
    }

    fn google_verdict(&self, best: Option<Best>, group: GroupMatch) -> Verdict<'_> {
        self.verdict_of(Decided::google(best, group))
    }

    fn matched(&self, idx: u32) -> MatchedRule<'_> {
        let r = &self.rules[idx as usize];
        let pattern = self.pattern(r);
        MatchedRule {
            line: r.line,
            kind: if r.flags & F_ALLOW != 0 {
                RuleKind::Allow
            } else {
                RuleKind::Disallow
            },
            pattern,
        }
    }

    fn draft_record(&self, agent: &[u8]) -> (Option<usize>, GroupMatch) {
        self.draft_record_counted(agent, &mut 0)
    }

    fn draft_record_counted(&self, agent: &[u8], work: &mut u64) -> (Option<usize>, GroupMatch) {
        for a in self.agents.iter() {
            let tok = self.token(a);
            *work += 1 + ((agent.len() * tok.len().min(32)) >> 5) as u64;
            if !tok.is_empty() && contains_ignore_case(agent, tok) {
                return (Some(a.group as usize), GroupMatch::Specific);
            }
        }
        match self.groups.iter().position(|g| g.global) {
            Some(gi) => (Some(gi), GroupMatch::Global),
            None => (None, GroupMatch::None),
        }
    }

    fn check_draft(&self, agent: &[u8], path: &[u8]) -> Verdict<'_> {
        let (gi, group) = self.draft_record(agent);
        let Some(gi) = gi else {
            return Verdict {
                allowed: true,
                rule: None,
                group,
            };
        };
        self.verdict_of(self.draft_in(gi, path, group, &mut 0))
    }

    fn draft_in(&self, gi: usize, path: &[u8], group: GroupMatch, work: &mut u64) -> Decided {
        let start = self.groups[gi].rules_start;
        for (i, r) in self.group_rules(gi).iter().enumerate() {
            let pat = self.pattern(r);
            *work += 1 + (pat.len() >> 5) as u64;
            if draft_prefix(path, pat) {
                return Decided {
                    allowed: r.flags & F_ALLOW != 0 || pat.is_empty(),
                    rule: Some(start + to_u32(i)),
                    group,
                };
            }
        }
        Decided {
            allowed: true,
            rule: None,
            group,
        }
    }

    /// The Crawl-delay, in seconds, that applies to `agent`: from the first
    /// group naming it that has one, else from the `*` groups.
    pub fn crawl_delay(&self, agent: &str) -> Option<f64> {
        let pick = |gi: usize| self.group_crawl_delay(gi);
        match self.semantics {
            Semantics::Google => {
                let agent = product_token(agent).as_bytes();
                let mut named = self.named_groups(agent).peekable();
                if named.peek().is_some() {
                    named.find_map(pick)
                } else {
                    (0..self.groups.len())
                        .filter(|&g| self.groups[g].global)
                        .find_map(pick)
                }
            }
            Semantics::Draft1996 => self.draft_record(agent.as_bytes()).0.and_then(pick),
        }
    }

    /// The Crawl-delay of a selection ([`Matcher::select`]): from its
    /// first group that has one. Equals [`Matcher::crawl_delay`] of the
    /// agent that made the selection, without finding its groups again.
    pub fn selection_crawl_delay(&self, sel: &Selection) -> Option<f64> {
        sel.groups
            .iter()
            .find_map(|&g| self.group_crawl_delay(g as usize))
    }

    fn group_crawl_delay(&self, gi: usize) -> Option<f64> {
        Some(self.groups[gi].crawl_delay)
            .filter(|d| !d.is_nan())
            .map(f64::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_match_and_ties() {
        let m = Matcher::new(b"User-agent: *\nDisallow: /a\nAllow: /a\nDisallow: /ab\n");
        let v = m.check("x", "/a");
        assert!(v.allowed);
        assert_eq!(v.rule.map(|r| (r.line, r.kind)), Some((3, RuleKind::Allow)));
        let v = m.check("x", "/abc");
        assert!(!v.allowed);
        assert_eq!(v.rule.map(|r| r.line), Some(4));
    }

    #[test]
    fn groups_merge_and_specific_beats_global() {
        let m = Matcher::new(b"User-agent: foo\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\nUser-agent: FOO\nDisallow: /b\n");
        assert!(!m.is_allowed("foo", "/a"));
        assert!(!m.is_allowed("foo", "/b"));
        assert!(m.is_allowed("foo", "/c"));
        assert!(!m.is_allowed("bar", "/c"));
        assert_eq!(m.check("bar", "/c").group, GroupMatch::Global);
    }

    #[test]
    fn draft_first_match_and_substring_agents() {
        let m = Matcher::compile(
            b"User-agent: bot\nDisallow: /tmp\nAllow: /tmp/ok\n\nUser-agent: *\nDisallow:\n",
            Semantics::Draft1996,
            &ParseOptions::default(),
        );
        assert!(
            !m.is_allowed("Spambot/1.0", "/tmp/ok"),
            "first match wins, not longest"
        );
        assert!(m.is_allowed("Crawler", "/tmp/ok"));
        let v = m.check("Crawler", "/tmp");
        assert!(v.allowed, "an empty Disallow allows everything");
        assert_eq!(v.rule.map(|r| r.line), Some(6));
    }

    #[test]
    fn non_ascii_patterns_stored_as_written() {
        let m = Matcher::new("User-agent: *\nDisallow: /\nAllow: /café\nAllow: /thé$\nAllow: /é/index.html\nDisallow: /cafés\n".as_bytes());
        assert!(m.is_allowed("a", "/caf%C3%A9"));
        assert!(m.is_allowed("a", "/caf%C3%A9/menu"));
        assert!(
            !m.is_allowed("a", "/caf%C3%A9s"),
            "the longer Disallow wins"
        );
        assert!(
            !m.is_allowed("a", "/café"),
            "URLs are matched as given, encoded"
        );
        assert!(m.is_allowed("a", "/th%C3%A9"));
        assert!(!m.is_allowed("a", "/th%C3%A9/x"), "`$` anchors the end");
        assert!(
            m.is_allowed("a", "/%C3%A9/"),
            "index.html allows its directory"
        );
        assert!(!m.is_allowed("a", "/%C3%A9/x"));
        assert_eq!(
            m.check("a", "/caf%C3%A9").rule.map(|r| r.pattern),
            Some("/café".as_bytes())
        );
    }

    #[test]
    fn crawl_delay_per_agent() {
        let m = Matcher::new(b"User-agent: *\nCrawl-delay: 5\nUser-agent: slow\nDisallow:\n\nUser-agent: fast\nCrawl-delay: 0.5\nDisallow:\n");
        assert_eq!(m.crawl_delay("fast"), Some(0.5));
        assert_eq!(m.crawl_delay("other"), Some(5.0));
        assert_eq!(m.crawl_delay("slow"), Some(5.0), "slow joined the * group");
    }

    #[test]
    fn a_selections_crawl_delay_is_its_agents() {
        let body = b"User-agent: *\nCrawl-delay: 5\nUser-agent: slow\nDisallow:\n\n\
            User-agent: fast\nDisallow: /x\n\nUser-agent: fast\nCrawl-delay: 0.5\n\n\
            User-agent: none\nDisallow: /\n\nUser-agent: bad\nCrawl-delay: soon\n";
        for semantics in [Semantics::Google, Semantics::Draft1996] {
            let m = Matcher::compile(body, semantics, &ParseOptions::default());
            for agent in ["fast", "Fast/2.0", "slow", "none", "bad", "other", "*", ""] {
                assert_eq!(
                    m.selection_crawl_delay(&m.select(agent)),
                    m.crawl_delay(agent),
                    "{semantics:?} {agent}"
                );
            }
        }
        let m = Matcher::new(body);
        assert_eq!(m.selection_crawl_delay(&m.select("fast")), Some(0.5));
        assert_eq!(
            m.selection_crawl_delay(&m.select("none")),
            Some(0.5),
            "none joined fast's second group"
        );
        assert_eq!(m.selection_crawl_delay(&m.select("bad")), None);
    }
}
