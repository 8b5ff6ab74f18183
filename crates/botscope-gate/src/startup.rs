//! The files and values a gate starts from, read and checked before
//! anything listens: each problem names its flag and its path (escaped),
//! and a gate with one does not start.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let key = dir.path().join("challenge.key");
//! std::fs::write(&key, [7u8; 32])?;
//! assert_eq!(botscope_gate::startup::key_file("--challenge-key", &key)?.len(), 32);
//! std::fs::write(&key, b"short")?;
//! let e = botscope_gate::startup::key_file("--challenge-key", &key).unwrap_err();
//! assert!(e.to_string().contains("5 bytes; a key is at least 32"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;
use std::sync::Arc;

use botscope_os::stdio::{display, wrong_at};
use botscope_terms::rsl;

/// A flag whose file or value a gate cannot start from.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(String);

fn shown(p: &Path) -> String {
    botscope_text::field(&display(p)).into_owned()
}

/// Why a file could not be read, for a line that names it already.
fn why(e: botscope_os::Error) -> String {
    match e {
        botscope_os::Error::Io { source, .. } => source.to_string(),
        e => e.to_string(),
    }
}

/// A key file (`flag`: `--challenge-key`, `--canary-key`): at least 32
/// bytes, at most 4 KiB read.
pub fn key_file(flag: &str, path: &Path) -> Result<Vec<u8>, StartError> {
    let key = botscope_os::read_capped(path, 4096)
        .map_err(|e| StartError(format!("{flag} {}: {}", shown(path), why(e))))?;
    if key.len() < 32 {
        return Err(StartError(format!(
            "{flag} {}: {} bytes; a key is at least 32 (head -c 32 /dev/urandom > FILE)",
            shown(path),
            key.len()
        )));
    }
    Ok(key)
}

/// The operators' token (`--operator-token-file`): the file's one line,
/// 16 printable characters or more (a short or empty one would be
/// guessed).
pub fn operator_token(path: &Path) -> Result<Vec<u8>, StartError> {
    let flag = "--operator-token-file";
    let bytes = botscope_os::read_file_capped(path, 4096)
        .map_err(|e| StartError(format!("{flag} {}: {}", shown(path), why(e))))?;
    let token = bytes.trim_ascii().to_vec();
    if token.len() < 16 || !token.iter().all(u8::is_ascii_graphic) {
        return Err(StartError(format!(
            "{flag} {}: the token must be one line of 16 printable characters or more (e.g. `openssl rand -hex 32`)",
            shown(path)
        )));
    }
    Ok(token)
}

/// Each path a flag names checked at once, `(flag, path, a directory)`;
/// and for each file the gate will write (`(flag, path)`), its
/// directory: every problem in one error, a line each.
pub fn check_paths(
    read: &[(&str, &Path, bool)],
    write: &[(&str, &Path)],
) -> Result<(), StartError> {
    let mut problems = Vec::new();
    for &(flag, p, dir) in read {
        if let Some(why) = wrong_at(p, dir) {
            problems.push(format!("{flag} {}: {why}", shown(p)));
        }
    }
    for &(flag, p) in write {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Some(why) = wrong_at(dir, true) {
            problems.push(format!(
                "{flag} {}: its directory {}: {why} (make it first: mkdir -p)",
                shown(p),
                shown(dir)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(StartError(problems.join("\n")))
    }
}

/// A licence document read and checked ([`rsl_document`]).
#[derive(Debug)]
pub struct Licence {
    /// The path it is served at and its bytes ([`crate::SiteTerms::rsl`]).
    pub served: (String, Arc<Vec<u8>>),
    /// Lines to show: its warnings, and a robots.txt that names no
    /// licence.
    pub warnings: Vec<String>,
}

/// The RSL licence document of `--rsl FILE`, to be served at `at`
/// (`--rsl-path`): at most [`rsl::MAX_BYTES`], without an error. Its
/// warnings, and a robots.txt (`default.txt` under `robots_dir`) that
/// names no licence, come back as lines to show.
pub fn rsl_document(
    file: &Path,
    at: &str,
    robots_dir: Option<&Path>,
) -> Result<Licence, StartError> {
    let (body, total) = botscope_os::stdio::read_limited(file, Some(rsl::MAX_BYTES + 1))
        .map_err(|e| StartError(format!("--rsl {e}")))?;
    if total > rsl::MAX_BYTES as u64 {
        return Err(StartError(format!(
            "--rsl {}: over {} bytes; nothing was started",
            shown(file),
            rsl::MAX_BYTES
        )));
    }
    let doc = rsl::Document::parse(&body);
    let line = |d: &rsl::Diagnostic| {
        let message = botscope_text::field(&d.message);
        format!("{}:{}:{}: {message}", shown(file), d.line, d.column)
    };
    if let Some(e) = doc
        .diagnostics
        .iter()
        .find(|d| d.severity == rsl::Severity::Error)
    {
        return Err(StartError(format!("{}; nothing was started", line(e))));
    }
    if !at.starts_with('/') || at.contains(['?', '#', ' ']) {
        return Err(StartError(format!(
            "--rsl-path {}: a path starting with /",
            botscope_text::field(at)
        )));
    }
    let mut warnings: Vec<String> = doc
        .diagnostics
        .iter()
        .filter(|d| d.severity == rsl::Severity::Warning)
        .map(line)
        .collect();
    // The robots.txt crawlers read should name it.
    let default = robots_dir.unwrap_or(Path::new("")).join("default.txt");
    if let Ok(b) = std::fs::read(&default)
        && botscope_robotstxt::Robots::parse(&b).licenses.is_empty()
    {
        warnings.push(format!(
            "{} names no licence: add `License: https://YOUR-SITE{at}`",
            shown(&default)
        ));
    }
    Ok(Licence {
        served: (at.to_owned(), Arc::new(body)),
        warnings,
    })
}

/// `--content-usage`: an aipref preference that reads and states at
/// least one preference of the vocabulary, in its canonical form.
pub fn content_usage(value: &str) -> Result<String, StartError> {
    let shown = botscope_text::field(value);
    let p = botscope_robotstxt::parse_preference(value)
        .map_err(|e| StartError(format!("--content-usage {shown}: {e}; nothing was started")))?;
    if p.usage.is_empty() {
        return Err(StartError(format!(
            "--content-usage {shown}: states no preference of the vocabulary (train-ai, ai-use, search with y or n); nothing was started"
        )));
    }
    Ok(botscope_robotstxt::show_usage(&p.usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_problem_with_the_paths_is_said_at_once() {
        let d = tempfile::tempdir().expect("tempdir");
        let file = d.path().join("policy.yaml");
        std::fs::write(&file, "rules: []\n").expect("write");
        assert!(check_paths(&[("--policy", &file, false)], &[("--events", &file)]).is_ok());
        let e = check_paths(
            &[("--robots-dir", &file, true), ("--policy", d.path(), false)],
            &[("--decision-log", &d.path().join("none/log.jsonl"))],
        )
        .expect_err("three problems")
        .to_string();
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(lines.len(), 3, "{e}");
        assert!(lines[0].starts_with("--robots-dir ") && lines[0].ends_with(": not a directory"));
        assert!(lines[1].ends_with(": not a regular file"));
        assert!(
            lines[2].contains("its directory") && lines[2].ends_with("(make it first: mkdir -p)")
        );
    }

    #[test]
    fn an_operator_token_is_one_long_printable_line() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("token");
        for (body, ok) in [
            (&b"0123456789abcdef\n"[..], true),
            (b"short\n", false),
            (b"0123456789 abcdef\n", false),
            (b"", false),
        ] {
            std::fs::write(&p, body).expect("write");
            assert_eq!(operator_token(&p).is_ok(), ok, "{body:?}");
        }
        // The path once, then the system's reason.
        let none = d.path().join("none");
        let e = operator_token(&none).expect_err("no file").to_string();
        assert_eq!(e.matches("none").count(), 1, "{e}");
        assert!(
            e.starts_with("--operator-token-file ") && e.contains("No such file"),
            "{e}"
        );
    }

    #[test]
    fn a_content_usage_states_a_preference_of_the_vocabulary() {
        assert_eq!(content_usage("train-ai=n").expect("reads"), "train-ai=n");
        assert!(content_usage("nonsense=maybe").is_err());
    }
}
