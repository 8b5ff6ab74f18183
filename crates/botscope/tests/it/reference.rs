//! docs/reference.md, the command reference, against the command itself:
//! one section per command, whose usage line and flags are what the
//! command's `--help` says.
//!
//! Each section holds a block between `<!-- help: botscope … -->` and
//! `<!-- end help -->`, made from the clap definition that `--help`
//! prints; the prose around it (what the command does, its exit status)
//! is written by hand and kept. `BOTSCOPE_BLESS=1` writes the blocks again
//! (and a section for a command the page lacks, which the test then asks
//! to be described).

use clap::CommandFactory;

use crate::root;

const BEGIN: &str = "<!-- help: ";
const END: &str = "<!-- end help -->";

/// Every command that runs (a leaf of the tree), with its full name.
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, name: &str, out: &mut Vec<(String, clap::Command)>) {
        let subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        // A command with flags of its own is one, whether or not it also
        // has subcommands (`gate`, `gate export nft`).
        let own = cmd
            .get_arguments()
            .any(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"));
        if subs.is_empty() || (own && name.contains(' ')) {
            out.push((name.to_owned(), cmd.clone()));
        }
        for s in subs {
            if s.is_hide_set() {
                continue;
            }
            walk(s, &format!("{name} {}", s.get_name()), out);
        }
    }
    let mut cmd = botscope_cli::Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "botscope", &mut out);
    out
}

/// A help text as one table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// An argument's name as `--help` prints it: `-s, --long <VALUE>...` or
/// `<NAME>` for a positional one.
fn spelled(arg: &clap::Arg) -> String {
    let values = || {
        let names: Vec<String> = match arg.get_value_names() {
            Some(v) => v.iter().map(|n| format!("<{n}>")).collect(),
            None => vec![format!("<{}>", arg.get_id().as_str().to_uppercase())],
        };
        let many = matches!(arg.get_num_args(), Some(r) if r.max_values() > 1);
        let mut s = names.join(" ");
        if many {
            s.push_str("...");
        }
        s
    };
    if arg.is_positional() {
        return values();
    }
    let mut s = String::new();
    if let Some(c) = arg.get_short() {
        s.push_str(&format!("-{c}"));
    }
    if let Some(l) = arg.get_long() {
        if !s.is_empty() {
            s.push_str(", ");
        }
        s.push_str(&format!("--{l}"));
    }
    if arg.get_action().takes_values() {
        s.push(' ');
        s.push_str(&values());
    }
    s
}

/// The generated part of a command's section.
fn block(name: &str, cmd: &clap::Command) -> String {
    let mut cmd = cmd.clone();
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let mut out = format!("{BEGIN}{name} -->\n```text\n{usage}\n```\n\n");
    let args: Vec<_> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    if !args.is_empty() {
        out.push_str("| argument | meaning |\n|---|---|\n");
        for a in args {
            let mut meaning = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            let meaning_end = meaning.trim_end().len();
            meaning.truncate(meaning_end);
            if !meaning.is_empty() && !meaning.ends_with(['.', '!', '?', ':']) {
                meaning.push('.');
            }
            let values: Vec<_> = a
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| format!("`{}`", v.get_name()))
                .collect();
            if !values.is_empty() && a.get_action().takes_values() {
                meaning.push_str(&format!(" One of: {}.", values.join(", ")));
            }
            let defaults: Vec<_> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            if !defaults.is_empty() && a.get_action().takes_values() {
                meaning.push_str(&format!(" Default: `{}`.", defaults.join(" ")));
            }
            if a.is_required_set() {
                meaning.push_str(" Required.");
            }
            out.push_str(&format!(
                "| `{}` | {} |\n",
                spelled(a).replace('|', "\\|"),
                cell(&meaning)
            ));
        }
    }
    out.push_str(END);
    out
}

/// The page's sections: each command's block as it stands, by name.
fn blocks_in(page: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = page[at..].find(BEGIN) {
        let start = at + i;
        let name_end = page[start..]
            .find(" -->")
            .map(|j| start + j)
            .expect("a help marker ends with -->");
        let name = page[start + BEGIN.len()..name_end].to_owned();
        let end = page[start..]
            .find(END)
            .map(|j| start + j + END.len())
            .expect("every help block ends");
        out.push((name, start..end));
        at = end;
    }
    out
}

/// The hand-written text of a command's section: from its heading to the
/// next heading, without the generated block.
fn prose<'a>(page: &'a str, name: &str) -> Option<&'a str> {
    let heading = format!("\n## `{name}`\n");
    let start = page.find(&heading)? + heading.len();
    let end = page[start..]
        .find("\n## ")
        .map_or(page.len(), |j| start + j);
    let section = &page[start..end];
    Some(section.split(BEGIN).next().unwrap_or(section))
}

#[test]
fn the_reference_is_the_commands_help() {
    let path = root().join("docs/reference.md");
    let mut page = std::fs::read_to_string(&path).expect("docs/reference.md");
    let commands = commands();
    if std::env::var_os("BOTSCOPE_BLESS").is_some() {
        let have = blocks_in(&page);
        for (name, range) in have.iter().rev() {
            if let Some((_, cmd)) = commands.iter().find(|(n, _)| n == name) {
                page.replace_range(range.clone(), &block(name, cmd));
            }
        }
        for (name, cmd) in &commands {
            if have.iter().any(|(n, _)| n == name) {
                continue;
            }
            // At the end of the command's section, or in a new one.
            let heading = format!("\n## `{name}`\n");
            match page.find(&heading) {
                Some(at) => {
                    let from = at + heading.len();
                    let end = page[from..].find("\n## ").map_or(page.len(), |j| from + j);
                    let before = page[..end].trim_end().len();
                    page.replace_range(before..end, &format!("\n\n{}\n", block(name, cmd)));
                }
                None => page.push_str(&format!("\n## `{name}`\n\n{}\n", block(name, cmd))),
            }
        }
        std::fs::write(&path, &page).expect("docs/reference.md written");
    }
    let have = blocks_in(&page);
    let names: Vec<&str> = have.iter().map(|(n, _)| n.as_str()).collect();
    let mut wrong = Vec::new();
    for (name, cmd) in &commands {
        match have.iter().find(|(n, _)| n == name) {
            None => wrong.push(format!("{name}: no section")),
            Some((_, range)) => {
                if page[range.clone()] != block(name, cmd) {
                    wrong.push(format!("{name}: the usage or flags differ from --help"));
                }
                match prose(&page, name) {
                    None => wrong.push(format!("{name}: no heading ## `{name}`")),
                    Some(text) => {
                        if text.split_whitespace().count() < 5 {
                            wrong.push(format!("{name}: no description"));
                        }
                        if !text.contains("Exit status") {
                            wrong.push(format!("{name}: no exit status"));
                        }
                    }
                }
            }
        }
    }
    for n in &names {
        if !commands.iter().any(|(c, _)| c == n) {
            wrong.push(format!("{n}: no such command"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/reference.md is not the commands' help (BOTSCOPE_BLESS=1 writes the blocks again):\n{}",
        wrong.join("\n")
    );
}

/// README's one-line list of commands names every command and links to
/// the reference.
#[test]
fn the_readme_lists_every_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let top: Vec<String> = botscope_cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_owned())
        .collect();
    let line = readme
        .lines()
        .find(|l| l.starts_with("Commands:"))
        .expect("README.md has a line starting with Commands:");
    for name in &top {
        let link = format!("[`{name}`](docs/reference.md#");
        assert!(
            line.contains(&link),
            "README.md's Commands: line should link {name} to docs/reference.md"
        );
    }
}

/// The generated block changes with the definition: a flag the page does
/// not have is found.
#[test]
fn a_flag_missing_from_the_reference_is_found() {
    let (name, cmd) = commands()
        .into_iter()
        .find(|(n, _)| n == "botscope robots check")
        .expect("robots check");
    let generated = block(&name, &cmd);
    assert!(generated.contains("`--agent <"), "{generated}");
    let fewer = cmd.clone().mut_arg("agent", |a| a.hide(true));
    assert_ne!(block(&name, &fewer), generated);
}

/// `botscope --version` says the release the workspace is at, which
/// CHANGELOG.md dates and CITATION.cff cites.
#[test]
fn the_version_is_the_releases() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("the workspace's version");
    let o = crate::run(&["--version"]);
    assert!(o.status.success());
    assert_eq!(crate::stdout(&o), format!("botscope {version}\n"));
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).expect("CHANGELOG.md");
    let dated = format!("\n## [{version}] - ");
    let at = changelog
        .find(&dated)
        .unwrap_or_else(|| panic!("CHANGELOG.md should date the section of {version}"));
    let date = &changelog[at + dated.len()..][..10];
    // CITATION.cff cites the same release, of the same date.
    let citation = std::fs::read_to_string(root().join("CITATION.cff")).expect("CITATION.cff");
    assert!(
        citation.contains(&format!("\nversion: \"{version}\"\n")),
        "CITATION.cff's version"
    );
    assert!(
        citation.contains(&format!("\ndate-released: \"{date}\"\n")),
        "CITATION.cff's date"
    );
    for page in ["README.md", "docs/studies.md"] {
        let text = std::fs::read_to_string(root().join(page)).expect(page);
        assert!(
            text.contains("CITATION.cff"),
            "{page} should point to CITATION.cff"
        );
    }
}
