//! What a request asks for: a page, an asset, robots.txt, a file only
//! crawlers look for, or a probe for a known weak spot.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

/// The kind of resource a request target names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A page (anything that is not one of the others).
    Page,
    /// A resource a browser loads with a page: style, script, image, font,
    /// media.
    Asset,
    /// `/robots.txt`.
    RobotsTxt,
    /// A file that only crawlers look for: sitemaps, `ads.txt`,
    /// `security.txt`, `humans.txt`, `llms.txt`.
    CrawlerOnly,
}

/// File extensions of assets (lower case).
const ASSET_EXT: &[&str] = &[
    "css", "js", "mjs", "map", "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "bmp",
    "woff", "woff2", "ttf", "otf", "eot", "mp4", "webm", "mp3", "ogg", "wav", "m4a",
];

/// Paths that only a robot asks for (lower case, exact, without query).
const CRAWLER_ONLY: &[&str] = &[
    "/ads.txt",
    "/app-ads.txt",
    "/humans.txt",
    "/security.txt",
    "/.well-known/security.txt",
    "/llms.txt",
    "/llms-full.txt",
    "/sitemap.xml",
    "/sitemap_index.xml",
    "/sitemap-index.xml",
    "/sitemap.xml.gz",
    "/sitemap.txt",
];

/// The lengths of [`CRAWLER_ONLY`]'s paths, as bits: a path of another
/// length (nearly every one) is none of them, without comparing.
const CRAWLER_ONLY_LENGTHS: u64 = {
    let mut bits = 0u64;
    let mut i = 0;
    while i < CRAWLER_ONLY.len() {
        assert!(CRAWLER_ONLY[i].len() < 64);
        bits |= 1 << CRAWLER_ONLY[i].len();
        i += 1;
    }
    bits
};

/// Substrings of request targets that probe for known weak spots:
/// admin consoles, leaked configuration and version-control files,
/// exploit paths of popular software, path traversal. Matched ignoring
/// case; the list is documented in docs/log-analysis.md.
pub const PROBES: &[&str] = &[
    "wp-login.php",
    "xmlrpc.php",
    "/wp-admin",
    "/wp-includes/",
    "/wp-content/plugins/",
    "/.env",
    "/.git/",
    "/.svn/",
    "/.hg/",
    "/.aws/",
    "/.ssh/",
    "/.ds_store",
    "/.htaccess",
    "/.htpasswd",
    "phpmyadmin",
    "/pma/",
    "/myadmin/",
    "/cgi-bin/",
    "/boaform/",
    "/hnap1",
    "/actuator/",
    "/vendor/phpunit/",
    "eval-stdin.php",
    "/solr/admin",
    "/manager/html",
    "/jmx-console",
    "/web-console",
    "/invoker/",
    "/wls-wsat/",
    "/_ignition/",
    "/telescope/",
    "/containers/json",
    "/etc/passwd",
    "/phpinfo",
    "/server-status",
    "/setup.php",
    "/install.php",
    "/config.php",
    "/shell.php",
    "/cmd.php",
    "/autodiscover/autodiscover.xml",
    "/owa/auth",
    "/remote/login",
    "/+cscoe+/",
    "/api/jsonws",
    "/geoserver/",
    "/nmaplowercheck",
    "../",
    "..%2f",
    "%2e%2e",
    "${jndi:",
];

/// Targets from [`DFA_TARGET`] up to this long are searched by the packed
/// searcher.
const PACKED_TARGET: usize = 512;

/// Targets shorter than this are searched by the DFA.
const DFA_TARGET: usize = 40;

/// Targets up to this long are lowered into the smaller stack buffer
/// (most of the longer targets), the others up to [`PACKED_TARGET`] into
/// the larger one.
const SHORT_BUFFER: usize = 128;

/// The probe searchers (built once; the fixed patterns always build, and
/// a test asserts it): a SIMD packed searcher over the lowercased target
/// where the processor has one, for targets from [`DFA_TARGET`] to
/// [`PACKED_TARGET`] bytes, and a DFA that ignores ASCII case for the
/// others. Both find the same leftmost-first match.
struct Probes {
    packed: Option<aho_corasick::packed::Searcher>,
    dfa: AhoCorasick,
}

fn probes() -> Option<&'static Probes> {
    static AC: OnceLock<Option<Probes>> = OnceLock::new();
    AC.get_or_init(|| {
        let dfa = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(PROBES)
            .ok()?;
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(PROBES.iter().map(|p| p.to_ascii_lowercase()))
            .build();
        Some(Probes { packed, dfa })
    })
    .as_ref()
}

/// The part of a request target before `?` or `#`, without a scheme and
/// host when the target is an absolute URL.
pub fn path_only(target: &str) -> &str {
    let t = strip_origin(target);
    let end = memchr::memchr2(b'?', b'#', t.as_bytes()).unwrap_or(t.len());
    &t[..end]
}

/// `http://host/path` → `/path`; other targets unchanged.
pub fn strip_origin(target: &str) -> &str {
    // Nearly every target: a path.
    if target.starts_with('/') {
        return target;
    }
    let lower_starts = |p: &str| {
        target
            .get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
    };
    for scheme in ["http://", "https://"] {
        if lower_starts(scheme) {
            let rest = &target[scheme.len()..];
            return match rest.find('/') {
                Some(i) => &rest[i..],
                None => "/",
            };
        }
    }
    target
}

/// True when the target is an absolute URL (`GET http://…`), as proxy
/// probes send.
pub fn is_absolute(target: &str) -> bool {
    strip_origin(target).len() != target.len()
}

/// Classifies a request target.
pub fn path_kind(target: &str) -> PathKind {
    let p = path_only(target);
    if p.eq_ignore_ascii_case("/robots.txt") {
        return PathKind::RobotsTxt;
    }
    if p.len() < 64
        && CRAWLER_ONLY_LENGTHS & (1 << p.len()) != 0
        && CRAWLER_ONLY.iter().any(|c| p.eq_ignore_ascii_case(c))
    {
        return PathKind::CrawlerOnly;
    }
    // The extension of the last segment: the last `.` or `/`.
    let b = p.as_bytes();
    let dot = memchr::memrchr2(b'.', b'/', b).filter(|&i| b[i] == b'.');
    if let Some(i) = dot
        && let ext = &p[i + 1..]
        && ext.len() <= 5
        && ASSET_EXT.iter().any(|a| ext.eq_ignore_ascii_case(a))
    {
        return PathKind::Asset;
    }
    PathKind::Page
}

/// The probe pattern a request target contains, if any.
pub fn probe(target: &str) -> Option<&'static str> {
    let p = probes()?;
    let b = target.as_bytes();
    let found = match &p.packed {
        // Short targets by the DFA, which costs the same for every byte;
        // the packed searcher costs about as much to start as to run
        // (`valgrind --tool=callgrind`: on targets of about 20 bytes, 450
        // instructions by the DFA against 1,250 lowercased and packed; on
        // targets of 80 bytes, 1,600 against 950).
        Some(_) if b.len() < DFA_TARGET => p.dfa.find(b).map(|m| m.pattern().as_usize()),
        // A buffer that fits the target: clearing a 512-byte one for every
        // target cost more than the search.
        Some(packed) if b.len() <= SHORT_BUFFER => find_lowered::<SHORT_BUFFER>(packed, b),
        Some(packed) if b.len() <= PACKED_TARGET => find_lowered::<PACKED_TARGET>(packed, b),
        _ => p.dfa.find(b).map(|m| m.pattern().as_usize()),
    };
    found.map(|i| PROBES[i])
}

/// The first probe in `b` (at most `N` bytes) lowercased, by `packed`.
fn find_lowered<const N: usize>(
    packed: &aho_corasick::packed::Searcher,
    b: &[u8],
) -> Option<usize> {
    let mut buf = [0u8; N];
    let lower = buf.get_mut(..b.len())?;
    // Lowercased as copied, in one pass: a copy then a pass over the copy
    // waits for the copy's stores to land.
    for (d, &c) in lower.iter_mut().zip(b) {
        *d = c.to_ascii_lowercase();
    }
    packed.find(&*lower).map(|m| m.pattern().as_usize())
}

/// True for request methods a web client sends; anything else (CONNECT,
/// WebDAV verbs, bytes of a TLS handshake) is probing.
pub fn is_common_method(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "OPTIONS" | "PATCH"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(path_kind("/"), PathKind::Page);
        assert_eq!(path_kind("/robots.txt"), PathKind::RobotsTxt);
        assert_eq!(path_kind("/ROBOTS.TXT?x=1"), PathKind::RobotsTxt);
        assert_eq!(path_kind("/static/app.CSS?v=3"), PathKind::Asset);
        assert_eq!(path_kind("/a.b/page"), PathKind::Page);
        assert_eq!(path_kind("/sitemap.xml"), PathKind::CrawlerOnly);
        assert_eq!(
            path_kind("http://example.com/robots.txt"),
            PathKind::RobotsTxt
        );
        assert_eq!(path_kind("/report.pdf"), PathKind::Page);
        // Every crawler-only path, in any case and with a query, and
        // none a byte longer or shorter (the lengths' filter).
        for c in CRAWLER_ONLY {
            let upper = c.to_ascii_uppercase();
            assert_eq!(
                path_kind(&format!("{upper}?q=1")),
                PathKind::CrawlerOnly,
                "{c}"
            );
            assert_eq!(
                path_kind(&format!("https://x.example{c}")),
                PathKind::CrawlerOnly
            );
            assert_ne!(path_kind(&format!("{c}x")), PathKind::CrawlerOnly, "{c}");
            assert_ne!(path_kind(&c[..c.len() - 1]), PathKind::CrawlerOnly, "{c}");
        }
    }

    /// The packed searcher and the DFA find the same probe, at any case.
    #[test]
    fn probe_searchers_agree() {
        let p = probes().expect("probes");
        assert!(
            p.packed.is_some() || !cfg!(target_arch = "x86_64"),
            "x86-64 has a packed searcher"
        );
        let mut targets: Vec<String> = vec![
            "/".into(),
            "/a/b?c=d".into(),
            "/WP-Admin/x".into(),
            "/x/..%2F..%2Fetc/passwd".into(),
            "/?q=${JNDI:ldap://x}".into(),
            "/.git/config".into(),
            "/owa/auth/x.js?/+CSCOE+/".into(),
        ];
        for (i, pat) in PROBES.iter().enumerate() {
            let mixed: String = pat
                .chars()
                .enumerate()
                .map(|(k, c)| {
                    if (k + i) % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            targets.push(format!("/x{mixed}y"));
            targets.push(mixed.clone());
            targets.push(format!(
                "/catalog/{i}?next={pat}&{}",
                PROBES[(i + 7) % PROBES.len()]
            ));
        }
        // Either side of each buffer's size, a probe at the very end.
        for len in [
            6,
            DFA_TARGET - 1,
            DFA_TARGET,
            SHORT_BUFFER - 1,
            SHORT_BUFFER,
            SHORT_BUFFER + 1,
            PACKED_TARGET,
            PACKED_TARGET + 1,
            600,
        ] {
            let tail = "/.ENV";
            let t = format!("/{}{tail}", "a".repeat(len - 1 - tail.len()));
            assert_eq!((t.len(), probe(&t)), (len, Some("/.env")));
            targets.push(t);
        }
        for t in &targets {
            let dfa = p
                .dfa
                .find(t.as_bytes())
                .map(|m| PROBES[m.pattern().as_usize()]);
            assert_eq!(probe(t), dfa, "{t}");
        }
    }

    #[test]
    fn probes_and_methods() {
        assert!(probes().is_some());
        assert_eq!(probe("/WP-LOGIN.php"), Some("wp-login.php"));
        assert_eq!(probe("/cgi-bin/../../etc/passwd"), Some("/cgi-bin/"));
        assert_eq!(probe("/blog/wordpress-tips"), None);
        assert!(is_absolute("http://example.com/x"));
        assert!(!is_absolute("/http://"));
        assert!(is_common_method("GET"));
        assert!(!is_common_method("\\x16\\x03\\x01"));
        assert!(!is_common_method("CONNECT"));
    }
}
