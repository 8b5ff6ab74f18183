//! A pool of nameservers for resolving many names fast, BotSeer's way: each
//! server is checked first against answers the servers agree on (a server
//! that answers differently from the majority is lying and left out, one
//! that does not answer is dead), the rest are ranked by latency; queries
//! go to the fastest server with room, and a server that fails is rested
//! for a while (longer each time) while the others carry on.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{DnsFailure, Error, Lookup, Timed};

/// Queries one server may have in flight before the next server is used.
pub const MAX_IN_FLIGHT: usize = 256;
/// Tries per name (each on a different server when there are several).
const TRIES: usize = 3;
/// The first rest after a failure; doubled per failure in a row.
const FIRST_REST: Duration = Duration::from_millis(500);
/// The longest rest.
const MAX_REST: Duration = Duration::from_secs(60);

/// What the check found about one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCheck {
    /// The server.
    pub addr: SocketAddr,
    /// In the pool.
    pub usable: bool,
    /// Median latency of its answers.
    pub latency: Option<Duration>,
    /// Why it was left out.
    pub problem: Option<String>,
}

/// Counters of one server, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUse {
    /// The server.
    pub addr: SocketAddr,
    /// Answers (including "no such name").
    pub answered: u64,
    /// Failures (timeouts, SERVFAIL, refusals).
    pub failed: u64,
    /// Times it was rested.
    pub rested: u64,
}

#[derive(Debug)]
struct State {
    latency: Duration,
    in_flight: usize,
    fails_in_row: u32,
    rested_until: Option<Instant>,
    answered: u64,
    failed: u64,
    rested: u64,
}

struct Server<L> {
    addr: SocketAddr,
    lookup: Arc<L>,
}

/// Checked, ranked nameservers.
pub struct Pool<L> {
    servers: Vec<Server<L>>,
    state: Mutex<Vec<State>>,
}

fn median(mut v: Vec<Duration>) -> Option<Duration> {
    v.sort();
    v.get(v.len() / 2).copied()
}

impl<L: Lookup> Pool<L> {
    /// Checks `servers` by resolving `probes` on each: answers the
    /// majority of servers agree on are the known answers. Servers that
    /// contradict a majority, or answer nothing, are left out; the rest are
    /// ranked by median latency. With one server, answering is enough.
    pub async fn check(
        servers: Vec<(SocketAddr, L)>,
        probes: &[String],
    ) -> Result<(Pool<L>, Vec<ServerCheck>), Error> {
        if servers.is_empty() {
            return Err(Error::Pool("no nameservers to check".into()));
        }
        let servers: Vec<Server<L>> = servers
            .into_iter()
            .map(|(addr, l)| Server {
                addr,
                lookup: Arc::new(l),
            })
            .collect();
        // Every server, every probe, all at once.
        let mut tasks = Vec::new();
        for (si, s) in servers.iter().enumerate() {
            for (pi, p) in probes.iter().enumerate() {
                let lookup = s.lookup.clone();
                let p = p.clone();
                tasks.push(tokio::spawn(async move {
                    let t = Instant::now();
                    let r = lookup.forward(&p).await;
                    (si, pi, r.answer, t.elapsed())
                }));
            }
        }
        let mut answers: Vec<Vec<Option<Vec<IpAddr>>>> =
            vec![vec![None; probes.len()]; servers.len()];
        let mut latencies: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
        for t in tasks {
            let Ok((si, pi, answer, took)) = t.await else {
                continue;
            };
            if let Ok(mut a) = answer {
                a.sort();
                a.dedup();
                answers[si][pi] = Some(a);
                latencies[si].push(took);
            }
        }
        // The known answer of each probe: what a strict majority of the
        // servers that answered it said.
        let known: Vec<Option<Vec<IpAddr>>> = (0..probes.len())
            .map(|pi| {
                let mut count: HashMap<&Vec<IpAddr>, usize> = HashMap::new();
                let mut answering = 0;
                for a in answers.iter().filter_map(|s| s[pi].as_ref()) {
                    *count.entry(a).or_default() += 1;
                    answering += 1;
                }
                count
                    .into_iter()
                    .filter(|(_, n)| answering >= 2 && *n * 2 > answering)
                    .max_by_key(|(_, n)| *n)
                    .map(|(a, _)| a.clone())
            })
            .collect();
        let mut report = Vec::new();
        let mut keep = Vec::new();
        for (si, s) in servers.iter().enumerate() {
            let lying = (0..probes.len())
                .find(|&pi| matches!((&answers[si][pi], &known[pi]), (Some(a), Some(k)) if a != k));
            let answered = answers[si].iter().filter(|a| a.is_some()).count();
            let problem = if let Some(pi) = lying {
                Some(format!(
                    "answers {} differently from the other servers",
                    probes[pi]
                ))
            } else if answered == 0 && !probes.is_empty() {
                Some("answered none of the check queries".to_owned())
            } else {
                None
            };
            let latency = median(latencies[si].clone());
            report.push(ServerCheck {
                addr: s.addr,
                usable: problem.is_none(),
                latency,
                problem: problem.clone(),
            });
            if problem.is_none() {
                keep.push((si, latency.unwrap_or(Duration::from_millis(50))));
            }
        }
        if keep.is_empty() {
            return Err(Error::Pool(format!(
                "no usable nameserver: {}",
                report
                    .iter()
                    .map(|r| format!("{} {}", r.addr, r.problem.as_deref().unwrap_or("?")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        keep.sort_by_key(|(_, l)| *l);
        let mut slots: Vec<Option<Server<L>>> = servers.into_iter().map(Some).collect();
        let mut kept = Vec::new();
        let mut state = Vec::new();
        for (si, latency) in keep {
            if let Some(s) = slots[si].take() {
                kept.push(s);
                state.push(State {
                    latency,
                    in_flight: 0,
                    fails_in_row: 0,
                    rested_until: None,
                    answered: 0,
                    failed: 0,
                    rested: 0,
                });
            }
        }
        Ok((
            Pool {
                servers: kept,
                state: Mutex::new(state),
            },
            report,
        ))
    }

    /// The servers in use, fastest first.
    pub fn servers(&self) -> Vec<SocketAddr> {
        self.servers.iter().map(|s| s.addr).collect()
    }

    /// Per-server counters.
    pub fn usage(&self) -> Vec<ServerUse> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.servers
            .iter()
            .zip(st.iter())
            .map(|(s, x)| ServerUse {
                addr: s.addr,
                answered: x.answered,
                failed: x.failed,
                rested: x.rested,
            })
            .collect()
    }

    /// The best server for the next query, not in `tried`: the fastest
    /// that is not resting and has room; else the one whose rest ends
    /// first.
    fn pick(&self, tried: &[usize]) -> Option<usize> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let fresh = |i: usize, s: &State| {
            !tried.contains(&i)
                && s.rested_until.is_none_or(|t| t <= now)
                && s.in_flight < MAX_IN_FLIGHT
        };
        let best = st
            .iter()
            .enumerate()
            .filter(|(i, s)| fresh(*i, s))
            .min_by_key(|(_, s)| s.latency)
            .map(|(i, _)| i)
            .or_else(|| {
                st.iter()
                    .enumerate()
                    .filter(|(i, _)| !tried.contains(i))
                    .min_by_key(|(_, s)| (s.rested_until.unwrap_or(now), s.in_flight))
                    .map(|(i, _)| i)
            })?;
        st[best].in_flight += 1;
        Some(best)
    }

    fn done(&self, i: usize, ok: bool, took: Duration) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut st[i];
        s.in_flight = s.in_flight.saturating_sub(1);
        if ok {
            s.answered += 1;
            s.fails_in_row = 0;
            // Moving average: one answer moves it by an eighth.
            s.latency = (s.latency * 7 + took) / 8;
        } else {
            s.failed += 1;
            s.fails_in_row += 1;
            let rest = FIRST_REST
                .saturating_mul(1 << s.fails_in_row.min(8).saturating_sub(1))
                .min(MAX_REST);
            s.rested_until = Some(Instant::now() + rest);
            s.rested += 1;
        }
    }

    /// The A and AAAA records of `name`, from the best server; a failure
    /// rests that server and the query goes to the next.
    pub async fn resolve(&self, name: &str) -> Timed<IpAddr> {
        let mut tried = Vec::new();
        let mut last = DnsFailure::Other("no nameserver".into());
        for _ in 0..TRIES.min(self.servers.len().max(1)) {
            let Some(i) = self.pick(&tried) else { break };
            tried.push(i);
            let t = Instant::now();
            let r = self.servers[i].lookup.forward(name).await;
            let ok = r.answer.is_ok();
            self.done(i, ok, t.elapsed());
            match r.answer {
                Ok(_) => return r,
                Err(f) => last = f,
            }
        }
        Timed {
            answer: Err(last),
            ttl: Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A server: fixed answers, a delay, and a switch to make it fail.
    struct Fake {
        delay: Duration,
        lie: bool,
        dead: Arc<AtomicBool>,
    }

    impl Lookup for Fake {
        async fn exists(&self, _: &str) -> Result<bool, DnsFailure> {
            Ok(true)
        }
        async fn reverse(&self, _: IpAddr) -> Timed<String> {
            Timed {
                answer: Ok(Vec::new()),
                ttl: Duration::ZERO,
            }
        }
        async fn forward(&self, name: &str) -> Timed<IpAddr> {
            tokio::time::sleep(self.delay).await;
            if self.dead.load(Ordering::SeqCst) {
                return Timed {
                    answer: Err(DnsFailure::Timeout),
                    ttl: Duration::ZERO,
                };
            }
            let ip: IpAddr = if self.lie {
                [127, 0, 0, 1].into()
            } else {
                [192, 0, 2, name.len() as u8].into()
            };
            Timed {
                answer: Ok(vec![ip]),
                ttl: Duration::from_secs(60),
            }
        }
    }

    fn fake(port: u16, ms: u64, lie: bool, dead: bool) -> (SocketAddr, Fake, Arc<AtomicBool>) {
        let d = Arc::new(AtomicBool::new(dead));
        (
            SocketAddr::from(([127, 0, 0, 1], port)),
            Fake {
                delay: Duration::from_millis(ms),
                lie,
                dead: d.clone(),
            },
            d,
        )
    }

    #[tokio::test]
    async fn liars_and_dead_servers_are_left_out_the_rest_ranked() {
        let probes: Vec<String> = ["a.test", "bb.test", "ccc.test"].map(String::from).to_vec();
        let (a, fa, _) = fake(1, 30, false, false);
        let (b, fb, _) = fake(2, 5, false, false);
        let (c, fc, _) = fake(3, 1, true, false);
        let (d, fd, _) = fake(4, 1, false, true);
        let (e, fe, _) = fake(5, 15, false, false);
        let (pool, report) =
            Pool::check(vec![(a, fa), (b, fb), (c, fc), (d, fd), (e, fe)], &probes)
                .await
                .expect("pool");
        assert_eq!(pool.servers(), vec![b, e, a]);
        let problem = |x: SocketAddr| {
            report
                .iter()
                .find(|r| r.addr == x)
                .and_then(|r| r.problem.clone())
        };
        assert!(problem(c).expect("liar").contains("differently"));
        assert!(problem(d).expect("dead").contains("none"));
        assert!(problem(a).is_none());
    }

    #[tokio::test]
    async fn a_failing_server_is_rested_and_the_next_answers() {
        let probes = vec!["a.test".to_owned()];
        let (a, fa, a_dead) = fake(1, 1, false, false);
        let (b, fb, _) = fake(2, 10, false, false);
        let (pool, _) = Pool::check(vec![(a, fa), (b, fb)], &probes)
            .await
            .expect("pool");
        assert_eq!(pool.servers(), vec![a, b]);
        a_dead.store(true, Ordering::SeqCst);
        for _ in 0..5 {
            let r = pool.resolve("x.test").await;
            assert_eq!(r.answer, Ok(vec![IpAddr::from([192, 0, 2, 6])]));
        }
        let u = pool.usage();
        // The first query failed on a and went to b; a rests since.
        assert_eq!((u[0].failed, u[0].answered), (1, 0));
        assert_eq!(u[1].answered, 5);
        // All servers failing: the failure is reported.
        let (c, fc, _) = fake(3, 1, false, true);
        assert!(Pool::check(vec![(c, fc)], &probes).await.is_err());
    }
}
