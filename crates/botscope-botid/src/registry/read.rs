//! Reading a registry file: validated as the bottica schema means it,
//! every problem with file, line and bot.

use std::collections::HashMap;

use marked_yaml::{LoaderOptions, Node, Span};

use super::*;
use crate::ipset::{IpRange, parse_ip};

/// The line a YAML reading error points at (0 when it points nowhere).
pub fn yaml_error_line(e: &marked_yaml::LoadError) -> u32 {
    match e {
        marked_yaml::LoadError::TopLevelMustBeMapping(m)
        | marked_yaml::LoadError::UnexpectedAnchor(m)
        | marked_yaml::LoadError::MappingKeyMustBeScalar(m)
        | marked_yaml::LoadError::UnexpectedTag(m)
        | marked_yaml::LoadError::ScanError(m, _) => u32::try_from(m.line()).unwrap_or(0),
        marked_yaml::LoadError::DuplicateKey(d) => line_of(d.key.span()),
        _ => 0,
    }
}

fn line_of(span: &Span) -> u32 {
    span.start()
        .map_or(0, |m| u32::try_from(m.line()).unwrap_or(u32::MAX))
}

const TOP_KEYS: &[&str] = &["bots"];

/// Longest bot name accepted (real names are under 40).
pub const MAX_NAME_CHARS: usize = 100;
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
    "verify",
    "asns",
    "ip_as_of",
    "signature_agents",
];

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
        if name.chars().count() > MAX_NAME_CHARS {
            let shown: String = name.chars().take(40).collect();
            self.err(
                name_node.map_or(node.span(), |n| n.span()),
                None,
                format!(
                    "bot name `{}…` is over {MAX_NAME_CHARS} characters",
                    botscope_text::field(&shown)
                ),
            );
            return None;
        }
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
            verify: Combine::AllOf,
            asns: Vec::new(),
            ip_as_of: None,
            signature_agents: Vec::new(),
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
                "verify" => match scalar(v).as_deref() {
                    Some("all-of") => e.verify = Combine::AllOf,
                    Some("any-of") => e.verify = Combine::AnyOf,
                    _ => self.err(v.span(), Some(&name), "`verify` must be all-of or any-of"),
                },
                "asns" => {
                    for s in self.strings(v, key, &name, false).unwrap_or_default() {
                        let n = s.strip_prefix("AS").or(s.strip_prefix("as")).unwrap_or(&s);
                        match n.parse::<u32>() {
                            Ok(n) if n > 0 => e.asns.push(n),
                            _ => self.err(
                                v.span(),
                                Some(&name),
                                format!("asns: `{}` is not an AS number", botscope_text::field(&s)),
                            ),
                        }
                    }
                }
                "ip_as_of" => match scalar(v) {
                    Some(s) if s.parse::<jiff::civil::Date>().is_ok() => e.ip_as_of = Some(s),
                    _ => self.err(
                        v.span(),
                        Some(&name),
                        "`ip_as_of` must be a date (YYYY-MM-DD)",
                    ),
                },
                "ua_tokens" => e.ua_tokens = self.strings(v, key, &name, false).unwrap_or_default(),
                "ip_sources" => {
                    e.ip_sources = self.strings(v, key, &name, false).unwrap_or_default()
                }
                "signature_agents" => {
                    for a in self.strings(v, key, &name, false).unwrap_or_default() {
                        match signature_agent(&a) {
                            Some(a) => e.signature_agents.push(a),
                            None => self.err(
                                v.span(),
                                Some(&name),
                                format!(
                                    "signature_agents: `{}` is not an https:// URL with a host",
                                    botscope_text::field(&a)
                                ),
                            ),
                        }
                    }
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
                let line = yaml_error_line(&e);
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
}
