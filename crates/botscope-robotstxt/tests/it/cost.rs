//! Counted cost: a query's work is bounded by the file's size, whatever
//! its shape (many agents sharing a token, many groups, many rules, long
//! patterns full of `*`).

use botscope_robotstxt::{Matcher, ParseOptions, Semantics};

/// The bound every query keeps: linear in the file, times the query's own
/// length in 32-byte blocks (see `Matcher::check_selected_counted`).
fn bound(body: &[u8], agent: &str, url: &str) -> u64 {
    (body.len() as u64 + 64) * (2 + url.len() as u64 / 32 + agent.len() as u64 / 8)
}

/// One group named by `agents` User-agent lines over `rules` Disallow lines.
fn one_group(agents: usize, rules: usize) -> Vec<u8> {
    let mut b = Vec::new();
    for i in 0..agents {
        b.extend_from_slice(format!("User-agent: b{i}\n").as_bytes());
    }
    for i in 0..rules {
        b.extend_from_slice(format!("Disallow: /p{i}\n").as_bytes());
    }
    b
}

/// Pathological shapes a stranger can write in well under 500 KiB.
pub fn shapes() -> Vec<(&'static str, Vec<u8>)> {
    let mut v = vec![(
        "15,000 agents sharing a token over 1,000 rules",
        one_group(15_000, 1_000),
    )];
    // Many groups, each naming the same token: Google merges them all.
    let mut b = Vec::new();
    for i in 0..5_000 {
        b.extend_from_slice(format!("User-agent: bot{i}\nDisallow: /g{i}\n\n").as_bytes());
    }
    v.push(("5,000 groups of one token", b));
    // Long patterns with many wildcards.
    let mut b = b"User-agent: *\n".to_vec();
    for i in 0..200 {
        b.extend_from_slice(b"Disallow: /");
        for _ in 0..400 {
            b.extend_from_slice(b"a*");
        }
        b.extend_from_slice(format!("{i}$\n").as_bytes());
    }
    v.push(("200 patterns of 400 wildcards", b));
    // The same rule duplicated.
    let mut b = b"User-agent: *\n".to_vec();
    for _ in 0..30_000 {
        b.extend_from_slice(b"Disallow: /x\n");
    }
    v.push(("30,000 copies of one rule", b));
    // Many distinct agents (the 1996 draft compares each as a substring).
    let mut b = Vec::new();
    for i in 0..20_000 {
        b.extend_from_slice(format!("User-agent: agent-{i:05}\n").as_bytes());
    }
    b.extend_from_slice(b"Disallow: /\n");
    v.push(("20,000 distinct agents", b));
    v
}

#[test]
fn every_query_is_bounded_by_the_file() {
    let long = format!("/{}", "a".repeat(2_000));
    let urls = [
        "/",
        "/p999",
        "/g4999",
        "/x",
        long.as_str(),
        "https://example.com/aaaaaaaaaaaaaaaaaaaa0",
    ];
    for (name, body) in shapes() {
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let m = Matcher::compile(&body, sem, &ParseOptions::unlimited());
            for agent in [
                "b",
                "b7",
                "bot",
                "agent-19999",
                "Googlebot",
                "Mozilla/5.0 (compatible; bot/1.0)",
            ] {
                for url in urls {
                    let mut work = 0;
                    let v = m.check_counted(agent, url, &mut work);
                    assert_eq!(
                        v,
                        m.check(agent, url),
                        "{name}, {sem:?}: counted and plain agree"
                    );
                    assert!(
                        work <= bound(&body, agent, url),
                        "{name}, {sem:?}, {agent} {url}: {work} units for {} bytes",
                        body.len()
                    );
                }
            }
        }
    }
}

/// Found: with 15,000 `User-agent: bN` lines in one group (all the token
/// `b` under Google's rules) the group was scanned once per line, 15,000
/// times per URL. It is scanned once: a query costs about the group's
/// rules, as if the group had one User-agent line.
#[test]
fn a_group_is_scanned_once_however_many_lines_name_it() {
    let many = one_group(15_000, 1_000);
    let single = one_group(1, 1_000);
    let (m, s) = (Matcher::new(&many), Matcher::new(&single));
    for i in (0..1_000).step_by(7) {
        let url = format!("https://example.com/q{i}");
        let (mut wm, mut ws) = (0, 0);
        let vm = m.check_counted("b", &url, &mut wm);
        let vs = s.check_counted("b", &url, &mut ws);
        assert_eq!(vm.allowed, vs.allowed);
        assert!(wm <= ws + 32, "{url}: {wm} units against {ws} for one line");
        assert!(wm <= 1_100, "{url}: {wm} units for a group of 1,000 rules");
    }
    assert!(!m.is_allowed("b", "/p3"));
    assert!(m.is_allowed("b", "/q3"));
    // Google matches a line by its token's letters: `b12` is not `b`.
    assert!(m.is_allowed("b12", "/p3"));
}

/// Equal selections give equal verdicts, and a selection answers as the
/// agent would.
#[test]
fn selections_answer_as_their_agent() {
    let body = b"User-agent: a\nUser-agent: A\nDisallow: /x\n\nUser-agent: *\nDisallow: /y\n\nUser-agent: a\nAllow: /x/ok\n";
    for sem in [Semantics::Google, Semantics::Draft1996] {
        let m = Matcher::compile(body, sem, &ParseOptions::default());
        for agent in ["a", "A", "zzz", "Mozilla/5.0 (compatible; a/1.0)"] {
            let sel = m.select(agent);
            for path in ["/x", "/x/ok", "/y", "/"] {
                assert_eq!(
                    m.check_selected(&sel, path.as_bytes()),
                    m.check_path(agent, path.as_bytes()),
                    "{sem:?} {agent} {path}"
                );
            }
        }
        assert_eq!(m.select("a"), m.select("A"));
        assert_ne!(m.select("a"), m.select("zzz"));
    }
}

/// The indexed form answers as the plain one, on every vector and on every
/// path each corpus file names, under both semantics.
#[test]
fn indexed_selections_answer_as_plain_ones() {
    let check = |body: &[u8], agents: &[&str], paths: &[Vec<u8>], what: &str| {
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let m = Matcher::compile(body, sem, &ParseOptions::default());
            let one_by_one: Vec<_> = agents.iter().map(|a| m.select(a)).collect();
            let many: Vec<&str> = agents
                .iter()
                .chain(agents)
                .chain(agents)
                .chain(agents)
                .copied()
                .collect();
            let at_once = m.select_many(&many, &mut 0);
            assert_eq!(
                &at_once[..agents.len()],
                &one_by_one[..],
                "{what} {sem:?}: select_many"
            );
            for agent in agents {
                let sel = m.select(agent);
                let mut built = 0;
                let ix = m.index_selection(&sel, &mut built);
                assert!(
                    built <= m.index_cost(&sel),
                    "{what} {sem:?} {agent}: building counted {built}, index_cost said {}",
                    m.index_cost(&sel)
                );
                for p in paths {
                    let mut work = 0;
                    assert_eq!(
                        m.check_indexed(&ix, p, &mut work),
                        m.check_selected(&sel, p),
                        "{what} {sem:?} {agent} {}",
                        String::from_utf8_lossy(p)
                    );
                    assert!(work <= 2 * p.len() as u64 + 2 * body.len() as u64 + 8);
                    // As a request target: cut at its `#`, wherever the
                    // fragment starts and whatever it holds (here the
                    // path itself, rule literals and segments included).
                    let mid = p.len() / 2;
                    let targets = [
                        p.clone(),
                        [&p[..], b"#"].concat(),
                        [&p[..], b"#", &p[..]].concat(),
                        [&p[..mid], b"#", &p[mid..]].concat(),
                        [&p[..mid], b"#/", &p[..]].concat(),
                        [b"/", &p[..]].concat(),
                        p.get(1..).unwrap_or_default().to_vec(),
                    ];
                    for t in targets {
                        let path = botscope_robotstxt::path_of(&t);
                        let verdict = m.check_indexed_target(&ix, &t, &mut 0);
                        assert_eq!(
                            verdict,
                            m.check_indexed(&ix, &path, &mut 0),
                            "{what} {sem:?} {agent} target {}",
                            String::from_utf8_lossy(&t)
                        );
                        assert_eq!(
                            m.indexed_target_allowed(&ix, &t, &mut 0),
                            verdict.allowed,
                            "{what} {sem:?} {agent} allowed {}",
                            String::from_utf8_lossy(&t)
                        );
                    }
                }
            }
        }
    };
    // Roots with and without rules of their own, and paths that start
    // elsewhere than at `/`: the walk steps over a root that holds none.
    let edge_paths: Vec<Vec<u8>> = ["", "/", "/x", "x", "//x", "/foo", "foo", "/foo/x$", "$"]
        .map(|p| p.as_bytes().to_vec())
        .to_vec();
    for body in [
        "User-agent: *\n",
        "User-agent: *\nDisallow:\n",
        "User-agent: *\nDisallow: foo\n",
        "User-agent: *\nDisallow: *x\nAllow: /foo\n",
        "User-agent: *\nDisallow: $\n",
        "User-agent: *\nDisallow: /\nAllow: /$\n",
        "User-agent: *\nDisallow: /*o\nDisallow: /*x\nAllow: /foo/\n",
    ] {
        check(body.as_bytes(), &["a"], &edge_paths, "edge");
    }
    for v in crate::jsonl("google_vectors.jsonl")
        .into_iter()
        .chain(crate::jsonl("google_aux_vectors.jsonl"))
    {
        let body = v["robotstxt"].as_str().unwrap_or_default();
        let agent = v["useragent"].as_str().unwrap_or_default();
        let url = v["url"].as_str().unwrap_or_default();
        let path = botscope_robotstxt::path_of(url.as_bytes()).into_owned();
        check(body.as_bytes(), &[agent, "zzz"], &[path], "vector");
    }
    let mut n = 0;
    for entry in std::fs::read_dir(crate::data("corpus")).expect("corpus") {
        let path = entry.expect("entry").path();
        let body = std::fs::read(&path).expect("read");
        let robots = botscope_robotstxt::Robots::parse(&body);
        let mut paths: Vec<Vec<u8>> = robots
            .rules()
            .map(|r| {
                let v = r.normalized.trim();
                let v = v.strip_suffix('$').unwrap_or(v);
                botscope_robotstxt::path_of(v.as_bytes()).into_owned()
            })
            .collect();
        paths.extend(
            ["/", "/index.html", "/a%2Fb/%41", "/search?q=1"].map(|p| p.as_bytes().to_vec()),
        );
        let mut agents: Vec<String> = robots
            .groups
            .iter()
            .flat_map(|g| &g.user_agents)
            .map(|u| u.value.clone())
            .take(20)
            .collect();
        agents.push("Googlebot".into());
        agents.push("qqqqqqqq".into());
        let agents: Vec<&str> = agents.iter().map(String::as_str).collect();
        check(&body, &agents, &paths, &path.display().to_string());
        n += 1;
    }
    assert!(n > 250);
}

/// A path walked through the index pays for the wildcard rules that
/// start where it passes only when it may match one: rules that start at
/// the same place are searched for together, a segment each, in one pass
/// over the path. A log's paths judged against a file with many wildcard
/// rules at its root (eBay's `/*?maspect`, `/*rt=nc` …) cost a walk, not
/// a search per rule. The verdicts stay the rules' own.
#[test]
fn wildcard_rules_starting_together_are_searched_at_once() {
    let mut body = String::from("User-agent: *\nDisallow: /private/\n");
    for i in 0..40 {
        body.push_str(&format!(
            "Disallow: /*param{i}=\nDisallow: /catalog/*sort{i}$\n"
        ));
    }
    let m = Matcher::compile(body.as_bytes(), Semantics::Google, &ParseOptions::default());
    let sel = m.select("Mozilla/5.0");
    let ix = m.index_selection(&sel, &mut 0);
    let cases: [(&[u8], bool); 7] = [
        (
            b"/catalog/207/item-12638?utm_source=news&utm_medium=email&session=41ff33de0f379795",
            true,
        ),
        (b"/", true),
        (b"/p?x=1", true),
        (b"/catalog/207/item?param17=1", false),
        (b"/any/where?a=1&param39=", false),
        (b"/catalog/x/sort5", false),
        (b"/catalog/x/sort5?", true),
    ];
    for (path, allowed) in cases {
        let shown = String::from_utf8_lossy(path);
        assert_eq!(
            m.check_path("Mozilla/5.0", path).allowed,
            allowed,
            "{shown}"
        );
        let mut work = 0;
        assert_eq!(
            m.check_indexed(&ix, path, &mut 0).allowed,
            allowed,
            "{shown}"
        );
        m.check_indexed(&ix, path, &mut work);
        let holds = |seg: &[u8]| path.windows(seg.len()).any(|w| w == seg);
        if !holds(b"param") && !holds(b"sort") {
            // The nodes walked, and a pass over the path for each place
            // where wildcard rules start: not one unit per rule. (A path
            // holding a segment has its rules there tested one by one.)
            let walked = path.len() as u64 + 1;
            assert!(
                work <= walked + 2 * (2 + path.len() as u64 / 32),
                "{shown}: {work} units for 80 wildcard rules"
            );
        }
    }
}

/// One rule of `n` wildcards (`/*a*a…*a*b`, the shape that made Protego's
/// matching exponential, CVE-2026-55520) over a path of `m` bytes.
fn many_wildcards(n: usize, m: usize, anchored: bool) -> (Vec<u8>, String) {
    let mut b = b"User-agent: *\nDisallow: /".to_vec();
    for _ in 0..n {
        b.extend_from_slice(b"*a");
    }
    b.extend_from_slice(if anchored { b"*b$\n" } else { b"*b\n" });
    // `ab` first, so that no filter of the path's bytes skips the match.
    (b, format!("/ab{}", "a".repeat(m)))
}

/// Thousands of wildcards in one rule, and a long path: the match
/// examines at most the path plus nine times the pattern
/// (`SCAN_PER_PATTERN_BYTE`), so the counted work of a query is linear in
/// the input: twice the rule and twice the path cost at most twice the
/// work. A backtracking matcher would not finish. (A rule holds at most
/// 8,331 `*a` pairs: Google cuts a line at `MAX_LINE_LEN` bytes; the
/// test below writes 50,000.)
#[test]
fn thousands_of_wildcards_in_one_rule_cost_linear_work() {
    use botscope_robotstxt::SCAN_PER_PATTERN_BYTE;
    for anchored in [false, true] {
        let mut works = Vec::new();
        for (n, m) in [(4_000, 60_000), (8_000, 120_000)] {
            let (body, path) = many_wildcards(n, m, anchored);
            let matcher = Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited());
            let bound =
                (path.len() as u64 + (SCAN_PER_PATTERN_BYTE + 1) * body.len() as u64) / 32 + 64;
            // No `b` after the `a`s: allowed, after every `a` segment found
            // and the path searched to its end for the `b`.
            let mut work = 0;
            assert!(matcher.check_counted("bot", &path, &mut work).allowed);
            assert!(work <= bound, "n={n}: {work} units, bound {bound}");
            // With a `b` at its end the rule matches.
            let mut w2 = 0;
            assert!(
                !matcher
                    .check_counted("bot", &format!("{path}b"), &mut w2)
                    .allowed
            );
            assert!(w2 <= bound + 1, "n={n}: {w2} units, bound {bound}");
            // Fewer `a`s than the rule has segments: no match.
            let mut w3 = 0;
            assert!(
                matcher
                    .check_counted("bot", &format!("/{}b", "a".repeat(n / 2)), &mut w3)
                    .allowed
            );
            assert!(w3 <= bound);
            works.push(work);
        }
        assert!(works[1] <= 2 * works[0] + 64, "{works:?}: not linear");
        // The bytes examined are in the count: the whole path searched
        // for the `b`, or (anchored) the 4,000 `a` segments found.
        let least = if anchored { 4_000 } else { 60_000 } / 32;
        assert!(works[0] >= least, "{works:?}: the work is counted");
    }
}

/// Tens of thousands of wildcards in one line: the line is cut after
/// `MAX_LINE_LEN` bytes, as Google's parser cuts it (the rule kept is the
/// line's start, 8,331 `*a` pairs), and matching what is kept stays
/// linear. A rule of `*` alone is every segment empty.
#[test]
fn tens_of_thousands_of_wildcards_are_cut_as_google_cuts_the_line() {
    use botscope_robotstxt::MAX_LINE_LEN;
    let (body, _) = many_wildcards(50_000, 0, false);
    let matcher = Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited());
    let kept = (MAX_LINE_LEN - "Disallow: /".len()) / 2;
    let bound = |path: &str| (path.len() as u64 + 10 * MAX_LINE_LEN as u64) / 32 + 64;
    for (a, allowed) in [(kept - 1, true), (kept, false), (200_000, false)] {
        let path = format!("/{}", "a".repeat(a));
        let mut work = 0;
        assert_eq!(
            matcher.check_counted("bot", &path, &mut work).allowed,
            allowed,
            "{a} a's"
        );
        assert!(work <= bound(&path), "{a} a's: {work} units");
    }
    let mut body = b"User-agent: *\nDisallow: /x".to_vec();
    body.extend(std::iter::repeat_n(b'*', 100_000));
    body.extend_from_slice(b"y$\n");
    let matcher = Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited());
    let path = format!("/x{}y", "z".repeat(100_000));
    let mut work = 0;
    // The line is cut before its `y$`: `/x` and stars, which matches.
    assert!(!matcher.check_counted("bot", &path, &mut work).allowed);
    assert!(work <= bound(&path), "{work}");
}
