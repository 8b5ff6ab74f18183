//! The challenge: what a client the policy finds suspicious (it says it
//! is a browser and acts like a scraper) is asked to do before it is let
//! through. A page of the gate's, in plain words, with two ways on:
//!
//! - a link that needs no JavaScript: after [`ChallengeConfig::delay`] it
//!   leads to the pass address, whose signed token is not valid before
//!   then. The page does not move on by a timed refresh
//!   (`<meta http-equiv=refresh>`): a page that changes under a person on
//!   a timer fails WCAG 2.2.1 and 3.2.5, and a screen reader loses its
//!   place; the person follows the link when ready;
//! - a proof of work in JavaScript (SHA-256 with leading zero bits), which
//!   passes at once (a secure context is needed: https, or localhost).
//!
//! Either way the pass address sets a cookie, signed with HMAC-SHA256
//! under the gate's key and bound to the client's network (/24, /48) and
//! User-Agent, that expires; while it holds, the gate allows that client
//! where the policy would challenge it. Nothing is kept per client: a
//! token and a cookie carry their own expiry and are checked by their
//! signature. A forged, expired or moved cookie is ignored (the client is
//! challenged again), never trusted.

use base64::Engine as _;
use std::net::IpAddr;
use std::time::Duration;

use ring::hmac;

/// Where the gate answers the challenge's pages (the front server routes
/// this prefix to the gate).
pub const PREFIX: &str = "/.botscope/";
/// The cookie's name.
pub const COOKIE: &str = "botscope_pass";
/// The longest `back` address kept.
const MAX_BACK: usize = 2_048;
/// The longest token read (the gate's are about 80 bytes).
const MAX_TOKEN: usize = 256;
/// Passes given to one network (/24, /48) in an hour at most: a farm of
/// passes fetched without JavaScript runs dry, an office of people does
/// not.
pub const PASSES_PER_NETWORK_HOUR: u32 = 30;
/// Networks whose passes are counted at most (the count restarts when
/// full).
const COUNTED_NETWORKS: usize = 65_536;

/// How challenges are made.
#[derive(Clone)]
pub struct ChallengeConfig {
    /// The HMAC key (at least 32 bytes; from `--challenge-key FILE`, else
    /// made at start, so passes do not survive a restart).
    pub key: Vec<u8>,
    /// How long the no-JavaScript path waits.
    pub delay: Duration,
    /// Leading zero bits the proof of work needs.
    pub difficulty: u8,
    /// How long a pass holds.
    pub pass_life: Duration,
    /// How long a page's token may be used.
    pub token_life: Duration,
    /// Where revocations are kept across restarts (`FILE.revoked` beside
    /// `--challenge-key FILE`): one Unix time, passes issued at or before
    /// it revoked. None: in memory (and the fleet's Redis) only.
    pub revocations: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for ChallengeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChallengeConfig")
            .field("delay", &self.delay)
            .field("difficulty", &self.difficulty)
            .field("pass_life", &self.pass_life)
            .finish_non_exhaustive()
    }
}

impl ChallengeConfig {
    /// With `key`: 5 s of delay, 14 bits of work, a pass for a day, a page
    /// for 10 minutes.
    pub fn new(key: Vec<u8>) -> ChallengeConfig {
        ChallengeConfig {
            key,
            delay: Duration::from_secs(5),
            difficulty: 14,
            pass_life: Duration::from_secs(86_400),
            token_life: Duration::from_secs(600),
            revocations: None,
        }
    }
}

/// The revocation time kept in `path` (0 when there is none, or it is not
/// a time: said in the log).
fn read_revocation(path: &std::path::Path) -> u64 {
    match botscope_os::read_file_capped(path, 64) {
        Ok(b) => match String::from_utf8_lossy(&b).trim().parse::<u64>() {
            Ok(t) => t,
            Err(_) => {
                tracing::warn!(
                    "{}: not a revocation time; no pass is revoked by it",
                    botscope_text::field(&path.display().to_string())
                );
                0
            }
        },
        Err(_) => 0,
    }
}

/// Makes and checks tokens and passes.
pub struct Challenges {
    /// The HMAC key (replaced by the fleet's, with `--state redis`).
    key: arc_swap::ArcSwap<hmac::Key>,
    /// Its bytes, to share with the fleet.
    key_bytes: arc_swap::ArcSwap<Vec<u8>>,
    /// Passes issued at or before this time (Unix seconds) are revoked
    /// (0: none).
    revoked_before: std::sync::atomic::AtomicU64,
    cfg: ChallengeConfig,
    /// Passes given this hour, by network: (the hour, counts).
    given: std::sync::Mutex<(u64, std::collections::HashMap<IpAddr, u32>)>,
}

impl std::fmt::Debug for Challenges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Challenges")
            .field("cfg", &self.cfg)
            .finish()
    }
}

/// Why a token or a pass is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not in the form the gate writes, or not signed by its key.
    Forged,
    /// Made for another network or User-Agent.
    Elsewhere,
    /// Past its expiry.
    Expired,
    /// The no-JavaScript path before its delay.
    TooEarly,
    /// A proof of work that does not hold.
    NoWork,
    /// The client's network was given its passes for the hour.
    Quota,
}

impl Refused {
    /// In words, for the page.
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Forged => "the check could not be read",
            Refused::Elsewhere => "the check was made for another connection or browser",
            Refused::Expired => "the check expired",
            Refused::TooEarly => "the wait is not over yet",
            Refused::NoWork => "the browser's answer did not hold",
            Refused::Quota => {
                "this network was given as many passes as it may have this hour; try again later"
            }
        }
    }

    /// Its name in metrics and logs.
    pub fn code(self) -> &'static str {
        match self {
            Refused::Forged => "forged",
            Refused::Elsewhere => "elsewhere",
            Refused::Expired => "expired",
            Refused::TooEarly => "too-early",
            Refused::NoWork => "no-work",
            Refused::Quota => "quota",
        }
    }

    /// Every reason, for the metrics' and the replay's order.
    pub const ALL: [Refused; 6] = [
        Refused::Forged,
        Refused::Elsewhere,
        Refused::Expired,
        Refused::TooEarly,
        Refused::NoWork,
        Refused::Quota,
    ];
}

/// Bytes as URL-safe base64 without padding (the form of every token,
/// seed and tag: no `.`, which separates their parts).
fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What a token or pass is bound to: the client's network and a digest
/// of its User-Agent.
fn binding(ip: IpAddr, user_agent: &str) -> String {
    let (net, _) = botscope_policy::network_of(ip);
    let ua = ring::digest::digest(&ring::digest::SHA256, user_agent.as_bytes());
    format!("{net}|{}", b64(&ua.as_ref()[..12]))
}

/// Leading zero bits of `digest`.
fn zero_bits(digest: &[u8]) -> u32 {
    let mut n = 0;
    for b in digest {
        if *b == 0 {
            n += 8;
        } else {
            n += b.leading_zeros();
            break;
        }
    }
    n
}

impl Challenges {
    /// From `cfg` (a key under 32 bytes is refused by the caller).
    pub fn new(cfg: ChallengeConfig) -> Challenges {
        let kept = cfg.revocations.as_deref().map_or(0, read_revocation);
        Challenges {
            key: arc_swap::ArcSwap::from_pointee(hmac::Key::new(hmac::HMAC_SHA256, &cfg.key)),
            key_bytes: arc_swap::ArcSwap::from_pointee(cfg.key.clone()),
            revoked_before: std::sync::atomic::AtomicU64::new(kept),
            cfg,
            given: std::sync::Mutex::new((0, std::collections::HashMap::new())),
        }
    }

    /// The key's bytes.
    pub fn key(&self) -> std::sync::Arc<Vec<u8>> {
        self.key_bytes.load_full()
    }

    /// Writes the revocation time to its file (`revocations`), replacing
    /// it whole (an exclusive temporary file renamed over it: a link there
    /// is replaced, never followed); a failure is logged and the
    /// revocation holds in memory.
    pub fn keep_revocation(&self) {
        let Some(path) = &self.cfg.revocations else {
            return;
        };
        let at = format!("{}\n", self.revoked_before());
        if let Err(e) = botscope_os::write_atomic(path, at.as_bytes()) {
            tracing::warn!(
                "revoked passes: cannot keep the time in {}: {e} (it holds until the gate stops)",
                botscope_text::field(&path.display().to_string())
            );
        }
    }

    /// Counts a pass given to `ip`'s network at `now` (Unix seconds):
    /// false, and nothing counted, past [`PASSES_PER_NETWORK_HOUR`].
    pub fn may_give(&self, ip: IpAddr, now: u64) -> bool {
        let (net, _) = botscope_policy::network_of(ip);
        let hour = now / 3600;
        let mut g = self.given.lock().unwrap_or_else(|p| p.into_inner());
        if g.0 != hour || g.1.len() >= COUNTED_NETWORKS {
            *g = (hour, std::collections::HashMap::new());
        }
        let n = g.1.entry(net).or_insert(0);
        if *n >= PASSES_PER_NETWORK_HOUR {
            return false;
        }
        *n += 1;
        true
    }

    /// Seconds left before the no-JavaScript path of `token` opens (0 when
    /// open, or when the token does not read).
    pub fn wait_left(&self, token: &str, now: u64) -> u64 {
        token
            .split('.')
            .next()
            .and_then(|t| t.parse::<u64>().ok())
            .map_or(0, |issued| {
                issued
                    .saturating_add(self.cfg.delay.as_secs())
                    .saturating_sub(now)
            })
    }

    /// Signs from now on with `key` (the fleet's, shared through Redis):
    /// passes and tokens made with the old one no longer hold.
    pub fn set_key(&self, key: &[u8]) {
        self.key
            .store(std::sync::Arc::new(hmac::Key::new(hmac::HMAC_SHA256, key)));
        self.key_bytes.store(std::sync::Arc::new(key.to_vec()));
    }

    /// Revokes the passes issued at or before `at` (Unix seconds); a later
    /// time only moves it on.
    pub fn revoke_before(&self, at: u64) {
        self.revoked_before
            .fetch_max(at, std::sync::atomic::Ordering::Relaxed);
    }

    /// The time passes issued at or before are revoked (0: none).
    pub fn revoked_before(&self) -> u64 {
        self.revoked_before
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How challenges are made.
    pub fn config(&self) -> &ChallengeConfig {
        &self.cfg
    }

    fn mac(&self, what: &str) -> String {
        b64(hmac::sign(&self.key.load(), what.as_bytes()).as_ref())
    }

    /// Whether `tag` is the HMAC of `what` (compared in constant time).
    fn verify(&self, what: &str, tag: &str) -> bool {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(tag)
            .is_ok_and(|t| hmac::verify(&self.key.load(), what.as_bytes(), &t).is_ok())
    }

    /// A page's token for `ip` sending `user_agent` at `now` (Unix
    /// seconds), issued by the rule whose id is `rule` (`None`: a page
    /// no rule issued): `issued.seed.rule.mac`, the rule's id in
    /// hexadecimal (empty for none). The MAC covers the time, the seed
    /// and the rule, not the binding, so a token made for another client
    /// is told apart from a forged one; the seed is the binding's own MAC
    /// (72 bits), checked next.
    pub fn token(&self, ip: IpAddr, user_agent: &str, now: u64, rule: Option<u32>) -> String {
        let r = rule.map(|r| format!("{r:08x}")).unwrap_or_default();
        let seed = self.seed_for(now, &r, &binding(ip, user_agent));
        let mac = self.mac(&format!("t|{now}|{seed}|{r}"));
        format!("{now}.{seed}.{r}.{mac}")
    }

    fn seed_for(&self, issued: u64, rule: &str, binding: &str) -> String {
        b64(&hmac::sign(
            &self.key.load(),
            format!("seed|{issued}|{rule}|{binding}").as_bytes(),
        )
        .as_ref()[..9])
    }

    /// The seed of a token (what the proof of work hashes), if it reads.
    pub fn seed(token: &str) -> Option<&str> {
        token.split('.').nth(1)
    }

    /// A token's signed parts, whoever it was made for: when it was
    /// issued, its seed and its rule's id (`Some(None)`: no rule). `None`:
    /// not in the gate's form, or not signed by its key.
    fn read_token<'t>(&self, token: &'t str) -> Option<(u64, &'t str, &'t str, Option<u32>)> {
        if token.len() > MAX_TOKEN {
            return None;
        }
        let mut parts = token.split('.');
        let (Some(issued), Some(seed), Some(rule), Some(mac), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let n: u64 = issued.parse().ok()?;
        let id = match rule {
            "" => None,
            r if r.len() == 8 => Some(u32::from_str_radix(r, 16).ok()?),
            _ => return None,
        };
        self.verify(&format!("t|{n}|{seed}|{rule}"), mac)
            .then_some((n, seed, rule, id))
    }

    /// The rule a token says issued it, when the token is the gate's
    /// (signed by its key; made for any client).
    pub fn token_rule(&self, token: &str) -> Option<Option<u32>> {
        self.read_token(token).map(|(_, _, _, r)| r)
    }

    /// Checks a token from `ip` and `user_agent` at `now`: with `work`
    /// (the proof of work's counter) at once, without it after the delay.
    /// Besides the outcome, the rule the token names when it is the
    /// gate's (`None` for a forged one, whose rule cannot be trusted).
    pub fn check_token(
        &self,
        token: &str,
        work: Option<u64>,
        ip: IpAddr,
        user_agent: &str,
        now: u64,
    ) -> (Option<Option<u32>>, Result<(), Refused>) {
        let Some((issued, seed, r, rule)) = self.read_token(token) else {
            return (None, Err(Refused::Forged));
        };
        let expected = self.seed_for(issued, r, &binding(ip, user_agent));
        // Compared in constant time.
        let differ = expected.len() != seed.len()
            || expected
                .bytes()
                .zip(seed.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                != 0;
        let outcome = if differ {
            Err(Refused::Elsewhere)
        } else if now > issued.saturating_add(self.cfg.token_life.as_secs()) {
            Err(Refused::Expired)
        } else {
            match work {
                Some(counter) => {
                    let d = ring::digest::digest(
                        &ring::digest::SHA256,
                        format!("{seed}:{counter}").as_bytes(),
                    );
                    if zero_bits(d.as_ref()) >= u32::from(self.cfg.difficulty) {
                        Ok(())
                    } else {
                        Err(Refused::NoWork)
                    }
                }
                None if now < issued.saturating_add(self.cfg.delay.as_secs()) => {
                    Err(Refused::TooEarly)
                }
                None => Ok(()),
            }
        };
        (Some(rule), outcome)
    }

    /// A pass (the cookie's value) for `ip` and `user_agent` from `now`,
    /// earned on a challenge the rule `rule` issued: `expiry.rule.mac`.
    pub fn pass(&self, ip: IpAddr, user_agent: &str, now: u64, rule: Option<u32>) -> String {
        let exp = now.saturating_add(self.cfg.pass_life.as_secs());
        let r = rule.map(|r| format!("{r:08x}")).unwrap_or_default();
        let mac = self.mac(&format!("p|{}|{exp}|{r}", binding(ip, user_agent)));
        format!("{exp}.{r}.{mac}")
    }

    /// The pass the request's `Cookie` header holds for `ip` and
    /// `user_agent`, unexpired at `now`: `Some` with the rule whose
    /// challenge earned it (`None` inside: no rule, or a pass of the form
    /// before rules were carried, `expiry.mac`, still honoured).
    pub fn passes(
        &self,
        cookie_header: &str,
        ip: IpAddr,
        user_agent: &str,
        now: u64,
    ) -> Option<Option<u32>> {
        cookie_header
            .split(';')
            .filter_map(|c| c.trim().split_once('='))
            .filter(|(k, _)| *k == COOKIE)
            .take(4)
            .find_map(|(_, v)| {
                let mut parts = v.split('.');
                let exp = parts.next()?;
                let (r, mac) = match (parts.next(), parts.next(), parts.next()) {
                    (Some(mac), None, None) => (None, mac),
                    (Some(r), Some(mac), None) => (Some(r), mac),
                    _ => return None,
                };
                let exp_n = exp.parse::<u64>().ok()?;
                let rule = match r {
                    None | Some("") => None,
                    Some(r) if r.len() == 8 => Some(u32::from_str_radix(r, 16).ok()?),
                    Some(_) => return None,
                };
                // Issued after the last revocation.
                let issued = exp_n.saturating_sub(self.cfg.pass_life.as_secs());
                let revoked = self.revoked_before();
                let b = binding(ip, user_agent);
                let what = match r {
                    None => format!("p|{b}|{exp_n}"),
                    Some(r) => format!("p|{b}|{exp_n}|{r}"),
                };
                (exp_n >= now && (revoked == 0 || issued > revoked) && self.verify(&what, mac))
                    .then_some(rule)
            })
    }
}

/// Where to go back to: the original request's path and query when it is
/// one (starts with a single `/`, printable, bounded), else `/`.
pub fn back(uri: &str) -> String {
    let ok = uri.starts_with('/')
        && !uri.starts_with("//")
        && !uri.starts_with("/\\")
        && uri.len() <= MAX_BACK
        && uri.bytes().all(|b| b.is_ascii_graphic());
    if ok { uri.to_owned() } else { "/".to_owned() }
}

/// A URL query component, escaped.
fn query_escape(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The challenge page for a token: why it is here, the wait, the link on,
/// and the proof of work for browsers that run JavaScript.
pub fn page(c: &Challenges, token: &str, back_to: &str, note: Option<&str>) -> String {
    let delay = c.cfg.delay.as_secs();
    let pass = format!(
        "{PREFIX}pass?t={}&back={}",
        query_escape(token),
        query_escape(back_to)
    );
    let seed = Challenges::seed(token).unwrap_or("");
    let difficulty = c.cfg.difficulty;
    maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Checking your browser" }
                style { (maud::PreEscaped(PAGE_CSS)) }
            }
            body {
                main {
                    h1 { "Checking your browser" }
                    p {
                        "This site receives many automated requests that look like a browser's, "
                        "so it asks some visitors to wait a moment before going on. "
                        "With JavaScript on, this page continues by itself in a moment; "
                        "without it, follow the link below when "
                        (delay) " seconds have passed."
                    }
                    @if let Some(n) = note {
                        p { "The last try did not go through: " (n) ". Please wait and continue." }
                    }
                    p role="status" aria-live="polite" id="status" { "Please wait " (delay) " seconds." }
                    p { a id="go" href=(pass) { "Continue to the page" } " (after " (delay) " seconds)." }
                    p class="small" {
                        "Crawlers that say who they are and follow robots.txt are not asked to wait. "
                        "If you keep seeing this page, the site's owner can help."
                    }
                }
                script { (maud::PreEscaped(format!(
                    "(function(){{var seed='{seed}',bits={difficulty},pass='{pass}';\
                     var s=document.getElementById('status');\
                     if(!(window.crypto&&crypto.subtle&&window.TextEncoder)){{return;}}\
                     s.textContent='Checking your browser…';\
                     var enc=new TextEncoder(),n=0;\
                     function zeros(b){{var z=0;for(var i=0;i<b.length;i++){{if(b[i]===0){{z+=8;continue;}}\
                     var x=b[i];while(!(x&128)){{z++;x<<=1;}}break;}}return z;}}\
                     function step(){{var tries=[];for(var k=0;k<256;k++){{tries.push(n+k);}}\
                     Promise.all(tries.map(function(c){{return crypto.subtle.digest('SHA-256',enc.encode(seed+':'+c)).then(function(d){{return [c,new Uint8Array(d)];}});}}))\
                     .then(function(rs){{for(var i=0;i<rs.length;i++){{if(zeros(rs[i][1])>=bits){{\
                     s.textContent='Done, continuing…';window.location.replace(pass+'&n='+rs[i][0]);return;}}}}\
                     n+=256;step();}});}}\
                     step();}})();"
                ))) }
            }
        }
    }
    .into_string()
}

const PAGE_CSS: &str = "body{font:18px/1.6 system-ui,sans-serif;color:#1a1a1a;background:#fff;margin:0}\
main{max-width:36rem;margin:3rem auto;padding:0 1rem}\
h1{font-size:1.6rem;margin:0 0 1rem}\
a{color:#0b4f9c;text-decoration:underline}\
a:focus{outline:3px solid #1a1a1a;outline-offset:2px}\
.small{font-size:1rem;color:#3d3d3d}";

#[cfg(test)]
mod tests {
    use super::*;

    /// A farm of passes runs dry: one network is given at most its
    /// passes an hour; another network, and the next hour, are not.
    #[test]
    fn passes_per_network_and_hour_are_bounded() {
        let c = Challenges::new(ChallengeConfig::new(vec![7; 32]));
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        let now = 1_790_000_000;
        for i in 0..PASSES_PER_NETWORK_HOUR {
            assert!(c.may_give(ip(&format!("192.0.2.{}", i % 250)), now), "{i}");
        }
        assert!(!c.may_give(ip("192.0.2.77"), now + 10));
        assert!(c.may_give(ip("192.0.3.1"), now + 10));
        assert!(c.may_give(ip("192.0.2.77"), now + 3_600));
        assert_eq!(
            c.wait_left(&c.token(ip("192.0.2.1"), "ua", now, None), now + 2),
            3
        );
        assert_eq!(c.wait_left("junk", now), 0);
    }

    fn c() -> Challenges {
        Challenges::new(ChallengeConfig {
            difficulty: 8,
            ..ChallengeConfig::new(vec![7; 32])
        })
    }

    #[test]
    fn tokens_hold_after_the_delay_or_with_work_and_only_where_they_were_made() {
        let c = c();
        let ip: IpAddr = "192.0.2.10".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let ua = "Mozilla/5.0";
        let rule = Some(0x00c0_ffee);
        let t = c.token(ip, ua, 1_000, rule);
        let check = |t: &str, work, ip, ua, now| c.check_token(t, work, ip, ua, now);
        assert_eq!(
            check(&t, None, ip, ua, 1_002),
            (Some(rule), Err(Refused::TooEarly))
        );
        assert_eq!(check(&t, None, ip, ua, 1_005), (Some(rule), Ok(())));
        assert_eq!(c.token_rule(&t), Some(rule));
        // The same network is the same client; another is not (and the
        // rule is still told: the token is the gate's).
        let near: IpAddr = "192.0.2.99".parse().unwrap_or(ip);
        assert_eq!(check(&t, None, near, ua, 1_005), (Some(rule), Ok(())));
        let far: IpAddr = "198.51.100.1".parse().unwrap_or(ip);
        assert_eq!(
            check(&t, None, far, ua, 1_005),
            (Some(rule), Err(Refused::Elsewhere))
        );
        assert_eq!(
            check(&t, None, ip, "curl/8", 1_005),
            (Some(rule), Err(Refused::Elsewhere))
        );
        assert_eq!(
            check(&t, None, ip, ua, 1_700),
            (Some(rule), Err(Refused::Expired))
        );
        // A page no rule issued.
        let none = c.token(ip, ua, 1_000, None);
        assert_eq!(check(&none, None, ip, ua, 1_005), (Some(None), Ok(())));
        // The proof of work: found by trying, as the page's script does.
        let seed = Challenges::seed(&t).unwrap_or("");
        let n = (0u64..)
            .find(|n| {
                let d =
                    ring::digest::digest(&ring::digest::SHA256, format!("{seed}:{n}").as_bytes());
                zero_bits(d.as_ref()) >= 8
            })
            .unwrap_or(0);
        assert_eq!(check(&t, Some(n), ip, ua, 1_001), (Some(rule), Ok(())));
        let wrong = (0u64..).find(|m| {
            let d = ring::digest::digest(&ring::digest::SHA256, format!("{seed}:{m}").as_bytes());
            zero_bits(d.as_ref()) < 8
        });
        assert_eq!(
            check(&t, wrong, ip, ua, 1_001),
            (Some(rule), Err(Refused::NoWork))
        );
        // Tampered tokens are forged, and their rule is not believed:
        // the time moved, the rule changed, another key, junk, too long.
        let stranger = Challenges::new(ChallengeConfig::new(vec![8; 32]));
        for bad in [
            "junk".to_owned(),
            t.replacen("1000.", "900.", 1),
            t.replacen("00c0ffee", "00c0ffef", 1),
            stranger.token(ip, ua, 1_000, rule),
            format!("{t}.x"),
            format!("1000.{}", "a".repeat(300)),
        ] {
            assert_eq!(
                check(&bad, None, ip, ua, 1_005),
                (None, Err(Refused::Forged)),
                "{bad}"
            );
            assert_eq!(c.token_rule(&bad), None);
        }
    }

    #[test]
    fn passes_are_signed_bound_and_expire() {
        let c = c();
        let ip: IpAddr = "2001:db8:1:2::5"
            .parse()
            .unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let ua = "Mozilla/5.0";
        let p = c.pass(ip, ua, 1_000, Some(7));
        let cookie = format!("a=b; {COOKIE}={p}; c=d");
        assert_eq!(c.passes(&cookie, ip, ua, 2_000), Some(Some(7)));
        // A pass of the form before rules were carried still holds.
        let exp = 1_000 + c.cfg.pass_life.as_secs();
        let old = format!("{exp}.{}", c.mac(&format!("p|{}|{exp}", binding(ip, ua))));
        assert_eq!(
            c.passes(&format!("{COOKIE}={old}"), ip, ua, 2_000),
            Some(None)
        );
        // The rule cannot be moved.
        let moved_rule = p.replacen(".00000007.", ".00000008.", 1);
        assert_eq!(
            c.passes(&format!("{COOKIE}={moved_rule}"), ip, ua, 2_000),
            None
        );
        let c = |cookie: &str, ip, ua: &str, now| c.passes(cookie, ip, ua, now).is_some();
        let same_48: IpAddr = "2001:db8:1:ffff::9".parse().unwrap_or(ip);
        assert!(c(&cookie, same_48, ua, 2_000));
        let other: IpAddr = "2001:db8:2::5".parse().unwrap_or(ip);
        assert!(!c(&cookie, other, ua, 2_000));
        assert!(!c(&cookie, ip, "Other/1.0", 2_000));
        assert!(!c(&cookie, ip, ua, 1_000 + 86_401));
        // Forged: another key, an expiry moved, junk.
        let stranger = Challenges::new(ChallengeConfig::new(vec![8; 32]));
        assert!(!c(
            &format!("{COOKIE}={}", stranger.pass(ip, ua, 1_000, Some(7))),
            ip,
            ua,
            2_000
        ));
        let (exp, rest) = p.split_once('.').unwrap_or(("", ""));
        let moved = format!(
            "{COOKIE}={}.{rest}",
            exp.parse::<u64>().unwrap_or(0) + 1_000_000
        );
        assert!(!c(&moved, ip, ua, 2_000));
        assert!(!c(&format!("{COOKIE}=zzz.zz"), ip, ua, 2_000));
        assert!(!c(&format!("{COOKIE}=1.2.3.4"), ip, ua, 2_000));
    }

    #[test]
    fn back_addresses_stay_on_the_site() {
        assert_eq!(back("/shop?x=1"), "/shop?x=1");
        for bad in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil",
            "/a b",
            "",
        ] {
            assert_eq!(back(bad), "/", "{bad}");
        }
    }
}
