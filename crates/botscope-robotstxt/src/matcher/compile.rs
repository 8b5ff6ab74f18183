//! Compiling robots.txt into a [`Matcher`]: one scan of the file, the
//! rules of each group ordered so the first match is the best, each
//! rule's cheap filters (head bytes, probe pair) worked out once.

use std::borrow::Cow;

use super::{
    CAgent, CGroup, CRule, HEAD_CHUNK, Matcher, Semantics, cmp_ignore_case, head_of, to_u16, to_u32,
};
use super::{F_ALLOW, F_DIR, F_EXACT, F_GLOB, F_HEAD1, F_HEAD2, F_PROBE, F_RAW};
use crate::lexer::KeyKind;
use crate::parse::parse_seconds;
use crate::scan::{self, Event, Grouper, ParseOptions};
use crate::url::{draft_canonical, escape_pattern};

struct Compiler<'w> {
    semantics: Semantics,
    /// Google's semantics: the product tokens whose groups' rules are
    /// compiled, with the `*` groups' ([`compile_for`]); `None`, every
    /// group's.
    wanted: Option<&'w [Box<[u8]>]>,
    /// Whether the current group's rules are passed over, decided at its
    /// first rule (its agents are all known by then: an agent after a
    /// rule starts a new group).
    passing: Option<bool>,
    arena: Vec<u8>,
    rules: Vec<CRule>,
    groups: Vec<CGroup>,
    agents: Vec<CAgent>,
    grouper: Grouper,
    // 1996 draft: records end at blank lines.
    in_record: bool,
    record_has_rule: bool,
}

/// Compiles `input` under `semantics` ([`Matcher::compile`]).
pub(super) fn compile(input: &[u8], semantics: Semantics, opts: &ParseOptions) -> Matcher {
    compile_for(input, semantics, opts, None)
}

/// Like [`compile`]; under Google's semantics with `wanted`, only the
/// rules of the groups that are `*` or name one of its product tokens
/// (ignoring case): the matcher then answers only agents whose product
/// token is one of them (any other would find a group it selects
/// empty). A batch asking a few agents of thousands of files compiles
/// no more than they select. The 1996 draft compiles every group.
pub(crate) fn compile_for(
    input: &[u8],
    semantics: Semantics,
    opts: &ParseOptions,
    wanted: Option<&[Box<[u8]>]>,
) -> Matcher {
    let mut c = Compiler {
        semantics,
        wanted: wanted.filter(|_| semantics == Semantics::Google),
        passing: None,
        arena: Vec::with_capacity(input.len() / 2),
        // Sized for a typical file (about one rule per 32 bytes) so that
        // few files grow a vector more than once.
        rules: Vec::with_capacity(input.len() / 32 + 4),
        groups: Vec::with_capacity(4),
        agents: Vec::with_capacity(4),
        grouper: Grouper::default(),
        in_record: false,
        record_has_rule: false,
    };
    scan::scan(input, opts, |ev| match semantics {
        Semantics::Google => c.event_google(ev),
        Semantics::Draft1996 => c.event_draft(ev),
    });
    c.finish()
}

impl Compiler<'_> {
    fn push_bytes(&mut self, b: &[u8]) -> (u32, u16) {
        let off = to_u32(self.arena.len());
        let b = &b[..b.len().min(usize::from(u16::MAX))];
        self.arena.extend_from_slice(b);
        (off, to_u16(b.len()))
    }

    fn new_group(&mut self) {
        self.groups.push(CGroup {
            rules_start: to_u32(self.rules.len()),
            crawl_delay: f32::NAN,
            global: false,
            slack: 0,
        });
    }

    /// The current group holds a rule `slack` longer than the shortest
    /// path it matches.
    fn widen(&mut self, slack: usize) {
        if let Some(g) = self.groups.last_mut() {
            g.slack = g.slack.max(to_u16(slack));
        }
    }

    fn user_agent(&mut self, value: &[u8]) {
        let (global, text) = match self.semantics {
            Semantics::Google => scan::user_agent_token(value),
            Semantics::Draft1996 => (value == b"*", value),
        };
        let group = to_u32(self.groups.len().saturating_sub(1));
        if global {
            if let Some(g) = self.groups.last_mut() {
                g.global = true;
            }
        } else {
            let (off, len) = self.push_bytes(text);
            self.agents.push(CAgent { off, len, group });
        }
    }

    fn rule(&mut self, line: u32, allow: bool, value: &[u8]) {
        let mut flags = if allow { F_ALLOW } else { 0 };
        let mut head = [0u8; 2];
        let mut lit_end = 0;
        let pattern: Cow<'_, [u8]> = match self.semantics {
            Semantics::Google => {
                // One scan of the value decides escaping and wildcards;
                // escaping never adds or removes a `*`, `$` or `/`.
                let bits = crate::url::pattern_bits(value);
                let p = if bits & (crate::url::HAS_PERCENT | crate::url::HAS_HIGH) == 0 {
                    Cow::Borrowed(value)
                } else {
                    escape_pattern(value)
                };
                lit_end = if bits & crate::url::HAS_STAR != 0 {
                    flags |= F_GLOB;
                    p.iter().position(|&b| b == b'*').unwrap_or(p.len())
                } else if p.last() == Some(&b'$') {
                    flags |= F_EXACT;
                    p.len() - 1
                } else {
                    p.len()
                };
                flags |= head_flags(&p[..lit_end], &mut head);
                if flags & (F_GLOB | F_HEAD1) == F_GLOB {
                    flags |= probe_bytes(&p, &mut head);
                }
                if bits & crate::url::HAS_HIGH != 0 && flags & F_GLOB == 0 {
                    flags |= F_RAW;
                }
                p
            }
            Semantics::Draft1996 => Cow::Owned(draft_canonical(value)),
        };
        let priority = to_u16(pattern.len());
        // How much longer than the shortest path it matches the pattern
        // is: its `*`s and its end anchor.
        let slack = if flags & F_GLOB != 0 {
            // (A plain count: patterns are short, a call per pattern to
            // a vector search costs more than it saves.)
            pattern.iter().filter(|&&b| b == b'*').count()
                + usize::from(pattern.last() == Some(&b'$'))
        } else {
            usize::from(flags & F_EXACT != 0)
        };
        self.widen(slack);
        let stored: &[u8] = if flags & F_RAW != 0 { value } else { &pattern };
        let (off, len) = self.push_bytes(stored);
        let lit = |n: usize| u8::try_from(n.min(usize::from(len))).unwrap_or(u8::MAX);
        self.rules.push(CRule {
            off,
            line,
            len,
            priority,
            flags,
            head,
            lit: if flags & F_RAW != 0 { 0 } else { lit(lit_end) },
        });
        // Google: an Allow ending in `/index.htm…` also allows its directory
        // (`/dir/index.html` allows `/dir/`), with the priority of `/dir/$`.
        if allow
            && self.semantics == Semantics::Google
            && let Some(slash) = memchr::memrchr(b'/', &pattern)
            && pattern[slash..].starts_with(b"/index.htm")
        {
            // The derived rule keeps the whole pattern for reporting and
            // matches the directory part, whose (escaped) length is
            // `priority - 1`.
            let dir_len = to_u16(slash + 1);
            // Its priority is the directory's length and one.
            self.widen(1);
            let mut head = [0u8; 2];
            let hf = head_flags(&pattern[..slash + 1], &mut head);
            self.rules.push(CRule {
                off,
                line,
                len,
                priority: dir_len.saturating_add(1),
                flags: F_ALLOW | F_EXACT | F_DIR | hf | (flags & F_RAW),
                head,
                lit: if flags & F_RAW != 0 {
                    0
                } else {
                    lit(slash + 1)
                },
            });
        }
    }

    fn event_google(&mut self, ev: Event<'_>) {
        let Event::Pair { line, kind, kv, .. } = ev else {
            return;
        };
        match kind {
            KeyKind::UserAgent => {
                if self.grouper.user_agent() {
                    self.new_group();
                    self.passing = None;
                }
                self.user_agent(kv.value);
            }
            KeyKind::Allow | KeyKind::Disallow if self.grouper.rule() => {
                if self.passing.is_none() {
                    self.passing = Some(self.unwanted());
                }
                if self.passing == Some(false) {
                    self.rule(line, kind == KeyKind::Allow, kv.value);
                }
            }
            KeyKind::CrawlDelay => self.crawl_delay(kv.value),
            _ => {}
        }
    }

    /// Whether the current group is neither `*` nor names a wanted
    /// token (its agents are the last ones pushed).
    fn unwanted(&self) -> bool {
        let (Some(wanted), Some(g)) = (self.wanted, self.groups.last()) else {
            return false;
        };
        let gi = to_u32(self.groups.len() - 1);
        !g.global
            && !self
                .agents
                .iter()
                .rev()
                .take_while(|a| a.group == gi)
                .any(|a| {
                    let token = &self.arena[a.off as usize..a.off as usize + usize::from(a.len)];
                    wanted.iter().any(|w| w.eq_ignore_ascii_case(token))
                })
    }

    fn crawl_delay(&mut self, value: &[u8]) {
        let in_group = match self.semantics {
            Semantics::Google => self.grouper.in_group(),
            Semantics::Draft1996 => self.in_record,
        };
        if in_group
            && let Some(g) = self.groups.last_mut()
            && g.crawl_delay.is_nan()
            && let Some(v) = std::str::from_utf8(value).ok().and_then(parse_seconds)
        {
            #[allow(clippy::cast_possible_truncation)]
            let v = v as f32;
            g.crawl_delay = v;
        }
    }

    fn event_draft(&mut self, ev: Event<'_>) {
        match ev {
            Event::Blank { comment: false, .. } => self.in_record = false,
            Event::Blank { .. } | Event::Junk { .. } => {}
            Event::Pair { line, kind, kv, .. } => match kind {
                KeyKind::UserAgent => {
                    if !self.in_record || self.record_has_rule {
                        self.new_group();
                        self.in_record = true;
                        self.record_has_rule = false;
                    }
                    self.user_agent(kv.value);
                }
                KeyKind::Allow | KeyKind::Disallow if self.in_record => {
                    self.record_has_rule = true;
                    self.rule(line, kind == KeyKind::Allow, kv.value);
                }
                KeyKind::CrawlDelay => self.crawl_delay(kv.value),
                _ => {}
            },
        }
    }

    fn finish(mut self) -> Matcher {
        if self.semantics == Semantics::Google {
            // Within a group, order rules so that the first match is the
            // best one. Sorting packed keys is much cheaper than sorting
            // the rules with a key function.
            let mut keys: Vec<u64> = Vec::new();
            let mut scratch: Vec<CRule> = Vec::new();
            for gi in 0..self.groups.len() {
                let start = self.groups[gi].rules_start as usize;
                let end = self
                    .groups
                    .get(gi + 1)
                    .map_or(self.rules.len(), |g| g.rules_start as usize);
                let rules = &mut self.rules[start..end];
                if rules.len() < 2 {
                    continue;
                }
                keys.clear();
                // A group's rules are in line order (a rule and the
                // directory rule of its `index.html` share a line, never a
                // priority): the rank's line is the rule's place, and the
                // key fits in a word, the place's complement below.
                keys.extend(rules.iter().enumerate().map(|(i, r)| {
                    let first = (u64::from(r.priority) << 1) | u64::from(r.flags & F_ALLOW);
                    (first << 32) | u64::from(u32::MAX - to_u32(i))
                }));
                keys.sort_unstable_by(|a, b| b.cmp(a));
                scratch.clear();
                scratch.extend(
                    keys.iter()
                        .map(|k| rules[(u32::MAX - (*k & 0xFFFF_FFFF) as u32) as usize]),
                );
                rules.copy_from_slice(&scratch);
            }
        }
        let by_token = match self.semantics {
            Semantics::Google => {
                let token = |i: u32| {
                    let a = &self.agents[i as usize];
                    &self.arena[a.off as usize..a.off as usize + usize::from(a.len)]
                };
                let mut idx: Vec<u32> = (0..to_u32(self.agents.len())).collect();
                idx.sort_unstable_by(|&x, &y| {
                    cmp_ignore_case(token(x), token(y)).then(
                        self.agents[x as usize]
                            .group
                            .cmp(&self.agents[y as usize].group),
                    )
                });
                idx.dedup_by(|x, y| {
                    self.agents[*x as usize].group == self.agents[*y as usize].group
                        && token(*x).eq_ignore_ascii_case(token(*y))
                });
                idx
            }
            Semantics::Draft1996 => Vec::new(),
        };
        let big_group = self.groups.iter().enumerate().any(|(gi, g)| {
            let end = self
                .groups
                .get(gi + 1)
                .map_or(self.rules.len(), |n| n.rules_start as usize);
            end - g.rules_start as usize >= HEAD_CHUNK
        });
        let heads = if big_group && self.semantics == Semantics::Google {
            self.rules.iter().flat_map(head_of).collect()
        } else {
            Box::default()
        };
        Matcher {
            semantics: self.semantics,
            heads,
            arena: self.arena.into_boxed_slice(),
            rules: self.rules.into_boxed_slice(),
            groups: self.groups.into_boxed_slice(),
            agents: self.agents.into_boxed_slice(),
            by_token: by_token.into_boxed_slice(),
        }
    }
}

/// Fills `head` from a pattern's literal start and returns the head flags.
fn head_flags(lit: &[u8], head: &mut [u8; 2]) -> u8 {
    if lit.first() != Some(&b'/') {
        return 0;
    }
    match (lit.get(1), lit.get(2)) {
        (Some(&a), Some(&b)) => {
            *head = [a, b];
            F_HEAD1 | F_HEAD2
        }
        (Some(&a), None) => {
            head[0] = a;
            F_HEAD1
        }
        _ => 0,
    }
}

/// How rarely a byte appears in URL paths, roughly (higher is rarer):
/// the probe of a wildcard rule is its rarest literal bytes.
const fn rarity_of(b: u8) -> u8 {
    match b {
        b'/' | b'*' => 0,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' | b'-' | b'.' => 1,
        b'a'..=b'z' | b'0'..=b'9' => 2,
        b'?' | b'=' | b'&' | b'%' | b'_' => 3,
        b'A'..=b'Z' => 4,
        _ => 5,
    }
}

/// [`rarity_of`] each byte, looked up.
static RARITY: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = rarity_of(b as u8);
        b += 1;
    }
    t
};

#[inline]
fn rarity(b: u8) -> u8 {
    RARITY[usize::from(b)]
}

/// Fills `head` with the rarest pair of adjacent literal bytes of a
/// wildcard pattern (no `*` in it; a final `$` is no byte of the path),
/// `F_PROBE` when it has one.
fn probe_bytes(pat: &[u8], head: &mut [u8; 2]) -> u8 {
    let lit = pat.strip_suffix(b"$").unwrap_or(pat);
    let mut best: Option<(u8, [u8; 2])> = None;
    for w in lit.windows(2) {
        if w[0] == b'*' || w[1] == b'*' {
            continue;
        }
        let r = rarity(w[0]) + rarity(w[1]);
        if best.is_none_or(|(br, _)| r > br) {
            best = Some((r, [w[0], w[1]]));
        }
    }
    match best {
        Some((_, pair)) => {
            *head = pair;
            F_PROBE
        }
        None => 0,
    }
}
