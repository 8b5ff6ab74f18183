//! RFC 9309 cases, each citing its section.

use botscope_robotstxt::{GroupMatch, Matcher, ParseOptions, Robots, RuleKind, Semantics};

fn allowed(body: &str, agent: &str, url: &str) -> bool {
    Matcher::new(body.as_bytes()).is_allowed(agent, url)
}

/// 2.1: the product token is matched case-insensitively.
#[test]
fn s2_1_user_agent_case_insensitive() {
    assert!(!allowed(
        "User-agent: ExampleBot\nDisallow: /\n",
        "examplebot",
        "/"
    ));
    assert!(!allowed(
        "user-agent: EXAMPLEBOT\nDisallow: /\n",
        "ExampleBot",
        "/"
    ));
}

/// 2.2.1: groups naming the same agent are combined into one.
#[test]
fn s2_2_1_groups_combined() {
    let body = "User-agent: ExampleBot\nDisallow: /foo\n\nUser-agent: other\nDisallow: /\n\nUser-agent: examplebot\nDisallow: /bar\n";
    assert!(!allowed(body, "ExampleBot", "/foo"));
    assert!(!allowed(body, "ExampleBot", "/bar"));
    assert!(allowed(body, "ExampleBot", "/baz"));
}

/// 2.2.1: with no group for the agent and no `*` group, no rules apply.
#[test]
fn s2_2_1_no_matching_group_allows() {
    let m = Matcher::new(b"User-agent: other\nDisallow: /\n");
    let v = m.check("ExampleBot", "/x");
    assert!(v.allowed);
    assert_eq!(v.group, GroupMatch::None);
}

/// 2.2.1: a group for the agent replaces the `*` group, even when empty.
#[test]
fn s2_2_1_specific_group_replaces_global() {
    let body = "User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot\nAllow: /public\n";
    assert!(allowed(body, "ExampleBot", "/private"));
    assert!(!allowed(body, "OtherBot", "/private"));
}

/// 2.2.2: the most specific (longest) match wins.
#[test]
fn s2_2_2_longest_match() {
    let body = "User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n";
    assert!(!allowed(body, "a", "/example/page/disallowed.gif"));
    assert!(allowed(body, "a", "/example/page/other.gif"));
}

/// 2.2.2: on equal length, Allow wins.
#[test]
fn s2_2_2_allow_wins_tie() {
    let m = Matcher::new(b"User-agent: *\nDisallow: /same\nAllow: /same\n");
    let v = m.check("a", "/same");
    assert!(v.allowed);
    assert_eq!(v.rule.map(|r| r.kind), Some(RuleKind::Allow));
}

/// 2.2.2: matching is case-sensitive on paths; percent-encoding of
/// patterns is normalised (non-ASCII encoded, hex in upper case).
#[test]
fn s2_2_2_case_and_encoding() {
    assert!(allowed("User-agent: *\nDisallow: /Foo\n", "a", "/foo"));
    assert!(!allowed(
        "User-agent: *\nDisallow: /foo/%e3%83%84\n",
        "a",
        "/foo/%E3%83%84"
    ));
    assert!(!allowed(
        "User-agent: *\nDisallow: /foo/ツ\n",
        "a",
        "/foo/%E3%83%84"
    ));
}

/// 2.2.3: `*` matches any sequence, `$` anchors the end.
#[test]
fn s2_2_3_special_characters() {
    let body = "User-agent: *\nDisallow: /*.gif$\nDisallow: /private*/secret\nAllow: /$\n";
    assert!(!allowed(body, "a", "/img/x.gif"));
    assert!(allowed(body, "a", "/img/x.gif?v=1"));
    assert!(!allowed(body, "a", "/private-stuff/secret/x"));
    assert!(allowed(body, "a", "/"));
}

/// 2.2.2 says /robots.txt is implicitly allowed; that is for the fetcher
/// (a crawler never checks robots.txt against itself). The matcher answers
/// the rules as written, exactly as Google's library does.
#[test]
fn s2_2_2_robots_txt_path_is_matched_as_written() {
    assert!(!allowed("User-agent: *\nDisallow: /\n", "a", "/robots.txt"));
}

/// 2.3: Sitemap lines are not part of any group and may appear anywhere.
#[test]
fn s2_3_sitemaps_anywhere() {
    let r = Robots::parse(b"Sitemap: https://a.example/1.xml\nUser-agent: *\nDisallow: /x\nSitemap: https://a.example/2.xml\n");
    assert_eq!(r.sitemaps.len(), 2);
    assert_eq!(r.groups[0].rules.len(), 1);
}

/// 2.5: crawlers must parse at least 500 KiB; a cap stops at a line end.
#[test]
fn s2_5_parse_cap() {
    let mut body = b"User-agent: *\n".to_vec();
    while body.len() < 600 * 1024 {
        body.extend_from_slice(b"Allow: /filler/line/to/grow/the/file\n");
    }
    body.extend_from_slice(b"Disallow: /late\n");
    assert!(
        Matcher::new(&body).is_allowed("a", "/late"),
        "rules past 500 KiB are ignored"
    );
    assert!(
        !Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited())
            .is_allowed("a", "/late")
    );
}

/// 2.2.1 (Google): a User-agent line after a non-rule line still extends
/// the group.
#[test]
fn group_continuation_after_other_lines() {
    let body = "User-agent: a\nCrawl-delay: 1\nUser-agent: b\nDisallow: /\n";
    assert!(!allowed(body, "a", "/x"));
    assert!(!allowed(body, "b", "/x"));
}

/// RFC 9309's matching, written out plainly: `*` any run of bytes, a final
/// `$` the end of the path.
fn reference_matches(pat: &[u8], path: &[u8]) -> bool {
    let (pat, anchored) = match pat.split_last() {
        Some((b'$', rest)) => (rest, true),
        _ => (pat, false),
    };
    fn go(pat: &[u8], path: &[u8], anchored: bool) -> bool {
        match pat.split_first() {
            None => !anchored || path.is_empty(),
            Some((b'*', rest)) => (0..=path.len()).any(|i| go(rest, &path[i..], anchored)),
            Some((c, rest)) => path.first() == Some(c) && go(rest, &path[1..], anchored),
        }
    }
    go(pat, path, anchored)
}

/// 20,000 paths of `/` and up to `max_len - 1` bytes of `alphabet`,
/// from a xorshift seed (`shift` drops low bits of each draw).
fn random_paths(alphabet: &[u8], mut seed: u64, max_len: u64, shift: u32) -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    for _ in 0..20_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = 1 + (seed % max_len) as usize;
        let mut path = vec![b'/'];
        let mut s = seed >> shift;
        for _ in 1..len {
            path.push(alphabet[(s % alphabet.len() as u64) as usize]);
            s /= alphabet.len() as u64;
        }
        paths.push(path);
    }
    paths
}

/// One `*` group of `rules` (kind, pattern): every path's verdict, rule
/// by rule and through the path index, is the reference's (the longest
/// matching rule decides, Allow wins a tie). Returns (allowed,
/// disallowed).
fn verdicts_as_the_reference(rules: &[(&str, &str)], paths: &[Vec<u8>]) -> (usize, usize) {
    let mut body = String::from("User-agent: *\n");
    for (kind, pat) in rules {
        body.push_str(&format!("{kind}: {pat}\n"));
    }
    let m = Matcher::compile(
        body.as_bytes(),
        Semantics::Google,
        &ParseOptions::unlimited(),
    );
    let sel = m.select("anybot");
    let ix = m.index_selection(&sel, &mut 0);
    let (mut allowed, mut disallowed) = (0, 0);
    for path in paths {
        let best = rules
            .iter()
            .filter(|(_, p)| reference_matches(p.as_bytes(), path))
            .map(|(k, p)| (p.len(), *k == "allow"))
            .max();
        let want = best.is_none_or(|(_, allow)| allow);
        let shown = String::from_utf8_lossy(path);
        assert_eq!(m.check_path("anybot", path).allowed, want, "path {shown}");
        assert_eq!(
            m.check_indexed(&ix, path, &mut 0).allowed,
            want,
            "path {shown}"
        );
        allowed += usize::from(want);
        disallowed += usize::from(!want);
    }
    (allowed, disallowed)
}

/// Many wildcard rules with no literal start (which the matcher filters by
/// a pair of their bytes once a query meets several) and rules around
/// them: every verdict is the longest matching rule's, Allow winning a
/// tie, over thousands of paths made of the rules' own bytes.
#[test]
fn leading_wildcard_rules_match_as_written() {
    let rules: &[(&str, &str)] = &[
        ("disallow", "/*ab"),
        ("disallow", "/*b?c="),
        ("allow", "/*ab/ok"),
        ("disallow", "/*x$"),
        ("disallow", "*zz"),
        ("disallow", "/*a*b"),
        ("allow", "/*.php$"),
        ("disallow", "/*?"),
        ("disallow", "/*/=/"),
        ("allow", "/*ba"),
        ("disallow", "/a*"),
        ("disallow", "/*oo*k$"),
    ];
    let paths = random_paths(b"ab/?c=xz.phok", 0x2545_F491_4F6C_DD1D, 9, 0);
    let (_, disallowed) = verdicts_as_the_reference(rules, &paths);
    assert!(disallowed > 5_000 && disallowed < 15_000, "{disallowed}");
}

/// A group of more rules than one chunk of head filters (tested sixteen
/// at a time): literal rules of every head length, `$` rules, wildcards
/// and `/`, over short paths, paths holding `#` (which no rule holds)
/// and paths made of the rules' bytes. Every verdict is the longest
/// matching rule's, Allow winning a tie, as rule by rule.
#[test]
fn chunked_head_filters_keep_every_verdict() {
    let rules: &[(&str, &str)] = &[
        ("disallow", "/"),
        ("allow", "/a"),
        ("disallow", "/ab"),
        ("allow", "/abc"),
        ("disallow", "/b$"),
        ("allow", "/ba$"),
        ("disallow", "/c"),
        ("disallow", "/ca/"),
        ("allow", "/ca/b"),
        ("disallow", "/*c$"),
        ("allow", "/a*b"),
        ("disallow", "/b*"),
        ("allow", "/bb"),
        ("disallow", "/cc"),
        ("allow", "/cab"),
        ("disallow", "/acb"),
        ("allow", "/bca/"),
        ("disallow", "/a/"),
        ("allow", "/a/a$"),
        ("disallow", "/ /"),
        ("allow", "/%23"),
        ("disallow", "*a/"),
        ("allow", "/c/"),
        ("disallow", "/bc"),
        ("allow", "/ac"),
        ("disallow", "/aa"),
        ("allow", "/cb"),
        ("disallow", "/ba/c"),
        ("allow", "/b/a"),
        ("disallow", "/cba"),
        ("allow", "/aab"),
        ("disallow", "/bbc$"),
        ("allow", "/ccc"),
        ("disallow", "/cac"),
    ];
    let mut paths = vec![b"/".to_vec(), b"/a".to_vec(), b"/#".to_vec()];
    paths.extend(random_paths(b"abc/#% 23", 0x9E37_79B9_7F4A_7C15, 6, 8));
    let (allowed, disallowed) = verdicts_as_the_reference(rules, &paths);
    assert!(
        allowed > 1_000 && disallowed > 1_000,
        "{allowed} {disallowed}"
    );
}

/// Literal starts around a word's length (the first eight bytes of each
/// rule are compared as one word with the path's, and decide alone a
/// plain rule no longer than that): rules of seven, eight and nine
/// bytes, `$` and `*` at the word's edge, and rules with many `*`s (a
/// rule longer than a path by more than its group's `*`s and anchors is
/// passed over), over paths shorter and longer than a word and paths
/// holding a NUL, in a group under a chunk of head filters and in one
/// over it. Every verdict is the longest matching
/// rule's, Allow winning a tie, as rule by rule.
#[test]
fn word_filters_keep_every_verdict() {
    let rules: &[(&str, &str)] = &[
        ("disallow", "/aaaaaa"),
        ("allow", "/aaaaaaa"),
        ("disallow", "/aaaaaaab"),
        ("allow", "/abababa$"),
        ("disallow", "/ababab$"),
        ("allow", "/aaaaaa*b"),
        ("disallow", "/aaaaaaa*"),
        ("allow", "/abab"),
        ("disallow", "/ab/ab/ab/"),
        ("allow", "/ab/ab/a$"),
        ("disallow", "/b"),
        ("allow", "/bbbbbbbbb"),
        ("disallow", "/ba*ab$"),
        ("allow", "/bbbbbbb"),
        // Patterns much longer than the shortest paths they match.
        ("allow", "/a*******"),
        ("disallow", "/b****$"),
        ("allow", "/ab/*/**$"),
    ];
    let mut paths = vec![
        b"/".to_vec(),
        b"/aaaaaa\0b".to_vec(),
        b"/aaaaaaa\0".to_vec(),
        b"/ab\0".to_vec(),
    ];
    // Each rule's bytes cut anywhere, then one or two more bytes.
    for (_, pat) in rules {
        let lit: Vec<u8> = pat.bytes().filter(|&b| b != b'*' && b != b'$').collect();
        for cut in 1..=lit.len() {
            for tail in [&b""[..], b"a", b"b", b"/", b"\0", b"ba", b"aa"] {
                paths.push([&lit[..cut], tail].concat());
            }
        }
    }
    paths.extend(random_paths(b"ab/\0", 0xD1B5_4A32_D192_ED03, 13, 4));
    let (small, _) = verdicts_as_the_reference(rules, &paths);
    // The same rules past a chunk of head filters (rules that never
    // match any of these paths: their head is `zz`).
    let mut more = rules.to_vec();
    let filler: Vec<String> = (0..20).map(|i| format!("/zz{i}")).collect();
    more.extend(filler.iter().map(|p| ("disallow", p.as_str())));
    let (chunked, disallowed) = verdicts_as_the_reference(&more, &paths);
    assert_eq!(small, chunked);
    assert!(small > 1_000 && disallowed > 1_000, "{small} {disallowed}");
}
