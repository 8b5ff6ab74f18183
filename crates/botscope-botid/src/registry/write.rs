//! Writing a registry: bottica YAML with botscope's fields, readable by
//! [`Registry::parse`].

use super::*;

impl Registry {
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
            if b.verify != Combine::AllOf {
                out.push_str(&format!("  verify: {}\n", b.verify.as_str()));
            }
            if !b.asns.is_empty() {
                let asns: Vec<String> = b.asns.iter().map(ToString::to_string).collect();
                out.push_str(&format!("  asns: [{}]\n", asns.join(", ")));
            }
            if let Some(h) = &b.fcrdns_hosts {
                list(&mut out, "fcrdns_hosts", h);
            }
            if let Some(d) = &b.ip_as_of {
                out.push_str(&format!("  ip_as_of: {d}\n"));
            }
            if !b.signature_agents.is_empty() {
                list(&mut out, "signature_agents", &b.signature_agents);
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
}
