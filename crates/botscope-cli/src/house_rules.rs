//! The workspace's house rules, measured as ARCHITECTURE.md states them
//! ("House rules"): the binary's glue per command, the code lines of a
//! library file, and the one place a runtime is built.

use std::path::{Path, PathBuf};

use clap::CommandFactory;

/// Lines of the binary's glue a command may cost, on average.
const GLUE_PER_COMMAND: usize = 85;
/// Code lines a library file may hold.
const LIBRARY_FILE: usize = 1300;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `.rs` files under `dir`, at any depth.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("a source directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Lines that are neither blank nor only a comment (`//`, `///`, `//!`).
fn code_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count()
}

/// The commands that run: each command without subcommands, and each
/// whose subcommands are optional (`gate`, and `gate export …`).
fn commands(c: &clap::Command) -> usize {
    let subs: Vec<&clap::Command> = c
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .collect();
    let runs = subs.is_empty() || !c.is_subcommand_required_set();
    usize::from(runs) + subs.into_iter().map(commands).sum::<usize>()
}

#[test]
fn the_binary_is_glue_within_its_budget_per_command() {
    let mut cli = crate::Cli::command();
    cli.build();
    // The top level itself runs nothing.
    let n = commands(&cli) - usize::from(!cli.is_subcommand_required_set());
    assert!(n >= 50, "{n} commands: the count lost some");
    let mut files = Vec::new();
    rust_files(&workspace().join("crates/botscope/src"), &mut files);
    let lines: usize = files
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("source").lines().count())
        .sum();
    assert!(
        lines <= GLUE_PER_COMMAND * n,
        "crates/botscope/src holds {lines} lines for {n} commands ({:.1} a command, at most \
         {GLUE_PER_COMMAND}): move what is not glue into the library crate it belongs to",
        lines as f64 / n as f64
    );
}

#[test]
fn no_library_file_holds_more_than_its_share_of_code() {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(workspace().join("crates")).expect("crates") {
        let krate = krate.expect("a crate").path();
        if krate.ends_with("botscope") || !krate.join("src").is_dir() {
            continue;
        }
        rust_files(&krate.join("src"), &mut files);
    }
    assert!(
        files.len() > 100,
        "{} library files: the walk lost some",
        files.len()
    );
    let over: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = code_lines(&std::fs::read_to_string(p).expect("source"));
            (n > LIBRARY_FILE).then(|| format!("{} ({n})", p.display()))
        })
        .collect();
    assert!(
        over.is_empty(),
        "library files over {LIBRARY_FILE} code lines: {over:?}"
    );
}

#[test]
fn only_main_builds_or_blocks_on_a_runtime() {
    let mut files = Vec::new();
    rust_files(&workspace().join("crates/botscope/src"), &mut files);
    for p in files.iter().filter(|p| !p.ends_with("main.rs")) {
        let text = std::fs::read_to_string(p).expect("source");
        for (i, line) in text.lines().enumerate() {
            let code = line.trim();
            if code.starts_with("//") {
                continue;
            }
            for construct in ["Runtime::new", "Builder::new_", "block_on(", "tokio::main"] {
                assert!(
                    !code.contains(construct),
                    "{}:{}: `{construct}` outside main.rs",
                    p.display(),
                    i + 1
                );
            }
        }
    }
}

#[test]
fn the_measures_count_what_they_say() {
    assert_eq!(
        code_lines("fn a() {}\n\n  // note\n/// doc\n//! top\nlet x = 1; // tail\n"),
        2
    );
    let cli = clap::Command::new("t")
        .subcommand_required(true)
        .subcommand(clap::Command::new("leaf"))
        .subcommand(
            clap::Command::new("gate").subcommand(
                clap::Command::new("export")
                    .subcommand_required(true)
                    .subcommand(clap::Command::new("nft")),
            ),
        );
    // leaf, gate, gate export nft.
    assert_eq!(commands(&cli), 3);
}
