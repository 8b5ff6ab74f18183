//! Parse and match arbitrary bytes under both semantics; check the
//! invariants a verdict promises.
#![no_main]

use botscope_robotstxt::{Matcher, ParseOptions, Robots, RuleKind, Semantics};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The last line of the input doubles as a URL, so that the fuzzer
    // explores paths as well as files.
    let url = data.rsplit(|&b| b == b'\n').next().unwrap_or_default();
    let url = String::from_utf8_lossy(url);
    let robots = Robots::parse_with(data, &ParseOptions::unlimited());
    for semantics in [Semantics::Google, Semantics::Draft1996] {
        let m = Matcher::compile(data, semantics, &ParseOptions::unlimited());
        for agent in [
            "Googlebot",
            "",
            "*",
            "Mozilla/5.0 (compatible; bingbot/2.0)",
            &url,
        ] {
            for u in [&*url, "/", "https://example.com/a?b#c"] {
                let v = m.check(agent, u);
                if let Some(rule) = v.rule {
                    assert!(
                        rule.line >= 1 && rule.line <= robots.lines,
                        "deciding line {} of {}",
                        rule.line,
                        robots.lines
                    );
                }
                if !v.allowed {
                    let rule = v.rule.expect("a disallowed verdict names its rule");
                    assert_eq!(rule.kind, RuleKind::Disallow);
                    assert!(!rule.pattern.is_empty());
                }
            }
        }
        let _ = m.crawl_delay("Googlebot");
        // Usage preferences only where the agent may crawl, only the
        // vocabulary's categories with y/n, and only the policy's signals.
        let v = m.check("Googlebot", &url);
        let p = robots.preferences(
            "Googlebot",
            &botscope_robotstxt::path_of(url.as_bytes()),
            v.allowed,
        );
        assert!(v.allowed || p.usage.is_none());
        if let Some(u) = &p.usage {
            assert!(u.values().all(|x| x == "y" || x == "n"), "{u:?}");
            assert!(
                u.keys()
                    .all(|k| botscope_robotstxt::CATEGORIES.contains(&k.as_str())),
                "{u:?}"
            );
        }
        assert!(p.unreadable_lines.iter().all(|l| p.usage_lines.contains(l)));
        if let Some(s) = &p.content_signal {
            assert!(
                s.iter()
                    .all(|(k, v)| botscope_robotstxt::SIGNALS.contains(&k.as_str())
                        && botscope_robotstxt::SIGNAL_VALUES.contains(&v.as_str())),
                "{s:?}"
            );
        }
        // The path index answers as the rules in rank order do.
        for agent in ["Googlebot", &*url] {
            let sel = m.select(agent);
            let ix = m.index_selection(&sel, &mut 0);
            for u in [&*url, "/", "/#", "https://example.com/a?b#c"] {
                let path = botscope_robotstxt::path_of(u.as_bytes());
                let (a, b) = (
                    m.check_selected(&sel, &path),
                    m.check_indexed(&ix, &path, &mut 0),
                );
                assert_eq!(a.allowed, b.allowed, "{agent:?} {u:?}");
                assert_eq!(
                    a.rule.map(|r| r.line),
                    b.rule.map(|r| r.line),
                    "{agent:?} {u:?}"
                );
                // The URL's path and query as a log's request target.
                let target = u
                    .split_once("://")
                    .map_or(u, |(_, rest)| rest.find('/').map_or("/", |i| &rest[i..]));
                assert_eq!(
                    m.indexed_target_allowed(&ix, target.as_bytes(), &mut 0),
                    m.check_indexed_target(&ix, target.as_bytes(), &mut 0)
                        .allowed,
                    "{agent:?} {target:?}"
                );
            }
        }
        if semantics == Semantics::Google {
            // Real files compile to at most 2x their size; any input to at
            // most 3x (escaping triples non-ASCII bytes).
            assert!(
                m.heap_size() <= 3 * data.len() + 64,
                "{} bytes compiled from {}",
                m.heap_size(),
                data.len()
            );
        }
    }
});
