//! Rules no request can reach: an earlier rule that decides (not a
//! `label`, no `rate`) and whose every condition holds whenever the later
//! rule's do. The test is conservative: a rule it reports is unreachable;
//! one it does not report may still be (conditions it cannot compare, such
//! as two different regular expressions, are taken to differ).

use botscope_botid::IpRange;

use crate::model::Action;
use crate::policy::{Conditions, Policy, Rule};
use crate::{Finding, Severity};

fn subset<T: PartialEq>(inner: &Option<Vec<T>>, outer: &Option<Vec<T>>) -> bool {
    match (inner, outer) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(i), Some(o)) => i.iter().all(|x| o.contains(x)),
    }
}

fn bits_subset(inner: Option<u8>, outer: Option<u8>) -> bool {
    match (inner, outer) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(i), Some(o)) => i & !o == 0,
    }
}

fn range_in(inner: &IpRange, outer: &IpRange) -> bool {
    match (inner, outer) {
        (IpRange::V4(a, b), IpRange::V4(c, d)) => c <= a && b <= d,
        (IpRange::V6(a, b), IpRange::V6(c, d)) => c <= a && b <= d,
        _ => false,
    }
}

/// A path set that matches every path (`/` or `*`).
fn every_path(c: &Conditions) -> bool {
    c.path
        .as_ref()
        .is_some_and(|p| p.patterns.iter().any(|x| x == "/" || x == "*" || x == "/*"))
}

/// Whether every request `later` matches (its rate aside) also meets
/// `earlier`'s conditions.
fn covers(earlier: &Conditions, later: &Conditions) -> bool {
    if earlier.rate.is_some() {
        return false;
    }
    let path = every_path(earlier)
        || match (&later.path, &earlier.path) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(e)) => l.patterns.iter().all(|p| e.patterns.contains(p)),
        };
    let network = match (&later.network, &earlier.network) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(l), Some(e)) => l.iter().all(|r| e.iter().any(|o| range_in(r, o))),
    };
    let user_agent = match (&later.user_agent, &earlier.user_agent) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(l), Some(e)) => l.as_str() == e.as_str(),
    };
    let robots = earlier.robots.is_none() || earlier.robots == later.robots;
    path && network
        && user_agent
        && robots
        && subset(&later.bots, &earlier.bots)
        && subset(&later.categories, &earlier.categories)
        && bits_subset(later.identity, earlier.identity)
        && bits_subset(later.signature, earlier.signature)
        && bits_subset(later.list, earlier.list)
        && subset(&later.asn, &earlier.asn)
        && subset(&later.method, &earlier.method)
}

fn shadow(rules: &[Rule], j: usize) -> Option<&Rule> {
    let later = &rules[j];
    rules[..j]
        .iter()
        .find(|e| e.action != Action::Label && covers(&e.when, &later.when))
}

/// A warning for every rule an earlier rule keeps every request from.
pub fn unreachable(policy: &Policy) -> Vec<Finding> {
    let mut out = Vec::new();
    for (j, rule) in policy.rules.iter().enumerate() {
        if let Some(e) = shadow(&policy.rules, j) {
            out.push(Finding {
                file: policy.file.clone(),
                line: rule.line,
                rule: Some(rule.name.clone()),
                severity: Severity::Warning,
                message: format!(
                    "no request can reach this rule: `{}` (line {}) decides every request it matches ({})",
                    e.name,
                    e.line,
                    e.action.as_str()
                ),
            });
        }
    }
    out
}
