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
/// tokens leave out (`MJ12bot/v1.4` → `MJ12bot`).
pub fn robot_name(ua: &str) -> Option<String> {
    let ua = ua.trim();
    if !ua.starts_with("Mozilla/") {
        let end = ua.find(['/', '(', ';']).unwrap_or(ua.len());
        let lead = ua[..end].trim().trim_end_matches(['-', ':', ',']);
        if !lead.is_empty() && lead.len() <= 40 {
            return Some(lead.to_owned());
        }
    }
    let token = product_token(ua);
    if token.is_empty() || token.len() == ua.len() && ua.len() > 40 {
        return None;
    }
    // Where the token sits in `ua` (it is a slice of it).
    let start = (token.as_ptr() as usize).checked_sub(ua.as_ptr() as usize)?;
    let rest = ua.get(start..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(rest.len());
    Some(rest[..len].trim_end_matches('.').to_owned())
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
        ] {
            assert_eq!(robot_name(ua).as_deref(), Some(want), "{ua}");
        }
    }
}
