//! The CrowdSec sink (`--crowdsec FILE`): each catch pushed to a CrowdSec
//! Local API as an alert, by a task of its own, so that a request never
//! waits for it. The gate logs in as a machine (the credentials file
//! `cscli machines add NAME --auto -f FILE` writes: `url`, `login`,
//! `password`), and pushes alerts without decisions by default: the
//! operator's profiles decide (CrowdSec's default profile bans an
//! address for four hours). With `decisions`, each alert carries a ban
//! for the catch's hold.
//!
//! Bounded: a queue of [`QUEUE`] catches (past it, counted `dropped`);
//! [`BATCH`] alerts a request; each exchange within the timeout, its
//! answer read within 64 KiB and checked (a login without a token of at
//! most 4 KiB, or an answer to the alerts that is not a list of ids, is a
//! failure, counted); after a failure the batch is tried again twice,
//! then counted `failed`, with a wait that doubles up to a minute.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use botscope_policy::TrapKind;

/// Catches waiting for the sink at most.
pub const QUEUE: usize = 4_096;
/// Alerts pushed in one request at most.
pub const BATCH: usize = 100;
/// Bytes of an answer read at most.
const ANSWER_BYTES: usize = 64 * 1024;

/// Where and as whom the sink pushes.
#[derive(Debug, Clone)]
pub struct CrowdsecConfig {
    /// The Local API (`http://127.0.0.1:8080/`).
    pub url: url::Url,
    /// The machine's name.
    pub login: String,
    /// Its password.
    pub password: String,
    /// Push each alert with a ban decision for the catch's hold (else
    /// none: the profiles decide).
    pub decisions: bool,
    /// Each exchange's time.
    pub timeout: Duration,
}

impl CrowdsecConfig {
    /// Reads the credentials file `cscli machines add … -f FILE` writes
    /// (`url: …`, `login: …`, `password: …`, a line each).
    pub fn read(text: &str) -> Result<CrowdsecConfig, String> {
        let mut url = None;
        let mut login = None;
        let mut password = None;
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim().trim_matches(['"', '\'']).to_owned();
            match k.trim() {
                "url" => url = Some(v),
                "login" => login = Some(v),
                "password" => password = Some(v),
                _ => {}
            }
        }
        let url = url.ok_or("no `url:` (the Local API's)")?;
        let url = url::Url::parse(&url)
            .map_err(|e| format!("`url: {}`: {e}", botscope_text::quoted(&url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err("`url:` must be http:// or https://".to_owned());
        }
        let login = login.filter(|l| !l.is_empty()).ok_or("no `login:`")?;
        let password = password.filter(|p| !p.is_empty()).ok_or("no `password:`")?;
        Ok(CrowdsecConfig {
            url,
            login,
            password,
            decisions: false,
            timeout: Duration::from_secs(5),
        })
    }
}

/// One catch to push.
#[derive(Debug, Clone)]
pub struct Catch {
    /// The address caught.
    pub ip: IpAddr,
    /// The kind that caught it.
    pub kind: TrapKind,
    /// When (Unix ms).
    pub at_ms: u64,
    /// How long the gate holds it (ms).
    pub hold_ms: u64,
}

/// What the sink did, for `/metrics`.
#[derive(Debug, Default)]
pub struct Counts {
    /// Alerts the Local API took.
    pub sent: AtomicU64,
    /// Alerts given up on (the Local API failed or lied three times).
    pub failed: AtomicU64,
    /// Catches the queue could not take.
    pub dropped: AtomicU64,
    /// The last batch's lag: from its oldest catch to its push (ms).
    pub lag_ms: AtomicU64,
}

/// The sink: a queue and the task that empties it.
#[derive(Debug)]
pub struct Crowdsec {
    tx: tokio::sync::mpsc::Sender<Catch>,
    /// What it did.
    pub counts: Arc<Counts>,
}

impl Crowdsec {
    /// Starts the task (on the current runtime).
    pub fn start(cfg: CrowdsecConfig) -> Crowdsec {
        let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
        let counts = Arc::new(Counts::default());
        tokio::spawn(run(cfg, rx, counts.clone()));
        Crowdsec { tx, counts }
    }

    /// Queues a catch; a full queue counts it `dropped`.
    pub fn push(&self, c: Catch) {
        if self.tx.try_send(c).is_err() {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn rfc3339(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(i64::try_from(ms).unwrap_or(i64::MAX))
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// The alerts' JSON for a batch, as CrowdSec's Local API reads them
/// (`POST /v1/alerts`).
pub fn alerts_json(batch: &[Catch], decisions: bool) -> String {
    let alerts: Vec<serde_json::Value> = batch
        .iter()
        .map(|c| {
            let ip = botscope_botid::normalize(c.ip).to_string();
            let scenario = format!("botscope/trap-{}", c.kind.as_str());
            let at = rfc3339(c.at_ms);
            let mut a = serde_json::json!({
                "scenario": scenario,
                "scenario_hash": "",
                "scenario_version": "",
                "message": format!("{ip} was caught by a {} trap link of botscope's gate", c.kind.as_str()),
                "events_count": 1,
                "start_at": at,
                "stop_at": at,
                "capacity": 0,
                "leakspeed": "0",
                "simulated": false,
                "remediation": true,
                "events": [{"timestamp": at, "meta": [{"key": "kind", "value": c.kind.as_str()}]}],
                "source": {"scope": "Ip", "value": ip, "ip": ip},
            });
            if decisions {
                a["decisions"] = serde_json::json!([{
                    "duration": crate::trap::go_duration(c.hold_ms),
                    "origin": "botscope",
                    "scenario": scenario,
                    "scope": "Ip",
                    "type": "ban",
                    "value": ip,
                }]);
            }
            a
        })
        .collect();
    serde_json::Value::Array(alerts).to_string()
}

/// Checks the Local API's answer to a login: its token.
pub fn read_login(body: &[u8]) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| "not JSON")?;
    match v["token"].as_str() {
        Some(t) if !t.is_empty() && t.len() <= 4096 && t.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(t.to_owned())
        }
        _ => Err("no token in the login's answer".to_owned()),
    }
}

/// Checks the Local API's answer to alerts pushed: one id each.
pub fn read_pushed(body: &[u8], n: usize) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| "not JSON")?;
    match v.as_array() {
        Some(ids) if ids.len() == n && ids.iter().all(serde_json::Value::is_string) => Ok(()),
        _ => Err(format!("not a list of {n} alert ids")),
    }
}

/// One exchange with the Local API. The User-Agent is `name/version`
/// only: CrowdSec 1.4's Local API reads the machine's version from it,
/// and refuses a login whose User-Agent has more slashes (its 401 says
/// the password is wrong).
async fn post(
    cfg: &CrowdsecConfig,
    tls: &botscope_http::TlsConnector,
    path: &str,
    json: &str,
    token: Option<&str>,
) -> Result<(u16, Vec<u8>), String> {
    let url = cfg.url.join(path).map_err(|e| e.to_string())?;
    crate::export::json_exchange(
        &url,
        Some(json),
        token,
        concat!("botscope/", env!("CARGO_PKG_VERSION")),
        ANSWER_BYTES,
        cfg.timeout,
        tls,
    )
    .await
}

async fn push_batch(
    cfg: &CrowdsecConfig,
    tls: &botscope_http::TlsConnector,
    token: &mut Option<String>,
    batch: &[Catch],
) -> Result<(), String> {
    for _ in 0..2 {
        if token.is_none() {
            let login = serde_json::json!({
                "machine_id": cfg.login,
                "password": cfg.password,
                "scenarios": ["botscope/trap-robots", "botscope/trap-script", "botscope/trap-anchor"],
            })
            .to_string();
            let (status, body) = post(cfg, tls, "v1/watchers/login", &login, None).await?;
            if status != 200 {
                return Err(format!("the login was answered {status}"));
            }
            *token = Some(read_login(&body)?);
        }
        let (status, body) = post(
            cfg,
            tls,
            "v1/alerts",
            &alerts_json(batch, cfg.decisions),
            token.as_deref(),
        )
        .await?;
        match status {
            200 | 201 => return read_pushed(&body, batch.len()),
            // The token ran out: log in again, once.
            401 | 403 => *token = None,
            s => return Err(format!("the alerts were answered {s}")),
        }
    }
    Err("the login's token was refused".to_owned())
}

async fn run(cfg: CrowdsecConfig, mut rx: tokio::sync::mpsc::Receiver<Catch>, counts: Arc<Counts>) {
    // The trust store is read once, not for each exchange.
    let tls = match botscope_http::Trust::system().connector() {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(
                "CrowdSec at {}: no TLS: {e}; catches are not pushed",
                cfg.url
            );
            while let Some(_c) = rx.recv().await {
                counts.failed.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
    };
    let mut token: Option<String> = None;
    let mut wait = Duration::from_secs(1);
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(c) => batch.push(c),
                Err(_) => break,
            }
        }
        let mut tries = 0;
        loop {
            match push_batch(&cfg, &tls, &mut token, &batch).await {
                Ok(()) => {
                    counts.sent.fetch_add(batch.len() as u64, Ordering::Relaxed);
                    let oldest = batch.iter().map(|c| c.at_ms).min().unwrap_or(0);
                    counts.lag_ms.store(
                        crate::answer::unix_now_ms().saturating_sub(oldest),
                        Ordering::Relaxed,
                    );
                    wait = Duration::from_secs(1);
                    break;
                }
                Err(why) => {
                    tries += 1;
                    tracing::warn!("CrowdSec at {}: {why}", cfg.url);
                    token = None;
                    if tries >= 3 {
                        counts
                            .failed
                            .fetch_add(batch.len() as u64, Ordering::Relaxed);
                        break;
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(60));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credentials_file_cscli_writes_reads() {
        let c = CrowdsecConfig::read(
            "url: http://127.0.0.1:8080\nlogin: botscope-gate\npassword: 'pw'\n",
        )
        .expect("reads");
        assert_eq!(
            (c.url.as_str(), c.login.as_str(), c.password.as_str()),
            ("http://127.0.0.1:8080/", "botscope-gate", "pw")
        );
        for bad in [
            "login: a\npassword: b\n",
            "url: ftp://x\nlogin: a\npassword: b\n",
            "url: http://x\npassword: b\n",
            "",
        ] {
            assert!(CrowdsecConfig::read(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn answers_that_lie_are_refused() {
        assert_eq!(
            read_login(br#"{"code":200,"token":"abc.def"}"#),
            Ok("abc.def".to_owned())
        );
        for bad in [
            &b"{}"[..],
            br#"{"token":""}"#,
            br#"{"token":7}"#,
            b"nope",
            br#"{"token":"a b"}"#,
        ] {
            assert!(read_login(bad).is_err());
        }
        assert!(read_pushed(br#"["1","2"]"#, 2).is_ok());
        for bad in [&br#"["1"]"#[..], br#"[1,2]"#, b"{}", b""] {
            assert!(read_pushed(bad, 2).is_err());
        }
    }

    #[test]
    fn alerts_carry_no_decision_unless_asked() {
        let c = Catch {
            ip: "203.0.113.9".parse().expect("ip"),
            kind: TrapKind::Robots,
            at_ms: 1_796_577_600_000,
            hold_ms: 3_600_000,
        };
        let plain: serde_json::Value =
            serde_json::from_str(&alerts_json(std::slice::from_ref(&c), false)).expect("json");
        assert_eq!(plain[0]["source"]["value"], "203.0.113.9");
        assert_eq!(plain[0]["scenario"], "botscope/trap-robots");
        assert_eq!(plain[0]["start_at"], "2026-12-06T17:20:00Z");
        assert!(plain[0].get("decisions").is_none());
        let with: serde_json::Value = serde_json::from_str(&alerts_json(&[c], true)).expect("json");
        assert_eq!(with[0]["decisions"][0]["duration"], "1h0m0s");
    }
}
