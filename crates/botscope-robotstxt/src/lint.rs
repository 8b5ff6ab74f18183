//! Lint: what a webmaster needs to know about a robots.txt file. Reads the
//! same parse tree as everything else; adds the checks that need the whole
//! file (groups, rule sets per agent) to the parser's own diagnostics.

use std::collections::HashMap;

use crate::diagnostic::{Code, Diagnostic};
use crate::parse::{Group, Robots, Rule, RuleKind};

/// All diagnostics for a parsed file, parser's and lint's, in line order.
///
/// ```
/// use botscope_robotstxt::{lint, Robots};
/// let r = Robots::parse(b"User-agent: Googlebot/2.1\nDisallow: private\nDisalow: /tmp\n");
/// let codes: Vec<&str> = lint(&r).iter().map(|d| d.code.as_str()).collect();
/// assert_eq!(codes, ["R005", "R007", "R021"]);
/// ```
pub fn lint(robots: &Robots) -> Vec<Diagnostic> {
    let mut out = robots.diagnostics.clone();
    let mut l = Linter {
        out: &mut out,
        robots,
    };
    l.groups();
    l.rules();
    l.rule_sets();
    l.sitemaps();
    out.sort_by_key(|d| (d.line, d.column, d.code));
    out
}

struct Linter<'a> {
    out: &'a mut Vec<Diagnostic>,
    robots: &'a Robots,
}

/// The literal start of a pattern: up to the first `*` or trailing `$`.
fn literal_prefix(p: &str) -> &str {
    let end = p.find('*').unwrap_or(p.len());
    let lit = &p[..end];
    if end == p.len() {
        lit.strip_suffix('$').unwrap_or(lit)
    } else {
        lit
    }
}

fn is_plain(p: &str) -> bool {
    !p.contains('*') && !p.ends_with('$')
}

impl Linter<'_> {
    fn push(&mut self, d: Diagnostic) {
        self.out.push(d);
    }

    fn groups(&mut self) {
        let r = self.robots;
        // Lines of keys that are not rules: they do not end a group.
        let mut non_rule_lines: Vec<u32> = r
            .sitemaps
            .iter()
            .map(|s| s.line)
            .chain(r.hosts.iter().map(|h| h.line))
            .chain(r.clean_params.iter().map(|h| h.line))
            .chain(r.other.iter().map(|o| o.line))
            .chain(r.groups.iter().flat_map(|g| {
                g.crawl_delay
                    .iter()
                    .map(|c| c.line)
                    .chain(g.request_rate.iter().map(|c| c.line))
                    .chain(g.visit_time.iter().map(|c| c.line))
            }))
            .collect();
        non_rule_lines.sort_unstable();
        let mut first_seen: HashMap<String, u32> = HashMap::new();
        for g in &r.groups {
            self.user_agents(g);
            for pair in g.user_agents.windows(2) {
                let (a, b) = (&pair[0], &pair[1]);
                let between = non_rule_lines.partition_point(|&l| l <= a.line);
                if non_rule_lines.get(between).is_some_and(|&l| l < b.line) {
                    self.push(
                        Diagnostic::new(
                            Code::GroupContinuation,
                            b.line,
                            1,
                            format!(
                                "`{}` joins the group of `{}` (line {}): only non-rule lines came between, so RFC 9309 and Google apply the rules below to both",
                                b.value, g.user_agents[0].value, g.user_agents[0].line
                            ),
                        )
                        .suggest("if it needs rules of its own, end the group above with an Allow or Disallow line first"),
                    );
                }
            }
            let first_ua = &g.user_agents[0];
            if g.rules.is_empty() {
                let names: Vec<&str> = g.user_agents.iter().map(|u| u.value.as_str()).collect();
                let msg = if g.is_global() {
                    "group has no rules: every crawler may fetch everything".to_owned()
                } else {
                    format!(
                        "group for {} has no rules: it may fetch everything, and the `*` group no longer applies to it",
                        names.join(", ")
                    )
                };
                self.push(
                    Diagnostic::new(Code::EmptyGroup, first_ua.line, 1, msg)
                        .suggest("add rules, or `Disallow:` to state that all is allowed"),
                );
            }
            if let Some(cd) = &g.crawl_delay {
                self.push(Diagnostic::new(
                    Code::CrawlDelayIgnored,
                    cd.line,
                    1,
                    "Googlebot ignores Crawl-delay (Bing, Yandex and others read it)",
                ));
            }
            let mut in_group: Vec<String> = Vec::new();
            for ua in &g.user_agents {
                let key = if ua.global {
                    "*".to_owned()
                } else {
                    ua.token.to_ascii_lowercase()
                };
                if in_group.contains(&key) {
                    continue;
                }
                in_group.push(key.clone());
                if let Some(&prev) = first_seen.get(&key) {
                    self.push(
                        Diagnostic::new(
                            Code::DuplicateGroup,
                            ua.line,
                            1,
                            format!(
                                "`{}` already has a group at line {prev}; crawlers merge the two",
                                ua.value
                            ),
                        )
                        .suggest("keep all rules for one agent in one group"),
                    );
                } else {
                    first_seen.insert(key, ua.line);
                }
            }
        }
    }

    fn user_agents(&mut self, g: &Group) {
        for ua in &g.user_agents {
            if ua.global {
                if ua.value.len() > 1 {
                    self.push(
                        Diagnostic::new(
                            Code::UserAgentChars,
                            ua.line,
                            1,
                            format!("`{}` is read as `*`", ua.value),
                        )
                        .suggest("write `User-agent: *`"),
                    );
                }
                continue;
            }
            if ua.token.is_empty() {
                self.push(
                    Diagnostic::new(
                        Code::UserAgentInvalid,
                        ua.line,
                        1,
                        format!(
                            "user-agent `{}` has no product token no crawler can match it",
                            ua.value
                        ),
                    )
                    .suggest("name a crawler (`Googlebot`) or `*`"),
                );
            } else if ua.value.len() > ua.token.len() {
                let rest = &ua.value[ua.token.len()..];
                let (code, what) = if rest.starts_with('/') {
                    (Code::UserAgentVersion, "a version")
                } else {
                    (Code::UserAgentChars, "characters outside [A-Za-z_-]")
                };
                self.push(
                    Diagnostic::new(code, ua.line, 1, format!("user-agent `{}` has {what}; Google matches only `{}`, other crawlers may match nothing", ua.value, ua.token))
                        .suggest(format!("write `User-agent: {}`", ua.token)),
                );
            }
        }
    }

    fn rules(&mut self) {
        for g in &self.robots.groups {
            for rule in &g.rules {
                self.rule(rule);
            }
        }
    }

    fn rule(&mut self, rule: &Rule) {
        let p = rule.pattern.as_str();
        if !p.is_empty() && !p.starts_with('/') && !p.starts_with('*') {
            let suggestion = match p.find("://").map(|i| &p[i + 3..]) {
                Some(after) => format!(
                    "write the path only: `{}`",
                    after.find('/').map_or("/", |i| &after[i..])
                ),
                None => format!("write `/{p}` or `*{p}`"),
            };
            self.push(
                Diagnostic::new(
                    Code::PatternStart,
                    rule.line,
                    1,
                    format!("pattern `{p}` does not start with `/` or `*`, so it never matches"),
                )
                .suggest(suggestion),
            );
        }
        if literal_prefix(&rule.normalized).starts_with("/robots.txt") {
            self.push(Diagnostic::new(
                Code::RobotsTxtRule,
                rule.line,
                1,
                "rule on /robots.txt has no effect: crawlers always fetch robots.txt (RFC 9309 2.2.2)",
            ));
        }
        if p.bytes().any(|b| b >= 0x80) && !p.contains('\u{fffd}') {
            self.push(
                Diagnostic::new(
                    Code::NonAsciiPath,
                    rule.line,
                    1,
                    format!(
                        "pattern `{p}` has non-ASCII characters; it is matched as `{}`",
                        rule.normalized
                    ),
                )
                .suggest(format!("write `{}`", rule.normalized)),
            );
        }
    }

    /// Checks over each agent's merged rule set.
    fn rule_sets(&mut self) {
        let r = self.robots;
        let mut tokens: Vec<String> = Vec::new();
        for g in &r.groups {
            for ua in &g.user_agents {
                let t = if ua.global {
                    "*".to_owned()
                } else {
                    ua.token.to_ascii_lowercase()
                };
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
        }
        let mut reported: std::collections::HashSet<(u32, Code)> = std::collections::HashSet::new();
        for t in &tokens {
            let rules: Vec<&Rule> = r
                .groups
                .iter()
                .filter(|g| if t == "*" { g.is_global() } else { g.names(t) })
                .flat_map(|g| g.rules.iter())
                .collect();
            for d in rule_set_findings(&rules) {
                if reported.insert((d.line, d.code)) {
                    self.push(d);
                }
            }
        }
    }

    fn sitemaps(&mut self) {
        for s in &self.robots.sitemaps {
            let v = s.value.to_ascii_lowercase();
            if !(v.starts_with("http://") || v.starts_with("https://")) {
                self.push(
                    Diagnostic::new(
                        Code::SitemapRelative,
                        s.line,
                        1,
                        format!(
                            "sitemap `{}` is not an absolute URL; crawlers ignore it",
                            s.value
                        ),
                    )
                    .suggest("write the full URL, such as `https://example.com/sitemap.xml`"),
                );
            }
        }
    }
}

/// Duplicate, tied and redundant rules within one agent's rule set.
fn rule_set_findings(rules: &[&Rule]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen: HashMap<(&str, RuleKind), u32> = HashMap::new();
    for rule in rules {
        let key = (rule.normalized.as_str(), rule.kind);
        if let Some(&first) = seen.get(&key) {
            out.push(
                Diagnostic::new(
                    Code::DuplicateRule,
                    rule.line,
                    1,
                    format!("same rule as line {first}"),
                )
                .suggest("delete one of them"),
            );
        } else {
            seen.insert(key, rule.line);
        }
    }
    for rule in rules
        .iter()
        .filter(|r| r.kind == RuleKind::Disallow && !r.normalized.is_empty())
    {
        if let Some(&allow_line) = seen.get(&(rule.normalized.as_str(), RuleKind::Allow)) {
            out.push(
                Diagnostic::new(
                    Code::AllowDisallowTie,
                    rule.line,
                    1,
                    format!("Allow at line {allow_line} has the same pattern; Allow wins the tie, so this Disallow has no effect"),
                )
                .suggest("delete one of the two"),
            );
        }
    }
    // A plain rule is redundant when a shorter plain rule of the same kind
    // covers it and no rule of the other kind could decide in between.
    for rule in rules {
        let p = rule.normalized.as_str();
        if !is_plain(p) {
            continue;
        }
        let cover = rules.iter().find(|s| {
            s.kind == rule.kind
                && is_plain(&s.normalized)
                && !s.normalized.is_empty()
                && s.normalized.len() < p.len()
                && p.starts_with(s.normalized.as_str())
        });
        let Some(cover) = cover else { continue };
        let q = cover.normalized.as_str();
        let contested = rules.iter().any(|t| {
            t.kind != rule.kind && {
                let lt = literal_prefix(&t.normalized);
                (lt.starts_with(q) || q.starts_with(lt)) && t.normalized.len() >= q.len()
            }
        });
        if !contested {
            out.push(
                Diagnostic::new(
                    Code::RedundantRule,
                    rule.line,
                    1,
                    format!(
                        "`{} {}` is covered by `{} {}` (line {}) and never changes a verdict",
                        rule.kind.as_str(),
                        rule.pattern,
                        cover.kind.as_str(),
                        cover.pattern,
                        cover.line
                    ),
                )
                .suggest("delete it"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(body: &str) -> Vec<(u32, &'static str)> {
        lint(&Robots::parse(body.as_bytes()))
            .iter()
            .map(|d| (d.line, d.code.as_str()))
            .collect()
    }

    #[test]
    fn groups_and_agents() {
        assert_eq!(
            codes("User-agent: a\nCrawl-delay: 1\nUser-agent: b\nDisallow: /\n"),
            vec![(2, "R011"), (3, "R010")]
        );
        assert_eq!(codes("User-agent: a\nUser-agent: *\n"), vec![(1, "R003")]);
        assert_eq!(
            codes("User-agent: a\nDisallow: /x\nUser-agent: A\nDisallow: /y\n"),
            vec![(3, "R004")]
        );
        assert_eq!(
            codes("User-agent: Foo Bar\nDisallow: /\nUser-agent: /x\nDisallow: /\n"),
            vec![(1, "R006"), (3, "R029")]
        );
    }

    #[test]
    fn rule_checks() {
        assert_eq!(
            codes(
                "User-agent: *\nDisallow: /a\nDisallow: /a/b\nAllow: /c\nDisallow: /c\nDisallow: /a\nDisallow: /robots.txt\nDisallow: /caf\u{e9}\n"
            ),
            vec![
                (3, "R008"),
                (5, "R009"),
                (6, "R025"),
                (7, "R018"),
                (8, "R017")
            ]
        );
        // An Allow between them makes /a/b/c meaningful.
        assert_eq!(
            codes("User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n"),
            vec![]
        );
        assert_eq!(
            codes("User-agent: *\nDisallow: /a\nAllow: /*.css\nDisallow: /a/b\n"),
            vec![]
        );
        assert_eq!(
            codes("User-agent: *\nDisallow: http://example.com/x\nSitemap: sitemap.xml\n"),
            vec![(2, "R007"), (3, "R012")]
        );
    }
}
