//! Policy files from arbitrary bytes: findings with a line inside the
//! file, or a policy whose decisions name one of its rules (or the
//! default) and are never a `label`; never a panic.
#![no_main]

use botscope_policy::{Action, Facts, Identity, Rates, Signature, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    static REGISTRY: std::sync::OnceLock<botscope_botid::Registry> = std::sync::OnceLock::new();
    let registry = REGISTRY.get_or_init(botscope_botid::Registry::bundled);
    let parsed = parse("fuzz.yaml", &text, registry);
    let ua: String = text.chars().take(64).collect();
    // YAML breaks lines at \n, \r\n and a lone \r.
    let breaks = text.matches('\n').count() + text.matches('\r').count();
    let lines = u32::try_from(breaks).unwrap_or(u32::MAX) + 1;
    for f in &parsed.findings {
        assert!(f.line <= lines, "{f} is past the file's {lines} lines");
        assert!(!f.to_string().contains('\x1b'), "{f}");
    }
    let Some(policy) = parsed.policy else {
        assert!(
            parsed
                .findings
                .iter()
                .any(|f| f.severity == botscope_policy::Severity::Error)
        );
        return;
    };
    let rates = Rates::new(64);
    let matcher = botscope_robotstxt::Matcher::new(b"User-agent: *\nDisallow: /private/\n");
    let closed = |p: &str| !matcher.check_path("x", p.as_bytes()).allowed;
    let paths = ["/", "/private/a", "/robots.txt", "/feed", "/a.php?x=1", "*"];
    for (i, path) in paths.iter().enumerate() {
        for id in Identity::ALL {
            let f = Facts {
                ip: std::net::IpAddr::from([192, 0, 2, i as u8]),
                method: if i % 2 == 0 { "GET" } else { "POST" },
                path,
                user_agent: &ua,
                identity: id.1,
                bot: Some("Googlebot"),
                category: botscope_policy::UNREGISTERED_BOT,
                signature: Signature::ALL[i % 4].1,
                asn: Some(15169),
                lists: 1 << (i % 5),
                robots: Some(&closed),
                now_ms: 1_000 * i as u64,
                navigation: true,
                passed: false,
                trapped: botscope_policy::Trapped::NONE,
            };
            let d = policy.decide(&f, &rates);
            assert_ne!(d.action, Action::Label);
            assert!(d.rule == "default" || policy.rule(d.rule).is_some());
        }
    }
});
