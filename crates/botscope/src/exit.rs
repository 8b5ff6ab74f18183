//! Exit statuses, named, and error reporting, in one place.

use std::process::ExitCode;

/// How a command ended, as the documented exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done; allowed; verified; no lint errors.
    Success,
    /// 1: a negative answer: disallowed, spoofed, lint errors, an invalid
    /// registry, a list that could not be used.
    Negative,
    /// 2: an error (also for errors reported through `Err`).
    Error,
    /// 3 (`verify`): the verdict could not be reached.
    Unverifiable,
    /// 3 (`logs`, `store import`): done, but an input was damaged; what
    /// came before the damage is in.
    Damaged,
    /// 3 (`terms`): the use is allowed under a licence, to be obtained
    /// or paid.
    Licence,
    /// 4 (`verify`): not a claimed robot, or nothing to check; (`terms`)
    /// no source decides.
    Unknown,
    /// 4 (`logs`): no line, or under 1% of the lines, could be read in
    /// the log format; nothing was written.
    Unreadable,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Negative => 1,
            ExitStatus::Error => 2,
            ExitStatus::Unverifiable | ExitStatus::Damaged | ExitStatus::Licence => 3,
            ExitStatus::Unknown | ExitStatus::Unreadable => 4,
        }
    }
}

/// Maps a command's result to the process exit code, printing an error
/// with its causes. A broken pipe (the reader went away, as with
/// `| head`) is not an error.
pub fn finish(result: anyhow::Result<ExitStatus>) -> ExitCode {
    match result {
        Ok(s) => ExitCode::from(s.code()),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("botscope: error: {}", message(&e));
            ExitCode::from(ExitStatus::Error.code())
        }
    }
}

/// An error and its causes, `: `-joined, each said once: a cause whose
/// words its error already holds (`PATH: No such file …`, then `No such
/// file …`) is not repeated.
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let m = cause.to_string();
        if out.contains(&m) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&m);
    }
    out
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
