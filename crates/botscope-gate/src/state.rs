//! What many gates of one site share (`--state redis://HOST:PORT[/DB]`):
//! in Redis or Valkey, one primary for the fleet.
//!
//! - **Rates.** Every `rate:` key, counted by the generic cell rate
//!   algorithm in one Lua script per request: the policy is walked once
//!   with every rate answered "under" to learn the keys it would count, in
//!   order; the script counts them in that order as the walk would (a
//!   limit ends the walk unless it is a `label` rule's) against Redis's
//!   clock, and the policy is walked again with its answers. One round
//!   trip, atomic, whichever gate the client reaches. Keys expire when
//!   their state runs out.
//! - **Identity evidence.** A forward-confirmed reverse-DNS answer one gate
//!   gathered is kept for its time to live, and read by the others before
//!   they ask DNS themselves.
//! - **Challenge passes.** The key passes are signed with (made once by
//!   the first gate, unless `--challenge-key` gives one to every gate),
//!   the passes given per network and hour, and the time before which
//!   passes are revoked (`POST /.botscope/revoke-passes`).
//!
//! Redis down or slow never stops the site: every exchange has a bounded
//! wait (`--state-timeout`); one that fails or times out puts the gate on
//! its own memory (rates counted there, evidence and passes its own),
//! said in `/healthz` and `/metrics`, and the gate goes back to Redis
//! when a ping answers again (tried every second).

use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botscope_botid::{DnsAnswer, FcrdnsEvidence};
use botscope_policy::{Facts, Rate, RateStore};

/// Where the shared state is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StateConfig {
    /// In this process only (`--state memory`, the default).
    #[default]
    Memory,
    /// In Redis or Valkey.
    Redis {
        /// `redis://[:PASSWORD@]HOST:PORT[/DB]`.
        url: String,
        /// The longest an exchange with it may take before the gate goes
        /// on without it.
        timeout: Duration,
    },
}

impl StateConfig {
    /// `memory`, or a `redis://` (`rediss://` for TLS) URL with a timeout.
    pub fn parse(s: &str, timeout: Duration) -> Result<StateConfig, String> {
        if s == "memory" {
            return Ok(StateConfig::Memory);
        }
        let u = url::Url::parse(s).map_err(|e| {
            format!(
                "`{}`: neither `memory` nor a redis:// URL ({e})",
                botscope_text::field(s)
            )
        })?;
        if !matches!(u.scheme(), "redis" | "rediss" | "valkey" | "valkeys")
            || u.host_str().is_none_or(str::is_empty)
        {
            return Err(format!(
                "`{}`: give `memory` or redis://HOST:PORT[/DB]",
                botscope_text::field(s)
            ));
        }
        Ok(StateConfig::Redis {
            url: s.to_owned(),
            timeout,
        })
    }
}

/// The URL as it may be shown: its password replaced.
fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "(a URL)".to_owned(),
    }
}

/// The rate script: KEYS the rate keys in the order the policy reaches
/// them; ARGV three per key: the interval and the tolerance (ms) of its
/// rate, and 1 when a limit there ends the decision. Returns one number
/// per key counted: -1 when under the rate (counted), else the wait in
/// ms; it stops after the first wait that ends the decision.
const RATE_SCRIPT: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[3 * i - 2])
  local tolerance = tonumber(ARGV[3 * i - 1])
  local tat = tonumber(redis.call('GET', key) or '0') or 0
  local start = math.max(tat, now)
  local ahead = start - now
  if ahead > tolerance then
    out[i] = ahead - tolerance
    if ARGV[3 * i] == '1' then return out end
  else
    local new = start + interval
    redis.call('SET', key, string.format('%d', new), 'PX', new - now + 1000)
    out[i] = -1
  end
end
return out
";

/// The pass script: KEYS[1] the network's count this hour; ARGV[1] the
/// most passes. 1 when one more may be given (and it is counted), else 0.
const PASS_SCRIPT: &str = r"
local n = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], 3700)
return 1
";

/// Key prefixes.
const RATE_PREFIX: &str = "botscope:rate:";
const FCRDNS_PREFIX: &str = "botscope:fcrdns:";
const PASSES_PREFIX: &str = "botscope:passes:";
const KEY_KEY: &str = "botscope:challenge-key";
const EPOCH_KEY: &str = "botscope:passes-revoked-before";

/// What happened with the shared state, for `/healthz` and `/metrics`.
#[derive(Debug, Default)]
pub struct StateStats {
    /// Exchanges that failed or timed out.
    pub errors: AtomicU64,
    /// Times the gate went on its own memory.
    pub fallbacks: AtomicU64,
    /// Times it went back to Redis.
    pub recoveries: AtomicU64,
    /// Rate decisions made in Redis.
    pub shared_rates: AtomicU64,
    /// Identity evidence read from Redis instead of DNS.
    pub shared_evidence: AtomicU64,
}

/// The fleet's shared state in Redis.
pub struct Shared {
    url: String,
    conn: redis::aio::ConnectionManager,
    rate_script: redis::Script,
    pass_script: redis::Script,
    timeout: Duration,
    healthy: AtomicBool,
    /// Why it last failed.
    last_error: Mutex<Option<String>>,
    /// Counters.
    pub stats: StateStats,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("url", &shown(&self.url))
            .finish_non_exhaustive()
    }
}

/// The error of an exchange: Redis's, or the wait's end.
fn failed<T>(r: Result<redis::RedisResult<T>, tokio::time::error::Elapsed>) -> Result<T, String> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer in time".to_owned()),
    }
}

impl Shared {
    /// A connection to `url`, made when first needed (a gate starts with
    /// Redis down, on its own memory). Must be called in a Tokio runtime.
    pub fn new(url: &str, timeout: Duration) -> Result<Arc<Shared>, String> {
        let client = redis::Client::open(url).map_err(|e| format!("{}: {e}", shown(url)))?;
        let cfg = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let conn = redis::aio::ConnectionManager::new_lazy_with_config(client, cfg)
            .map_err(|e| format!("{}: {e}", shown(url)))?;
        Ok(Arc::new(Shared {
            url: url.to_owned(),
            conn,
            rate_script: redis::Script::new(RATE_SCRIPT),
            pass_script: redis::Script::new(PASS_SCRIPT),
            timeout,
            healthy: AtomicBool::new(true),
            last_error: Mutex::new(None),
            stats: StateStats::default(),
        }))
    }

    /// The URL, its password hidden.
    pub fn url(&self) -> String {
        shown(&self.url)
    }

    /// Whether the gate uses Redis now (false: on its own memory).
    pub fn healthy(&self) -> bool {
        self.healthy.load(Ordering::Relaxed)
    }

    /// Why the last exchange failed, if one did.
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// An exchange failed: on to memory, said once.
    fn fail(&self, why: String) {
        self.stats.errors.fetch_add(1, Ordering::Relaxed);
        if self.healthy.swap(false, Ordering::Relaxed) {
            self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "the shared state at {}: {why}; deciding on this gate's own memory until it answers",
                self.url()
            );
        }
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }

    /// One exchange, within the bounded wait; `None` (and the fallback)
    /// when it fails.
    async fn exchange<T, F>(&self, f: F) -> Option<T>
    where
        F: Future<Output = redis::RedisResult<T>>,
    {
        match failed(tokio::time::timeout(self.timeout, f).await) {
            Ok(v) => Some(v),
            Err(why) => {
                self.fail(why);
                None
            }
        }
    }

    /// Pings Redis when the gate is on its own memory, and goes back to it
    /// when it answers.
    pub async fn check(&self) {
        if self.healthy() {
            return;
        }
        let mut c = self.conn.clone();
        let cmd = redis::cmd("PING");
        let ping = cmd.query_async::<String>(&mut c);
        if let Ok(Ok(_)) = tokio::time::timeout(self.timeout, ping).await {
            self.healthy.store(true, Ordering::Relaxed);
            self.stats.recoveries.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                "the shared state at {} answers again: back to it",
                self.url()
            );
        }
    }

    /// Counts `planned` in order, as the script does; `None` when Redis
    /// cannot be used now.
    pub async fn rates(&self, planned: &[Planned]) -> Option<Vec<Option<u64>>> {
        if !self.healthy() {
            return None;
        }
        let mut inv = self.rate_script.prepare_invoke();
        for p in planned {
            inv.key(&p.key)
                .arg(p.interval)
                .arg(p.tolerance)
                .arg(u8::from(p.decides));
        }
        let mut c = self.conn.clone();
        let out: Vec<i64> = self.exchange(inv.invoke_async(&mut c)).await?;
        self.stats.shared_rates.fetch_add(1, Ordering::Relaxed);
        Some(out.into_iter().map(|w| u64::try_from(w).ok()).collect())
    }

    /// Whether one more pass may be given to `network` this `hour`
    /// (counted when it may); `None` when Redis cannot be used now.
    pub async fn may_give(&self, network: IpAddr, hour: u64, most: u32) -> Option<bool> {
        if !self.healthy() {
            return None;
        }
        let mut c = self.conn.clone();
        let key = format!("{PASSES_PREFIX}{network}:{hour}");
        let n: i64 = self
            .exchange(self.pass_script.key(key).arg(most).invoke_async(&mut c))
            .await?;
        Some(n == 1)
    }

    /// The fleet's challenge key: the one in Redis; when there is none
    /// and `claim` is set, `mine` put there first (SET NX, then read back
    /// in the same round trip, so that of gates claiming at once every one
    /// adopts the one that won). `Some(None)`: none, and not claimed;
    /// `None` when Redis cannot be used now.
    pub async fn fleet_key(&self, mine: &[u8], claim: bool) -> Option<Option<Vec<u8>>> {
        if !self.healthy() {
            return None;
        }
        let mut c = self.conn.clone();
        let got: Option<Vec<u8>> = if claim {
            let mut p = redis::pipe();
            p.cmd("SET").arg(KEY_KEY).arg(mine).arg("NX").ignore();
            p.cmd("GET").arg(KEY_KEY);
            let (got,): (Option<Vec<u8>>,) = self.exchange(p.query_async(&mut c)).await?;
            got
        } else {
            self.exchange(redis::cmd("GET").arg(KEY_KEY).query_async(&mut c))
                .await?
        };
        Some(got.filter(|k| k.len() >= 32))
    }

    /// The time (Unix seconds) passes issued before are revoked, as the
    /// fleet holds it (0: none); `None` when Redis cannot be used.
    pub async fn revoked_before(&self) -> Option<u64> {
        if !self.healthy() {
            return None;
        }
        let mut c = self.conn.clone();
        let v: Option<u64> = self
            .exchange(redis::cmd("GET").arg(EPOCH_KEY).query_async(&mut c))
            .await?;
        Some(v.unwrap_or(0))
    }

    /// Revokes, for the fleet, the passes issued before `at`.
    pub async fn revoke_before(&self, at: u64) -> bool {
        let mut c = self.conn.clone();
        self.exchange(
            redis::cmd("SET")
                .arg(EPOCH_KEY)
                .arg(at)
                .query_async::<()>(&mut c),
        )
        .await
        .is_some()
    }

    /// Evidence another gate gathered for `ip` against `domains`, and how
    /// long it still holds.
    async fn evidence(&self, key: &str) -> Option<(FcrdnsEvidence, Duration)> {
        if !self.healthy() {
            return None;
        }
        let mut c = self.conn.clone();
        let (body, ttl): (Option<String>, i64) = self
            .exchange(
                redis::pipe()
                    .cmd("GET")
                    .arg(key)
                    .cmd("PTTL")
                    .arg(key)
                    .query_async(&mut c),
            )
            .await?;
        let ev = evidence_from_json(&body?)?;
        let ttl = Duration::from_millis(u64::try_from(ttl).ok()?);
        self.stats.shared_evidence.fetch_add(1, Ordering::Relaxed);
        Some((ev, ttl))
    }

    /// Keeps evidence for the fleet for `life`.
    async fn keep_evidence(&self, key: &str, ev: &FcrdnsEvidence, life: Duration) {
        let Some(body) = evidence_to_json(ev) else {
            return;
        };
        if !self.healthy() || life.is_zero() {
            return;
        }
        let mut c = self.conn.clone();
        let ms = u64::try_from(life.as_millis()).unwrap_or(u64::MAX);
        let _ = self
            .exchange(
                redis::cmd("SET")
                    .arg(key)
                    .arg(body)
                    .arg("PX")
                    .arg(ms)
                    .query_async::<()>(&mut c),
            )
            .await;
    }
}

/// Reverse DNS through the fleet: evidence another gate gathered is used
/// while it holds; what this gate gathers is kept for the others.
pub fn shared_lookup(
    inner: crate::identity::Lookup,
    shared: Arc<Shared>,
) -> crate::identity::Lookup {
    Arc::new(move |ip, domains| {
        let (inner, shared) = (inner.clone(), shared.clone());
        Box::pin(async move {
            let key = evidence_key(ip, &domains);
            if let Some((ev, ttl)) = shared.evidence(&key).await {
                return (ev, Some(ttl));
            }
            let (ev, life) = inner(ip, domains).await;
            if let Some(l) = life {
                shared.keep_evidence(&key, &ev, l).await;
            }
            (ev, life)
        })
    })
}

fn evidence_key(ip: IpAddr, domains: &[String]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(botscope_botid::normalize(ip).to_string().as_bytes());
    for d in domains {
        h.update(b"\0");
        h.update(d.to_ascii_lowercase().as_bytes());
    }
    let hex = h.finalize().to_hex();
    format!("{FCRDNS_PREFIX}{}", &hex[..32])
}

/// Evidence as JSON, when every answer in it is one (a failure is not
/// kept for others: they ask themselves).
fn evidence_to_json(ev: &FcrdnsEvidence) -> Option<String> {
    fn ok<T: Clone>(a: &DnsAnswer<T>) -> Option<Vec<T>> {
        a.as_ref().ok().cloned()
    }
    let ptr = match &ev.ptr {
        Some(a) => Some(ok(a)?),
        None => None,
    };
    let mut forward = Vec::new();
    for (name, a) in &ev.forward {
        let addrs: Vec<String> = ok(a)?.iter().map(ToString::to_string).collect();
        forward.push(serde_json::json!([name, addrs]));
    }
    let mut zones = Vec::new();
    for (zone, known) in &ev.zones {
        zones.push(serde_json::json!([zone, known.as_ref().ok()?]));
    }
    Some(serde_json::json!({"ptr": ptr, "forward": forward, "zones": zones}).to_string())
}

fn evidence_from_json(s: &str) -> Option<FcrdnsEvidence> {
    let v: serde_json::Value = serde_json::from_str(s).ok()?;
    let strings = |v: &serde_json::Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect()
    };
    let ptr = match &v["ptr"] {
        serde_json::Value::Null => None,
        p => Some(Ok(strings(p)?)),
    };
    let mut forward = Vec::new();
    for f in v["forward"].as_array()? {
        let name = f[0].as_str()?.to_owned();
        let addrs = strings(&f[1])?
            .iter()
            .map(|a| a.parse::<IpAddr>().ok())
            .collect::<Option<Vec<_>>>()?;
        forward.push((name, Ok(addrs)));
    }
    let mut zones = Vec::new();
    for z in v["zones"].as_array()? {
        zones.push((z[0].as_str()?.to_owned(), Ok(z[1].as_bool()?)));
    }
    Some(FcrdnsEvidence {
        ptr,
        forward,
        zones,
        cached: vec![("(the fleet's shared state)".to_owned(), None)],
    })
}

/// A rate key the policy would count, in the order it reaches it.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The Redis key.
    pub key: String,
    /// The rate's interval and tolerance (ms).
    pub interval: u64,
    /// How far ahead a key may run.
    pub tolerance: u64,
    /// Whether a limit there ends the decision.
    pub decides: bool,
}

/// The first walk: every rate answered "under", its key noted.
#[derive(Debug, Default)]
pub struct Plan(std::cell::RefCell<Vec<Planned>>);

impl Plan {
    /// The keys noted, in order.
    pub fn into_keys(self) -> Vec<Planned> {
        self.0.into_inner()
    }
}

impl RateStore for Plan {
    fn hit(&self, rule: u32, rate: &Rate, f: &Facts, decides: bool) -> Option<u64> {
        let key = blake3::hash(botscope_policy::shared_key(rule, rate, f).as_bytes()).to_hex();
        self.0.borrow_mut().push(Planned {
            key: format!("{RATE_PREFIX}{}", &key[..32]),
            interval: rate.interval(),
            tolerance: rate.tolerance(),
            decides,
        });
        None
    }
}

/// The second walk: the script's answers, in order.
#[derive(Debug)]
pub struct Answered {
    waits: Vec<Option<u64>>,
    next: std::cell::Cell<usize>,
}

impl Answered {
    /// From the script's answers.
    pub fn new(waits: Vec<Option<u64>>) -> Answered {
        Answered {
            waits,
            next: std::cell::Cell::new(0),
        }
    }
}

impl RateStore for Answered {
    fn hit(&self, _rule: u32, _rate: &Rate, _f: &Facts, _decides: bool) -> Option<u64> {
        let i = self.next.get();
        self.next.set(i + 1);
        self.waits.get(i).copied().flatten()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn evidence_travels_as_json_and_failures_stay_home() {
        let ev = FcrdnsEvidence {
            ptr: Some(Ok(vec!["crawl-66-249-66-1.googlebot.com".into()])),
            forward: vec![(
                "crawl-66-249-66-1.googlebot.com".into(),
                Ok(vec!["66.249.66.1".parse().unwrap()]),
            )],
            zones: vec![("googlebot.com".into(), Ok(true))],
            cached: vec![],
        };
        let back = evidence_from_json(&evidence_to_json(&ev).unwrap()).unwrap();
        assert_eq!(
            (back.ptr, back.forward, back.zones),
            (ev.ptr, ev.forward, ev.zones)
        );
        let failed = FcrdnsEvidence {
            ptr: Some(Err(botscope_botid::DnsFailure::Timeout)),
            ..FcrdnsEvidence::default()
        };
        assert_eq!(evidence_to_json(&failed), None);
        assert_eq!(evidence_from_json("{\"ptr\": 5}"), None);
    }

    #[test]
    fn state_is_memory_or_a_redis_url() {
        let t = Duration::from_millis(50);
        assert_eq!(StateConfig::parse("memory", t), Ok(StateConfig::Memory));
        assert!(matches!(
            StateConfig::parse("redis://127.0.0.1:6379/2", t),
            Ok(StateConfig::Redis { .. })
        ));
        for bad in ["mem", "http://x/", "redis://", "127.0.0.1:6379"] {
            assert!(StateConfig::parse(bad, t).is_err(), "{bad}");
        }
        assert_eq!(
            shown("redis://:secret@10.0.0.1:6379/0"),
            "redis://:***@10.0.0.1:6379/0"
        );
    }
}
