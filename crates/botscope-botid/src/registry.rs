//! The bot registry: the bottica format (`bots:` with `name` and the
//! verifiers `fcrdns_hosts`, `ip_list`, `ip_ranges`, `cidr_list`) and a
//! superset of fields that stays valid bottica (`operator`, `category`,
//! `url`, `respects_robots_txt`, `ua_tokens`, `ip_sources`, and `verify`:
//! `all-of` (the default, bottica's meaning) or `any-of`, how the address
//! verifiers and FCrDNS combine).
//!
//! Reading validates as the bottica schema means it: a bad address,
//! `min > max`, a malformed CIDR, a duplicate item or an unknown key is an
//! error naming the file, the line and the bot.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;

use serde::Serialize;

use crate::ipset::{IpIndex, IpRange};

/// What kind of robot a registry entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Search engine crawler.
    Search,
    /// Collects training data for AI models.
    AiTraining,
    /// Indexes pages for AI answers (an AI search engine's crawler, such
    /// as OAI-SearchBot and PerplexityBot), apart from the fetches a user
    /// asked for.
    AiSearch,
    /// Fetches pages a user asked an AI assistant or agent for, at that
    /// moment (ChatGPT-User, Perplexity-User).
    AiAssistant,
    /// SEO and marketing tools.
    Seo,
    /// Link previews for social networks and messengers.
    Social,
    /// Uptime and performance monitoring.
    Monitoring,
    /// Web archives.
    Archive,
    /// Feed fetchers: RSS and Atom for readers and aggregators.
    Feed,
    /// Anything else.
    Other,
}

impl Category {
    /// All categories, as written in the registry.
    pub const ALL: &'static [(&'static str, Category)] = &[
        ("search", Category::Search),
        ("ai-training", Category::AiTraining),
        ("ai-search", Category::AiSearch),
        ("ai-assistant", Category::AiAssistant),
        ("seo", Category::Seo),
        ("social", Category::Social),
        ("monitoring", Category::Monitoring),
        ("archive", Category::Archive),
        ("feed", Category::Feed),
        ("other", Category::Other),
    ];

    /// The name as written in the registry.
    pub fn as_str(self) -> &'static str {
        Category::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("other", |(n, _)| n)
    }
}

/// How an entry's verifiers combine (the `verify` field). The address
/// verifiers (`ip_list`, `ip_ranges`, `cidr_list`) are one verifier, their
/// union; FCrDNS (`fcrdns_hosts`) is the other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combine {
    /// Every verifier must pass: bottica's meaning, and the default (its
    /// Pinterestbot must pass FCrDNS *and* come from its range).
    #[default]
    AllOf,
    /// One passing verifier is enough: the operator documents reverse DNS
    /// and its published list as alternatives (Google, Bing, Apple, …).
    /// An address outside the list is checked by FCrDNS.
    AnyOf,
}

impl Combine {
    /// `all-of` or `any-of`, as written in the registry.
    pub fn as_str(self) -> &'static str {
        match self {
            Combine::AllOf => "all-of",
            Combine::AnyOf => "any-of",
        }
    }
}

/// One robot of the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BotEntry {
    /// Unique name (compared case-insensitively), aligned with ua-parser's
    /// `user_agent.family`.
    pub name: String,
    /// Who runs it.
    pub operator: Option<String>,
    /// What it is for.
    pub category: Option<Category>,
    /// Documentation page.
    pub url: Option<String>,
    /// Whether its operator says it obeys robots.txt.
    pub respects_robots_txt: Option<bool>,
    /// Product tokens its User-Agent carries (also the robots.txt token).
    pub ua_tokens: Vec<String>,
    /// Where its operator publishes its addresses.
    pub ip_sources: Vec<String>,
    /// FCrDNS: `None` when absent (no FCrDNS check); `Some(empty)` means the
    /// check must pass with any domain.
    pub fcrdns_hosts: Option<Vec<String>>,
    /// How the verifiers combine when there are both kinds.
    pub verify: Combine,
    /// The autonomous systems its operator crawls from (`asns`): an
    /// address that an IP-owner database places in another network is
    /// evidence against a claim. Empty: the operator's networks are not
    /// known (or are shared clouds), and the owner proves nothing.
    pub asns: Vec<u32>,
    /// The date of the published list the addresses were taken from
    /// (`ip_as_of`, `YYYY-MM-DD`), when known.
    pub ip_as_of: Option<String>,
    /// The Web Bot Auth signature agents its operator signs as
    /// (`signature_agents`: `https://` URLs, as `Signature-Agent` names
    /// them): a request whose signature holds with such an agent's key is
    /// this bot's.
    pub signature_agents: Vec<String>,
    /// Single addresses it may use.
    pub ip_list: Vec<IpAddr>,
    /// Inclusive ranges it may use.
    pub ip_ranges: Vec<IpRange>,
    /// CIDR blocks it may use (as ranges).
    pub cidr_list: Vec<IpRange>,
    /// The file the entry came from.
    pub source: String,
    /// The line of its `name`.
    pub line: u32,
}

impl BotEntry {
    /// True when the entry lists addresses (`ip_list`, `ip_ranges`, `cidr_list`).
    pub fn has_ip_verifier(&self) -> bool {
        !(self.ip_list.is_empty() && self.ip_ranges.is_empty() && self.cidr_list.is_empty())
    }

    /// Every published address of the entry, as ranges.
    pub fn ranges(&self) -> impl Iterator<Item = IpRange> + '_ {
        self.ip_list
            .iter()
            .map(|ip| IpRange::single(*ip))
            .chain(self.ip_ranges.iter().copied())
            .chain(self.cidr_list.iter().copied())
    }

    /// True when `ip` is among the entry's published addresses.
    pub fn publishes(&self, ip: IpAddr) -> bool {
        self.ranges()
            .any(|r| r.contains(crate::ipset::normalize(ip)))
    }

    /// The tokens to look for in a User-Agent: `ua_tokens`, else the name.
    pub fn tokens(&self) -> Vec<&str> {
        if self.ua_tokens.is_empty() {
            vec![self.name.as_str()]
        } else {
            self.ua_tokens.iter().map(String::as_str).collect()
        }
    }
}

/// A registry file that cannot be used, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    /// The file.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// The bot the error is in, when inside an entry.
    pub bot: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file, self.line)?;
        if let Some(b) = &self.bot {
            write!(f, "bot `{b}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for RegistryError {}

/// The registry: entries, and an index of every published address.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    bots: Vec<BotEntry>,
    by_name: HashMap<String, usize>,
    ips: IpIndex,
}

/// The registry shipped with botscope.
pub const BUNDLED_REGISTRY: &str = include_str!("../data/registry.yaml");

/// Largest registry file read, in bytes.
pub const MAX_REGISTRY_BYTES: usize = 64 * 1024 * 1024;

mod read;
pub use read::yaml_error_line;
mod write;

impl Registry {
    /// The registry shipped with botscope.
    pub fn bundled() -> Registry {
        Registry::parse("bundled registry", BUNDLED_REGISTRY).unwrap_or_default()
    }

    /// A registry of these entries (names must be unique).
    pub fn with_entries(bots: Vec<BotEntry>) -> Registry {
        Registry::from_entries(bots)
    }

    fn from_entries(bots: Vec<BotEntry>) -> Registry {
        let by_name = bots
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.to_ascii_lowercase(), i))
            .collect();
        let mut ips = IpIndex::builder();
        for (i, b) in bots.iter().enumerate() {
            for r in b.ranges() {
                ips.add(r, u32::try_from(i).unwrap_or(u32::MAX));
            }
        }
        Registry {
            bots,
            by_name,
            ips: ips.build(),
        }
    }

    /// This registry with `over` layered on top: an entry of `over` replaces
    /// the entry of the same name (case-insensitively); new names are added.
    #[must_use]
    pub fn layered(self, over: Registry) -> Registry {
        let mut bots = self.bots;
        for e in over.bots {
            match bots
                .iter_mut()
                .find(|b| b.name.eq_ignore_ascii_case(&e.name))
            {
                Some(slot) => *slot = e,
                None => bots.push(e),
            }
        }
        Registry::from_entries(bots)
    }

    /// Every entry, in file order.
    pub fn bots(&self) -> &[BotEntry] {
        &self.bots
    }

    /// The robots.txt agent of each robot in `category` (`ai-training`) or
    /// run by `operator` (case-insensitively), in the registry's order,
    /// each once: its first User-Agent token, else its name. What `trends
    /// --category` and the web's trends chart follow.
    pub fn agents(&self, category: Option<&str>, operator: Option<&str>) -> Vec<String> {
        let operator = operator.map(str::to_lowercase);
        self.agents_where(|b| {
            category.is_some_and(|c| b.category.map(|x| x.as_str()) == Some(c))
                || operator.as_deref().is_some_and(|o| {
                    b.operator.as_deref().map(str::to_lowercase).as_deref() == Some(o)
                })
        })
    }

    /// The robots.txt agent of every robot, in the registry's order, each
    /// once (as [`Registry::agents`] gives them): the agent set `index
    /// export` writes a column for.
    pub fn all_agents(&self) -> Vec<String> {
        self.agents_where(|_| true)
    }

    /// The agents a study follows: each of `named` (trimmed), then the
    /// robots of `category` or run by `operator` ([`Registry::agents`]),
    /// each once whatever its case; with none of the three and `every`,
    /// `*` and every robot ([`Registry::all_agents`]). A category or
    /// operator no robot is in is an error, not an empty study.
    pub fn followed(
        &self,
        named: &[String],
        category: Option<&str>,
        operator: Option<&str>,
        every: bool,
    ) -> Result<Vec<String>, NoRobot> {
        let mut agents: Vec<String> = Vec::new();
        let mut add = |t: String| {
            if !agents.iter().any(|x| x.eq_ignore_ascii_case(&t)) {
                agents.push(t);
            }
        };
        named.iter().for_each(|x| add(x.trim().to_owned()));
        if category.is_some() || operator.is_some() {
            let found = self.agents(category, operator);
            if found.is_empty() {
                return Err(NoRobot {
                    category: category.map(str::to_owned),
                    operator: operator.map(str::to_owned),
                });
            }
            found.into_iter().for_each(&mut add);
        } else if named.is_empty() && every {
            add("*".to_owned());
            self.all_agents().into_iter().for_each(&mut add);
        }
        Ok(agents)
    }

    fn agents_where(&self, keep: impl Fn(&BotEntry) -> bool) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.bots
            .iter()
            .filter(|b| keep(b))
            .filter_map(|b| b.tokens().first().map(|t| (*t).to_owned()))
            .filter(|t| seen.insert(t.to_ascii_lowercase()))
            .collect()
    }

    /// The entry named `name`, case-insensitively (`baiduspider` finds
    /// `Baiduspider`).
    pub fn get(&self, name: &str) -> Option<&BotEntry> {
        self.by_name
            .get(&name.to_ascii_lowercase())
            .map(|&i| &self.bots[i])
    }

    /// The entry named `name`, or else the entry one of whose User-Agent
    /// tokens is `name` (`Googlebot-Image`, `AdsBot-Google`), both
    /// case-insensitively.
    pub fn find(&self, name: &str) -> Option<&BotEntry> {
        self.get(name).or_else(|| {
            self.bots
                .iter()
                .find(|b| b.ua_tokens.iter().any(|t| t.eq_ignore_ascii_case(name)))
        })
    }

    /// True when `value` is, as written, a User-Agent token an entry
    /// documents (`AI2Bot`): what `robots lint` takes as the crawler's own
    /// spelling rather than a mistake.
    pub fn documents_token(&self, value: &str) -> bool {
        self.find(value)
            .is_some_and(|b| b.tokens().contains(&value))
    }

    /// The names of the entries with no verifier: they can be claimed,
    /// never verified.
    pub fn unverifiable_names(&self) -> Vec<&str> {
        self.bots
            .iter()
            .filter(|b| b.fcrdns_hosts.is_none() && !b.has_ip_verifier())
            .map(|b| b.name.as_str())
            .collect()
    }

    /// The entry whose operator signs as `agent` (a `Signature-Agent`
    /// URL), compared by identifier as draft-ietf-webbotauth-httpsig-protocol-01
    /// defines it (the URL resolved, its query discarded, normalized as
    /// RFC 3986 6.2.2 and 6.2.3 say, a bare origin read as its well-known
    /// directory): an entry that lists `https://crawler.example` keeps its
    /// name when the crawler sends
    /// `https://crawler.example/.well-known/http-message-signatures-directory`.
    pub fn signed_by(&self, agent: &str) -> Option<&BotEntry> {
        let id = botscope_httpsig::agent::resolve(agent).ok()?.identifier;
        self.signed_by_identifier(&id)
    }

    /// The entry one of whose `signature_agents` has the identifier `id`
    /// (as a verdict gives it: [`botscope_httpsig::Verdict::identifier`]).
    pub fn signed_by_identifier(&self, id: &str) -> Option<&BotEntry> {
        self.bots.iter().find(|b| {
            b.signature_agents
                .iter()
                .any(|a| botscope_httpsig::agent::identifier(a) == id)
        })
    }

    /// The entries whose published addresses include `ip`.
    pub fn owners_of(&self, ip: IpAddr) -> impl Iterator<Item = &BotEntry> {
        self.ips.lookup(ip).iter().map(|&i| &self.bots[i as usize])
    }

    /// The address index (owners are entry positions).
    pub fn ip_index(&self) -> &IpIndex {
        &self.ips
    }
}

/// A signature agent's URL in the form compared: `https://`, the host in
/// lowercase, no default port, no trailing `/` alone (`https://Bot.Example/`
/// → `https://bot.example`); `None` when it is not an https URL with a host.
pub fn signature_agent(url: &str) -> Option<String> {
    let rest = url.trim().strip_prefix("https://").or_else(|| {
        let t = url.trim();
        t.get(..8)
            .filter(|p| p.eq_ignore_ascii_case("https://"))
            .map(|_| &t[8..])
    })?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, path) = rest.split_at(end);
    let host = host.to_ascii_lowercase();
    let host = host.strip_suffix(":443").unwrap_or(&host);
    if host.is_empty()
        || host.contains('@')
        || host.contains(|c: char| c.is_whitespace() || c.is_control())
    {
        return None;
    }
    let path = if path == "/" { "" } else { path };
    Some(format!("https://{host}{path}"))
}

/// What `bots validate` prints for the file `name`: in text, the errors
/// then a summary line (and a note on bots that can only be claimed); in
/// JSON, one object.
pub fn validation_report(
    name: &str,
    result: &Result<Registry, Vec<RegistryError>>,
    json: bool,
) -> String {
    use serde_json::json;
    match (result, json) {
        (Ok(r), false) => {
            let without = r.unverifiable_names();
            let mut out = format!("{name}: valid, {} bot(s)\n", r.bots().len());
            if !without.is_empty() {
                out.push_str(&format!(
                    "note: {} bot(s) have no verifier and can only be claimed, never verified: {}\n",
                    without.len(),
                    without.join(", ")
                ));
            }
            out
        }
        (Ok(r), true) => format!(
            "{}\n",
            json!({ "file": name, "valid": true, "bots": r.bots().len(),
                "unverifiable_bots": r.unverifiable_names(), "errors": [] })
        ),
        (Err(errors), false) => {
            let mut out: String = errors.iter().map(|e| format!("{e}\n")).collect();
            out.push_str(&format!(
                "{name}: invalid, {}\n",
                botscope_text::count(errors.len() as u64, "error", "errors")
            ));
            out
        }
        (Err(errors), true) => {
            let list: Vec<_> = errors
                .iter()
                .map(|e| json!({ "file": e.file, "line": e.line, "bot": e.bot, "message": e.message }))
                .collect();
            format!(
                "{}\n",
                json!({ "file": name, "valid": false, "errors": list })
            )
        }
    }
}

/// Every error of a registry file, one per line.
pub fn errors_text(errors: &[RegistryError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// No robot of the registry is in the category, or run by the operator,
/// a study asked for ([`Registry::followed`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no registry robot is {}", self.what())]
pub struct NoRobot {
    /// The category asked for.
    pub category: Option<String>,
    /// The operator asked for.
    pub operator: Option<String>,
}

impl NoRobot {
    fn what(&self) -> String {
        let field = |s: &str| botscope_text::field(s).into_owned();
        match (&self.category, &self.operator) {
            (Some(c), Some(o)) => format!("in the category {} or run by {}", field(c), field(o)),
            (Some(c), None) => format!("in the category {}", field(c)),
            (None, Some(o)) => format!("run by {}", field(o)),
            (None, None) => "asked for".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        match Registry::parse("t.yaml", text) {
            Ok(_) => Vec::new(),
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn reads_bottica_as_it_is() {
        let text = "bots:\n- name: Googlebot\n  fcrdns_hosts:\n    - google.com\n    - googlebot.com\n- name: Pinterestbot\n  ip_ranges:\n    - min: 54.236.1.1\n      max: 54.236.1.255\n  fcrdns_hosts:\n    - pinterest.com\n- name: AnyHost\n  fcrdns_hosts: []\n- name: v6bot\n  cidr_list: ['2001:db8::/32', 192.0.2.0/24]\n  ip_list: ['::ffff:198.51.100.7']\n";
        let r = Registry::parse("t.yaml", text).expect("valid");
        assert_eq!(r.bots().len(), 4);
        assert_eq!(r.get("googlebot").map(|b| b.line), Some(2));
        assert_eq!(
            r.get("ANYHOST").and_then(|b| b.fcrdns_hosts.clone()),
            Some(vec![])
        );
        assert_eq!(
            r.get("Pinterestbot").map(|b| b.fcrdns_hosts.is_some()),
            Some(true)
        );
        assert!(r.get("v6bot").is_some_and(|b| b.fcrdns_hosts.is_none()));
        let owners = |ip: &str| {
            r.owners_of(ip.parse().expect("ip"))
                .map(|b| b.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(owners("54.236.1.9"), ["Pinterestbot"]);
        assert_eq!(owners("2001:db8::5"), ["v6bot"]);
        assert_eq!(owners("198.51.100.7"), ["v6bot"]);
        assert!(owners("8.8.8.8").is_empty());
    }

    #[test]
    fn documented_tokens_are_taken_as_written() {
        let r = Registry::parse(
            "t.yaml",
            "bots:\n- name: AI2Bot\n- name: Brightbot\n  ua_tokens: [Brightbot 1.0]\n",
        )
        .expect("valid");
        assert!(r.documents_token("AI2Bot"));
        assert!(r.documents_token("Brightbot 1.0"));
        assert!(!r.documents_token("ai2bot"), "as written, not any case");
        assert!(!r.documents_token("AI3Bot"));
    }

    #[test]
    fn agents_by_category_or_operator_each_once() {
        let text = "bots:\n- name: GPTBot\n  category: ai-training\n  operator: OpenAI\n- name: OAI-SearchBot\n  category: search\n  operator: OpenAI\n- name: Google-Extended\n  category: ai-training\n  operator: Google\n  ua_tokens: [Google-Extended]\n- name: Googlebot\n  category: search\n  operator: Google\n- name: gptbot-copy\n  category: ai-training\n  ua_tokens: [gptbot]\n";
        let r = Registry::parse("t.yaml", text).expect("valid");
        assert_eq!(
            r.agents(Some("ai-training"), None),
            ["GPTBot", "Google-Extended"],
            "registry order, a token named twice once"
        );
        assert_eq!(r.agents(None, Some("openai")), ["GPTBot", "OAI-SearchBot"]);
        assert_eq!(
            r.agents(Some("search"), Some("GOOGLE")),
            ["OAI-SearchBot", "Google-Extended", "Googlebot"]
        );
        assert!(r.agents(Some("no-such"), None).is_empty());
        assert!(r.agents(None, None).is_empty());
    }

    #[test]
    fn a_study_follows_the_named_then_the_category_each_once() {
        let text = "bots:\n- name: GPTBot\n  category: ai-training\n  operator: OpenAI\n- name: Googlebot\n  category: search\n  operator: Google\n";
        let r = Registry::parse("t.yaml", text).expect("valid");
        let named = [" gptbot ".to_owned(), "MyBot".to_owned()];
        assert_eq!(
            r.followed(&named, Some("ai-training"), None, false),
            Ok(vec!["gptbot".to_owned(), "MyBot".to_owned()])
        );
        assert_eq!(
            r.followed(&[], None, Some("google"), true),
            Ok(vec!["Googlebot".to_owned()])
        );
        assert_eq!(r.followed(&[], None, None, false), Ok(vec![]));
        assert_eq!(
            r.followed(&[], None, None, true),
            Ok(vec![
                "*".to_owned(),
                "GPTBot".to_owned(),
                "Googlebot".to_owned()
            ])
        );
        let e = r
            .followed(&named, Some("no-such\x1b"), None, true)
            .expect_err("none");
        assert_eq!(
            e.to_string(),
            "no registry robot is in the category no-such\\x1b"
        );
    }

    #[test]
    fn errors_name_file_line_and_bot() {
        let e = errors(
            "bots:\n- name: a\n  ip_list: [1.2.3.4, 1.2.3.999]\n- name: b\n  ip_ranges:\n    - min: 10.0.0.9\n      max: 10.0.0.1\n- name: c\n  cidr_list: [10.0.0.1/8]\n- name: d\n  fcrdns_host: [x.com]\n- name: A\n",
        );
        assert_eq!(e.len(), 5, "{e:#?}");
        assert!(
            e[0].starts_with("t.yaml:3: bot `a`: ip_list: `1.2.3.999` is not an IP address"),
            "{}",
            e[0]
        );
        assert!(
            e[1].starts_with("t.yaml:6: bot `b`:") && e[1].contains("greater than"),
            "{}",
            e[1]
        );
        assert!(
            e[2].starts_with("t.yaml:9: bot `c`:") && e[2].contains("below the prefix"),
            "{}",
            e[2]
        );
        assert!(
            e[3].starts_with(
                "t.yaml:11: bot `d`: unknown key `fcrdns_host` (did you mean `fcrdns_hosts`?)"
            ),
            "{}",
            e[3]
        );
        assert!(
            e[4].starts_with("t.yaml:12: bot `A`:") && e[4].contains("already defined at line 2"),
            "{}",
            e[4]
        );
    }

    #[test]
    fn malformed_yaml_and_shapes() {
        assert!(errors("bots: [\n")[0].contains("not valid YAML"));
        assert!(
            errors("- a\n- b\n")[0].contains("not valid YAML") || !errors("- a\n")[0].is_empty()
        );
        assert!(errors("robots: []\n")[0].contains("unknown top-level key"));
        assert!(errors("bots:\n- ip_list: [1.2.3.4]\n")[0].contains("without a `name`"));
        assert!(errors("bots:\n- name: x\n  category: spam\n")[0].contains("must be one of"));
        assert!(errors("bots:\n- name: x\n  ip_list: [1.1.1.1, 1.1.1.1]\n")[0].contains("twice"));
        assert!(errors("bots:\n- name: x\n  name: y\n")[0].contains("not valid YAML"));
        assert!(errors("\u{0}\u{1}binary").len() == 1);
    }

    #[test]
    fn yaml_round_trip() {
        let r = Registry::bundled();
        let back = Registry::parse("again", &r.to_yaml()).unwrap_or_else(|e| panic!("{e:#?}"));
        assert_eq!(back.bots().len(), r.bots().len());
        for (a, b) in r.bots().iter().zip(back.bots()) {
            assert_eq!(
                (&a.name, &a.fcrdns_hosts, &a.ua_tokens, a.category),
                (&b.name, &b.fcrdns_hosts, &b.ua_tokens, b.category)
            );
            let ra: Vec<IpRange> = a.ranges().collect();
            let rb: Vec<IpRange> = b.ranges().collect();
            assert_eq!(ra, rb, "{}", a.name);
        }
    }

    /// Regression (found by the `registry` fuzz target): a value with a
    /// newline must be written so that it reads back.
    #[test]
    fn to_yaml_escapes_newlines_and_quotes() {
        let r = Registry::parse(
            "t",
            "bots:\n- name: \"a\\nb 'c' \\\"d\\\"\"\n  operator: \"x\\ty\"\n",
        )
        .expect("parse");
        let back = Registry::parse("again", &r.to_yaml()).unwrap_or_else(|e| panic!("{e:#?}"));
        assert_eq!(back.bots()[0].name, r.bots()[0].name);
        assert_eq!(back.bots()[0].operator, r.bots()[0].operator);
    }

    #[test]
    fn layering_replaces_by_name() {
        let base = Registry::parse(
            "a",
            "bots:\n- name: Googlebot\n  ip_list: [1.1.1.1]\n- name: other\n",
        )
        .expect("a");
        let user = Registry::parse(
            "b",
            "bots:\n- name: googlebot\n  ip_list: [2.2.2.2]\n- name: mine\n  fcrdns_hosts: []\n",
        )
        .expect("b");
        let r = base.layered(user);
        assert_eq!(r.bots().len(), 3);
        assert_eq!(r.owners_of("2.2.2.2".parse().expect("ip")).count(), 1);
        assert_eq!(r.owners_of("1.1.1.1".parse().expect("ip")).count(), 0);
        assert_eq!(r.get("GOOGLEBOT").map(|b| b.source.as_str()), Some("b"));
    }
}
