//! The botscope command.

mod cli;
mod exit;
mod robots;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = <cli::Cli as clap::Parser>::parse();
    exit::finish(cli.run())
}
