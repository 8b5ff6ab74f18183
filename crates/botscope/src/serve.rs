//! `botscope serve` (the web application, botscope-web's server) and
//! `botscope gate` (botscope-gate's): this module turns the flags into
//! their configuration, starts the log output, and waits for Ctrl-C or
//! SIGTERM.

use anyhow::{Context, Result};

use crate::cli::{GateArgs, ServeArgs};
use crate::exit::ExitStatus;
use crate::settings::Settings;

/// Request logs and notes on standard error (RUST_LOG adjusts them).
pub fn log_to_stderr(s: &Settings) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(s.terminal)
        .try_init();
}

/// The gate's paths checked before anything starts: each problem names
/// its flag and its path, once.
fn check_gate_paths(a: &GateArgs) -> Result<()> {
    let read: Vec<(&str, &std::path::Path, bool)> = [
        ("--robots-dir", &a.robots_dir, true),
        ("--lists", &a.lists, true),
        ("--policy", &a.policy, false),
        ("--challenge-key", &a.challenge_key, false),
        ("--registry", &a.registry, false),
        ("--upstream-ca-file", &a.upstream_ca_file, false),
        ("--operator-token-file", &a.operator_token_file, false),
    ]
    .into_iter()
    .filter_map(|(flag, p, dir)| Some((flag, p.as_deref()?, dir)))
    .collect();
    let write: Vec<(&str, &std::path::Path)> =
        [("--decision-log", &a.decision_log), ("--events", &a.events)]
            .into_iter()
            .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
            .collect();
    Ok(botscope_gate::startup::check_paths(&read, &write)?)
}

/// `gate`.
pub async fn gate(a: &GateArgs, s: &Settings) -> Result<ExitStatus> {
    log_to_stderr(s);
    if let Some(botscope_cli::GateCommand::Export(e)) = &a.command {
        return crate::gate_export::run(e).await;
    }
    let robots_dir = a.robots_dir.clone().context("--robots-dir is required")?;
    check_gate_paths(a)?;
    let networks = |flag: &str, list: &[String]| {
        list.iter()
            .map(|c| {
                botscope_botid::IpRange::parse_any(c)
                    .map_err(|e| anyhow::anyhow!("{flag} {c}: {e}"))
            })
            .collect::<Result<Vec<_>>>()
    };
    let trust_proxy = networks("--trust-proxy", &a.trust_proxy)?;
    let operators = networks("--operators", &a.operators)?;
    let operator_token = a
        .operator_token_file
        .as_ref()
        .map(|p| botscope_gate::startup::operator_token(p))
        .transpose()?;
    let deny = a
        .deny
        .iter()
        .filter_map(|d| botscope_gate::Category::parse(d))
        .collect();
    anyhow::ensure!(
        a.poll.is_finite() && a.poll > 0.0,
        "--poll {}: give a number of seconds above 0",
        a.poll
    );
    let mut registry = s.registry(a.registry.as_ref())?;
    // The lists an earlier run refreshed, over the shipped ones.
    if let Some(keep) = &a.refresh_keep
        && let Some(r) =
            botscope_gate::refresh::kept(&registry, keep).map_err(anyhow::Error::msg)?
    {
        registry = r;
    }
    let registry = std::sync::Arc::new(registry);
    let dns = if a.offline {
        None
    } else {
        anyhow::ensure!(
            a.dns_timeout.is_finite() && a.dns_timeout > 0.0,
            "--dns-timeout {}: give a number of seconds above 0",
            a.dns_timeout
        );
        let servers = botscope_dns::parse_nameservers(&a.dns).context("--dns")?;
        let evidence = usize::try_from(a.max_identities)?;
        let timeout = std::time::Duration::try_from_secs_f64(a.dns_timeout.min(60.0))?;
        Some(botscope_gate::identity::DnsConfig {
            lookup: botscope_gate::identity::hickory_lookup(&servers, timeout, evidence)?,
            concurrency: usize::try_from(a.dns_lookups)?,
            evidence,
        })
    };
    let config = botscope_gate::Config {
        terms: site_terms(a)?,
        lists: a.lists.clone(),
        robots_dir: robots_dir.clone(),
        trust_proxy,
        operators,
        operator_token,
        client_header: a.client_header.clone(),
        report_only: a.report_only,
        deny,
        poll: std::time::Duration::try_from_secs_f64(a.poll)?,
        identity: Some(botscope_gate::identity::IdentityConfig {
            registry: registry.clone(),
            owners: std::sync::Arc::new(s.owners()),
            dns,
            cache: usize::try_from(a.max_identities)?,
        }),
        policy: a.policy.clone(),
        rate_keys: usize::try_from(a.max_rate_keys)?,
        refresh: match a.refresh_lists {
            Some(every) => Some(botscope_gate::refresh::RefreshConfig {
                every,
                timeout: std::time::Duration::from_secs(60),
                trust: crate::settings::trust(&a.directories.tls)?,
                user_agent: botscope_harvest::DEFAULT_USER_AGENT.to_owned(),
                keep: a.refresh_keep.clone(),
            }),
            None => None,
        },
        challenge: Some(botscope_gate::challenge::ChallengeConfig {
            delay: a.challenge_delay,
            difficulty: a.challenge_difficulty,
            pass_life: a.challenge_pass,
            // Revocations kept beside the key: they survive a restart.
            revocations: a.challenge_key.as_ref().map(|p| {
                let mut f = p.clone().into_os_string();
                f.push(".revoked");
                std::path::PathBuf::from(f)
            }),
            ..botscope_gate::challenge::ChallengeConfig::new(challenge_key(a)?)
        }),
        canary: match &a.canary_key {
            Some(p) => Some(botscope_gate::canary::CanaryConfig {
                key: botscope_canary::CanaryKey::new(&botscope_gate::startup::key_file(
                    "--canary-key",
                    p,
                )?)?,
                template: a.canary_text.clone(),
                period: a.canary_period,
                records: usize::try_from(a.canary_records)?,
            }),
            None => None,
        },
        decision_log: a.decision_log.as_ref().map(|path| {
            botscope_gate::decisions::DecisionLogConfig {
                path: path.clone(),
                all: a.decision_log_all,
                max_bytes: a.decision_log_max,
            }
        }),
        crowdsec: match &a.crowdsec {
            Some(p) => {
                let text = botscope_os::read_capped(p, 4096)
                    .with_context(|| format!("--crowdsec {}", p.display()))?;
                let mut c =
                    botscope_gate::crowdsec::CrowdsecConfig::read(&String::from_utf8_lossy(&text))
                        .map_err(|e| anyhow::anyhow!("--crowdsec {}: {e}", p.display()))?;
                c.decisions = a.crowdsec_decisions;
                Some(c)
            }
            None => None,
        },
        events: a
            .events
            .as_ref()
            .map(|path| botscope_gate::decisions::DecisionLogConfig {
                path: path.clone(),
                all: true,
                max_bytes: a.decision_log_max,
            }),
        connections: botscope_http::server::ConnectionLimits {
            connections: usize::try_from(a.max_connections)?,
            per_client: usize::try_from(a.max_connections_per_client)?,
            header_timeout: a.header_timeout,
            ..Default::default()
        },
        state: botscope_gate::state::StateConfig::parse(&a.state, a.state_timeout)
            .map_err(|e| anyhow::anyhow!("--state {e}"))?,
        upstream: match &a.upstream {
            Some(url) => Some(botscope_gate::proxy::UpstreamConfig {
                connect_timeout: a.upstream_connect_timeout,
                response_timeout: a.upstream_timeout,
                max_request_body: a.max_request_body,
                max_tunnels: usize::try_from(a.max_connections)?,
                trust: upstream_trust(a)?,
                path: botscope_gate::proxy::UpstreamPath::parse(&a.upstream_path)
                    .unwrap_or_default(),
                ..botscope_gate::proxy::UpstreamConfig::new(url.clone())
            }),
            None => None,
        },
        signatures: if a.no_signatures {
            None
        } else {
            Some(botscope_gate::signature::SignatureConfig {
                registry: registry.clone(),
                directory: crate::settings::directory_config(&a.directories)?,
                bounds: botscope_http::keycache::Bounds {
                    agents: a.max_signature_agents.max(1),
                    in_flight: a.directory_fetches.max(1),
                    ..Default::default()
                },
            })
        },
    };
    let server = botscope_gate::Server::bind(config, a.listen).await?;
    let stop = crate::stop::stop_signal();
    match &a.upstream {
        Some(up) => eprintln!(
            "botscope: gate on http://{}/ in front of {} (SIGHUP reloads; Ctrl-C to stop)",
            server.local_addr(),
            botscope_text::field(up.as_str())
        ),
        None => eprintln!(
            "botscope: gate on http://{}/ (SIGHUP reloads; Ctrl-C to stop)",
            server.local_addr()
        ),
    }
    server.run(stop).await?;
    Ok(ExitStatus::Success)
}

/// What an https `--upstream` is checked against: the system's store and
/// `--upstream-ca-file`.
fn upstream_trust(a: &GateArgs) -> Result<botscope_http::Trust> {
    let mut trust = botscope_http::Trust::system();
    if let Some(p) = &a.upstream_ca_file {
        let pem = botscope_os::read_capped(p, 1 << 20)
            .with_context(|| format!("--upstream-ca-file {}", p.display()))?;
        trust.extra = botscope_http::certificates(&pem)
            .with_context(|| format!("--upstream-ca-file {}", p.display()))?;
    }
    Ok(trust)
}

/// The challenge key of `--challenge-key` (at least 32 bytes), or none:
/// the gate makes one at start.
fn challenge_key(a: &GateArgs) -> Result<Vec<u8>> {
    let Some(p) = &a.challenge_key else {
        return Ok(Vec::new());
    };
    Ok(botscope_gate::startup::key_file("--challenge-key", p)?)
}

/// `serve`.
pub async fn run(a: &ServeArgs, s: &Settings) -> Result<ExitStatus> {
    log_to_stderr(s);
    let fetch = crate::settings::FetchSettings::resolve(
        &a.fetch,
        botscope_robotstxt::Semantics::Google,
        std::time::Duration::ZERO,
    )?;
    let config = botscope_web::Config {
        db: a.db.clone(),
        index: a.index.clone(),
        registry: s.registry(a.registry.as_ref())?,
        owners: s.owners(),
        limits: botscope_web::Limits {
            upload: a.upload_limit,
            api_per_second: a.api_rate,
            api_burst: a.api_rate.saturating_mul(2),
            connections: usize::try_from(a.max_connections)?,
            connections_per_client: usize::try_from(a.max_connections_per_client)?,
            header_timeout: a.header_timeout,
            request_deadline: a.request_timeout,
            upload_deadline: a.upload_timeout,
            queue: usize::try_from(a.queue)?,
            uploads_bytes: usize::try_from(a.uploads_memory)?,
            upload_clients: usize::try_from(a.upload_clients)?,
            ..botscope_web::Limits::default()
        },
        fetch: fetch.config,
        nameservers: fetch.dns,
        demo_sites: a.demo_sites,
        threads: s.threads,
        verify_uploads: usize::try_from(a.verify_uploads.unwrap_or(0))?,
    };
    if let Some(db) =
        a.db.as_ref()
            .and_then(botscope_store::StoreLocator::sqlite_path)
    {
        anyhow::ensure!(
            db.is_file(),
            "{}: no store here (make one with `botscope harvest` or `botscope store import`)",
            db.display()
        );
    }
    let server = botscope_web::Server::bind(config, a.listen).await?;
    let addr = server.local_addr();
    let stop = crate::stop::stop_signal();
    eprintln!("botscope: serving on http://{addr}/ (Ctrl-C to stop)");
    server.run(stop).await?;
    Ok(ExitStatus::Success)
}

/// `--rsl` and `--content-usage`, checked: a licence with an error, or
/// preferences that do not read, start nothing.
fn site_terms(a: &GateArgs) -> Result<botscope_gate::SiteTerms> {
    let rsl = match &a.rsl {
        None => None,
        Some(file) => {
            let licence =
                botscope_gate::startup::rsl_document(file, &a.rsl_path, a.robots_dir.as_deref())?;
            for w in licence.warnings {
                eprintln!("botscope: warning: {w}");
            }
            Some(licence.served)
        }
    };
    let content_usage = a
        .content_usage
        .as_deref()
        .map(botscope_gate::startup::content_usage)
        .transpose()?;
    let credentials = match &a.license_credentials {
        None => None,
        Some(file) => Some(crate::settings::licence_credentials(file)?),
    };
    let directory = crate::settings::directory_config(&a.directories)?;
    Ok(botscope_gate::SiteTerms {
        rsl,
        content_usage,
        licence_server: botscope_http::olp::OlpConfig {
            trust: directory.trust,
            allow_private: directory.allow_private,
            credentials,
            ..Default::default()
        },
    })
}
