//! The signals that stop a long-running command.

use std::future::Future;

/// Waits for `s`, forever when it could not be installed.
#[cfg(unix)]
async fn recv(s: Option<&mut tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed
/// when this is called, not when the future is first polled: call it
/// before saying the service is ready, so that a signal sent right after
/// stops it gracefully instead of killing it. Must be called inside a
/// Tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let (mut int, mut term) = signals;
            tokio::select! {
                () = recv(int.as_mut()) => {},
                () = recv(term.as_mut()) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    /// A SIGTERM sent after `shutdown_signal()` returns, before its future
    /// is polled, stops the future instead of killing the process (as it
    /// did while the handlers were installed on the first poll).
    #[tokio::test]
    async fn a_signal_right_after_the_call_is_caught() {
        let stop = super::shutdown_signal();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &std::process::id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        tokio::time::timeout(std::time::Duration::from_secs(30), stop)
            .await
            .expect("the SIGTERM completes the shutdown future");
    }
}
