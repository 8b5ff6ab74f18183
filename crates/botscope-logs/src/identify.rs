//! The registry's view of User-Agents: which robot a client claims to be,
//! and a display name for robots the registry does not know.

use botscope_accesslog::{Agent, Identify};
use botscope_botid::{Category, Registry, UaClassifier};
use botscope_robotstxt::product_token;

/// Words that mark an uptime or performance monitor's User-Agent.
const MONITOR_WORDS: &[&str] = &[
    "uptime",
    "monitor",
    "pingdom",
    "statuscake",
    "site24x7",
    "nagios",
    "check_http",
    "zabbix",
    "hetrixtools",
    "freshping",
    "updown.io",
    "newrelicpinger",
    "datadog",
    "synthetic",
];

/// [`Identify`] over a registry and its User-Agent classifier.
#[derive(Debug, Clone, Copy)]
pub struct RegistryIdentify<'r> {
    registry: &'r Registry,
    ua: &'r UaClassifier,
}

impl<'r> RegistryIdentify<'r> {
    /// Identifies robots by `registry`, through `ua` (built over it).
    pub fn new(registry: &'r Registry, ua: &'r UaClassifier) -> Self {
        RegistryIdentify { registry, ua }
    }
}

fn is_monitor_ua(ua: &str) -> bool {
    let lower = ua.to_ascii_lowercase();
    MONITOR_WORDS.iter().any(|w| lower.contains(w))
}

impl Identify for RegistryIdentify<'_> {
    fn identify(&self, user_agent: Option<&str>) -> Agent {
        let Some(ua) = user_agent else {
            return Agent::default();
        };
        let info = self.ua.classify(ua);
        if let Some(bot) = info
            .claimed_bot
            .as_deref()
            .and_then(|n| self.registry.get(n))
        {
            return Agent {
                robot: Some(bot.name.clone()),
                registered: true,
                category: bot.category.map(|c| c.as_str().to_owned()),
                monitor: bot.category == Some(Category::Monitoring),
                reason: Some(format!("the User-Agent names {}", bot.name)),
                token: bot.tokens().first().map(|t| (*t).to_owned()),
            };
        }
        if !info.is_bot {
            return Agent::default();
        }
        let name = robot_name(ua)
            .or_else(|| info.family.clone().filter(|f| f != "Other"))
            .unwrap_or_else(|| ua.chars().take(64).collect());
        Agent {
            token: Some(product_token(ua).to_owned()),
            robot: Some(name),
            registered: false,
            category: None,
            monitor: is_monitor_ua(ua),
            reason: Some(
                info.reason
                    .map(|r| format!("the User-Agent is a robot's ({r})"))
                    .unwrap_or_else(|| "the User-Agent is a robot's".into()),
            ),
        }
    }
}

/// A display name for an unregistered robot: the leading product of a
/// User-Agent that does not pose as a browser (`Chef Client/10.18` →
/// `Chef Client`), else its robot product token with the digits RFC 9309
/// tokens leave out (`MJ12bot/v1.4` → `MJ12bot`), else the first word that
/// says robot (`… Firefox/1.5.0.11; 360Spider` → `360Spider`), else the host
/// of the URL it gives (`http://www.tropicdesigns.net` → `tropicdesigns.net`),
/// else the User-Agent itself. Never a browser's name (`Mozilla`, `IE`) or a piece of
/// a host name (`com` of `docs.google.com/viewer`).
pub fn robot_name(ua: &str) -> Option<String> {
    let ua = ua.trim();
    if ua.is_empty() {
        return None;
    }
    if !ua.starts_with("Mozilla/") {
        let end = ua.find(['/', '(', ';']).unwrap_or(ua.len());
        let lead = ua[..end].trim().trim_end_matches(['-', ':', ',']);
        if !lead.is_empty() && lead.len() <= 40 {
            return Some(lead.to_owned());
        }
    }
    if let Some(name) = token_name(ua).or_else(|| robot_word(ua)) {
        return Some(name);
    }
    Some(url_host(ua).unwrap_or(ua).to_owned())
}

/// Words that name what a robot is (`360Spider`, `GoogleImageProxy`).
const ROBOT_WORDS: &[&str] = &[
    "bot",
    "spider",
    "crawl",
    "fetch",
    "proxy",
    "preview",
    "favicon",
    "archiver",
    "validator",
];

/// The first word of `ua` that says robot, outside addresses.
fn robot_word(ua: &str) -> Option<String> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_');
    let mut start = 0;
    for (i, c) in ua.char_indices().chain([(ua.len(), ' ')]) {
        if is_word(c) {
            continue;
        }
        let word = &ua[start..i];
        let in_address = ua[..start].ends_with(['.', '/', '@']) || c == '@' || c == '.';
        let lower = word.to_ascii_lowercase();
        if !word.is_empty() && !in_address && ROBOT_WORDS.iter().any(|w| lower.contains(w)) {
            return Some(word.to_owned());
        }
        start = i + c.len_utf8();
    }
    None
}

/// The robot product token of `ua` trimmed to its name, when it is one: not
/// the whole User-Agent and not part of a host name.
fn token_name(ua: &str) -> Option<String> {
    let token = product_token(ua);
    if token.is_empty() || token.len() == ua.len() {
        return None;
    }
    // Where the token sits in `ua` (it is a slice of it).
    let start = (token.as_ptr() as usize).checked_sub(ua.as_ptr() as usize)?;
    if ua[..start].ends_with(['.', '@', '/']) {
        return None;
    }
    let rest = ua.get(start..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(rest.len());
    let name = rest[..len].trim_end_matches('.');
    (!name.is_empty()).then(|| name.to_owned())
}

/// The host of the first `http://`, `https://` or `www.` address in `ua`,
/// without `www.`.
fn url_host(ua: &str) -> Option<&str> {
    let lower = ua.to_ascii_lowercase();
    let start = ["http://", "https://", "www."]
        .iter()
        .filter_map(|p| {
            lower
                .find(p)
                .map(|i| i + if *p == "www." { 0 } else { p.len() })
        })
        .min()?;
    let rest = &ua[start..];
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.')))
        .unwrap_or(rest.len());
    let host = rest[..len].trim_end_matches('.');
    let host = host
        .get(..4)
        .filter(|w| w.eq_ignore_ascii_case("www."))
        .map_or(host, |_| &host[4..]);
    host.contains('.').then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robot_names() {
        for (ua, want) in [
            (
                "Chef Client/10.18.2 (ruby-1.9.3-p327; +http://opscode.com)",
                "Chef Client",
            ),
            ("Tiny Tiny RSS/1.11 (http://tt-rss.org/)", "Tiny Tiny RSS"),
            (
                "Mozilla/5.0 (compatible; MJ12bot/v1.4.4; http://www.majestic12.co.uk/bot.php?+)",
                "MJ12bot",
            ),
            ("Mozilla/5.0 zgrab/0.x", "zgrab"),
            ("python-requests/2.31.0", "python-requests"),
            ("curl/8.5.0", "curl"),
            // Never a browser's name or a piece of a host name.
            (
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; http://www.tropicdesigns.net)",
                "tropicdesigns.net",
            ),
            (
                "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/32.0.1700.76 Safari/537.36,gzip(gfe) (via docs.google.com/viewer)",
                "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/32.0.1700.76 Safari/537.36,gzip(gfe) (via docs.google.com/viewer)",
            ),
            ("Mozilla/4.0", "Mozilla/4.0"),
            (
                "Mozilla/5.0 (Windows; U; Windows NT 5.1; fr; rv:1.8.1) VoilaBot BETA 1.2 (support.voilabot@orange-ftgroup.com)",
                "VoilaBot",
            ),
            ("Mozilla/4.0 (compatible;)", "Mozilla/4.0 (compatible;)"),
            (
                "Mozilla/5.0 (compatible; MSIE or Firefox mutant; not on Windows server; + http://tab.search.daum.net/aboutWebSearch.html) Daumoa/3.0",
                "tab.search.daum.net",
            ),
        ] {
            assert_eq!(robot_name(ua).as_deref(), Some(want), "{ua}");
        }
    }
}
