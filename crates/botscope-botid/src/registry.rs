//! The bot registry: the bottica format (`bots:` with `name` and the
//! verifiers `fcrdns_hosts`, `ip_list`, `ip_ranges`, `cidr_list`) and a
//! superset of fields that stays valid bottica (`operator`, `category`,
//! `url`, `respects_robots_txt`, `ua_tokens`, `ip_sources`).
//!
//! Reading validates as the bottica schema means it: a bad address,
//! `min > max`, a malformed CIDR, a duplicate item or an unknown key is an
//! error naming the file, the line and the bot.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;

use marked_yaml::{LoaderOptions, Node, Span};
use serde::Serialize;

use crate::ipset::{IpIndex, IpRange, parse_ip};

/// What kind of robot a registry entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Search engine crawler.
    Search,
    /// Collects training data for AI models.
    AiTraining,
    /// Fetches pages for an AI assistant's user or answer.
    AiAssistant,
    /// SEO and marketing tools.
    Seo,
    /// Link previews for social networks and messengers.
    Social,
    /// Uptime and performance monitoring.
    Monitoring,
    /// Web archives.
    Archive,
    /// Anything else.
    Other,
}

impl Category {
    /// All categories, as written in the registry.
    pub const ALL: &'static [(&'static str, Category)] = &[
        ("search", Category::Search),
        ("ai-training", Category::AiTraining),
        ("ai-assistant", Category::AiAssistant),
        ("seo", Category::Seo),
        ("social", Category::Social),
        ("monitoring", Category::Monitoring),
        ("archive", Category::Archive),
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

fn line_of(span: &Span) -> u32 {
    span.start()
        .map_or(0, |m| u32::try_from(m.line()).unwrap_or(u32::MAX))
}

/// The registry: entries, and an index of every published address.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    bots: Vec<BotEntry>,
    by_name: HashMap<String, usize>,
    ips: IpIndex,
}

const TOP_KEYS: &[&str] = &["bots"];
const BOT_KEYS: &[&str] = &[
    "name",
    "fcrdns_hosts",
    "ip_list",
    "ip_ranges",
    "cidr_list",
    "operator",
    "category",
    "url",
    "respects_robots_txt",
    "ua_tokens",
    "ip_sources",
];

/// The registry shipped with botscope.
pub const BUNDLED_REGISTRY: &str = include_str!("../data/registry.yaml");

struct Reader<'a> {
    file: &'a str,
    errors: Vec<RegistryError>,
    /// Every entry's name and line, valid or not, for duplicate checks.
    names: Vec<(String, u32)>,
}

impl Reader<'_> {
    fn err(&mut self, span: &Span, bot: Option<&str>, message: impl Into<String>) {
        self.errors.push(RegistryError {
            file: self.file.to_owned(),
            line: line_of(span),
            bot: bot.map(str::to_owned),
            message: message.into(),
        });
    }

    /// A list of strings: a sequence of scalars; `empty_ok` allows `[]` and
    /// an empty value.
    fn strings(
        &mut self,
        node: &Node,
        key: &str,
        bot: &str,
        empty_ok: bool,
    ) -> Option<Vec<String>> {
        let items: Vec<String> = match node {
            Node::Sequence(seq) => {
                let mut out = Vec::new();
                for item in seq.iter() {
                    match item.as_scalar() {
                        Some(s) => out.push(s.as_str().trim().to_owned()),
                        None => {
                            self.err(
                                item.span(),
                                Some(bot),
                                format!("`{key}` items must be strings"),
                            );
                            return None;
                        }
                    }
                }
                out
            }
            Node::Scalar(s)
                if s.as_str().trim().is_empty() || s.as_str() == "~" || s.as_str() == "null" =>
            {
                Vec::new()
            }
            _ => {
                self.err(node.span(), Some(bot), format!("`{key}` must be a list"));
                return None;
            }
        };
        if items.is_empty() && !empty_ok {
            self.err(node.span(), Some(bot), format!("`{key}` must not be empty"));
            return None;
        }
        let mut seen = std::collections::HashSet::new();
        for i in &items {
            if !seen.insert(i.to_ascii_lowercase()) {
                self.err(
                    node.span(),
                    Some(bot),
                    format!("`{key}` lists `{i}` twice; items must be unique"),
                );
            }
        }
        Some(items)
    }

    fn entry(&mut self, node: &Node) -> Option<BotEntry> {
        let Some(map) = node.as_mapping() else {
            self.err(
                node.span(),
                None,
                "each entry of `bots` must be a mapping with a `name`",
            );
            return None;
        };
        let name_node = map.get_scalar("name");
        let name = match name_node {
            Some(n) if !n.as_str().trim().is_empty() => n.as_str().trim().to_owned(),
            _ => {
                self.err(node.span(), None, "entry without a `name`");
                return None;
            }
        };
        let line = name_node.map_or_else(|| line_of(node.span()), |n| line_of(n.span()));
        self.names.push((name.clone(), line));
        let errors_before = self.errors.len();
        let mut e = BotEntry {
            name: name.clone(),
            operator: None,
            category: None,
            url: None,
            respects_robots_txt: None,
            ua_tokens: Vec::new(),
            ip_sources: Vec::new(),
            fcrdns_hosts: None,
            ip_list: Vec::new(),
            ip_ranges: Vec::new(),
            cidr_list: Vec::new(),
            source: self.file.to_owned(),
            line,
        };
        for (k, v) in map.iter() {
            let key = k.as_str();
            let scalar = |v: &Node| v.as_scalar().map(|s| s.as_str().trim().to_owned());
            match key {
                "name" => {}
                "operator" | "url" => match scalar(v) {
                    Some(s) if key == "operator" => e.operator = Some(s),
                    Some(s) => e.url = Some(s),
                    None => self.err(v.span(), Some(&name), format!("`{key}` must be a string")),
                },
                "category" => match scalar(v)
                    .and_then(|s| Category::ALL.iter().find(|(n, _)| *n == s).map(|(_, c)| *c))
                {
                    Some(c) => e.category = Some(c),
                    None => {
                        let names: Vec<&str> = Category::ALL.iter().map(|(n, _)| *n).collect();
                        self.err(
                            v.span(),
                            Some(&name),
                            format!("`category` must be one of {}", names.join(", ")),
                        );
                    }
                },
                "respects_robots_txt" => match v.as_scalar().and_then(|s| s.as_bool()) {
                    Some(b) => e.respects_robots_txt = Some(b),
                    None => self.err(
                        v.span(),
                        Some(&name),
                        "`respects_robots_txt` must be true or false",
                    ),
                },
                "ua_tokens" => e.ua_tokens = self.strings(v, key, &name, false).unwrap_or_default(),
                "ip_sources" => {
                    e.ip_sources = self.strings(v, key, &name, false).unwrap_or_default()
                }
                "fcrdns_hosts" => {
                    if let Some(hosts) = self.strings(v, key, &name, true) {
                        let hosts: Vec<String> = hosts
                            .into_iter()
                            .map(|h| h.trim_matches('.').to_ascii_lowercase())
                            .collect();
                        for h in &hosts {
                            if h.is_empty()
                                || h.contains(|c: char| c.is_whitespace() || c == '/' || c == ':')
                            {
                                self.err(
                                    v.span(),
                                    Some(&name),
                                    format!("`{h}` is not a domain name"),
                                );
                            }
                        }
                        e.fcrdns_hosts = Some(hosts);
                    }
                }
                "ip_list" => {
                    for s in self.strings(v, key, &name, false).unwrap_or_default() {
                        match parse_ip(&s) {
                            Ok(ip) => e.ip_list.push(ip),
                            Err(err) => self.err(v.span(), Some(&name), format!("ip_list: {err}")),
                        }
                    }
                }
                "cidr_list" => {
                    for s in self.strings(v, key, &name, false).unwrap_or_default() {
                        match IpRange::parse_cidr(&s) {
                            Ok(r) => e.cidr_list.push(r),
                            Err(err) => {
                                self.err(v.span(), Some(&name), format!("cidr_list: {err}"))
                            }
                        }
                    }
                }
                "ip_ranges" => self.ranges(v, &name, &mut e.ip_ranges),
                other => {
                    let hint = BOT_KEYS
                        .iter()
                        .min_by_key(|k| strsim::levenshtein(k, other))
                        .filter(|k| strsim::levenshtein(k, other) <= 3)
                        .map(|k| format!(" (did you mean `{k}`?)"))
                        .unwrap_or_default();
                    self.err(
                        k.span(),
                        Some(&name),
                        format!("unknown key `{other}`{hint}"),
                    );
                }
            }
        }
        (self.errors.len() == errors_before).then_some(e)
    }

    fn ranges(&mut self, v: &Node, name: &str, out: &mut Vec<IpRange>) {
        let Some(seq) = v.as_sequence() else {
            self.err(
                v.span(),
                Some(name),
                "`ip_ranges` must be a list of {min, max}",
            );
            return;
        };
        for item in seq.iter() {
            let Some(m) = item.as_mapping() else {
                self.err(
                    item.span(),
                    Some(name),
                    "`ip_ranges` items must be {min, max}",
                );
                continue;
            };
            for (k, _) in m.iter() {
                if k.as_str() != "min" && k.as_str() != "max" {
                    self.err(
                        k.span(),
                        Some(name),
                        format!("unknown key `{}` in an ip range", k.as_str()),
                    );
                }
            }
            let (Some(min), Some(max)) = (m.get_scalar("min"), m.get_scalar("max")) else {
                self.err(
                    item.span(),
                    Some(name),
                    "an ip range needs both `min` and `max`",
                );
                continue;
            };
            match (parse_ip(min.as_str()), parse_ip(max.as_str())) {
                (Ok(a), Ok(b)) => match IpRange::from_bounds(a, b) {
                    Ok(r) => {
                        if out.contains(&r) {
                            self.err(
                                item.span(),
                                Some(name),
                                format!("ip range {r} is listed twice"),
                            );
                        }
                        out.push(r);
                    }
                    Err(err) => self.err(item.span(), Some(name), format!("ip_ranges: {err}")),
                },
                (Err(err), _) => self.err(min.span(), Some(name), format!("ip_ranges min: {err}")),
                (_, Err(err)) => self.err(max.span(), Some(name), format!("ip_ranges max: {err}")),
            }
        }
    }
}

/// Largest registry file read, in bytes.
pub const MAX_REGISTRY_BYTES: usize = 64 * 1024 * 1024;

impl Registry {
    /// Reads a registry file's text. `file` names it in errors. Every
    /// problem found is returned, not just the first.
    pub fn parse(file: &str, text: &str) -> Result<Registry, Vec<RegistryError>> {
        let mut r = Reader {
            file,
            errors: Vec::new(),
            names: Vec::new(),
        };
        if text.len() > MAX_REGISTRY_BYTES {
            r.errors.push(RegistryError {
                file: file.to_owned(),
                line: 0,
                bot: None,
                message: format!(
                    "file is {} bytes; the limit is {MAX_REGISTRY_BYTES}",
                    text.len()
                ),
            });
            return Err(r.errors);
        }
        let opts = LoaderOptions::default().error_on_duplicate_keys(true);
        let root = match marked_yaml::parse_yaml_with_options(0, text, opts) {
            Ok(root) => root,
            Err(e) => {
                let line = match &e {
                    marked_yaml::LoadError::TopLevelMustBeMapping(m)
                    | marked_yaml::LoadError::UnexpectedAnchor(m)
                    | marked_yaml::LoadError::MappingKeyMustBeScalar(m)
                    | marked_yaml::LoadError::UnexpectedTag(m)
                    | marked_yaml::LoadError::ScanError(m, _) => {
                        u32::try_from(m.line()).unwrap_or(0)
                    }
                    marked_yaml::LoadError::DuplicateKey(d) => line_of(d.key.span()),
                    _ => 0,
                };
                r.errors.push(RegistryError {
                    file: file.to_owned(),
                    line,
                    bot: None,
                    message: format!("not valid YAML: {e}"),
                });
                return Err(r.errors);
            }
        };
        let Some(top) = root.as_mapping() else {
            r.err(
                root.span(),
                None,
                "the top level must be a mapping with `bots:`",
            );
            return Err(r.errors);
        };
        for (k, _) in top.iter() {
            if !TOP_KEYS.contains(&k.as_str()) {
                r.err(
                    k.span(),
                    None,
                    format!("unknown top-level key `{}`", k.as_str()),
                );
            }
        }
        let Some(bots) = top.get_node("bots") else {
            r.err(root.span(), None, "missing `bots:` list");
            return Err(r.errors);
        };
        let entries: Vec<BotEntry> = match bots.as_sequence() {
            Some(seq) => seq.iter().filter_map(|n| r.entry(n)).collect(),
            None if bots
                .as_scalar()
                .is_some_and(|s| s.as_str().trim().is_empty()) =>
            {
                Vec::new()
            }
            None => {
                r.err(bots.span(), None, "`bots` must be a list");
                Vec::new()
            }
        };
        let mut seen: HashMap<String, u32> = HashMap::new();
        for (name, line) in &r.names {
            if let Some(&first) = seen.get(&name.to_ascii_lowercase()) {
                r.errors.push(RegistryError {
                    file: file.to_owned(),
                    line: *line,
                    bot: Some(name.clone()),
                    message: format!("a bot with this name is already defined at line {first} (names compare case-insensitively)"),
                });
            } else {
                seen.insert(name.to_ascii_lowercase(), *line);
            }
        }
        if !r.errors.is_empty() {
            r.errors.sort_by_key(|e| e.line);
            return Err(r.errors);
        }
        Ok(Registry::from_entries(entries))
    }

    /// The registry shipped with botscope.
    pub fn bundled() -> Registry {
        Registry::parse("bundled registry", BUNDLED_REGISTRY).unwrap_or_default()
    }

    /// A registry of these entries (names must be unique).
    pub fn with_entries(bots: Vec<BotEntry>) -> Registry {
        Registry::from_entries(bots)
    }

    /// The registry as bottica YAML (with botscope's fields), readable by
    /// [`Registry::parse`].
    pub fn to_yaml(&self) -> String {
        // Double-quoted scalars, escaping quotes, backslashes, newlines and
        // every control or invisible line-breaking character.
        fn q(s: &str) -> String {
            let mut out = String::with_capacity(s.len() + 2);
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}') => {
                        out.push_str(&format!("\\u{:04x}", u32::from(c)));
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        fn list(out: &mut String, key: &str, items: &[String]) {
            if items.is_empty() {
                out.push_str(&format!("  {key}: []\n"));
                return;
            }
            out.push_str(&format!("  {key}:\n"));
            for i in items {
                out.push_str(&format!("    - {}\n", q(i)));
            }
        }
        let mut out = String::from("bots:\n");
        for b in &self.bots {
            out.push_str(&format!("- name: {}\n", q(&b.name)));
            if let Some(o) = &b.operator {
                out.push_str(&format!("  operator: {}\n", q(o)));
            }
            if let Some(c) = b.category {
                out.push_str(&format!("  category: {}\n", c.as_str()));
            }
            if let Some(u) = &b.url {
                out.push_str(&format!("  url: {}\n", q(u)));
            }
            if let Some(r) = b.respects_robots_txt {
                out.push_str(&format!("  respects_robots_txt: {r}\n"));
            }
            if !b.ua_tokens.is_empty() {
                list(&mut out, "ua_tokens", &b.ua_tokens);
            }
            if !b.ip_sources.is_empty() {
                list(&mut out, "ip_sources", &b.ip_sources);
            }
            if let Some(h) = &b.fcrdns_hosts {
                list(&mut out, "fcrdns_hosts", h);
            }
            if !b.ip_list.is_empty() {
                list(
                    &mut out,
                    "ip_list",
                    &b.ip_list
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>(),
                );
            }
            if !b.ip_ranges.is_empty() {
                out.push_str("  ip_ranges:\n");
                for r in &b.ip_ranges {
                    let (min, max) = match *r {
                        IpRange::V4(a, z) => (
                            std::net::Ipv4Addr::from(a).to_string(),
                            std::net::Ipv4Addr::from(z).to_string(),
                        ),
                        IpRange::V6(a, z) => (
                            std::net::Ipv6Addr::from(a).to_string(),
                            std::net::Ipv6Addr::from(z).to_string(),
                        ),
                    };
                    out.push_str(&format!("    - min: {}\n      max: {}\n", q(&min), q(&max)));
                }
            }
            if !b.cidr_list.is_empty() {
                let cidrs: Vec<String> = b.cidr_list.iter().flat_map(IpRange::to_cidrs).collect();
                list(&mut out, "cidr_list", &cidrs);
            }
        }
        out
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

    /// The entry named `name`, case-insensitively (`baiduspider` finds
    /// `Baiduspider`).
    pub fn get(&self, name: &str) -> Option<&BotEntry> {
        self.by_name
            .get(&name.to_ascii_lowercase())
            .map(|&i| &self.bots[i])
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
