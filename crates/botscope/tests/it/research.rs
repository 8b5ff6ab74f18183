//! BotSeer's research commands end to end: files imported into a store,
//! indexed, searched, favourability and bias, a submission, and the bad
//! input that must change nothing.

use serde_json::Value;

use crate::{arg, botscope as botscope_in, root, run, scratch, stderr, stdout};

fn json(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// examples/robots imported into a store (dated 2007-03-01) and indexed:
/// the scratch directory, the store and the index.
fn indexed_examples(name: &str) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let d = scratch(name);
    let db = d.join("s.db");
    let ix = d.join("ix");
    let examples = root().join("examples/robots");
    let o = run(&[
        "store",
        "import",
        "--db",
        arg(&db),
        "--format",
        "files",
        "--date",
        "2007-03-01",
        arg(&examples),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("6 files imported for 6 hosts"),
        "{}",
        stderr(&o)
    );
    let o = run(&["index", "build", "--db", arg(&db), "--index", arg(&ix)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("6 sites, 6 documents"),
        "{}",
        stderr(&o)
    );
    (d, db, ix)
}

#[test]
fn import_index_search_favor_bias_submit() {
    let (_, db, ix) = indexed_examples("research");

    // The JSON contract of search.
    let o = run(&[
        "search",
        "botname:googlebot",
        "--index",
        arg(&ix),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["query"], "botname:googlebot");
    assert_eq!(v["total"], 2);
    assert!(v["took_ms"].as_f64().is_some());
    let hits = v["hits"].as_array().expect("hits");
    let mut sites: Vec<&str> = hits
        .iter()
        .map(|h| h["site"].as_str().expect("site"))
        .collect();
    sites.sort();
    assert_eq!(sites, ["news.google.com", "www.ebay.com"]);
    for h in hits {
        assert!(h["score"].as_f64().is_some());
        assert!(h["rank"].is_null(), "imported files have no rank");
        assert_eq!(h["fetched"], "2007-03-01T00:00:00Z");
        assert!(h["bias"]["googlebot"].as_i64().is_some());
        assert!(
            h["snippet"]
                .as_str()
                .expect("snippet")
                .contains("User-agent: Googlebot")
        );
    }
    // Nothing found: exit 1; a malformed query: exit 2 and the column.
    let o = run(&["search", "botname:nobody-at-all", "--index", arg(&ix)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("0 sites match"));
    let o = run(&["search", "site:com (disallow:/x", "--index", arg(&ix)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("column 10: this `(` is never closed"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("\n  site:com (disallow:/x\n           ^"),
        "{}",
        stderr(&o)
    );

    // Favourability, in the three formats.
    let o = run(&["favor", "--index", arg(&ix), "--format", "json"]);
    let v = json(&o);
    assert_eq!(
        (
            v["n"].as_u64(),
            v["semantics"].as_str(),
            v["as_of"].as_str()
        ),
        (Some(6), Some("google"), Some("latest"))
    );
    assert!(v["where"].is_null());
    let g = v["robots"]
        .as_array()
        .expect("robots")
        .iter()
        .find(|r| r["robot"] == "googlebot")
        .expect("googlebot")
        .clone();
    assert_eq!(g["appeared"], 2);
    let fav = g["favorability"].as_f64().expect("number");
    let want = (g["favored"].as_f64().expect("n") - g["disfavored"].as_f64().expect("n")) / 6.0;
    assert!((fav - want).abs() < 1e-12);
    // People read three decimals; JSON keeps the value whole.
    let text = stdout(&run(&["favor", "--index", arg(&ix)]));
    let row = text
        .lines()
        .find(|l| l.starts_with("googlebot "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        row.split_whitespace().last(),
        Some(format!("{fav:.3}").as_str()),
        "{text}"
    );
    let o = run(&[
        "favor",
        "--index",
        arg(&ix),
        "--where",
        "site:com",
        "--format",
        "csv",
        "--min-appeared",
        "1",
    ]);
    assert!(
        stdout(&o).starts_with("robot,appeared,favored,disfavored,favorability,n\n"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).lines().skip(1).all(|l| l.ends_with(",5")),
        "{}",
        stdout(&o)
    );
    let o = run(&["favor", "--index", arg(&ix), "--where", "bogus:1"]);
    assert_eq!(o.status.code(), Some(2));

    // Bias of a file, and of a stored site.
    let file = crate::tmp("bias.txt", b"User-agent: *\nDisallow: /a\nDisallow: /b\n\nUser-agent: MJ12bot\nDisallow: /a\n\nUser-agent: msn/crawler\nDisallow: /\n");
    let o = run(&["bias", arg(&file), "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["dir"], serde_json::json!(["/a", "/b", "/"]));
    assert_eq!(v["universal_allowed"], 1);
    assert_eq!(
        v["robots"][0],
        serde_json::json!({"robot": "mj12bot", "allowed": 2, "bias": 1, "verdict": "favored"})
    );
    assert_eq!(v["robots"][1]["verdict"], "disfavored");
    let o = run(&["bias", arg(&file)]);
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["mj12bot", "2", "+1", "favored"]),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("/b\n  may fetch:     mj12bot (no rule)\n  may not fetch: * (line 3), msn/crawler (line 9)"), "{}", stdout(&o));
    let o = run(&[
        "bias",
        "--site",
        "www.ebay.com",
        "--db",
        arg(&db),
        "--format",
        "json",
    ]);
    assert_eq!(json(&o)["site"], "www.ebay.com");
    let o = run(&[
        "bias",
        "--site",
        "www.ebay.com",
        "--db",
        arg(&db),
        "--as-of",
        "2000-01-01",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no robots.txt of www.ebay.com at that time"));

    // A submission is stored, indexed at once, and its bias printed.
    let o = botscope_in(
        &[
            "submit",
            "-",
            "--site",
            "www.research.gov",
            "--db",
            arg(&db),
            "--index",
            arg(&ix),
            "--format",
            "json",
        ],
        b"User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /private/\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["robots"][0]["verdict"], "favored");
    let o = run(&[
        "search",
        "favor:googlebot site:gov",
        "--index",
        arg(&ix),
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert_eq!(v["total"], 1);
    assert_eq!(v["hits"][0]["site"], "www.research.gov");
    let o = run(&["store", "export", "--db", arg(&db), "--format", "jsonl"]);
    assert_eq!(stdout(&o).lines().count(), 7);

    // Refusals write nothing.
    let before = std::fs::read(&db).expect("db");
    let o = botscope_in(
        &[
            "submit",
            "-",
            "--site",
            "not a host",
            "--db",
            arg(&db),
            "--index",
            arg(&ix),
        ],
        b"User-agent: *\n",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a host name"), "{}", stderr(&o));
    let big = vec![b'#'; 600 * 1024];
    let o = botscope_in(
        &[
            "submit",
            "-",
            "--site",
            "big.test",
            "--db",
            arg(&db),
            "--index",
            arg(&ix),
        ],
        &big,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&db).expect("db"), before);
    let notes = scratch("research-notes");
    std::fs::write(notes.join("paper.tex"), "x").expect("write");
    let o = run(&["index", "build", "--db", arg(&db), "--index", arg(&notes)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a botscope index"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(&notes).expect("dir").count(), 1);

    // An update finds nothing new.
    let o = run(&["index", "update", "--db", arg(&db), "--index", arg(&ix)]);
    assert!(
        stderr(&o).contains("0 sites, 0 documents"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn trends_and_diff_over_versions() {
    let d = scratch("trends");
    let db = d.join("s.db");
    let ix = d.join("ix");
    let import = |name: &str, body: &str, date: &str| import_file(&d, &db, name, body, date);
    import("a.test", "User-agent: *\nDisallow: /a\n", "2024-01-05");
    import("b.test", "User-agent: CCBot\nDisallow: /x\n", "2024-02-01");
    import(
        "a.test",
        "User-agent: *\nDisallow: /a\n\nUser-agent: GPTBot\nDisallow: /\n",
        "2024-03-10",
    );
    // A site that states AI usage preferences in both dialects.
    import(
        "c.test",
        "User-agent: *\nContent-Usage: / train-ai=n\nContent-Signal: ai-train=no, search=yes\nAllow: /\n",
        "2024-04-02",
    );
    let o = run(&["index", "build", "--db", arg(&db), "--index", arg(&ix)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--agent",
        "CCBot",
        "--index",
        arg(&ix),
        "--db",
        arg(&db),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let p = v["periods"].as_array().expect("periods");
    let labels: Vec<_> = p
        .iter()
        .map(|x| x["period"].as_str().expect("label"))
        .collect();
    assert_eq!(labels, ["2024-01", "2024-02", "2024-03", "2024-04"]);
    assert_eq!(p[2]["preferences"]["any"], 0);
    assert_eq!(
        p[3]["preferences"],
        serde_json::json!({"any": 1, "content_usage": 1, "content_signal": 1, "license": 0, "statements": {
            "signal:ai-train=no": 1, "signal:search=yes": 1, "usage:train-ai=n": 1}})
    );
    assert_eq!(p[0]["denominator"], 1);
    assert_eq!(
        p[1]["agents"]["GPTBot"],
        serde_json::json!({"full": 0, "partial": 1, "none": 1})
    );
    assert_eq!(
        p[2]["agents"]["GPTBot"],
        serde_json::json!({"full": 1, "partial": 0, "none": 1})
    );
    assert_eq!(
        p[2]["agents"]["CCBot"],
        serde_json::json!({"full": 0, "partial": 2, "none": 0})
    );
    assert_eq!(
        p[2]["group"],
        serde_json::json!({"full": 1, "partial": 1, "none": 0})
    );
    assert_eq!(p[2]["no_robots_txt"], 0);
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--where",
        "site:b.test",
        "--by",
        "year",
        "--format",
        "csv",
    ]);
    assert_eq!(
        stdout(&o),
        "period,end,agent,full,partial,none,no_robots_txt,denominator,sites,full_of_sites,\
         partial_of_sites,none_of_sites,full_of_all,partial_of_all,none_of_all\n\
         2024,2024-12-31T23:59:59Z,\"GPTBot\",0,0,1,,1,1,0,0,1,0,0,1\n\
         2024,2024-12-31T23:59:59Z,\"(group)\",0,0,1,,1,1,0,0,1,0,0,1\n"
    );
    let o = run(&["trends", "--index", arg(&ix)]);
    assert_eq!(o.status.code(), Some(2), "an agent is required");

    // Cohorts: a list of hosts (one the store never saw), and the top of
    // a ranked list weighted by a column.
    let list = d.join("news.txt");
    std::fs::write(&list, "# news sites\nb.test\nC.test\nnowhere.test\n").expect("write");
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--db",
        arg(&db),
        "--sites",
        arg(&list),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["cohort"]["hosts"], 3);
    assert_eq!(v["cohort"]["in_store"], 2);
    let p = v["periods"].as_array().expect("periods");
    assert_eq!(
        (&p[2]["sites"], &p[2]["no_robots_txt"]),
        (&1.into(), &0.into())
    );
    assert_eq!(
        (&p[3]["sites"], &p[3]["denominator"]),
        (&2.into(), &2.into())
    );
    assert_eq!(
        p[2]["agents"]["GPTBot"],
        serde_json::json!({"full": 0, "partial": 0, "none": 1}),
        "a.test is not in the cohort"
    );
    let ranked = d.join("tranco.csv");
    std::fs::write(
        &ranked,
        "host,rank,tokens\na.test,1,5\nb.test,2,7\nc.test,3,11\n",
    )
    .expect("write");
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--db",
        arg(&db),
        "--rank-file",
        arg(&ranked),
        "--top",
        "2",
        "--weight",
        "tokens",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let p = v["periods"].as_array().expect("periods");
    assert_eq!(
        p[2]["weighted"]["agents"]["GPTBot"],
        serde_json::json!({"full": 5.0, "partial": 0.0, "none": 7.0})
    );
    assert_eq!(p[2]["weighted"]["denominator"], 12.0);
    assert_eq!(
        p[0]["weighted"]["no_robots_txt"], 0.0,
        "b.test is not known in January"
    );
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--rank-file",
        arg(&ranked),
        "--top",
        "2",
        "--weight",
        "tokens",
        "--format",
        "csv",
    ]);
    assert!(
        stdout(&o).starts_with(
            "period,end,agent,full,partial,none,no_robots_txt,denominator,weighted_full,weighted_partial,weighted_none,weighted_denominator,sites,"
        ),
        "{}",
        stdout(&o)
    );
    // A list with a line that is no host is refused, naming the line.
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "a.test\n=HYPERLINK(\"x\")\n").expect("write");
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--sites",
        arg(&bad),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.txt:2: "), "{}", stderr(&o));
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--sites",
        arg(&list),
        "--weight",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2), "--weight needs a header");
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--rank-file",
        arg(&ranked),
    ]);
    assert_eq!(o.status.code(), Some(2), "--rank-file needs --top");
    let missing = d.join("missing.txt");
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--sites",
        arg(&missing),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.txt: "), "{}", stderr(&o));

    let o = run(&[
        "diff",
        "--site",
        "a.test",
        "--db",
        arg(&db),
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert_eq!(
        (v["from"].as_str(), v["to"].as_str()),
        (Some("2024-01-05T00:00:00Z"), Some("2024-03-10T00:00:00Z"))
    );
    assert_eq!(
        v["diff"]["added"][0],
        serde_json::json!({"agents": "gptbot", "kind": "disallow", "value": "/"})
    );
    assert_eq!(
        v["diff"]["verdicts"][0],
        serde_json::json!({"robot": "gptbot", "path": "/", "before": true, "after": false})
    );
    let o = run(&[
        "diff",
        "--site",
        "a.test",
        "--db",
        arg(&db),
        "--to",
        "2024-02-01",
    ]);
    assert!(stdout(&o).contains("no rule changed"), "{}", stdout(&o));
    let o = run(&["diff", "--site", "nowhere.test", "--db", arg(&db)]);
    assert_eq!(o.status.code(), Some(2));
}

/// `submit --db X` without `--index` keeps its index beside the store,
/// where `serve --db X` and `index build --db X` look for it, never in the
/// working directory.
#[test]
fn the_index_defaults_to_the_one_beside_the_store() {
    let d = scratch("index-beside");
    let db = d.join("robots.db");
    let cwd = d.join("cwd");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let in_cwd = |args: &[&str], stdin: &[u8]| {
        use std::io::Write;
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_botscope"))
            .args(args)
            .current_dir(&cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("botscope");
        c.stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("write");
        c.wait_with_output().expect("wait")
    };
    let o = in_cwd(
        &[
            "submit",
            "-",
            "--site",
            "www.research.gov",
            "--db",
            arg(&db),
        ],
        b"User-agent: *\nDisallow: /private/\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("robots.db.index").join("meta.json").is_file());
    assert_eq!(
        std::fs::read_dir(&cwd).expect("cwd").count(),
        0,
        "nothing in the working directory"
    );
    // The other commands find it there too.
    let o = in_cwd(&["index", "update", "--db", arg(&db)], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = in_cwd(
        &[
            "search",
            "site:gov",
            "--index",
            arg(&d.join("robots.db.index")),
        ],
        b"",
    );
    assert!(stdout(&o).contains("www.research.gov"), "{}", stdout(&o));
    // A PostgreSQL store has no beside: --index is asked for.
    let o = in_cwd(
        &[
            "index",
            "update",
            "--db",
            "postgres://nobody@127.0.0.1:1/none",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give --index DIR"), "{}", stderr(&o));
}

/// favor, trends and search as CSV and as Parquet: the same columns (the
/// JSON's names), rows and values; pyarrow and DuckDB read the Parquet.
#[test]
fn result_tables_as_csv_and_parquet() {
    let (d, _, ix) = indexed_examples("tables");
    let commands: [&[&str]; 4] = [
        &["favor", "--index", arg(&ix), "--min-appeared", "1"],
        &[
            "trends",
            "--agent",
            "GPTBot",
            "--index",
            arg(&ix),
            "--by",
            "year",
            "--per-site",
        ],
        &[
            "trends",
            "--agent",
            "Googlebot",
            "--agent",
            "GPTBot",
            "--index",
            arg(&ix),
            "--by",
            "year",
        ],
        &["search", "disallow:/", "--index", arg(&ix), "--limit", "50"],
    ];
    for c in commands {
        let with = |format: &str| {
            let mut args = c.to_vec();
            args.extend(["--format", format]);
            let o = run(&args);
            assert!(o.status.success(), "{c:?} {format}: {}", stderr(&o));
            o.stdout
        };
        let csv = String::from_utf8(with("csv")).expect("utf-8");
        let file = d.join(format!("{}.parquet", c[0]));
        std::fs::write(&file, with("parquet")).expect("write");
        let t = crate::python_json("read_table.py", &file);
        let mut reader = csv::ReaderBuilder::new().from_reader(csv.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .expect("header")
            .iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(t["columns"], serde_json::json!(header), "{c:?}");
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
        assert!(!rows.is_empty(), "{c:?}: {csv}");
        assert_eq!(
            t["rows"].as_array().expect("rows").len(),
            rows.len(),
            "{c:?}"
        );
        assert_eq!(t["duckdb_rows"], rows.len(), "{c:?}");
        for (got, want) in t["rows"].as_array().expect("rows").iter().zip(&rows) {
            for (i, (g, w)) in got
                .as_array()
                .expect("row")
                .iter()
                .zip(want.iter())
                .enumerate()
            {
                let same = match g {
                    Value::Null => w.is_empty(),
                    Value::String(s) => s == w,
                    // serde_json reads floats to within an ulp.
                    Value::Number(n) => w.parse::<f64>().is_ok_and(|w| {
                        n.as_f64()
                            .is_some_and(|g| (g - w).abs() <= 1e-12 * w.abs().max(1.0))
                    }),
                    _ => false,
                };
                assert!(same, "{c:?} column {}: {g} against {w:?}", header[i]);
            }
        }
        let types: Vec<&str> = t["types"]
            .as_array()
            .expect("types")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        match c[0] {
            "favor" => assert_eq!(
                types,
                ["string", "uint64", "uint64", "uint64", "double", "uint64"]
            ),
            "trends" if c.contains(&"--per-site") => assert_eq!(types, ["string"; 5]),
            "trends" => {
                assert_eq!(types[3..9], ["uint64"; 6]);
                assert_eq!(types[9..], ["double"; 6]);
            }
            _ => assert_eq!(types[..3], ["string", "double", "uint64"]),
        }
    }
}

/// On the real files of the corpus, every agent's full / partial / none in
/// `trends` equals a count made independently with `robots check-batch`:
/// `full` when `/` is disallowed, `partial` when `/` is allowed but a path
/// some rule of the file names is not, `none` otherwise.
#[test]
fn trends_equal_an_independent_count_with_check_batch() {
    let d = scratch("trends-batch");
    let files = d.join("files");
    std::fs::create_dir_all(&files).expect("dir");
    let corpus = root().join("crates/botscope-robotstxt/tests/data/corpus");
    let mut bodies: Vec<(String, std::path::PathBuf, Vec<u8>)> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    names.sort();
    for (i, p) in names.iter().enumerate() {
        let host = format!("s{i}.example.com");
        let body = std::fs::read(p).expect("read");
        let f = files.join(&host);
        std::fs::write(&f, &body).expect("write");
        bodies.push((host, f, body));
    }
    let db = d.join("s.db");
    let ix = d.join("ix");
    let o = run(&[
        "store",
        "import",
        "--db",
        arg(&db),
        "--format",
        "files",
        "--date",
        "2025-06-01",
        arg(&files),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["index", "build", "--db", arg(&db), "--index", arg(&ix)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The registry's AI-training crawlers, as `trends` lists them.
    let o = run(&[
        "trends",
        "--category",
        "ai-training",
        "--index",
        arg(&ix),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut agents: Vec<String> = json(&o)["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a.as_str().expect("agent").to_owned())
        .collect();
    assert!(agents.len() >= 5, "{agents:?}");
    agents.extend(["Googlebot", "bingbot", "*"].map(str::to_owned));
    let mut args: Vec<String> = vec!["trends".into()];
    for a in &agents {
        args.push("--agent".into());
        args.push(a.clone());
    }
    args.extend([
        "--index".into(),
        ix.display().to_string(),
        "--format".into(),
        "json".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let period = &v["periods"][0];
    assert_eq!(period["sites"], bodies.len());
    // The independent count: every file, agent and path through check-batch.
    let paths = |body: &[u8]| -> Vec<String> {
        let mut out = vec!["/".to_owned()];
        for line in String::from_utf8_lossy(body).lines() {
            let line = line.split('#').next().unwrap_or_default();
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let k = k.trim().to_ascii_lowercase();
            if k != "allow" && k != "disallow" {
                continue;
            }
            let v = v.trim();
            let v = v.strip_suffix('$').unwrap_or(v);
            if v.is_empty() || v.contains(char::is_whitespace) {
                continue;
            }
            out.push(if v.starts_with('/') {
                v.to_owned()
            } else {
                format!("/{v}")
            });
        }
        out
    };
    let mut input = String::new();
    let mut index: Vec<(usize, usize, usize)> = Vec::new();
    for (b, (_, f, body)) in bodies.iter().enumerate() {
        for (a, agent) in agents.iter().enumerate() {
            for (k, p) in paths(body).iter().enumerate() {
                input.push_str(&format!("{}\t{agent}\thttp://x{p}\n", f.display()));
                index.push((b, a, k));
            }
        }
    }
    let o = botscope_in(&["robots", "check-batch", "-"], input.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    let verdicts: Vec<String> = stdout(&o).lines().map(str::to_owned).collect();
    assert_eq!(verdicts.len(), index.len());
    // (full, partial, none) per agent.
    let mut state = vec![vec![(false, false); agents.len()]; bodies.len()];
    for ((b, a, k), v) in index.iter().zip(&verdicts) {
        assert!(v == "allowed" || v == "disallowed", "{v}");
        if v == "disallowed" {
            if *k == 0 {
                state[*b][*a].0 = true;
            } else {
                state[*b][*a].1 = true;
            }
        }
    }
    let mut checked = 0;
    for (a, agent) in agents.iter().enumerate() {
        let (mut full, mut partial, mut none) = (0, 0, 0);
        for s in &state {
            match s[a] {
                (true, _) => full += 1,
                (false, true) => partial += 1,
                _ => none += 1,
            }
        }
        assert_eq!(
            period["agents"][agent],
            serde_json::json!({"full": full, "partial": partial, "none": none}),
            "{agent}"
        );
        checked += full + partial;
    }
    assert!(checked > 100, "the files restrict the agents: {checked}");
}

/// `index export --format parquet`: one row per indexed version with each
/// agent's class under both semantics, bias per named robot, usage
/// preferences, sitemaps and Crawl-delays, read back with pyarrow and
/// DuckDB and checked against `trends`, `bias` and the files.
#[test]
fn index_export_reads_back_in_pyarrow_and_duckdb() {
    let (d, db, ix) = indexed_examples("index-export");
    let out = d.join("analysis.parquet");
    let export = |index: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "index",
            "export",
            "--index",
            arg(index),
            "--format",
            "parquet",
            "--out",
            arg(&out),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = export(&ix, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("6 versions written"), "{}", stderr(&o));
    let v = crate::python_json("read_index_export.py", &out);
    let agents: Vec<&str> = v["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a.as_str().expect("agent"))
        .collect();
    assert_eq!(agents[0], "*");
    assert!(
        agents.contains(&"GPTBot") && agents.len() > 100,
        "{agents:?}"
    );
    assert_eq!(v["format"], "5");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6);
    // GPTBot's classes over the latest versions are trends' counts.
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&ix),
        "--format",
        "json",
    ]);
    let t = json(&o);
    let last = t["periods"]
        .as_array()
        .expect("periods")
        .last()
        .expect("a period")
        .clone();
    for class in ["full", "partial", "none"] {
        assert_eq!(
            v["duckdb"]["gptbot"][class].as_u64().unwrap_or(0),
            last["agents"]["GPTBot"][class].as_u64().expect("count"),
            "{class}"
        );
    }
    for r in rows {
        let host = r["host"].as_str().expect("host");
        let body = std::fs::read_to_string(root().join(format!("examples/robots/{host}.txt")))
            .expect("example");
        // Bias per named robot, as `bias --site` gives it.
        let o = run(&["bias", "--site", host, "--db", arg(&db), "--format", "json"]);
        let b = json(&o);
        for x in b["robots"].as_array().expect("robots") {
            let robot = x["robot"].as_str().expect("robot");
            assert_eq!(r["bias_google"][robot], x["bias"], "{host} {robot}");
        }
        assert_eq!(
            r["bias_google"].as_object().map(|m| m.len()),
            b["robots"].as_array().map(Vec::len),
            "{host}"
        );
        // Sitemaps as written, each once (a byte-order mark is no part of
        // the first line).
        let mut maps: Vec<String> = Vec::new();
        for line in body.trim_start_matches('\u{feff}').lines() {
            if let Some((k, val)) = line.split_once(':')
                && k.trim().eq_ignore_ascii_case("sitemap")
            {
                let val = val.split('#').next().unwrap_or_default().trim().to_owned();
                if !maps.contains(&val) {
                    maps.push(val);
                }
            }
        }
        assert_eq!(r["sitemaps"], serde_json::json!(maps), "{host}");
        assert_eq!(r["latest"], true);
        assert_eq!(r["until"], Value::Null);
        assert_eq!(r["source"], "import");
        assert!(r["google"]["*"].is_string(), "{host}");
        assert!(r["draft1996"]["*"].is_string(), "{host}");
        assert_eq!(r["hash"].as_str().map(str::len), Some(64));
    }
    // Chosen agents (case-blind duplicates fold); a failed export leaves
    // the file there alone.
    let o = export(&ix, &["--agent", "CCBot", "--agent", "ccbot"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = crate::python_json("read_index_export.py", &out);
    assert_eq!(v["agents"], serde_json::json!(["CCBot"]));
    let kept = std::fs::read(&out).expect("export");
    let o = export(&d.join("nowhere"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read(&out).expect("export"),
        kept,
        "the old file is left alone"
    );
}

/// Two crawls' robots.txt WARC files made of the repository's example
/// files imported (as docs/research.md's real-crawl example does with a
/// list of news sites), the index built, the AI-training crawlers'
/// restriction over the list by month and by crawl, the table and the
/// index export read in DuckDB.
#[test]
fn the_worked_example_of_the_research_guide() {
    let d = scratch("worked-example");
    let crawls = d.join("crawls");
    std::fs::create_dir_all(&crawls).expect("dir");
    let files = crate::store::example_files();
    // March: the files as they are; August: two of them shut GPTBot out.
    for (crawl, date, blocked) in [
        ("CC-MAIN-2024-10", "2024-03-05T10:00:00Z", 0),
        ("CC-MAIN-2024-33", "2024-08-10T10:00:00Z", 2),
    ] {
        let mut w = Vec::new();
        for (i, (host, body)) in files.iter().enumerate() {
            let mut body = body.clone();
            if i < blocked {
                body.extend_from_slice(b"\nUser-agent: GPTBot\nDisallow: /\n");
            }
            let mut block = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            block.extend_from_slice(&body);
            crate::store::record(
                &mut w,
                &[
                    ("WARC-Type", "response"),
                    ("WARC-Target-URI", &format!("https://{host}/robots.txt")),
                    ("WARC-Date", date),
                ],
                &block,
            );
        }
        std::fs::write(crawls.join(format!("{crawl}-robotstxt-00000.warc.gz")), w).expect("write");
    }
    let news = d.join("news.txt");
    std::fs::write(
        &news,
        "# news sites\nwww.bbc.co.uk\nnews.google.com\nanswers.yahoo.com\n",
    )
    .expect("write");
    let db = d.join("research.db");
    let mut warcs: Vec<_> = std::fs::read_dir(&crawls)
        .expect("crawls")
        .map(|e| e.expect("entry").path())
        .collect();
    warcs.sort();
    let mut args = vec!["store", "import", "--db", arg(&db), "--format", "warc"];
    args.extend(warcs.iter().map(|p| arg(p)));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["index", "build", "--db", arg(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("trends.parquet");
    let o = run(&[
        "trends",
        "--category",
        "ai-training",
        "--db",
        arg(&db),
        "--sites",
        arg(&news),
        "--format",
        "parquet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(&out, &o.stdout).expect("write");
    let v = crate::python_json("read_table.py", &out);
    let columns: Vec<&str> = v["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c.as_str().expect("name"))
        .collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).expect("column");
    let gptbot: Vec<(String, u64, u64)> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r[at("agent")] == "GPTBot")
        .map(|r| {
            (
                r[at("period")].as_str().expect("period").to_owned(),
                r[at("full")].as_u64().expect("full"),
                r[at("denominator")].as_u64().expect("denominator"),
            )
        })
        .collect();
    // Of the three news sites, answers.yahoo.com and news.google.com (the
    // first two in name order) shut GPTBot out from August; none in March.
    let by_month: std::collections::BTreeMap<&str, (u64, u64)> = gptbot
        .iter()
        .map(|(p, f, n)| (p.as_str(), (*f, *n)))
        .collect();
    assert_eq!(by_month["2024-03"], (0, 3), "{gptbot:?}");
    assert_eq!(by_month["2024-08"], (2, 3), "{gptbot:?}");
    // The same per crawl: each crawl's own captures.
    let o = run(&[
        "trends",
        "--category",
        "ai-training",
        "--db",
        arg(&db),
        "--sites",
        arg(&news),
        "--by",
        "crawl",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["by"], "crawl");
    let per_crawl: Vec<(String, u64, u64)> = v["periods"]
        .as_array()
        .expect("periods")
        .iter()
        .map(|p| {
            (
                p["period"].as_str().expect("crawl").to_owned(),
                p["agents"]["GPTBot"]["full"].as_u64().expect("full"),
                p["denominator"].as_u64().expect("denominator"),
            )
        })
        .collect();
    assert_eq!(
        per_crawl,
        [
            ("CC-MAIN-2024-10".to_owned(), 0, 3),
            ("CC-MAIN-2024-33".to_owned(), 2, 3)
        ]
    );
    // The index export says which crawls found each version: the two
    // unchanged files in both, the changed ones each in its own.
    let export = d.join("analysis.parquet");
    let o = run(&[
        "index",
        "export",
        "--db",
        arg(&db),
        "--agent",
        "GPTBot",
        "--format",
        "parquet",
        "--out",
        arg(&export),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = crate::python_json("read_crawls.py", &export);
    let both = ["CC-MAIN-2024-10", "CC-MAIN-2024-33"];
    for row in v.as_array().expect("rows") {
        let crawls: Vec<&str> = row[1]
            .as_array()
            .expect("crawls")
            .iter()
            .map(|c| c.as_str().expect("name"))
            .collect();
        assert!(
            crawls == both || crawls == both[..1] || crawls == both[1..],
            "{row}"
        );
    }
    let found: usize = v
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r[1].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(found, 2 * files.len(), "every file found by each crawl");
    // Without a store, or before any crawl, it says what it needs.
    let o = run(&[
        "trends",
        "--agent",
        "GPTBot",
        "--index",
        arg(&db.with_file_name("research.db.index")),
        "--by",
        "crawl",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--db"), "{}", stderr(&o));
}

/// `watch`: three sites' files imported at three times; what each new
/// version changes for GPTBot and CCBot, newest first, filtered, capped,
/// and as an Atom feed a feed reader reads.
#[test]
fn watch_reports_what_new_versions_change() {
    let d = scratch("watch");
    let db = d.join("w.db");
    let import = |name: &str, date: &str, files: &[(&str, &str)]| {
        let dir = d.join(name);
        std::fs::create_dir_all(&dir).expect("dir");
        for (host, body) in files {
            std::fs::write(dir.join(host), body).expect("write");
        }
        let o = run(&[
            "store",
            "import",
            "--db",
            arg(&db),
            "--format",
            "files",
            "--date",
            date,
            arg(&dir),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    import(
        "jan",
        "2024-01-10",
        &[
            ("a.example", "User-agent: *\nDisallow: /tmp\n"),
            ("b.example", "User-agent: CCBot\nDisallow: /\n"),
        ],
    );
    import(
        "jun",
        "2024-06-10",
        &[(
            "a.example",
            "User-agent: *\nDisallow: /tmp\n\nUser-agent: GPTBot\nDisallow: /\nContent-Usage: train-ai=n\n",
        )],
    );
    import(
        "jul",
        "2024-07-10",
        &[("b.example", "User-agent: *\nAllow: /\n")],
    );
    import(
        "aug",
        "2024-08-10",
        &[("c.example", "User-agent: GPTBot\nDisallow: /private\n")],
    );
    let o = run(&["index", "build", "--db", arg(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let watch = |extra: &[&str]| {
        let mut args = vec![
            "watch",
            "--db",
            arg(&db),
            "--since",
            "2024-03-01",
            "--agent",
            "GPTBot",
            "--agent",
            "CCBot",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = watch(&["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let sites: Vec<&str> = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["site"].as_str().expect("site"))
        .collect();
    assert_eq!(
        sites,
        ["c.example", "b.example", "a.example"],
        "newest first"
    );
    let c = &v["changes"][0];
    assert_eq!(c["first"], true);
    assert_eq!(
        c["agents"],
        serde_json::json!([{"agent": "GPTBot", "change": "blocked", "before": "none", "after": "partial"}])
    );
    let b = &v["changes"][1];
    assert_eq!(b["first"], false);
    assert_eq!(
        b["agents"],
        serde_json::json!([{"agent": "CCBot", "change": "allowed", "before": "full", "after": "none"}])
    );
    let a = &v["changes"][2];
    assert_eq!(a["agents"][0]["agent"], "GPTBot");
    assert_eq!(a["agents"][0]["after"], "full");
    assert_eq!(
        a["preferences_added"],
        serde_json::json!(["usage:train-ai=n"])
    );
    assert_eq!(a["at"], "2024-06-10T00:00:00Z");
    assert_eq!(v["total"], 3);
    assert_eq!(v["truncated"], false);
    // Before the first import, every first file is a change too; after
    // the last, nothing.
    let o = run(&[
        "watch",
        "--db",
        arg(&db),
        "--since",
        "2024-09-01",
        "--agent",
        "GPTBot",
    ]);
    assert!(
        stdout(&o).starts_with("changes since 2024-09-01T00:00:00Z: 0 site changes"),
        "{}",
        stdout(&o)
    );
    // Only what blocks GPTBot; only one site; the newest one.
    let o = run(&[
        "watch",
        "--db",
        arg(&db),
        "--since",
        "2024-03-01",
        "--agent",
        "GPTBot",
        "--only",
        "blocked",
        "--format",
        "csv",
    ]);
    let csv = stdout(&o);
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[0].contains("\"c.example\",\"GPTBot\",blocked,none,partial"),
        "{csv}"
    );
    assert!(
        rows[1].contains("\"a.example\",\"GPTBot\",blocked,partial,full"),
        "{csv}"
    );
    let o = watch(&["--site", "b.example", "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["total"], 1);
    assert_eq!(v["changes"][0]["site"], "b.example");
    let o = watch(&["--limit", "1", "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool()),
        (Some(3), Some(true))
    );
    assert_eq!(v["changes"].as_array().map(Vec::len), Some(1));
    let o = watch(&["--where", "disallow:/private", "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["total"], 1, "{v}");
    // Text: a line per change.
    let o = watch(&[]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "2024-08-10T00:00:00Z  c.example (first file)  blocked GPTBot (none to partial)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "a.example  blocked GPTBot (partial to full); usage preferences +usage:train-ai=n"
        ),
        "{text}"
    );
    // Atom, read by a feed reader's parser.
    let o = watch(&["--only", "blocked", "--format", "atom"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let feed = d.join("feed.atom");
    std::fs::write(&feed, &o.stdout).expect("write");
    let v = crate::python_json("read_atom.py", &feed);
    let titles: Vec<&str> = v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["title"].as_str().expect("title"))
        .collect();
    assert_eq!(
        titles,
        [
            "c.example: blocked GPTBot (none to partial)",
            "a.example: blocked GPTBot (partial to full); usage preferences +usage:train-ai=n"
        ]
    );
    assert_eq!(v["entries"][0]["link"], "https://c.example/robots.txt");
    assert!(v["id"].as_str().expect("id").starts_with("urn:uuid:"));
    // The same question, the same feed id.
    let again = watch(&["--only", "blocked", "--format", "atom"]);
    assert_eq!(again.stdout, o.stdout);
    // A time that is not one: exit 2.
    let o = run(&["watch", "--db", arg(&db), "--since", "last tuesday"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a duration ago"), "{}", stderr(&o));
}

/// Three crawls as Common Crawl captures them: a file that answers 404,
/// one unreachable for a crawl, one that redirects away, and one that
/// goes A, B, A. Each absence is a version of its own (no robots.txt from
/// then, by month as by crawl), `watch` and its feed report it, `diff`
/// compares it with the file before, and a revert is an entry of its own.
#[test]
fn removed_files_and_reverts_are_changes() {
    let d = scratch("absences");
    let db = d.join("r.db");
    let closed = "User-agent: GPTBot\nDisallow: /\n";
    let open = "User-agent: *\nDisallow: /tmp\n";
    // Per crawl: its name, its date, and (host, status, body) per site.
    type Capture<'a> = (&'a str, u16, &'a str);
    let crawls: [(&str, &str, [Capture<'_>; 5]); 3] = [
        (
            "CC-MAIN-2024-10",
            "2024-03-05T10:00:00Z",
            [
                ("gone.example", 200, closed),
                ("back.example", 200, closed),
                ("down.example", 200, closed),
                ("moved.example", 200, closed),
                ("stay.example", 200, closed),
            ],
        ),
        (
            "CC-MAIN-2024-33",
            "2024-08-05T10:00:00Z",
            [
                ("gone.example", 200, closed),
                ("back.example", 200, open),
                ("down.example", 503, ""),
                ("moved.example", 301, ""),
                ("stay.example", 200, closed),
            ],
        ),
        (
            "CC-MAIN-2024-51",
            "2024-12-05T10:00:00Z",
            [
                ("gone.example", 404, ""),
                ("back.example", 200, closed),
                ("down.example", 200, closed),
                ("moved.example", 301, ""),
                ("stay.example", 200, closed),
            ],
        ),
    ];
    let mut files = Vec::new();
    for (name, date, sites) in &crawls {
        let mut w = Vec::new();
        for (host, status, body) in sites {
            let uri = format!("https://{host}/robots.txt");
            let head = match status {
                200 => "200 OK\r\nContent-Type: text/plain".to_owned(),
                301 => {
                    format!("301 Moved Permanently\r\nLocation: https://elsewhere.example/{host}")
                }
                404 => "404 Not Found\r\nContent-Type: text/html".to_owned(),
                _ => "503 Service Unavailable".to_owned(),
            };
            let block = format!(
                "HTTP/1.1 {head}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            crate::store::record(
                &mut w,
                &[
                    ("WARC-Type", "response"),
                    ("WARC-Target-URI", &uri),
                    ("WARC-Date", date),
                ],
                block.as_bytes(),
            );
        }
        let f = d.join(format!("{name}.warc.gz"));
        std::fs::write(&f, w).expect("write");
        files.push(f);
    }
    let mut import = vec!["store", "import", "--db", arg(&db), "--format", "warc"];
    import.extend(files.iter().map(|f| arg(f)));
    let o = run(&import);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["index", "build", "--db", arg(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The store counts files, not absences.
    let o = run(&["store", "stats", "--db", arg(&db), "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["sites_with_robots_txt"], 5, "{v}");
    // Trends by month say what each crawl saw, in its month.
    let periods = |by: &str| -> Vec<(String, Value, u64, u64)> {
        let o = run(&[
            "trends",
            "--db",
            arg(&db),
            "--agent",
            "GPTBot",
            "--by",
            by,
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        json(&o)["periods"]
            .as_array()
            .expect("periods")
            .iter()
            .map(|p| {
                (
                    p["period"].as_str().expect("period").to_owned(),
                    p["agents"]["GPTBot"].clone(),
                    p["sites"].as_u64().expect("sites"),
                    p["no_robots_txt"].as_u64().expect("no robots.txt"),
                )
            })
            .collect()
    };
    let by_crawl = periods("crawl");
    let by_month = periods("month");
    let month_of = |crawl: &str| match crawl {
        "CC-MAIN-2024-10" => "2024-03",
        "CC-MAIN-2024-33" => "2024-08",
        _ => "2024-12",
    };
    for (crawl, agents, sites, without) in &by_crawl {
        let m = by_month
            .iter()
            .find(|p| p.0 == month_of(crawl))
            .unwrap_or_else(|| panic!("{crawl}: {by_month:?}"));
        assert_eq!((&m.1, m.2, m.3), (agents, *sites, *without), "{crawl}");
    }
    assert_eq!(
        by_crawl
            .iter()
            .map(|p| (p.1["full"].as_u64(), p.2, p.3))
            .collect::<Vec<_>>(),
        [(Some(5), 5, 0), (Some(2), 3, 2), (Some(3), 3, 2)],
        "{by_crawl:?}"
    );
    let watch = |extra: &[&str]| {
        let mut args = vec!["watch", "--db", arg(&db), "--since", "2024-04-01"];
        args.extend_from_slice(extra);
        run(&args)
    };
    // Watch: each absence and each return, newest first.
    let o = watch(&["--agent", "GPTBot", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let seen: Vec<(String, String, Option<String>, String)> = v["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["at"].as_str().expect("at")[..10].to_owned(),
                c["site"].as_str().expect("site").to_owned(),
                c["absent"].as_str().map(str::to_owned),
                format!("{}>{}", c["agents"][0]["before"], c["agents"][0]["after"])
                    .replace('"', ""),
            )
        })
        .collect();
    let want = |at: &str, site: &str, absent: Option<&str>, change: &str| {
        (
            at.to_owned(),
            site.to_owned(),
            absent.map(str::to_owned),
            change.to_owned(),
        )
    };
    assert_eq!(
        seen,
        [
            want("2024-12-05", "back.example", None, "partial>full"),
            want("2024-12-05", "down.example", None, "none>full"),
            want("2024-12-05", "gone.example", Some("removed"), "full>none"),
            want("2024-08-05", "back.example", None, "full>partial"),
            want(
                "2024-08-05",
                "down.example",
                Some("unreachable"),
                "full>none"
            ),
            want("2024-08-05", "moved.example", Some("moved"), "full>none"),
        ]
    );
    assert!(
        v["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .all(|c| c["first"] == false)
    );
    let o = watch(&["--agent", "GPTBot"]);
    assert!(
        stdout(&o).contains("gone.example  robots.txt removed; allowed GPTBot (full to none)"),
        "{}",
        stdout(&o)
    );
    // The feed: every entry its own id (the revert too), its title says
    // what was asked.
    let o = watch(&[
        "--category",
        "ai-training",
        "--where",
        "botname:GPTBot",
        "--format",
        "atom",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let feed = d.join("feed.atom");
    std::fs::write(&feed, &o.stdout).expect("write");
    let v = crate::python_json("read_atom.py", &feed);
    assert_eq!(
        v["title"],
        "robots.txt changes for the ai-training crawlers where botname:GPTBot"
    );
    let back: Vec<&str> = v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| {
            e["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("back.example"))
        })
        .map(|e| e["id"].as_str().expect("id"))
        .collect();
    assert_eq!(back.len(), 2, "{v}");
    assert!(
        back[0].contains("2024-12-05") && back[1].contains("2024-08-05"),
        "{back:?}"
    );
    // Diff: the file before, against its absence.
    let o = run(&["diff", "--db", arg(&db), "--site", "gone.example"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "gone.example: 2024-03-05T10:00:00Z -> 2024-12-05T10:00:00Z (no robots.txt: removed)"
        ),
        "{text}"
    );
    assert!(text.contains("Disallow: /"), "{text}");
    let o = run(&[
        "diff",
        "--db",
        arg(&db),
        "--site",
        "gone.example",
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert_eq!(
        (v["from_absent"].clone(), v["to_absent"].clone()),
        (Value::Null, "removed".into())
    );
}

/// `trends --per-site`: the rows behind the counts. Over two synthetic
/// crawls, by crawl and by month, under each method: the rows summed per
/// period, agent and verdict are the counts, the rows where a study's
/// verdict is not the exact engine's are `disagree_with_exact`, JSON holds
/// the rows CSV does, and an answer past `--max-rows` is refused (exit 2)
/// with nothing written.
#[test]
fn per_site_rows_are_the_counts() {
    use std::collections::BTreeMap;
    let d = scratch("per-site");
    let (cc, db) = (d.join("cc"), d.join("s.db"));
    let o = run(&[
        "store",
        "synth",
        "--out",
        arg(&cc),
        "--sites",
        "120",
        "--crawl",
        "CC-MAIN-2024-10",
        "--crawl",
        "CC-MAIN-2024-42",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warcs: Vec<String> = walk(&cc)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert!(!warcs.is_empty());
    let mut import = vec!["store", "import", "--db", arg(&db), "--format", "warc"];
    import.extend(warcs.iter().map(String::as_str));
    let o = run(&import);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["index", "build", "--db", arg(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = |csv: &[u8]| -> Vec<BTreeMap<String, String>> {
        let mut r = csv::Reader::from_reader(csv);
        let h: Vec<String> = r
            .headers()
            .expect("header")
            .iter()
            .map(str::to_owned)
            .collect();
        r.records()
            .map(|x| {
                h.iter()
                    .cloned()
                    .zip(x.expect("row").iter().map(str::to_owned))
                    .collect()
            })
            .collect()
    };
    for method in ["exact", "somesite", "cic"] {
        for by in ["crawl", "month"] {
            let base = [
                "trends",
                "--method",
                method,
                "--agent",
                "GPTBot",
                "--agent",
                "ClaudeBot",
                "--by",
                by,
                "--db",
                arg(&db),
            ];
            let with = |extra: &[&str]| {
                let mut a = base.to_vec();
                a.extend(extra);
                let o = run(&a);
                assert!(o.status.success(), "{a:?}: {}", stderr(&o));
                o.stdout
            };
            let counts = records(&with(&["--format", "csv"]));
            let rows = records(&with(&["--per-site", "--format", "csv"]));
            let mut sum: BTreeMap<(String, String, String), u64> = BTreeMap::new();
            let mut disagree: BTreeMap<(String, String), u64> = BTreeMap::new();
            for r in &rows {
                *sum.entry((
                    r["period"].clone(),
                    r["agent"].clone(),
                    r["verdict"].clone(),
                ))
                .or_default() += 1;
                if method != "exact" && r["exact"] != r["verdict"] && r["past_budget"] == "0" {
                    *disagree
                        .entry((r["period"].clone(), r["agent"].clone()))
                        .or_default() += 1;
                }
                assert_eq!(r.contains_key("exact"), method != "exact", "{r:?}");
            }
            let mut checked = 0;
            for c in &counts {
                for v in ["full", "partial", "none"] {
                    let k = (c["period"].clone(), c["agent"].clone(), v.to_owned());
                    let want: u64 = c[v].parse().expect("a count");
                    assert_eq!(
                        sum.get(&k).copied().unwrap_or(0),
                        want,
                        "{method} by {by}: {k:?}"
                    );
                    checked += want;
                }
                if let Some(n) = c.get("disagree_with_exact").filter(|n| !n.is_empty()) {
                    let k = (c["period"].clone(), c["agent"].clone());
                    let n: u64 = n.parse().expect("a count");
                    assert_eq!(
                        disagree.get(&k).copied().unwrap_or(0),
                        n,
                        "{method} by {by}: {k:?}"
                    );
                }
            }
            assert_eq!(
                checked as usize,
                rows.len(),
                "{method} by {by}: every row counted"
            );
            assert!(rows.len() > 100, "{method} by {by}: {} rows", rows.len());
            if method == "cic" {
                assert!(
                    disagree.values().sum::<u64>() > 0,
                    "cic departs from the exact engine"
                );
            }
            let j: Value =
                serde_json::from_slice(&with(&["--per-site", "--format", "json"])).expect("JSON");
            assert_eq!(j["method"], method);
            assert_eq!(j["rows"].as_array().map(Vec::len), Some(rows.len()));
            assert_eq!(
                j["rows"][0]["host"].as_str(),
                Some(rows[0]["host"].as_str())
            );
            // Past the cap: refused, nothing written.
            let mut a = base.to_vec();
            let cap = (rows.len() - 1).to_string();
            a.extend(["--per-site", "--max-rows", &cap, "--format", "csv"]);
            let o = run(&a);
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(o.stdout.is_empty());
            assert!(stderr(&o).contains("--max-rows"), "{}", stderr(&o));
        }
    }
}

/// Every file under `d`.
fn walk(d: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `trends --directive`: per month, the share of sites naming an RSL
/// licence, stating Content-Usage or Content-Signal (each statement, the
/// `use` level included), with the change since the month before; no
/// agent needed.
#[test]
fn trends_by_directive() {
    let d = scratch("trends-directive");
    let db = d.join("s.db");
    let ix = d.join("ix");
    let import = |name: &str, body: &str, date: &str| import_file(&d, &db, name, body, date);
    import("a.test", "User-agent: *\nDisallow: /a\n", "2024-01-05");
    import("b.test", "User-agent: *\nAllow: /\n", "2024-01-06");
    import(
        "a.test",
        "License: https://a.test/license.xml\nUser-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nDisallow: /a\n",
        "2024-02-10",
    );
    let o = run(&["index", "build", "--db", arg(&db), "--index", arg(&ix)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = |directive: &str| {
        let o = run(&[
            "trends",
            "--directive",
            directive,
            "--index",
            arg(&ix),
            "--db",
            arg(&db),
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
        v["rows"].as_array().expect("rows").clone()
    };
    let l = rows("license");
    let shown: Vec<(String, u64, f64, Option<f64>)> = l
        .iter()
        .map(|r| {
            (
                r["period"].as_str().expect("as written").to_owned(),
                r["sites"].as_u64().expect("as written"),
                r["share"].as_f64().expect("as written"),
                r["change"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("2024-01".to_owned(), 0, 0.0, None),
            ("2024-02".to_owned(), 1, 50.0, Some(50.0))
        ]
    );
    let s = rows("content-signal");
    let feb: Vec<(&str, u64)> = s
        .iter()
        .filter(|r| r["period"] == "2024-02")
        .map(|r| {
            (
                r["value"].as_str().expect("as written"),
                r["sites"].as_u64().expect("as written"),
            )
        })
        .collect();
    assert_eq!(
        feb,
        [
            ("any", 1),
            ("signal:ai-train=no", 1),
            ("signal:search=yes", 1),
            ("signal:use=reference", 1)
        ]
    );
    // CSV, and the text form.
    let o = run(&[
        "trends",
        "--directive",
        "license",
        "--index",
        arg(&ix),
        "--db",
        arg(&db),
        "--format",
        "csv",
    ]);
    assert_eq!(
        stdout(&o),
        "period,directive,value,sites,of,share,change\n2024-01,license,\"any\",0,2,0,\n2024-02,license,\"any\",1,2,50,50\n"
    );
}

/// Writes `body` as the file `name` in `d` and imports it into the store
/// `db` as captured on `date`.
fn import_file(d: &std::path::Path, db: &std::path::Path, name: &str, body: &str, date: &str) {
    let f = d.join(name);
    std::fs::write(&f, body).expect("write");
    let o = run(&[
        "store",
        "import",
        "--db",
        arg(db),
        "--format",
        "files",
        "--date",
        date,
        arg(&f),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
