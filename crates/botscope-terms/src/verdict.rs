//! One answer to "may I use this page for this purpose, and on what
//! terms": robots.txt access, the aipref usage preferences (`Content-Usage`
//! in robots.txt and on the page), Cloudflare's `Content-Signal` and the
//! site's RSL licence, each reason naming its source and line, and where
//! the sources disagree, which wins and by which rule.
//!
//! The order of reading, each step from a specification:
//!
//! 1. **Access.** A URL robots.txt closes to the agent is not fetched, and
//!    "usage preferences apply only to those resources that can be crawled"
//!    (draft-ietf-aipref-attach-05, section 3.1).
//! 2. **The licence.** An RSL `<content>` matching the URL (longest pattern,
//!    RFC 9309 matching, RSL 1.0 section 3.3) decides when it speaks of the
//!    use: a `<prohibits>` refuses; a licence that permits it allows it,
//!    free, or once obtained from its licence server (`server`: "clients
//!    must obtain a license … even if the license is free") and paid; a use
//!    its licences do not list is not licensed. A licence is an explicit
//!    arrangement, which applies "despite the existence of machine-readable
//!    statements of preference" (draft-ietf-aipref-vocab-08, section 5.2,
//!    "More Specific Instructions"), so a licence permitting a use a
//!    preference refuses wins, and the answer says so.
//! 3. **Preferences.** Otherwise the statements of preference combine per
//!    category: any that disallows wins, then any that allows, else the
//!    preference is unknown (vocab-08 section 5.1). Content-Signal is read
//!    as an alternative format of the same model (vocab-08 section 7):
//!    `ai-train` is AI Training, `ai-input` AI Use, `search` Search.

use botscope_robotstxt::{Matcher, Robots, Usage};
use serde::Serialize;

use crate::price::Price;
use crate::rsl::{Document, Grant};

/// What the crawler means to do with the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// Train a generative AI model (aipref `train-ai`, Content-Signal
    /// `ai-train`, RSL `ai-train`).
    TrainAi,
    /// Input to a generative AI model at inference, such as grounding or
    /// retrieval (aipref `ai-use`, Content-Signal `ai-input`, RSL
    /// `ai-input`).
    AiUse,
    /// Build an index for AI retrieval (RSL `ai-index`; aipref and
    /// Content-Signal count it as AI Use, `ai-use` and `ai-input`).
    AiIndex,
    /// A search application that links to the page (aipref `search`,
    /// Content-Signal `search`, RSL `search`).
    Search,
}

impl Purpose {
    /// Every purpose, with its name.
    pub const ALL: &'static [(&'static str, Purpose)] = &[
        ("train-ai", Purpose::TrainAi),
        ("ai-use", Purpose::AiUse),
        ("ai-index", Purpose::AiIndex),
        ("search", Purpose::Search),
    ];

    /// Reads a purpose by any of its vocabularies' names (`train-ai` or
    /// `ai-train`, `ai-use` or `ai-input`, `ai-index`, `search`).
    pub fn parse(s: &str) -> Option<Purpose> {
        match s {
            "train-ai" | "ai-train" => Some(Purpose::TrainAi),
            "ai-use" | "ai-input" => Some(Purpose::AiUse),
            "ai-index" => Some(Purpose::AiIndex),
            "search" => Some(Purpose::Search),
            _ => None,
        }
    }

    /// Its name (aipref's label where aipref has one).
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::TrainAi => "train-ai",
            Purpose::AiUse => "ai-use",
            Purpose::AiIndex => "ai-index",
            Purpose::Search => "search",
        }
    }

    /// The aipref category label it falls in.
    pub fn aipref(self) -> &'static str {
        match self {
            Purpose::TrainAi => "train-ai",
            Purpose::AiUse | Purpose::AiIndex => "ai-use",
            Purpose::Search => "search",
        }
    }

    /// The Content-Signal it falls in.
    pub fn signal(self) -> &'static str {
        match self {
            Purpose::TrainAi => "ai-train",
            Purpose::AiUse | Purpose::AiIndex => "ai-input",
            Purpose::Search => "search",
        }
    }

    /// RSL's usage value for it.
    pub fn rsl(self) -> &'static str {
        match self {
            Purpose::TrainAi => "ai-train",
            Purpose::AiUse => "ai-input",
            Purpose::AiIndex => "ai-index",
            Purpose::Search => "search",
        }
    }
}

/// Where a reason comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// robots.txt's Allow and Disallow rules.
    Robots,
    /// A `Content-Usage` rule of robots.txt (aipref).
    ContentUsage,
    /// The page's `Content-Usage` header (aipref).
    ContentUsageHeader,
    /// A `Content-Signal` line of robots.txt (Cloudflare).
    ContentSignal,
    /// The site's RSL licence.
    Licence,
}

impl Source {
    /// Its name, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Robots => "robots.txt",
            Source::ContentUsage => "Content-Usage",
            Source::ContentUsageHeader => "Content-Usage header",
            Source::ContentSignal => "Content-Signal",
            Source::Licence => "RSL licence",
        }
    }
}

/// What one source says of the use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Says {
    /// It allows it.
    Allows,
    /// It refuses it.
    Refuses,
    /// It allows it under a licence (obtained, paid).
    Licenses,
    /// It states nothing that decides it.
    Unknown,
}

/// One reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// Where from.
    pub source: Source,
    /// The line in its file (robots.txt or the licence), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What it says of the use.
    pub says: Says,
    /// In words.
    pub text: String,
}

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// robots.txt closes the URL to the agent: it is not fetched.
    NotCrawlable,
    /// The use is refused (a licence prohibits it or does not license it,
    /// or a preference disallows it).
    Refused,
    /// The use is allowed under a licence: obtained from its server, paid
    /// at [`Verdict::cost`] when stated.
    Licence,
    /// The use is allowed, with nothing to obtain or pay.
    Allowed,
    /// No source decides (the drafts take no position on a default).
    Unknown,
}

impl Answer {
    /// Its name, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::NotCrawlable => "not-crawlable",
            Answer::Refused => "refused",
            Answer::Licence => "licence",
            Answer::Allowed => "allowed",
            Answer::Unknown => "unknown",
        }
    }
}

/// What is asked.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The crawler (a product token or a whole User-Agent).
    pub agent: &'a str,
    /// The page's origin (`https://example.com`).
    pub origin: &'a str,
    /// The page's path and query (`/news/today?page=2`).
    pub path: &'a str,
    /// The use.
    pub purpose: Purpose,
    /// The kind of user (RSL's user vocabulary), when it matters.
    pub user: Option<&'a str>,
    /// The user's country (ISO 3166-1 alpha-2), when it matters.
    pub geo: Option<&'a str>,
}

/// What is known of the site.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// Its robots.txt, parsed and compiled (none: no file, every URL may
    /// be crawled).
    pub robots: Option<(&'a Robots, &'a Matcher)>,
    /// The page's `Content-Usage` header, read.
    pub header: Option<&'a Usage>,
    /// The site's licence: its URL and the document read from it.
    pub licence: Option<(&'a str, &'a Document)>,
}

/// The licence terms that apply, when a licence speaks of the use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LicenceTerms {
    /// The licence document's URL.
    pub url: String,
    /// The `<content>` that applies (its `url`, its line).
    pub content: String,
    /// Its line.
    pub content_line: u32,
    /// The `<license>` that decides, its line.
    pub license_line: u32,
    /// Its payment type (`free` when none).
    pub payment: String,
    /// The licence server to obtain it from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Rate cards, when the price is not an amount.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rate_cards: Vec<String>,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The answer.
    pub answer: Answer,
    /// The purpose asked about.
    pub purpose: Purpose,
    /// What the use costs, when a licence states it as an amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Price>,
    /// The licence that applies, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub licence: Option<LicenceTerms>,
    /// Every source's say, in the order read.
    pub reasons: Vec<Reason>,
    /// Where sources disagree: which wins, and by which rule.
    pub conflicts: Vec<String>,
}

fn flag(v: &str) -> Says {
    match v {
        "y" | "yes" => Says::Allows,
        "n" | "no" => Says::Refuses,
        _ => Says::Unknown,
    }
}

/// Decides. Pure; its cost is one robots.txt check, one preference
/// lookup (one match per Content-Usage rule of the agent's groups) and
/// one licence lookup (one match per `<content>`).
pub fn decide(ask: &Ask<'_>, src: &Sources<'_>) -> Verdict {
    let mut reasons = Vec::new();
    let mut conflicts = Vec::new();
    let token = botscope_robotstxt::product_token(ask.agent);
    let done = |answer, reasons, conflicts, cost, licence| Verdict {
        answer,
        purpose: ask.purpose,
        cost,
        licence,
        reasons,
        conflicts,
    };

    // 1. Access.
    let mut prefs = None;
    match src.robots {
        Some((robots, matcher)) => {
            let v = matcher.check_path(ask.agent, ask.path.as_bytes());
            let rule = v.rule.as_ref().map(|r| {
                format!(
                    "{}: {}",
                    r.kind.as_str(),
                    botscope_robotstxt::escape_pattern(r.pattern).escape_ascii()
                )
            });
            let (line, text) = match (&v.rule, rule) {
                (Some(r), Some(t)) => (Some(r.line), format!("{t} decides for {token}")),
                _ => (None, format!("no rule matches for {token}: it may crawl")),
            };
            reasons.push(Reason {
                source: Source::Robots,
                line,
                says: if v.allowed {
                    Says::Allows
                } else {
                    Says::Refuses
                },
                text: if v.allowed {
                    format!("may crawl: {text}")
                } else {
                    format!("may not crawl: {text}")
                },
            });
            if !v.allowed {
                return done(Answer::NotCrawlable, reasons, conflicts, None, None);
            }
            prefs = Some(robots.preferences(token, ask.path.as_bytes(), true));
        }
        None => reasons.push(Reason {
            source: Source::Robots,
            line: None,
            says: Says::Allows,
            text: "no robots.txt: every URL may be crawled (RFC 9309 section 2.3.1.3)".into(),
        }),
    }

    // 3 (gathered first, decided last). The statements of preference.
    let label = ask.purpose.aipref();
    let signal = ask.purpose.signal();
    let mut stated: Vec<Reason> = Vec::new();
    if let Some(p) = &prefs {
        if let Some(u) = &p.usage {
            let v = u.get(label).map_or("", String::as_str);
            stated.push(Reason {
                source: Source::ContentUsage,
                line: p.usage_lines.first().copied(),
                says: flag(v),
                text: if v.is_empty() {
                    format!("states nothing of {label}")
                } else {
                    format!("{label}={v}")
                },
            });
        }
        if let Some(s) = &p.content_signal {
            let v = s.get(signal).map_or("", String::as_str);
            stated.push(Reason {
                source: Source::ContentSignal,
                line: p.signal_lines.first().copied(),
                says: flag(v),
                text: if v.is_empty() {
                    format!("states nothing of {signal}")
                } else {
                    format!("{signal}={v}")
                },
            });
        }
    }
    if let Some(h) = src.header {
        let v = h.get(label).map_or("", String::as_str);
        stated.push(Reason {
            source: Source::ContentUsageHeader,
            line: None,
            says: flag(v),
            text: if v.is_empty() {
                format!("states nothing of {label}")
            } else {
                format!("{label}={v}")
            },
        });
    }
    let pref = if stated.iter().any(|r| r.says == Says::Refuses) {
        Says::Refuses
    } else if stated.iter().any(|r| r.says == Says::Allows) {
        Says::Allows
    } else {
        Says::Unknown
    };
    let named = |r: &Reason| match r.line {
        Some(l) => format!("{} (line {l}: {})", r.source.as_str(), r.text),
        None => format!("{} ({})", r.source.as_str(), r.text),
    };
    let yes: Vec<String> = stated
        .iter()
        .filter(|r| r.says == Says::Allows)
        .map(named)
        .collect();
    let no: Vec<String> = stated
        .iter()
        .filter(|r| r.says == Says::Refuses)
        .map(named)
        .collect();
    reasons.extend(stated);

    // 2. The licence.
    if let Some((url, doc)) = src.licence {
        match doc.content_for(ask.origin, ask.path) {
            None => reasons.push(Reason {
                source: Source::Licence,
                line: None,
                says: Says::Unknown,
                text: format!("{url} names no <content> for this URL"),
            }),
            Some(c) => {
                let usage = ask.purpose.rsl();
                let grants: Vec<(usize, Grant)> = c
                    .licenses
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (i, l.grants(usage, ask.user, ask.geo)))
                    .collect();
                // A prohibition in any licence of the content refuses;
                // else the free permitting licence, else the cheapest.
                let prohibited = grants.iter().find(|(_, g)| *g == Grant::Prohibits);
                let permitting: Vec<usize> = grants
                    .iter()
                    .filter(|(_, g)| *g == Grant::Permits)
                    .map(|(i, _)| *i)
                    .collect();
                if let Some((i, _)) = prohibited {
                    let l = &c.licenses[*i];
                    reasons.push(Reason {
                        source: Source::Licence,
                        line: Some(l.line),
                        says: Says::Refuses,
                        text: format!("{url}: the licence for {} prohibits {usage}", c.url),
                    });
                    if !yes.is_empty() {
                        conflicts.push(format!(
                            "{} allow it, the licence prohibits it: the licence wins, the more specific arrangement (draft-ietf-aipref-vocab-08 section 5.2) and the more restrictive (section 5.1)",
                            yes.join(" and ")
                        ));
                    }
                    return done(Answer::Refused, reasons, conflicts, None, None);
                }
                let best = permitting.iter().copied().min_by_key(|&i| {
                    let l = &c.licenses[i];
                    (
                        !l.is_free(),
                        l.price().map_or((0, 0), |p| (1, p.millionths)),
                    )
                });
                let Some(i) = best else {
                    let line = c.licenses.first().map(|l| l.line).unwrap_or(c.line);
                    reasons.push(Reason {
                        source: Source::Licence,
                        line: Some(line),
                        says: Says::Refuses,
                        text: if c.licenses.is_empty() {
                            format!(
                                "{url}: the content {} has no licence: nothing is granted",
                                c.url
                            )
                        } else {
                            format!(
                                "{url}: no licence for {} lists {usage}: it is not licensed",
                                c.url
                            )
                        },
                    });
                    if !yes.is_empty() {
                        conflicts.push(format!(
                            "{} allow it, the licence does not grant it: the restrictive one wins (draft-ietf-aipref-vocab-08 section 5.1)",
                            yes.join(" and ")
                        ));
                    }
                    return done(Answer::Refused, reasons, conflicts, None, None);
                };
                let l = &c.licenses[i];
                let free = l.is_free();
                let payment = l
                    .payments
                    .iter()
                    .find(|p| p.is_free() == free)
                    .map_or_else(|| "free".to_owned(), |p| p.kind.clone());
                let rate_cards: Vec<String> = l
                    .payments
                    .iter()
                    .flat_map(|p| p.standard.iter().chain(p.custom.iter()).cloned())
                    .collect();
                let cost = if free { None } else { l.price() };
                let answer = if free && c.server.is_none() {
                    Answer::Allowed
                } else {
                    Answer::Licence
                };
                let how = match (free, cost, &c.server) {
                    (true, _, None) => "free, nothing to obtain".to_owned(),
                    (true, _, Some(s)) => format!("free, obtained from the licence server {s}"),
                    (false, Some(p), Some(s)) => {
                        format!("{payment} at {p}, from the licence server {s}")
                    }
                    (false, Some(p), None) => format!("{payment} at {p}"),
                    (false, None, _) if !rate_cards.is_empty() => {
                        format!("{payment}, priced by rate card ({})", rate_cards.join(", "))
                    }
                    (false, None, _) => format!("{payment}, price not stated"),
                };
                reasons.push(Reason {
                    source: Source::Licence,
                    line: Some(l.line),
                    says: if answer == Answer::Allowed {
                        Says::Allows
                    } else {
                        Says::Licenses
                    },
                    text: format!("{url}: the licence for {} permits {usage}: {how}", c.url),
                });
                if !no.is_empty() {
                    conflicts.push(format!(
                        "{} refuse it, the licence permits it: the licence wins, an explicit arrangement applies despite statements of preference (draft-ietf-aipref-vocab-08 section 5.2)",
                        no.join(" and ")
                    ));
                }
                let terms = LicenceTerms {
                    url: url.to_owned(),
                    content: c.url.clone(),
                    content_line: c.line,
                    license_line: l.line,
                    payment,
                    server: c.server.clone(),
                    rate_cards,
                };
                return done(answer, reasons, conflicts, cost, Some(terms));
            }
        }
    }

    // 3. Preferences decide.
    if !yes.is_empty() && !no.is_empty() {
        conflicts.push(format!(
            "{} allow it, {} refuse it: the restrictive one wins (draft-ietf-aipref-vocab-08 section 5.1)",
            yes.join(" and "),
            no.join(" and ")
        ));
    }
    let answer = match pref {
        Says::Refuses => Answer::Refused,
        Says::Allows => Answer::Allowed,
        _ => Answer::Unknown,
    };
    done(answer, reasons, conflicts, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(path: &str, purpose: Purpose) -> Ask<'_> {
        Ask {
            agent: "ExampleBot",
            origin: "https://example.com",
            path,
            purpose,
            user: None,
            geo: None,
        }
    }

    fn decide_with(
        robots: &str,
        header: Option<&str>,
        licence: Option<&str>,
        a: &Ask<'_>,
    ) -> Verdict {
        let r = Robots::parse(robots.as_bytes());
        let m = Matcher::new(robots.as_bytes());
        let h = header.map(|h| {
            botscope_robotstxt::parse_preference(h)
                .expect("as written")
                .usage
        });
        let d = licence.map(|l| Document::parse(l.as_bytes()));
        decide(
            a,
            &Sources {
                robots: Some((&r, &m)),
                header: h.as_ref(),
                licence: d.as_ref().map(|d| ("https://example.com/license.xml", d)),
            },
        )
    }

    /// The attach draft's example table (section 3.4), through the verdict.
    #[test]
    fn the_attach_drafts_example() {
        let robots = "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\nUser-Agent: ExampleBot\nAllow: /\nContent-Usage: / train-ai=y\n";
        let other = |p| Ask {
            agent: "OtherBot",
            ..ask(p, Purpose::TrainAi)
        };
        assert_eq!(
            decide_with(robots, None, None, &other("/test")).answer,
            Answer::Refused
        );
        assert_eq!(
            decide_with(robots, None, None, &other("/never/test")).answer,
            Answer::NotCrawlable
        );
        assert_eq!(
            decide_with(robots, None, None, &other("/ai-ok/test")).answer,
            Answer::Allowed
        );
        let v = decide_with(robots, None, None, &ask("/test", Purpose::TrainAi));
        assert_eq!(v.answer, Answer::Allowed);
        assert_eq!(v.reasons[1].line, Some(9));
        // Search: nothing stated.
        assert_eq!(
            decide_with(
                robots,
                None,
                None,
                &other("/test").clone_with(Purpose::Search)
            )
            .answer,
            Answer::Unknown
        );
    }

    impl<'a> Ask<'a> {
        fn clone_with(&self, purpose: Purpose) -> Ask<'a> {
            Ask { purpose, ..*self }
        }
    }

    #[test]
    fn disagreeing_preferences_the_restrictive_wins() {
        let robots = "User-agent: *\nContent-Signal: ai-train=no, search=yes\nContent-Usage: / train-ai=y\nAllow: /\n";
        let v = decide_with(robots, None, None, &ask("/x", Purpose::TrainAi));
        assert_eq!(v.answer, Answer::Refused);
        assert_eq!(v.conflicts.len(), 1);
        assert!(v.conflicts[0].contains("section 5.1"), "{:?}", v.conflicts);
        assert!(v.conflicts[0].contains("line 3"), "{:?}", v.conflicts);
        // The page's header speaks too.
        let v = decide_with(
            "User-agent: *\nAllow: /\n",
            Some("train-ai=n"),
            None,
            &ask("/x", Purpose::TrainAi),
        );
        assert_eq!(v.answer, Answer::Refused);
        assert_eq!(v.reasons[1].source, Source::ContentUsageHeader);
        // AI Use read from Content-Signal's ai-input.
        let v = decide_with(
            "User-agent: *\nContent-Signal: ai-input=yes\n",
            None,
            None,
            &ask("/x", Purpose::AiIndex),
        );
        assert_eq!(v.answer, Answer::Allowed);
    }

    const LICENCE: &str = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/" server="https://olp.example.com">
    <license>
      <permits type="usage">ai-train</permits>
      <payment type="training"><amount currency="USD">10.00</amount></payment>
    </license>
    <license>
      <permits type="usage">search</permits>
      <payment type="free"/>
    </license>
  </content>
  <content url="/free/">
    <license><permits type="usage">all</permits></license>
  </content>
  <content url="/closed/">
    <license><prohibits type="usage">ai-all</prohibits></license>
  </content>
</rsl>"#;

    /// RSL's guide to AI Preferences: train-ai=n in robots.txt, training
    /// licensed by the licence: the licence wins, with its price.
    #[test]
    fn a_licence_over_a_preference() {
        let robots = "License: https://example.com/license.xml\nUser-Agent: *\nAllow: /\nContent-Usage: / train-ai=n\n";
        let v = decide_with(robots, None, Some(LICENCE), &ask("/a", Purpose::TrainAi));
        assert_eq!(v.answer, Answer::Licence);
        assert_eq!(v.cost.expect("as written").to_string(), "USD 10.00");
        let t = v.licence.as_ref().expect("as written");
        assert_eq!(
            (t.content_line, t.license_line, t.payment.as_str()),
            (2, 3, "training")
        );
        assert_eq!(t.server.as_deref(), Some("https://olp.example.com"));
        assert_eq!(v.conflicts.len(), 1);
        assert!(v.conflicts[0].contains("section 5.2"), "{:?}", v.conflicts);
        // Search: free, but the server must still grant it.
        let v = decide_with(robots, None, Some(LICENCE), &ask("/a", Purpose::Search));
        assert_eq!((v.answer, v.cost), (Answer::Licence, None));
        // Free, no server.
        let v = decide_with(
            robots,
            None,
            Some(LICENCE),
            &ask("/free/x", Purpose::TrainAi),
        );
        assert_eq!(v.answer, Answer::Allowed);
        // Prohibited: a preference allowing it loses.
        let v = decide_with(
            "User-agent: *\nContent-Usage: / train-ai=y\n",
            None,
            Some(LICENCE),
            &ask("/closed/x", Purpose::TrainAi),
        );
        assert_eq!(v.answer, Answer::Refused);
        assert!(v.conflicts[0].contains("prohibits"), "{:?}", v.conflicts);
        // Not listed: refused.
        let v = decide_with(
            "User-agent: *\n",
            None,
            Some(LICENCE),
            &ask("/a", Purpose::AiUse),
        );
        assert_eq!(v.answer, Answer::Refused);
        // robots.txt first.
        let v = decide_with(
            "User-agent: *\nDisallow: /free/\n",
            None,
            Some(LICENCE),
            &ask("/free/x", Purpose::TrainAi),
        );
        assert_eq!(v.answer, Answer::NotCrawlable);
        assert_eq!(v.reasons.len(), 1);
        assert_eq!(v.reasons[0].line, Some(2));
    }

    #[test]
    fn nothing_stated_is_unknown() {
        let v = decide(&ask("/", Purpose::TrainAi), &Sources::default());
        assert_eq!(v.answer, Answer::Unknown);
        assert_eq!(v.reasons.len(), 1);
    }
}
