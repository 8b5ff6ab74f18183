//! The botscope command: parse, start the runtime, run, exit.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = <botscope::cli::Cli as clap::Parser>::parse();
    let settings = botscope::Settings::from_env();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(settings.threads)
        .enable_all()
        .build();
    match runtime {
        Ok(rt) => botscope::finish(rt.block_on(botscope::run(cli, &settings))),
        Err(e) => botscope::finish(Err(
            anyhow::Error::new(e).context("failed to start the runtime")
        )),
    }
}
