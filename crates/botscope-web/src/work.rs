//! The work threads every request's blocking work runs on: a bounded
//! queue, long jobs that always leave a thread for short ones, and the
//! cancel flag a long job checks.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::fail::Fail;

/// The work threads: at most `threads` jobs at once, in arrival order
/// (tokio's semaphore is fair), and at most `queue` waiting; past that a
/// request is shed at once with 503 and `Retry-After` rather than queued
/// for minutes. Searches, pages, checks, submissions, uploads and the
/// background computations all go through it.
pub(crate) struct Work {
    permits: Arc<tokio::sync::Semaphore>,
    threads: u32,
    /// Long jobs (uploads, background computations) hold these as well:
    /// one fewer than the threads, so one thread is always left for
    /// searches and pages, however many long jobs arrive.
    long: Arc<tokio::sync::Semaphore>,
    long_threads: u32,
    pub(crate) waiting: std::sync::atomic::AtomicUsize,
    queue: usize,
}

impl Work {
    pub(crate) fn new(threads: usize, queue: usize) -> Work {
        let long_threads = threads.saturating_sub(1).max(1);
        Work {
            permits: Arc::new(tokio::sync::Semaphore::new(threads)),
            threads: u32::try_from(threads).unwrap_or(u32::MAX),
            long: Arc::new(tokio::sync::Semaphore::new(long_threads)),
            long_threads: u32::try_from(long_threads).unwrap_or(u32::MAX),
            waiting: std::sync::atomic::AtomicUsize::new(0),
            queue,
        }
    }

    /// `n` permits of `sem`: at once, or after waiting in the bounded
    /// queue; past the queue, [`Fail::Busy`].
    async fn acquire(
        &self,
        sem: &Arc<tokio::sync::Semaphore>,
        n: u32,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, Fail> {
        if let Ok(p) = sem.clone().try_acquire_many_owned(n) {
            return Ok(p);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Fail::Busy(format!(
                "the server is busy ({} jobs waiting for its {} work threads); try again in a few seconds",
                self.queue, self.threads
            )));
        }
        let p = sem.clone().acquire_many_owned(n).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        p.map_err(|e| Fail::Internal(format!("the work queue is closed: {e}")))
    }

    /// Runs `f` on a blocking thread holding `threads` of the permits (1,
    /// or all of them for a job that uses every core), the permits going
    /// with the work so that a client that hangs up does not let more
    /// work start than there are threads.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        threads: u32,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Fail> {
        let permit = self
            .acquire(&self.permits, threads.min(self.threads))
            .await?;
        crate::fail::blocking(move || {
            let _permit = permit;
            f()
        })
        .await
    }

    /// A long job (an upload's analysis, a background computation): up to
    /// `threads` threads, but never the last one, which stays for short
    /// requests. `f` is given the number of threads it holds and a
    /// [`Cancel`] that turns true when the caller stops waiting (its
    /// request's deadline passed, its client went away): work that checks
    /// it stops early instead of holding the threads.
    pub(crate) async fn run_long<T: Send + 'static>(
        &self,
        threads: u32,
        f: impl FnOnce(usize, Cancel) -> T + Send + 'static,
    ) -> Result<T, Fail> {
        let n = threads.clamp(1, self.long_threads);
        let long = self.acquire(&self.long, n).await?;
        let permit = self.acquire(&self.permits, n).await?;
        let cancel = Cancel::default();
        let _on_drop = CancelOnDrop(cancel.clone());
        crate::fail::blocking(move || {
            let _permits = (long, permit);
            f(n as usize, cancel)
        })
        .await
    }
}

/// Set when the caller of a long job stopped waiting for it.
#[derive(Clone, Default)]
pub(crate) struct Cancel(Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Whether the job should stop.
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Sets its [`Cancel`] when the waiting future is dropped (or done).
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, Ordering::Relaxed);
    }
}
