//! Rules no request can reach: an earlier rule that decides (not a
//! `label`, no `rate`) and whose every condition holds whenever the later
//! rule's do. The test is conservative: a rule it reports is unreachable;
//! one it does not report may still be (conditions it cannot compare, such
//! as two different regular expressions, are taken to differ).

use botscope_botid::IpRange;

use crate::model::{Action, Facts, Identity, Signature};
use crate::policy::{Conditions, Policy, Rule};
use crate::rate::Rates;
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

/// Rates slower than one request a minute: each key lives as long as the
/// period (an hour for `1/h`), so the table fills with keys a flood leaves.
fn slow_rates(policy: &Policy) -> Vec<Finding> {
    policy
        .rules
        .iter()
        .filter_map(|r| {
            let rate = r.when.rate.as_ref()?;
            let every = rate.period_ms / u64::from(rate.count.max(1));
            (every > 60_000).then(|| Finding {
                file: policy.file.clone(),
                line: r.line,
                rule: Some(r.name.clone()),
                severity: Severity::Warning,
                message: format!(
                    "a rate slower than one request a minute (one every {} s): each key is kept up to {} s, and a flood of new addresses fills the rate table (--max-rate-keys) with them; count per network, or allow more per minute",
                    every / 1000,
                    rate.period_ms / 1000
                ),
            })
        })
        .collect()
}

/// The rule that decides `f`, by name and line (the default: line 0).
fn decided_by<'p>(policy: &'p Policy, f: &Facts) -> (Action, &'p str, u32) {
    let d = policy.decide(f, &Rates::new(64));
    let line = d
        .index
        .and_then(|i| policy.rules.get(i))
        .map_or(0, |r| r.line);
    (d.action, d.rule, line)
}

/// Warnings for a policy that hurts those it should spare: a verified
/// search engine refused or challenged, a person's browser refused, the
/// protocol files refused or challenged, on a plain request.
fn hurts(policy: &Policy) -> Vec<Finding> {
    let base = Facts {
        ip: std::net::IpAddr::from([192, 0, 2, 1]),
        method: "GET",
        path: "/",
        user_agent: "",
        identity: Identity::Unclaimed,
        bot: None,
        category: crate::BROWSER,
        signature: Signature::None,
        asn: None,
        lists: 0,
        robots: None,
        now_ms: 1_000,
        navigation: true,
        passed: false,
        trapped: crate::Trapped::NONE,
    };
    let googlebot = Facts {
        user_agent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        identity: Identity::Verified,
        bot: Some("Googlebot"),
        category: "search",
        ..base
    };
    let browser = Facts {
        user_agent: "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0",
        ..base
    };
    let robot = Facts {
        user_agent: "python-requests/2.31",
        category: crate::UNREGISTERED_BOT,
        ..base
    };
    let mut out = Vec::new();
    let mut warn = |line: u32, rule: &str, message: String| {
        let rule = (rule != "default").then(|| rule.to_owned());
        if !out.iter().any(|f: &Finding| f.message == message) {
            out.push(Finding {
                file: policy.file.clone(),
                line,
                rule,
                severity: Severity::Warning,
                message,
            });
        }
    };
    let (action, rule, line) = decided_by(policy, &googlebot);
    if action == Action::Charge {
        warn(
            line,
            rule,
            "a verified search engine's request for / is charged: search engines do not pay per crawl, so the site leaves their results; allow `identity: verified` search engines before this rule".to_owned(),
        );
    }
    if action == Action::License {
        warn(
            line,
            rule,
            "a verified search engine's request for / needs an RSL licence token: search engines do not acquire licences, so the site leaves their results; allow `identity: verified` search engines before this rule".to_owned(),
        );
    }
    if matches!(action, Action::Deny | Action::Challenge) {
        warn(
            line,
            rule,
            format!(
                "a verified search engine's request for / is {}: search engines do not pass challenges, and a site they cannot crawl leaves their results; allow `identity: verified` before this rule",
                past(action)
            ),
        );
    }
    let (action, rule, line) = decided_by(policy, &browser);
    if action == Action::Deny {
        warn(
            line,
            rule,
            "a person's browser asking for / is refused: challenge browsers (a person passes) rather than deny them".to_owned(),
        );
    }
    for f in [&googlebot, &browser, &robot] {
        for path in ["/robots.txt", "/.well-known/security.txt"] {
            let (action, rule, line) = decided_by(policy, &Facts { path, ..*f });
            if matches!(action, Action::Deny | Action::Challenge) {
                warn(
                    line,
                    rule,
                    format!(
                        "{path} is {}: a crawler that cannot read robots.txt cannot obey it, and /.well-known/ holds key directories and security.txt",
                        past(action)
                    ),
                );
            }
        }
    }
    out
}

fn past(a: Action) -> &'static str {
    match a {
        Action::Deny => "refused",
        Action::Challenge => "challenged",
        Action::Limit => "limited",
        Action::Allow | Action::Label => "allowed",
        Action::Charge => "charged",
        Action::License => "licensed",
    }
}

/// Every warning of a compiled policy: unreachable rules, slow rates, and
/// rules that hurt search engines, people or the protocol files.
pub fn warnings(policy: &Policy) -> Vec<Finding> {
    let mut out = unreachable(policy);
    out.extend(slow_rates(policy));
    out.extend(hurts(policy));
    out.extend(traps_off(policy));
    out
}

/// Warnings for `trapped:` rules naming a kind the policy's `traps:` does
/// not switch on: no such catch ever happens.
fn traps_off(policy: &Policy) -> Vec<Finding> {
    let on = policy.traps.as_ref().map_or(0, |t| t.kinds);
    policy
        .rules
        .iter()
        .filter_map(|r| {
            let (kinds, _) = r.when.trapped?;
            (kinds & on == 0).then(|| Finding {
                file: policy.file.clone(),
                line: r.line,
                rule: Some(r.name.clone()),
                severity: Severity::Warning,
                message: if on == 0 {
                    "`trapped:` with no `traps:` in the policy: no trap link is served, so this rule never applies".to_owned()
                } else {
                    "`trapped:` names only trap kinds that `traps: kinds` does not switch on: this rule never applies".to_owned()
                },
            })
        })
        .collect()
}

/// Warnings for `charge` rules whose paths the site's robots.txt (`body`,
/// the file the gate serves every other crawler) closes: a crawler that
/// obeys robots.txt never asks for them, so never pays. Each pattern is
/// checked at its literal start (up to its first `*` or `$`).
pub fn priced_but_closed(policy: &Policy, body: &[u8]) -> Vec<Finding> {
    let matcher = botscope_robotstxt::Matcher::new(body);
    let mut out = Vec::new();
    for r in policy.rules.iter().filter(|r| r.action == Action::Charge) {
        let Some(paths) = &r.when.path else { continue };
        for p in &paths.patterns {
            let literal: String = p.chars().take_while(|c| *c != '*' && *c != '$').collect();
            let probe = if literal.is_empty() {
                "/"
            } else {
                literal.as_str()
            };
            let v = matcher.check_path("*", probe.as_bytes());
            if !v.allowed {
                let line = v.rule.map_or(0, |x| x.line);
                out.push(Finding {
                    file: policy.file.clone(),
                    line: r.line,
                    rule: Some(r.name.clone()),
                    severity: Severity::Warning,
                    message: format!(
                        "`{}` is priced, but robots.txt closes {} to crawlers (its line {line}): a crawler that obeys it never asks, so never pays",
                        botscope_text::quoted(p),
                        botscope_text::quoted(probe)
                    ),
                });
            }
        }
    }
    out
}
