//! The stop signal of the long-running commands (`serve`, `gate`,
//! `honeypot serve`, harvest workers).

/// Ctrl-C or SIGTERM (installed now: see
/// [`botscope_os::shutdown_signal`]), said in the log when it comes.
pub fn stop_signal() -> impl Future<Output = ()> + Send + 'static {
    let signal = botscope_os::shutdown_signal();
    async move {
        signal.await;
        tracing::info!("shutting down: finishing the work in flight");
    }
}
