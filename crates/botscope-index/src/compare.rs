//! Two versions of a file compared, and the restriction an agent meets
//! (the measure of "Consent in Crisis", with the exact engine). Pure.

use std::collections::BTreeSet;
use std::fmt::Write;

use botscope_robotstxt::{Matcher, ParseOptions, Robots, RuleKind, Semantics};
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
    let (bo, bn) = (crate::bias(old, semantics), crate::bias(new, semantics));
    let (mo, mn) = (
        Matcher::compile(old, semantics, &opts),
        Matcher::compile(new, semantics, &opts),
    );
    let mut robots: Vec<String> = vec!["*".into()];
    for r in bo.robots.iter().chain(&bn.robots) {
        if !robots.contains(&r.robot) {
            robots.push(r.robot.clone());
        }
    }
    let paths: BTreeSet<&String> = bo.dir.iter().chain(&bn.dir).collect();
    let mut verdicts = Vec::new();
    for robot in &robots {
        // The universal robot: a name no group gives.
        let ask = if robot == "*" { "qqqqqqqqqqqq" } else { robot };
        for p in &paths {
            let path = if p.starts_with('/') {
                p.to_string()
            } else {
                format!("/{p}")
            };
            let before = mo.check_path(ask, path.as_bytes()).allowed;
            let after = mn.check_path(ask, path.as_bytes()).allowed;
            if before != after {
                verdicts.push(VerdictChange {
                    robot: robot.clone(),
                    path: (*p).clone(),
                    before,
                    after,
                });
            }
        }
    }
    let bias_of =
        |b: &crate::FileBias, r: &str| b.robots.iter().find(|x| x.robot == r).map(|x| x.bias);
    let bias = robots
        .iter()
        .skip(1)
        .map(|r| BiasChange {
            robot: r.clone(),
            before: bias_of(&bo, r),
            after: bias_of(&bn, r),
        })
        .filter(|c| c.before != c.after)
        .collect();
    VersionDiff {
        added: ln.difference(&lo).cloned().collect(),
        removed: lo.difference(&ln).cloned().collect(),
        verdicts,
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

/// The restriction each of `agents` meets in `body` (an agent without a
/// group of its own meets the `*` group's, as the matcher says).
pub fn restrictions(body: &[u8], agents: &[String], semantics: Semantics) -> Vec<Restriction> {
    let opts = ParseOptions::default();
    let m = Matcher::compile(body, semantics, &opts);
    let b = crate::bias(body, semantics);
    let paths: Vec<String> = b
        .dir
        .iter()
        .map(|p| {
            if p.starts_with('/') {
                p.clone()
            } else {
                format!("/{p}")
            }
        })
        .collect();
    agents
        .iter()
        .map(|a| {
            if !m.check_path(a, b"/").allowed {
                Restriction::Full
            } else if paths.iter().any(|p| !m.check_path(a, p.as_bytes()).allowed) {
                Restriction::Partial
            } else {
                Restriction::None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
