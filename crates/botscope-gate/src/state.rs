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
//! Redis down, slow or lying never stops the site: every exchange has a
//! bounded wait (`--state-timeout`) and bounded answers ([`crate::resp`]),
//! each answer is checked against what was asked; one that fails, times
//! out or is malformed puts the gate on its own memory (rates counted
//! there, evidence and passes its own), said in `/healthz` and
//! `/metrics`, and the gate goes back to Redis when it answers as asked
//! again (tried after a wait that grows while Redis keeps failing soon
//! after each recovery).

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botscope_botid::{DnsAnswer, FcrdnsEvidence};
use botscope_policy::{Facts, Rate, RateStore};

use crate::resp::{Value, cmd};

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
/// The fleet's trap catches: a sorted set of `address|kind|nonce`, each
/// scored by Redis's clock (ms) when it was put, kept for the policy's
/// `hold`.
const CATCHES_KEY: &str = "botscope:trap-catches";
/// Puts one catch at Redis's time, drops what is past `hold`, and says
/// the time. KEYS[1] the set, ARGV[1] the member, ARGV[2] hold (ms).
const CATCH_SCRIPT: &str = r"
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], ms, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return ms
";
/// The fleet's canary issuance record: a hash of each mark's code to
/// `first last pages` (Unix seconds, seconds, pages), and a sorted set of
/// the codes by when they were last served, which bounds the hash.
const CANARY_KEY: &str = "botscope:canary-record";
const CANARY_ORDER_KEY: &str = "botscope:canary-order";
/// Adds marks served to the record and trims it to its bound, the least
/// recently served first. KEYS the hash and the set; ARGV[1] the bound,
/// then four per mark: its code, first, last, pages (served on this gate
/// since its last push). Returns the marks the record holds.
const CANARY_PUSH_SCRIPT: &str = r"
local max = tonumber(ARGV[1])
for i = 2, #ARGV - 3, 4 do
  local code = ARGV[i]
  local first = tonumber(ARGV[i + 1])
  local last = tonumber(ARGV[i + 2])
  local pages = tonumber(ARGV[i + 3])
  local old = redis.call('HGET', KEYS[1], code)
  if old then
    local f, l, p = string.match(old, '^(%d+) (%d+) (%d+)$')
    if f then
      first = math.min(first, tonumber(f))
      last = math.max(last, tonumber(l))
      pages = pages + tonumber(p)
    end
  end
  redis.call('HSET', KEYS[1], code, string.format('%d %d %d', first, last, pages))
  redis.call('ZADD', KEYS[2], last, code)
end
local over = redis.call('ZCARD', KEYS[2]) - max
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #gone, 2 do redis.call('HDEL', KEYS[1], gone[i]) end
end
return redis.call('ZCARD', KEYS[2])
";
/// One step of reading the record: HSCAN from ARGV[1] for about ARGV[2]
/// fields, flattened (the next cursor, then code and value pairs); an
/// error when the hash answers more at once (a small hash is answered
/// whole: Redis's `hash-max-listpack-entries` set over 500).
const CANARY_READ_SCRIPT: &str = r"
local r = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
if #r[2] > 1000 then
  return redis.error_reply('the canary record answers HSCAN with ' .. #r[2] .. ' elements at once')
end
local out = {r[1]}
for i = 1, #r[2] do out[#out + 1] = r[2][i] end
return out
";
/// Marks pushed in one exchange at most.
pub const CANARY_PER_PUSH: usize = 200;
/// Fields asked for in one step of reading the record (an answer holds
/// about as many, each well within the exchange's bounds).
const CANARY_PER_READ: usize = 64;

/// Catches read from the fleet in one exchange at most (each is two
/// elements of the answer, within its 1,024).
pub const CATCHES_PER_READ: usize = 500;

/// What happened with the shared state, for `/healthz` and `/metrics`.
#[derive(Debug, Default)]
pub struct StateStats {
    /// Exchanges that failed or timed out.
    pub errors: AtomicU64,
    /// Answers that were not what was asked (wrong type, wrong count,
    /// over the bounds): each also an error.
    pub malformed: AtomicU64,
    /// Times the gate went on its own memory.
    pub fallbacks: AtomicU64,
    /// Times it went back to Redis.
    pub recoveries: AtomicU64,
    /// Rate decisions made in Redis.
    pub shared_rates: AtomicU64,
    /// Identity evidence read from Redis instead of DNS.
    pub shared_evidence: AtomicU64,
}

/// The first wait before going back to Redis after a fallback; doubled
/// (up to [`MAX_BACKOFF`]) each time Redis fails again within
/// [`STEADY`] of a recovery, so that a Redis that answers pings but not
/// the gate's questions does not make the fallback alert flap.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between tries.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How long Redis must serve after a recovery for the wait to start over.
const STEADY: Duration = Duration::from_secs(60);

/// When to try Redis again.
#[derive(Debug)]
struct Recovery {
    /// Not before then.
    next: std::time::Instant,
    /// The wait after the next failure.
    backoff: Duration,
    /// The last time the gate went back to Redis.
    recovered: Option<std::time::Instant>,
}

/// The fleet's shared state in Redis.
pub struct Shared {
    url: String,
    client: crate::resp::Client,
    rate_sha: String,
    timeout: Duration,
    healthy: AtomicBool,
    recovery: Mutex<Recovery>,
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

/// The SHA-1 of a script, as `EVALSHA` names it.
fn sha1_hex(script: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, script.as_bytes());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the rate script's answer fits the keys asked: one number per
/// key counted (-1, or a wait of 0 or more), and fewer only when the last
/// is a wait at a key whose limit ends the decision.
fn rate_answer(planned: &[Planned], v: &Value) -> Result<Vec<Option<u64>>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "the rate script answered {}, not a list",
            v.describe()
        ));
    };
    if items.len() > planned.len() || (items.is_empty() && !planned.is_empty()) {
        return Err(format!(
            "the rate script answered {} numbers for {} keys",
            items.len(),
            planned.len()
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Int(n) = item else {
            return Err(format!(
                "the rate script answered {}, not a number",
                item.describe()
            ));
        };
        let wait = match *n {
            -1 => None,
            w if w >= 0 => u64::try_from(w).ok(),
            w => return Err(format!("the rate script answered a wait of {w}")),
        };
        let last = i + 1 == items.len();
        if last && items.len() < planned.len() && !(wait.is_some() && planned[i].decides) {
            return Err(format!(
                "the rate script stopped after {} of {} keys without a deciding limit",
                items.len(),
                planned.len()
            ));
        }
        out.push(wait);
    }
    Ok(out)
}

impl Shared {
    /// A client of `url`, connected when first needed (a gate starts with
    /// Redis down, on its own memory). Must be called in a Tokio runtime.
    pub fn new(url: &str, timeout: Duration) -> Result<Arc<Shared>, String> {
        let client = crate::resp::Client::new(url).map_err(|e| format!("{}: {e}", shown(url)))?;
        Ok(Arc::new(Shared {
            url: url.to_owned(),
            client,
            rate_sha: sha1_hex(RATE_SCRIPT),
            timeout,
            healthy: AtomicBool::new(true),
            recovery: Mutex::new(Recovery {
                next: std::time::Instant::now(),
                backoff: FIRST_BACKOFF,
                recovered: None,
            }),
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

    /// An exchange failed: on to memory, said once; the next try waits
    /// longer when Redis failed soon after the last recovery.
    fn fail(&self, why: String) {
        self.stats.errors.fetch_add(1, Ordering::Relaxed);
        if self.healthy.swap(false, Ordering::Relaxed) {
            self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
            let mut r = self.recovery.lock().unwrap_or_else(|p| p.into_inner());
            let soon = r.recovered.is_some_and(|t| t.elapsed() < STEADY);
            r.backoff = if soon {
                (r.backoff * 2).min(MAX_BACKOFF)
            } else {
                FIRST_BACKOFF
            };
            r.next = std::time::Instant::now() + r.backoff;
            tracing::warn!(
                "the shared state at {}: {why}; deciding on this gate's own memory (Redis asked again in {} s)",
                self.url(),
                r.backoff.as_secs()
            );
        }
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }

    /// An answer that was not what was asked: counted, the connections
    /// dropped, and on to memory.
    fn malformed(&self, why: String) {
        self.stats.malformed.fetch_add(1, Ordering::Relaxed);
        self.client.forget();
        self.fail(format!("a malformed answer: {why}"));
    }

    /// One exchange, within the bounded wait: its answers, or `None` (and
    /// the fallback) when it failed, timed out (the connection, in an
    /// unknown state, is not reused) or broke the protocol's bounds.
    async fn send(&self, commands: &[Vec<Vec<u8>>]) -> Option<Vec<Value>> {
        match tokio::time::timeout(self.timeout, self.client.exchange(commands)).await {
            Ok(Ok(v)) if v.len() == commands.len() => Some(v),
            Ok(Ok(v)) => {
                self.malformed(format!(
                    "{} answers to {} commands",
                    v.len(),
                    commands.len()
                ));
                None
            }
            Ok(Err(e)) if e.is_malformed() => {
                self.malformed(e.to_string());
                None
            }
            Ok(Err(e)) => {
                self.fail(e.to_string());
                None
            }
            Err(_) => {
                self.fail("no answer in time".to_owned());
                None
            }
        }
    }

    /// An error answer from Redis: fallen back from.
    fn refused(&self, e: &str) {
        self.fail(format!("Redis: {}", botscope_text::quoted(e)));
    }

    /// One exchange whose answers `check` reads; `None` (and the fallback)
    /// when it fails, Redis refuses, or an answer is not what was asked.
    async fn ask<T>(
        &self,
        commands: &[Vec<Vec<u8>>],
        check: impl FnOnce(Vec<Value>) -> Result<T, String>,
    ) -> Option<T> {
        let v = self.send(commands).await?;
        if let Some(Value::Error(e)) = v.iter().find(|x| matches!(x, Value::Error(_))) {
            self.refused(e);
            return None;
        }
        match check(v) {
            Ok(t) => Some(t),
            Err(why) => {
                self.malformed(why);
                None
            }
        }
    }

    /// The rate script on `keys` and `args`: by its digest, and whole
    /// when Redis does not have it yet.
    async fn rate_script(&self, keys: &[&[u8]], args: &[Vec<u8>]) -> Option<Value> {
        let call = |name: &[u8], body: &[u8]| {
            let mut c: Vec<Vec<u8>> = vec![name.to_vec(), body.to_vec()];
            c.push(keys.len().to_string().into_bytes());
            c.extend(keys.iter().map(|k| k.to_vec()));
            c.extend(args.iter().cloned());
            c
        };
        let by_sha = call(b"EVALSHA", self.rate_sha.as_bytes());
        match self.send(&[by_sha]).await?.pop() {
            Some(Value::Error(e)) if e.starts_with("NOSCRIPT") => {
                let whole = call(b"EVAL", RATE_SCRIPT.as_bytes());
                self.ask(&[whole], |mut v| Ok(v.pop().unwrap_or(Value::Nil)))
                    .await
            }
            Some(Value::Error(e)) => {
                self.refused(&e);
                None
            }
            v => v,
        }
    }

    /// Goes back to Redis when the gate is on its own memory, its wait is
    /// over and Redis answers what the gate asks of it (a ping and the
    /// rate script on no keys).
    pub async fn check(&self) {
        if self.healthy() {
            return;
        }
        {
            let r = self.recovery.lock().unwrap_or_else(|p| p.into_inner());
            if std::time::Instant::now() < r.next {
                return;
            }
        }
        let probe = async {
            let pong = self.send(&[cmd([b"PING"])]).await.as_deref()
                == Some(&[Value::Status("PONG".into())][..]);
            if !pong {
                return false;
            }
            // As the gate will ask: the script, on no keys.
            match self.rate_script(&[], &[]).await {
                Some(Value::Array(a)) if a.is_empty() => true,
                Some(other) => {
                    self.malformed(format!(
                        "the rate script on no keys answered {}",
                        other.describe()
                    ));
                    false
                }
                None => false,
            }
        };
        if probe.await {
            let mut r = self.recovery.lock().unwrap_or_else(|p| p.into_inner());
            self.healthy.store(true, Ordering::Relaxed);
            r.recovered = Some(std::time::Instant::now());
            self.stats.recoveries.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                "the shared state at {} answers again: back to it",
                self.url()
            );
        } else {
            // Still down: asked again after the same wait (it grows only
            // when Redis fails soon after a recovery, in `fail`).
            let mut r = self.recovery.lock().unwrap_or_else(|p| p.into_inner());
            r.next = std::time::Instant::now() + r.backoff;
        }
    }

    /// Counts `planned` in order, as the script does; `None` when Redis
    /// cannot be used now, or answered something the keys do not fit.
    pub async fn rates(&self, planned: &[Planned]) -> Option<Vec<Option<u64>>> {
        if !self.healthy() {
            return None;
        }
        let keys: Vec<&[u8]> = planned.iter().map(|p| p.key.as_bytes()).collect();
        let mut args = Vec::with_capacity(planned.len() * 3);
        for p in planned {
            args.push(p.interval.to_string().into_bytes());
            args.push(p.tolerance.to_string().into_bytes());
            args.push(if p.decides {
                b"1".to_vec()
            } else {
                b"0".to_vec()
            });
        }
        let v = self.rate_script(&keys, &args).await?;
        match rate_answer(planned, &v) {
            Ok(w) => {
                self.stats.shared_rates.fetch_add(1, Ordering::Relaxed);
                Some(w)
            }
            Err(why) => {
                self.malformed(why);
                None
            }
        }
    }

    /// Whether one more pass may be given to `network` this `hour`
    /// (counted when it may); `None` when Redis cannot be used now.
    pub async fn may_give(&self, network: IpAddr, hour: u64, most: u32) -> Option<bool> {
        if !self.healthy() {
            return None;
        }
        let key = format!("{PASSES_PREFIX}{network}:{hour}");
        let c = vec![
            b"EVAL".to_vec(),
            PASS_SCRIPT.as_bytes().to_vec(),
            b"1".to_vec(),
            key.into_bytes(),
            most.to_string().into_bytes(),
        ];
        self.ask(&[c], |v| match v.as_slice() {
            [Value::Int(0)] => Ok(false),
            [Value::Int(1)] => Ok(true),
            other => Err(format!(
                "the pass script answered {}",
                Value::describe_all(other)
            )),
        })
        .await
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
        let get = cmd([b"GET", KEY_KEY.as_bytes()]);
        let key = |v: &Value| match v {
            Value::Nil => Ok(None),
            Value::Bulk(k) if (32..=4096).contains(&k.len()) => Ok(Some(k.clone())),
            other => Err(format!("the challenge key is {}", other.describe())),
        };
        if claim {
            let set = cmd([b"SET", KEY_KEY.as_bytes(), mine, b"NX"]);
            self.ask(&[set, get], |v| match v.as_slice() {
                [Value::Status(_) | Value::Nil, got] => key(got),
                other => Err(format!(
                    "SET NX, GET answered {}",
                    Value::describe_all(other)
                )),
            })
            .await
        } else {
            self.ask(&[get], |v| match v.as_slice() {
                [got] => key(got),
                other => Err(format!("GET answered {}", Value::describe_all(other))),
            })
            .await
        }
    }

    /// The time (Unix seconds) passes issued before are revoked, as the
    /// fleet holds it (0: none); `None` when Redis cannot be used.
    pub async fn revoked_before(&self) -> Option<u64> {
        if !self.healthy() {
            return None;
        }
        self.ask(&[cmd([b"GET", EPOCH_KEY.as_bytes()])], |v| {
            match v.as_slice() {
                [Value::Nil] => Ok(0),
                [Value::Bulk(b)] => std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                    .ok_or_else(|| "the revocation time is not a number".to_owned()),
                other => Err(format!("GET answered {}", Value::describe_all(other))),
            }
        })
        .await
    }

    /// Revokes, for the fleet, the passes issued before `at`.
    pub async fn revoke_before(&self, at: u64) -> bool {
        let at = at.to_string();
        self.ask(
            &[cmd([b"SET", EPOCH_KEY.as_bytes(), at.as_bytes()])],
            |v| match v.as_slice() {
                [Value::Status(s)] if s == "OK" => Ok(()),
                other => Err(format!("SET answered {}", Value::describe_all(other))),
            },
        )
        .await
        .is_some()
    }

    /// Tells the fleet of a catch (`member`: `address|kind|nonce`), kept
    /// for `hold_ms`; its time by Redis's clock.
    pub async fn push_catch(&self, member: &str, hold_ms: u64) -> Option<u64> {
        if !self.healthy() {
            return None;
        }
        let c = vec![
            b"EVAL".to_vec(),
            CATCH_SCRIPT.as_bytes().to_vec(),
            b"1".to_vec(),
            CATCHES_KEY.as_bytes().to_vec(),
            member.as_bytes().to_vec(),
            hold_ms.max(1).to_string().into_bytes(),
        ];
        self.ask(&[c], |v| match v.as_slice() {
            [Value::Int(ms)] if *ms >= 0 => Ok(ms.unsigned_abs()),
            other => Err(format!(
                "the catch script answered {}",
                Value::describe_all(other)
            )),
        })
        .await
    }

    /// The fleet's catches put at or after `from_ms` (Redis's clock), in
    /// order, at most [`CATCHES_PER_READ`]: each member and its time.
    pub async fn catches_from(&self, from_ms: u64) -> Option<Vec<(String, u64)>> {
        if !self.healthy() {
            return None;
        }
        let from = from_ms.to_string();
        let n = CATCHES_PER_READ.to_string();
        let c = cmd([
            b"ZRANGEBYSCORE",
            CATCHES_KEY.as_bytes(),
            from.as_bytes(),
            b"+inf",
            b"WITHSCORES",
            b"LIMIT",
            b"0",
            n.as_bytes(),
        ]);
        self.ask(&[c], |v| match v.as_slice() {
            [Value::Array(items)] if items.len() % 2 == 0 => items
                .chunks(2)
                .map(|p| match p {
                    [Value::Bulk(m), Value::Bulk(score)] if m.len() <= 128 => {
                        let m = String::from_utf8(m.clone())
                            .map_err(|_| "a catch is not text".to_owned())?;
                        let score = std::str::from_utf8(score)
                            .ok()
                            .and_then(|s| s.parse::<f64>().ok())
                            .filter(|s| s.is_finite() && *s >= 0.0)
                            .ok_or_else(|| "a catch's time is not a number".to_owned())?;
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        Ok((m, score as u64))
                    }
                    other => Err(format!("a catch is {}", Value::describe_all(other))),
                })
                .collect(),
            other => Err(format!(
                "ZRANGEBYSCORE answered {}",
                Value::describe_all(other)
            )),
        })
        .await
    }

    /// Adds marks served (code, first, last, pages) to the fleet's
    /// issuance record, kept to `most` marks: how many it holds.
    pub async fn push_marks(&self, most: usize, marks: &[(String, u64, u64, u64)]) -> Option<u64> {
        if !self.healthy() {
            return None;
        }
        let mut c = vec![
            b"EVAL".to_vec(),
            CANARY_PUSH_SCRIPT.as_bytes().to_vec(),
            b"2".to_vec(),
            CANARY_KEY.as_bytes().to_vec(),
            CANARY_ORDER_KEY.as_bytes().to_vec(),
            most.max(1).to_string().into_bytes(),
        ];
        for (code, first, last, pages) in marks {
            c.push(code.as_bytes().to_vec());
            c.push(first.to_string().into_bytes());
            c.push(last.to_string().into_bytes());
            c.push(pages.to_string().into_bytes());
        }
        self.ask(&[c], |v| match v.as_slice() {
            [Value::Int(n)] if *n >= 0 => Ok(n.unsigned_abs()),
            other => Err(format!(
                "the canary script answered {}",
                Value::describe_all(other)
            )),
        })
        .await
    }

    /// One step of reading the fleet's issuance record from `cursor`: the
    /// next cursor (`0` at the end) and each code with its
    /// `first last pages`.
    pub async fn read_marks(&self, cursor: &str) -> Option<(String, Vec<(String, String)>)> {
        if !self.healthy() {
            return None;
        }
        let per = CANARY_PER_READ.to_string();
        let c = vec![
            b"EVAL".to_vec(),
            CANARY_READ_SCRIPT.as_bytes().to_vec(),
            b"1".to_vec(),
            CANARY_KEY.as_bytes().to_vec(),
            cursor.as_bytes().to_vec(),
            per.into_bytes(),
        ];
        let text = |b: &Value| match b {
            Value::Bulk(b) => String::from_utf8(b.clone()).ok(),
            _ => None,
        };
        self.ask(&[c], |v| match v.as_slice() {
            [Value::Array(items)] if items.len() % 2 == 1 => {
                let next = text(&items[0])
                    .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| "the record's cursor is not a number".to_owned())?;
                let pairs = items[1..]
                    .chunks(2)
                    .map(|p| match (text(&p[0]), text(&p[1])) {
                        (Some(code), Some(v)) => Ok((code, v)),
                        _ => Err(format!("a mark is {}", Value::describe_all(p))),
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                Ok((next, pairs))
            }
            other => Err(format!(
                "the canary record answered {}",
                Value::describe_all(other)
            )),
        })
        .await
    }

    /// Evidence another gate gathered for `ip` against `domains`, and how
    /// long it still holds.
    async fn evidence(&self, key: &str) -> Option<(FcrdnsEvidence, Duration)> {
        if !self.healthy() {
            return None;
        }
        let (body, ttl) = self
            .ask(
                &[
                    cmd([b"GET", key.as_bytes()]),
                    cmd([b"PTTL", key.as_bytes()]),
                ],
                |v| match v.as_slice() {
                    [Value::Nil, Value::Int(_)] => Ok((None, 0)),
                    [Value::Bulk(b), Value::Int(t)] => Ok((Some(b.clone()), *t)),
                    other => Err(format!("GET, PTTL answered {}", Value::describe_all(other))),
                },
            )
            .await?;
        let ev = evidence_from_json(&String::from_utf8_lossy(&body?))?;
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
        let ms = u64::try_from(life.as_millis())
            .unwrap_or(u64::MAX)
            .to_string();
        let _ = self
            .ask(
                &[cmd([
                    b"SET",
                    key.as_bytes(),
                    body.as_bytes(),
                    b"PX",
                    ms.as_bytes(),
                ])],
                |v| match v.as_slice() {
                    [Value::Status(_)] => Ok(()),
                    other => Err(format!("SET answered {}", Value::describe_all(other))),
                },
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
