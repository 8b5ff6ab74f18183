//! What the polite crawler may do with a page, and on what terms: the
//! site's robots.txt (as the crawler keeps it), the RSL licences its
//! `License` lines name (fetched at the crawler's pace, within
//! [`MAX_BYTES`](botscope_terms::rsl::MAX_BYTES) each, kept a day, a
//! failure five minutes), and the page's own `Content-Usage` header,
//! given to [`botscope_terms::decide`].

use std::sync::Arc;

use botscope_terms::rsl::{Document, MAX_BYTES};
use botscope_terms::verdict::{Answer, Ask, Purpose, Reason, Says, Source, Sources, Verdict};
use serde::Serialize;

use super::{Crawler, Duration, Exchange, Instant, Lookup, Matcher, Pay, Robots, Rules, lock};

/// Licence documents kept at most (the oldest go first).
const KEPT: usize = 256;
/// How long a licence read is kept.
const KEEP_READ: Duration = Duration::from_secs(86_400);
/// How long a licence that could not be read is remembered.
const KEEP_FAILED: Duration = Duration::from_secs(300);
/// Bytes of a page read for its headers (the body is not kept).
const PAGE_PEEK: usize = 64 * 1024;
/// What is asked for a licence.
const LICENCE_ACCEPT: &str =
    "application/rsl+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1";

/// The longest a licence token is kept.
const TOKEN_KEEP: Duration = Duration::from_secs(3600);
/// Tokens kept at most.
const MAX_TOKENS: usize = 1024;

/// What a licence token is kept for: a licence server, a licence
/// document and its `<content>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct TokenKey {
    server: String,
    licence: String,
    content: u32,
}

/// Licence tokens acquired, until when.
#[derive(Default)]
pub(super) struct Tokens(std::sync::Mutex<std::collections::HashMap<TokenKey, (String, Instant)>>);

impl Tokens {
    fn get(&self, k: &TokenKey) -> Option<String> {
        let m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        m.get(k)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(t, _)| t.clone())
    }

    fn put(&self, k: TokenKey, token: String, keep: Duration) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= MAX_TOKENS {
            let now = Instant::now();
            m.retain(|_, (_, until)| *until > now);
            if m.len() >= MAX_TOKENS {
                m.clear();
            }
        }
        m.insert(k, (token, Instant::now() + keep));
    }

    fn drop_key(&self, k: &TokenKey) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(k);
    }
}

/// The licences read, by URL: one fetch at a time (a licence is fetched
/// once however many pages ask).
#[derive(Default)]
pub(super) struct Licences(
    tokio::sync::Mutex<std::collections::HashMap<String, (Instant, Arc<LicenceRead>)>>,
);

/// A licence a robots.txt names, as read.
#[derive(Debug, Clone, Serialize)]
pub struct LicenceRead {
    /// Its URL (resolved against the robots.txt URL when written relative).
    pub url: String,
    /// The robots.txt line that names it.
    pub line: u32,
    /// The document, when one was read (with its diagnostics).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<Document>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What was asked.
#[derive(Debug, Clone, Copy)]
pub struct TermsAsk<'a> {
    /// The crawler the terms are read for (none: this crawler's token).
    pub agent: Option<&'a str>,
    /// The use.
    pub purpose: Purpose,
    /// The kind of user (RSL's vocabulary).
    pub user: Option<&'a str>,
    /// The user's country (ISO 3166-1 alpha-2).
    pub geo: Option<&'a str>,
    /// Also read the page's own `Content-Usage` header (one request for
    /// the page, when robots.txt allows it).
    pub page: bool,
}

/// The terms of one page.
#[derive(Debug, Clone, Serialize)]
pub struct TermsReport {
    /// The page.
    pub url: String,
    /// The crawler they were read for.
    pub agent: String,
    /// The verdict, with every reason.
    pub verdict: Verdict,
    /// Where robots.txt was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots_url: Option<String>,
    /// Why robots.txt sets no restriction or every one, when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots_note: Option<String>,
    /// The licences robots.txt names, as read.
    pub licences: Vec<LicenceRead>,
    /// The page's status, when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_status: Option<u16>,
    /// Time spent waiting for turns.
    #[serde(skip)]
    pub waited: Duration,
}

fn refused(purpose: Purpose, why: String) -> Verdict {
    Verdict {
        answer: Answer::NotCrawlable,
        purpose,
        cost: None,
        licence: None,
        reasons: vec![Reason {
            source: Source::Robots,
            line: None,
            says: Says::Refuses,
            text: why,
        }],
        conflicts: Vec::new(),
    }
}

impl<L: Lookup> Crawler<L> {
    /// The terms of `url` for `ask`: robots.txt first (nothing else is
    /// asked of a URL it closes), then the licences it names and, when
    /// asked, the page's header.
    pub async fn terms(&self, url: &str, ask: TermsAsk<'_>) -> TermsReport {
        let agent = ask.agent.unwrap_or(&self.token).to_owned();
        let mut report = TermsReport {
            url: url.to_owned(),
            agent: agent.clone(),
            verdict: refused(ask.purpose, String::new()),
            robots_url: None,
            robots_note: None,
            licences: Vec::new(),
            page_status: None,
            waited: Duration::ZERO,
        };
        let u = match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
            _ => {
                report.verdict = refused(ask.purpose, format!("{url:?} is not an http(s) URL"));
                return report;
            }
        };
        let copy = match self.robots(&u, &mut report.waited).await {
            Ok(c) => c,
            Err(why) => {
                report.verdict = refused(ask.purpose, format!("robots.txt: {why}"));
                return report;
            }
        };
        report.robots_url = Some(copy.url.clone());
        let origin = u.origin().ascii_serialization();
        let path = String::from_utf8_lossy(&botscope_robotstxt::path_of(u.as_str().as_bytes()))
            .into_owned();
        let question = Ask {
            agent: &agent,
            origin: &origin,
            path: &path,
            purpose: ask.purpose,
            user: ask.user,
            geo: ask.geo,
        };
        let parsed;
        let (robots, matcher): (Option<&Robots>, Option<&Matcher>) = match &copy.rules {
            Rules::DisallowAll(why) => {
                report.robots_note = Some(why.clone());
                report.verdict = refused(ask.purpose, why.clone());
                return report;
            }
            Rules::AllowAll(why) => {
                report.robots_note = Some(why.clone());
                (None, None)
            }
            Rules::Parsed {
                matcher,
                body,
                preferences,
                ..
            } => match preferences {
                Some(r) => (Some(r.as_ref()), Some(matcher)),
                None => {
                    parsed = Robots::parse(body);
                    (Some(&parsed), Some(matcher))
                }
            },
        };
        let pair = robots.zip(matcher);
        let access = Sources {
            robots: pair,
            header: None,
            licence: None,
        };
        let first = botscope_terms::decide(&question, &access);
        if first.answer == Answer::NotCrawlable {
            report.verdict = first;
            return report;
        }
        // The licences robots.txt names, each read once.
        let robots_url = url::Url::parse(&copy.url).ok();
        for l in robots.map(|r| r.licenses.as_slice()).unwrap_or_default() {
            let target = robots_url
                .as_ref()
                .and_then(|b| b.join(l.url.trim()).ok())
                .filter(|t| matches!(t.scheme(), "http" | "https") && t.host_str().is_some());
            let read = match target {
                Some(t) => self.licence(&t, l.line, &mut report.waited).await,
                None => Arc::new(LicenceRead {
                    url: l.url.clone(),
                    line: l.line,
                    document: None,
                    error: Some("not an http(s) URL".into()),
                }),
            };
            report.licences.push((*read).clone());
        }
        // The page's own statement.
        let mut header = None;
        if ask.page {
            let name = u.host_str().unwrap_or_default().to_owned();
            let asked = Instant::now();
            if let Ok(turn) = self.turn(&name, asked).await {
                report.waited += asked.elapsed();
                let deadline = std::time::Instant::now() + self.h.cfg.total_timeout;
                let r = self
                    .exchange(&u, PAGE_PEEK, super::PAGE_ACCEPT, deadline)
                    .await;
                if let Ok(x) = &r {
                    self.retry_after(&turn.host, x);
                }
                drop(turn);
                if let Ok(x) = r {
                    report.page_status = Some(x.status);
                    let lines: Vec<&str> = x
                        .headers
                        .iter()
                        .filter(|(k, _)| k.eq_ignore_ascii_case("content-usage"))
                        .map(|(_, v)| v.as_str())
                        .collect();
                    if !lines.is_empty() {
                        header = botscope_robotstxt::parse_usage_header(&lines)
                            .ok()
                            .map(|p| p.usage);
                    }
                }
            }
        }
        // The first licence with a <content> for the URL decides; else the
        // first read, to say it names none.
        let docs: Vec<&LicenceRead> = report
            .licences
            .iter()
            .filter(|l| l.document.is_some())
            .collect();
        let chosen = docs
            .iter()
            .find(|l| {
                l.document
                    .as_ref()
                    .is_some_and(|d| d.content_for(&origin, &path).is_some())
            })
            .or(docs.first())
            .and_then(|l| l.document.as_ref().map(|d| (l.url.as_str(), d)));
        let mut v = botscope_terms::decide(
            &question,
            &Sources {
                robots: pair,
                header: header.as_ref(),
                licence: chosen,
            },
        );
        // A licence named but not read: its terms are unknown, so no use
        // is taken as free.
        let unread: Vec<&LicenceRead> = report
            .licences
            .iter()
            .filter(|l| l.document.is_none())
            .collect();
        if !unread.is_empty() && v.licence.is_none() {
            for l in &unread {
                v.reasons.push(Reason {
                    source: Source::Licence,
                    line: Some(l.line),
                    says: Says::Unknown,
                    text: format!(
                        "the licence {} could not be read ({}): its terms are unknown",
                        l.url,
                        l.error.as_deref().unwrap_or("no document")
                    ),
                });
            }
            if v.answer == Answer::Allowed {
                v.answer = Answer::Unknown;
            }
        }
        report.verdict = v;
        report
    }

    /// The licence at `url`, read once and kept.
    async fn licence(&self, url: &url::Url, line: u32, waited: &mut Duration) -> Arc<LicenceRead> {
        let key = url.to_string();
        let mut kept = self.licences.0.lock().await;
        let now = Instant::now();
        if let Some((until, read)) = kept.get(&key)
            && *until > now
        {
            let mut r = (**read).clone();
            r.line = line;
            return Arc::new(r);
        }
        let read = Arc::new(self.fetch_licence(url, line, waited).await);
        let keep = if read.document.is_some() {
            KEEP_READ
        } else {
            KEEP_FAILED
        };
        if kept.len() >= KEPT {
            kept.retain(|_, (until, _)| *until > now);
            if kept.len() >= KEPT
                && let Some(oldest) = kept
                    .iter()
                    .min_by_key(|(_, (until, _))| *until)
                    .map(|(k, _)| k.clone())
            {
                kept.remove(&oldest);
            }
        }
        kept.insert(key, (Instant::now() + keep, read.clone()));
        read
    }

    async fn fetch_licence(
        &self,
        first: &url::Url,
        line: u32,
        waited: &mut Duration,
    ) -> LicenceRead {
        let mut url = first.clone();
        let failed = |url: &url::Url, why: String| LicenceRead {
            url: url.to_string(),
            line,
            document: None,
            error: Some(why),
        };
        let deadline = std::time::Instant::now() + self.h.cfg.total_timeout;
        for _ in 0..=self.h.cfg.policy.max_redirects {
            let name = url.host_str().unwrap_or_default().to_owned();
            let asked = Instant::now();
            let turn = match self.turn(&name, asked).await {
                Ok(t) => t,
                Err(why) => return failed(&url, why),
            };
            *waited += asked.elapsed();
            let r = self
                .exchange(&url, MAX_BYTES + 1, LICENCE_ACCEPT, deadline)
                .await;
            if let Ok(x) = &r {
                self.retry_after(&turn.host, x);
            }
            drop(turn);
            let x = match r {
                Ok(x) => x,
                Err(e) => return failed(&url, e.to_string()),
            };
            if (300..400).contains(&x.status) {
                let next = x
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .and_then(|(_, v)| url.join(v).ok())
                    .filter(|n| matches!(n.scheme(), "http" | "https") && n.host_str().is_some());
                match next {
                    Some(n) => {
                        url = n;
                        continue;
                    }
                    None => {
                        return failed(
                            &url,
                            format!("answered {} without a usable Location", x.status),
                        );
                    }
                }
            }
            if x.status != 200 {
                return failed(&url, format!("answered {}", x.status));
            }
            if x.truncated || x.body.len() > MAX_BYTES {
                return failed(&url, format!("over {MAX_BYTES} bytes: not read"));
            }
            let doc = Document::parse(&x.body);
            return LicenceRead {
                url: url.to_string(),
                line,
                document: Some(doc),
                error: None,
            };
        }
        failed(
            &url,
            format!("more than {} redirects", self.h.cfg.policy.max_redirects),
        )
    }
}

/// A price offered for one page: its maximum, reserved from the budget
/// until the answer says what was charged.
#[derive(Debug, Clone, Copy)]
pub(super) struct Offer {
    max: botscope_terms::Price,
}

impl Offer {
    /// The request's field: `crawler-max-price`, covered by the signature.
    pub(super) fn fields(&self) -> Vec<(String, String)> {
        vec![(
            botscope_terms::pay::CRAWLER_MAX_PRICE.to_owned(),
            self.max.to_string(),
        )]
    }
}

impl<L: Lookup> Crawler<L> {
    /// The page's terms for the crawler's purpose: why they keep it from
    /// being fetched (refused, priced with no price offered, or licensed
    /// through a licence server we cannot ask), or go, with the licence
    /// token acquired where they license the use through a server (none
    /// when no purpose is set, or the terms allow it or say nothing).
    pub(super) async fn terms_step(
        &self,
        u: &url::Url,
    ) -> Result<Option<(TokenKey, String)>, String> {
        let Some(purpose) = self.purpose else {
            return Ok(None);
        };
        let r = self
            .terms(
                u.as_str(),
                TermsAsk {
                    agent: None,
                    purpose,
                    user: None,
                    geo: None,
                    page: false,
                },
            )
            .await;
        let last = || {
            r.verdict
                .reasons
                .last()
                .map(|x| x.text.clone())
                .unwrap_or_default()
        };
        match r.verdict.answer {
            Answer::Refused => Err(format!(
                "the site's terms refuse {}: {}",
                purpose.as_str(),
                last()
            )),
            Answer::Licence => match r.verdict.licence.as_ref() {
                Some(l) if l.server.is_some() => self.licence_token(u, &r, l).await.map(Some),
                None | Some(_) if self.pay.is_none() => Err(format!(
                    "the site's terms license {} for a price ({}), and no price is offered (--max-price)",
                    purpose.as_str(),
                    r.verdict
                        .cost
                        .map_or_else(|| "not stated".to_owned(), |p| p.to_string())
                )),
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// A licence token for `u` under the licence `l` of the report `r`:
    /// one kept for the same server and `<content>`, else one acquired.
    async fn licence_token(
        &self,
        u: &url::Url,
        r: &TermsReport,
        l: &botscope_terms::verdict::LicenceTerms,
    ) -> Result<(TokenKey, String), String> {
        let server = l.server.clone().unwrap_or_default();
        let Some(cfg) = &self.licence else {
            return Err(format!(
                "the site's terms license {} only through the licence server {server} (--license-credentials to acquire a licence token there)",
                r.verdict.purpose.as_str()
            ));
        };
        let key = TokenKey {
            server: server.clone(),
            licence: l.url.clone(),
            content: l.content_line,
        };
        if let Some(t) = self.tokens.get(&key) {
            return Ok((key, t));
        }
        // The <license> element the crawler agrees to, as written.
        let xml = r
            .licences
            .iter()
            .filter(|x| x.url == l.url)
            .filter_map(|x| x.document.as_ref())
            .flat_map(|d| d.contents.iter())
            .filter(|c| c.line == l.content_line)
            .flat_map(|c| c.licenses.iter())
            .find(|x| x.line == l.license_line)
            .map(|x| x.xml.clone())
            .unwrap_or_default();
        let issued = botscope_http::olp::acquire(&server, &xml, u.as_str(), cfg)
            .await
            .map_err(|e| format!("no licence token from {server}: {e}"))?;
        let keep = issued
            .expires_in
            .map_or(TOKEN_KEEP, |s| Duration::from_secs(s).min(TOKEN_KEEP));
        self.tokens.put(key.clone(), issued.token.clone(), keep);
        Ok((key, issued.token))
    }

    /// What the site said of a licence token (or asked for one): a note
    /// for the fetch; a token it calls invalid is dropped (acquired anew
    /// next time), the request not retried.
    pub(super) fn licence_answer(
        &self,
        sent: Option<&(TokenKey, String)>,
        x: &Exchange,
    ) -> Option<String> {
        let challenge = x
            .headers
            .iter()
            .find(|(k, v)| {
                k.eq_ignore_ascii_case("www-authenticate")
                    && v.trim_start()
                        .get(..7)
                        .is_some_and(|s| s.eq_ignore_ascii_case("license"))
            })
            .map(|(_, v)| botscope_text::field(v).into_owned())?;
        if !matches!(x.status, 401..=403) {
            return None;
        }
        if let Some((key, _)) = sent
            && x.status == 401
        {
            self.tokens.drop_key(key);
        }
        Some(format!(
            "{}: the site asks for an RSL licence token ({challenge}){}; not retried",
            x.status,
            if sent.is_some() {
                ", the one sent was not accepted"
            } else {
                ""
            }
        ))
    }

    /// Reserves the maximum price from the budget (none without paying);
    /// an error when the budget cannot take it.
    pub(super) fn offer(&self) -> Result<Option<Offer>, String> {
        let Some(Pay { max_price, budget }) = self.pay else {
            return Ok(None);
        };
        let mut spent = lock(&self.spent);
        if let Some(b) = budget
            && spent.saturating_add(max_price.millionths) > b.millionths
        {
            return Err(format!(
                "the budget of {b} cannot take another {max_price} (spent or reserved: {})",
                botscope_terms::Price {
                    currency: b.currency,
                    millionths: *spent
                }
            ));
        }
        *spent = spent.saturating_add(max_price.millionths);
        Ok(Some(Offer { max: max_price }))
    }

    /// Settles an offer with the answer (none: no answer came): what was
    /// charged stays spent, the rest of the reserve comes back; a 402 is
    /// reported, never retried.
    pub(super) fn settle(
        &self,
        offer: Option<&Offer>,
        x: Option<&Exchange>,
    ) -> (Option<botscope_terms::Price>, Option<String>) {
        let Some(o) = offer else {
            return (None, None);
        };
        let field = |name: &str| {
            x.and_then(|x| {
                x.headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone())
            })
        };
        let charged = field(botscope_terms::pay::CRAWLER_CHARGED)
            .and_then(|v| botscope_terms::Price::parse_header(&v).ok())
            .filter(|p| p.currency == o.max.currency && p.millionths <= o.max.millionths);
        let kept = charged.map_or(0, |p| p.millionths);
        {
            let mut spent = lock(&self.spent);
            *spent = spent.saturating_sub(o.max.millionths - kept);
        }
        let note = match x {
            Some(x) if x.status == 402 => Some(format!(
                "402: {}{}; not retried",
                field(botscope_terms::pay::CRAWLER_PRICE).map_or_else(
                    || "no crawler-price".to_owned(),
                    |p| format!("crawler-price {p}")
                ),
                field(botscope_terms::pay::CRAWLER_ERROR)
                    .map(|e| format!(", crawler-error {e}"))
                    .unwrap_or_default()
            )),
            Some(_) => {
                field(botscope_terms::pay::CRAWLER_ERROR).map(|e| format!("crawler-error {e}"))
            }
            None => None,
        };
        (charged, note)
    }

    /// Spent so far (millionths, in the maximum price's currency).
    pub fn spent(&self) -> Option<botscope_terms::Price> {
        self.pay.map(|p| botscope_terms::Price {
            currency: p.max_price.currency,
            millionths: *lock(&self.spent),
        })
    }
}
