//! robots.txt written from the registry's categories (pure): a group per
//! blocked category (and one for bots blocked by name), each with a comment
//! saying why it is there, merged into a site's own file without breaking
//! its groups, then checked with the engine under Google's rules.
//!
//! Merging keeps every verdict of the base file for every crawler that is
//! not blocked. A crawler obeys only the groups that name it (RFC 9309
//! 2.2.1), so a blocked bot named in one of the base's groups would still
//! read that group: its `User-agent` line there is commented out (the whole
//! group when it names only blocked bots), and it is named in the blocking
//! group instead. The generated groups come first, so the 1996 draft's
//! first-record readers meet them too; rules before the base's first
//! `User-agent` line, which no crawler obeys but which would join the last
//! generated group, are commented out.

use std::collections::{BTreeSet, HashSet};

use botscope_robotstxt::{Matcher, ParseOptions, Robots, Selection, Semantics, is_product_token};

use crate::registry::{BotEntry, Category, Registry};

/// The largest file crawlers read (RFC 9309: at least 500 KiB): a result
/// over it would be cut by the crawlers it is for.
pub const MAX_GENERATED: usize = botscope_robotstxt::DEFAULT_PARSE_CAP;

/// What to write.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Categories left to the file's other rules (never blocked).
    pub allow: Vec<Category>,
    /// Categories whose every bot may fetch nothing.
    pub block: Vec<Category>,
    /// Bots blocked by name (registry names, or product tokens the registry
    /// does not know).
    pub block_bots: Vec<String>,
    /// AI usage preferences to state (`train-ai=n`), in both dialects: a
    /// `Content-Usage: /` rule (IETF aipref) and the `Content-Signal` line
    /// Cloudflare's policy reads, in every group that allows crawling.
    pub usage: botscope_robotstxt::Usage,
    /// RSL licences to name (`License: URL` lines, RSL 1.0: full http(s)
    /// URLs, global, at the top of the file).
    pub license: Vec<String>,
}

/// One blocked bot and the tokens it is named by.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Blocked {
    /// Its registry name (or the token given).
    pub name: String,
    /// Its category, when the registry knows it.
    pub category: Option<&'static str>,
    /// The `User-agent` tokens written for it.
    pub tokens: Vec<String>,
    /// Why: `--block CATEGORY` or `--block-bot NAME`.
    pub why: String,
}

/// The file written, and what was done to get it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Generated {
    /// The robots.txt.
    #[serde(skip)]
    pub text: Vec<u8>,
    /// Every bot blocked.
    pub blocked: Vec<Blocked>,
    /// Lines of the base commented out (1-based), with the reason.
    pub commented: Vec<(u32, String)>,
    /// Things worth knowing (bots with no token robots.txt can name …).
    pub notes: Vec<String>,
    /// (agent, path) pairs the engine checked.
    pub checked: usize,
}

/// Why nothing could be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenerateError {
    /// The same category was both allowed and blocked.
    #[error("category {0} is both allowed and blocked")]
    Conflict(&'static str),
    /// A name that is neither a registry bot nor a product token.
    #[error(
        "`{0}` is not a bot of the registry nor a robots.txt product token (letters, `-` and `_`)"
    )]
    UnknownBot(String),
    /// A token a blocked bot shares with one that is not blocked.
    #[error(
        "{blocked} and {kept} are both named `{token}` in robots.txt: blocking one blocks the other; block {kept} too or leave {blocked} out"
    )]
    SharedToken {
        /// The blocked bot.
        blocked: String,
        /// The bot that is not blocked.
        kept: String,
        /// The token.
        token: String,
    },
    /// Nothing to block.
    #[error("nothing to write: give --block CATEGORY, --block-bot NAME, --usage or --license")]
    Nothing,
    /// A licence URL that is not a full http(s) URL.
    #[error("License `{0}` is not a full http(s) URL (RSL 1.0 requires one)")]
    License(String),
    /// The base is bigger than crawlers read.
    #[error("the result would be {} bytes, over the {} crawlers read", .0, botscope_text::size(MAX_GENERATED as u64))]
    TooLarge(usize),
    /// The engine found a verdict that is not what was asked (a bug: the
    /// file is not written).
    #[error("check failed: {0}")]
    Check(String),
    /// The base needs more work to check than [`CHECK_WORK_CAP`] allows
    /// (a crafted file): nothing is written rather than something unchecked.
    #[error(
        "the base is too complex to check the result against: the check stopped at {0} units of work, past its budget of {CHECK_WORK_CAP}"
    )]
    TooComplex(u64),
}

/// Counted work (rules looked at, bytes compared) the check of a result
/// may take; real bases take far less.
pub const CHECK_WORK_CAP: u64 = 50_000_000;

fn category_line(c: Category) -> &'static str {
    match c {
        Category::Search => "search engine crawlers",
        Category::AiTraining => "crawlers that collect training data for AI models",
        Category::AiSearch => "AI search crawlers: they index pages for AI answers",
        Category::AiAssistant => "AI assistants and agents: fetches a user asked for",
        Category::Seo => "SEO and marketing tools",
        Category::Social => "link previews for social networks and messengers",
        Category::Monitoring => "uptime and performance monitors",
        Category::Archive => "web archives",
        Category::Feed => "feed fetchers (RSS and Atom)",
        Category::Other => "other robots",
    }
}

/// The product token Google's rules read from a `User-agent` value: its
/// leading run of letters, `-` and `_` (`ai` for `AI2Bot`), lower-cased;
/// empty when there is none (`360Spider`).
fn key(value: &str) -> String {
    value
        .bytes()
        .take_while(|b| b.is_ascii_alphabetic() || matches!(b, b'-' | b'_'))
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect()
}

/// The robot's own name in a token or a `User-agent` value, as crawlers
/// that match their name themselves read it: up to a `/` or a space,
/// lower-cased (`ai2bot` for `AI2Bot/1.0`).
fn name(value: &str) -> String {
    value
        .split(['/', ' ', '\t'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The tokens a bot can be named by in robots.txt, as its operator writes
/// them, in registry order: one line each, readable (no comment or
/// control character, no space around it; `Datenbank Crawler` is kept as
/// ai.robots.txt writes it).
fn robots_tokens(b: &BotEntry) -> Vec<String> {
    let mut seen = BTreeSet::new();
    b.tokens()
        .into_iter()
        .filter(|t| {
            !t.is_empty() && t.trim() == *t && !t.bytes().any(|c| c.is_ascii_control() || c == b'#')
        })
        .filter(|t| seen.insert(name(t)))
        .map(str::to_owned)
        .collect()
}

/// Lines of `bytes` with their ends, split as robots.txt parsers split
/// them (LF, CRLF or a lone CR), numbered from 1 as the parse tree is.
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&bytes[start..=i]);
                start = i + 1;
            }
            b'\r' => {
                let end = if bytes.get(i + 1) == Some(&b'\n') {
                    i + 1
                } else {
                    i
                };
                out.push(&bytes[start..=end]);
                i = end;
                start = end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        out.push(&bytes[start..]);
    }
    out
}

/// A concrete path a pattern matches (`*` as `x`, `$` dropped).
fn probe_path(pattern: &str) -> Option<String> {
    let p = pattern
        .strip_suffix('$')
        .unwrap_or(pattern)
        .replace('*', "x");
    p.starts_with('/').then_some(p)
}

/// Writes the policy, merged into `base` when given, and checks it.
pub fn generate(
    registry: &Registry,
    policy: &Policy,
    base: Option<&[u8]>,
) -> Result<Generated, GenerateError> {
    if let Some(c) = policy.block.iter().find(|c| policy.allow.contains(c)) {
        return Err(GenerateError::Conflict(c.as_str()));
    }
    if policy.block.is_empty()
        && policy.block_bots.is_empty()
        && policy.usage.is_empty()
        && policy.license.is_empty()
    {
        return Err(GenerateError::Nothing);
    }
    for url in &policy.license {
        let ok = url.split_once("://").is_some_and(|(scheme, rest)| {
            matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
                && !rest.is_empty()
                && !rest.starts_with('/')
        }) && !url.bytes().any(|b| b <= b' ' || b == b'#' || b == 0x7f);
        if !ok {
            return Err(GenerateError::License(
                botscope_text::field(url).into_owned(),
            ));
        }
    }
    // The preference lines, written right after a group's User-agent lines
    // (before its rules: a User-agent line after a non-rule line would
    // continue the group).
    let usage_lines: Vec<String> = if policy.usage.is_empty() {
        Vec::new()
    } else {
        let mut v = vec![format!(
            "Content-Usage: / {}",
            botscope_robotstxt::show_usage(&policy.usage)
        )];
        let signals = botscope_robotstxt::usage_to_signals(&policy.usage);
        if !signals.is_empty() {
            v.push(format!(
                "Content-Signal: {}",
                signals
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        v
    };
    let mut notes = Vec::new();
    // Who is blocked, per reason, in the order given.
    let mut blocked: Vec<Blocked> = Vec::new();
    let mut taken = BTreeSet::new();
    for &c in &policy.block {
        for b in registry.bots().iter().filter(|b| b.category == Some(c)) {
            if !taken.insert(b.name.to_ascii_lowercase()) {
                continue;
            }
            let tokens = robots_tokens(b);
            if tokens.is_empty() {
                notes.push(format!(
                    "{} ({}) has no token robots.txt can name: left out",
                    b.name,
                    c.as_str()
                ));
                continue;
            }
            blocked.push(Blocked {
                name: b.name.clone(),
                category: Some(c.as_str()),
                tokens,
                why: format!("--block {}", c.as_str()),
            });
        }
    }
    for name in &policy.block_bots {
        let entry = registry.find(name);
        let (bot, category, tokens) = match entry {
            Some(b) => (b.name.clone(), b.category, robots_tokens(b)),
            None if is_product_token(name) => {
                notes.push(format!(
                    "{name} is not in the registry: blocked by that token"
                ));
                (name.clone(), None, vec![name.clone()])
            }
            None => return Err(GenerateError::UnknownBot(name.clone())),
        };
        if !taken.insert(bot.to_ascii_lowercase()) {
            continue;
        }
        if let Some(c) = category.filter(|c| policy.allow.contains(c)) {
            notes.push(format!(
                "{bot} is blocked by name although its category, {}, is allowed",
                c.as_str()
            ));
        }
        if tokens.is_empty() {
            return Err(GenerateError::UnknownBot(name.clone()));
        }
        blocked.push(Blocked {
            name: bot,
            category: category.map(Category::as_str),
            tokens,
            why: format!("--block-bot {name}"),
        });
    }
    let blocked_names: BTreeSet<String> = blocked
        .iter()
        .flat_map(|b| b.tokens.iter().map(|t| name(t)))
        .collect();
    // A name shared with a bot that stays would block that bot too.
    let kept: Vec<&BotEntry> = registry
        .bots()
        .iter()
        .filter(|b| !taken.contains(&b.name.to_ascii_lowercase()))
        .collect();
    for k in &kept {
        for t in robots_tokens(k) {
            if blocked_names.contains(&name(&t)) {
                let by = blocked
                    .iter()
                    .find(|b| b.tokens.iter().any(|x| name(x) == name(&t)))
                    .map_or_else(String::new, |b| b.name.clone());
                return Err(GenerateError::SharedToken {
                    blocked: by,
                    kept: k.name.clone(),
                    token: t,
                });
            }
        }
    }
    for b in &blocked {
        for t in b.tokens.iter().filter(|t| !is_product_token(t)) {
            let of = if *t == b.name {
                String::new()
            } else {
                format!(" ({})", b.name)
            };
            notes.push(format!(
                "{t}{of}: not a product token (RFC 9309: letters, `-`, `_`); written for crawlers that match their own name, read as `{}` under Google's rules, not checked",
                key(t)
            ));
        }
    }

    // The keys Google's rules read for the blocked product tokens.
    let blocked_keys: BTreeSet<String> = blocked
        .iter()
        .flat_map(|b| {
            b.tokens
                .iter()
                .filter(|t| is_product_token(t))
                .map(|t| key(t))
        })
        .filter(|k| !k.is_empty())
        .collect();
    // The base: which lines to comment out.
    let base = base.unwrap_or_default();
    let base = base.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(base);
    let parsed = Robots::parse_with(base, &ParseOptions::default());
    let mut commented: Vec<(u32, String)> = Vec::new();
    for g in &parsed.groups {
        let named: Vec<_> = g
            .user_agents
            .iter()
            .filter(|u| {
                // Named by its own reading of the value, or by Google's
                // (`ccbot+` is CCBot's group there).
                !u.global
                    && (blocked_names.contains(&name(&u.value))
                        || blocked_keys.contains(&key(&u.value)))
            })
            .collect();
        if named.is_empty() {
            continue;
        }
        if named.len() == g.user_agents.len() {
            let why = format!(
                "group of {} only, blocked above",
                named
                    .iter()
                    .map(|u| u.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut member: Vec<u32> = g.user_agents.iter().map(|u| u.line).collect();
            member.extend(g.rules.iter().map(|r| r.line));
            member.extend(g.crawl_delay.iter().map(|l| l.line));
            member.extend(g.request_rate.iter().map(|l| l.line));
            member.extend(g.visit_time.iter().map(|l| l.line));
            member.extend(g.content_signals.iter().map(|l| l.line));
            commented.extend(member.into_iter().map(|l| (l, why.clone())));
        } else {
            commented.extend(
                named
                    .iter()
                    .map(|u| (u.line, format!("{} is blocked above", u.value))),
            );
        }
    }
    commented.extend(parsed.orphan_rules.iter().map(|r| {
        (
            r.line,
            "a rule before any User-agent line, which no crawler obeys".to_owned(),
        )
    }));
    commented.sort();
    commented.dedup_by_key(|(l, _)| *l);

    // The file.
    let mut out: Vec<u8> = Vec::new();
    let push = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(s.as_bytes());
        out.push(b'\n');
    };
    push(
        &mut out,
        &format!(
            "# robots.txt policy by crawler category, from botscope's registry of {} crawlers.",
            registry.bots().len()
        ),
    );
    let names = |cs: &[Category]| cs.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
    if !policy.block.is_empty() {
        push(&mut out, &format!("# Blocked: {}.", names(&policy.block)));
    }
    if !policy.allow.is_empty() {
        push(
            &mut out,
            &format!(
                "# Allowed (left to the rules for every crawler): {}.",
                names(&policy.allow)
            ),
        );
    }
    if !policy.usage.is_empty() {
        push(
            &mut out,
            &format!(
                "# AI usage preferences: {} (Content-Usage, IETF aipref; Content-Signal, Cloudflare), in every group that allows crawling.",
                botscope_robotstxt::show_usage(&policy.usage)
            ),
        );
    }
    if !policy.license.is_empty() {
        push(
            &mut out,
            "# The site's licence terms (RSL 1.0): for every crawler, wherever the line stands.",
        );
        for url in &policy.license {
            if parsed.licenses.iter().any(|l| l.url.trim() == url) {
                notes.push(format!(
                    "the base already names the licence {url}: not written twice"
                ));
            } else {
                push(&mut out, &format!("License: {url}"));
            }
        }
    }
    if !blocked.is_empty() {
        push(
            &mut out,
            "# A crawler obeys only the group that names it: the groups below name each blocked one.",
        );
    }
    let mut groups: Vec<(String, Vec<&Blocked>)> = Vec::new();
    for b in &blocked {
        match groups.iter_mut().find(|(why, _)| *why == b.why) {
            Some((_, v)) => v.push(b),
            None => groups.push((b.why.clone(), vec![b])),
        }
    }
    for (why, bots) in &groups {
        out.push(b'\n');
        let what = match policy
            .block
            .iter()
            .find(|c| format!("--block {}", c.as_str()) == *why)
        {
            Some(&c) => format!(
                "# {}: {}. Blocked ({why}): {} crawler{} may fetch nothing.",
                c.as_str(),
                category_line(c),
                bots.len(),
                if bots.len() == 1 { "" } else { "s" }
            ),
            None => format!(
                "# {}: blocked by name ({why}){}.",
                bots[0].name,
                bots[0]
                    .category
                    .map_or_else(String::new, |c| format!(", a {c} crawler"))
            ),
        };
        push(&mut out, &what);
        for b in bots {
            for t in &b.tokens {
                push(&mut out, &format!("User-agent: {t}"));
            }
        }
        push(&mut out, "Disallow: /");
    }
    out.push(b'\n');
    if base.iter().all(u8::is_ascii_whitespace) {
        push(&mut out, "# Every other crawler: allowed everywhere.");
        push(&mut out, "User-agent: *");
        for l in &usage_lines {
            push(&mut out, l);
        }
        push(&mut out, "Disallow:");
    } else {
        // Each base group that stays and states no preference of its own
        // gets the preference lines after its last User-agent line.
        let commented_lines: BTreeSet<u32> = commented.iter().map(|(l, _)| *l).collect();
        let mut insert_after: BTreeSet<u32> = BTreeSet::new();
        if !usage_lines.is_empty() {
            for g in &parsed.groups {
                let Some(last_ua) = g
                    .user_agents
                    .iter()
                    .map(|u| u.line)
                    .filter(|l| !commented_lines.contains(l))
                    .max()
                else {
                    continue;
                };
                if g.content_usage.is_empty() && g.content_signals.is_empty() {
                    insert_after.insert(last_ua);
                } else {
                    notes.push(format!(
                        "the base's group at line {last_ua} states its own usage preferences: left as they are"
                    ));
                }
            }
        }
        push(
            &mut out,
            "# The site's own rules (--base), unchanged but for the lines marked.",
        );
        let mut next = commented.iter().peekable();
        for (i, line) in lines(base).into_iter().enumerate() {
            let n = i as u32 + 1;
            if let Some((_, why)) = next.next_if(|(l, _)| *l == n) {
                let (body, end) = split_end(line);
                out.extend_from_slice(b"# ");
                out.extend_from_slice(body);
                out.extend_from_slice(format!("  # botscope: {why}").as_bytes());
                out.extend_from_slice(if end.is_empty() { b"\n" } else { end });
            } else {
                out.extend_from_slice(line);
            }
            if insert_after.contains(&n) {
                if !out.ends_with(b"\n") && !out.ends_with(b"\r") {
                    out.push(b'\n');
                }
                for l in &usage_lines {
                    push(&mut out, l);
                }
            }
        }
        if !out.ends_with(b"\n") && !out.ends_with(b"\r") {
            out.push(b'\n');
        }
        if !usage_lines.is_empty() && !parsed.groups.iter().any(|g| g.is_global()) {
            // Crawlers the base names nowhere read the `*` group: one that
            // allows everything, as no group does, and states the
            // preferences.
            out.push(b'\n');
            push(&mut out, "# Every other crawler: allowed everywhere.");
            push(&mut out, "User-agent: *");
            for l in &usage_lines {
                push(&mut out, l);
            }
            push(&mut out, "Allow: /");
        }
    }
    if out.len() > MAX_GENERATED {
        return Err(GenerateError::TooLarge(out.len()));
    }

    let checked = check(registry, &blocked, &taken, base, &parsed, &out)?;
    Ok(Generated {
        text: out,
        blocked,
        commented,
        notes,
        checked,
    })
}

/// The files `botscope gate --robots-dir` serves for a generated policy,
/// by file name: `default.txt`, `all-ok-bots.txt` and `other-bots.txt`
/// (the generated file), `disobedient-bots.txt` (a robot a log showed
/// breaking robots.txt) and `suspect-bots.txt` (a client pretending to be a
/// crawler) allowing nothing, and `<bot>.txt` (the bot's list name, as
/// `bots export` names it) allowing nothing, for each blocked bot: a
/// verified crawler of a blocked category reads a file with nothing else
/// in it to misread.
pub fn gate_files(g: &Generated) -> Vec<(String, Vec<u8>)> {
    let nothing = |why: &str| format!("# {why}\nUser-agent: *\nDisallow: /\n").into_bytes();
    let mut out = vec![
        ("default.txt".to_owned(), g.text.clone()),
        (format!("{}.txt", crate::ALL_OK), g.text.clone()),
        (format!("{}.txt", crate::OTHER), g.text.clone()),
        (
            format!("{}.txt", crate::DISOBEDIENT),
            nothing(
                "Served to robots that fetched what this file closed to them: nothing is allowed.",
            ),
        ),
        (
            format!("{}.txt", crate::SUSPECT),
            nothing("Served to clients that claim a crawler they are not: nothing is allowed."),
        ),
    ];
    for b in &g.blocked {
        let name = format!("{}.txt", crate::slug(&b.name));
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        out.push((
            name,
            nothing(&format!(
                "Served to {} (verified), blocked by {}: nothing is allowed.",
                b.name, b.why
            )),
        ));
    }
    out
}

fn split_end(line: &[u8]) -> (&[u8], &[u8]) {
    let body = line
        .iter()
        .rposition(|b| !matches!(b, b'\n' | b'\r'))
        .map_or(&line[..0], |i| &line[..=i]);
    (body, &line[body.len()..])
}

/// The engine's word on the result: every blocked token disallowed
/// everywhere; every other crawler (the registry's, the base's named
/// agents, and one no group names) with the base's verdict on every path
/// the base's rules name.
fn check(
    registry: &Registry,
    blocked: &[Blocked],
    taken: &BTreeSet<String>,
    base: &[u8],
    parsed: &Robots,
    out: &[u8],
) -> Result<usize, GenerateError> {
    let opts = ParseOptions::default();
    let before = Matcher::compile(base, Semantics::Google, &opts);
    let after = Matcher::compile(out, Semantics::Google, &opts);
    let mut paths: BTreeSet<String> = ["/", "/index.html", "/a/b?c=d"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    for r in parsed.rules() {
        if let Some(p) = probe_path(&r.pattern) {
            paths.insert(format!("{}x", p.trim_end_matches('x')));
            paths.insert(p);
        }
    }
    // Agents that select the same groups share one evaluation per path,
    // over an index of those groups' rules; the work is counted and
    // capped, so a base of thousands of agents or wildcards costs a
    // bounded amount (minutes before).
    let paths: Vec<(String, Vec<u8>)> = paths
        .into_iter()
        .map(|p| {
            let bytes = botscope_robotstxt::path_of(p.as_bytes()).into_owned();
            (p, bytes)
        })
        .collect();
    let mut work = 0u64;
    let over = |work: u64| (work > CHECK_WORK_CAP).then_some(GenerateError::TooComplex(work));
    let mut n = 0;
    let mut done: HashSet<Selection> = HashSet::new();
    for b in blocked {
        for t in b.tokens.iter().filter(|t| is_product_token(t)) {
            let sel = after.select_counted(t, &mut work);
            if !done.insert(sel.clone()) {
                // Decided by the evaluation of an agent with its selection.
                n += paths
                    .iter()
                    .filter(|(p, _)| p.as_str() != "/robots.txt")
                    .count();
                continue;
            }
            let ix = after.index_selection(&sel, &mut work);
            for (p, bytes) in paths.iter().filter(|(p, _)| p.as_str() != "/robots.txt") {
                n += 1;
                if after.check_indexed(&ix, bytes, &mut work).allowed {
                    return Err(GenerateError::Check(format!("{t} may still fetch {p}")));
                }
                if let Some(e) = over(work) {
                    return Err(e);
                }
            }
        }
    }
    // Every other crawler, except one whose token Google's rules read in a
    // line written for a blocked bot (`ai` for `AI2Bot`).
    let claimed: BTreeSet<String> = blocked
        .iter()
        .flat_map(|b| b.tokens.iter().map(|t| key(t)))
        .collect();
    let mut agents: BTreeSet<String> = registry
        .bots()
        .iter()
        .filter(|b| !taken.contains(&b.name.to_ascii_lowercase()))
        .flat_map(robots_tokens)
        .collect();
    agents.extend(
        parsed
            .groups
            .iter()
            .flat_map(|g| g.user_agents.iter())
            .filter(|u| !u.global && !u.token.is_empty())
            .map(|u| u.token.clone()),
    );
    agents.retain(|a| !(is_product_token(a) && claimed.contains(&a.to_ascii_lowercase())));
    agents.insert("botscope-unnamed-crawler".to_owned());
    let mut pairs: HashSet<(Selection, Selection)> = HashSet::new();
    for a in &agents {
        let pair = (
            before.select_counted(a, &mut work),
            after.select_counted(a, &mut work),
        );
        if !pairs.insert(pair.clone()) {
            n += paths.len();
            continue;
        }
        let (bx, ax) = (
            before.index_selection(&pair.0, &mut work),
            after.index_selection(&pair.1, &mut work),
        );
        for (p, bytes) in &paths {
            n += 1;
            let x = before.check_indexed(&bx, bytes, &mut work).allowed;
            let y = after.check_indexed(&ax, bytes, &mut work).allowed;
            if x != y {
                return Err(GenerateError::Check(format!(
                    "{a} on {p}: {} in the base, {} in the result",
                    if x { "allowed" } else { "disallowed" },
                    if y { "allowed" } else { "disallowed" }
                )));
            }
            if let Some(e) = over(work) {
                return Err(e);
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::parse(
            "test",
            "bots:\n\
             - name: Googlebot\n  category: search\n  ua_tokens: [Googlebot]\n\
             - name: GPTBot\n  category: ai-training\n  ua_tokens: [GPTBot]\n\
             - name: CCBot\n  category: ai-training\n  ua_tokens: [CCBot]\n\
             - name: ChatGPT-User\n  category: ai-assistant\n  ua_tokens: [ChatGPT-User]\n\
             - name: 360Spider\n  category: ai-training\n  ua_tokens: ['360Spider']\n",
        )
        .expect("registry")
    }

    fn text(g: &Generated) -> String {
        String::from_utf8_lossy(&g.text).into_owned()
    }

    /// `--license`: a `License:` line at the top, read back as the file's
    /// licence with no lint finding; once even when the base names it;
    /// anything but a full http(s) URL refused.
    #[test]
    fn licences_are_written_at_the_top_once() {
        let p = Policy {
            license: vec!["https://example.com/license.xml".into()],
            ..Policy::default()
        };
        let g = generate(&registry(), &p, None).expect("generated");
        let r = Robots::parse(&g.text);
        assert_eq!(r.licenses.len(), 1, "{}", text(&g));
        assert_eq!(r.licenses[0].url, "https://example.com/license.xml");
        assert!(!r.licenses[0].in_group);
        assert!(
            botscope_robotstxt::lint(&r)
                .iter()
                .all(|d| !d.code.as_str().starts_with("R03")),
            "{:?}",
            botscope_robotstxt::lint(&r)
        );
        let base = b"License: https://example.com/license.xml\nUser-agent: *\nDisallow: /x\n";
        let g = generate(&registry(), &p, Some(base)).expect("generated");
        assert_eq!(
            text(&g).matches("License: https://").count(),
            1,
            "{}",
            text(&g)
        );
        assert!(
            g.notes
                .iter()
                .any(|n| n.contains("already names the licence"))
        );
        for bad in [
            "/license.xml",
            "ftp://example.com/l.xml",
            "https:///l.xml",
            "https://example.com/a b",
            "https://e.com/#x",
        ] {
            let p = Policy {
                license: vec![bad.into()],
                ..Policy::default()
            };
            assert!(
                matches!(
                    generate(&registry(), &p, None),
                    Err(GenerateError::License(_))
                ),
                "{bad}"
            );
        }
    }

    fn policy(block: &[Category]) -> Policy {
        Policy {
            block: block.to_vec(),
            ..Policy::default()
        }
    }

    #[test]
    fn usage_preferences_are_written_in_both_dialects_where_crawling_is_allowed() {
        let usage = botscope_robotstxt::parse_preference("train-ai=n, search=y")
            .expect("statement")
            .usage;
        let p = Policy {
            block: vec![Category::AiTraining],
            usage: usage.clone(),
            ..Policy::default()
        };
        let base = b"User-agent: Googlebot\nDisallow: /x\n\nUser-agent: Bingbot\nContent-Usage: / train-ai=y\nAllow: /\n";
        let g = generate(&registry(), &p, Some(base)).expect("ok");
        let r = Robots::parse(&g.text);
        let codes: Vec<&str> = botscope_robotstxt::lint(&r)
            .iter()
            .map(|d| d.code.as_str())
            .filter(|c| ["R010", "R019", "R031", "R032", "R033", "R034", "R035"].contains(c))
            .collect();
        assert!(
            codes.is_empty(),
            "no group continued, every preference read: {codes:?}\n{}",
            text(&g)
        );
        let at = |agent: &str, path: &[u8]| r.preferences(agent, path, true);
        // The base's Googlebot group, the added `*` group: both dialects.
        for agent in ["Googlebot", "SomeOtherBot"] {
            let p = at(agent, b"/page");
            assert_eq!(p.usage.as_ref(), Some(&usage), "{agent}");
            let s = p.content_signal.expect("signal");
            assert_eq!(
                (s["ai-train"].as_str(), s["search"].as_str()),
                ("no", "yes")
            );
        }
        // A group with preferences of its own keeps them.
        assert_eq!(at("Bingbot", b"/").usage.expect("usage")["train-ai"], "y");
        assert!(
            g.notes
                .iter()
                .any(|n| n.contains("states its own usage preferences"))
        );
        // A blocked crawler's group states none: it may not crawl.
        let blocked = &g.blocked[0].tokens[0];
        assert_eq!(at(blocked, b"/").usage, None);
        // Preferences alone are a policy too.
        let only = Policy {
            usage,
            ..Policy::default()
        };
        let g = generate(&registry(), &only, None).expect("ok");
        assert!(text(&g).contains("User-agent: *\nContent-Usage: / search=y, train-ai=n\nContent-Signal: search=yes, ai-train=no\nDisallow:\n"), "{}", text(&g));
    }

    #[test]
    fn a_category_is_blocked_with_a_comment_saying_why() {
        let g = generate(&registry(), &policy(&[Category::AiTraining]), None).expect("ok");
        let t = text(&g);
        assert!(
            t.contains("# ai-training: crawlers that collect training data"),
            "{t}"
        );
        assert!(
            t.contains(
                "User-agent: GPTBot\nUser-agent: CCBot\nUser-agent: 360Spider\nDisallow: /\n"
            ),
            "{t}"
        );
        assert!(t.contains("User-agent: *\nDisallow:\n"), "{t}");
        let m = Matcher::compile(&g.text, Semantics::Google, &ParseOptions::default());
        assert!(!m.is_allowed("GPTBot", "/"));
        assert!(!m.is_allowed("Mozilla/5.0 (compatible; CCBot/2.0)", "/x"));
        assert!(m.is_allowed("Googlebot", "/x"));
        assert!(m.is_allowed("ChatGPT-User", "/x"));
        // 360Spider is written for its own matcher; Google's rules cannot
        // read it, and the note says so.
        assert!(
            g.notes
                .iter()
                .any(|n| n.starts_with("360Spider") && n.contains("not a product token")),
            "{:?}",
            g.notes
        );
        assert!(g.checked > 0);
    }

    /// Found by the `generate` fuzz target: Google's rules read
    /// `User-agent: ccbot+` as CCBot's group, so it is commented out like
    /// `User-agent: CCBot`, or its Allow would outrank the block.
    #[test]
    fn a_value_google_reads_as_a_blocked_token_is_commented_out() {
        let base = b"User-agent: *\nDisallow: /private/\n\nUser-agent: ccbot+\nAllow: /agent\n\nUser-agent: Googlebot\nAllow: /z\n";
        let g = generate(&registry(), &policy(&[Category::AiTraining]), Some(base))
            .expect("merged and checked");
        let t = text(&g);
        assert!(t.contains("# User-agent: ccbot+"), "{t}");
        let m = Matcher::compile(&g.text, Semantics::Google, &ParseOptions::default());
        assert!(!m.is_allowed("CCBot", "/agent"));
        assert!(m.is_allowed("Googlebot", "/z"));
        assert!(!m.is_allowed("SomeBot", "/private/x"));
    }

    #[test]
    fn the_base_keeps_every_other_verdict() {
        let base = b"\xEF\xBB\xBFDisallow: /orphan\nUser-agent: *\nDisallow: /private\nAllow: /private/ok$\n\n\
                     User-agent: GPTBot\nAllow: /\n\n\
                     User-agent: CCBot\nUser-agent: Googlebot\nDisallow: /nogoogle\r\n\
                     Sitemap: https://example.com/sitemap.xml\n";
        let g = generate(&registry(), &policy(&[Category::AiTraining]), Some(base)).expect("ok");
        let t = text(&g);
        // GPTBot's own group (Allow: /) is commented out whole; CCBot's
        // line only; the orphan rule too.
        assert!(
            t.contains("# User-agent: GPTBot  # botscope: group of GPTBot only"),
            "{t}"
        );
        assert!(
            t.contains("# Allow: /  # botscope: group of GPTBot only"),
            "{t}"
        );
        assert!(
            t.contains("# User-agent: CCBot  # botscope: CCBot is blocked above\n"),
            "{t}"
        );
        assert!(
            t.contains("# Disallow: /orphan  # botscope: a rule before"),
            "{t}"
        );
        assert!(
            t.contains("User-agent: Googlebot\nDisallow: /nogoogle\r\n"),
            "{t}"
        );
        assert!(
            t.contains("Sitemap: https://example.com/sitemap.xml"),
            "{t}"
        );
        let m = Matcher::compile(&g.text, Semantics::Google, &ParseOptions::default());
        for p in ["/", "/private/ok", "/nogoogle"] {
            assert!(!m.is_allowed("GPTBot", p), "{p}");
            assert!(!m.is_allowed("CCBot", p), "{p}");
        }
        assert!(!m.is_allowed("Googlebot", "/nogoogle"));
        assert!(m.is_allowed("Googlebot", "/private"));
        assert!(!m.is_allowed("ChatGPT-User", "/private"));
        assert!(m.is_allowed("ChatGPT-User", "/private/ok"));
        let lines: Vec<u32> = g.commented.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 6, 7, 9]);
    }

    #[test]
    fn bots_by_name_and_refusals() {
        let r = registry();
        let p = Policy {
            allow: vec![Category::AiAssistant],
            block_bots: vec!["chatgpt-user".into(), "SomeNewBot".into()],
            ..Policy::default()
        };
        let g = generate(&r, &p, None).expect("ok");
        let t = text(&g);
        assert!(t.contains("# ChatGPT-User: blocked by name (--block-bot chatgpt-user), a ai-assistant crawler."), "{t}");
        assert!(t.contains("User-agent: SomeNewBot\nDisallow: /"), "{t}");
        assert_eq!(g.notes.len(), 2, "{:?}", g.notes);
        let both = Policy {
            allow: vec![Category::Search],
            block: vec![Category::Search],
            ..Policy::default()
        };
        assert_eq!(
            generate(&r, &both, None),
            Err(GenerateError::Conflict("search"))
        );
        assert_eq!(
            generate(&r, &Policy::default(), None),
            Err(GenerateError::Nothing)
        );
        let bad = Policy {
            block_bots: vec!["not a bot".into()],
            ..Policy::default()
        };
        assert!(matches!(
            generate(&r, &bad, None),
            Err(GenerateError::UnknownBot(_))
        ));
        let big = vec![b'#'; MAX_GENERATED + 1];
        assert!(matches!(
            generate(&r, &policy(&[Category::AiTraining]), Some(&big)),
            Err(GenerateError::TooLarge(_))
        ));
    }

    /// Random files from the lines that matter (groups naming blocked
    /// and kept bots, `*`, rules, orphans, blank lines, junk): the merge
    /// never fails the engine's check.
    #[test]
    fn random_bases_always_merge() {
        const LINES: &[&str] = &[
            "User-agent: GPTBot",
            "User-agent: gptbot/1.1",
            "User-agent: CCBot",
            "User-agent: *",
            "User-agent: Googlebot",
            "User-agent: ChatGPT-User",
            "User-agent: 360Spider",
            "useragent CCBot",
            "Allow: /",
            "Allow: /a",
            "Disallow: /",
            "Disallow: /a",
            "Disallow: /a*b$",
            "Disallow:",
            "Crawl-delay: 5",
            "Sitemap: https://example.com/s.xml",
            "",
            "# comment",
            "junk without colon",
            "Disallow: /x\r",
        ];
        let r = registry();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for case in 0..6000 {
            let mut base = String::new();
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let n = (x >> 59) as usize + 1;
            for _ in 0..n {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                base.push_str(LINES[(x >> 33) as usize % LINES.len()]);
                base.push(if (x >> 20).is_multiple_of(7) {
                    '\r'
                } else {
                    '\n'
                });
            }
            let p = match case % 3 {
                0 => Policy {
                    block: vec![Category::AiTraining],
                    block_bots: vec!["Bytespider".into()],
                    ..Policy::default()
                },
                1 => policy(&[Category::Search, Category::AiAssistant]),
                _ => Policy {
                    block_bots: vec!["ccbot".into(), "Googlebot".into()],
                    ..Policy::default()
                },
            };
            if let Err(e) = generate(&r, &p, Some(base.as_bytes())) {
                panic!("case {case}: {e}\n{base:?}");
            }
        }
    }

    #[test]
    fn the_gate_files_of_a_policy() {
        let g = generate(&registry(), &policy(&[Category::AiTraining]), None).expect("ok");
        let files = gate_files(&g);
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "default.txt",
                "all-ok-bots.txt",
                "other-bots.txt",
                "disobedient-bots.txt",
                "suspect-bots.txt",
                "gptbot.txt",
                "ccbot.txt",
                "360spider.txt"
            ]
        );
        for (name, body) in &files {
            let m = Matcher::compile(body, Semantics::Google, &ParseOptions::default());
            let blocked = !matches!(
                name.as_str(),
                "default.txt" | "all-ok-bots.txt" | "other-bots.txt"
            );
            assert_eq!(m.is_allowed("Googlebot", "/x"), !blocked, "{name}");
            assert!(!m.is_allowed("GPTBot", "/x"), "{name}");
        }
    }

    #[test]
    fn a_token_shared_with_a_kept_bot_is_refused() {
        let r = Registry::parse(
            "test",
            "bots:\n- name: A\n  category: ai-training\n  ua_tokens: [Shared]\n\
             - name: B\n  category: search\n  ua_tokens: [Shared]\n",
        )
        .expect("registry");
        assert!(matches!(
            generate(&r, &policy(&[Category::AiTraining]), None),
            Err(GenerateError::SharedToken { .. })
        ));
    }

    /// Found: `robots generate --base` checked every agent on every path
    /// with a full scan: 12,000 groups took 46 s and 6,000 wildcard rules
    /// 242 s. Agents sharing a selection share one evaluation over an
    /// index of its rules, and the work is capped: a crafted base either
    /// merges or is refused, with nothing written.
    #[test]
    fn crafted_bases_cost_a_bounded_check() {
        let reg = registry();
        let mut groups = String::new();
        for i in 0..12_000 {
            groups.push_str(&format!("User-agent: bot{i}\nDisallow: /x{i}\n\n"));
        }
        let g = generate(
            &reg,
            &policy(&[Category::AiTraining]),
            Some(groups.as_bytes()),
        )
        .expect("many groups merge");
        assert!(g.checked > 12_000);
        let mut globs = String::from("User-agent: *\n");
        for i in 0..6_000 {
            globs.push_str(&format!("Disallow: /*a{i}*b\n"));
        }
        match generate(
            &reg,
            &policy(&[Category::AiTraining]),
            Some(globs.as_bytes()),
        ) {
            Err(GenerateError::TooComplex(work)) => assert!(work > CHECK_WORK_CAP),
            other => panic!("{:?}", other.map(|g| g.checked)),
        }
    }

    #[test]
    fn the_bundled_registry_blocks_each_category_cleanly() {
        let r = Registry::bundled();
        for &(name, c) in Category::ALL {
            let g = generate(&r, &policy(&[c]), None).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!g.blocked.is_empty(), "{name}");
        }
    }

    /// Real sites' files as bases: every category blocked, the engine's
    /// check passes (it fails the call otherwise), and a second run over
    /// the result changes nothing more.
    #[test]
    fn real_files_merge_under_every_category() {
        let r = Registry::bundled();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots");
        let mut files = 0;
        for e in std::fs::read_dir(&dir).expect("examples/robots") {
            let path = e.expect("entry").path();
            let base = std::fs::read(&path).expect("read");
            files += 1;
            // Every category at once, then the two that name the most bots.
            let all: Vec<Category> = Category::ALL.iter().map(|(_, c)| *c).collect();
            for (name, cs) in [
                ("all", all),
                ("ai-training", vec![Category::AiTraining]),
                ("search", vec![Category::Search]),
            ] {
                let c = &cs[..];
                let g = generate(&r, &policy(c), Some(&base))
                    .unwrap_or_else(|e| panic!("{} {name}: {e}", path.display()));
                assert!(g.checked > 0);
                if name != "ai-training" {
                    continue;
                }
                let again = generate(&r, &policy(c), Some(&g.text))
                    .unwrap_or_else(|e| panic!("{} {name} again: {e}", path.display()));
                let m = Matcher::compile(&again.text, Semantics::Google, &ParseOptions::default());
                for b in &g.blocked {
                    for t in b.tokens.iter().filter(|t| is_product_token(t)) {
                        assert!(!m.is_allowed(t, "/"), "{} {t}", path.display());
                    }
                }
            }
        }
        assert!(files >= 5, "{files}");
    }
}
