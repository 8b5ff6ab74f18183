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

/// A gzipped file of tests/data, as text.
fn gz_data(name: &str) -> String {
    use std::io::Read;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("data"))
        .read_to_string(&mut text)
        .expect("gzip");
    text
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

mod ua {
    use botscope_botid::{Registry, UAP_REGEXES, UaClassifier};

    use super::{data, gz_data};

    /// uap-core's own test cases: every family, with uap-core's regexes.
    #[test]
    fn uap_core_test_ua_families() {
        let c =
            UaClassifier::new(UAP_REGEXES, "", "", "", &Registry::default()).expect("classifier");
        let root = marked_yaml::parse_yaml(0, data("test_ua.yaml")).expect("yaml");
        let cases = root
            .as_mapping()
            .and_then(|m| m.get_sequence("test_cases"))
            .expect("test_cases");
        let mut failures = Vec::new();
        for case in cases.iter() {
            let m = case.as_mapping().expect("case");
            let ua = m
                .get_scalar("user_agent_string")
                .map(|s| s.as_str().to_owned())
                .unwrap_or_default();
            let want = m
                .get_scalar("family")
                .map(|s| s.as_str().to_owned())
                .unwrap_or_default();
            let got = c.family(&ua);
            if got != want {
                failures.push(format!("{ua:?}: got {got:?}, want {want:?}"));
            }
        }
        assert_eq!(cases.len(), 1601);
        assert!(
            failures.is_empty(),
            "{} of 1601 differ:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    /// uap-core's parsers compiled at once or at their first use decide
    /// alike on every labelled User-Agent, and
    /// the family a decision looked up is uap-core's family.
    #[test]
    fn lazy_family_lookup_decides_the_same() {
        let r = Registry::bundled();
        let eager = UaClassifier::bundled(&r).expect("classifier");
        let lazy = UaClassifier::bundled_on(&r, 2).expect("classifier");
        let text = data("labeled_ua.tsv");
        let mut consulted = 0;
        for line in text.lines().skip(1) {
            let ua = line.splitn(4, '\t').nth(3).expect("ua");
            let a = eager.classify(ua);
            let b = lazy.classify(ua);
            assert_eq!(
                (a.is_bot, &a.claimed_bot, &a.reason),
                (b.is_bot, &b.claimed_bot, &b.reason),
                "{ua}"
            );
            assert_eq!(a.family, b.family, "{ua}");
            if let Some(f) = &b.family {
                consulted += 1;
                assert_eq!(f, &eager.family(ua), "{ua}");
            }
            assert_eq!(lazy.family(ua), eager.family(ua), "{ua}");
        }
        assert!(consulted > 0, "some decisions look the family up");
    }

    /// Bots flagged, browsers not, on the labelled set.
    #[test]
    fn labeled_user_agents() {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let text = data("labeled_ua.tsv");
        let (mut bots, mut bots_hit, mut browsers, mut browsers_hit) = (0, 0, 0, 0);
        let (mut missed, mut false_hits) = (Vec::new(), Vec::new());
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            let (label, ua) = (cols[0], cols[3]);
            let info = c.classify(ua);
            if label == "bot" {
                bots += 1;
                if info.is_bot {
                    bots_hit += 1;
                } else {
                    missed.push(ua.to_owned());
                }
            } else {
                browsers += 1;
                if info.is_bot {
                    browsers_hit += 1;
                    false_hits.push(format!("{ua} ({:?})", info.reason));
                }
            }
        }
        let bot_rate = f64::from(bots_hit) / f64::from(bots);
        let fp_rate = f64::from(browsers_hit) / f64::from(browsers);
        println!(
            "bots flagged {bots_hit}/{bots} = {:.2}%, browsers flagged {browsers_hit}/{browsers} = {:.2}%",
            100.0 * bot_rate,
            100.0 * fp_rate
        );
        assert!(
            bot_rate >= 0.99 && fp_rate <= 0.005,
            "{:.2}% of bots flagged, {:.2}% of browsers.\nMissed bots:\n{}\nFlagged browsers:\n{}",
            100.0 * bot_rate,
            100.0 * fp_rate,
            missed.join("\n"),
            false_hits.join("\n")
        );
    }

    /// Per split: [bots, bots flagged, browsers, browsers flagged], and the
    /// held-out half's misses and false hits. `ua_col` is the User-Agent's
    /// column; columns 0 and 1 are the split and the label. With
    /// `BOTSCOPE_UA_DESIGN_OUT=FILE` the design half's errors are written
    /// there (the half that may be looked at).
    fn measure(
        file: &str,
        ua_col: usize,
    ) -> (
        std::collections::BTreeMap<String, [u32; 4]>,
        Vec<String>,
        Vec<String>,
    ) {
        let text = gz_data(file);
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let mut seen = std::collections::BTreeMap::new();
        let (mut missed, mut false_hits, mut design) = (Vec::new(), Vec::new(), Vec::new());
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.splitn(ua_col + 1, '\t').collect();
            let (split, label, ua) = (cols[0], cols[1], cols[ua_col]);
            let info = c.classify(ua);
            let n = seen.entry(split.to_owned()).or_insert([0u32; 4]);
            let wrong = if label == "bot" {
                n[0] += 1;
                n[1] += u32::from(info.is_bot);
                !info.is_bot
            } else {
                n[2] += 1;
                n[3] += u32::from(info.is_bot);
                info.is_bot
            };
            if !wrong {
                continue;
            }
            let shown = format!("{label}\t{}\t{ua} ({:?})", cols[2], info.reason);
            match (split, label) {
                ("held-out", "bot") => missed.push(shown),
                ("held-out", _) => false_hits.push(shown),
                _ => design.push(shown),
            }
        }
        if let Ok(out) = std::env::var("BOTSCOPE_UA_DESIGN_OUT") {
            std::fs::write(out, design.join("\n")).expect("design out");
        }
        for (split, n) in &seen {
            println!(
                "{file} {split}: bots flagged {}/{} = {:.2}%, browsers flagged {}/{} = {:.2}%",
                n[1],
                n[0],
                100.0 * f64::from(n[1]) / f64::from(n[0]),
                n[3],
                n[2],
                100.0 * f64::from(n[3]) / f64::from(n[2])
            );
        }
        (seen, missed, false_hits)
    }

    fn assert_rates(n: [u32; 4], min_recall: f64, missed: &[String], false_hits: &[String]) {
        let bot_rate = f64::from(n[1]) / f64::from(n[0]);
        let fp_rate = f64::from(n[3]) / f64::from(n[2]);
        assert!(
            bot_rate >= min_recall && fp_rate <= 0.01,
            "held out: {:.2}% of bots flagged, {:.2}% of browsers.\nMissed bots:\n{}\nFlagged browsers:\n{}",
            100.0 * bot_rate,
            100.0 * fp_rate,
            missed.join("\n"),
            false_hits.join("\n")
        );
    }

    /// Browsers, apps and bots that no rule was made from: Matomo Device
    /// Detector's fixtures (tests/data/build_matomo_ua.py). The `design`
    /// half was looked at while the rules were made; the `held-out` half
    /// gives the figures (docs/verification.md).
    #[test]
    fn held_out_user_agents() {
        let (seen, missed, false_hits) = measure("matomo_ua.tsv.gz", 4);
        let n = seen["held-out"];
        assert!(
            n[0] > 600 && n[2] > 18_000,
            "the held-out half is whole: {n:?}"
        );
        assert_rates(n, 0.99, &missed, &false_hits);
    }

    /// Per expected type (right, all); browsers typed `crawler`; crawlers
    /// by the type they got instead; the mistakes, one line each.
    type TypeFigures = (
        std::collections::BTreeMap<String, [u32; 2]>,
        u32,
        std::collections::BTreeMap<String, u32>,
        Vec<String>,
    );

    /// Client types (docs/verification.md, "What kind of client"): per
    /// type of Matomo Device Detector's labels (tests/data/build_matomo_types.py),
    /// the share typed right, on the held-out half only. Set
    /// `BOTSCOPE_SHOW_DESIGN=1` to print the design half's mistakes, the
    /// half the rules were made from.
    fn type_figures(half: &str) -> TypeFigures {
        let text = gz_data("matomo_types.tsv.gz");
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let mut per: std::collections::BTreeMap<String, [u32; 2]> = Default::default();
        let mut browsers_as_crawlers = 0;
        let mut crawlers_elsewhere: std::collections::BTreeMap<String, u32> = Default::default();
        let mut wrong = Vec::new();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.splitn(5, '\t').collect();
            if cols[0] != half {
                continue;
            }
            let (want, ua) = (cols[1], cols[4]);
            let got = c.classify(ua).client_type.as_str();
            let e = per.entry(want.to_owned()).or_default();
            e[1] += 1;
            if got == want {
                e[0] += 1;
            } else {
                wrong.push(format!("{want} as {got}\t{}\t{}\t{ua}", cols[2], cols[3]));
            }
            browsers_as_crawlers += u32::from(want == "browser" && got == "crawler");
            if want == "crawler" && got != "crawler" {
                *crawlers_elsewhere.entry(got.to_owned()).or_default() += 1;
            }
        }
        (per, browsers_as_crawlers, crawlers_elsewhere, wrong)
    }

    #[test]
    fn held_out_client_types() {
        if std::env::var_os("BOTSCOPE_SHOW_DESIGN").is_some() {
            let (per, b, cr, wrong) = type_figures("design");
            eprintln!("design: {per:?}, browsers as crawlers {b}, crawlers elsewhere {cr:?}");
            for w in &wrong {
                eprintln!("{w}");
            }
        }
        let (per, browsers_as_crawlers, elsewhere, wrong) = type_figures("held-out");
        let crawlers_elsewhere: u32 = elsewhere.values().sum();
        // Typed as a person's client: the mistake that lets a robot pass
        // for a visitor.
        let crawlers_as_people: u32 = ["browser", "media-player", "unknown"]
            .iter()
            .map(|t| elsewhere.get(*t).copied().unwrap_or(0))
            .sum();
        let total: u32 = per.values().map(|v| v[1]).sum();
        let right: u32 = per.values().map(|v| v[0]).sum();
        let rate = |n: u32, d: u32| f64::from(n) / f64::from(d.max(1));
        for (t, [r, n]) in &per {
            eprintln!("held-out {t}: {r} / {n} ({:.2}%)", 100.0 * rate(*r, *n));
        }
        eprintln!(
            "held-out: {right} / {total} typed right ({:.2}%); browsers typed crawler {browsers_as_crawlers} / {}; crawlers typed otherwise {crawlers_elsewhere} / {} ({elsewhere:?}), as a person's client {crawlers_as_people}",
            100.0 * rate(right, total),
            per["browser"][1],
            per["crawler"][1],
        );
        assert!(total > 18_000, "the held-out half is whole: {total}");
        assert!(
            rate(right, total) >= 0.97,
            "typed right {right} / {total}: {:?}",
            &wrong[..wrong.len().min(40)]
        );
        assert!(
            rate(browsers_as_crawlers, per["browser"][1]) <= 0.005,
            "browsers typed crawler: {browsers_as_crawlers}"
        );
        // Matomo labels link previews (Pinterest, BingPreview, Embedly,
        // vkShare …) and scanners (masscan) `Crawler`; botscope types them
        // by what they do, so "crawlers typed otherwise" is reported, not
        // held to 1% (docs/verification.md). A crawler typed as a person's
        // client is held to 1%.
        assert!(
            rate(crawlers_as_people, per["crawler"][1]) <= 0.01,
            "crawlers typed as a person's client: {crawlers_as_people} ({elsewhere:?})"
        );
    }

    /// One User-Agent of each type, as the docs list them.
    #[test]
    fn a_type_for_every_client() {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let cases = [
            (
                "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
                "browser",
            ),
            (
                "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
                "crawler",
            ),
            (
                "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)",
                "crawler",
            ),
            ("curl/8.5.0", "library"),
            ("python-requests/2.32.3", "library"),
            ("Wget/1.21.4", "library"),
            (
                "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)",
                "feed-reader",
            ),
            ("Tiny Tiny RSS/23.04 (https://tt-rss.org/)", "feed-reader"),
            (
                "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
                "preview",
            ),
            (
                "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
                "preview",
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36",
                "headless",
            ),
            (
                "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
                "monitor",
            ),
            (
                "Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)",
                "scanner",
            ),
            ("VLC/3.0.20 LibVLC/3.0.20", "media-player"),
            (
                "server-bag [iPhone OS,17.5.1,21F90,iPhone15,2]",
                "os-service",
            ),
            ("Microsoft NCSI", "os-service"),
            ("", "unknown"),
            ("-", "unknown"),
            // A robot built on a library or a headless engine is a crawler.
            (
                "serpstatbot/1.0 (advanced backlink tracking bot; curl/7.58.0; http://serpstatbot.com/)",
                "crawler",
            ),
        ];
        for (ua, want) in cases {
            assert_eq!(c.classify(ua).client_type.as_str(), want, "{ua}");
        }
        assert_eq!(
            r.get("OAI-SearchBot")
                .and_then(|b| b.category)
                .map(|c| c.as_str()),
            Some("ai-search")
        );
    }

    /// Client types on the other labelled sources (more_ua.tsv.gz: bot or
    /// browser labels only), held-out half: browsers typed `crawler`, and
    /// robots typed as a person's client (browser, media player, unknown).
    #[test]
    fn held_out_client_types_from_other_sources() {
        let text = gz_data("more_ua.tsv.gz");
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let (mut browsers, mut bots, mut browsers_as_crawlers, mut bots_as_people) =
            (0u32, 0u32, 0u32, 0u32);
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            if cols[0] != "held-out" {
                continue;
            }
            let t = c.classify(cols[3]).client_type;
            if cols[1] == "bot" {
                bots += 1;
                bots_as_people += u32::from(!t.is_robot());
            } else {
                browsers += 1;
                browsers_as_crawlers += u32::from(t == botscope_botid::ClientType::Crawler);
            }
        }
        eprintln!(
            "other sources, held-out: browsers typed crawler {browsers_as_crawlers} / {browsers}; robots typed as a person's client {bots_as_people} / {bots}"
        );
        assert!(browsers > 80_000 && bots > 1_800);
        assert!(f64::from(browsers_as_crawlers) / f64::from(browsers) <= 0.005);
    }

    /// The same measure on sources other than Matomo's: CrawlerDetect's
    /// fixtures (165,639 real devices' strings and 3,702 crawlers), woothee's
    /// testsets, fake-useragent's and user-agents' browser lists
    /// (tests/data/build_more_ua.py). CrawlerDetect counts as crawlers what
    /// a person runs (Word and Outlook fetching a link's preview, download
    /// managers, mail clients) and HTTP libraries; three in four of the
    /// design half's misses are those, so recall here is held to 96%, not
    /// 99% (docs/verification.md).
    #[test]
    fn held_out_user_agents_from_other_sources() {
        let (seen, missed, false_hits) = measure("more_ua.tsv.gz", 3);
        let n = seen["held-out"];
        assert!(
            n[0] > 1_800 && n[2] > 80_000,
            "the held-out half is whole: {n:?}"
        );
        assert_rates(n, 0.96, &missed, &false_hits);
    }

    /// Desktop browsers that robot lists name are people's browsers: a
    /// case each; a robot that writes the same words beside a robot's
    /// word, or a registered bot's token, stays a robot.
    #[test]
    fn desktop_browsers_robot_lists_name_are_browsers() {
        use botscope_botid::ClientType;
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        for ua in [
            // BrowseX, a Tcl/Tk browser: isbot lists `browsex`.
            "Mozilla/4.61 [en] (X11; U; ) - BrowseX (2.0.0 Windows)",
            // An application on EmbeddedWB (Internet Explorer embedded):
            // its home page's `.com`.
            "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; i-NavFourF; TuneUp HTML Client Embedded Web Browser from: http://bsalsa.com/; .NET CLR 1.1.4322; .NET CLR 2.0.50727; .NET CLR 3.0.4506.2152; .NET CLR 3.5.30729)",
            // Google Earth's embedded WebKit: isbot's `google`.
            "Mozilla/5.0 (Windows; U; Windows NT 5.1; cs-CZ) AppleWebKit/532.4 (KHTML, like Gecko) Google Earth/5.2.1.1329 Safari/532.4",
        ] {
            let info = c.classify(ua);
            assert!(!info.is_bot, "{ua}: {:?}", info.reason);
            assert_eq!(info.client_type, ClientType::Browser, "{ua}");
        }
        for ua in [
            "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1; Trident/4.0; Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1) ;  Embedded Web Browser from: http://bsalsa.com/; RSScrawler/4.0 (compatible; MSIE 6.0; Windows NT 5.0); .NET CLR 2.0.50727",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) Google Earth/5.2",
            "BrowseX-crawler/1.0",
        ] {
            let info = c.classify(ua);
            assert!(info.is_bot, "{ua}");
            assert_ne!(info.client_type, ClientType::Browser, "{ua}");
        }
        // No registered bot becomes a browser, even writing those words.
        for bot in r.bots() {
            for token in &bot.ua_tokens {
                let ua = format!(
                    "Mozilla/5.0 (compatible; {token}/1.0; http://bsalsa.com/) BrowseX Google Earth/5.2"
                );
                let info = c.classify(&ua);
                assert!(info.is_bot, "{}: {ua}", bot.name);
                assert_ne!(info.client_type, ClientType::Browser, "{ua}");
            }
        }
    }

    /// Generic words count only without a browser parse; device models and
    /// app packages are no evidence; specific patterns still decide.
    #[test]
    fn generic_words_need_more_than_a_browser() {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let browsers = [
            // IE with Chrome Frame: `chromeframe`.
            "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; chromeframe/11.0.696.57)",
            // A device model with `bot` in it.
            "Mozilla/5.0 (Linux; Android 7.1.2; M bot Tab 103) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.106 Safari/537.36",
            // An app package naming Google.
            "com.google.android.youtube/21.29.366(Linux; U; Android 14; pt_BR; T431A Build/UP1A.231005.007) gzip",
            // A Google TV set.
            "Mozilla/5.0 (Linux; Android 11; Arcelik Google TV Build/RTM6.230109.257; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/118.0.0.0 Mobile Safari/537.36",
            // Sogou's browser, not its spider.
            "Mozilla/5.0 (Linux; Android 6.0.1; OPPO R9s Plus Build/MMB29M; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/68.0.3440.106 Mobile Safari/537.36 AWP/2.0 SogouMSE,SogouMobileBrowser/5.28.7",
        ];
        for ua in browsers {
            let info = c.classify(ua);
            assert!(!info.is_bot, "{ua}: {:?}", info.reason);
        }
        let bots = [
            // Generic word, no browser parse.
            "download-tool/2.1",
            // A specific product beside a browser parse.
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; compatible; pageburst) Chrome/109.0.5414.101 Safari/537.36",
            // A plain `name,` prefix.
            "Anonymous, Mozilla/5.0 (X11; Linux Mint x86_64) AppleWebKit/537.37 (KHTML, like Gecko) Chrome/50.0.2272.105 Safari/537.37",
            // A bot word outside the model slot.
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Mobile Safari/537.36 (compatible; ExampleBot/1.0)",
            "Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
        ];
        for ua in bots {
            let info = c.classify(ua);
            assert!(info.is_bot, "{ua}");
        }
    }

    #[test]
    fn claims_and_reasons() {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        let cases = [
            (
                "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
                Some("Googlebot"),
            ),
            (
                "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
                Some("bingbot"),
            ),
            (
                "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
                Some("GPTBot"),
            ),
            (
                "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
                Some("Baiduspider"),
            ),
            (
                "AdsBot-Google (+http://www.google.com/adsbot.html)",
                Some("Google-Special-Crawlers"),
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
                None,
            ),
            ("NotGooglebotx/1.0", None),
            // Short plain-word tokens claim only in the registry's case.
            (
                "Mozilla/5.0 (Windows NT 6.2; WOW64; rv:30.0) Gecko/20100101 Firefox/30.0 AppEngine-Google; (+http://code.google.com/appengine; appid: s~x)",
                None,
            ),
            (
                "Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
                Some("Sogou"),
            ),
            ("Mozilla/5.0 (compatible; googlebot/2.1)", Some("Googlebot")),
            // A mention is not a claim: after `like`, inside a URL or an
            // e-mail address.
            // (Feedly's own token claims Feedly; the Google fetcher it is
            // `like` is not claimed.)
            (
                "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)",
                Some("Feedly"),
            ),
            (
                "NewsReader/1.0 (+http://reader.example/fetcher.html; like FeedFetcher-Google)",
                None,
            ),
            (
                "MyReader/2.0 (like Googlebot; +https://example.org/bot)",
                None,
            ),
            (
                "Fetcher/1.0 (+https://example.org/about-gptbot/GPTBot.html)",
                None,
            ),
            ("Fetcher/1.0 (+www.example.org/Googlebot-compat)", None),
            ("Crawler/1.0 (mailto:ops@Googlebot.example)", None),
            (
                "Mozilla/5.0 (compatible; Googlebot/2.1; like Gecko)",
                Some("Googlebot"),
            ),
            // Archive crawlers are claimed by their own token only.
            (
                "Mozilla/5.0 (compatible; heritrix/3.4.0 +https://www.bl.uk/collection-guides/uk-web-archive)",
                None,
            ),
            (
                "Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)",
                Some("archive.org_bot"),
            ),
        ];
        for (ua, want) in cases {
            assert_eq!(c.claimed_bot(ua), want, "{ua}");
        }
        assert!(!c.classify(cases[5].0).is_bot);
        assert!(c.classify("curl/8.5.0").is_bot);
        assert!(c.classify("").is_bot, "an empty User-Agent is a robot's");
        let long = "x".repeat(100_000) + "Googlebot";
        assert!(
            c.classify(&long).claimed_bot.is_none(),
            "only the first 8 KiB is read"
        );
    }
}
