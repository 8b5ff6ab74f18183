//! The registry's view of User-Agents: which robot a client claims to be,
//! and a display name for robots the registry does not know.

use std::collections::HashMap;
use std::sync::Mutex;

use botscope_accesslog::{Agent, Identify};
use botscope_botid::{Category, Registry, UaClassifier, robot_name};
use botscope_robotstxt::product_token;

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

impl Identify for RegistryIdentify<'_> {
    fn identify(&self, user_agent: Option<&str>) -> Agent {
        let Some(ua) = user_agent else {
            return Agent {
                client_type: Some("unknown"),
                ..Agent::default()
            };
        };
        let info = self.ua.classify(ua);
        let client_type = Some(info.client_type.as_str());
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
                client_type,
            };
        }
        if !info.is_bot {
            return Agent {
                client_type,
                ..Agent::default()
            };
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
            monitor: info.client_type == botscope_botid::ClientType::Monitor,
            client_type,
            reason: Some(
                info.reason
                    .map(|r| format!("the User-Agent is a robot's ({r})"))
                    .unwrap_or_else(|| "the User-Agent is a robot's".into()),
            ),
        }
    }
}

/// User-Agents a [`Shared`] keeps answers for; past them each thread
/// identifies for itself, as it would without it.
const SHARED_AGENTS: usize = 100_000;

/// [`Identify`] once per distinct User-Agent across the threads of a read:
/// the first thread to meet a User-Agent identifies it, the others take
/// its answer (in a busy site's log, every thread meets nearly every
/// browser). Answers are the inner identifier's, whichever thread asks.
pub(crate) struct Shared<'a> {
    inner: &'a dyn Identify,
    seen: Mutex<Seen>,
}

/// The answers kept, by User-Agent.
type Seen = HashMap<Box<str>, Agent, foldhash::fast::RandomState>;

impl<'a> Shared<'a> {
    /// Shares `inner`'s answers.
    pub(crate) fn new(inner: &'a dyn Identify) -> Self {
        Shared {
            inner,
            seen: Mutex::default(),
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Identify for Shared<'_> {
    fn identify(&self, user_agent: Option<&str>) -> Agent {
        let Some(ua) = user_agent else {
            return self.inner.identify(None);
        };
        if let Some(a) = self.seen().get(ua) {
            return a.clone();
        }
        let agent = self.inner.identify(user_agent);
        let mut seen = self.seen();
        if seen.len() < SHARED_AGENTS {
            seen.entry(ua.into()).or_insert_with(|| agent.clone());
        }
        agent
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts its calls; a robot when the User-Agent says "bot".
    struct Counting(AtomicUsize);

    impl Identify for Counting {
        fn identify(&self, ua: Option<&str>) -> Agent {
            self.0.fetch_add(1, Ordering::Relaxed);
            Agent {
                robot: ua.filter(|u| u.contains("bot")).map(str::to_owned),
                ..Agent::default()
            }
        }
    }

    /// Threads that meet the same User-Agents identify each once, with
    /// the inner identifier's answers.
    #[test]
    fn shared_answers_are_the_inner_ones_and_asked_once() {
        let inner = Counting(AtomicUsize::new(0));
        let shared = Shared::new(&inner);
        let uas: Vec<String> = (0..200)
            .map(|i| {
                if i % 3 == 0 {
                    format!("bot{i}")
                } else {
                    format!("Mozilla {i}")
                }
            })
            .collect();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for ua in &uas {
                        let a = shared.identify(Some(ua));
                        assert_eq!(a.robot.is_some(), ua.contains("bot"), "{ua}");
                    }
                });
            }
        });
        // Two threads may race on a User-Agent; never more.
        let calls = inner.0.load(Ordering::Relaxed);
        assert!((200..400).contains(&calls), "{calls} calls");
        for ua in &uas {
            shared.identify(Some(ua));
        }
        assert_eq!(inner.0.load(Ordering::Relaxed), calls, "all kept");
        assert_eq!(shared.identify(None), Agent::default());
    }
}
