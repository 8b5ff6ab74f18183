//! Exit codes and error reporting, in one place.

use std::process::ExitCode;

/// The outcome of a command, as an exit code: 0 ok, allowed or verified;
/// 1 a negative answer (disallowed, lint errors); 2 an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 0: all good / all allowed.
    Ok,
    /// 1: a negative answer.
    Negative,
    /// Another documented status (`verify`: 3 unverifiable, 4 unknown).
    Code(u8),
}

/// Maps a command's result to the process exit code. A broken pipe (the
/// reader went away, as with `| head`) is not an error.
pub fn finish(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Negative) => ExitCode::from(1),
        Ok(Outcome::Code(c)) => ExitCode::from(c),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("botscope: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
