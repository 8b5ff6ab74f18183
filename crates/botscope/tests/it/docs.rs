//! The guides run as written: each `sh` block of a page, in order, in one
//! empty directory, by bash with `set -euo pipefail`, the `botscope` this
//! build made first on the PATH and a private home; a `text` block right
//! after an `sh` block is what that block prints (each of its lines is a
//! line of the output, runs of spaces taken as one). A block whose first
//! line is `# needs the network` is not run.

use std::path::{Path, PathBuf};

/// One `sh` block and the output shown under it.
#[derive(Debug)]
struct Block {
    /// The line of the page it starts on.
    line: usize,
    code: String,
    shown: Option<String>,
}

/// The fenced blocks of `page`: (info string, first line, body).
fn fences(page: &str) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (n, line) in page.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some((info.trim().to_owned(), n + 1, String::new()));
                }
            }
            Some((_, _, body)) => {
                if line.trim_end() == "```" {
                    out.extend(open.take());
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    out
}

/// The `sh` blocks to run, each with the `text` block that follows it.
fn blocks(page: &str) -> Vec<Block> {
    let f = fences(page);
    let mut out = Vec::new();
    for (i, (info, line, body)) in f.iter().enumerate() {
        if info != "sh" || body.starts_with("# needs the network") {
            continue;
        }
        let shown = f
            .get(i + 1)
            .filter(|(info, _, _)| info == "text")
            .map(|(_, _, b)| b.clone());
        out.push(Block {
            line: *line,
            code: body.clone(),
            shown,
        });
    }
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

/// Runs the `sh` blocks of `docs/PAGE` in a fresh directory named after
/// it and returns the directory.
pub fn run_page(page: &str) -> PathBuf {
    let text = std::fs::read_to_string(crate::root().join("docs").join(page)).expect("page");
    run_blocks(page, &text)
}

/// Runs the `sh` blocks of one section of `docs/PAGE`.
pub fn run_section(page: &str, heading: &str) -> PathBuf {
    let text = std::fs::read_to_string(crate::root().join("docs").join(page)).expect("page");
    run_blocks(page, section(&text, heading))
}

fn run_blocks(page: &str, text: &str) -> PathBuf {
    let dir = crate::scratch(&format!("docs-{page}"));
    let bin = Path::new(env!("CARGO_BIN_EXE_botscope"))
        .parent()
        .expect("bin dir")
        .to_owned();
    // `duckdb -c SQL`, as the DuckDB command runs it, from the venv's
    // DuckDB package (the command itself is not on the test machines).
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
    let path = std::env::join_paths([bin, shims].into_iter().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let home = crate::home();
    let list = blocks(text);
    assert!(!list.is_empty(), "{page}: no sh block to run");
    for b in list {
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("set -euo pipefail\n{}", b.code))
            .current_dir(&dir)
            .env("PATH", &path)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .output()
            .expect("bash runs");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "docs/{page}, the block of line {}:\n{}\nfailed: {}{}",
            b.line,
            b.code,
            out,
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

#[test]
fn the_page_reader_finds_blocks_and_their_output() {
    let page = "a\n```sh\necho hi\n```\n\n```text\nhi\n```\n```sh\n# needs the network\ncurl x\n```\n```python\nx\n```\n";
    let b = blocks(page);
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(b[0].code, "echo hi\n");
    assert_eq!(b[0].shown.as_deref(), Some("hi\n"));
    assert_eq!(b[0].line, 2);
}

/// docs/studies.md: the studies' methods on synthetic crawls, output as
/// shown; the files the page writes are what it says.
#[test]
fn the_studies_guide_runs_as_written() {
    let dir = run_page("studies.md");
    let csv = std::fs::read_to_string(dir.join("somesite.csv")).expect("somesite.csv");
    let rows: Vec<&str> = csv.lines().collect();
    // 24 agents and the group, in each of two crawls, under a header.
    assert_eq!(rows.len(), 1 + 2 * 25, "{csv}");
    assert!(rows[0].ends_with(",disagree_with_exact"), "{}", rows[0]);
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
