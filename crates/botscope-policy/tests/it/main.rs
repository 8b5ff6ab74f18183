//! The policy from the outside: files read with their findings, decisions
//! over requests of every kind, the presets.

use botscope_botid::Registry;
use botscope_policy::{
    Action, BROWSER, Facts, Identity, PRESETS, Rates, Severity, Signature, UNREGISTERED_BOT,
    list_bit, parse,
};

fn registry() -> Registry {
    Registry::bundled()
}

/// A request as the gate would see it.
fn req<'a>(path: &'a str, ua: &'a str) -> Facts<'a> {
    Facts {
        ip: "192.0.2.10".parse().expect("ip"),
        method: "GET",
        path,
        user_agent: ua,
        identity: Identity::Unclaimed,
        bot: None,
        category: BROWSER,
        signature: Signature::None,
        asn: None,
        lists: 0,
        robots: None,
        now_ms: 1_000_000,
        navigation: true,
        passed: false,
        trapped: botscope_policy::Trapped::NONE,
    }
}

fn compile(text: &str) -> botscope_policy::Policy {
    let p = parse("p.yaml", text, &registry());
    let errors: Vec<String> = p
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    p.policy.expect("policy")
}

fn messages(text: &str) -> Vec<String> {
    parse("p.yaml", text, &registry())
        .findings
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_key_must_hold_and_the_first_rule_decides() {
    let p = compile(
        "
rules:
  - name: google-private
    bot: Googlebot
    identity: verified
    path: /private/
    action: deny
  - name: google
    bot: googlebot
    action: allow
  - name: posts
    method: [post, PUT]
    action: challenge
  - name: office
    network: [198.51.100.0/24, 2001:db8::/32]
    action: allow
  - name: cloud
    asn: [AS16509, 14061]
    action: limit
  - name: curl
    user_agent: '^curl/'
    action: deny
  - name: php
    path: ['*.php$']
    action: deny
default: allow
",
    );
    let rates = Rates::default();
    let google = Facts {
        identity: Identity::Verified,
        bot: Some("Googlebot"),
        category: "search",
        ..req("/private/x", "Googlebot/2.1")
    };
    let d = p.decide(&google, &rates);
    assert_eq!((d.action, d.rule), (Action::Deny, "google-private"));
    // A claim that is not verified is not the first rule's.
    let claimed = Facts {
        identity: Identity::Unverifiable,
        ..google
    };
    assert_eq!(p.decide(&claimed, &rates).rule, "google");
    let post = Facts {
        method: "POST",
        ..req("/form", "Mozilla/5.0")
    };
    assert_eq!(p.decide(&post, &rates).action, Action::Challenge);
    let office = Facts {
        ip: "198.51.100.77".parse().expect("ip"),
        ..req("/", "Mozilla/5.0")
    };
    assert_eq!(p.decide(&office, &rates).rule, "office");
    let v6 = Facts {
        ip: "2001:db8:5::1".parse().expect("ip"),
        ..req("/", "Mozilla/5.0")
    };
    assert_eq!(p.decide(&v6, &rates).rule, "office");
    let cloud = Facts {
        asn: Some(14061),
        ..req("/", "Mozilla/5.0")
    };
    assert_eq!(p.decide(&cloud, &rates).rule, "cloud");
    assert_eq!(p.decide(&req("/", "curl/8.5.0"), &rates).rule, "curl");
    assert_eq!(p.decide(&req("/", "libcurl/8.5.0"), &rates).rule, "default");
    // Paths as robots.txt patterns, matched by the engine.
    assert_eq!(p.decide(&req("/index.php", "x"), &rates).rule, "php");
    assert_eq!(
        p.decide(&req("/index.php?a=1", "x"), &rates).rule,
        "default"
    );
    assert_eq!(p.decide(&req("/a/b.php", "x"), &rates).rule, "php");
    let d = p.decide(&req("/", "Mozilla/5.0"), &rates);
    assert_eq!(
        (d.action, d.rule, d.index),
        (Action::Allow, "default", None)
    );
}

#[test]
fn labels_add_and_go_on_and_robots_disallowed_reads_the_served_file() {
    let p = compile(
        "
rules:
  - name: tag-robots
    category: [unregistered-bot, search]
    action: label
    headers: {X-Robot: 'yes'}
  - name: breakers
    robots: disallowed
    category: unregistered-bot
    action: deny
default: allow
",
    );
    assert_eq!(
        p.rules[0].headers,
        vec![("X-Robot".to_owned(), "yes".to_owned())]
    );
    let matcher = botscope_robotstxt::Matcher::new(b"User-agent: *\nDisallow: /private/\n");
    let closed = |path: &str| {
        !matcher
            .check_path("python-requests", path.as_bytes())
            .allowed
    };
    let rates = Rates::default();
    let scraper = |path| Facts {
        category: UNREGISTERED_BOT,
        robots: Some(&closed),
        ..req(path, "python-requests/2.31")
    };
    let d = p.decide(&scraper("/private/a"), &rates);
    assert_eq!(
        (d.action, d.rule, d.labels.clone()),
        (Action::Deny, "breakers", vec![0])
    );
    let d = p.decide(&scraper("/public"), &rates);
    assert_eq!(
        (d.action, d.rule, d.labels.clone()),
        (Action::Allow, "default", vec![0])
    );
    // Without a robots.txt nothing is closed.
    let d = p.decide(
        &Facts {
            robots: None,
            ..scraper("/private/a")
        },
        &rates,
    );
    assert_eq!(d.rule, "default");
}

#[test]
fn lists_signatures_and_identities_are_sets() {
    let p = compile(
        "
default: allow
rules:
  - name: caught
    list: [suspect-bots, disobedient-bots]
    action: deny
  - name: signed
    signature: verified
    action: allow
  - name: unproven
    identity: [unverifiable, unknown]
    action: limit
",
    );
    let rates = Rates::default();
    let listed = Facts {
        lists: list_bit("disobedient-bots").expect("bit"),
        ..req("/", "x")
    };
    assert_eq!(p.decide(&listed, &rates).rule, "caught");
    let other = Facts {
        lists: list_bit("other-bots").expect("bit"),
        ..req("/", "x")
    };
    assert_eq!(p.decide(&other, &rates).rule, "default");
    let signed = Facts {
        signature: Signature::Verified,
        ..req("/", "x")
    };
    assert_eq!(p.decide(&signed, &rates).rule, "signed");
    for (id, rule) in [
        (Identity::Unknown, "unproven"),
        (Identity::Unverifiable, "unproven"),
        (Identity::Verified, "default"),
    ] {
        let f = Facts {
            identity: id,
            ..req("/", "x")
        };
        assert_eq!(p.decide(&f, &rates).rule, rule, "{id:?}");
    }
}

#[test]
fn rates_count_only_requests_the_rule_otherwise_matches() {
    let p = compile(
        "
default: allow
rules:
  - name: api-too-fast
    path: /api/
    rate: 3/s per ip
    action: limit
  - name: per-bot
    identity: verified
    rate: 2/s per identity
    action: limit
",
    );
    let rates = Rates::default();
    // Requests elsewhere do not count against the API's rate.
    for _ in 0..10 {
        assert_eq!(p.decide(&req("/page", "x"), &rates).rule, "default");
    }
    let answers: Vec<&str> = (0..5)
        .map(|_| p.decide(&req("/api/x", "x"), &rates).rule)
        .collect();
    assert_eq!(
        answers,
        [
            "default",
            "default",
            "default",
            "api-too-fast",
            "api-too-fast"
        ]
    );
    let d = p.decide(&req("/api/x", "x"), &rates);
    // Three in a burst, then one each 333 ms: the next in 332.
    assert_eq!(d.retry_after_ms, Some(332));
    // A verified bot is one key whatever its address.
    let bot = |ip: &str| Facts {
        ip: ip.parse().expect("ip"),
        identity: Identity::Verified,
        bot: Some("Googlebot"),
        category: "search",
        ..req("/page", "Googlebot")
    };
    assert_eq!(p.decide(&bot("66.249.66.1"), &rates).rule, "default");
    assert_eq!(p.decide(&bot("66.249.66.2"), &rates).rule, "default");
    assert_eq!(p.decide(&bot("66.249.66.3"), &rates).rule, "per-bot");
}

/// `charge`: a price is required and read exactly; a price elsewhere,
/// or a charge of a verified search engine, is warned of; robots.txt and
/// /.well-known/ are never charged unless a rule names them.
#[test]
fn charge_rules() {
    let m = messages(
        "version: 1\ndefault: allow\nrules:\n  - name: no-price\n    action: charge\n    path: [/a/]\n  - name: bad-price\n    action: charge\n    price: USD 0,01\n  - name: free\n    action: charge\n    price: USD 0\n  - name: stray\n    action: allow\n    price: USD 1\n",
    );
    for w in [
        "p.yaml:4: error: rule `no-price`: a `charge` rule needs a `price` (a currency and an amount, e.g. `USD 0.01`)",
        "p.yaml:9: error: rule `bad-price`: `price`: `0,01` is not a decimal amount",
        "p.yaml:12: error: rule `free`: `price` of nothing: to let crawlers in free, use `allow`",
        "p.yaml:13: warning: rule `stray`: `price` is asked by `charge` rules only; this rule's is not",
    ] {
        assert!(m.iter().any(|x| x == w), "missing {w}\nin {m:#?}");
    }
    let p = parse(
        "p.yaml",
        "version: 1\ndefault: allow\nrules:\n  - name: everyone-pays\n    action: charge\n    price: EUR 0.002\n",
        &registry(),
    );
    let policy = p.policy.expect("a policy");
    assert_eq!(
        policy.rules[0].price.map(|p| p.to_string()).as_deref(),
        Some("EUR 0.002")
    );
    assert!(
        p.findings.iter().any(|f| f
            .message
            .contains("a verified search engine's request for / is charged")),
        "{:?}",
        p.findings
    );
    let rates = Rates::new(1000);
    let f = |path| req(path, "PayingBot/1.0");
    assert_eq!(policy.decide(&f("/news/x"), &rates).action, Action::Charge);
    assert_eq!(
        policy.decide(&f("/robots.txt"), &rates).action,
        Action::Allow
    );
    assert_eq!(
        policy
            .decide(&f("/.well-known/http-message-signatures-directory"), &rates)
            .action,
        Action::Allow
    );
}

/// A `license` rule: read, warned of when it would ask a search engine
/// for a licence, never applied to the protocol files.
#[test]
fn license_rules() {
    let p = parse(
        "p.yaml",
        "version: 1\ndefault: allow\nrules:\n  - name: licensed\n    action: license\n",
        &registry(),
    );
    let policy = p.policy.expect("a policy");
    assert!(
        p.findings.iter().any(|f| f
            .message
            .contains("a verified search engine's request for / needs an RSL licence token")),
        "{:?}",
        p.findings
    );
    let rates = Rates::new(1000);
    let f = |path| req(path, "LicensedBot/1.0");
    assert_eq!(policy.decide(&f("/news/x"), &rates).action, Action::License);
    assert_eq!(
        policy.decide(&f("/robots.txt"), &rates).action,
        Action::Allow
    );
    let p = parse(
        "p.yaml",
        "version: 1\ndefault: license\nrules: []\n",
        &registry(),
    );
    assert!(
        p.policy.is_none()
            || p.findings
                .iter()
                .any(|f| f.message.contains("`default` must be one of"))
    );
}

/// A price on a path robots.txt closes: no obedient crawler ever pays.
#[test]
fn a_price_robots_txt_closes_is_warned_of() {
    let p = compile(
        "version: 1\ndefault: allow\nrules:\n  - name: news\n    action: charge\n    price: USD 0.01\n    path: [/news/, /open/*.html, /archive$]\n",
    );
    let w = botscope_policy::priced_but_closed(
        &p,
        b"User-agent: *\nDisallow: /news/\nDisallow: /archive\n\nUser-agent: GPTBot\nDisallow: /\n",
    );
    let shown: Vec<String> = w.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "p.yaml:4: warning: rule `news`: `/news/` is priced, but robots.txt closes /news/ to crawlers (its line 2): a crawler that obeys it never asks, so never pays",
            "p.yaml:4: warning: rule `news`: `/archive$` is priced, but robots.txt closes /archive to crawlers (its line 3): a crawler that obeys it never asks, so never pays",
        ]
    );
    assert!(botscope_policy::priced_but_closed(&p, b"User-agent: *\nAllow: /\n").is_empty());
}

#[test]
fn errors_name_file_line_and_rule() {
    let m = messages(
        "rules:
  - name: a
    action: deny
    bot: Googlebto
  - name: b
    action: maybe
  - name: a
    action: allow
  - name: c
    action: deny
    category: ai-trainer
    identity: sure
    user_agnet: x
  - name: d
    action: deny
    path: private/
    rate: 10/day per ip
    network: 10.0.0.0/33
",
    );
    let want = [
        "p.yaml:4: error: rule `a`: `bot: Googlebto` is not in the registry (did you mean Googlebot?)",
        "p.yaml:6: error: rule `b`: `action` must be one of allow, deny, limit, challenge, label, charge, license",
        "p.yaml:7: error: rule `a`: a rule with this name is already defined at line 2",
        "p.yaml:11: error: rule `c`: `category: ai-trainer` is not one of search, ai-training, ai-search, ai-assistant, seo, social, monitoring, archive, feed, other, unregistered-bot, browser",
        "p.yaml:12: error: rule `c`: `identity: sure` is not one of verified, spoofed, unverifiable, unknown, unclaimed",
        "p.yaml:13: error: rule `c`: unknown key `user_agnet` (did you mean `user_agent`?)",
        "p.yaml:16: error: rule `d`: `path: private/` must start with / or * (a robots.txt path pattern)",
        "p.yaml:17: error: rule `d`: `rate`: `day` is not a unit of time: s, min or h",
        "p.yaml:18: error: rule `d`: `network: 10.0.0.0/33` is not an address or CIDR network",
    ];
    for w in want {
        assert!(m.iter().any(|x| x == w), "missing {w}\nin {m:#?}");
    }
    assert!(parse("p.yaml", "rules: [", &registry()).policy.is_none());
    // No `default:`: a file cut short reads as a policy with fewer rules,
    // never as one that allows what no rule decides.
    let cut = "rules:\n  - name: a\n    action: deny\n    path: /private/\n";
    assert!(parse("p.yaml", cut, &registry()).policy.is_none());
    assert!(
        messages(cut)[0].contains("no `default:`"),
        "{:?}",
        messages(cut)
    );
    let m = messages(
        "rules:\n  - name: x\n    action: deny\n  - name: x2\n    action: deny\nrules: []\n",
    );
    assert!(
        m[0].contains("not valid YAML") && m[0].to_lowercase().contains("duplicate key"),
        "{m:?}"
    );
    let m = messages("default: label\nrules: []\n");
    assert_eq!(
        m,
        ["p.yaml:1: error: `default` must be one of allow, deny, limit, challenge"]
    );
    let m = messages("ruels: []\n");
    assert!(
        m.iter()
            .any(|x| x.contains("unknown top-level key `ruels`")),
        "{m:?}"
    );
}

#[test]
fn path_case_insensitive_folds_paths_and_patterns_but_not_escapes() {
    let p = compile(
        "default: allow\npath_case: insensitive\nrules:\n  - name: closed\n    action: deny\n    path: [/Private/, /caf%C3%A9/]\n",
    );
    for path in [
        "/private/x",
        "/PRIVATE/x",
        "/Private/x",
        "/CAF%c3%a9/x",
        "/Caf\u{e9}/x",
    ] {
        assert_eq!(
            p.decide(&req(path, "x"), &Rates::new(10)).rule,
            "closed",
            "{path}"
        );
    }
    let p = compile(
        "default: allow\nrules:\n  - name: closed\n    action: deny\n    path: [/Private/]\n",
    );
    assert_eq!(
        p.decide(&req("/private/x", "x"), &Rates::new(10)).rule,
        "default"
    );
    let m = messages("default: allow\npath_case: maybe\nrules: []\n");
    assert!(
        m[0].contains("`path_case` must be sensitive or insensitive"),
        "{m:?}"
    );
}

#[test]
fn regular_expressions_and_files_over_their_limits_are_refused() {
    let long = format!(
        "default: allow\nrules:\n  - name: r\n    action: deny\n    user_agent: '{}'\n",
        "a".repeat(2_000)
    );
    assert!(
        messages(&long)[0].contains("the limit is 1024"),
        "{:?}",
        messages(&long)
    );
    let big =
        "default: allow\nrules:\n  - name: r\n    action: deny\n    user_agent: '(\\w{50}){50}'\n";
    let m = messages(big);
    assert!(m[0].contains("compiles to over"), "{m:?}");
    assert!(parse("p.yaml", big, &registry()).policy.is_none());
    let huge = "#".repeat(botscope_policy::MAX_POLICY_BYTES + 1);
    assert!(messages(&huge)[0].contains("the limit is"));
    let mut many = String::from("default: allow\nrules:\n");
    for i in 0..=botscope_policy::MAX_RULES {
        many.push_str(&format!("  - {{name: r{i}, action: allow, path: /p{i}}}\n"));
    }
    assert!(messages(&many)[0].contains("rules; the limit is 1000"));
    // A refused 200 KB pattern, bot or key is quoted by a bounded prefix.
    for (key, value) in [
        ("path", format!("/{}", "p".repeat(200_000))),
        ("bot", "b".repeat(200_000)),
    ] {
        let m = messages(&format!(
            "default: allow\nrules:\n  - name: r\n    action: deny\n    {key}: '{value}'\n"
        ));
        assert!(m[0].len() < 400, "{} bytes: {}", m[0].len(), &m[0][..400]);
        assert!(
            m[0].contains("(200001 bytes)") || m[0].contains("(200000 bytes)"),
            "{}",
            m[0]
        );
    }
    let m = messages(&format!("{}: 1\nrules: []\n", "k".repeat(200_000)));
    assert!(m[0].len() < 400, "{}", &m[0][..400]);
    // Anchors and aliases (the billion laughs) are refused by the reader.
    let laughs = "a: &a [x, x]\nb: [*a, *a]\nrules: []\n";
    assert!(parse("p.yaml", laughs, &registry()).policy.is_none());
    // Control characters of the file are escaped in messages.
    let m = messages(
        "default: allow\nrules:\n  - name: r\n    action: deny\n    bot: \"Evil\\e[2J\"\n",
    );
    assert!(m[0].contains("\\x1b") && !m[0].contains('\x1b'), "{m:?}");
}

/// Protego's CVE-2026-55520 class (many `*` made matching exponential):
/// a path pattern of 50,000 wildcards is over the 2,048-byte limit and
/// refused; one at the limit (1,000 `*a`) against a 64 KiB request path
/// is matched in counted work linear in the path and the pattern, and
/// the policy decides on it.
#[test]
fn a_pattern_of_many_wildcards_costs_linear_work_or_is_refused() {
    let mut tens_of_thousands = String::from("/");
    for _ in 0..50_000 {
        tens_of_thousands.push_str("*a");
    }
    let m = messages(&format!(
        "default: allow\nrules:\n  - name: r\n    action: deny\n    path: '{tens_of_thousands}*b'\n"
    ));
    assert!(m[0].contains("is over 2048 bytes"), "{m:?}");

    let pattern = format!("/{}*b", "*a".repeat(1_000));
    assert!(pattern.len() <= botscope_policy::MAX_PATTERN_BYTES);
    let p = compile(&format!(
        "default: allow\nrules:\n  - name: r\n    action: deny\n    path: '{pattern}'\n"
    ));
    let set = botscope_policy::PathSet::new(vec![pattern.clone()]);
    let rates = Rates::default();
    let mut works = Vec::new();
    for m in [32 * 1024, 64 * 1024] {
        // `ab` then `a`s and no `b` after them: every segment found,
        // then the path searched to its end.
        let path = format!("/ab{}", "a".repeat(m));
        let mut work = 0;
        assert!(!set.matches_counted(&path, &mut work));
        let bound = (path.len() as u64
            + (botscope_robotstxt::SCAN_PER_PATTERN_BYTE + 1) * pattern.len() as u64)
            / 32
            + 64;
        assert!(work <= bound, "{m}: {work} units, bound {bound}");
        assert!(
            work >= m as u64 / 32,
            "{m}: {work} units: the search is counted"
        );
        works.push(work);
        assert_eq!(p.decide(&req(&path, "x"), &rates).action, Action::Allow);
        let closed = format!("{path}b");
        assert!(set.matches_counted(&closed, &mut 0));
        assert_eq!(p.decide(&req(&closed, "x"), &rates).action, Action::Deny);
    }
    assert!(works[1] <= 2 * works[0] + 64, "{works:?}: not linear");
}

#[test]
fn rules_no_request_can_reach_are_warned_about() {
    let p = parse(
        "p.yaml",
        "
rules:
  - name: all-ai
    category: [ai-training, ai-assistant]
    action: deny
  - name: gptbot
    bot: GPTBot
    category: ai-training
    action: allow
  - name: slow
    rate: 1/s per ip
    action: limit
  - name: after-rate
    path: /x
    action: allow
  - name: anything
    action: allow
  - name: never
    path: /y
    action: deny
default: allow
",
        &registry(),
    );
    let m: Vec<String> = p.findings.iter().map(ToString::to_string).collect();
    assert_eq!(
        m,
        [
            "p.yaml:6: warning: rule `gptbot`: no request can reach this rule: `all-ai` (line 3) decides every request it matches (deny)",
            "p.yaml:18: warning: rule `never`: no request can reach this rule: `anything` (line 16) decides every request it matches (allow)",
        ]
    );
    // Warnings do not stop the policy.
    assert!(p.policy.is_some());
}

#[test]
fn the_presets_are_clean_and_do_what_they_say() {
    for (name, _, text) in PRESETS {
        let p = parse(name, text, &registry());
        assert!(p.findings.is_empty(), "{name}: {:#?}", p.findings);
        assert!(p.policy.is_some());
    }
    let balanced = compile(botscope_policy::preset("balanced").expect("preset"));
    let block = compile(botscope_policy::preset("block-ai-training").expect("preset"));
    let strict = compile(botscope_policy::preset("strict").expect("preset"));
    let rates = Rates::default();
    let verified = |bot, category, path| Facts {
        identity: Identity::Verified,
        bot: Some(bot),
        category,
        ..req(path, "x")
    };
    // Search engines work under every preset; AI training crawlers read
    // robots.txt under every preset, and are refused pages by two.
    for p in [&balanced, &block, &strict] {
        assert_eq!(
            p.decide(&verified("Googlebot", "search", "/a"), &rates)
                .action,
            Action::Allow
        );
        assert_eq!(
            p.decide(&verified("GPTBot", "ai-training", "/robots.txt"), &rates)
                .action,
            Action::Allow
        );
        assert_eq!(
            p.decide(
                &Facts {
                    identity: Identity::Spoofed,
                    ..verified("Googlebot", "search", "/a")
                },
                &rates
            )
            .action,
            Action::Deny
        );
    }
    assert_eq!(
        balanced
            .decide(&verified("GPTBot", "ai-training", "/a"), &rates)
            .action,
        Action::Allow
    );
    assert_eq!(
        block
            .decide(&verified("GPTBot", "ai-training", "/a"), &rates)
            .action,
        Action::Deny
    );
    assert_eq!(
        strict
            .decide(&verified("GPTBot", "ai-training", "/a"), &rates)
            .action,
        Action::Deny
    );
    // Feeds, robots.txt and /.well-known/ are never challenged, whoever
    // asks and however fast.
    for p in [&balanced, &block, &strict] {
        for path in [
            "/robots.txt",
            "/.well-known/http-message-signatures-directory",
            "/feed",
            "/blog/feed/",
            "/news.rss",
        ] {
            for _ in 0..2_000 {
                let d = p.decide(&req(path, "Mozilla/5.0"), &rates);
                assert_ne!(d.action, Action::Challenge, "{path}: {d:?}");
            }
        }
    }
    // A browser that hammers is challenged; one that reads is not.
    let rates = Rates::default();
    let fast: Vec<Action> = (0..700)
        .map(|_| balanced.decide(&req("/page", "Mozilla/5.0"), &rates).action)
        .collect();
    assert_eq!(fast[0], Action::Allow);
    assert_eq!(fast[699], Action::Challenge);
    // The python-requests scraper that breaks robots.txt is refused.
    let matcher = botscope_robotstxt::Matcher::new(b"User-agent: *\nDisallow: /cart/\n");
    let closed = |path: &str| {
        !matcher
            .check_path("python-requests", path.as_bytes())
            .allowed
    };
    let scraper = Facts {
        category: UNREGISTERED_BOT,
        robots: Some(&closed),
        ..req("/cart/1", "python-requests/2.31")
    };
    let d = balanced.decide(&scraper, &rates);
    assert_eq!((d.action, d.rule), (Action::Deny, "robots-txt-breakers"));
    assert_eq!(
        strict
            .decide(
                &Facts {
                    path: "/a",
                    ..scraper
                },
                &rates
            )
            .rule,
        "unregistered-robots"
    );
}

/// Found by a probe: a one-rule `action: challenge` policy was "clean"
/// and challenged `/robots.txt`. The protocol files are now refused or
/// challenged only by a rule that names them, and `policy check` warns on
/// a policy that refuses browsers or verified search engines, challenges
/// them, or counts keys slower than one a minute.
#[test]
fn the_protocol_files_and_who_a_policy_hurts() {
    let challenge_all = "rules:\n  - {name: everyone, action: challenge}\ndefault: allow\n";
    let p = compile(challenge_all);
    for path in [
        "/robots.txt",
        "/robots.txt?x=1",
        "/./robots.txt",
        "/.well-known/http-message-signatures-directory",
    ] {
        let d = p.decide(&req(path, "Firefox"), &Rates::default());
        assert_eq!((d.action, d.rule), (Action::Allow, "default"), "{path}");
    }
    assert_eq!(
        p.decide(&req("/", "Firefox"), &Rates::default()).action,
        Action::Challenge
    );
    assert_eq!(
        messages(challenge_all),
        [
            "p.yaml:2: warning: rule `everyone`: a verified search engine's request for / is challenged: search engines do not pass challenges, and a site they cannot crawl leaves their results; allow `identity: verified` before this rule"
        ]
    );
    // A rule that names robots.txt refuses it, and is warned about.
    let named = "rules:\n  - {name: no-robots, path: /robots.txt, action: deny}\ndefault: allow\n";
    let named_policy = compile(named);
    let d = named_policy.decide(&req("/robots.txt", "Firefox"), &Rates::default());
    assert_eq!((d.action, d.rule), (Action::Deny, "no-robots"));
    assert!(
        messages(named)
            .iter()
            .any(|m| m.contains("rule `no-robots`: /robots.txt is refused")),
        "{:?}",
        messages(named)
    );
    // A default that refuses: browsers and search engines both.
    let m = messages("rules: []\ndefault: deny\n");
    assert!(
        m.iter()
            .any(|m| m.contains("a verified search engine's request for / is refused")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|m| m.contains("a person's browser asking for / is refused")),
        "{m:?}"
    );
    assert!(!m.iter().any(|m| m.contains("robots.txt")), "{m:?}");
    // Keys that live an hour.
    let m =
        messages("rules:\n  - {name: hourly, rate: 1/h per ip, action: limit}\ndefault: allow\n");
    assert!(
        m.iter().any(|m| m
            .contains("rule `hourly`: a rate slower than one request a minute (one every 3600 s)")),
        "{m:?}"
    );
    assert!(
        messages("rules:\n  - {name: ok, rate: 1/min per ip, action: limit}\ndefault: allow\n")
            .is_empty()
    );
}

/// Found by a probe: `browsers-too-fast` counted images, stylesheets and
/// scripts, so paging a gallery of 60 thumbnails every few seconds got
/// pages of broken images (a subresource was answered with the challenge
/// page); and a pass farmed without JavaScript let every request through
/// for a day. Pages count, subresources are never challenged, and a pass
/// raises the limits tenfold.
#[test]
fn pages_count_subresources_are_never_challenged_and_a_pass_raises_limits() {
    let policy = compile(botscope_policy::preset("balanced").expect("preset"));
    let rates = Rates::default();
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";
    let at = |path: &'static str, now_ms: u64, navigation: bool, passed: bool| Facts {
        ip: "198.51.100.20".parse().expect("ip"),
        now_ms,
        navigation,
        passed,
        ..req(path, firefox)
    };
    // A person paging a gallery: a page and its 60 thumbnails every 3 s,
    // for ten minutes. Nothing challenged, nothing limited.
    for page in 0..200u64 {
        let now = 1_000_000 + page * 3_000;
        let d = policy.decide(&at("/gallery", now, true, false), &rates);
        assert_eq!(d.action, Action::Allow, "page {page}: {}", d.rule);
        for _ in 0..60 {
            let d = policy.decide(&at("/thumb.jpg", now, false, false), &rates);
            assert_eq!(
                d.action,
                Action::Allow,
                "thumbnail on page {page}: {}",
                d.rule
            );
        }
    }
    // A scraper posing as a browser: its 601st page in a minute is
    // challenged.
    let scraper = |n: u64, navigation: bool, passed: bool| Facts {
        ip: "198.18.1.1".parse().expect("ip"),
        ..at("/item", 5_000_000 + n / 1_000, navigation, passed)
    };
    let first_challenge = (0..700)
        .find(|&n| policy.decide(&scraper(n, true, false), &rates).action == Action::Challenge);
    assert_eq!(first_challenge, Some(600));
    // … and one that marks every request a subresource is limited at ten
    // times the page rate, never challenged.
    let small = compile(
        "default: allow\nrules:\n  - {name: fast, category: browser, rate: 10/min per ip, action: challenge}\n",
    );
    let client = |ip: &'static str, navigation: bool, passed: bool| Facts {
        ip: ip.parse().expect("ip"),
        ..at("/item", 7_000_000, navigation, passed)
    };
    let answers: Vec<(Action, &str)> = (0..110)
        .map(|_| {
            let d = small.decide(&client("198.18.2.1", false, false), &rates);
            (d.action, d.rule)
        })
        .collect();
    assert!(answers.iter().all(|(a, _)| *a != Action::Challenge));
    assert_eq!(
        answers.iter().position(|(a, _)| *a == Action::Limit),
        Some(100)
    );
    assert_eq!(answers[100].1, "fast");
    // With a pass: ten times the page rate, then challenged again.
    let again = (0..200).find(|_| {
        small
            .decide(&client("198.18.3.1", true, true), &rates)
            .action
            == Action::Challenge
    });
    assert_eq!(again, Some(100));
    // A challenge rule without a rate (a list) does not apply to a pass
    // holder, and limits a subresource instead of challenging it.
    let listed = |navigation, passed| Facts {
        ip: "198.18.4.1".parse().expect("ip"),
        lists: list_bit("undeclared-bots").expect("list"),
        ..at("/a", 20_000_000, navigation, passed)
    };
    let d = policy.decide(&listed(true, false), &rates);
    assert_eq!(
        (d.action, d.rule),
        (Action::Challenge, "browsers-your-logs-caught-crawling")
    );
    assert_eq!(
        policy.decide(&listed(true, true), &rates).action,
        Action::Allow
    );
    let d = policy.decide(&listed(false, false), &rates);
    assert_eq!((d.action, d.retry_after_ms), (Action::Limit, Some(60_000)));
    // Claims not decided yet: a generous limit (120 a minute).
    let unproven = |n: u64| Facts {
        ip: "198.18.5.1".parse().expect("ip"),
        identity: Identity::Unverifiable,
        bot: Some("Googlebot"),
        category: "search",
        ..at("/p", 30_000_000 + n / 1_000, true, false)
    };
    let limited = (0..200).find(|&n| policy.decide(&unproven(n), &rates).action == Action::Limit);
    assert_eq!(limited, Some(120));
    assert_eq!(
        policy.decide(&unproven(300), &rates).rule,
        "claims-not-proven-yet"
    );
    // Feeds anywhere in the site.
    for feed in ["/blog/index.xml", "/news/feed.xml", "/index.xml"] {
        assert_eq!(
            policy.decide(&at(feed, 1, true, false), &rates).rule,
            "feeds",
            "{feed}"
        );
    }
}

/// docs/gate.md's recipes, as written there: each compiles without a
/// finding under `rules:`, and decides what its text says.
#[test]
fn the_guides_recipes_do_what_they_say() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/gate.md"),
    )
    .expect("docs/gate.md");
    let recipes = &doc
        [doc.find("### Recipes").expect("recipes")..doc.find("## The presets").expect("presets")];
    let blocks: Vec<&str> = recipes
        .split("```yaml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").expect("closed")])
        .collect();
    assert_eq!(blocks.len(), 5);
    let all = format!("default: allow\nrules:\n{}", blocks.concat());
    assert!(messages(&all).is_empty(), "{:?}", messages(&all));
    let p = compile(&all);
    let rates = Rates::default();
    let at = |ip: &'static str, f: Facts<'static>| Facts {
        ip: ip.parse().expect("ip"),
        ..f
    };
    let rule = |f: &Facts| p.decide(f, &rates).rule.to_owned();
    assert_eq!(rule(&at("198.51.100.9", req("/", "curl/8"))), "office");
    assert_eq!(rule(&at("2001:db8:10::5", req("/", "curl/8"))), "office");
    assert_eq!(
        rule(&at(
            "203.0.113.4",
            req("/", "UptimeRobot/2.0 (+http://www.uptimerobot.com/)")
        )),
        "uptime-monitor"
    );
    assert_eq!(
        rule(&at("192.0.2.4", req("/", "UptimeRobot/2.0"))),
        "default"
    );
    let hosted = Facts {
        asn: Some(64501),
        ..req("/", "Firefox")
    };
    assert_eq!(p.decide(&hosted, &rates).action, Action::Deny);
    let post = |i: u64| Facts {
        method: "POST",
        now_ms: 1_000 + i,
        ..req("/login", "Firefox")
    };
    let limited = (0..20).find(|&i| p.decide(&post(i), &rates).action == Action::Limit);
    assert_eq!(limited, Some(10));
    assert_eq!(
        rule(&req("/login", "Firefox")),
        "default",
        "GET is not a login"
    );
    assert_eq!(rule(&req("/static/app.css", "Firefox")), "static-assets");
    assert_eq!(
        rule(&req("/img/a.png?v=2", "Firefox")),
        "default",
        "a query after .png$"
    );
    assert_eq!(rule(&req("/img/a.png", "Firefox")), "static-assets");
    let assistant = Facts {
        category: "ai-assistant",
        ..req("/", "ChatGPT-User/1.0")
    };
    let d = p.decide(&assistant, &rates);
    assert_eq!(
        (d.action, d.rule, d.labels.len()),
        (Action::Allow, "default", 1)
    );
}

#[test]
fn trapped_rules_read_the_catch_by_kind_and_age() {
    use botscope_policy::{TrapKind, Trapped};
    let p = compile(
        "
traps:
  kinds: [robots, script, anchor]
  hold: 2d
  window: 5min
  widen: 3
  exempt: [192.0.2.0/24, 2001:db8::/32]
rules:
  - name: liars
    trapped: [robots, script]
    action: deny
  - name: recent-anchor
    trapped: {kind: anchor, within: 1h}
    action: challenge
  - name: any-trap
    trapped: any
    action: limit
default: allow
",
    );
    let t = p.traps.as_ref().expect("traps");
    assert_eq!(t.kinds, 0b111);
    assert_eq!(
        (t.hold_ms, t.window_ms, t.widen),
        (2 * 86_400_000, 300_000, 3)
    );
    assert_eq!(t.exempt.len(), 2);
    assert!(t.has(TrapKind::Anchor));
    let rates = Rates::default();
    let decide = |trapped: Trapped| {
        let f = Facts {
            trapped,
            ..req("/", "Mozilla/5.0")
        };
        let d = p.decide(&f, &rates);
        (d.action, d.rule.to_owned())
    };
    assert_eq!(decide(Trapped::NONE), (Action::Allow, "default".into()));
    let robots = Trapped::NONE.with(TrapKind::Robots, 86_000_000);
    assert_eq!(decide(robots), (Action::Deny, "liars".into()));
    let anchor = |age| Trapped::NONE.with(TrapKind::Anchor, age);
    assert_eq!(
        decide(anchor(3_600_000)),
        (Action::Challenge, "recent-anchor".into())
    );
    // Older than the rule's `within`: the next rule that holds.
    assert_eq!(
        decide(anchor(3_600_001)),
        (Action::Limit, "any-trap".into())
    );
    // The latest catch of a kind counts.
    assert!(
        anchor(9_000_000)
            .with(TrapKind::Anchor, 10)
            .by(TrapKind::Anchor.bit(), Some(10))
    );
    assert_eq!(t.tarpit, None);
    let on = compile("traps: {kinds: robots, tarpit: on}\nrules: []\ndefault: allow\n");
    assert_eq!(
        on.traps.and_then(|t| t.tarpit),
        Some(botscope_policy::Tarpit::default())
    );
    let set =
        compile("traps: {kinds: robots, tarpit: {max: 10s, held: 8}}\nrules: []\ndefault: allow\n");
    assert_eq!(
        set.traps.and_then(|t| t.tarpit),
        Some(botscope_policy::Tarpit {
            max_ms: 10_000,
            held: 8
        })
    );
    // Without `traps:`, nothing is set up and no rule names a catch.
    assert!(compile("rules: []\ndefault: allow\n").traps.is_none());
}

#[test]
fn trap_settings_that_cannot_be_read_are_errors() {
    let cases = [
        (
            "traps: {kinds: [robots, honey]}\nrules: []\ndefault: allow\n",
            "`traps: kinds: honey` is not one of robots, script, anchor, any",
        ),
        (
            "traps: {kinds: robots, hold: forever}\nrules: []\ndefault: allow\n",
            "`traps: hold`: `forever` is not a span of time",
        ),
        (
            "traps: {kinds: robots, hold: 31d}\nrules: []\ndefault: allow\n",
            "at most 30 days",
        ),
        (
            "traps: {kinds: robots, widen: -1}\nrules: []\ndefault: allow\n",
            "`traps: widen` must be a number",
        ),
        (
            "traps: {kinds: robots, exempt: [nowhere]}\nrules: []\ndefault: allow\n",
            "`traps: exempt: nowhere` is not an address",
        ),
        (
            "traps: {kinds: robots, hodl: 1d}\nrules: []\ndefault: allow\n",
            "unknown key `traps: hodl` (did you mean `hold`?)",
        ),
        (
            "traps: {hold: 1d}\nrules: []\ndefault: allow\n",
            "`traps` needs `kinds:`",
        ),
        (
            "traps: {kinds: robots, tarpit: {max: 1h}}\nrules: []\ndefault: allow\n",
            "`traps: tarpit: max` must be a span of time up to 2min",
        ),
        (
            "traps: {kinds: robots, tarpit: {held: 0}}\nrules: []\ndefault: allow\n",
            "`traps: tarpit: held` must be a number",
        ),
        (
            "traps: {kinds: robots, tarpit: slow}\nrules: []\ndefault: allow\n",
            "`traps: tarpit` is `on` or a mapping",
        ),
        (
            "rules:\n  - name: t\n    trapped: maybe\n    action: deny\ndefault: allow\n",
            "`trapped: maybe` is not one of robots, script, anchor, any",
        ),
        (
            "rules:\n  - name: t\n    trapped: {kind: robots, within: 0s}\n    action: deny\ndefault: allow\n",
            "`trapped: within`: `0s` must be more than nothing",
        ),
        (
            "rules:\n  - name: t\n    trapped: {since: 1h}\n    action: deny\ndefault: allow\n",
            "`trapped` has `kind` and `within`, not `since`",
        ),
    ];
    for (text, want) in cases {
        let got = messages(text);
        assert!(
            got.iter().any(|m| m.contains(want)),
            "{text}\n{want}\n{got:?}"
        );
    }
}

#[test]
fn a_trapped_rule_no_trap_can_set_is_warned_of() {
    let off = "rules:\n  - name: t\n    trapped: robots\n    action: deny\ndefault: allow\n";
    assert!(
        messages(off).iter().any(|m| m.contains("no `traps:`")),
        "{:?}",
        messages(off)
    );
    let other = format!("traps: {{kinds: anchor}}\n{off}");
    assert!(
        messages(&other)
            .iter()
            .any(|m| m.contains("does not switch on"))
    );
    let on = format!("traps: {{kinds: [robots]}}\n{off}");
    assert!(messages(&on).is_empty(), "{:?}", messages(&on));
}

/// docs/gate.md's "Trap links" policy, as written.
#[test]
fn the_guides_trap_policy_reads_as_written() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/gate.md"),
    )
    .expect("docs/gate.md");
    let section = &doc[doc.find("### Trap links").expect("section")..];
    let block = section
        .split("```yaml\n")
        .nth(1)
        .map(|b| &b[..b.find("```").expect("closed")])
        .expect("a yaml block");
    let text = format!("default: allow\n{block}");
    assert!(messages(&text).is_empty(), "{:?}", messages(&text));
    let p = compile(&text);
    let t = p.traps.expect("traps");
    assert_eq!((t.kinds, t.widen, t.hold_ms), (0b101, 4, 86_400_000));
}

/// The funnel's exempt: a challenge rule whose conditions held, passed
/// over by an `allow` before it or by the protocol files' exemption.
#[test]
fn challenges_passed_over_name_the_rule_and_what_let_the_request_through() {
    let p = compile(
        r#"
rules:
  - name: protocol-files
    path: [/robots.txt]
    action: allow
  - name: feeds
    path: [/feed]
    action: allow
  - name: browsers-too-fast
    category: browser
    rate: 600/min per ip
    action: challenge
  - name: bots
    category: search
    action: challenge
default: allow
"#,
    );
    let rates = Rates::default();
    let exempted = |f: &Facts| {
        let d = p.decide(f, &rates);
        p.exempted(f, &d)
            .map(|(r, why)| (r.to_owned(), why.to_owned()))
    };
    let pair = |r: &str, why: &str| Some((r.to_owned(), why.to_owned()));
    assert_eq!(
        exempted(&req("/feed", "Mozilla/5.0")),
        pair("browsers-too-fast", "feeds")
    );
    assert_eq!(
        exempted(&req("/robots.txt", "Mozilla/5.0")),
        pair("browsers-too-fast", "protocol-files")
    );
    // A rule's conditions that do not hold: nothing was passed over.
    let search = Facts {
        category: "search",
        ..req("/feed", "Googlebot")
    };
    assert_eq!(exempted(&search), pair("bots", "feeds"));
    let other = Facts {
        category: "seo",
        ..req("/feed", "x")
    };
    assert_eq!(exempted(&other), None);
    // Allowed by no rule: under the rate, not passed over.
    assert_eq!(exempted(&req("/page", "Mozilla/5.0")), None);
    // Without the allow rule, the protocol files' own exemption.
    let q = compile(
        "rules:\n  - name: all-browsers\n    category: browser\n    action: challenge\ndefault: allow\n",
    );
    let f = req("/.well-known/acme-challenge/x", "Mozilla/5.0");
    let d = q.decide(&f, &rates);
    assert_eq!(d.action, Action::Allow);
    assert_eq!(q.exempted(&f, &d), Some(("all-browsers", "protocol-file")));
    // A refusal is never an exemption.
    let f = req("/page", "Mozilla/5.0");
    let d = q.decide(&f, &rates);
    assert_eq!(d.action, Action::Challenge);
    assert_eq!(q.exempted(&f, &d), None);
}
