//! The botscope command.

// Doc comments on the clap types are the command's help text, where a URL
// in an example is plain text, not a link.
#![allow(rustdoc::bare_urls)]

mod bots;
mod cli;
mod exit;
mod export;
mod harvest;
mod logs;
mod robots;
mod store;
mod verify;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = <cli::Cli as clap::Parser>::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return exit::finish(Err(
                anyhow::Error::new(e).context("failed to start the runtime")
            ));
        }
    };
    exit::finish(runtime.block_on(cli.run()))
}
