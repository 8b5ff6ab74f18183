//! The bundled registry and the real bottica file.

use std::net::IpAddr;

use botscope_botid::{BUNDLED_REGISTRY, Category, Registry};

fn data(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .expect("test data")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("ip")
}

#[test]
fn bundled_registry_is_valid_bottica() {
    let r = Registry::parse("registry.yaml", BUNDLED_REGISTRY).unwrap_or_else(|e| panic!("{e:#?}"));
    assert!(r.bots().len() >= 150);
    assert_eq!(Registry::bundled().bots().len(), r.bots().len());
}

#[test]
fn real_bottica_file_reads() {
    let r =
        Registry::parse("bottica.yaml", &data("bottica.yaml")).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(r.bots().len(), 11);
    assert!(
        r.get("baiduspider").is_some(),
        "names compare case-insensitively"
    );
}

/// Every operator of the reverse-DNS table has an entry with its domains.
#[test]
fn covers_the_operators_with_documented_rdns() {
    let r = Registry::bundled();
    let text = data("rdns_domains.tsv");
    let mut checked = 0;
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let token = cols[1].split_whitespace().next().unwrap_or_default();
        let entry = r
            .bots()
            .iter()
            .find(|b| {
                b.name.eq_ignore_ascii_case(token)
                    || b.ua_tokens.iter().any(|t| t.eq_ignore_ascii_case(token))
            })
            .or_else(|| {
                r.bots().iter().find(|b| {
                    b.name
                        .to_ascii_lowercase()
                        .starts_with(&token.to_ascii_lowercase())
                })
            })
            .unwrap_or_else(|| panic!("no entry for {token}"));
        let suffixes = cols[2];
        if !suffixes.starts_with('(') {
            let first = suffixes.split([',', ' ']).next().unwrap_or_default();
            let hosts = entry.fcrdns_hosts.clone().unwrap_or_default();
            assert!(
                hosts.iter().any(|h| h == first),
                "{}: {first} not in {hosts:?}",
                entry.name
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 31);
}

/// Every AI crawler and agent of ai.robots.txt is known by its token.
#[test]
fn covers_every_ai_agent() {
    let r = Registry::bundled();
    let ai: serde_json::Value = serde_json::from_str(&data("ai-robots-txt.json")).expect("json");
    let obj = ai.as_object().expect("object");
    assert_eq!(obj.len(), 166);
    for name in obj.keys() {
        let known = r.bots().iter().any(|b| {
            b.name.eq_ignore_ascii_case(name)
                || b.ua_tokens.iter().any(|t| t.eq_ignore_ascii_case(name))
        });
        assert!(known, "{name} missing");
    }
    for name in [
        "GPTBot",
        "ChatGPT-User",
        "OAI-SearchBot",
        "ClaudeBot",
        "PerplexityBot",
        "CCBot",
        "Applebot",
        "Amazonbot",
        "Bytespider",
        "meta-externalagent",
    ] {
        assert!(
            r.get(name).is_some()
                || r.bots()
                    .iter()
                    .any(|b| b.ua_tokens.iter().any(|t| t == name)),
            "{name}"
        );
    }
    assert_eq!(
        r.get("gptbot").and_then(|b| b.category),
        Some(Category::AiTraining)
    );
}

#[test]
fn published_addresses_find_their_owners() {
    let r = Registry::bundled();
    let names = |a: &str| {
        r.owners_of(ip(a))
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    };
    assert!(names("2001:4860:4801:10::1").contains(&"Googlebot".to_owned()));
    assert!(names("::ffff:157.55.39.1").contains(&"bingbot".to_owned()));
    assert!(names("8.8.8.8").is_empty());
    assert!(names("10.0.0.1").is_empty(), "private ranges are nobody's");
    // Every listed range of every bot finds that bot.
    for b in r.bots() {
        for range in b.ranges().take(3) {
            let first: IpAddr = match range {
                botscope_botid::IpRange::V4(a, _) => IpAddr::V4(a.into()),
                botscope_botid::IpRange::V6(a, _) => IpAddr::V6(a.into()),
            };
            assert!(
                r.owners_of(first).any(|o| o.name == b.name),
                "{} {range}",
                b.name
            );
        }
    }
}
