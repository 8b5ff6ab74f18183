//! Reading a policy file: YAML with every problem reported with its file,
//! line and rule; a file with an error compiles to nothing.

use std::collections::HashMap;

use botscope_botid::{IpRange, Registry};
use marked_yaml::{LoaderOptions, Node, Span};

use crate::check;
use crate::model::{
    Action, BROWSER, Identity, LISTS, Signature, TrapKind, UNREGISTERED_BOT, identity_bits,
    list_bit, signature_bits,
};
use crate::policy::{Conditions, PathCase, PathSet, Policy, Rule, Traps};
use crate::rate::Rate;
use crate::{Finding, Severity};

/// Largest policy file read.
pub const MAX_POLICY_BYTES: usize = 1 << 20;
/// Rules in one policy at most.
pub const MAX_RULES: usize = 1_000;
/// Longest `user_agent` pattern, in characters.
pub const MAX_REGEX_CHARS: usize = 1_024;
/// Compiled size of one `user_agent` pattern at most (the regex crate's
/// `size_limit`; its lazy DFA gets as much again).
pub const MAX_REGEX_BYTES: usize = 256 * 1024;
/// Items (paths, networks, bots …) in one key of one rule at most.
pub const MAX_ITEMS: usize = 10_000;
/// Longest path pattern.
pub const MAX_PATTERN_BYTES: usize = 2_048;
/// Longest rule name.
pub const MAX_NAME_CHARS: usize = 100;

const TOP_KEYS: &[&str] = &["rules", "default", "version", "path_case", "traps"];
const RULE_KEYS: &[&str] = &[
    "name",
    "action",
    "description",
    "bot",
    "category",
    "identity",
    "signature",
    "network",
    "asn",
    "user_agent",
    "method",
    "path",
    "robots",
    "list",
    "rate",
    "headers",
    "price",
    "trapped",
];
const TRAP_KEYS: &[&str] = &["kinds", "hold", "window", "widen", "exempt", "tarpit"];
/// The longest `hold:` or `within:`: a catch is not a life sentence.
pub const MAX_HOLD_MS: u64 = 30 * 86_400_000;

/// A span of time as a policy writes it: a whole number and a unit
/// (`30s`, `10min` or `10m`, `2h`, `1d`), in milliseconds.
pub fn duration_ms(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let unit_ms = match unit.trim() {
        "s" | "sec" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => {
            return Err(format!(
                "`{}` is not a span of time: a number and s, min, h or d (e.g. `10min`)",
                botscope_text::field(s)
            ));
        }
    };
    n.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit_ms))
        .filter(|&ms| ms > 0 && ms <= MAX_HOLD_MS)
        .ok_or_else(|| {
            format!(
                "`{}` must be more than nothing and at most 30 days",
                botscope_text::field(s)
            )
        })
}

fn line_of(span: &Span) -> u32 {
    span.start()
        .map_or(0, |m| u32::try_from(m.line()).unwrap_or(u32::MAX))
}

/// The categories a rule may name: the registry's, then
/// `unregistered-bot` and `browser`.
pub fn categories() -> Vec<&'static str> {
    let mut c: Vec<&str> = botscope_botid::Category::ALL
        .iter()
        .map(|(n, _)| *n)
        .collect();
    c.push(UNREGISTERED_BOT);
    c.push(BROWSER);
    c
}

struct Reader<'a> {
    file: &'a str,
    registry: &'a Registry,
    findings: Vec<Finding>,
    /// The policy's `path_case:`, read before its rules.
    path_case: PathCase,
}

impl Reader<'_> {
    fn push(&mut self, severity: Severity, span: &Span, rule: Option<&str>, message: String) {
        self.findings.push(Finding {
            file: self.file.to_owned(),
            line: line_of(span),
            rule: rule.map(str::to_owned),
            severity,
            message,
        });
    }

    fn err(&mut self, span: &Span, rule: Option<&str>, message: impl Into<String>) {
        self.push(Severity::Error, span, rule, message.into());
    }

    /// A scalar or a list of scalars, each trimmed with its span.
    fn items(&mut self, node: &Node, key: &str, rule: &str) -> Option<Vec<(String, Span)>> {
        let out: Vec<(String, Span)> = match node {
            Node::Scalar(s) => vec![(s.as_str().trim().to_owned(), *s.span())],
            Node::Sequence(seq) => {
                let mut out = Vec::with_capacity(seq.len().min(MAX_ITEMS));
                for item in seq.iter() {
                    match item.as_scalar() {
                        Some(s) => out.push((s.as_str().trim().to_owned(), *s.span())),
                        None => {
                            self.err(
                                item.span(),
                                Some(rule),
                                format!("`{key}` items must be strings"),
                            );
                            return None;
                        }
                    }
                }
                out
            }
            Node::Mapping(_) => {
                self.err(
                    node.span(),
                    Some(rule),
                    format!("`{key}` must be a value or a list"),
                );
                return None;
            }
        };
        if out.is_empty() || out.iter().any(|(s, _)| s.is_empty()) {
            self.err(
                node.span(),
                Some(rule),
                format!("`{key}` must not be empty"),
            );
            return None;
        }
        if out.len() > MAX_ITEMS {
            self.err(
                node.span(),
                Some(rule),
                format!("`{key}` has {} items; the limit is {MAX_ITEMS}", out.len()),
            );
            return None;
        }
        Some(out)
    }

    /// Items that must each be one of `known` (a closed vocabulary).
    fn words<T: Copy>(
        &mut self,
        node: &Node,
        key: &str,
        rule: &str,
        parse: impl Fn(&str) -> Option<T>,
        known: &[&str],
    ) -> Option<Vec<T>> {
        let items = self.items(node, key, rule)?;
        let mut out = Vec::new();
        let mut ok = true;
        for (w, span) in items {
            match parse(&w) {
                Some(x) => out.push(x),
                None => {
                    ok = false;
                    self.err(
                        &span,
                        Some(rule),
                        format!(
                            "`{key}: {}` is not one of {}",
                            botscope_text::quoted(&w),
                            known.join(", ")
                        ),
                    );
                }
            }
        }
        ok.then_some(out)
    }

    /// Trap kinds: a name or a list of names, `any` for all.
    fn trap_kinds(&mut self, node: &Node, key: &str, rule: &str) -> Option<u8> {
        let mut known: Vec<&str> = TrapKind::ALL.iter().map(|(n, _)| *n).collect();
        known.push("any");
        let any = TrapKind::ALL.iter().fold(0, |m, (_, k)| m | k.bit());
        self.words(
            node,
            key,
            rule,
            |w| match w {
                "any" => Some(any),
                w => TrapKind::parse(w).map(TrapKind::bit),
            },
            &known,
        )
        .map(|v| v.into_iter().fold(0, |m, b| m | b))
    }

    /// A rule's `trapped:`: kinds (`robots`, `[script, anchor]`, `any`),
    /// or `{kind: …, within: 1h}`.
    fn trapped(&mut self, v: &Node, rule: &str) -> Option<(u8, Option<u64>)> {
        let Some(m) = v.as_mapping() else {
            return self.trap_kinds(v, "trapped", rule).map(|k| (k, None));
        };
        let mut kinds = None;
        let mut within = None;
        for (k, x) in m.iter() {
            match k.as_str() {
                "kind" => kinds = self.trap_kinds(x, "trapped: kind", rule),
                "within" => match x.as_scalar().map(|s| duration_ms(s.as_str())) {
                    Some(Ok(ms)) => within = Some(ms),
                    Some(Err(e)) => {
                        self.err(x.span(), Some(rule), format!("`trapped: within`: {e}"))
                    }
                    None => self.err(
                        x.span(),
                        Some(rule),
                        "`trapped: within` must be a span of time, e.g. `1h`",
                    ),
                },
                other => self.err(
                    k.span(),
                    Some(rule),
                    format!(
                        "`trapped` has `kind` and `within`, not `{}`",
                        botscope_text::quoted(other)
                    ),
                ),
            }
        }
        // No `kind:` means any kind.
        let any = TrapKind::ALL.iter().fold(0, |m, (_, k)| m | k.bit());
        match (m.get_node("kind"), kinds) {
            (Some(_), None) => None,
            (_, k) => Some((k.unwrap_or(any), within)),
        }
    }

    /// The top-level `traps:`.
    fn traps(&mut self, v: &Node) -> Option<Traps> {
        let Some(m) = v.as_mapping() else {
            self.err(v.span(), None, "`traps` must be a mapping with `kinds:`");
            return None;
        };
        let mut t = Traps::default();
        let before = self.findings.len();
        for (k, x) in m.iter() {
            let key = k.as_str();
            let time = |r: &mut Self, what: &str| -> Option<u64> {
                match x.as_scalar().map(|s| duration_ms(s.as_str())) {
                    Some(Ok(ms)) => Some(ms),
                    Some(Err(e)) => {
                        r.err(x.span(), None, format!("`traps: {what}`: {e}"));
                        None
                    }
                    None => {
                        r.err(
                            x.span(),
                            None,
                            format!("`traps: {what}` must be a span of time, e.g. `1d`"),
                        );
                        None
                    }
                }
            };
            match key {
                "kinds" => {
                    if let Some(k) = self.trap_kinds(x, "traps: kinds", "traps") {
                        t.kinds = k;
                    }
                }
                "hold" => t.hold_ms = time(self, "hold").unwrap_or(t.hold_ms),
                "window" => t.window_ms = time(self, "window").unwrap_or(t.window_ms),
                "widen" => match x
                    .as_scalar()
                    .and_then(|s| s.as_str().trim().parse::<u32>().ok())
                {
                    Some(n) if n <= 256 => t.widen = n,
                    _ => self.err(
                        x.span(),
                        None,
                        "`traps: widen` must be a number of addresses from 0 (never widen) to 256",
                    ),
                },
                "tarpit" => {
                    let mut tp = crate::policy::Tarpit::default();
                    match x.as_mapping() {
                        Some(tm) => {
                            for (tk, tv) in tm.iter() {
                                match tk.as_str() {
                                    "max" => match tv.as_scalar().map(|s| duration_ms(s.as_str())) {
                                        Some(Ok(ms)) if ms <= 120_000 => tp.max_ms = ms,
                                        _ => self.err(tv.span(), None, "`traps: tarpit: max` must be a span of time up to 2min (front servers give up on an answer after a minute or two)"),
                                    },
                                    "held" => match tv.as_scalar().and_then(|s| s.as_str().trim().parse::<u32>().ok()) {
                                        Some(n) if (1..=10_000).contains(&n) => tp.held = n,
                                        _ => self.err(tv.span(), None, "`traps: tarpit: held` must be a number of refusals from 1 to 10000"),
                                    },
                                    other => self.err(tk.span(), None, format!("`traps: tarpit` has `max` and `held`, not `{}`", botscope_text::quoted(other))),
                                }
                            }
                        }
                        None if x.as_scalar().is_some_and(|s| s.as_str().trim() == "on") => {}
                        None => self.err(
                            x.span(),
                            None,
                            "`traps: tarpit` is `on` or a mapping with `max` and `held`",
                        ),
                    }
                    t.tarpit = Some(tp);
                }
                "exempt" => {
                    if let Some(items) = self.items(x, "traps: exempt", "traps") {
                        for (n, span) in items {
                            match IpRange::parse_any(&n) {
                                Ok(r) => t.exempt.push(r),
                                Err(_) => self.err(
                                    &span,
                                    None,
                                    format!(
                                        "`traps: exempt: {}` is not an address or CIDR network",
                                        botscope_text::quoted(&n)
                                    ),
                                ),
                            }
                        }
                    }
                }
                other => {
                    let hint = closest(TRAP_KEYS.iter().copied(), other)
                        .map(|n| format!(" (did you mean `{n}`?)"))
                        .unwrap_or_default();
                    self.err(
                        k.span(),
                        None,
                        format!(
                            "unknown key `traps: {}`{hint}",
                            botscope_text::quoted(other)
                        ),
                    );
                }
            }
        }
        if t.kinds == 0 && m.get_node("kinds").is_none() {
            self.err(
                v.span(),
                None,
                "`traps` needs `kinds:` (robots, script, anchor)",
            );
        }
        let failed = self.findings[before..]
            .iter()
            .any(|f| f.severity == Severity::Error);
        (!failed).then_some(t)
    }

    fn rule(&mut self, node: &Node, index: usize) -> Option<Rule> {
        let Some(map) = node.as_mapping() else {
            self.err(
                node.span(),
                None,
                "each rule must be a mapping with a `name` and an `action`",
            );
            return None;
        };
        let name = match map.get_scalar("name") {
            Some(n) if !n.as_str().trim().is_empty() => {
                let n = n.as_str().trim().to_owned();
                if n.chars().count() > MAX_NAME_CHARS
                    || n.chars()
                        .any(|c| c.is_control() || botscope_text::is_unsafe(c))
                {
                    self.err(
                        node.span(),
                        None,
                        format!(
                            "rule {}: a name is up to {MAX_NAME_CHARS} printable characters",
                            index + 1
                        ),
                    );
                    return None;
                }
                n
            }
            _ => {
                self.err(
                    node.span(),
                    None,
                    format!("rule {} has no `name`", index + 1),
                );
                return None;
            }
        };
        let line = line_of(node.span());
        let before = self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let mut action = None;
        let mut c = Conditions::default();
        let mut headers = Vec::new();
        let mut price = None;
        let rule = name.as_str();
        for (k, v) in map.iter() {
            let key = k.as_str();
            match key {
                "name" | "description" => {}
                "action" => match v.as_scalar().and_then(|s| Action::parse(s.as_str().trim())) {
                    Some(a) => action = Some(a),
                    None => self.err(
                        v.span(),
                        Some(rule),
                        "`action` must be one of allow, deny, limit, challenge, label, charge, license",
                    ),
                },
                "bot" => {
                    let Some(items) = self.items(v, key, rule) else {
                        continue;
                    };
                    let mut bots = Vec::new();
                    for (b, span) in items {
                        match self.registry.get(&b).or_else(|| self.registry.find(&b)) {
                            Some(e) => {
                                if !e.name.eq_ignore_ascii_case(&b) {
                                    self.push(
                                        Severity::Warning,
                                        &span,
                                        Some(rule),
                                        format!(
                                            "`{}` is a User-Agent token of {}: the rule names {}",
                                            botscope_text::quoted(&b),
                                            e.name,
                                            e.name
                                        ),
                                    );
                                }
                                bots.push(e.name.to_ascii_lowercase());
                            }
                            None => {
                                let hint = closest(
                                    self.registry.bots().iter().map(|b| b.name.as_str()),
                                    &b,
                                )
                                .map(|n| format!(" (did you mean {n}?)"))
                                .unwrap_or_default();
                                self.err(
                                    &span,
                                    Some(rule),
                                    format!(
                                        "`bot: {}` is not in the registry{hint}",
                                        botscope_text::quoted(&b)
                                    ),
                                );
                            }
                        }
                    }
                    c.bots = Some(bots);
                }
                "category" => {
                    let known = categories();
                    let k2 = known.clone();
                    c.categories = self
                        .words(
                            v,
                            key,
                            rule,
                            |w| k2.iter().find(|x| **x == w).copied(),
                            &known,
                        )
                        .map(|v| v.into_iter().map(str::to_owned).collect());
                }
                "identity" => {
                    let known: Vec<&str> = Identity::ALL.iter().map(|(n, _)| *n).collect();
                    c.identity = self
                        .words(v, key, rule, Identity::parse, &known)
                        .map(|v| identity_bits(&v));
                }
                "signature" => {
                    let known: Vec<&str> = Signature::ALL.iter().map(|(n, _)| *n).collect();
                    c.signature = self
                        .words(v, key, rule, Signature::parse, &known)
                        .map(|v| signature_bits(&v));
                }
                "list" => {
                    c.list = self
                        .words(v, key, rule, list_bit, &LISTS)
                        .map(|v| v.into_iter().fold(0, |m, b| m | b));
                }
                "method" => {
                    c.method = self.items(v, key, rule).and_then(|items| {
                        let mut out = Vec::new();
                        for (m, span) in items {
                            if m.is_empty()
                                || m.len() > 20
                                || !m.bytes().all(|b| b.is_ascii_alphabetic())
                            {
                                self.err(
                                    &span,
                                    Some(rule),
                                    format!(
                                        "`method: {}` is not an HTTP method",
                                        botscope_text::quoted(&m)
                                    ),
                                );
                                return None;
                            }
                            out.push(m.to_ascii_uppercase());
                        }
                        Some(out)
                    });
                }
                "asn" => {
                    c.asn = self.items(v, key, rule).and_then(|items| {
                        let mut out = Vec::new();
                        for (a, span) in items {
                            let n = a
                                .strip_prefix("AS")
                                .or_else(|| a.strip_prefix("as"))
                                .unwrap_or(&a);
                            match n.parse::<u32>() {
                                Ok(n) if n > 0 => out.push(n),
                                _ => {
                                    self.err(
                                        &span,
                                        Some(rule),
                                        format!(
                                            "`asn: {}` is not an AS number",
                                            botscope_text::quoted(&a)
                                        ),
                                    );
                                    return None;
                                }
                            }
                        }
                        Some(out)
                    });
                }
                "network" => {
                    c.network = self.items(v, key, rule).and_then(|items| {
                        let mut out = Vec::new();
                        for (n, span) in items {
                            match IpRange::parse_any(&n) {
                                Ok(r) => out.push(r),
                                Err(_) => {
                                    self.err(
                                        &span,
                                        Some(rule),
                                        format!(
                                            "`network: {}` is not an address or CIDR network",
                                            botscope_text::quoted(&n)
                                        ),
                                    );
                                    return None;
                                }
                            }
                        }
                        Some(out)
                    });
                }
                "user_agent" => {
                    match v.as_scalar() {
                        Some(s) => {
                            let pattern = s.as_str();
                            if pattern.chars().count() > MAX_REGEX_CHARS {
                                self.err(v.span(), Some(rule), format!("`user_agent` is {} characters; the limit is {MAX_REGEX_CHARS}", pattern.chars().count()));
                                continue;
                            }
                            match regex::RegexBuilder::new(pattern)
                            .size_limit(MAX_REGEX_BYTES)
                            .dfa_size_limit(MAX_REGEX_BYTES)
                            .build()
                        {
                            Ok(re) => c.user_agent = Some(re),
                            Err(regex::Error::CompiledTooBig(_)) => self.err(v.span(), Some(rule), format!("`user_agent` compiles to over {MAX_REGEX_BYTES} bytes, the limit: simplify it (bounded repetitions such as {{1000}} multiply its size)")),
                            Err(e) => self.err(v.span(), Some(rule), format!("`user_agent` is not a regular expression: {}", botscope_text::field(&e.to_string()))),
                        }
                        }
                        None => self.err(
                            v.span(),
                            Some(rule),
                            "`user_agent` must be one regular expression",
                        ),
                    }
                }
                "path" => {
                    c.path = self.items(v, key, rule).and_then(|items| {
                        let mut out = Vec::new();
                        for (p, span) in items {
                            let bad = if p.len() > MAX_PATTERN_BYTES {
                                Some(format!("is over {MAX_PATTERN_BYTES} bytes"))
                            } else if !(p.starts_with('/') || p.starts_with('*')) {
                                Some("must start with / or * (a robots.txt path pattern)".to_owned())
                            } else if p.contains('#') || p.chars().any(|ch| ch.is_control() || ch.is_whitespace()) {
                                Some("holds a #, a space or a control character, which a robots.txt pattern cannot".to_owned())
                            } else {
                                None
                            };
                            if let Some(why) = bad {
                                self.err(&span, Some(rule), format!("`path: {}` {why}", botscope_text::quoted(&p)));
                                return None;
                            }
                            out.push(p);
                        }
                        Some(PathSet::with_case(out, self.path_case))
                    });
                }
                "robots" => match v.as_scalar().map(|s| s.as_str().trim()) {
                    Some("disallowed") => c.robots = Some(true),
                    Some("allowed") => c.robots = Some(false),
                    _ => self.err(
                        v.span(),
                        Some(rule),
                        "`robots` must be disallowed or allowed",
                    ),
                },
                "rate" => match v.as_scalar().map(|s| Rate::parse(s.as_str())) {
                    Some(Ok(r)) => c.rate = Some(r),
                    Some(Err(e)) => self.err(v.span(), Some(rule), format!("`rate`: {e}")),
                    None => self.err(
                        v.span(),
                        Some(rule),
                        "`rate` must be one rate, e.g. `10/s per ip`",
                    ),
                },
                "trapped" => c.trapped = self.trapped(v, rule),
                "price" => match v
                    .as_scalar()
                    .map(|s| botscope_terms::Price::parse_header(s.as_str()))
                {
                    Some(Ok(p)) if p.millionths > 0 => price = Some(p),
                    Some(Ok(_)) => self.err(
                        v.span(),
                        Some(rule),
                        "`price` of nothing: to let crawlers in free, use `allow`",
                    ),
                    Some(Err(e)) => self.err(v.span(), Some(rule), format!("`price`: {e}")),
                    None => self.err(
                        v.span(),
                        Some(rule),
                        "`price` must be a currency and an amount, e.g. `USD 0.01`",
                    ),
                },
                "headers" => match v.as_mapping() {
                    Some(m) => {
                        for (hk, hv) in m.iter() {
                            let hname = hk.as_str().trim();
                            let value = hv.as_scalar().map(|s| s.as_str().trim());
                            let name_ok = hname.len() > 2
                                && hname.len() <= 64
                                && hname[..2].eq_ignore_ascii_case("x-")
                                && hname
                                    .bytes()
                                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                                && !hname.to_ascii_lowercase().starts_with("x-bot-");
                            let value_ok = value.is_some_and(|v| {
                                v.len() <= 256 && v.bytes().all(|b| (0x20..0x7f).contains(&b))
                            });
                            if !name_ok {
                                self.err(hk.span(), Some(rule), format!("header `{}`: a label's header is named X-… (letters, digits, -), and not X-Bot-…, which the gate sets", botscope_text::quoted(hname)));
                            } else if !value_ok {
                                self.err(hv.span(), Some(rule), format!("header `{hname}`: the value must be printable ASCII, up to 256 characters"));
                            } else if let Some(value) = value {
                                headers.push((hname.to_owned(), value.to_owned()));
                            }
                        }
                    }
                    None => self.err(
                        v.span(),
                        Some(rule),
                        "`headers` must be a mapping of header names to values",
                    ),
                },
                other => {
                    let hint = closest(RULE_KEYS.iter().copied(), other)
                        .map(|n| format!(" (did you mean `{n}`?)"))
                        .unwrap_or_default();
                    self.err(
                        k.span(),
                        Some(rule),
                        format!("unknown key `{}`{hint}", botscope_text::quoted(other)),
                    );
                }
            }
        }
        let Some(action) = action else {
            if map.get_node("action").is_none() {
                self.err(node.span(), Some(rule), "the rule has no `action`");
            }
            return None;
        };
        match (action, price) {
            (Action::Charge, None) if map.get_node("price").is_none() => self.err(
                node.span(),
                Some(rule),
                "a `charge` rule needs a `price` (a currency and an amount, e.g. `USD 0.01`)",
            ),
            (a, Some(_)) if a != Action::Charge => self.push(
                Severity::Warning,
                node.span(),
                Some(rule),
                "`price` is asked by `charge` rules only; this rule's is not".to_owned(),
            ),
            _ => {}
        }
        if !headers.is_empty() && action != Action::Label {
            self.push(
                Severity::Warning,
                node.span(),
                Some(rule),
                "`headers` are added by `label` rules only; this rule's are not sent".to_owned(),
            );
        }
        let errors = self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        (errors == before).then_some(Rule {
            id: crate::policy::rule_id(&name),
            name,
            line,
            action,
            when: c,
            headers,
            price: price.filter(|_| action == Action::Charge),
        })
    }
}

/// The closest of `names` to `word`, when it is close.
fn closest<'n>(names: impl Iterator<Item = &'n str>, word: &str) -> Option<&'n str> {
    names
        .map(|n| {
            (
                strsim::jaro_winkler(&n.to_ascii_lowercase(), &word.to_ascii_lowercase()),
                n,
            )
        })
        .filter(|(s, _)| *s > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// What reading a policy gave: the policy (none when there is an error)
/// and every finding, in line order.
#[derive(Debug)]
pub struct Parsed {
    /// The compiled policy, when no finding is an error.
    pub policy: Option<Policy>,
    /// Errors and warnings, by line.
    pub findings: Vec<Finding>,
}

/// Reads the policy `text` (from `file`, for messages), with bot names
/// checked against `registry`; rules no request can reach are warnings.
pub fn parse(file: &str, text: &str, registry: &Registry) -> Parsed {
    let mut r = Reader {
        file,
        registry,
        findings: Vec::new(),
        path_case: PathCase::Sensitive,
    };
    let blank = Span::new_blank();
    if text.len() > MAX_POLICY_BYTES {
        r.err(
            &blank,
            None,
            format!(
                "the file is {} bytes; the limit is {MAX_POLICY_BYTES}",
                text.len()
            ),
        );
        return done(r, None, text);
    }
    let opts = LoaderOptions::default().error_on_duplicate_keys(true);
    let root = match marked_yaml::parse_yaml_with_options(0, text, opts) {
        Ok(root) => root,
        Err(e) => {
            let line = botscope_botid::yaml_error_line(&e);
            r.findings.push(Finding {
                file: file.to_owned(),
                line,
                rule: None,
                severity: Severity::Error,
                message: format!("not valid YAML: {}", botscope_text::field(&e.to_string())),
            });
            return done(r, None, text);
        }
    };
    let Some(top) = root.as_mapping() else {
        r.err(
            root.span(),
            None,
            "the top level must be a mapping with `rules:`",
        );
        return done(r, None, text);
    };
    for (k, _) in top.iter() {
        if !TOP_KEYS.contains(&k.as_str()) {
            r.err(
                k.span(),
                None,
                format!(
                    "unknown top-level key `{}`",
                    botscope_text::quoted(k.as_str())
                ),
            );
        }
    }
    if let Some(v) = top.get_node("version")
        && v.as_scalar().map(|s| s.as_str().trim()) != Some("1")
    {
        r.err(v.span(), None, "`version` must be 1");
    }
    let default = match top.get_node("default") {
        // A file cut short (read while it was written, or copied in part)
        // is often a valid policy with fewer rules: without its own word on
        // what no rule decides, it is not read as allowing everything.
        None => {
            r.err(
                &blank,
                None,
                "no `default:`: say what no rule decides (`default: allow`, or deny, limit, challenge)",
            );
            Action::Allow
        }
        Some(v) => match v.as_scalar().and_then(|s| Action::parse(s.as_str().trim())) {
            Some(Action::Label | Action::Charge | Action::License) | None => {
                r.err(
                    v.span(),
                    None,
                    "`default` must be one of allow, deny, limit, challenge",
                );
                Action::Allow
            }
            Some(a) => a,
        },
    };
    if let Some(v) = top.get_node("path_case") {
        match v.as_scalar().map(|s| s.as_str().trim()) {
            Some("sensitive") => r.path_case = PathCase::Sensitive,
            Some("insensitive") => r.path_case = PathCase::Insensitive,
            _ => r.err(
                v.span(),
                None,
                "`path_case` must be sensitive or insensitive",
            ),
        }
    }
    let traps = top.get_node("traps").and_then(|v| r.traps(v));
    let Some(rules_node) = top.get_node("rules") else {
        r.err(&blank, None, "missing `rules:` list");
        return done(r, None, text);
    };
    let mut rules = Vec::new();
    match rules_node.as_sequence() {
        Some(seq) if seq.len() > MAX_RULES => {
            r.err(
                rules_node.span(),
                None,
                format!("{} rules; the limit is {MAX_RULES}", seq.len()),
            );
        }
        Some(seq) => {
            let mut seen: HashMap<String, u32> = HashMap::new();
            for (i, n) in seq.iter().enumerate() {
                let name = n
                    .as_mapping()
                    .and_then(|m| m.get_scalar("name"))
                    .map(|s| s.as_str().trim().to_owned());
                if let Some(name) = name.filter(|n| !n.is_empty()) {
                    if let Some(first) = seen.get(&name) {
                        let msg =
                            format!("a rule with this name is already defined at line {first}");
                        r.err(n.span(), Some(&name), msg);
                    } else {
                        seen.insert(name, line_of(n.span()));
                    }
                }
                if let Some(rule) = r.rule(n, i) {
                    rules.push(rule);
                }
            }
        }
        None if rules_node
            .as_scalar()
            .is_some_and(|s| s.as_str().trim().is_empty()) => {}
        None => r.err(rules_node.span(), None, "`rules` must be a list"),
    }
    let challenges = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.action == Action::Challenge)
        .map(|(i, _)| i)
        .collect();
    let policy = Policy {
        rules,
        default,
        file: file.to_owned(),
        path_case: r.path_case,
        traps,
        challenges,
    };
    for f in check::warnings(&policy) {
        r.findings.push(f);
    }
    done(r, Some(policy), text)
}

fn done(mut r: Reader, policy: Option<Policy>, text: &str) -> Parsed {
    // The reader may place what ends the file just past it.
    let last = u32::try_from(text.matches('\n').count() + text.matches('\r').count() + 1)
        .unwrap_or(u32::MAX);
    for f in &mut r.findings {
        f.line = f.line.min(last);
    }
    r.findings.sort_by_key(|f| f.line);
    let failed = r.findings.iter().any(|f| f.severity == Severity::Error);
    Parsed {
        policy: policy.filter(|_| !failed),
        findings: r.findings,
    }
}
