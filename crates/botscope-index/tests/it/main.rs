//! The research index over real SQLite stores: BotSeer's queries, the
//! bias and favourability against a brute-force computation through the
//! matcher, versions in force at a time, updates, and hostile queries.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use botscope_index::{FavorSort, Index, IndexError, Rank, SearchRequest};
use botscope_robotstxt::{Matcher, ParseOptions, Robots, Semantics};
use botscope_store::{Attempt, Source, SqliteStore, Store};

fn put(s: &mut SqliteStore, host: &str, time: i64, rank: Option<u64>, body: &[u8]) {
    s.record(
        None,
        &[Attempt {
            host: host.into(),
            rank,
            time,
            url: format!("https://{host}/robots.txt"),
            status: Some(200),
            outcome: "parse".into(),
            reason: "success".into(),
            bytes: body.len() as u64,
            body: Some(body.to_vec()),
            source: Source::Import,
            ..Attempt::default()
        }],
    )
    .expect("record");
}

fn search(idx: &Index, q: &str) -> Vec<String> {
    search_with(idx, q, Rank::Relevance, None)
}

fn search_with(idx: &Index, q: &str, rank: Rank, as_of: Option<i64>) -> Vec<String> {
    let r = idx
        .search(&SearchRequest {
            query: q.into(),
            rank,
            limit: 10_000,
            offset: 0,
            semantics: Semantics::Google,
            as_of,
        })
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    assert_eq!(r.total as usize, r.hits.len(), "{q}");
    r.hits.into_iter().map(|h| h.site).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The examples of the seed, on files written for them.
fn botseer_store(dir: &Path) -> SqliteStore {
    let mut s = SqliteStore::open(&dir.join("store.db")).expect("store");
    let files: [(&str, &str); 7] = [
        // Favours Googlebot, has a universal group that disallows all.
        (
            "www.nasa.gov",
            "User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /private/\n",
        ),
        // Disfavours msnbot and slurp, favours googlebot.
        (
            "www.irs.gov",
            "User-agent: *\nDisallow: /cgi-bin/\n\nUser-agent: googlebot\nAllow: /\n\nUser-agent: msnbot\nUser-agent: Slurp\nDisallow: /\n",
        ),
        (
            "data.census.gov",
            "User-agent: msnbot/1.1\nCrawl-delay: 20\nDisallow: /cgi-bin/test/\n",
        ),
        (
            "www.example.com",
            "User-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\nCrawl-delay: 3\nSitemap: https://www.example.com/sitemap.xml\n\nUser-agent: Googlebot\nDisallow: /\n",
        ),
        (
            "news.example.org",
            "# Our crawl policy\nUser-agent: *\nContent-Signal: search=yes, ai-train=no\nContent-Usage: / train-ai=n, search=y\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /\n",
        ),
        (
            "mit.edu",
            "User-agent: *\nDisallow: /Admin/\nCrawl-delay: 1.5\n",
        ),
        ("empty.test", ""),
    ];
    for (i, (host, body)) in files.iter().enumerate() {
        put(&mut s, host, 1_000, Some(i as u64 + 1), body.as_bytes());
    }
    s
}

#[test]
fn botseer_queries_return_what_the_files_say() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = botseer_store(dir.path());
    let ix = dir.path().join("index");
    let report = Index::build(&store, &ix, None, &mut |_| {}).expect("build");
    assert_eq!((report.sites, report.documents), (7, 7));
    let idx = Index::open(&ix).expect("open");
    let q = |q: &str| sorted(search(&idx, q));
    assert_eq!(q("botname:msnbot"), ["data.census.gov", "www.irs.gov"]);
    assert_eq!(q("botname:msnbot/1.1"), ["data.census.gov"]);
    assert_eq!(q("botname:slurp"), ["www.irs.gov"], "lower-cased");
    assert_eq!(
        q("favor:googlebot site:gov"),
        ["www.irs.gov", "www.nasa.gov"]
    );
    assert_eq!(
        q("contain:universal site:gov disallow:/"),
        ["www.irs.gov", "www.nasa.gov"],
        "a `Disallow: /` anywhere in the file"
    );
    assert_eq!(
        q("contain:universal site:gov disallow:/ -botname:msnbot"),
        ["www.nasa.gov"]
    );
    assert_eq!(
        q("favor:googlebot disfavor:msnbot disfavor:slurp"),
        ["www.irs.gov"]
    );
    assert_eq!(q("disfavor:googlebot"), ["www.example.com"]);
    assert_eq!(
        q("disfavor:msnbot/1.1"),
        ["data.census.gov"],
        "no universal group: the universal robot may fetch every path"
    );
    assert_eq!(q("site:nasa.gov"), ["www.nasa.gov"]);
    assert_eq!(q("site:asa.gov"), Vec::<String>::new(), "whole labels");
    assert_eq!(
        q("disallow:/cgi-bin/"),
        ["data.census.gov", "www.example.com", "www.irs.gov"]
    );
    assert_eq!(q("disallow:/cgi-bin/test"), ["data.census.gov"]);
    assert_eq!(q("disallow:test"), ["data.census.gov"], "a segment");
    assert_eq!(q("disallow:admin"), ["mit.edu"], "segments are case-blind");
    assert_eq!(q("disallow:/admin/"), Vec::<String>::new(), "paths are not");
    assert_eq!(q("allow:/"), ["news.example.org", "www.irs.gov"]);
    assert_eq!(q("delay:>10"), ["data.census.gov"]);
    assert_eq!(q("delay:[1 TO 5]"), ["mit.edu", "www.example.com"]);
    assert_eq!(q("delay:{1.5 TO 5]"), ["www.example.com"]);
    assert_eq!(q("delay:<2"), ["mit.edu"]);
    assert_eq!(q("sitemap:*"), ["www.example.com"]);
    assert_eq!(q("sitemap:https://www.example.com/"), ["www.example.com"]);
    assert_eq!(q("signal:ai-train=no"), ["news.example.org"]);
    assert_eq!(q("signal:ai-train=yes"), Vec::<String>::new());
    assert_eq!(q("usage:train-ai=n"), ["news.example.org"]);
    assert_eq!(q("usage:search"), ["news.example.org"]);
    assert_eq!(q("usage:train-ai=y"), Vec::<String>::new());
    assert_eq!(
        q("signal:train-ai"),
        Vec::<String>::new(),
        "the two kinds of term stay apart"
    );
    assert_eq!(q("\"crawl policy\""), ["news.example.org"]);
    assert_eq!(
        q("\"policy crawl\""),
        Vec::<String>::new(),
        "phrases keep their order"
    );
    assert_eq!(q("gptbot"), ["news.example.org"]);
    assert_eq!(q("site:gov -botname:msnbot"), ["www.nasa.gov"]);
    assert_eq!(q("-contain:universal"), ["data.census.gov", "empty.test"]);
    assert_eq!(
        q("botname:gptbot OR (site:edu delay:>1)"),
        ["mit.edu", "news.example.org"]
    );
    assert_eq!(q("").len(), 7);
    // Hits carry the bias of each robot and the lines that matched.
    let r = idx
        .search(&SearchRequest {
            query: "favor:googlebot disfavor:msnbot".into(),
            rank: Rank::Relevance,
            limit: 10,
            offset: 0,
            semantics: Semantics::Google,
            as_of: None,
        })
        .expect("search");
    let h = &r.hits[0];
    assert_eq!(h.site, "www.irs.gov");
    assert_eq!(
        h.bias,
        BTreeMap::from([
            ("googlebot".into(), 1),
            ("msnbot".into(), -1),
            ("slurp".into(), -1)
        ])
    );
    assert_eq!(h.snippet, "4: User-agent: googlebot\n7: User-agent: msnbot");
    assert_eq!(
        (h.rank, h.fetched.as_str(), h.source.as_str()),
        (Some(2), "1970-01-01T00:16:40Z", "import")
    );
}

#[test]
fn ranking_by_bias_and_by_site() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = SqliteStore::open(&dir.path().join("store.db")).expect("store");
    // Googlebot's bias: +2, -1, -1, +1; ranks 40, 1, 3, 2.
    put(
        &mut s,
        "a.test",
        1,
        Some(40),
        b"User-agent: *\nDisallow: /a\nDisallow: /b\n\nUser-agent: Googlebot\nAllow: /\n",
    );
    put(
        &mut s,
        "b.test",
        1,
        Some(1),
        b"User-agent: *\nDisallow: /a\n\nUser-agent: Googlebot\nDisallow: /\n",
    );
    put(
        &mut s,
        "c.test",
        1,
        Some(3),
        b"User-agent: Googlebot\nDisallow: /x\n",
    );
    put(
        &mut s,
        "d.test",
        1,
        Some(2),
        b"User-agent: *\nDisallow: /a\nDisallow: /b\n\nUser-agent: googlebot/2.1\nDisallow: /a\n",
    );
    let ix = dir.path().join("index");
    Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    let idx = Index::open(&ix).expect("open");
    assert_eq!(
        search_with(&idx, "botname:googlebot", Rank::Bias, None),
        ["a.test", "d.test", "c.test", "b.test"],
        "by product token too"
    );
    let least = idx
        .search(&SearchRequest {
            query: "botname:googlebot".into(),
            rank: Rank::LeastBias,
            limit: 10,
            offset: 0,
            semantics: Semantics::Google,
            as_of: None,
        })
        .expect("least");
    let order: Vec<(&str, f64)> = least
        .hits
        .iter()
        .map(|h| (h.site.as_str(), h.score))
        .collect();
    // Least favoured first, the score being the bias itself; b and c tie
    // at -1 and keep the order of relevance, as under `Rank::Bias`.
    assert_eq!(
        order,
        [
            ("c.test", -1.0),
            ("b.test", -1.0),
            ("d.test", 1.0),
            ("a.test", 2.0)
        ]
    );
    let e = idx
        .search(&SearchRequest {
            query: "site:test".into(),
            rank: Rank::Bias,
            limit: 10,
            offset: 0,
            semantics: Semantics::Google,
            as_of: None,
        })
        .expect_err("no robot");
    assert!(e.to_string().contains("--rank bias"), "{e}");
    // Relevance times (1 + popularity).
    let req = |rank| SearchRequest {
        query: "botname:googlebot".into(),
        rank,
        limit: 10,
        offset: 0,
        semantics: Semantics::Google,
        as_of: None,
    };
    let rel = idx.search(&req(Rank::Relevance)).expect("relevance");
    let site = idx.search(&req(Rank::Site)).expect("site");
    for h in &site.hits {
        let r = rel
            .hits
            .iter()
            .find(|x| x.site == h.site)
            .expect("same hits");
        let want = r.score * (1.0 + botscope_index::popularity(h.rank.expect("ranked")));
        assert!(
            (h.score - want).abs() < 1e-4,
            "{}: {} vs {want}",
            h.site,
            h.score
        );
    }
    assert!(site.hits.windows(2).all(|w| w[0].score >= w[1].score));
    let order: Vec<_> = site.hits.iter().map(|h| h.site.as_str()).collect();
    assert_eq!(order, ["c.test", "b.test", "d.test", "a.test"]);
    // Pages.
    let page = |offset| {
        idx.search(&SearchRequest {
            query: "botname:googlebot".into(),
            rank: Rank::Site,
            limit: 2,
            offset,
            semantics: Semantics::Google,
            as_of: None,
        })
        .expect("page")
    };
    let (p1, p2) = (page(0), page(2));
    assert_eq!((p1.total, p2.total), (4, 4));
    let sites: Vec<_> = p1
        .hits
        .iter()
        .chain(&p2.hits)
        .map(|h| h.site.as_str())
        .collect();
    assert_eq!(sites, order);
}

#[test]
fn versions_in_force_and_updates() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = SqliteStore::open(&dir.path().join("store.db")).expect("store");
    put(
        &mut s,
        "a.test",
        100,
        None,
        b"User-agent: *\nDisallow: /one\n",
    );
    put(
        &mut s,
        "a.test",
        200,
        None,
        b"User-agent: *\nDisallow: /two\n",
    );
    put(
        &mut s,
        "b.test",
        150,
        None,
        b"User-agent: *\nDisallow: /one\n",
    );
    let ix = dir.path().join("index");
    Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    let mut idx = Index::open(&ix).expect("open");
    assert_eq!(idx.documents(), 3);
    let at = |idx: &Index, q: &str, t: Option<i64>| sorted(search_with(idx, q, Rank::Relevance, t));
    assert_eq!(at(&idx, "disallow:/one", None), ["b.test"]);
    assert_eq!(at(&idx, "disallow:/one", Some(120)), ["a.test"]);
    assert_eq!(at(&idx, "disallow:/one", Some(170)), ["a.test", "b.test"]);
    assert_eq!(at(&idx, "disallow:/two", Some(199)), Vec::<String>::new());
    assert_eq!(at(&idx, "disallow:/two", Some(200)), ["a.test"]);
    assert_eq!(at(&idx, "", Some(99)), Vec::<String>::new());
    let f = idx
        .favor(None, Some(120), Semantics::Google)
        .expect("favor");
    assert_eq!(f.n, 1);

    // An update reindexes only the site that changed.
    put(
        &mut s,
        "b.test",
        300,
        None,
        b"User-agent: *\nDisallow: /three\n",
    );
    put(
        &mut s,
        "a.test",
        300,
        None,
        b"User-agent: *\nDisallow: /two\n",
    );
    let r = idx.update(&s).expect("update");
    assert_eq!((r.sites, r.documents), (1, 2));
    assert_eq!(idx.documents(), 4);
    assert_eq!(at(&idx, "disallow:/three", None), ["b.test"]);
    assert_eq!(at(&idx, "disallow:/one", None), Vec::<String>::new());
    assert_eq!(at(&idx, "disallow:/one", Some(170)), ["a.test", "b.test"]);
    let r = idx.update(&s).expect("nothing new");
    assert_eq!(r.sites, 0);
    let reopened = Index::open(&ix).expect("reopen");
    assert_eq!(reopened.meta().mark, s.change_mark().expect("mark"));

    // An index of one date holds each site's version in force then.
    let ix2 = dir.path().join("index-170");
    let r = Index::build(&s, &ix2, Some(170), &mut |_| {}).expect("build");
    assert_eq!(r.documents, 2);
    let old = Index::open(&ix2).expect("open");
    assert_eq!(old.meta().as_of, Some(170));
    assert_eq!(at(&old, "disallow:/one", None), ["a.test", "b.test"]);
}

#[test]
fn what_is_not_an_index_is_left_alone() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = botseer_store(dir.path());
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).expect("dir");
    std::fs::write(notes.join("thesis.tex"), "chapter 1").expect("write");
    let e = Index::build(&s, &notes, None, &mut |_| {}).expect_err("refused");
    assert!(matches!(e, IndexError::NotAnIndex { .. }), "{e}");
    assert_eq!(
        std::fs::read_to_string(notes.join("thesis.tex")).expect("kept"),
        "chapter 1"
    );
    assert_eq!(std::fs::read_dir(&notes).expect("dir").count(), 1);
    // A file in the way is refused and left where it was.
    let file = dir.path().join("thesis.pdf");
    std::fs::write(&file, "%PDF").expect("write");
    let e = Index::build(&s, &file, None, &mut |_| {}).expect_err("refused");
    assert!(matches!(e, IndexError::NotAnIndex { .. }), "{e}");
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "%PDF");
    assert!(!dir.path().join(".thesis.pdf.old").exists());
    assert!(matches!(
        Index::open(&notes),
        Err(IndexError::NotAnIndex { .. })
    ));
    assert!(matches!(
        Index::open(&dir.path().join("none")),
        Err(IndexError::Missing { .. })
    ));
    // A rebuild replaces an index of ours.
    let ix = dir.path().join("index");
    Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    Index::build(&s, &ix, None, &mut |_| {}).expect("rebuild");
    assert_eq!(Index::open(&ix).expect("open").documents(), 7);
}

#[test]
fn hostile_queries_are_errors() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = botseer_store(dir.path());
    let ix = dir.path().join("index");
    Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    let idx = Index::open(&ix).expect("open");
    let run = |q: String| {
        idx.search(&SearchRequest {
            query: q,
            rank: Rank::Relevance,
            limit: 10,
            offset: 0,
            semantics: Semantics::Google,
            as_of: None,
        })
    };
    for q in [
        "x".repeat(100 * 1024),
        format!("{}site:gov{}", "(".repeat(5000), ")".repeat(5000)),
        "bogus:field".into(),
        "disallow:".into(),
        "delay:[a TO b]".into(),
        "(((".into(),
        "\u{0}\u{1b}[31m:x".into(),
    ] {
        match run(q.clone()) {
            Err(IndexError::Query(e)) => assert!(e.column >= 1, "{q:.40}: {e}"),
            other => panic!("{q:.40}: {other:?}"),
        }
    }
    // Odd values are data, not syntax.
    for q in [
        "disallow:/*?$",
        "disallow:/((",
        "botname:\"a b\"",
        "allow:-/x",
        "disallow:.*",
        "sitemap:[a",
    ] {
        run(q.into()).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
}

/// The files of the corpus subset the repository ships.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../botscope-robotstxt/tests/data/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let tlds = ["gov", "com", "edu", "org"];
    files
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let stem = p.file_stem().expect("name").to_string_lossy().into_owned();
            (
                format!("s{stem}.example.{}", tlds[i % 4]),
                std::fs::read(p).expect("read"),
            )
        })
        .collect()
}

/// Bias per named robot, the slow way: every path of DIR asked of the
/// matcher for the universal robot and for each name.
fn brute_bias(body: &[u8], sem: Semantics) -> BTreeMap<String, i64> {
    let opts = ParseOptions::default();
    let robots = Robots::parse_with(body, &opts);
    let m = Matcher::compile(body, sem, &opts);
    let mut dir: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for r in robots
        .groups
        .iter()
        .flat_map(|g| &g.rules)
        .chain(&robots.orphan_rules)
    {
        let shown = r.pattern.trim();
        let shown = shown.strip_suffix('$').unwrap_or(shown);
        if shown.is_empty() || dir.contains_key(shown) {
            continue;
        }
        let n = r.normalized.trim();
        let n = n.strip_suffix('$').unwrap_or(n);
        let path = if n.starts_with('/') {
            n.to_owned()
        } else {
            format!("/{n}")
        };
        dir.insert(shown.to_owned(), path.into_bytes());
    }
    let all_names: Vec<String> = robots
        .groups
        .iter()
        .flat_map(|g| &g.user_agents)
        .map(|u| u.value.trim().to_ascii_lowercase())
        .collect();
    let tokens: Vec<String> = robots
        .groups
        .iter()
        .flat_map(|g| &g.user_agents)
        .map(|u| u.token.to_ascii_lowercase())
        .collect();
    // A universal robot: a name no group can mean.
    let universal = (1..)
        .map(|n| format!("zzuniversal{n}"))
        .find(|c| match sem {
            Semantics::Google => !tokens.contains(c),
            Semantics::Draft1996 => all_names
                .iter()
                .all(|v| v.is_empty() || v == "*" || !c.contains(v.as_str())),
        })
        .expect("a free name");
    let allowed = |agent: &str| {
        dir.values()
            .filter(|p| m.check_path(agent, p).allowed)
            .count() as i64
    };
    let u = allowed(&universal);
    let mut out = BTreeMap::new();
    for g in &robots.groups {
        for ua in &g.user_agents {
            let name = ua.value.trim().to_ascii_lowercase();
            if ua.global || name.is_empty() || out.contains_key(&name) {
                continue;
            }
            let ask = match sem {
                Semantics::Google if !ua.token.is_empty() => ua.token.clone(),
                _ => ua.value.trim().to_owned(),
            };
            out.insert(name, allowed(&ask) - u);
        }
    }
    out
}

#[test]
fn favorability_on_the_corpus_agrees_with_brute_force() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = SqliteStore::open(&dir.path().join("store.db")).expect("store");
    let files = corpus();
    assert!(files.len() > 250);
    for (host, body) in &files {
        put(&mut s, host, 1_000, None, body);
    }
    let ix = dir.path().join("index");
    Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    let idx = Index::open(&ix).expect("open");
    for sem in [Semantics::Google, Semantics::Draft1996] {
        let brute: Vec<(String, BTreeMap<String, i64>)> = files
            .iter()
            .map(|(h, b)| (h.clone(), brute_bias(b, sem)))
            .collect();
        for (where_, keep) in [(None, ""), (Some("site:gov"), ".gov")] {
            let mut want: BTreeMap<String, [u64; 3]> = BTreeMap::new();
            let mut n = 0;
            for (host, biases) in brute.iter().filter(|(h, _)| h.ends_with(keep)) {
                n += 1;
                let _ = host;
                for (r, &b) in biases {
                    let c = want.entry(r.clone()).or_default();
                    c[0] += 1;
                    c[1] += u64::from(b > 0);
                    c[2] += u64::from(b < 0);
                }
            }
            let got = idx.favor(where_, None, sem).expect("favor");
            assert_eq!(got.n, n, "{sem:?} {where_:?}");
            let got: BTreeMap<String, [u64; 3]> = got
                .robots
                .iter()
                .map(|r| (r.robot.clone(), [r.appeared, r.favored, r.disfavored]))
                .collect();
            assert_eq!(got, want, "{sem:?} {where_:?}");
        }
        // Each file's bias, as the hits report it.
        let r = idx
            .search(&SearchRequest {
                query: String::new(),
                rank: Rank::Relevance,
                limit: 10_000,
                offset: 0,
                semantics: sem,
                as_of: None,
            })
            .expect("all");
        let got: BTreeMap<String, BTreeMap<String, i64>> =
            r.hits.into_iter().map(|h| (h.site, h.bias)).collect();
        let want: BTreeMap<String, BTreeMap<String, i64>> = brute.into_iter().collect();
        assert_eq!(got, want, "{sem:?}");
    }
    // Sorting and the minimum.
    let t = idx
        .favor(None, None, Semantics::Google)
        .expect("favor")
        .sorted(FavorSort::Favorability, 3);
    assert!(t.robots.iter().all(|r| r.appeared >= 3));
    assert!(
        t.robots
            .windows(2)
            .all(|w| w[0].favorability >= w[1].favorability)
    );
    // botname: agrees with the files' User-agent lines.
    let named: BTreeSet<String> = files
        .iter()
        .filter(|(_, b)| {
            Robots::parse_with(b, &ParseOptions::default())
                .groups
                .iter()
                .flat_map(|g| &g.user_agents)
                .any(|u| {
                    botscope_index::product_token(&u.value.trim().to_lowercase()) == "googlebot"
                })
        })
        .map(|(h, _)| h.clone())
        .collect();
    let got: BTreeSet<String> = search(&idx, "botname:googlebot").into_iter().collect();
    assert_eq!(got, named);
    assert!(named.len() > 10, "{}", named.len());
}

/// Every real file's bias is computed, far within the work budget: the cap
/// only ever stops crafted files. `BOTSCOPE_CORPUS=DIR` runs it over
/// another folder of robots.txt files (the shared corpus: 11,767 files).
#[test]
fn real_files_are_far_within_the_bias_budget() {
    let files: Vec<(String, Vec<u8>)> = match std::env::var_os("BOTSCOPE_CORPUS") {
        Some(dir) => std::fs::read_dir(dir)
            .expect("corpus")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .map(|p| (p.display().to_string(), std::fs::read(&p).expect("read")))
            .collect(),
        None => corpus(),
    };
    let mut works = Vec::new();
    for (name, body) in &files {
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let b = botscope_index::bias(body, sem);
            assert!(b.computed(), "{name} {sem:?}: {:?}", b.too_complex);
            works.push((b.work, name.clone(), sem.as_str()));
        }
    }
    works.sort();
    let at = |q: f64| works[((works.len() - 1) as f64 * q) as usize].0;
    let max = works.last().expect("files");
    eprintln!(
        "bias work over {} files: median {}, p99 {}, p99.9 {}, max {} ({} {}); cap {}",
        files.len(),
        at(0.5),
        at(0.99),
        at(0.999),
        max.0,
        max.1,
        max.2,
        botscope_index::BIAS_WORK_CAP
    );
    assert!(max.0 < botscope_index::BIAS_WORK_CAP / 4);
}

/// Trends count the classes stored at index time; on the real files, for
/// every token any of them names (and whole User-Agent headers, `*`, and
/// names no file uses), under both semantics, every period's counts equal
/// those made by asking each site's file in force of the matcher. A file
/// past the budget is read from its body and said to be.
#[test]
fn trends_on_the_corpus_agree_with_every_files_matcher() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = SqliteStore::open(&dir.path().join("store.db")).expect("store");
    let files = corpus();
    // 2024-01-15 every site; 2024-03-10 a third of them change to another
    // site's file; 2024-05-02 the crafted file on one site.
    let (jan, mar, may) = (1_705_276_800, 1_710_028_800, 1_714_608_000);
    let mut in_force: Vec<Vec<(String, Vec<u8>)>> = vec![Vec::new(); 3];
    let crafted = botscope_testkit::many_named_groups(5_000);
    let name = botscope_testkit::robot_name;
    for (i, (host, body)) in files.iter().enumerate() {
        put(&mut s, host, jan, None, body);
        in_force[0].push((host.clone(), body.clone()));
        let now = if i % 3 == 0 {
            let other = &files[(i * 7 + 1) % files.len()].1;
            put(&mut s, host, mar, None, other);
            other.clone()
        } else {
            body.clone()
        };
        in_force[1].push((host.clone(), now.clone()));
        let later = if i == 5 {
            put(&mut s, host, may, None, &crafted);
            crafted.clone()
        } else {
            now
        };
        in_force[2].push((host.clone(), later));
    }
    let ix = dir.path().join("index");
    Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    let idx = Index::open(&ix).expect("open");
    let mut agents: BTreeSet<String> = BTreeSet::new();
    for (_, body) in &files {
        for ua in Robots::parse(body)
            .groups
            .iter()
            .flat_map(|g| g.user_agents.iter())
        {
            agents.insert(ua.token.clone());
            agents.insert(ua.value.trim().to_owned());
        }
    }
    agents.extend(
        [
            "*",
            "GPTBot",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "nobody-names-me",
            &name(3),
        ]
        .map(str::to_owned),
    );
    let agents: Vec<String> = agents.into_iter().filter(|a| !a.is_empty()).collect();
    assert!(agents.len() > 100, "{}", agents.len());
    // The months of January, March and May 2024 end with the three states.
    let periods: Vec<(String, i64)> = botscope_index::periods(jan, may, false)
        .into_iter()
        .filter(|(l, _)| ["2024-01", "2024-03", "2024-05"].contains(&l.as_str()))
        .collect();
    assert_eq!(periods.len(), 3);
    for sem in [Semantics::Google, Semantics::Draft1996] {
        let t = idx
            .trends(&botscope_index::TrendsRequest {
                agents: &agents,
                periods: &periods,
                where_: None,
                semantics: sem,
                known_at: None,
                yearly: false,
                crawls: None,
                cohort: None,
                method: Default::default(),
                per_site: None,
            })
            .expect("trends");
        assert_eq!(t.from_bodies, 1, "the crafted file alone");
        for (p, sites) in t.periods.iter().zip(&in_force) {
            let mut want: BTreeMap<String, botscope_index::Counts> = BTreeMap::new();
            for (_, body) in sites {
                let r = botscope_index::restrictions(body, &agents, sem);
                for (a, x) in agents.iter().zip(r) {
                    let c = want.entry(a.clone()).or_default();
                    match x {
                        botscope_index::Restriction::Full => c.full += 1,
                        botscope_index::Restriction::Partial => c.partial += 1,
                        botscope_index::Restriction::None => c.none += 1,
                    }
                }
            }
            assert_eq!(p.sites, sites.len() as u64, "{sem:?} {}", p.period);
            assert_eq!(p.agents, want, "{sem:?} {}", p.period);
        }
    }
    // The studies' methods: every file judged their way, and the sites
    // the exact engine judges otherwise counted per agent.
    use botscope_index::studies::Method;
    for method in [Method::Somesite, Method::Cic] {
        let t = idx
            .trends(&botscope_index::TrendsRequest {
                agents: &agents,
                periods: &periods,
                where_: None,
                semantics: Semantics::Google,
                known_at: None,
                yearly: false,
                crawls: None,
                cohort: None,
                method,
                per_site: None,
            })
            .expect("trends");
        assert_eq!(t.method, method.as_str());
        let mut differ_somewhere = false;
        for (p, sites) in t.periods.iter().zip(&in_force) {
            let mut want: BTreeMap<String, botscope_index::Counts> = BTreeMap::new();
            let mut disagree: BTreeMap<String, u64> = BTreeMap::new();
            for (_, body) in sites {
                let (r, past) = method.judge(body, &agents, Semantics::Google);
                assert!(!past, "real files are within the budget");
                let exact = botscope_index::restrictions(body, &agents, Semantics::Google);
                for ((a, x), e) in agents.iter().zip(r).zip(exact) {
                    *disagree.entry(a.clone()).or_default() += u64::from(x != e);
                    let c = want.entry(a.clone()).or_default();
                    match x {
                        botscope_index::Restriction::Full => c.full += 1,
                        botscope_index::Restriction::Partial => c.partial += 1,
                        botscope_index::Restriction::None => c.none += 1,
                    }
                }
            }
            assert_eq!(p.agents, want, "{method:?} {}", p.period);
            differ_somewhere |= disagree.values().any(|&n| n > 0);
            assert_eq!(
                p.disagree.as_ref(),
                Some(&disagree),
                "{method:?} {}",
                p.period
            );
            assert_eq!(p.past_budget, Some(0));
        }
        assert!(
            differ_somewhere,
            "{method:?} departs from the exact engine on real files"
        );
    }
    // A cohort: every fourth site, weighted by its position, and a host
    // the store never saw; the denominators from the store's first sight.
    let mut list = String::from("host,rank,tokens\nnever-seen.example.org,1,100\n");
    let mut members: BTreeMap<String, f64> = BTreeMap::new();
    for (i, (host, _)) in files.iter().enumerate().filter(|(i, _)| i % 4 == 1) {
        list.push_str(&format!("{host},{},{}\n", i + 2, i as f64 / 2.0));
        members.insert(host.clone(), i as f64 / 2.0);
    }
    let spec = botscope_index::CohortSpec {
        weight: Some("tokens".into()),
        ..Default::default()
    };
    let mut cohort = botscope_index::Cohort::parse("list.csv", &list, &spec).expect("cohort");
    cohort.added = Some(s.sites_added(&cohort.hosts).expect("added"));
    let agents = vec!["GPTBot".to_owned(), "Googlebot".to_owned()];
    let t = idx
        .trends(&botscope_index::TrendsRequest {
            agents: &agents,
            periods: &periods,
            where_: None,
            semantics: Semantics::Google,
            known_at: None,
            yearly: false,
            crawls: None,
            cohort: Some(&cohort),
            method: Default::default(),
            per_site: None,
        })
        .expect("cohort trends");
    let info = t.cohort.as_ref().expect("cohort info");
    assert_eq!(
        (info.hosts, info.in_store),
        (members.len() as u64 + 1, Some(members.len() as u64))
    );
    for (p, sites) in t.periods.iter().zip(&in_force) {
        let mine: Vec<&(String, Vec<u8>)> = sites
            .iter()
            .filter(|(h, _)| members.contains_key(h))
            .collect();
        assert_eq!(p.sites, mine.len() as u64);
        assert_eq!(
            p.no_robots_txt,
            Some(0),
            "every member has a file from January"
        );
        let w = p.weighted.as_ref().expect("weighted");
        let mut full = 0.0;
        let mut count = 0;
        for (h, body) in &mine {
            let r = botscope_index::restrictions(body, &agents, Semantics::Google);
            if r[0] == botscope_index::Restriction::Full {
                full += members[h];
                count += 1;
            }
        }
        assert_eq!(p.agents["GPTBot"].full, count);
        assert!(
            (w.agents["GPTBot"].full - full).abs() < 1e-9,
            "{} {full}",
            w.agents["GPTBot"].full
        );
        let total: f64 = mine.iter().map(|(h, _)| members[h]).sum();
        assert!((w.sites - total).abs() < 1e-9);
        assert!((w.denominator - total).abs() < 1e-9);
    }
}

/// Trends by crawl: three crawls of the real files, each capturing some
/// sites (a file, a 404, twice with the last capture deciding, not at all),
/// with harvests between them; every crawl's counts equal those of each
/// captured site's last capture in it, asked of the matcher, and the sites
/// it captured without a file are its `no_robots_txt`. An index updated
/// after each crawl counts as one built at the end; a cohort counts its
/// own sites, weighted.
#[test]
fn trends_by_crawl_count_each_crawls_last_captures() {
    use botscope_store::{CrawlSites, NewRun};
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = SqliteStore::open(&dir.path().join("store.db")).expect("store");
    let files: Vec<(String, Vec<u8>)> = corpus().into_iter().take(90).collect();
    let agents: Vec<String> = ["*", "GPTBot", "Googlebot", "CCBot", "bingbot"]
        .map(str::to_owned)
        .to_vec();
    let attempt = |host: &str, time: i64, body: Option<&[u8]>| Attempt {
        host: host.into(),
        time,
        url: format!("https://{host}/robots.txt"),
        status: Some(if body.is_some() { 200 } else { 404 }),
        outcome: if body.is_some() { "parse" } else { "allow-all" }.into(),
        reason: "test".into(),
        bytes: body.map_or(0, |b| b.len() as u64),
        body: body.map(<[u8]>::to_vec),
        source: Source::Warc,
        ..Attempt::default()
    };
    let ix = dir.path().join("index");
    // Per crawl: each captured site's last capture (its file, if found).
    type Captures = BTreeMap<String, Option<Vec<u8>>>;
    let mut want: Vec<(String, Captures)> = Vec::new();
    for k in 0..3usize {
        let crawl = format!("CC-MAIN-2024-{:02}", 10 + 8 * k);
        let t0 = 1_710_000_000 + k as i64 * 5_000_000;
        let run = s
            .begin_run(&NewRun {
                input: crawl.clone(),
                input_hash: botscope_store::content_hash(crawl.as_bytes()),
                user_agent: String::new(),
                hosts: 0,
                started: t0,
                crawl: Some(crawl.clone()),
            })
            .expect("run");
        let mut last: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
        let mut batch = Vec::new();
        for (i, (host, _)) in files.iter().enumerate() {
            if i % 5 == k {
                continue;
            }
            let t = t0 + i as i64 * 60;
            let body = &files[(i + k * (i % 3)) % files.len()].1;
            let captured = if (i + k) % 7 == 0 {
                None
            } else {
                Some(body.as_slice())
            };
            batch.push(attempt(host, t, captured));
            // Some sites twice: the later capture decides.
            let last_one = if i % 11 == k {
                let again = if captured.is_some() {
                    None
                } else {
                    Some(files[i].1.as_slice())
                };
                batch.push(attempt(host, t + 30, again));
                again
            } else {
                captured
            };
            last.insert(host.clone(), last_one.map(<[u8]>::to_vec));
        }
        s.record(Some(run), &batch).expect("record");
        s.finish_run(run, t0).expect("finish");
        // A harvest after the crawl changes some files: not the crawl's.
        let later: Vec<Attempt> = files
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 4 == 0)
            .map(|(i, (host, _))| {
                attempt(host, t0 + 1_000_000, Some(&files[(i + 1) % files.len()].1))
            })
            .collect();
        s.record(None, &later).expect("harvest");
        want.push((crawl, last));
        if k == 0 {
            Index::build(&s, &ix, None, &mut |_| {}).expect("build");
        } else {
            Index::open(&ix).expect("open").update(&s).expect("update");
        }
    }
    let crawls: Vec<CrawlSites> = s.crawl_sites(None).expect("crawls");
    assert_eq!(crawls.len(), 3);
    let fresh = dir.path().join("fresh");
    Index::build(&s, &fresh, None, &mut |_| {}).expect("build");
    let count = |sites: &mut dyn Iterator<Item = &Vec<u8>>, sem| {
        let mut out: BTreeMap<String, botscope_index::Counts> = BTreeMap::new();
        for a in &agents {
            out.insert(a.clone(), botscope_index::Counts::default());
        }
        for body in sites {
            let r = botscope_index::restrictions(body, &agents, sem);
            for (a, x) in agents.iter().zip(r) {
                let c = out.get_mut(a).expect("agent");
                match x {
                    botscope_index::Restriction::Full => c.full += 1,
                    botscope_index::Restriction::Partial => c.partial += 1,
                    botscope_index::Restriction::None => c.none += 1,
                }
            }
        }
        out
    };
    for path in [&ix, &fresh] {
        let idx = Index::open(path).expect("open");
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let t = idx
                .trends(&botscope_index::TrendsRequest {
                    agents: &agents,
                    periods: &[],
                    where_: None,
                    semantics: sem,
                    known_at: None,
                    yearly: false,
                    crawls: Some(&crawls),
                    cohort: None,
                    method: Default::default(),
                    per_site: None,
                })
                .expect("trends");
            assert_eq!(t.by, "crawl");
            assert_eq!(t.periods.len(), 3);
            for (p, (crawl, last)) in t.periods.iter().zip(&want) {
                assert_eq!(&p.period, crawl);
                let found: Vec<&Vec<u8>> = last.values().flatten().collect();
                assert_eq!(p.sites, found.len() as u64, "{crawl} {sem:?}");
                assert_eq!(
                    p.no_robots_txt,
                    Some((last.len() - found.len()) as u64),
                    "{crawl}"
                );
                assert_eq!(
                    p.agents,
                    count(&mut found.into_iter(), sem),
                    "{crawl} {sem:?}"
                );
            }
        }
    }
    // `crawl:NAME` finds the versions each crawl found.
    let idx = Index::open(&ix).expect("open");
    for (crawl, last) in &want {
        let mut got = search(&idx, &format!("crawl:{crawl}"));
        got.sort();
        let mut found: Vec<String> = last
            .iter()
            .filter(|(_, b)| b.is_some())
            .map(|(h, _)| h.clone())
            .collect();
        found.sort();
        assert_eq!(got, found, "{crawl}");
    }
    assert!(search(&idx, "crawl:cc-main-2024-10").is_empty(), "as named");
    // Favourability over one crawl's snapshot: its files, each once.
    for (crawl, last) in &want {
        let t = idx
            .favor(Some(&format!("crawl:{crawl}")), None, Semantics::Google)
            .expect("favor");
        let found = last.values().flatten().count() as u64;
        assert_eq!(t.n + t.not_computed, found, "{crawl}");
    }
    // A cohort: every third site, weighted by its position.
    let mut list = String::from("host,rank,w\n");
    let mut members: BTreeMap<String, f64> = BTreeMap::new();
    for (i, (host, _)) in files.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
        list.push_str(&format!("{host},{},{}\n", i + 1, i as f64));
        members.insert(host.clone(), i as f64);
    }
    let spec = botscope_index::CohortSpec {
        weight: Some("w".into()),
        ..Default::default()
    };
    let cohort = botscope_index::Cohort::parse("list.csv", &list, &spec).expect("cohort");
    let of = s.crawl_sites(Some(&cohort.hosts)).expect("crawls");
    let idx = Index::open(&ix).expect("open");
    let t = idx
        .trends(&botscope_index::TrendsRequest {
            agents: &agents,
            periods: &[],
            where_: None,
            semantics: Semantics::Google,
            known_at: None,
            yearly: false,
            crawls: Some(&of),
            cohort: Some(&cohort),
            method: Default::default(),
            per_site: None,
        })
        .expect("trends");
    for (p, (crawl, last)) in t.periods.iter().zip(&want) {
        let mine: Vec<(&String, &Option<Vec<u8>>)> = last
            .iter()
            .filter(|(h, _)| members.contains_key(*h))
            .collect();
        let found: Vec<&Vec<u8>> = mine.iter().filter_map(|(_, b)| b.as_ref()).collect();
        assert_eq!(p.sites, found.len() as u64, "{crawl}");
        assert_eq!(p.denominator, mine.len() as u64, "{crawl}");
        assert_eq!(p.agents, count(&mut found.into_iter(), Semantics::Google));
        let w = p.weighted.as_ref().expect("weighted");
        let total: f64 = mine.iter().map(|(h, _)| members[*h]).sum();
        assert!((w.denominator - total).abs() < 1e-9, "{crawl}");
    }
}

/// A later crawl that re-sees most sites unchanged reindexes only the
/// sites whose file changed; its membership is written beside the
/// documents, and `crawl:` finds what a fresh build finds: the version
/// each crawl's capture found, none where it found no file.
#[test]
fn a_crawl_reindexes_only_the_sites_it_found_changed() {
    use botscope_store::NewRun;
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = SqliteStore::open(&dir.path().join("store.db")).expect("store");
    let files: Vec<(String, Vec<u8>)> = corpus().into_iter().take(20).collect();
    let crawl =
        |s: &mut SqliteStore, name: &str, t0: i64, body: &dyn Fn(usize) -> Option<Vec<u8>>| {
            let run = s
                .begin_run(&NewRun {
                    input: name.into(),
                    input_hash: botscope_store::content_hash(name.as_bytes()),
                    user_agent: String::new(),
                    hosts: 0,
                    started: t0,
                    crawl: Some(name.into()),
                })
                .expect("run");
            let batch: Vec<Attempt> = files
                .iter()
                .enumerate()
                .map(|(i, (host, _))| {
                    let b = body(i);
                    Attempt {
                        host: host.clone(),
                        time: t0 + i as i64,
                        url: format!("https://{host}/robots.txt"),
                        status: Some(if b.is_some() { 200 } else { 404 }),
                        outcome: if b.is_some() { "parse" } else { "allow-all" }.into(),
                        reason: "test".into(),
                        bytes: b.as_ref().map_or(0, |b| b.len() as u64),
                        body: b,
                        source: Source::Warc,
                        ..Attempt::default()
                    }
                })
                .collect();
            s.record(Some(run), &batch).expect("record");
            s.finish_run(run, t0).expect("finish");
        };
    crawl(&mut s, "CC-MAIN-2024-10", 1_710_000_000, &|i| {
        Some(files[i].1.clone())
    });
    let ix = dir.path().join("index");
    let built = Index::build(&s, &ix, None, &mut |_| {}).expect("build");
    assert_eq!((built.sites, built.crawls), (20, 1));
    // The later crawl: sites 0 and 1 serve another file, site 2 none.
    let changed = |i: usize| match i {
        0 | 1 => Some(
            format!(
                "{}\nUser-agent: botscope-test-bot\nDisallow: /\n",
                String::from_utf8_lossy(&files[i].1)
            )
            .into_bytes(),
        ),
        2 => None,
        _ => Some(files[i].1.clone()),
    };
    crawl(&mut s, "CC-MAIN-2024-18", 1_715_000_000, &changed);
    let mut idx = Index::open(&ix).expect("open");
    let r = idx.update(&s).expect("update");
    // Sites 0 and 1 changed their file, site 2's went away (a version of
    // its own): three sites reindexed.
    assert_eq!((r.sites, r.crawls), (3, 1), "{r:?}");
    let fresh = dir.path().join("fresh");
    Index::build(&s, &fresh, None, &mut |_| {}).expect("build");
    let hosts = |pick: &dyn Fn(usize) -> bool| -> Vec<String> {
        sorted(
            files
                .iter()
                .enumerate()
                .filter(|(i, _)| pick(*i))
                .map(|(_, (h, _))| h.clone())
                .collect(),
        )
    };
    for idx in [&idx, &Index::open(&fresh).expect("open")] {
        assert_eq!(
            sorted(search(idx, "crawl:CC-MAIN-2024-10")),
            hosts(&|_| true)
        );
        assert_eq!(
            sorted(search(idx, "crawl:CC-MAIN-2024-18")),
            hosts(&|i| i != 2)
        );
        // The first crawl found the first versions of the changed sites,
        // the later one their new ones.
        let new_group = "botname:botscope-test-bot";
        assert_eq!(
            sorted(search(idx, &format!("crawl:CC-MAIN-2024-18 {new_group}"))),
            hosts(&|i| i < 2)
        );
        assert!(search(idx, &format!("crawl:CC-MAIN-2024-10 {new_group}")).is_empty());
        assert!(search(idx, "crawl:CC-MAIN-2099-01").is_empty());
        // Site 2 has no robots.txt now: no version of it is the latest.
        assert!(!search(idx, &format!("site:{}", files[2].0)).contains(&files[2].0));
    }
}
