//! The guides run as written. A reader is told to run a page's `sh`
//! blocks; each of them is run by a test, or its first line is `# needs
//! the network`. Which test runs a block is said on the page, in a comment
//! a reader does not see: `<!-- run by: NAME -->` before it names the test
//! (or the CI script) that runs the blocks after it, up to the next heading
//! or the next such comment; `(exit status N)` after the name says the
//! block ends with that status (`robots check` answers 1 for a disallowed
//! URL). `every_sh_block_is_run_or_needs_the_network` holds each page to
//! it.
//!
//! The generic runner (`run_page`, `run_section`): each block of a page
//! that names the calling test, in order, in one empty directory, by bash
//! with `set -euo pipefail`, the `botscope` this build made first on the
//! PATH and a private home; a `text` block right after an `sh` block is
//! what that block prints (each of its lines is a line of the output, runs
//! of spaces taken as one). Files a page assumes the reader has (an access
//! log, a store) are laid out first, and paths into the system (`/etc/…`)
//! are rewritten into the directory, each rewrite checked to apply.

use std::path::{Path, PathBuf};

/// One `sh` block and the output shown under it.
#[derive(Debug)]
struct Block {
    /// The line of the page it starts on.
    line: usize,
    code: String,
    shown: Option<String>,
    /// Its first line is `# needs the network`.
    network: bool,
    /// The test that runs it, from the `run by` comment over it.
    runner: Option<String>,
    /// The exit status it ends with.
    exit: i32,
}

/// `<!-- run by: NAME (exit status N) -->`: the name and the status.
fn marker(line: &str) -> Option<(String, i32)> {
    let inner = line
        .trim()
        .strip_prefix("<!-- run by:")?
        .strip_suffix("-->")?
        .trim();
    let name = inner.split_whitespace().next()?.to_owned();
    let exit = inner
        .split_once("(exit status ")
        .and_then(|(_, r)| r.split(')').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    Some((name, exit))
}

/// The `sh` blocks of `page`, each with the `text` block that follows it
/// and the test that runs it.
fn blocks(page: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    // (info, first line, body) of the fence being read.
    let mut open: Option<(String, usize, String)> = None;
    let mut runner: Option<(String, i32)> = None;
    // The last fence closed was an `sh` block, with nothing but blank
    // lines since: a `text` fence now is its output.
    let mut after_sh = false;
    for (n, line) in page.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some((info.trim().to_owned(), n + 1, String::new()));
                } else if let Some(m) = marker(line) {
                    runner = Some(m);
                    after_sh = false;
                } else if line.starts_with('#') {
                    runner = None;
                    after_sh = false;
                } else if !line.trim().is_empty() {
                    after_sh = false;
                }
            }
            Some((info, first, body)) => {
                if line.trim_end() != "```" {
                    body.push_str(line);
                    body.push('\n');
                    continue;
                }
                if info == "sh" {
                    out.push(Block {
                        line: *first,
                        network: body.starts_with("# needs the network"),
                        code: std::mem::take(body),
                        shown: None,
                        runner: runner.as_ref().map(|r| r.0.clone()),
                        exit: runner.as_ref().map_or(0, |r| r.1),
                    });
                    after_sh = true;
                } else {
                    if info == "text"
                        && after_sh
                        && let Some(b) = out.last_mut()
                    {
                        b.shown = Some(std::mem::take(body));
                    }
                    after_sh = false;
                }
                open = None;
            }
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    out
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The part of `page` under the heading `## SECTION`, up to the next
/// `## ` heading.
fn section<'a>(page: &'a str, section: &str) -> &'a str {
    let head = format!("\n## {section}\n");
    let at = page
        .find(&head)
        .unwrap_or_else(|| panic!("no section {section}"));
    let rest = &page[at + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 4);
    &rest[..end]
}

/// A page (README.md at the root, else under docs/).
fn read_page(page: &str) -> String {
    let path = if page == "README.md" {
        crate::root().join(page)
    } else {
        crate::root().join("docs").join(page)
    };
    std::fs::read_to_string(path).expect("page")
}

/// What a page assumes its reader has, laid out before its blocks run.
#[derive(Default)]
pub struct Setup<'a> {
    /// Makes files in the directory the blocks run in.
    pub prepare: Option<&'a dyn Fn(&Path)>,
    /// (as written, as run): each applies to at least one block.
    pub rewrite: &'a [(&'a str, &'a str)],
}

/// Runs the blocks of `docs/PAGE` that `test` runs, in a fresh directory
/// named after it, and returns the directory.
pub fn run_page(page: &str, test: &str) -> PathBuf {
    run_page_with(page, None, test, &Setup::default())
}

/// Runs the blocks of one section of `docs/PAGE` that `test` runs.
pub fn run_section(page: &str, heading: &str, test: &str) -> PathBuf {
    run_page_with(page, Some(heading), test, &Setup::default())
}

/// Runs the blocks of `PAGE` (or one section of it) that `test` runs,
/// after `setup`.
pub fn run_page_with(page: &str, heading: Option<&str>, test: &str, setup: &Setup) -> PathBuf {
    let text = read_page(page);
    let text = heading.map_or(text.as_str(), |h| section(&text, h));
    let dir = crate::scratch(&format!("docs-{page}-{test}"));
    if let Some(prepare) = setup.prepare {
        prepare(&dir);
    }
    let list: Vec<Block> = blocks(text)
        .into_iter()
        .filter(|b| !b.network && b.runner.as_deref() == Some(test))
        .collect();
    assert!(!list.is_empty(), "{page}: no sh block run by {test}");
    for (from, _) in setup.rewrite {
        assert!(
            list.iter().any(|b| b.code.contains(from)),
            "{page}: no block run by {test} holds {from:?} any more"
        );
    }
    for b in list {
        let mut code = b.code.clone();
        for (from, to) in setup.rewrite {
            code = code.replace(from, to);
        }
        let o = bash(&dir, &code).output().expect("bash runs");
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(b.exit),
            "docs/{page}, the block of line {}:\n{code}\nended so (the page says {}): {out}{}",
            b.line,
            b.exit,
            String::from_utf8_lossy(&o.stderr)
        );
        if let Some(shown) = &b.shown {
            let printed: Vec<String> = out.lines().map(collapse).collect();
            for want in shown.lines().map(collapse).filter(|l| !l.is_empty()) {
                assert!(
                    printed.contains(&want),
                    "docs/{page}, the block of line {}: the page shows\n  {want}\nbut it printed\n{out}",
                    b.line
                );
            }
        }
    }
    dir
}

/// `bash -c` running `code` under `set -euo pipefail` in `dir`, as a
/// reader's shell would: the tools of [`path_with_tools`] first on the
/// PATH, and the tests' private home.
fn bash(dir: &Path, code: &str) -> std::process::Command {
    let home = crate::home();
    let mut c = std::process::Command::new("bash");
    c.arg("-c")
        .arg(format!("set -euo pipefail\n{code}"))
        .current_dir(dir)
        .env("PATH", path_with_tools(dir))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"));
    c
}

/// The PATH of a page's run: the `botscope` this build made, then a shim
/// for `duckdb -c SQL` (the DuckDB command is not on the test machines;
/// the venv's DuckDB package runs the SQL), then the machine's.
fn path_with_tools(dir: &Path) -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_botscope"))
        .parent()
        .expect("bin dir")
        .to_owned();
    let shims = dir.join(".shims");
    std::fs::create_dir_all(&shims).expect("shims");
    let duckdb = shims.join("duckdb");
    std::fs::write(
        &duckdb,
        format!(
            "#!/bin/sh\n[ \"$1\" = -c ] || {{ echo 'the shim runs duckdb -c SQL' >&2; exit 2; }}\n\
             exec '{}' -c 'import duckdb, sys; duckdb.sql(sys.argv[1]).show()' \"$2\"\n",
            crate::python().display()
        ),
    )
    .expect("shim");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&duckdb, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::env::join_paths([bin, shims].into_iter().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH")
}

/// Every test source of the workspace and the Python package: (path, text).
fn test_sources() -> Vec<(PathBuf, String)> {
    fn walk(d: &Path, out: &mut Vec<(PathBuf, String)>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs" || x == "py")
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                out.push((p, t));
            }
        }
    }
    let root = crate::root();
    let mut out = Vec::new();
    for c in std::fs::read_dir(root.join("crates"))
        .expect("crates")
        .flatten()
    {
        walk(&c.path().join("tests"), &mut out);
    }
    walk(&root.join("python/tests"), &mut out);
    out
}

/// Every `sh` block of README.md and docs/ is run by a test that exists
/// and reads that page (or by `.ci/run`, which holds its lines or runs the
/// script they run), or says it needs the network.
#[test]
fn every_sh_block_is_run_or_needs_the_network() {
    let root = crate::root();
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    let sources = test_sources();
    let mut pages = vec!["README.md".to_owned()];
    for e in std::fs::read_dir(root.join("docs"))
        .expect("docs")
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(name);
        }
    }
    pages.sort();
    let mut wrong = Vec::new();
    let mut run = 0;
    for page in &pages {
        for b in blocks(&read_page(page)) {
            if b.network {
                continue;
            }
            let Some(name) = &b.runner else {
                wrong.push(format!(
                    "{page}:{}: no `<!-- run by: TEST -->` over it",
                    b.line
                ));
                continue;
            };
            let ok = if name == ".ci/run" {
                // CI runs each of the block's command lines: .ci/run holds
                // it, or it runs a script of the repository that .ci/run
                // runs (with other arguments or settings).
                b.code
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .all(|l| {
                        let program = l.split_whitespace().find(|w| !w.contains('='));
                        ci.contains(l)
                            || program.is_some_and(|p| {
                                p.contains('/') && root.join(p).is_file() && ci.contains(p)
                            })
                    })
            } else {
                let (rs, py) = (format!("fn {name}("), format!("def {name}("));
                sources
                    .iter()
                    .any(|(_, t)| (t.contains(&rs) || t.contains(&py)) && t.contains(page.as_str()))
            };
            if ok {
                run += 1;
            } else {
                wrong.push(format!(
                    "{page}:{}: run by {name}, which is not a test reading {page} (or .ci/run holding its lines)",
                    b.line
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(run > 20, "{run} blocks run");
}

#[test]
fn the_page_reader_finds_blocks_their_output_and_their_test() {
    let page = "a\n<!-- run by: t1 -->\n```sh\necho hi\n```\n\n```text\nhi\n```\n\
                ```sh\n# needs the network\ncurl x\n```\n```python\nx\n```\n\
                <!-- run by: t2 (exit status 1) -->\n\n```sh\nfalse\n```\ntext\n```text\nnot output\n```\n\
                ## Next\n\n```sh\necho 3\n```\n";
    let b = blocks(page);
    assert_eq!(b.len(), 4, "{b:?}");
    assert_eq!(b[0].code, "echo hi\n");
    assert_eq!(b[0].shown.as_deref(), Some("hi\n"));
    assert_eq!(
        (b[0].line, b[0].runner.as_deref(), b[0].exit),
        (3, Some("t1"), 0)
    );
    assert!(b[1].network && !b[0].network);
    assert_eq!((b[2].runner.as_deref(), b[2].exit), (Some("t2"), 1));
    assert_eq!(b[2].shown, None, "prose between: not its output");
    assert_eq!(b[3].runner, None, "a heading ends the comment's reach");
    assert_eq!(
        marker("<!-- run by: .ci/run -->"),
        Some((".ci/run".into(), 0))
    );
    assert_eq!(marker("<!-- a comment -->"), None);
}

/// docs/studies.md: the studies' methods on synthetic crawls, output as
/// shown; the files the page writes are what it says.
#[test]
fn the_studies_guide_runs_as_written() {
    let dir = run_page("studies.md", "the_studies_guide_runs_as_written");
    let csv = std::fs::read_to_string(dir.join("somesite.csv")).expect("somesite.csv");
    let rows: Vec<&str> = csv.lines().collect();
    // 24 agents and the group, in each of two crawls, under a header.
    assert_eq!(rows.len(), 1 + 2 * 25, "{csv}");
    assert!(
        rows[0].contains(",disagree_with_exact,past_budget,")
            && rows[0].ends_with(",full_of_all,partial_of_all,none_of_all"),
        "{}",
        rows[0]
    );
    assert!(rows.iter().any(|r| r.contains("\"Kangaroo Bot\"")));
    assert!(dir.join("cc/sites.csv").is_file());
}

/// docs/research.md's worked example: synthetic crawls imported, the top
/// sites' trends as Parquet read by DuckDB's SQL as written, per crawl as
/// shown.
#[test]
fn the_research_guides_worked_example_runs_as_written() {
    let dir = run_section(
        "research.md",
        "A worked example: AI crawlers shut out of the top sites, two crawls",
        "the_research_guides_worked_example_runs_as_written",
    );
    assert!(dir.join("trends.parquet").is_file());
    let v = crate::python_json("read_table.py", &dir.join("trends.parquet"));
    assert!(v["rows"].as_array().is_some_and(|r| !r.is_empty()));
}

#[test]
fn a_section_runs_to_the_next_heading() {
    let page = "# t\n\n## One\n\n```sh\necho 1\n```\n\n## Two\n\n```sh\necho 2\n```\n";
    let s = section(page, "One");
    assert!(
        s.starts_with("## One\n") && s.contains("echo 1") && !s.contains("echo 2"),
        "{s:?}"
    );
    assert!(section(page, "Two").contains("echo 2"));
}

/// `DIR/NAME` links to `target`.
fn link(dir: &Path, name: &str, target: &Path) {
    std::os::unix::fs::symlink(target, dir.join(name)).expect("link");
}

/// Copies a shipped example robots.txt to `DIR/NAME`.
fn example_robots(dir: &Path, file: &str, name: &str) {
    let to = dir.join(name);
    std::fs::create_dir_all(to.parent().expect("a parent")).expect("dir");
    std::fs::copy(crate::root().join("examples/robots").join(file), to).expect("copy");
}

/// README's commands, with the shipped examples beside them as in a clone.
#[test]
fn the_readmes_commands_run_as_written() {
    let examples = crate::root().join("examples");
    let prepare = |d: &Path| link(d, "examples", &examples);
    run_page_with(
        "README.md",
        None,
        "the_readmes_commands_run_as_written",
        &Setup {
            prepare: Some(&prepare),
            ..Setup::default()
        },
    );
}

/// docs/crawling.md's AI usage preferences: a file, a page and a
/// generated file, output as shown.
#[test]
fn the_crawling_guides_usage_preferences_run_as_written() {
    let dir = run_page(
        "crawling.md",
        "the_crawling_guides_usage_preferences_run_as_written",
    );
    assert!(dir.join("generated.txt").is_file());
}

/// docs/crawling.md's terms recipe: a site served on loopback by Python's
/// http.server, its licence read, the verdict as shown.
#[test]
fn the_crawling_guides_terms_run_as_written() {
    run_page("crawling.md", "the_crawling_guides_terms_run_as_written");
}

/// docs/terms.md as written: the site owner's files checked and served
/// by the gate (the licence, the 402), the crawler's `terms` and
/// `fetch --use` against it, the researcher's `trends --directive` over
/// files imported at two dates.
#[test]
fn the_terms_guide_runs_as_written() {
    let dir = run_page("terms.md", "the_terms_guide_runs_as_written");
    let fetched = std::fs::read_to_string(dir.join("fetched.json")).expect("fetched.json");
    let line: serde_json::Value = serde_json::from_str(fetched.trim()).expect("a JSON line");
    assert_eq!(line["decision"], "unavailable", "{line}");
    assert!(
        line["reason"].as_str().is_some_and(
            |r| r.contains("https://olp.example.com") && r.contains("--license-credentials")
        ),
        "{line}"
    );
}

/// docs/log-analysis.md's commands over a synthetic site's logs (the
/// current one, one rotated, one rotated and compressed) and two
/// robots.txt files; the lists go where the page puts them, under the
/// run's directory.
#[test]
fn the_log_analysis_guides_commands_run_as_written() {
    let prepare = |d: &Path| {
        for (name, seed) in [("access.log", 1), ("access.log.1", 2)] {
            let f = std::fs::File::create(d.join(name)).expect("log");
            botscope_testkit::synthlog::write(f, 2_000, seed).expect("written");
        }
        let f = std::fs::File::create(d.join("access.log.2.gz")).expect("log");
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        botscope_testkit::synthlog::write(&mut gz, 2_000, 3).expect("written");
        gz.finish().expect("gzip");
        example_robots(d, "www.ebay.com.txt", "robots.txt");
        example_robots(d, "www.etsy.com.txt", "old-robots.txt");
    };
    let dir = run_page_with(
        "log-analysis.md",
        None,
        "the_log_analysis_guides_commands_run_as_written",
        &Setup {
            prepare: Some(&prepare),
            rewrite: &[("/etc/botscope/lists", "etc/botscope/lists")],
        },
    );
    let report = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    assert!(report.starts_with("<!DOCTYPE html>"), "{}", &report[..80]);
    let lists = std::fs::read_dir(dir.join("etc/botscope/lists")).expect("the lists");
    assert!(lists.count() >= 3);
}

/// docs/research.md's commands away from its worked example, on the
/// files its first block makes (synthetic crawls in `robots.db`, its
/// index `ix`, the ranked lists `tranco.csv` and `c4-domains.csv`): the
/// page names and makes everything it reads.
#[test]
fn the_research_guides_commands_run_on_a_synthetic_store() {
    let dir = run_page(
        "research.md",
        "the_research_guides_commands_run_on_a_synthetic_store",
    );
    let tranco = std::fs::read_to_string(dir.join("tranco.csv")).expect("tranco.csv");
    assert!(
        tranco.lines().count() == 200 && tranco.lines().all(|l| l.split(',').count() == 2),
        "{tranco}"
    );
    let csv = std::fs::read_to_string(dir.join("top10k.csv")).expect("top10k.csv");
    assert!(csv.starts_with("period,"), "{csv}");
    assert!(dir.join("analysis.parquet").is_file());
    // The guide's join finds every exported version in the store's file.
    let o = std::process::Command::new(crate::python())
        .current_dir(&dir)
        .args([
            "-c",
            "import duckdb; print(*duckdb.sql(\"SELECT count(*), count(v.hash) FROM 'analysis.parquet' a \
             LEFT JOIN 'versions.parquet' v ON v.host = a.host AND v.first_seen = a.first_seen \
             AND v.hash = 'blake3:' || lower(hex(a.hash))\").fetchall()[0])",
        ])
        .output()
        .expect("python");
    assert!(o.status.success(), "{}", crate::stderr(&o));
    let counts: Vec<u64> = crate::stdout(&o)
        .split_whitespace()
        .map(|n| n.parse().expect("a count"))
        .collect();
    assert!(
        counts[0] > 0 && counts[0] == counts[1],
        "versions, joined: {counts:?}"
    );
}

/// docs/verification.md's key generation, into the run's directory
/// instead of /etc.
#[test]
fn the_verification_guides_key_generation_runs_as_written() {
    let dir = run_page_with(
        "verification.md",
        None,
        "the_verification_guides_key_generation_runs_as_written",
        &Setup {
            rewrite: &[("/etc/examplebot/keys", "etc/examplebot/keys")],
            ..Setup::default()
        },
    );
    let keys = dir.join("etc/examplebot/keys");
    assert!(keys.join("signing-key.jwk").is_file());
    assert!(keys.join("http-message-signatures-directory").is_file());
}

/// docs/web-server-lists.md's generated robots.txt, with the site's own
/// file under the run's directory instead of /var/www.
#[test]
fn the_web_server_lists_guides_robots_txt_runs_as_written() {
    let prepare = |d: &Path| example_robots(d, "www.ebay.com.txt", "www/robots.txt");
    let dir = run_page_with(
        "web-server-lists.md",
        None,
        "the_web_server_lists_guides_robots_txt_runs_as_written",
        &Setup {
            prepare: Some(&prepare),
            rewrite: &[("/var/www/", "www/")],
        },
    );
    let made = std::fs::read_to_string(dir.join("www/robots.txt.new")).expect("written");
    assert!(made.contains("Bytespider"), "{made}");
}

/// docs/harvest.md's frontier on a real PostgreSQL server (this test's),
/// a ranked list of three hosts added and counted.
#[test]
fn the_harvest_guides_frontier_runs_as_written() {
    let pg = botscope_testkit::pg::Postgres::start();
    let url = pg.create_db("docs_frontier");
    let prepare = |d: &Path| {
        std::fs::write(
            d.join("top-1m.csv"),
            "1,example.com\n2,example.org\n3,example.net\n",
        )
        .expect("list");
    };
    run_page_with(
        "harvest.md",
        None,
        "the_harvest_guides_frontier_runs_as_written",
        &Setup {
            prepare: Some(&prepare),
            rewrite: &[("postgres://botscope@db.example.org/botscope", url.as_str())],
        },
    );
}

/// The blocks of `PAGE` that `test` runs, each rewrite applied (and each
/// checked to apply to one of them): (line, code).
fn blocks_for(page: &str, test: &str, rewrite: &[(&str, &str)]) -> Vec<(usize, String)> {
    let list: Vec<Block> = blocks(&read_page(page))
        .into_iter()
        .filter(|b| !b.network && b.runner.as_deref() == Some(test))
        .collect();
    assert!(!list.is_empty(), "{page}: no sh block run by {test}");
    for (from, _) in rewrite {
        assert!(
            list.iter().any(|b| b.code.contains(from)),
            "{page}: no block run by {test} holds {from:?} any more"
        );
    }
    list.into_iter()
        .map(|b| {
            let mut code = b.code;
            for (from, to) in rewrite {
                code = code.replace(from, to);
            }
            (b.line, code)
        })
        .collect()
}

/// Runs `code`, a block whose last command is a server, in `dir`: until
/// the server says it listens (its `… Ctrl-C to stop)` line), then
/// `check` with everything it printed so far, then SIGTERM to the block's
/// process group.
fn serve_block(page: &str, line: usize, dir: &Path, code: &str, check: impl FnOnce(&str)) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let mut child = bash(dir, code)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let group = child.id();
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(err).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let ready = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(300)) {
            Ok(l) => {
                seen.push_str(&l);
                seen.push('\n');
                if l.contains("Ctrl-C to stop)") {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    let mut stop = || {
        let _ = std::process::Command::new("kill")
            .args(["-s", "TERM", "--", &format!("-{group}")])
            .status();
        let _ = child.wait();
    };
    if !ready {
        stop();
        panic!("docs/{page}, the block of line {line}:\n{code}\nnever listened:\n{seen}");
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&seen)));
    stop();
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
}

/// A request to a server the docs started: (status, response).
fn http_get(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connects");
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .expect("timeout");
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("sent");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// README's first command and docs/web.md's: the demo, served (the
/// binary this build made in place of `cargo run --release`'s, on a free
/// port instead of 8080).
#[test]
fn the_demo_serves_as_the_readme_and_the_web_guide_start_it() {
    const T: &str = "the_demo_serves_as_the_readme_and_the_web_guide_start_it";
    let readme = blocks_for("README.md", T, &[]);
    let web = blocks_for("web.md", T, &[]);
    assert_eq!(readme.len(), 1);
    assert_eq!(web.len(), 1);
    // The install line of README's block is what made the binary under
    // test; the demo is the rest.
    let command = |code: &str| -> String {
        code.lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
            .filter(|l| !l.starts_with("cargo install --locked --path crates/botscope "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(command(&readme[0].1), "botscope serve");
    assert_eq!(
        command(&web[0].1),
        command(&readme[0].1),
        "the same first command"
    );
    let dir = crate::scratch("docs-demo");
    let addr = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let code = format!("{} --listen {addr}\n", command(&readme[0].1));
    serve_block("README.md", readme[0].0, &dir, &code, |_| {
        let (status, page) = http_get(&addr, "/", &[]);
        assert_eq!(status, 200, "{page}");
        let (status, page) = http_get(&addr, "/search?q=site%3Aebay.com", &[]);
        assert_eq!(status, 200);
        assert!(page.contains("www.ebay.com"));
    });
}

/// docs/web.md's own store served: `--db robots.db` (its index built at
/// start), on a free loopback port instead of 0.0.0.0:8080.
#[test]
fn the_web_guide_serves_a_store_of_ones_own() {
    const T: &str = "the_web_guide_serves_a_store_of_ones_own";
    let dir = crate::scratch("docs-web-own");
    let o = crate::run(&[
        "store",
        "import",
        "--db",
        crate::arg(&dir.join("robots.db")),
        "--format",
        "files",
        crate::arg(&crate::root().join("examples/robots")),
        "--date",
        "2007-03-01",
    ]);
    assert!(o.status.success(), "{}", crate::stderr(&o));
    let addr = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let blocks = blocks_for("web.md", T, &[("0.0.0.0:8080", &addr)]);
    assert_eq!(blocks.len(), 1);
    serve_block("web.md", blocks[0].0, &dir, &blocks[0].1, |_| {
        let (status, page) = http_get(&addr, "/search?q=site%3Aebay.com", &[]);
        assert_eq!(status, 200, "{page}");
        assert!(page.contains("www.ebay.com"));
    });
    assert!(dir.join("robots.db.index").is_dir());
}

/// docs/crawling.md's honeypot, served on a free loopback port instead of
/// port 80 of every address, its log under the run's directory; a crawler
/// visits, then the report is written.
#[test]
fn the_crawling_guides_honeypot_runs_as_written() {
    const T: &str = "the_crawling_guides_honeypot_runs_as_written";
    let dir = crate::scratch("docs-honeypot");
    std::fs::create_dir_all(dir.join("var/log")).expect("var/log");
    let addr = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let blocks = blocks_for(
        "crawling.md",
        T,
        &[("0.0.0.0:80 [::]:80", &addr), ("/var/log/", "var/log/")],
    );
    assert_eq!(blocks.len(), 2, "serve, then report");
    serve_block("crawling.md", blocks[0].0, &dir, &blocks[0].1, |_| {
        for path in ["/robots.txt", "/", "/page/1"] {
            let (status, _) = http_get(
                &addr,
                path,
                &[
                    ("Host", "s0.hp.example.org"),
                    (
                        "User-Agent",
                        "ExampleBot/1.0 (+https://example.org/bot.html)",
                    ),
                ],
            );
            assert!(status > 0, "{path}");
        }
    });
    let log = std::fs::read_to_string(dir.join("var/log/honeypot.log")).expect("the log");
    assert!(log.contains("ExampleBot"), "{log}");
    let (line, code) = &blocks[1];
    let o = bash(&dir, code).output().expect("bash runs");
    assert!(
        o.status.success(),
        "docs/crawling.md, the block of line {line}: {}",
        crate::stderr(&o)
    );
    let html = std::fs::read_to_string(dir.join("ethics.html")).expect("ethics.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("ExampleBot"));
}

/// docs/gate.md's setup, as written but for its paths (under the run's
/// directory instead of /etc and /var) and a free port: a preset policy
/// checked and replayed over a log, the robots.txt in place, a challenge
/// key, and the gate answering.
#[test]
fn the_gate_guides_setup_runs_as_written() {
    const T: &str = "the_gate_guides_setup_runs_as_written";
    let dir = crate::scratch("docs-gate");
    // What a machine with nginx has: its log and web root. The block makes
    // the rest itself.
    for d in ["var/log/nginx", "var/www/html"] {
        std::fs::create_dir_all(dir.join(d)).expect("dir");
    }
    let log = std::fs::File::create(dir.join("var/log/nginx/access.log")).expect("log");
    botscope_testkit::synthlog::write(log, 2_000, 1).expect("written");
    example_robots(&dir, "www.ebay.com.txt", "var/www/html/robots.txt");
    let addr = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let listen = format!("var/log/botscope/decisions.jsonl --listen {addr}");
    let blocks = blocks_for(
        "gate.md",
        T,
        &[
            ("/etc/botscope/", "etc/botscope/"),
            ("/var/log/nginx/", "var/log/nginx/"),
            ("/var/www/html/", "var/www/html/"),
            ("/var/log/botscope/decisions.jsonl", &listen),
            ("/var/log/botscope", "var/log/botscope"),
            ("/var/lib/botscope", "var/lib/botscope"),
        ],
    );
    assert_eq!(blocks.len(), 1);
    serve_block("gate.md", blocks[0].0, &dir, &blocks[0].1, |_| {
        let (status, out) = http_get(
            &addr,
            "/auth",
            &[
                ("X-Original-URI", "/"),
                ("X-Real-IP", "198.51.100.7"),
                (
                    "User-Agent",
                    "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
                ),
            ],
        );
        assert!(matches!(status, 200 | 401 | 403), "{out}");
        assert!(
            out.contains("X-Bot-Decision") || out.contains("x-bot-decision"),
            "{out}"
        );
    });
    assert!(dir.join("etc/botscope/policy.yaml").is_file());
    assert!(dir.join("etc/botscope/robots/default.txt").is_file());
    // One robots.txt: the web root's moved to the gate's.
    assert!(!dir.join("var/www/html/robots.txt").exists());
}

/// docs/web-server-lists.md's gate over exported lists: the lists and
/// robots.txt files under the run's directory, a free port for 8091.
#[test]
fn the_web_server_lists_guides_gate_runs_as_written() {
    const T: &str = "the_web_server_lists_guides_gate_runs_as_written";
    let dir = crate::scratch("docs-lists-gate");
    // The lists as the page's first block makes them, offline: a verified
    // Googlebot address's verdict exported.
    let clients = dir.join("clients.tsv");
    std::fs::write(
        &clients,
        "66.249.66.1\tMozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)\n",
    )
    .expect("clients");
    let o = crate::run(&["verify", "--batch", crate::arg(&clients), "--offline"]);
    assert!(o.status.success(), "{}", crate::stderr(&o));
    let verdicts = dir.join("verdicts.jsonl");
    std::fs::write(&verdicts, &o.stdout).expect("verdicts");
    let o = crate::run(&[
        "bots",
        "export",
        "--verdicts",
        crate::arg(&verdicts),
        "--format",
        "apache-dirs",
        "--out",
        crate::arg(&dir.join("var/lib/botscope/crawlers")),
    ]);
    assert!(o.status.success(), "{}", crate::stderr(&o));
    example_robots(&dir, "www.ebay.com.txt", "etc/botscope/robots/default.txt");
    let addr = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let blocks = blocks_for(
        "web-server-lists.md",
        T,
        &[
            ("/var/lib/botscope/", "var/lib/botscope/"),
            ("/etc/botscope/", "etc/botscope/"),
            ("127.0.0.1:8091", &addr),
        ],
    );
    assert_eq!(blocks.len(), 1);
    serve_block(
        "web-server-lists.md",
        blocks[0].0,
        &dir,
        &blocks[0].1,
        |_| {
            let (status, out) = http_get(&addr, "/robots.txt", &[("X-Real-IP", "198.51.100.7")]);
            assert_eq!(status, 200, "{out}");
            assert!(out.contains("User-agent"), "{out}");
        },
    );
}

/// docs/harvest.md's bench on the simulated web, at a test's size (300
/// hosts on 8 addresses, not 100,000 on 256; the debug build the tests
/// made, not a release build; a directory of the run's for /tmp/web): the
/// simulated web started by its first line, the harvest run with the
/// address and ports it printed.
#[test]
fn the_harvest_guides_simulated_web_runs_as_written() {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    const T: &str = "the_harvest_guides_simulated_web_runs_as_written";
    let dir = crate::scratch("docs-simweb");
    let web = dir.join("web").display().to_string();
    let blocks = blocks_for(
        "harvest.md",
        T,
        &[
            // Without `-p`, cargo resolves features for the whole
            // workspace, as `cargo test --workspace` did: the example it
            // built is run as it is, not compiled again with one
            // package's features (three minutes of the suite).
            ("cargo run --release -p botscope-simweb ", "cargo run -q "),
            (
                "--hosts 100000 --addresses 256",
                "--hosts 300 --addresses 8",
            ),
            ("/tmp/web", &web),
        ],
    );
    assert_eq!(blocks.len(), 1);
    let (line, code) = &blocks[0];
    let (serve, harvest) = code.split_once('\n').expect("two commands");
    let mut sim = std::process::Command::new("bash")
        .arg("-c")
        .arg(serve)
        .current_dir(crate::root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let group = sim.id();
    let mut first = String::new();
    std::io::BufReader::new(sim.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("its line");
    let kill = || {
        let _ = std::process::Command::new("kill")
            .args(["-s", "TERM", "--", &format!("-{group}")])
            .status();
    };
    let value = |key: &str| {
        first
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map(str::to_owned)
    };
    let (Some(dns), Some(http), Some(https)) = (value("dns="), value("http="), value("https="))
    else {
        kill();
        panic!("docs/harvest.md, the block of line {line}: the simulated web printed {first:?}");
    };
    let harvest = harvest
        .replace("127.77.0.1:PORT", &dns)
        .replace("--http-port PORT", &format!("--http-port {http}"))
        .replace("--https-port PORT", &format!("--https-port {https}"));
    let o = bash(&dir, &harvest).output().expect("bash runs");
    kill();
    let _ = sim.wait();
    assert!(
        o.status.success(),
        "docs/harvest.md, the block of line {line}:\n{harvest}\n{}",
        crate::stderr(&o)
    );
    assert!(dir.join("web/h.db").is_file());
}

/// README's and the reference's count of the bundled crawlers is the
/// registry's.
#[test]
fn the_readmes_crawler_count_is_the_registrys() {
    let o = crate::run(&["bots", "list"]);
    assert!(o.status.success());
    let n = crate::stdout(&o)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    let readme = read_page("README.md");
    let said = format!("({n} crawlers,");
    assert!(readme.contains(&said), "README.md should say {said:?}");
    let reference = read_page("reference.md");
    let said = format!("registry: {n} bots bundled,");
    assert!(
        reference.contains(&said),
        "docs/reference.md should say {said:?}"
    );
}
