//! `GET /metrics` in Prometheus's text format (0.0.4): decisions by rule
//! and action, identity lookups by outcome, what the gate holds, and the
//! decision latency. Answered to loopback and the `--trust-proxy`
//! networks only (the peer of the connection, never a header).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::Gate;

/// The latency histogram's upper bounds, in seconds.
const BOUNDS: [f64; 10] = [
    0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.005, 0.025,
];

/// How long decisions took.
#[derive(Debug, Default)]
pub struct Latency {
    /// Counts per bucket (the last: over every bound).
    buckets: [AtomicU64; BOUNDS.len() + 1],
    /// The sum, in nanoseconds.
    sum_ns: AtomicU64,
}

impl Latency {
    /// Records one decision's time.
    pub fn record(&self, d: Duration) {
        let s = d.as_secs_f64();
        let i = BOUNDS.iter().position(|b| s <= *b).unwrap_or(BOUNDS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }
}

/// A label value as Prometheus reads it: `\`, `"` and line feeds escaped.
fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The challenge funnel per rule: stages (`issued`, `viewed`,
/// `answered`, `passed`), failures and exemptions by reason. The solve
/// rate is `passed` ÷ `issued`.
fn funnel(o: &mut String, rules: &std::collections::BTreeMap<String, crate::funnel::Tally>) {
    let _ = writeln!(
        o,
        "# HELP botscope_gate_challenge_funnel_total Challenges by the rule that issued them and stage: issued, viewed (the page served), answered (a token came back), passed (a pass given). Solve rate: passed / issued. Rule - : a forged token, or a page no rule issued."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_challenge_funnel_total counter");
    for (rule, t) in rules {
        for (stage, n) in [
            ("issued", t.issued),
            ("viewed", t.viewed),
            ("answered", t.answered),
            ("passed", t.passed),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_challenge_funnel_total{{rule=\"{}\",stage=\"{stage}\"}} {n}",
                label(rule)
            );
        }
    }
    type ByReason = fn(&crate::funnel::Tally) -> &std::collections::BTreeMap<String, u64>;
    let by_reason: [(&str, &str, ByReason); 2] = [
        (
            "botscope_gate_challenge_failed_total",
            "Challenge answers refused, by rule and reason (forged, elsewhere, expired, too-early, no-work, quota).",
            |t| &t.failed,
        ),
        (
            "botscope_gate_challenge_exempt_total",
            "Requests a challenge rule's conditions (its rate aside) held for, let through before it: by the rule and by the allow rule that let them (protocol-file: /robots.txt and /.well-known/).",
            |t| &t.exempt,
        ),
    ];
    for (name, help, of) in by_reason {
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "# TYPE {name} counter");
        for (rule, t) in rules {
            for (reason, n) in of(t) {
                let _ = writeln!(
                    o,
                    "{name}{{rule=\"{}\",reason=\"{}\"}} {n}",
                    label(rule),
                    label(reason)
                );
            }
        }
    }
}

/// The metrics as text.
pub fn render(g: &Gate) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# HELP botscope_gate_decisions_total Decisions by deciding rule and action."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_decisions_total counter");
    for (rule, action, n) in g.counters.snapshot() {
        let _ = writeln!(
            o,
            "botscope_gate_decisions_total{{rule=\"{}\",action=\"{action}\"}} {n}",
            label(&rule)
        );
    }
    funnel(&mut o, &g.funnel.snapshot());
    let _ = writeln!(
        o,
        "# HELP botscope_gate_pay_total Payment answers of charge rules: quote (402 with crawler-price), charged, uncharged (standalone: the application answered an error, the charge taken back), or the crawler-error code."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_pay_total counter");
    for (outcome, n) in g.charges.outcomes() {
        let _ = writeln!(o, "botscope_gate_pay_total{{outcome=\"{outcome}\"}} {n}");
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_charged_total Amounts charged, by currency, in the currency's major unit."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_charged_total counter");
    for (currency, millionths) in g.charges.amounts() {
        let _ = writeln!(
            o,
            "botscope_gate_charged_total{{currency=\"{currency}\"}} {}.{:06}",
            millionths / 1_000_000,
            millionths % 1_000_000
        );
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_licence_total Licence-token answers of license rules: permitted, or the WWW-Authenticate error code (invalid_request: no token; invalid_token; insufficient_scope; server_error: the licence server not asked or not answering)."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_licence_total counter");
    for (outcome, n) in g.licences.outcomes() {
        let _ = writeln!(
            o,
            "botscope_gate_licence_total{{outcome=\"{outcome}\"}} {n}"
        );
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_licence_introspections_total Introspections asked of licence servers (answers are kept: a permit up to five minutes)."
    );
    let _ = writeln!(
        o,
        "# TYPE botscope_gate_licence_introspections_total counter"
    );
    let _ = writeln!(
        o,
        "botscope_gate_licence_introspections_total {}",
        g.licences.asked.load(Ordering::Relaxed)
    );
    if let Some(i) = &g.identities {
        let _ = writeln!(
            o,
            "# HELP botscope_gate_identity_lookups_total Reverse-DNS lookups of claims by outcome (busy: every slot taken, asked again later)."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_identity_lookups_total counter");
        for (outcome, c) in [
            ("started", &i.stats.started),
            ("busy", &i.stats.busy),
            ("answered", &i.stats.answered),
            ("failed", &i.stats.failed),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_identity_lookups_total{{outcome=\"{outcome}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            o,
            "# HELP botscope_gate_identities Identities (address and User-Agent) held."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_identities gauge");
        let _ = writeln!(o, "botscope_gate_identities {}", i.held());
        let _ = writeln!(
            o,
            "# HELP botscope_gate_identity_lookups_in_flight Reverse-DNS lookups in flight."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_identity_lookups_in_flight gauge");
        let _ = writeln!(
            o,
            "botscope_gate_identity_lookups_in_flight {}",
            i.in_flight()
        );
    }
    if let Some(u) = &g.upstream {
        let _ = writeln!(
            o,
            "# HELP botscope_gate_upstream_requests_total Requests in front of the application (--upstream) by outcome: answered by it, or not (unreachable, timed_out, too_large, tunnels_refused; bad_request: refused before judging; bad_upgrade: a 101 that was not a WebSocket's)."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_upstream_requests_total counter");
        for (outcome, c) in [
            ("answered", &u.stats.answered),
            ("unreachable", &u.stats.unreachable),
            ("timed_out", &u.stats.timed_out),
            ("too_large", &u.stats.too_large),
            ("tunnels_refused", &u.stats.tunnels_refused),
            ("bad_request", &u.stats.bad_requests),
            ("bad_upgrade", &u.stats.bad_upgrades),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_upstream_requests_total{{outcome=\"{outcome}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            o,
            "# HELP botscope_gate_upstream_tunnels Upgraded connections (WebSockets) open."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_upstream_tunnels gauge");
        let _ = writeln!(o, "botscope_gate_upstream_tunnels {}", u.tunnels());
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_state_fallback 1 while the gate decides on its own memory because the shared state (--state redis) does not answer; 0 otherwise."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_state_fallback gauge");
    let _ = writeln!(
        o,
        "botscope_gate_state_fallback {}",
        u8::from(g.shared.as_ref().is_some_and(|s| !s.healthy()))
    );
    if let Some(s) = &g.shared {
        counter(
            &mut o,
            "botscope_gate_state_errors_total",
            "Exchanges with the shared state that failed or timed out.",
            s.stats.errors.load(Ordering::Relaxed),
        );
        counter(
            &mut o,
            "botscope_gate_state_malformed_total",
            "Answers of the shared state that were not what was asked (wrong type or count, over the size bounds): each also an error.",
            s.stats.malformed.load(Ordering::Relaxed),
        );
        let _ = writeln!(
            o,
            "# HELP botscope_gate_state_shared_total What the shared state answered: rate decisions, and identity evidence read instead of DNS."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_state_shared_total counter");
        for (what, c) in [
            ("rates", &s.stats.shared_rates),
            ("evidence", &s.stats.shared_evidence),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_state_shared_total{{what=\"{what}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
    }
    let _ = writeln!(o, "# HELP botscope_gate_rate_keys Rate keys held.");
    let _ = writeln!(o, "# TYPE botscope_gate_rate_keys gauge");
    let _ = writeln!(o, "botscope_gate_rate_keys {}", g.rates.len());
    if let Some(l) = &g.decision_log {
        let _ = writeln!(
            o,
            "# HELP botscope_gate_decision_log_lines_total Decision log lines by fate (dropped: the writer's queue was full; failed: the disk refused them)."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_decision_log_lines_total counter");
        let _ = writeln!(
            o,
            "botscope_gate_decision_log_lines_total{{fate=\"written\"}} {}",
            l.written.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            o,
            "botscope_gate_decision_log_lines_total{{fate=\"dropped\"}} {}",
            l.dropped.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            o,
            "botscope_gate_decision_log_lines_total{{fate=\"failed\"}} {}",
            l.failed.load(Ordering::Relaxed)
        );
    }
    if let Some(l) = &g.events {
        let l = &l.0;
        let _ = writeln!(
            o,
            "# HELP botscope_gate_event_log_lines_total Event log lines by fate (dropped: the writer's queue was full; failed: the disk refused them)."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_event_log_lines_total counter");
        for (fate, n) in [
            ("written", l.written.load(Ordering::Relaxed)),
            ("dropped", l.dropped.load(Ordering::Relaxed)),
            ("failed", l.failed.load(Ordering::Relaxed)),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_event_log_lines_total{{fate=\"{fate}\"}} {n}"
            );
        }
    }
    let c = &g.traps.catches.counts;
    let _ = writeln!(
        o,
        "# HELP botscope_gate_trap_hits_total Requests for a trap path, by kind (unknown: a path under the prefix the gate never made)."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_trap_hits_total counter");
    for (kind, n) in ["robots", "script", "anchor", "unknown"]
        .iter()
        .zip(&c.hits)
    {
        let _ = writeln!(
            o,
            "botscope_gate_trap_hits_total{{kind=\"{kind}\"}} {}",
            n.load(Ordering::Relaxed)
        );
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_trap_catches_total Clients caught, by kind."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_trap_catches_total counter");
    for ((kind, _), n) in botscope_policy::TrapKind::ALL.iter().zip(&c.caught) {
        let _ = writeln!(
            o,
            "botscope_gate_trap_catches_total{{kind=\"{kind}\"}} {}",
            n.load(Ordering::Relaxed)
        );
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_trap_links_served_total Pages served with a trap link, by kind (caught / served is the catch rate)."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_trap_links_served_total counter");
    for ((kind, _), n) in botscope_policy::TrapKind::ALL.iter().zip(&c.served).skip(1) {
        let _ = writeln!(
            o,
            "botscope_gate_trap_links_served_total{{kind=\"{kind}\"}} {}",
            n.load(Ordering::Relaxed)
        );
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_trap_pages_not_injected_total HTML pages passed without trap links: an encoding the gate does not rewrite (it asks the application for gzip or none)."
    );
    let _ = writeln!(
        o,
        "# TYPE botscope_gate_trap_pages_not_injected_total counter"
    );
    let _ = writeln!(
        o,
        "botscope_gate_trap_pages_not_injected_total {}",
        c.not_injected.load(Ordering::Relaxed)
    );
    if let Some(c) = &g.canary {
        for (name, help, v) in [
            (
                "botscope_gate_canary_pages_total",
                "HTML pages read for a canary slot.",
                c.counts.pages.load(Ordering::Relaxed),
            ),
            (
                "botscope_gate_canary_placed_total",
                "Canary references placed.",
                c.counts.placed.load(Ordering::Relaxed),
            ),
            (
                "botscope_gate_canary_refused_total",
                "Canary markers left where no reference may stand (the head, a heading, microdata).",
                c.counts.refused.load(Ordering::Relaxed),
            ),
            (
                "botscope_gate_canary_pushed_total",
                "Canary marks pushed to the fleet's issuance record (--state redis).",
                c.counts.pushed.load(Ordering::Relaxed),
            ),
            (
                "botscope_gate_canary_push_failures_total",
                "Pushes to the fleet's issuance record that failed (their marks kept for the next).",
                c.counts.push_failed.load(Ordering::Relaxed),
            ),
        ] {
            counter(&mut o, name, help, v);
        }
        let _ = writeln!(
            o,
            "# HELP botscope_gate_canary_records Marks held in the canary issuance record, this gate's and the fleet's (at the last push)."
        );
        let _ = writeln!(o, "# TYPE botscope_gate_canary_records gauge");
        let _ = writeln!(
            o,
            "botscope_gate_canary_records{{record=\"this-gate\"}} {}",
            c.held()
        );
        if g.shared.is_some() {
            let _ = writeln!(
                o,
                "botscope_gate_canary_records{{record=\"fleet\"}} {}",
                c.counts.fleet_held.load(Ordering::Relaxed)
            );
        }
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_exports_total Catches exported, by sink and outcome (crowdsec: sent, failed, dropped; events: the event log's lines)."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_exports_total counter");
    let _ = writeln!(
        o,
        "# HELP botscope_gate_export_lag_seconds The last CrowdSec batch's lag, from its oldest catch to its push."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_export_lag_seconds gauge");
    if let Some(cs) = &g.crowdsec {
        for (outcome, n) in [
            ("sent", &cs.counts.sent),
            ("failed", &cs.counts.failed),
            ("dropped", &cs.counts.dropped),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_exports_total{{sink=\"crowdsec\",outcome=\"{outcome}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        #[allow(clippy::cast_precision_loss)]
        let lag = cs.counts.lag_ms.load(Ordering::Relaxed) as f64 / 1000.0;
        let _ = writeln!(
            o,
            "botscope_gate_export_lag_seconds{{sink=\"crowdsec\"}} {lag}"
        );
    }
    if let Some(l) = &g.events {
        let l = &l.0;
        for (outcome, n) in [
            ("sent", l.written.load(Ordering::Relaxed)),
            ("failed", l.failed.load(Ordering::Relaxed)),
            ("dropped", l.dropped.load(Ordering::Relaxed)),
        ] {
            let _ = writeln!(
                o,
                "botscope_gate_exports_total{{sink=\"events\",outcome=\"{outcome}\"}} {n}"
            );
        }
    }
    let _ = writeln!(
        o,
        "# HELP botscope_gate_tarpit_held Refusals of caught clients the tarpit holds now."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_tarpit_held gauge");
    let _ = writeln!(o, "botscope_gate_tarpit_held {}", g.traps.held_now());
    let _ = writeln!(
        o,
        "# HELP botscope_gate_tarpit_held_total Refusals of caught clients the tarpit held."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_tarpit_held_total counter");
    let _ = writeln!(
        o,
        "botscope_gate_tarpit_held_total {}",
        g.traps.held_total.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        o,
        "# HELP botscope_gate_trap_exempt_total Trap hits from clients known by their identity or an exempt network."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_trap_exempt_total counter");
    let _ = writeln!(
        o,
        "botscope_gate_trap_exempt_total {}",
        c.exempt.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        o,
        "# HELP botscope_gate_decision_seconds Time from a request's arrival to its decision."
    );
    let _ = writeln!(o, "# TYPE botscope_gate_decision_seconds histogram");
    let mut cumulative = 0;
    for (i, b) in g.latency.buckets.iter().enumerate() {
        cumulative += b.load(Ordering::Relaxed);
        let le = BOUNDS
            .get(i)
            .map_or_else(|| "+Inf".to_owned(), |b| format!("{b}"));
        let _ = writeln!(
            o,
            "botscope_gate_decision_seconds_bucket{{le=\"{le}\"}} {cumulative}"
        );
    }
    let sum = g.latency.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
    let _ = writeln!(o, "botscope_gate_decision_seconds_sum {sum}");
    let _ = writeln!(o, "botscope_gate_decision_seconds_count {cumulative}");
    o
}

/// What an operator's request must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    /// To read (`/healthz`, `/metrics`): an address in `--operators`, or,
    /// through a trusted proxy that names no client, the token.
    Read,
    /// To act (revoking passes): an address in `--operators` and the
    /// token.
    Act,
}

/// Whether the request carries the operators' token
/// (`Authorization: Bearer TOKEN`), compared in constant time.
fn has_token(g: &Gate, h: &axum::http::HeaderMap) -> bool {
    let Some(token) = g.config.operator_token.as_deref() else {
        return false;
    };
    h.get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
        .is_some_and(|given| {
            let given = given.trim_ascii();
            given.len() == token.len()
                && given
                    .iter()
                    .zip(token)
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0
        })
}

/// One unlabelled counter: its help, its type and its value.
fn counter(o: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "# TYPE {name} counter");
    let _ = writeln!(o, "{name} {value}");
}

/// A 403 unless the request is an operator's: what the gate knows of its
/// lists, its policy and its load, and revoking passes, are the
/// operators'. The client is the one the gate names (the connection's
/// peer, or the address a trusted proxy names); a trusted proxy that
/// names no client is never taken for an operator (a front server passes
/// strangers' requests too).
pub(crate) fn operators_only(
    g: &Gate,
    peer: SocketAddr,
    h: &axum::http::HeaderMap,
    what: &str,
    need: Operator,
) -> Option<Response> {
    let named = g.named_client(peer.ip(), h);
    let operator = named
        .map(botscope_botid::normalize)
        .is_ok_and(|ip| g.config.operators.iter().any(|r| r.contains(ip)));
    let token = has_token(g, h);
    let (ok, why) = match need {
        Operator::Read if operator || (named.is_err() && token) => (true, ""),
        Operator::Read if named.is_err() => (
            false,
            "a trusted proxy that names no client (send the client header, or the operators' token)",
        ),
        Operator::Read => (false, "a client outside --operators"),
        Operator::Act if g.config.operator_token.is_none() => {
            (false, "this gate, started without --operator-token-file")
        }
        Operator::Act if operator && token => (true, ""),
        Operator::Act if !operator => (
            false,
            "a client outside --operators (or a trusted proxy that names none)",
        ),
        Operator::Act => (
            false,
            "a request without the operators' token (Authorization: Bearer …)",
        ),
    };
    if ok {
        return None;
    }
    Some(
        (
            StatusCode::FORBIDDEN,
            format!("{what} is the operators': refused to {why}\n"),
        )
            .into_response(),
    )
}

/// `GET /metrics`: to the operators only.
/// `/.botscope/blocklist.txt` (operators only): the catches the traps
/// hold, one address or network a line (for Anubis, go-away and nginx
/// lists); `?format=json`, as `cscli decisions import` reads them
/// (`value`, `scope`, `type`, `duration` as a Go duration, `reason`).
pub(crate) async fn blocklist(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: axum::extract::Request,
) -> Response {
    if let Some(refused) = operators_only(&g, peer, req.headers(), "the blocklist", Operator::Read)
    {
        return refused;
    }
    let json = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "format=json"));
    let snap = g.current.load();
    let now_ms = crate::answer::unix_now_ms();
    let listed = snap
        .policy
        .as_ref()
        .and_then(|p| p.traps.as_ref())
        .map(|t| g.traps.catches.list(now_ms, t))
        .unwrap_or_default();
    let mut r = if json {
        let items: Vec<serde_json::Value> = listed
            .iter()
            .map(|l| {
                serde_json::json!({
                    "value": l.value(),
                    "scope": if l.is_address() { "ip" } else { "range" },
                    "type": "ban",
                    "duration": crate::trap::go_duration(l.until_ms.saturating_sub(now_ms)),
                    "reason": format!("botscope trap: {}", l.kinds()),
                })
            })
            .collect();
        let mut r = serde_json::Value::Array(items).to_string().into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    } else {
        let mut text = String::with_capacity(listed.len() * 20);
        for l in &listed {
            text.push_str(&l.value());
            text.push('\n');
        }
        let mut r = text.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        r
    };
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

pub(crate) async fn metrics(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: axum::extract::Request,
) -> Response {
    if let Some(refused) = operators_only(&g, peer, req.headers(), "metrics", Operator::Read) {
        return refused;
    }
    let mut r = render(&g).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}
