//! One decision in process, as the gate makes it for a request whose
//! client is known already: the identity from the cache (address and
//! User-Agent), the facts, and the policy's decision, on a 31-rule policy
//! (the balanced preset and 18 rules of every kind after it) over a mix
//! of clients (verified crawlers, fakes, unregistered robots, browsers)
//! and paths, with the challenge a request allowed passed over (the
//! funnel's exempt) as the gate asks it. Prints the median and the 99th
//! percentile of single decisions, timed one by one.
//!
//! ```sh
//! cargo bench -p botscope-gate --bench decide
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Instant;

use botscope_gate::identity::{Identities, IdentityConfig};
use botscope_policy::{Facts, Rates, Signature};

fn policy_text() -> String {
    let mut text = botscope_policy::preset("balanced").unwrap().to_owned();
    let extra = [
        "  - {name: admin, path: [/admin/, /wp-admin/, /wp-login.php], action: deny}",
        "  - {name: api-writes, path: /api/, method: [POST, PUT, DELETE], rate: 30/min per ip, action: limit}",
        "  - {name: office, network: [198.51.100.0/24, 2001:db8:100::/48], action: allow}",
        "  - {name: cloud-scrapers, asn: [14061, 16509, 14618, 8075], category: browser, rate: 120/min per network, action: challenge}",
        "  - {name: headless, user_agent: '(?i)headless|phantomjs|puppeteer|playwright', action: challenge}",
        "  - {name: old-browsers, user_agent: 'MSIE [5-8]\\.', action: challenge}",
        "  - {name: scanners, path: ['*.env$', '*.git/', '*.sql$', '/phpmyadmin/'], action: deny}",
        "  - {name: seo-pace, category: seo, rate: 10/min per identity, action: limit}",
        "  - {name: archives, category: archive, action: allow}",
        "  - {name: social-previews, category: social, action: allow}",
        "  - {name: monitors, category: monitoring, rate: 60/min per ip, action: limit}",
        "  - {name: assistants, category: ai-assistant, rate: 60/min per identity, action: limit}",
        "  - {name: tag-search, category: search, action: label, headers: {X-Search: '1'}}",
        "  - {name: search-pages, path: /search, category: browser, rate: 30/min per ip, action: challenge}",
        "  - {name: downloads, path: ['*.zip$', '*.tar.gz$'], rate: 20/min per ip, action: limit}",
        "  - {name: posts, method: POST, category: unregistered-bot, action: deny}",
        "  - {name: unknown-claims, identity: unknown, rate: 30/min per ip, action: limit}",
        "  - {name: tag-rest, action: label, headers: {X-Seen: '1'}}",
    ];
    let at = text.find("default: allow").unwrap();
    let mut rules = String::new();
    for r in extra {
        rules.push_str(r);
        rules.push('\n');
    }
    text.insert_str(at, &rules);
    text
}

fn main() {
    let registry = Arc::new(botscope_botid::Registry::bundled());
    let text = policy_text();
    let parsed = botscope_policy::parse("bench.yaml", &text, &registry);
    let policy = parsed.policy.expect("the bench policy compiles");
    assert_eq!(policy.rules.len(), 31, "the balanced preset and 18 more");
    let ids = Identities::new(IdentityConfig {
        registry,
        owners: Arc::new(botscope_botid::NoOwners),
        dns: None,
        cache: 100_000,
    })
    .unwrap();
    let robots = botscope_robotstxt::Matcher::new(
        b"User-agent: *\nDisallow: /private/\nDisallow: /cart/\n\nUser-agent: GPTBot\nDisallow: /\n",
    );
    let clients: Vec<(std::net::IpAddr, &str)> = (0..1_000u32)
        .map(|i| {
            let ua = match i % 6 {
                0 => "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
                1 => "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
                2 => "python-requests/2.31.0",
                3 => "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
                _ => "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0",
            };
            let ip = if i % 6 == 0 && i % 12 == 0 {
                std::net::IpAddr::from([66, 249, 66, (i % 250) as u8])
            } else {
                std::net::IpAddr::from([192, 0, (i / 250) as u8 + 2, (i % 250) as u8])
            };
            (ip, ua)
        })
        .collect();
    let paths = [
        "/",
        "/products/42",
        "/cart/1",
        "/private/x",
        "/feed",
        "/search?q=x",
        "/robots.txt",
        "/a.php",
    ];
    // The identities are in the cache before timing, as in a running gate.
    for (ip, ua) in &clients {
        let _ = ids.identify(*ip, ua);
    }
    let rates = Rates::default();
    // Alternating blocks with and without the funnel's question, so that
    // both see the same machine: its cost is their difference.
    let rounds = 200_000usize;
    let block = 5_000usize;
    let (mut plain, mut with_exempt) = (Vec::new(), Vec::new());
    let mut allowed = 0usize;
    let mut passed_over = 0usize;
    for n in 0..2 * rounds {
        let ask_exempt = (n / block) % 2 == 1;
        let (ip, ua) = clients[n % clients.len()];
        let path = paths[n % paths.len()];
        let t = Instant::now();
        let known = ids.identify(ip, ua);
        let closed = |p: &str| !robots.check_path(&known.token, p.as_bytes()).allowed;
        let facts = Facts {
            ip,
            method: "GET",
            path,
            user_agent: ua,
            identity: known.identity,
            bot: known.bot.as_deref(),
            category: &known.category,
            signature: Signature::None,
            asn: known.evidence.asn,
            lists: 0,
            robots: Some(&closed),
            now_ms: 1_000_000 + n as u64,
            navigation: true,
            passed: false,
            trapped: botscope_policy::Trapped::NONE,
        };
        let d = policy.decide(&facts, &rates);
        if ask_exempt {
            // As the gate does: an allowed request's challenge passed
            // over (the funnel's exempt).
            let exempt = policy.exempted(&facts, &d);
            with_exempt.push(t.elapsed());
            passed_over += usize::from(exempt.is_some());
            allowed += usize::from(d.action == botscope_policy::Action::Allow);
        } else {
            plain.push(std::hint::black_box(t.elapsed()));
        }
    }
    let pct = |times: &mut Vec<std::time::Duration>, q: f64| {
        times.sort();
        times[((times.len() as f64 * q) as usize).min(times.len() - 1)].as_secs_f64() * 1e6
    };
    println!(
        "decide (31 rules, identity cached): p50 {:.2} us, p99 {:.2} us, over {rounds} decisions",
        pct(&mut plain, 0.5),
        pct(&mut plain, 0.99),
    );
    println!(
        "decide and the funnel's exempt, as the gate asks: p50 {:.2} us, p99 {:.2} us, over {rounds} decisions ({allowed} allowed, {passed_over} passing a challenge over)",
        pct(&mut with_exempt, 0.5),
        pct(&mut with_exempt, 0.99),
    );
}
