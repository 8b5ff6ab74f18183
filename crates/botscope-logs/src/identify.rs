//! The registry's view of User-Agents: which robot a client claims to be,
//! and a display name for robots the registry does not know.

use botscope_accesslog::{Agent, Identify};
use botscope_botid::{Category, Registry, UaClassifier, robot_name};
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
            .or_else(|| {
                Some(info.family.clone().unwrap_or_else(|| self.ua.family(ua)))
                    .filter(|f| f != "Other")
            })
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
