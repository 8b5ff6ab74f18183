//! The challenge funnel, per rule: how many challenges a rule issued, how
//! many pages were viewed, answered, passed, failed (by reason), and how
//! many requests the rule's conditions held for but an earlier `allow`
//! rule (or the protocol files' exemption) let through. The rule travels
//! inside the signed token and the pass, so nothing is kept per client;
//! labels are the policy's rule names and fixed reasons, never a
//! client's text. The decision log carries the same events, so
//! `policy replay --funnel` reproduces the counts from it ([`read_log`]).
//!
//! The solve rate is Cloudflare's: passed ÷ issued.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::Mutex;

use serde::Serialize;

use crate::challenge::Refused;

/// The rule of a stage whose rule is not known: a forged token (whose
/// rule cannot be trusted), a page no rule issued (a challenge page asked
/// for directly, or behind an nginx configured without the token
/// header), or a rule the policy no longer has.
pub const NO_RULE: &str = "-";
/// The reason of an exemption by the protocol files (`/robots.txt`,
/// `/.well-known/`), which no rule but one naming them may challenge.
pub const PROTOCOL_FILE: &str = "protocol-file";
/// Rules counted at most (past it, under [`NO_RULE`]): the policy's are
/// far fewer; a decision log read by `policy replay` may be anyone's.
pub const MAX_RULES: usize = 10_000;
/// Exemption reasons counted per rule at most (the policy's `allow`
/// rules and [`PROTOCOL_FILE`]).
const MAX_REASONS: usize = 1_000;
/// Issued challenges from which a rule's figures are judged (fewer say
/// nothing yet).
pub const JUDGED_FROM: u64 = 20;
/// A solve rate from which a rule is said to challenge people: Cloudflare
/// reads a high solve rate as humans solving, and a scraper that solves
/// as often is better limited or refused than challenged.
pub const HIGH_SOLVE_RATE: f64 = 0.5;

/// One stage a challenge went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage<'a> {
    /// The gate answered a request with the challenge.
    Issued,
    /// The challenge page was served.
    Viewed,
    /// A token came back and held: a pass was given.
    Passed,
    /// A token came back and did not hold.
    Failed(Refused),
    /// The rule's conditions (its rate aside) held, and the request was
    /// let through by the `allow` rule named here, or [`PROTOCOL_FILE`].
    Exempt(&'a str),
}

impl Stage<'_> {
    /// Its name in the decision log.
    pub fn as_str(&self) -> &'static str {
        match self {
            Stage::Issued => "issued",
            Stage::Viewed => "viewed",
            Stage::Passed => "passed",
            Stage::Failed(_) => "failed",
            Stage::Exempt(_) => "exempt",
        }
    }

    /// Its reason, for a failure or an exemption.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Stage::Failed(r) => Some(r.code()),
            Stage::Exempt(why) => Some(why),
            _ => None,
        }
    }
}

/// One rule's funnel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Challenges issued.
    pub issued: u64,
    /// Challenge pages served (behind the standalone gate and Caddy, the
    /// issuing request itself; behind nginx, the request its
    /// `error_page` makes to the gate).
    pub viewed: u64,
    /// Tokens that came back (passed and failed).
    pub answered: u64,
    /// Passes given.
    pub passed: u64,
    /// Tokens refused, by reason.
    pub failed: BTreeMap<String, u64>,
    /// Requests let through before the rule, by what let them.
    pub exempt: BTreeMap<String, u64>,
}

impl Tally {
    /// Adds one `stage`.
    pub fn add(&mut self, stage: Stage) {
        self.add_n(stage, 1);
    }

    fn add_n(&mut self, stage: Stage, n: u64) {
        match stage {
            Stage::Issued => self.issued += n,
            Stage::Viewed => self.viewed += n,
            Stage::Passed => {
                self.answered += n;
                self.passed += n;
            }
            Stage::Failed(r) => {
                self.answered += n;
                *self.failed.entry(r.code().to_owned()).or_default() += n;
            }
            Stage::Exempt(why) => {
                let why = if self.exempt.len() < MAX_REASONS || self.exempt.contains_key(why) {
                    why
                } else {
                    NO_RULE
                };
                *self.exempt.entry(why.to_owned()).or_default() += n;
            }
        }
    }

    /// Passed ÷ issued (Cloudflare's challenge solve rate), once any was
    /// issued.
    pub fn solve_rate(&self) -> Option<f64> {
        // Counts stay far below 2^52: exact as f64.
        #[allow(clippy::cast_precision_loss)]
        (self.issued > 0).then(|| self.passed as f64 / self.issued as f64)
    }

    /// Failures of every reason.
    pub fn failures(&self) -> u64 {
        self.failed.values().sum()
    }

    /// What the figures say is wrong with the rule, in words (none while
    /// fewer than [`JUDGED_FROM`] challenges were issued).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.issued < JUDGED_FROM {
            return out;
        }
        if self.viewed == 0 {
            out.push(format!(
                "{} challenges issued, no page viewed: the front server does not show the gate's challenge page (behind nginx, the @botscope_challenge location and its X-Bot-Challenge header; see docs/gate.md)",
                self.issued
            ));
        } else if self.answered == 0 {
            out.push(format!(
                "{} challenges issued, none answered: the page cannot run or its link cannot be followed (a Content-Security-Policy blocking the page's script, or no route to /.botscope/pass)",
                self.issued
            ));
        }
        if let Some(rate) = self.solve_rate().filter(|r| *r >= HIGH_SOLVE_RATE) {
            out.push(format!(
                "solve rate {:.0}%: most of those challenged pass, so this rule challenges people (or scrapers that solve it: limit or refuse them instead)",
                rate * 100.0
            ));
        }
        out
    }
}

/// The funnel of every rule, counted by the gate.
#[derive(Debug, Default)]
pub struct Funnel {
    by_rule: Mutex<BTreeMap<String, Tally>>,
}

impl Funnel {
    /// Counts one `stage` for `rule` (a name from the policy, `default`
    /// or [`NO_RULE`]).
    pub fn count(&self, rule: &str, stage: Stage) {
        let mut m = self.by_rule.lock().unwrap_or_else(|p| p.into_inner());
        add(&mut m, rule, stage, 1);
    }

    /// Every rule's funnel so far.
    pub fn snapshot(&self) -> BTreeMap<String, Tally> {
        self.by_rule
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn add(m: &mut BTreeMap<String, Tally>, rule: &str, stage: Stage, n: u64) {
    let rule = if m.len() < MAX_RULES || m.contains_key(rule) {
        rule
    } else {
        NO_RULE
    };
    match m.get_mut(rule) {
        Some(t) => t.add_n(stage, n),
        None => {
            let mut t = Tally::default();
            t.add_n(stage, n);
            m.insert(rule.to_owned(), t);
        }
    }
}

/// The rule whose id a token or a pass carries, by its name in `policy`
/// (`default` for the default's): [`NO_RULE`] for a forged token
/// (`None`), one no rule issued (`Some(None)`), or a rule the policy no
/// longer has.
pub fn rule_name(policy: Option<&botscope_policy::Policy>, id: Option<Option<u32>>) -> &str {
    let Some(Some(id)) = id else { return NO_RULE };
    if id == botscope_policy::rule_id("default") {
        return "default";
    }
    policy
        .and_then(|p| p.rules.iter().find(|r| r.id == id))
        .map_or(NO_RULE, |r| r.name.as_str())
}

/// The decision log's line for a funnel event (an issued challenge is the
/// decision's own line, `action: challenge`, enforced).
pub fn line(time: &str, client: std::net::IpAddr, rule: &str, stage: Stage, path: &str) -> String {
    serde_json::json!({
        "time": time,
        "client": client.to_string(),
        "event": "challenge",
        "stage": stage.as_str(),
        "rule": rule,
        "reason": stage.reason(),
        "path": path,
    })
    .to_string()
}

/// What [`read_log`] found.
#[derive(Debug, Default, Serialize)]
pub struct Read {
    /// Every rule's funnel.
    pub rules: BTreeMap<String, Tally>,
    /// Lines read.
    pub lines: u64,
    /// Lines that are not a decision log's (counted, never silently
    /// skipped).
    pub malformed: u64,
}

impl Read {
    /// Every challenge rule of `policy` (and its default, when it
    /// challenges), counted or not: a rule that issued nothing is shown.
    pub fn add_rules(&mut self, policy: &botscope_policy::Policy) {
        let challenging = policy
            .rules
            .iter()
            .filter(|r| r.action == botscope_policy::Action::Challenge)
            .map(|r| r.name.as_str())
            .chain((policy.default == botscope_policy::Action::Challenge).then_some("default"));
        for name in challenging {
            if self.rules.len() < MAX_RULES {
                self.rules.entry(name.to_owned()).or_default();
            }
        }
    }
}

/// The funnel, from decision logs (`--decision-log` files, in any order):
/// the decisions `action: challenge` that were enforced are the issued
/// ones; the `event: challenge` lines the other stages. A line over
/// [`MAX_LINE_BYTES`](botscope_accesslog::MAX_LINE_BYTES) is malformed
/// (and read past, not kept).
pub fn read_log(inputs: Vec<(String, Box<dyn BufRead + '_>)>) -> std::io::Result<Read> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        event: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        stage: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        rule: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        reason: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        action: Option<std::borrow::Cow<'a, str>>,
        enforced: Option<bool>,
    }
    let mut out = Read::default();
    let mut buf = Vec::new();
    for (_, mut r) in inputs {
        loop {
            buf.clear();
            if botscope_text::read_line_capped(
                &mut r,
                &mut buf,
                botscope_accesslog::MAX_LINE_BYTES,
            )? == 0
            {
                break;
            }
            if buf.len() > botscope_accesslog::MAX_LINE_BYTES {
                out.lines += 1;
                out.malformed += 1;
                continue;
            }
            let l = buf.trim_ascii();
            if l.is_empty() {
                continue;
            }
            out.lines += 1;
            let Ok(v) = serde_json::from_slice::<Line>(l) else {
                out.malformed += 1;
                continue;
            };
            let rule = v.rule.as_deref().unwrap_or(NO_RULE);
            let stage = match (v.event.as_deref(), v.stage.as_deref()) {
                (None, _) => {
                    if v.action.as_deref() == Some("challenge") && v.enforced == Some(true) {
                        Some(Stage::Issued)
                    } else {
                        None
                    }
                }
                (Some("challenge"), Some("viewed")) => Some(Stage::Viewed),
                (Some("challenge"), Some("passed")) => Some(Stage::Passed),
                (Some("challenge"), Some("failed")) => Refused::ALL
                    .into_iter()
                    .find(|r| Some(r.code()) == v.reason.as_deref())
                    .map(Stage::Failed),
                (Some("challenge"), Some("exempt")) => v.reason.as_deref().map(Stage::Exempt),
                _ => None,
            };
            match stage {
                Some(s) => add(&mut out.rules, rule, s, 1),
                None if v.event.is_some() && v.event.as_deref() != Some("challenge") => {}
                None if v.event.is_some() => out.malformed += 1,
                None => {}
            }
        }
    }
    Ok(out)
}

/// The funnel as text: a line per rule (issued, viewed, answered,
/// passed, failed by reason, exempt by reason, solve rate), then the
/// rule's warnings.
pub fn text(r: &Read) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "challenge funnel from {} lines ({} not a decision log's)",
        r.lines, r.malformed
    );
    if r.rules.is_empty() {
        let _ = writeln!(o, "no challenge was issued, viewed or answered");
        return o;
    }
    for (rule, t) in &r.rules {
        let rate = t
            .solve_rate()
            .map_or_else(|| "-".to_owned(), |x| format!("{:.1}%", x * 100.0));
        let _ = writeln!(
            o,
            "\n{rule}\n  issued {}  viewed {}  answered {}  passed {}  failed {}  solve rate {rate}",
            t.issued,
            t.viewed,
            t.answered,
            t.passed,
            t.failures()
        );
        let by = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !t.failed.is_empty() {
            let _ = writeln!(o, "  failed by reason: {}", by(&t.failed));
        }
        if !t.exempt.is_empty() {
            let _ = writeln!(o, "  exempt by reason: {}", by(&t.exempt));
        }
        for w in t.warnings() {
            let _ = writeln!(o, "  warning: {w}");
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_add_up_and_labels_stay_bounded() {
        let f = Funnel::default();
        for _ in 0..30 {
            f.count("r", Stage::Issued);
            f.count("r", Stage::Viewed);
        }
        f.count("r", Stage::Passed);
        f.count("r", Stage::Failed(Refused::TooEarly));
        f.count(NO_RULE, Stage::Failed(Refused::Forged));
        f.count("r", Stage::Exempt("feeds"));
        let s = f.snapshot();
        let r = &s["r"];
        assert_eq!((r.issued, r.viewed, r.answered, r.passed), (30, 30, 2, 1));
        assert_eq!(r.failed["too-early"], 1);
        assert_eq!(r.exempt["feeds"], 1);
        assert_eq!(s[NO_RULE].failed["forged"], 1);
        assert!(r.warnings().is_empty(), "{:?}", r.warnings());
        // Past the bound, new rules are counted under no rule.
        let f = Funnel::default();
        for i in 0..MAX_RULES + 5 {
            f.count(&format!("r{i}"), Stage::Issued);
        }
        let s = f.snapshot();
        assert_eq!(s.len(), MAX_RULES + 1);
        assert_eq!(s[NO_RULE].issued, 5);
    }

    #[test]
    fn warnings_name_a_rule_that_challenges_people_or_cannot_run() {
        let mut t = Tally {
            issued: 40,
            viewed: 40,
            ..Tally::default()
        };
        let w = t.warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("none answered"), "{w:?}");
        for _ in 0..25 {
            t.add(Stage::Passed);
        }
        let w = t.warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("solve rate 62%"), "{w:?}");
        t.viewed = 0;
        assert!(t.warnings()[0].contains("no page viewed"));
        // Too few to judge.
        let few = Tally {
            issued: JUDGED_FROM - 1,
            ..Tally::default()
        };
        assert!(few.warnings().is_empty());
        assert_eq!(few.solve_rate(), Some(0.0));
        assert_eq!(Tally::default().solve_rate(), None);
    }

    #[test]
    fn the_log_gives_back_what_was_counted_and_counts_what_it_cannot_read() {
        let ip: std::net::IpAddr = "192.0.2.1".parse().unwrap_or([0, 0, 0, 0].into());
        let t = "2026-12-06T00:00:00Z";
        let issued = r#"{"time":"2026-12-06T00:00:00Z","client":"192.0.2.1","rule":"r","action":"challenge","enforced":true}"#;
        let not_enforced =
            r#"{"time":"2026-12-06T00:00:00Z","rule":"r","action":"challenge","enforced":false}"#;
        let denied = r#"{"rule":"d","action":"deny","enforced":true}"#;
        let log = [
            issued.to_owned(),
            issued.to_owned(),
            not_enforced.to_owned(),
            denied.to_owned(),
            line(t, ip, "r", Stage::Viewed, "/"),
            line(t, ip, "r", Stage::Passed, "/.botscope/pass"),
            line(
                t,
                ip,
                NO_RULE,
                Stage::Failed(Refused::Forged),
                "/.botscope/pass",
            ),
            line(t, ip, "r", Stage::Exempt(PROTOCOL_FILE), "/robots.txt"),
            r#"{"event":"challenge","stage":"failed","rule":"r","reason":"made-up"}"#.to_owned(),
            "not json".to_owned(),
            "x".repeat(botscope_accesslog::MAX_LINE_BYTES + 10),
            String::new(),
        ]
        .join("\n");
        let r = read_log(vec![("log".into(), Box::new(log.as_bytes()))]).expect("read");
        assert_eq!(r.lines, 11);
        assert_eq!(r.malformed, 3);
        let t = &r.rules["r"];
        assert_eq!((t.issued, t.viewed, t.answered, t.passed), (2, 1, 1, 1));
        assert_eq!(t.exempt[PROTOCOL_FILE], 1);
        assert_eq!(r.rules[NO_RULE].failed["forged"], 1);
        assert!(!r.rules.contains_key("d"));
        let out = text(&r);
        assert!(out.contains("solve rate 50.0%"), "{out}");
        assert!(out.contains("exempt by reason: protocol-file 1"), "{out}");
    }
}
