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
    lint_counted(robots).0
}

/// [`lint`], knowing which user-agent values are documented by crawlers'
/// operators (`documented`, such as a registry's tokens, compared as
/// written): such a value with characters outside `[A-Za-z_-]`
/// (`AI2Bot`, where Google's rules read `AI`) is the crawler's own name,
/// written as its operator asks, so it gets a note (R006 at info level)
/// instead of a warning to rewrite it.
pub fn lint_with(robots: &Robots, documented: &dyn Fn(&str) -> bool) -> Vec<Diagnostic> {
    run(robots, documented).0
}

/// [`lint`], with the number of elementary steps it took (rules and user
/// agents visited, trie nodes walked): the tests bound the work by this
/// count, not by the clock. It grows as n log n in the file's size.
pub fn lint_counted(robots: &Robots) -> (Vec<Diagnostic>, u64) {
    run(robots, &|_| false)
}

fn run(robots: &Robots, documented: &dyn Fn(&str) -> bool) -> (Vec<Diagnostic>, u64) {
    let mut out = robots.diagnostics.clone();
    let mut l = Linter {
        out: &mut out,
        robots,
        steps: 0,
        documented,
    };
    l.groups();
    l.rules();
    l.rule_sets();
    l.sitemaps();
    l.licenses();
    let steps = l.steps;
    out.sort_by_key(|d| (d.line, d.column, d.code));
    (out, steps)
}

struct Linter<'a> {
    out: &'a mut Vec<Diagnostic>,
    robots: &'a Robots,
    steps: u64,
    /// User-agent values crawlers' operators document.
    documented: &'a dyn Fn(&str) -> bool,
}

/// A byte trie over rule patterns: each node keeps the first rule (by
/// index) whose pattern ends there and the longest pattern length among
/// the rules ending there. Walking a pattern visits only its prefixes.
struct Trie {
    /// Children, sorted by byte; the root is node 0.
    children: Vec<Vec<(u8, u32)>>,
    /// First rule index ending here (`u32::MAX`: none).
    first: Vec<u32>,
    /// Longest normalized pattern among the rules ending here.
    longest: Vec<usize>,
}

impl Trie {
    fn new() -> Trie {
        Trie {
            children: vec![Vec::new()],
            first: vec![u32::MAX],
            longest: vec![0],
        }
    }

    fn child(&self, node: usize, b: u8) -> Option<usize> {
        let c = &self.children[node];
        c.binary_search_by_key(&b, |&(k, _)| k)
            .ok()
            .map(|i| c[i].1 as usize)
    }

    fn insert(&mut self, key: &[u8], index: u32, len: usize, steps: &mut u64) {
        let mut node = 0;
        for &b in key {
            *steps += 1;
            node = match self.child(node, b) {
                Some(n) => n,
                None => {
                    let n = self.children.len();
                    self.children.push(Vec::new());
                    self.first.push(u32::MAX);
                    self.longest.push(0);
                    let c = &mut self.children[node];
                    let at = c.partition_point(|&(k, _)| k < b);
                    c.insert(at, (b, u32::try_from(n).unwrap_or(u32::MAX)));
                    n
                }
            };
        }
        self.first[node] = self.first[node].min(index);
        self.longest[node] = self.longest[node].max(len);
    }
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
            let mut in_group: std::collections::HashSet<String> = std::collections::HashSet::new();
            for ua in &g.user_agents {
                self.steps += 1;
                let key = if ua.global {
                    "*".to_owned()
                } else {
                    ua.token.to_ascii_lowercase()
                };
                if !in_group.insert(key.clone()) {
                    continue;
                }
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
            } else if ua.value.len() > ua.token.len()
                && !ua.value[ua.token.len()..].starts_with('/')
                && (self.documented)(&ua.value)
            {
                let mut d = Diagnostic::new(
                    Code::UserAgentChars,
                    ua.line,
                    1,
                    format!(
                        "user-agent `{}` is the crawler's name as its operator documents it; Google's rules read only `{}`",
                        ua.value, ua.token
                    ),
                );
                d.severity = crate::Severity::Info;
                self.push(d);
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

    /// Checks over each agent's merged rule set. Agents whose groups are
    /// the same share one check.
    fn rule_sets(&mut self) {
        let r = self.robots;
        let mut order: Vec<String> = Vec::new();
        let mut groups_of: HashMap<String, Vec<usize>> = HashMap::new();
        for (gi, g) in r.groups.iter().enumerate() {
            for ua in &g.user_agents {
                self.steps += 1;
                let t = if ua.global {
                    "*".to_owned()
                } else {
                    ua.token.to_ascii_lowercase()
                };
                let list = groups_of.entry(t.clone()).or_insert_with(|| {
                    order.push(t);
                    Vec::new()
                });
                if list.last() != Some(&gi) {
                    list.push(gi);
                }
            }
        }
        let mut reported: std::collections::HashSet<(u32, Code)> = std::collections::HashSet::new();
        let mut checked: std::collections::HashSet<Vec<usize>> = std::collections::HashSet::new();
        // Agents that share some groups but not all make distinct rule
        // sets over the same rules: the work is bounded by the file's size.
        let budget = 32 * (r.parsed_bytes as u64 + 16);
        for t in &order {
            let gs = &groups_of[t];
            if !checked.insert(gs.clone()) {
                continue;
            }
            if self.steps > budget {
                let first = r.groups[gs[0]].user_agents.first().map_or(0, |u| u.line);
                self.push(Diagnostic::new(
                    Code::LintBudget,
                    first,
                    1,
                    format!(
                        "{} agents share groups in so many ways that their rule sets were not all checked; from `{t}` on, duplicates and redundant rules are not reported",
                        order.len()
                    ),
                ));
                break;
            }
            let rules: Vec<&Rule> = gs
                .iter()
                .flat_map(|&gi| r.groups[gi].rules.iter())
                .collect();
            for d in rule_set_findings(&rules, &mut self.steps) {
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

impl Linter<'_> {
    /// `License` lines (RSL 1.0): a full http(s) URL each, once, outside
    /// any group (it is global wherever it stands).
    fn licenses(&mut self) {
        let mut seen: Vec<(&str, u32)> = Vec::new();
        for l in &self.robots.licenses {
            let v = l.url.trim();
            let lower = v.to_ascii_lowercase();
            let scheme = lower.split_once(':').map(|(s, _)| s).filter(|s| {
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
            });
            let shown = v;
            let d = match scheme {
                Some("http" | "https") if lower.split_once("://").is_some_and(|(_, r)| !r.is_empty() && !r.starts_with('/')) => None,
                Some("http" | "https") => Some(
                    Diagnostic::new(Code::LicenseScheme, l.line, 1, format!("License `{shown}` names no host: no licence can be fetched from it"))
                        .suggest("write the full URL, such as `https://example.com/license.xml`"),
                ),
                Some(s) if !v.starts_with('/') && v.contains(':') && !s.contains('.') => Some(
                    Diagnostic::new(Code::LicenseScheme, l.line, 1, format!("License `{shown}`: crawlers fetch licences over http or https, not `{s}:`"))
                        .suggest("publish the licence at an https URL"),
                ),
                _ => Some(
                    Diagnostic::new(Code::LicenseRelative, l.line, 1, format!("License `{shown}` is not a full URL: RSL 1.0 requires one (botscope reads it against the robots.txt URL; other crawlers may not)"))
                        .suggest("write the full URL, such as `https://example.com/license.xml`"),
                ),
            };
            if let Some(d) = d {
                self.push(d);
            }
            if let Some((_, first)) = seen.iter().find(|(u, _)| *u == v) {
                let first = *first;
                self.push(
                    Diagnostic::new(
                        Code::LicenseRepeated,
                        l.line,
                        1,
                        format!("License `{shown}` again (first on line {first})"),
                    )
                    .suggest("keep one License line per licence"),
                );
            } else {
                seen.push((v, l.line));
            }
            if l.in_group {
                self.push(
                    Diagnostic::new(
                        Code::LicenseInGroup,
                        l.line,
                        1,
                        format!("License `{shown}` inside a group: it applies to every crawler all the same (RSL's License is global)"),
                    )
                    .suggest("move it to the top of the file, before the first User-agent line"),
                );
            }
        }
    }
}

/// Duplicate, tied and redundant rules within one agent's rule set, in
/// n log n: the covers of a rule and the rules that contest a cover are
/// found by walking tries of patterns, never by comparing every pair.
fn rule_set_findings(rules: &[&Rule], steps: &mut u64) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen: HashMap<(&str, RuleKind), u32> = HashMap::new();
    for rule in rules {
        *steps += 1;
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
    let kind_index = |k: RuleKind| usize::from(k != RuleKind::Allow);
    // Per kind: plain non-empty patterns (for covers), and every rule's
    // literal prefix (for contests).
    let mut plain = [Trie::new(), Trie::new()];
    let mut literal = [Trie::new(), Trie::new()];
    for (i, r) in rules.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        let k = kind_index(r.kind);
        let n = r.normalized.as_str();
        if is_plain(n) && !n.is_empty() {
            plain[k].insert(n.as_bytes(), i, n.len(), steps);
        }
        literal[k].insert(literal_prefix(n).as_bytes(), i, n.len(), steps);
    }
    let mut contested_memo: HashMap<(usize, u32), bool> = HashMap::new();
    for rule in rules {
        let p = rule.normalized.as_str();
        if !is_plain(p) {
            continue;
        }
        let k = kind_index(rule.kind);
        // The first rule (in file order) whose plain pattern is a proper
        // prefix of `p`.
        let (trie, mut node, mut cover) = (&plain[k], 0usize, u32::MAX);
        for &b in &p.as_bytes()[..p.len().saturating_sub(1)] {
            *steps += 1;
            match trie.child(node, b) {
                Some(n) => node = n,
                None => break,
            }
            cover = cover.min(trie.first[node]);
        }
        let Some(&cover_rule) = rules.get(cover as usize) else {
            continue;
        };
        let contested = *contested_memo
            .entry((k, cover))
            .or_insert_with(|| contested(&literal[1 - k], &cover_rule.normalized, steps));
        let cover = cover_rule;
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

/// Whether a rule of the other kind (its literal prefixes in `other`)
/// could decide between the cover `q` and what it covers: its literal
/// prefix starts with `q`, or is a prefix of `q` with a pattern at least
/// as long as `q`.
fn contested(other: &Trie, q: &str, steps: &mut u64) -> bool {
    let mut node = 0usize;
    if other.first[0] != u32::MAX && other.longest[0] >= q.len() {
        return true;
    }
    for &b in q.as_bytes() {
        *steps += 1;
        match other.child(node, b) {
            Some(n) => node = n,
            None => return false,
        }
        if other.first[node] != u32::MAX && other.longest[node] >= q.len() {
            return true;
        }
    }
    // Some literal prefix runs through `q` (the node exists): it starts
    // with `q`.
    true
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

    /// RSL's `License`: a full URL, once, global (RSL 1.0, "Adding RSL to
    /// robots.txt": "one or more License directives", each "a fully
    /// qualified URL").
    #[test]
    fn license_lines() {
        let ok = "License: https://example.com/license.xml\nLicense: https://cdn.example.net/l.xml\nUser-agent: *\nAllow: /\n";
        assert_eq!(codes(ok), vec![]);
        let r = Robots::parse(ok.as_bytes());
        assert_eq!(r.licenses.len(), 2);
        assert_eq!(r.licenses[1].url, "https://cdn.example.net/l.xml");
        assert!(!r.licenses[0].in_group);
        assert_eq!(
            codes(
                "License: /license.xml\nLicense: license.xml\nLicense: ftp://example.com/l.xml\nLicense: https:///l.xml\n\
                 License: data:text/xml,<rsl/>\nLicense: https://example.com/l.xml\nUser-agent: *\nLicense: https://example.com/l.xml\nAllow: /\n"
            ),
            vec![
                (1, "R036"),
                (2, "R036"),
                (3, "R039"),
                (4, "R039"),
                (5, "R039"),
                (8, "R037"),
                (8, "R038")
            ]
        );
        // Inside a group it is still the file's, and it does not end the
        // group: the Allow after it belongs to the same group.
        let r = Robots::parse(b"User-agent: a\nLicense: https://example.com/l.xml\nDisallow: /x\n");
        assert!(r.licenses[0].in_group);
        assert_eq!(r.groups.len(), 1);
        assert_eq!(r.groups[0].rules.len(), 1);
    }

    #[test]
    fn documented_tokens_get_a_note_not_a_warning() {
        let r = Robots::parse(
            b"User-agent: AI2Bot\nUser-agent: Brightbot 1.0\nUser-agent: Other2Bot\nDisallow: /\n",
        );
        let known = |v: &str| ["AI2Bot", "Brightbot 1.0"].contains(&v);
        let d = lint_with(&r, &known);
        let r006: Vec<(u32, crate::Severity)> = d
            .iter()
            .filter(|d| d.code.as_str() == "R006")
            .map(|d| (d.line, d.severity))
            .collect();
        assert_eq!(
            r006,
            [
                (1, crate::Severity::Info),
                (2, crate::Severity::Info),
                (3, crate::Severity::Warning)
            ]
        );
        assert!(d[0].message.contains("read only `AI`"), "{}", d[0].message);
        // Without the list, every one is a warning, as before.
        assert!(
            lint(&r)
                .iter()
                .filter(|d| d.code.as_str() == "R006")
                .all(|d| d.severity == crate::Severity::Warning)
        );
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
        // A longer Allow after the cover contests it; a shorter one does not.
        assert_eq!(
            codes("User-agent: *\nDisallow: /a\nAllow: /\nDisallow: /a/b\n"),
            vec![(4, "R008")]
        );
        assert_eq!(
            codes("User-agent: *\nDisallow: /a/\nAllow: /a*x\nDisallow: /a/b\n"),
            vec![],
            "`/a*x` may match under /a/ with a longer pattern"
        );
        assert_eq!(
            codes("User-agent: *\nDisallow: /a/\nAllow: /*\nDisallow: /a/b\n"),
            vec![(4, "R008")],
            "`/*` is shorter than the cover: it never wins under /a/"
        );
    }

    /// The work grows as n log n, measured by the step counter: a file four
    /// times as long costs at most about five times as much, where the old
    /// pairwise checks cost sixteen times as much (56,887 `Allow:/a` lines
    /// took 14 s).
    #[test]
    fn lint_is_not_quadratic() {
        let cost = |n: usize, line: &dyn Fn(usize) -> String| {
            let mut body = String::from("User-agent: *\n");
            for i in 0..n {
                body.push_str(&line(i));
            }
            let r = Robots::parse_with(body.as_bytes(), &crate::ParseOptions { max_bytes: None });
            lint_counted(&r).1 as f64
        };
        let same = |_: usize| "Allow:/a\n".to_owned();
        let nested = |i: usize| format!("Disallow: /{}\n", "a".repeat(i % 200 + 1));
        let agents = |i: usize| format!("User-agent: bot{i}\nDisallow: /x{i}\n");
        let mixed = |i: usize| {
            if i.is_multiple_of(2) {
                format!("Allow: /p/{i}/\n")
            } else {
                format!("Disallow: /p/{}\n", i / 2)
            }
        };
        // Agents named again in a small group of their own: each agent's
        // rule set is the big group plus its own.
        let shared = |i: usize| {
            if i == 0 {
                let mut s = String::new();
                for a in 0..2_000 {
                    s.push_str(&format!("User-agent: a{a}\n"));
                }
                s
            } else if i < 2_000 {
                format!("Disallow: /big/{i}\n")
            } else {
                format!("User-agent: a{}\nDisallow: /own\n", i - 2_000)
            }
        };
        for (name, f) in [
            ("same", &same as &dyn Fn(usize) -> String),
            ("nested", &nested),
            ("agents", &agents),
            ("mixed", &mixed),
            ("shared", &shared),
        ] {
            let (small, large) = (cost(5_000, f), cost(20_000, f));
            assert!(large / small < 5.0, "{name}: {small} -> {large} steps");
        }
    }
}
