//! One selection's rules indexed by their literal start, for callers that
//! ask one selection about many paths (bias over every path of a file): a
//! byte trie whose nodes hold the best rule ending there, so a path costs
//! its own length plus the wildcard rules along it, not the group's size.

use std::borrow::Cow;

use super::{
    Best, F_ALLOW, F_DIR, F_EXACT, F_GLOB, F_PROBE, F_RAW, GroupMatch, Matcher, PathBytes,
    Selection, Semantics, Verdict, glob_tail, unanchored,
};
use crate::url::{Recoded, Recoding};

const NONE: u32 = u32::MAX;
/// [`IndexedSelection::slash`] when the root holds a rule.
const ROOT: u32 = u32::MAX - 1;

/// A [`Selection`]'s rules indexed for many paths
/// ([`Matcher::index_selection`], [`Matcher::check_indexed`]).
#[derive(Debug, Clone)]
pub struct IndexedSelection {
    group: GroupMatch,
    /// The trie's nodes, and one past the last (where the last node's
    /// ranges end): what a step along a path reads, on one cache line.
    nodes: Vec<Node>,
    /// Children, from each node's `children` to the next node's (sorted
    /// by byte).
    child_byte: Vec<u8>,
    child_node: Vec<u32>,
    /// The children of the nodes with the most of them, a table of 256
    /// by byte each (`NONE` where there is none): a file's rules spread
    /// over many bytes after `/`, and every path steps through there.
    dense: Vec<u32>,
    /// Wildcard rules, from each node's `globs` to the next node's: those
    /// whose literal start ends at the node, best rank first, each
    /// distinct pattern once. A node with several starts with
    /// `FILTERED | i`: `filters[i]` searches the path once for a segment
    /// each of them needs, and a path holding none skips them all.
    globs: Vec<u32>,
    filters: Vec<Filter>,
    /// Where a path starting with `/` goes from the root when the root
    /// holds no rule: its `/` child (`NONE`: no rule starts with `/`);
    /// `ROOT` when the root holds one and the walk starts there.
    slash: u32,
}

/// One node of an [`IndexedSelection`]'s trie.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Where its children start in `child_byte`/`child_node`.
    children: u32,
    /// Its table's place in `dense` (`NONE`: none).
    dense: u32,
    /// The best rule whose literal ends here and which matches any path
    /// through it (Google: highest rank; the draft: first line).
    prefix: u32,
    /// The best rule that matches only a path ending here (`$`-anchored
    /// literals, Google's `index.html` directories).
    exact: u32,
    /// Where its wildcard rules start in `globs`.
    globs: u32,
}

/// Marks the entry before a node's wildcard rules that names their filter.
const FILTERED: u32 = 1 << 31;
/// Nodes with more children than this get a table by byte, up to
/// `DENSE_TABLES` of them (a kilobyte each: a bound of its own, not
/// counted as work, which the children's bytes already count).
const DENSE_MIN: usize = 8;
const DENSE_TABLES: usize = 8;
/// At most this many nodes get a filter (a searcher's tables are a few
/// kilobytes): those where the most wildcard rules start.
const FILTERS: usize = 32;

/// A node's wildcard segments, searched at once: SIMD (Teddy) where the
/// processor has it and the segments are few, else an automaton.
#[derive(Debug, Clone)]
enum Filter {
    Packed(aho_corasick::packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
}

impl Filter {
    fn new(needs: &[&[u8]]) -> Option<Filter> {
        if let Some(s) = aho_corasick::packed::Config::new()
            .builder()
            .extend(needs)
            .build()
        {
            return Some(Filter::Packed(s));
        }
        aho_corasick::AhoCorasick::new(needs)
            .ok()
            .map(Filter::Automaton)
    }

    /// Whether `hay` holds one of the segments (a path too short for
    /// the SIMD search is searched by Rabin-Karp, still cheaper than the
    /// rules' own searches).
    #[inline(never)]
    fn found_in(&self, hay: &[u8]) -> bool {
        match self {
            Filter::Packed(s) => s.find(hay).is_some(),
            Filter::Automaton(a) => a.is_match(hay),
        }
    }
}

/// What a Google walk carries past its nodes into their wildcard rules.
struct Walk<'p> {
    /// The target or path walked.
    raw: &'p [u8],
    /// The path proper: `raw` up to its `#`, found when first needed.
    cut: Option<&'p [u8]>,
    /// The best rule so far: its rank plus one (0: none), and its index.
    best: (u64, u32),
    bytes: PathBytes,
    work: &'p mut u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Prefix,
    Exact,
    Glob,
}

impl IndexedSelection {
    #[inline(always)]
    fn child(&self, node: u32, b: u8) -> Option<u32> {
        let n = &self.nodes[node as usize];
        if n.dense != NONE {
            let c = self.dense[n.dense as usize + usize::from(b)];
            return (c != NONE).then_some(c);
        }
        let (lo, hi) = (
            n.children as usize,
            self.nodes[node as usize + 1].children as usize,
        );
        let bytes = &self.child_byte[lo..hi];
        if let [only] = bytes {
            return (*only == b).then(|| self.child_node[lo]);
        }
        bytes
            .binary_search(&b)
            .ok()
            .map(|i| self.child_node[lo + i])
    }
}

impl Matcher {
    /// The literal a rule's matching path must start with, and how the rest
    /// is matched.
    fn literal<'m>(&'m self, ri: usize) -> (Cow<'m, [u8]>, Kind) {
        let r = &self.rules[ri];
        let pat = self.pattern(r);
        if self.semantics == Semantics::Draft1996 {
            return (pat.into(), Kind::Prefix);
        }
        let escaped = |lit: &'m [u8]| -> Cow<'m, [u8]> {
            if r.flags & F_RAW != 0 {
                Recoded::new(lit, Recoding::Escape)
                    .collect::<Vec<u8>>()
                    .into()
            } else {
                lit.into()
            }
        };
        if r.flags & F_GLOB != 0 {
            let end = memchr::memchr(b'*', pat).unwrap_or(pat.len());
            (pat[..end].into(), Kind::Glob)
        } else if r.flags & F_DIR != 0 {
            let lit = if r.flags & F_RAW != 0 {
                &pat[..memchr::memrchr(b'/', pat).map_or(0, |i| i + 1)]
            } else {
                &pat[..usize::from(r.priority) - 1]
            };
            (escaped(lit), Kind::Exact)
        } else if r.flags & F_EXACT != 0 {
            (escaped(&pat[..pat.len() - 1]), Kind::Exact)
        } else {
            (escaped(pat), Kind::Prefix)
        }
    }

    /// `a` decides before `b` within one node.
    fn better(&self, a: u32, b: u32) -> bool {
        if b == NONE {
            return true;
        }
        match self.semantics {
            Semantics::Google => self.rules[a as usize].rank() > self.rules[b as usize].rank(),
            Semantics::Draft1996 => a < b,
        }
    }

    /// Indexes the rules of `sel` (a selection of this matcher), adding
    /// the work to `work`: one unit per rule and per literal byte.
    pub fn index_selection(&self, sel: &Selection, work: &mut u64) -> IndexedSelection {
        let mut lits: Vec<(Cow<'_, [u8]>, u32, Kind)> = Vec::new();
        for &g in &sel.groups {
            let start = self.groups[g as usize].rules_start as usize;
            let n = self.group_rules(g as usize).len();
            for ri in start..start + n {
                let (lit, kind) = self.literal(ri);
                *work += 1 + lit.len() as u64;
                lits.push((lit, ri as u32, kind));
            }
        }
        // The trie is built from the literals in byte order: each one
        // shares its path with the one before up to their common prefix
        // and adds a node per byte after it. A node's children are thus
        // made in byte order, and a counting sort by parent keeps it.
        lits.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut prefix = vec![NONE];
        let mut exact = vec![NONE];
        let mut globs: Vec<(u32, u32)> = Vec::new();
        // (parent, byte), in the order the children were made.
        let mut edges: Vec<(u32, u8)> = Vec::new();
        // The nodes along the previous literal, the root first.
        let mut path: Vec<u32> = vec![0];
        let mut prev: &[u8] = &[];
        for (lit, ri, kind) in &lits {
            let common = prev
                .iter()
                .zip(lit.iter())
                .take_while(|(a, b)| a == b)
                .count();
            path.truncate(common + 1);
            for &b in &lit[common..] {
                let parent = path[path.len() - 1];
                let next = prefix.len() as u32;
                prefix.push(NONE);
                exact.push(NONE);
                edges.push((parent, b));
                path.push(next);
            }
            prev = lit;
            let node = path[path.len() - 1];
            match kind {
                Kind::Prefix => {
                    if self.better(*ri, prefix[node as usize]) {
                        prefix[node as usize] = *ri;
                    }
                }
                Kind::Exact => {
                    if self.better(*ri, exact[node as usize]) {
                        exact[node as usize] = *ri;
                    }
                }
                Kind::Glob => globs.push((node, *ri)),
            }
        }
        let nodes = prefix.len();
        let mut child_start = vec![0u32; nodes + 1];
        for &(p, _) in &edges {
            child_start[p as usize + 1] += 1;
        }
        for i in 0..nodes {
            child_start[i + 1] += child_start[i];
        }
        let mut child_byte = vec![0u8; edges.len()];
        let mut child_node = vec![0u32; edges.len()];
        let mut fill = child_start.clone();
        for (i, &(p, b)) in edges.iter().enumerate() {
            let at = fill[p as usize] as usize;
            fill[p as usize] += 1;
            child_byte[at] = b;
            // Node i + 1 was made by edge i.
            child_node[at] = i as u32 + 1;
        }
        // Each distinct wildcard pattern once per node (its best line), then
        // best rank first.
        globs.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| {
                    self.pattern(&self.rules[a.1 as usize])
                        .cmp(self.pattern(&self.rules[b.1 as usize]))
                })
                .then_with(|| {
                    self.rules[b.1 as usize]
                        .rank()
                        .cmp(&self.rules[a.1 as usize].rank())
                })
        });
        globs.dedup_by(|a, b| {
            a.0 == b.0
                && self.pattern(&self.rules[a.1 as usize])
                    == self.pattern(&self.rules[b.1 as usize])
        });
        globs.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                self.rules[b.1 as usize]
                    .rank()
                    .cmp(&self.rules[a.1 as usize].rank())
            })
        });
        *work += globs.len() as u64;
        // Each node's wildcard rules, after their filter where they have
        // one.
        let mut glob_list: Vec<u32> = Vec::with_capacity(globs.len());
        let mut glob_start = vec![0u32; nodes + 1];
        let mut filters = Vec::new();
        // The nodes where the most wildcard rules start (two at least).
        let mut counts: Vec<(u32, usize)> = Vec::new();
        for g in globs.chunk_by(|a, b| a.0 == b.0) {
            if g.len() > 1 {
                counts.push((g[0].0, g.len()));
            }
        }
        counts.sort_unstable_by_key(|&(n, k)| (std::cmp::Reverse(k), n));
        counts.truncate(FILTERS);
        let mut filtered: Vec<u32> = counts.into_iter().map(|c| c.0).collect();
        filtered.sort_unstable();
        let mut at = 0;
        for (n, start) in glob_start.iter_mut().enumerate().take(nodes) {
            *start = glob_list.len() as u32;
            let from = at;
            while at < globs.len() && globs[at].0 as usize == n {
                at += 1;
            }
            let rules = &globs[from..at];
            if filtered.binary_search(&(n as u32)).is_ok()
                && let Some(f) = self.glob_filter(rules, work)
            {
                glob_list.push(FILTERED | filters.len() as u32);
                filters.push(f);
            }
            glob_list.extend(rules.iter().map(|g| g.1));
        }
        glob_start[nodes] = glob_list.len() as u32;
        let mut node_list: Vec<Node> = (0..=nodes)
            .map(|n| Node {
                children: child_start[n],
                dense: NONE,
                prefix: prefix.get(n).copied().unwrap_or(NONE),
                exact: exact.get(n).copied().unwrap_or(NONE),
                globs: glob_start[n],
            })
            .collect();
        let mut wide: Vec<usize> = (0..nodes)
            .filter(|&n| (child_start[n + 1] - child_start[n]) as usize > DENSE_MIN)
            .collect();
        wide.sort_by_key(|&n| std::cmp::Reverse(child_start[n + 1] - child_start[n]));
        wide.truncate(DENSE_TABLES);
        let mut dense = Vec::with_capacity(wide.len() * 256);
        for n in wide {
            node_list[n].dense = dense.len() as u32;
            let table = dense.len();
            dense.resize(table + 256, NONE);
            for i in child_start[n] as usize..child_start[n + 1] as usize {
                dense[table + usize::from(child_byte[i])] = child_node[i];
            }
        }
        let root = &node_list[0];
        let slash = if root.prefix != NONE || root.exact != NONE || glob_start[1] != 0 {
            ROOT
        } else {
            let to = child_start[1] as usize;
            child_byte[..to]
                .binary_search(&b'/')
                .map_or(NONE, |i| child_node[i])
        };
        IndexedSelection {
            group: sel.group_match(),
            nodes: node_list,
            child_byte,
            child_node,
            dense,
            globs: glob_list,
            filters,
            slash,
        }
    }

    /// A searcher for one literal segment each of `rules` (one node's
    /// wildcard rules) needs after its literal start, its longest; none
    /// when a rule needs none (`/a/*`: it may match any path).
    fn glob_filter(&self, rules: &[(u32, u32)], work: &mut u64) -> Option<Filter> {
        let needs: Vec<&[u8]> = rules
            .iter()
            .map(|&(_, ri)| {
                let (body, _) = unanchored(self.pattern(&self.rules[ri as usize]));
                let start = memchr::memchr(b'*', body).unwrap_or(body.len());
                body[start..]
                    .split(|&b| b == b'*')
                    .max_by_key(|seg| seg.len())
                    .filter(|seg| !seg.is_empty())
            })
            .collect::<Option<_>>()?;
        *work += needs.iter().map(|n| n.len() as u64).sum::<u64>();
        Filter::new(&needs)
    }

    /// The verdict for `path` under an indexed selection of this matcher,
    /// equal to [`Matcher::check_selected`]'s, adding the work to `work`:
    /// one unit per path byte walked and per rule tested, and one per 32
    /// bytes a wildcard rule compares.
    pub fn check_indexed(&self, ix: &IndexedSelection, path: &[u8], work: &mut u64) -> Verdict<'_> {
        match self.semantics {
            Semantics::Google => self.indexed_google(ix, path, false, work),
            Semantics::Draft1996 => self.indexed_draft(ix, path, work),
        }
    }

    /// [`Matcher::check_indexed`] of a request target's path
    /// ([`path_of`](crate::path_of)), the same verdict, but for a target
    /// that is already a path (as a log's nearly always is) without a
    /// search for its `#` first: the walk stops at a `#` (no rule's
    /// literal holds one, a comment starts there), the wildcard rules'
    /// filter searches the target as it is (a segment it finds after the
    /// `#` only means the rules are tried), and the path is cut at its `#`
    /// only when a wildcard rule is tried on it.
    pub fn check_indexed_target(
        &self,
        ix: &IndexedSelection,
        target: &[u8],
        work: &mut u64,
    ) -> Verdict<'_> {
        if self.walks_as_is(target) {
            return self.indexed_google(ix, target, true, work);
        }
        self.check_indexed(ix, &crate::path_of(target), work)
    }

    /// Whether `target` is walked as it is, a path already (Google's
    /// semantics; not a `//` network path, which `path_of` cuts).
    #[inline(always)]
    fn walks_as_is(&self, target: &[u8]) -> bool {
        self.semantics == Semantics::Google
            && target.first() == Some(&b'/')
            && target.get(1) != Some(&b'/')
    }

    /// Whether [`Matcher::check_indexed_target`] allows `target`: the
    /// same answer, without the verdict's rule (for callers that count
    /// verdicts over many requests).
    pub fn indexed_target_allowed(
        &self,
        ix: &IndexedSelection,
        target: &[u8],
        work: &mut u64,
    ) -> bool {
        if self.walks_as_is(target) {
            // As `google_verdict` reads the best rule: none, or an empty
            // pattern, allows.
            let (key, ri) = self.google_walk(ix, target, true, work);
            return key == 0 || {
                let r = &self.rules[ri as usize];
                r.priority == 0 || r.flags & F_ALLOW != 0
            };
        }
        self.check_indexed(ix, &crate::path_of(target), work)
            .allowed
    }

    /// Google's verdict for `path` by the walk; `target` when `path` is a
    /// request target that may go on past a `#` (what follows it is not
    /// the path's).
    fn indexed_google(
        &self,
        ix: &IndexedSelection,
        raw: &[u8],
        target: bool,
        work: &mut u64,
    ) -> Verdict<'_> {
        let (key, ri) = self.google_walk(ix, raw, target, work);
        let best = (key != 0).then(|| {
            let r = &self.rules[ri as usize];
            Best {
                rank: key - 1,
                priority: r.priority,
                allow: r.flags & F_ALLOW != 0,
                idx: ri,
            }
        });
        self.google_verdict(best, ix.group)
    }

    /// The walk of [`Matcher::indexed_google`]: the best rule for `raw`,
    /// as its rank plus one (0: none) and its index.
    #[inline(always)]
    fn google_walk(
        &self,
        ix: &IndexedSelection,
        raw: &[u8],
        target: bool,
        work: &mut u64,
    ) -> (u64, u32) {
        let ends_at = |depth: usize| depth == raw.len() || (target && raw[depth] == b'#');
        let mut w = Walk {
            raw,
            cut: (!target).then_some(raw),
            best: (0, NONE),
            bytes: PathBytes::default(),
            work,
        };
        let (mut node, mut depth) = (0u32, 0usize);
        // Nodes walked, added to `work` once at the end.
        let mut steps = 0u64;
        // A root that holds no rule is stepped over to its `/` child,
        // where every path starts.
        if ix.slash != ROOT && raw.first() == Some(&b'/') {
            steps += 1;
            if ix.slash == NONE {
                *w.work += steps;
                return (0, NONE);
            }
            (node, depth) = (ix.slash, 1);
        }
        loop {
            steps += 1;
            let n = &ix.nodes[node as usize];
            if n.prefix != NONE {
                self.consider(&mut w.best, n.prefix);
            }
            if n.exact != NONE && ends_at(depth) {
                self.consider(&mut w.best, n.exact);
            }
            let (mut from, to) = (n.globs as usize, ix.nodes[node as usize + 1].globs as usize);
            if from < to {
                let first = ix.globs[from];
                if first & FILTERED != 0 {
                    steps += 1 + (raw.len() >> 5) as u64;
                    from = if ix.filters[(first & !FILTERED) as usize].found_in(raw) {
                        from + 1
                    } else {
                        to
                    };
                }
                if from < to {
                    self.node_globs(&ix.globs[from..to], depth, &mut w);
                }
            }
            // A target's `#` ends the walk there: no literal holds one (it
            // starts a comment), so no node has a child by it.
            let Some(&b) = raw.get(depth) else { break };
            match ix.child(node, b) {
                Some(c) => node = c,
                None => break,
            }
            depth += 1;
        }
        *w.work += steps;
        w.best
    }

    /// Takes rule `ri` as the walk's best (rank plus one, index) when it
    /// ranks higher.
    #[inline(always)]
    fn consider(&self, best: &mut (u64, u32), ri: u32) {
        let key = self.rules[ri as usize].rank() + 1;
        if key > best.0 {
            *best = (key, ri);
        }
    }

    /// Tries the wildcard rules `globs` of the node the walk reached at
    /// `depth` (best rank first, those its filter let through), out of
    /// the walk's loop: most nodes have none, and most paths pass none.
    #[inline(never)]
    fn node_globs(&self, globs: &[u32], depth: usize, w: &mut Walk<'_>) {
        let raw = w.raw;
        for &gi in globs {
            let r = &self.rules[gi as usize];
            if w.best.0 > r.rank() {
                break;
            }
            let path = *w
                .cut
                .get_or_insert_with(|| &raw[..memchr::memchr(b'#', raw).unwrap_or(raw.len())]);
            // The walk has matched the rule's literal start: the rest
            // of it is matched from here.
            let (body, anchored) = unanchored(self.pattern(r));
            let mut scanned = 0;
            let m = (r.flags & F_PROBE == 0 || w.bytes.admits(path, r.head, w.work))
                && glob_tail(path, depth, &body[depth..], anchored, &mut scanned);
            *w.work += 1 + ((body.len() as u64 + scanned) >> 5);
            if m {
                self.consider(&mut w.best, gi);
                break;
            }
        }
    }

    fn indexed_draft(&self, ix: &IndexedSelection, path: &[u8], work: &mut u64) -> Verdict<'_> {
        let mut first = NONE;
        let mut node = 0u32;
        let mut bytes = Recoded::new(path, Recoding::DraftDecode);
        loop {
            *work += 1;
            first = first.min(ix.nodes[node as usize].prefix);
            let Some(b) = bytes.next() else { break };
            match ix.child(node, b) {
                Some(c) => node = c,
                None => break,
            }
        }
        if first == NONE {
            return Verdict {
                allowed: true,
                rule: None,
                group: ix.group,
            };
        }
        let m = self.matched(first);
        let allowed = m.kind == crate::parse::RuleKind::Allow || m.pattern.is_empty();
        Verdict {
            allowed,
            rule: Some(m),
            group: ix.group,
        }
    }
}
