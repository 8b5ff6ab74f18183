//! Politeness per address: one exchange at a time, and at least `gap`
//! between the end of one and the start of the next, whichever host the
//! exchanges are for (many hosts share an address). Times are Tokio's, so
//! the rules are tested on a paused clock, exactly.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

/// The turns of every address.
#[derive(Debug, Default)]
pub struct Turns {
    gap: Duration,
    /// Per address: held for a whole exchange; the time its last one ended.
    gates: Mutex<HashMap<IpAddr, Arc<tokio::sync::Mutex<Option<Instant>>>>>,
}

/// An address's turn, held for one exchange; its end is recorded when it
/// is dropped.
#[derive(Debug)]
pub struct Turn(OwnedMutexGuard<Option<Instant>>);

impl Drop for Turn {
    fn drop(&mut self) {
        *self.0 = Some(Instant::now());
    }
}

impl Turns {
    /// Turns with `gap` between exchanges with one address.
    pub fn new(gap: Duration) -> Turns {
        Turns {
            gap,
            gates: Mutex::default(),
        }
    }

    /// Waits for `ip`'s turn: the exchange before has ended, and `gap`
    /// has passed since.
    pub async fn take(&self, ip: IpAddr) -> Turn {
        let gate = {
            let mut g = self.gates.lock().unwrap_or_else(|e| e.into_inner());
            g.entry(ip).or_default().clone()
        };
        let last = gate.lock_owned().await;
        if let Some(t) = *last {
            tokio::time::sleep_until(t + self.gap).await;
        }
        Turn(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `ip`'s turn, holds it for `work`, and returns when the turn
    /// began and ended.
    async fn exchange(t: Arc<Turns>, ip: &str, work: Duration) -> (Instant, Instant) {
        let turn = t.take(ip.parse().expect("ip")).await;
        let start = Instant::now();
        tokio::time::sleep(work).await;
        let end = Instant::now();
        drop(turn);
        (start, end)
    }

    #[tokio::test(start_paused = true)]
    async fn one_at_a_time_with_the_gap_per_address() {
        let gap = Duration::from_millis(500);
        let work = Duration::from_millis(30);
        let t = Arc::new(Turns::new(gap));
        let t0 = Instant::now();
        let tasks: Vec<_> = ["192.0.2.1", "192.0.2.1", "192.0.2.1", "192.0.2.2"]
            .into_iter()
            .map(|ip| tokio::spawn(exchange(t.clone(), ip, work)))
            .collect();
        let mut spans = Vec::new();
        for task in tasks {
            spans.push(task.await.expect("task"));
        }
        let mut same: Vec<(Instant, Instant)> = spans[..3].to_vec();
        same.sort();
        for w in same.windows(2) {
            // Never overlapping, and the gap between each end and the next
            // start, to the tick of the paused clock.
            assert_eq!(w[1].0 - w[0].1, gap);
        }
        assert_eq!(same[0].0, t0, "the first goes at once");
        // Another address does not wait for this one.
        assert_eq!(spans[3].0, t0);
    }
}
