//! The honeypot's sites, as values: which behaviour each site tests, the
//! robots.txt it serves (to whom), its pages and their links. No I/O: the
//! server answers from here, and the report judges from the same values.

use botscope_robotstxt::{is_product_token, product_token};
use serde::{Deserialize, Serialize};

/// The most sites one honeypot serves.
pub const MAX_SITES: usize = 10_000;

/// What one site tests. BotSeer's design: "a set of sites where each site
/// is configured with a distinct regulation specification".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Behaviour {
    /// `Disallow: /trap/`, and every page links into `/trap/`.
    Trap,
    /// A group for the requester's own product token that allows what `*`
    /// forbids (`/star-only/`) and forbids what `*` allows (`/own-only/`).
    OwnGroup,
    /// `Crawl-delay`.
    CrawlDelay,
    /// `Disallow: /shop/` with `Allow: /shop/public/` inside it.
    AllowInDisallow,
    /// `Disallow: /*.pdf$` and `Disallow: /*?session=`.
    Wildcard,
    /// robots.txt answers 500: nothing may be fetched (RFC 9309 2.3.1.4).
    ServerError,
    /// robots.txt answers 404: everything may be fetched.
    NotFound,
    /// robots.txt redirects (301) to `/policy/robots.txt`, which disallows
    /// `/moved-trap/`.
    Redirect,
}

/// Every behaviour, in the order sites take them (site i tests
/// `ALL[i % 8]`).
pub const ALL: [Behaviour; 8] = [
    Behaviour::Trap,
    Behaviour::OwnGroup,
    Behaviour::CrawlDelay,
    Behaviour::AllowInDisallow,
    Behaviour::Wildcard,
    Behaviour::ServerError,
    Behaviour::NotFound,
    Behaviour::Redirect,
];

impl Behaviour {
    /// The stable name (`trap`, `own-group`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Behaviour::Trap => "trap",
            Behaviour::OwnGroup => "own-group",
            Behaviour::CrawlDelay => "crawl-delay",
            Behaviour::AllowInDisallow => "allow-in-disallow",
            Behaviour::Wildcard => "wildcard",
            Behaviour::ServerError => "server-error",
            Behaviour::NotFound => "not-found",
            Behaviour::Redirect => "redirect",
        }
    }

    /// The paths (with queries) every page of such a site links to,
    /// besides the site's ordinary pages.
    pub fn targets(self) -> &'static [&'static str] {
        match self {
            Behaviour::Trap => &["/trap/1", "/trap/2"],
            Behaviour::OwnGroup => &["/star-only/1", "/own-only/1"],
            Behaviour::CrawlDelay => &[],
            Behaviour::AllowInDisallow => &["/shop/public/1", "/shop/private/1"],
            Behaviour::Wildcard => &[
                "/doc/report.pdf",
                "/doc/report.pdf?view=1",
                "/page/1?session=abc",
            ],
            Behaviour::ServerError | Behaviour::NotFound => &[],
            Behaviour::Redirect => &["/moved-trap/1"],
        }
    }
}

/// The ordinary pages of every site.
pub const PAGES: [&str; 4] = ["/", "/page/1", "/page/2", "/page/3"];

/// The group name for requesters without a product token: no crawler has
/// it, so for them the own-group site has no group of their own.
pub const NOBODY: &str = "honeypot-nobody";

/// Where the redirecting site's robots.txt leads.
pub const POLICY_PATH: &str = "/policy/robots.txt";

/// One site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// Its host name.
    pub host: String,
    /// What it tests.
    pub behaviour: Behaviour,
}

/// The whole honeypot: written beside the log when it starts, read by the
/// report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Design {
    /// The domain the site names end in.
    pub domain: String,
    /// The crawl-delay site's `Crawl-delay`, in seconds.
    pub crawl_delay: u32,
    /// The sites: `s0.DOMAIN`, `s1.DOMAIN`, …
    pub sites: Vec<Site>,
}

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// `Location`, for a redirect.
    pub location: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// The product token a requester's own group names: the User-Agent's, or
/// [`NOBODY`] when it has none.
pub fn own_token(user_agent: Option<&str>) -> &str {
    match user_agent.map(product_token) {
        Some(t) if is_product_token(t) && t.len() <= 64 => t,
        _ => NOBODY,
    }
}

fn is_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// A honeypot design botscope cannot make.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesignError {
    /// Too few or too many sites.
    #[error("--sites {0}: between 1 and {MAX_SITES} (8 test every behaviour)")]
    Sites(usize),
    /// Not a domain name (shown escaped).
    #[error("{0}: not a domain name")]
    Domain(String),
    /// A crawl delay out of range.
    #[error("--crawl-delay {0}: between 1 and 3600 seconds")]
    CrawlDelay(u32),
}

impl Design {
    /// `sites` sites under `domain`, the crawl-delay site asking for
    /// `crawl_delay` seconds.
    pub fn new(sites: usize, domain: &str, crawl_delay: u32) -> Result<Design, DesignError> {
        if sites == 0 || sites > MAX_SITES {
            return Err(DesignError::Sites(sites));
        }
        let domain = domain.trim_end_matches('.').to_ascii_lowercase();
        if !is_host_name(&domain) {
            return Err(DesignError::Domain(
                botscope_text::field(&format!("{domain:?}")).into_owned(),
            ));
        }
        if crawl_delay == 0 || crawl_delay > 3600 {
            return Err(DesignError::CrawlDelay(crawl_delay));
        }
        Ok(Design {
            sites: (0..sites)
                .map(|i| Site {
                    host: format!("s{i}.{domain}"),
                    behaviour: ALL[i % ALL.len()],
                })
                .collect(),
            domain,
            crawl_delay,
        })
    }

    /// The site named `host` (any case, a trailing dot or port ignored).
    pub fn site(&self, host: &str) -> Option<(usize, &Site)> {
        let name = host_name(host);
        let i: usize = name
            .strip_suffix(&self.domain)?
            .strip_suffix('.')?
            .strip_prefix('s')?
            .parse()
            .ok()?;
        let s = self.sites.get(i)?;
        (s.host == name).then_some((i, s))
    }

    /// The rules a site's pages are governed by for a requester, as the
    /// report judges them: the robots.txt text (after the redirect), or
    /// `None` when nothing may be fetched (the server-error site).
    pub fn rules(&self, site: &Site, user_agent: Option<&str>) -> Option<String> {
        Some(match site.behaviour {
            Behaviour::Trap => {
                "# A directory no robot may enter; every page links into it.\nUser-agent: *\nDisallow: /trap/\n".to_owned()
            }
            Behaviour::OwnGroup => format!(
                "# Everyone but the group below: keep out of /star-only/.\nUser-agent: *\nDisallow: /star-only/\n\n# Your own group: /star-only/ is yours, /own-only/ is not.\nUser-agent: {}\nDisallow: /own-only/\n",
                own_token(user_agent)
            ),
            Behaviour::CrawlDelay => format!(
                "# One request every {} seconds, please.\nUser-agent: *\nCrawl-delay: {}\nDisallow:\n",
                self.crawl_delay, self.crawl_delay
            ),
            Behaviour::AllowInDisallow => {
                "# The shop is closed to robots, but for its public part.\nUser-agent: *\nDisallow: /shop/\nAllow: /shop/public/\n".to_owned()
            }
            Behaviour::Wildcard => {
                "# No PDF files, no session URLs.\nUser-agent: *\nDisallow: /*.pdf$\nDisallow: /*?session=\n".to_owned()
            }
            Behaviour::ServerError => return None,
            Behaviour::NotFound => String::new(),
            Behaviour::Redirect => {
                "# Reached through a redirect from /robots.txt.\nUser-agent: *\nDisallow: /moved-trap/\n".to_owned()
            }
        })
    }

    /// The answer for `GET path` on `host` (the `Host` header as sent:
    /// links to other sites keep its port).
    pub fn answer(&self, host: &str, path: &str, user_agent: Option<&str>) -> Answer {
        let Some((i, site)) = self.site(host) else {
            return not_found();
        };
        let b = site.behaviour;
        match (path, b) {
            ("/robots.txt", Behaviour::ServerError) => Answer {
                status: 500,
                content_type: "text/html; charset=utf-8",
                location: None,
                body: b"<!doctype html><html lang=\"en\"><title>500 Internal Server Error</title><h1>Internal Server Error</h1></html>\n".to_vec(),
            },
            ("/robots.txt", Behaviour::NotFound) => not_found(),
            ("/robots.txt", Behaviour::Redirect) => Answer {
                status: 301,
                content_type: "text/html; charset=utf-8",
                location: Some(POLICY_PATH.to_owned()),
                body: Vec::new(),
            },
            ("/robots.txt", _) | (POLICY_PATH, Behaviour::Redirect) => Answer {
                status: 200,
                content_type: "text/plain; charset=utf-8",
                location: None,
                body: self
                    .rules(site, user_agent)
                    .unwrap_or_default()
                    .into_bytes(),
            },
            _ if PAGES.contains(&path) || b.targets().contains(&path) => Answer {
                status: 200,
                content_type: "text/html; charset=utf-8",
                location: None,
                body: self.page(i, site, host, path).into_bytes(),
            },
            _ => not_found(),
        }
    }

    /// An HTML page: links to the site's pages and targets, and to the
    /// next two sites (so that one seed reaches every site).
    fn page(&self, i: usize, site: &Site, host: &str, path: &str) -> String {
        let port = host
            .rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map(|(_, p)| format!(":{p}"))
            .unwrap_or_default();
        let mut links = String::new();
        for p in PAGES.iter().chain(site.behaviour.targets()) {
            links.push_str(&format!("<li><a href=\"{p}\">{p}</a></li>\n"));
        }
        let n = self.sites.len();
        for k in 1..=2.min(n.saturating_sub(1)) {
            let other = &self.sites[(i + k) % n].host;
            links.push_str(&format!(
                "<li><a href=\"//{other}{port}/\">{other}</a></li>\n"
            ));
        }
        format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{host} {path}</title></head>\n<body><main><h1>{name}</h1>\n<p>A page of a research honeypot that watches how web robots read robots.txt.</p>\n<ul>\n{links}</ul>\n</main></body></html>\n",
            host = site.host,
            name = site.host,
            path = if path.len() > 64 { "" } else { path },
        )
    }
}

fn not_found() -> Answer {
    Answer {
        status: 404,
        content_type: "text/html; charset=utf-8",
        location: None,
        body: b"<!doctype html><html lang=\"en\"><title>404 Not Found</title><h1>Not Found</h1></html>\n".to_vec(),
    }
}

/// `host` without port and trailing dot, lower case.
pub fn host_name(host: &str) -> String {
    let h = match host.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    };
    h.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use botscope_robotstxt::Matcher;

    #[test]
    fn every_behaviour_says_what_it_tests() {
        let d = Design::new(8, "hp.test", 3).expect("design");
        let agent = "Mozilla/5.0 (compatible; PoliteBot/1.0; +https://example.org/bot)";
        let ua = Some(agent);
        let verdict = |b: Behaviour, path: &str| {
            let site = d.sites.iter().find(|s| s.behaviour == b).expect("site");
            let rules = d.rules(site, ua).expect("rules");
            Matcher::new(rules.as_bytes()).is_allowed(agent, path)
        };
        assert!(!verdict(Behaviour::Trap, "/trap/1"));
        assert!(verdict(Behaviour::Trap, "/page/1"));
        assert!(verdict(Behaviour::OwnGroup, "/star-only/1"));
        assert!(!verdict(Behaviour::OwnGroup, "/own-only/1"));
        assert!(
            !Matcher::new(
                d.rules(&d.sites[1], Some("Other/1.0"))
                    .expect("rules")
                    .as_bytes()
            )
            .is_allowed("Another", "/star-only/1")
        );
        assert!(verdict(Behaviour::AllowInDisallow, "/shop/public/1"));
        assert!(!verdict(Behaviour::AllowInDisallow, "/shop/private/1"));
        assert!(!verdict(Behaviour::Wildcard, "/doc/report.pdf"));
        assert!(verdict(Behaviour::Wildcard, "/doc/report.pdf?view=1"));
        assert!(!verdict(Behaviour::Wildcard, "/page/1?session=abc"));
        assert!(!verdict(Behaviour::Redirect, "/moved-trap/1"));
        assert!(verdict(Behaviour::NotFound, "/page/1"));
        assert_eq!(
            Matcher::new(d.rules(&d.sites[2], ua).expect("rules").as_bytes())
                .crawl_delay("PoliteBot"),
            Some(3.0)
        );
    }

    #[test]
    fn answers() {
        let d = Design::new(9, "HP.test.", 2).expect("design");
        assert_eq!(d.sites[8].host, "s8.hp.test");
        assert_eq!(d.sites[8].behaviour, Behaviour::Trap);
        assert_eq!(d.site("S3.hp.test:8080").map(|s| s.0), Some(3));
        assert!(d.site("s9.hp.test").is_none());
        assert!(d.site("s03.hp.test").is_none());
        assert!(d.site("x.s1.hp.test").is_none());
        assert_eq!(d.answer("s5.hp.test", "/robots.txt", None).status, 500);
        assert_eq!(d.answer("s6.hp.test", "/robots.txt", None).status, 404);
        let r = d.answer("s7.hp.test", "/robots.txt", None);
        assert_eq!((r.status, r.location.as_deref()), (301, Some(POLICY_PATH)));
        assert_eq!(d.answer("s7.hp.test", POLICY_PATH, None).status, 200);
        assert_eq!(d.answer("s0.hp.test", POLICY_PATH, None).status, 404);
        assert_eq!(d.answer("s0.hp.test", "/wp-login.php", None).status, 404);
        assert_eq!(d.answer("elsewhere.test", "/", None).status, 404);
        let own = d.answer("s1.hp.test", "/robots.txt", Some("Foo Bar\nUser-agent: *"));
        assert!(String::from_utf8_lossy(&own.body).contains("User-agent: honeypot-nobody"));
        let home = String::from_utf8(d.answer("s4.hp.test:8080", "/", None).body).expect("utf-8");
        for link in [
            "href=\"/doc/report.pdf\"",
            "href=\"/page/1?session=abc\"",
            "href=\"//s5.hp.test:8080/\"",
            "href=\"//s6.hp.test:8080/\"",
        ] {
            assert!(home.contains(link), "{link}: {home}");
        }
        assert!(Design::new(0, "hp.test", 1).is_err());
        assert!(Design::new(8, "bad domain", 1).is_err());
        assert!(Design::new(8, "hp.test", 0).is_err());
    }
}
