//! Two versions of a file compared, and the restriction an agent meets
//! (the measure of "Consent in Crisis", with the exact engine). Pure.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use botscope_robotstxt::{Matcher, ParseOptions, Robots, RuleKind, Selection, Semantics};

use crate::bias::{BIAS_WORK_CAP, Detail, bias_with};

/// Verdict changes a diff lists at most; the rest are counted
/// ([`VersionDiff::verdicts_omitted`]).
pub const DIFF_VERDICTS: usize = 10_000;
use serde::Serialize;

/// One rule line of a version, with the agents of its group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RuleLine {
    /// The User-agent values of its group, lower-cased, joined by `, `
    /// (empty for a rule before any group).
    pub agents: String,
    /// `allow` or `disallow`.
    pub kind: &'static str,
    /// The value as written.
    pub value: String,
}

/// A robot whose verdict on a path changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerdictChange {
    /// The robot (`*` for the universal one).
    pub robot: String,
    /// The path.
    pub path: String,
    /// Allowed before.
    pub before: bool,
    /// Allowed after.
    pub after: bool,
}

/// A robot's bias before and after (absent when the version does not
/// name it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BiasChange {
    /// The robot.
    pub robot: String,
    /// Before.
    pub before: Option<i64>,
    /// After.
    pub after: Option<i64>,
}

/// What changed between two versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionDiff {
    /// Rule lines only in the newer version.
    pub added: Vec<RuleLine>,
    /// Rule lines only in the older version.
    pub removed: Vec<RuleLine>,
    /// Verdicts that changed, per robot named in either version (and `*`),
    /// over the paths of both.
    pub verdicts: Vec<VerdictChange>,
    /// Verdict changes past the 10,000 listed, counted and not listed.
    pub verdicts_omitted: usize,
    /// The verdicts needed more work than the budget of one file's bias
    /// (`BIAS_WORK_CAP`, twice): those listed are right, others may be
    /// missing.
    pub too_complex: bool,
    /// Bias per robot whose bias changed.
    pub bias: Vec<BiasChange>,
}

fn rule_lines(r: &Robots) -> BTreeSet<RuleLine> {
    let mut out = BTreeSet::new();
    let line = |agents: String, kind: RuleKind, value: &str| RuleLine {
        agents,
        kind: match kind {
            RuleKind::Allow => "allow",
            RuleKind::Disallow => "disallow",
        },
        value: value.trim().to_owned(),
    };
    for g in &r.groups {
        let agents: Vec<String> = g
            .user_agents
            .iter()
            .map(|u| u.value.trim().to_lowercase())
            .collect();
        for rule in &g.rules {
            out.insert(line(agents.join(", "), rule.kind, &rule.pattern));
        }
    }
    for rule in &r.orphan_rules {
        out.insert(line(String::new(), rule.kind, &rule.pattern));
    }
    out
}

/// Compares two versions under `semantics`.
pub fn diff_versions(old: &[u8], new: &[u8], semantics: Semantics) -> VersionDiff {
    let opts = ParseOptions::default();
    let (ro, rn) = (
        Robots::parse_with(old, &opts),
        Robots::parse_with(new, &opts),
    );
    let (lo, ln) = (rule_lines(&ro), rule_lines(&rn));
    let (mo, mn) = (
        Matcher::compile(old, semantics, &opts),
        Matcher::compile(new, semantics, &opts),
    );
    let (bo, bn) = (
        bias_with(&ro, &mo, Detail::Summary, BIAS_WORK_CAP),
        bias_with(&rn, &mn, Detail::Summary, BIAS_WORK_CAP),
    );
    let mut robots: Vec<String> = vec!["*".into()];
    let mut seen: HashSet<&str> = HashSet::new();
    for r in bo.robots.iter().chain(&bn.robots) {
        if seen.insert(&r.robot) {
            robots.push(r.robot.clone());
        }
    }
    let paths: Vec<Vec<u8>> = bo
        .dir
        .iter()
        .chain(&bn.dir)
        .collect::<BTreeSet<&String>>()
        .into_iter()
        .map(|p| {
            let mut v = Vec::with_capacity(p.len() + 1);
            if !p.starts_with('/') {
                v.push(b'/');
            }
            v.extend_from_slice(p.as_bytes());
            v
        })
        .collect();
    // Robots that select the same groups in both versions change
    // together: each distinct pair is asked about every path once.
    // Each robot is asked as the bias asks it: by its line's token under
    // Google's rules. The universal robot: a name no group gives.
    let mut tokens: HashMap<String, &str> = HashMap::new();
    for ua in ro
        .groups
        .iter()
        .chain(&rn.groups)
        .flat_map(|g| &g.user_agents)
    {
        if semantics == Semantics::Google && !ua.token.is_empty() {
            tokens
                .entry(ua.value.trim().to_ascii_lowercase())
                .or_insert(ua.token.as_str());
        }
    }
    let asks: Vec<&str> = robots
        .iter()
        .map(|r| match tokens.get(r) {
            _ if r == "*" => "qqqqqqqqqqqq",
            Some(t) => t,
            None => r.as_str(),
        })
        .collect();
    let mut work = 0u64;
    let cap = 2 * BIAS_WORK_CAP;
    let (so, sn) = (
        mo.select_many(&asks, &mut work),
        mn.select_many(&asks, &mut work),
    );
    // Per pair of selections, the paths whose verdict changed (index and
    // the verdict after); `None` past the budget.
    type Changes = Option<Vec<(u32, bool)>>;
    let mut changed: HashMap<(&Selection, &Selection), Changes> = HashMap::new();
    let mut too_complex = !bo.computed() || !bn.computed();
    for (o, n) in so.iter().zip(&sn) {
        if changed.contains_key(&(o, n)) {
            continue;
        }
        let list = if work > cap {
            too_complex = true;
            None
        } else {
            let (io, inn) = (
                mo.index_selection(o, &mut work),
                mn.index_selection(n, &mut work),
            );
            let mut list = Vec::new();
            for (i, p) in paths.iter().enumerate() {
                let after = mn.check_indexed(&inn, p, &mut work).allowed;
                if mo.check_indexed(&io, p, &mut work).allowed != after {
                    list.push((i as u32, after));
                }
            }
            Some(list)
        };
        changed.insert((o, n), list);
    }
    let shown: Vec<&String> = bo
        .dir
        .iter()
        .chain(&bn.dir)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut verdicts = Vec::new();
    let mut verdicts_omitted = 0;
    for ((robot, o), n) in robots.iter().zip(&so).zip(&sn) {
        let Some(Some(list)) = changed.get(&(o, n)) else {
            continue;
        };
        for &(i, after) in list {
            if verdicts.len() >= DIFF_VERDICTS {
                verdicts_omitted += 1;
                continue;
            }
            verdicts.push(VerdictChange {
                robot: robot.clone(),
                path: shown[i as usize].clone(),
                before: !after,
                after,
            });
        }
    }
    let index = |b: &crate::FileBias| -> HashMap<String, i64> {
        b.robots.iter().map(|x| (x.robot.clone(), x.bias)).collect()
    };
    let (bio, bin) = (index(&bo), index(&bn));
    let both = bo.computed() && bn.computed();
    let bias = robots
        .iter()
        .skip(1)
        .filter(|_| both)
        .map(|r| BiasChange {
            robot: r.clone(),
            before: bio.get(r).copied(),
            after: bin.get(r).copied(),
        })
        .filter(|c| c.before != c.after)
        .collect();
    VersionDiff {
        added: ln.difference(&lo).cloned().collect(),
        removed: lo.difference(&ln).cloned().collect(),
        verdicts,
        verdicts_omitted,
        too_complex,
        bias,
    }
}

impl VersionDiff {
    /// For people: rules removed and added, then verdicts and bias that
    /// changed.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        if self.added.is_empty() && self.removed.is_empty() {
            o.push_str("no rule changed\n");
        }
        let show = |o: &mut String, sign: char, r: &RuleLine| {
            let kind = if r.kind == "allow" {
                "Allow"
            } else {
                "Disallow"
            };
            let group = if r.agents.is_empty() {
                "no group".to_owned()
            } else {
                format!("User-agent: {}", r.agents)
            };
            let _ = writeln!(o, "{sign} {kind}: {}    ({group})", r.value);
        };
        for r in &self.removed {
            show(&mut o, '-', r);
        }
        for r in &self.added {
            show(&mut o, '+', r);
        }
        let word = |b: bool| if b { "allowed" } else { "disallowed" };
        if !self.verdicts.is_empty() {
            o.push_str("\nverdicts that changed:\n");
            for v in &self.verdicts {
                let _ = writeln!(
                    o,
                    "  {} {}: {} -> {}",
                    v.robot,
                    v.path,
                    word(v.before),
                    word(v.after)
                );
            }
        }
        if self.verdicts_omitted > 0 {
            let _ = writeln!(
                o,
                "  … and {} more verdicts that changed",
                self.verdicts_omitted
            );
        }
        if self.too_complex {
            o.push_str("\ntoo-complex: a version needs more work than the budget; bias changes not computed, verdict changes may be incomplete\n");
        }
        if !self.bias.is_empty() {
            o.push_str("\nbias that changed:\n");
            let n = |b: Option<i64>| b.map_or_else(|| "not named".to_owned(), |b| format!("{b:+}"));
            for b in &self.bias {
                let _ = writeln!(o, "  {}: {} -> {}", b.robot, n(b.before), n(b.after));
            }
        }
        o
    }
}

/// How far a file keeps an agent out (Longpre et al., 2024): `Full` when
/// it may not fetch `/`, `Partial` when it may but some path of the file
/// is closed to it, `None` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Restriction {
    /// Every path of the file open.
    None,
    /// Some paths closed.
    Partial,
    /// `/` closed.
    Full,
}

impl Restriction {
    /// `none`, `partial` or `full` (as it serializes).
    pub fn as_str(self) -> &'static str {
        match self {
            Restriction::None => "none",
            Restriction::Partial => "partial",
            Restriction::Full => "full",
        }
    }
}

/// The restriction each of `agents` meets in `body` (an agent without a
/// group of its own meets the `*` group's, as the matcher says).
pub fn restrictions(body: &[u8], agents: &[String], semantics: Semantics) -> Vec<Restriction> {
    let opts = ParseOptions::default();
    let m = Matcher::compile(body, semantics, &opts);
    let dir = crate::bias::dir_of(&Robots::parse_with(body, &opts));
    // Agents that select the same groups meet the same restriction: each
    // distinct selection is indexed once and asked about the paths.
    let asks: Vec<&str> = agents.iter().map(String::as_str).collect();
    let sels = m.select_many(&asks, &mut 0);
    let mut known: HashMap<&Selection, Restriction> = HashMap::new();
    sels.iter()
        .map(|sel| {
            *known.entry(sel).or_insert_with(|| {
                let ix = m.index_selection(sel, &mut 0);
                let mut work = 0;
                if !m.check_indexed(&ix, b"/", &mut work).allowed {
                    Restriction::Full
                } else if dir
                    .iter()
                    .any(|(_, p)| !m.check_indexed(&ix, p, &mut work).allowed)
                {
                    Restriction::Partial
                } else {
                    Restriction::None
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found: an 8 KB file of one group of many User-agent lines made every
    /// view of its site's versions take seconds (both biases and every
    /// robot's every verdict recomputed). Robots that select the same
    /// groups are asked once, and the list of changes is bounded.
    #[test]
    fn a_diff_of_a_crafted_file_is_bounded() {
        let mut new = Vec::new();
        for i in 0..1_000 {
            new.extend_from_slice(format!("User-agent: b{i}\n").as_bytes());
        }
        for i in 0..1_000 {
            new.extend_from_slice(format!("Disallow: /p{i}\n").as_bytes());
        }
        let d = diff_versions(b"", &new, Semantics::Google);
        assert!(!d.too_complex);
        assert_eq!(d.verdicts.len(), DIFF_VERDICTS);
        assert_eq!(d.verdicts.len() + d.verdicts_omitted, 1_000 * 1_000);
        assert!(
            d.verdicts
                .iter()
                .all(|v| v.before && !v.after && v.robot != "*")
        );
        assert_eq!(d.bias.len(), 1_000);
        assert!(
            d.bias
                .iter()
                .all(|b| b.before.is_none() && b.after == Some(-1_000))
        );
        assert!(d.to_text().contains("and 990000 more verdicts"));
        let r = restrictions(
            &new,
            &["b".into(), "b7".into(), "gptbot".into()],
            Semantics::Google,
        );
        assert_eq!(
            r,
            [Restriction::Partial, Restriction::None, Restriction::None]
        );
    }

    #[test]
    fn rules_verdicts_and_bias() {
        let old = b"User-agent: *\nDisallow: /a\n\nUser-agent: GPTBot\nDisallow: /a\n";
        let new = b"User-agent: *\nDisallow: /a\n\nUser-agent: GPTBot\nDisallow: /\n";
        let d = diff_versions(old, new, Semantics::Google);
        assert_eq!(d.removed.len(), 1);
        assert_eq!(d.added[0].value, "/");
        assert_eq!(d.added[0].agents, "gptbot");
        assert_eq!(
            d.verdicts,
            [VerdictChange {
                robot: "gptbot".into(),
                path: "/".into(),
                before: true,
                after: false
            }]
        );
        assert_eq!(
            d.bias,
            [BiasChange {
                robot: "gptbot".into(),
                before: Some(0),
                after: Some(-1)
            }]
        );
        let t = d.to_text();
        assert!(t.contains("- Disallow: /a    (User-agent: gptbot)"), "{t}");
        assert!(t.contains("gptbot /: allowed -> disallowed"), "{t}");
        assert_eq!(
            diff_versions(old, old, Semantics::Google).to_text(),
            "no rule changed\n"
        );
    }

    #[test]
    fn restriction_levels() {
        let body = b"User-agent: *\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /\n\nUser-agent: CCBot\nDisallow:\n";
        let agents = ["GPTBot", "ClaudeBot", "CCBot"].map(String::from);
        assert_eq!(
            restrictions(body, &agents, Semantics::Google),
            [Restriction::Full, Restriction::Partial, Restriction::None]
        );
        assert_eq!(
            restrictions(b"", &agents[..1], Semantics::Google),
            [Restriction::None]
        );
    }
}
