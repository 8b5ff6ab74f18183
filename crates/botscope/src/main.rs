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
        Ok(rt) => {
            let result = rt.block_on(botscope::task(cli, &settings));
            // What the command is done with is left to the operating
            // system: freeing half a million small allocations one by one
            // just before exiting only costs time.
            std::mem::forget(settings.leftovers.take());
            // Work still on blocking threads (a request's analysis when a
            // server stops) is not waited for beyond this.
            rt.shutdown_timeout(std::time::Duration::from_secs(2));
            botscope::finish(result)
        }
        Err(e) => botscope::finish(Err(
            anyhow::Error::new(e).context("failed to start the runtime")
        )),
    }
}
