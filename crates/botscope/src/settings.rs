//! Settings resolved once, from the environment, before any command runs:
//! where the user registry and the DNS cache live, how many threads to
//! use, whether standard error is a terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result};
use botscope_botid::{MAX_REGISTRY_BYTES, Registry};
use botscope_harvest::{Config, DEFAULT_USER_AGENT};
use botscope_robotstxt::{FetchPolicy, Semantics};

use crate::cli::{FetchArgs, TlsArgs};

/// What every command may need to know of its surroundings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The user registry `bots update` writes and every command layers over
    /// the bundled one: `$XDG_CONFIG_HOME/botscope/registry.yaml`, else
    /// `~/.config/botscope/registry.yaml`.
    pub user_registry: Option<PathBuf>,
    /// The DNS cache: `$XDG_CACHE_HOME/botscope/dns-cache.json`, else
    /// `~/.cache/botscope/dns-cache.json`.
    pub dns_cache: Option<PathBuf>,
    /// The IP-owner databases `data update` installs:
    /// `$XDG_DATA_HOME/botscope`, else `~/.local/share/botscope`.
    pub data_dir: Option<PathBuf>,
    /// Threads for parallel work: one per core.
    pub threads: usize,
    /// Standard error is a terminal (progress bars may be drawn).
    pub terminal: bool,
    /// What commands leave for the end of the process.
    pub leftovers: Leftovers,
}

/// Large results a command is done with, handed to whoever ends the
/// process: `main` leaves them to the operating system (half a million
/// small allocations are not worth freeing one by one just before the
/// process exits); a test that calls `run` in-process drops them.
#[derive(Clone, Default)]
pub struct Leftovers(std::sync::Arc<std::sync::Mutex<Vec<Box<dyn std::any::Any + Send>>>>);

impl Leftovers {
    /// Keeps `x` until [`Leftovers::take`].
    pub fn keep(&self, x: impl std::any::Any + Send) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Box::new(x));
    }

    /// Everything kept so far.
    pub fn take(&self) -> Vec<Box<dyn std::any::Any + Send>> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl std::fmt::Debug for Leftovers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Leftovers")
    }
}

impl Settings {
    /// From the environment of this process.
    pub fn from_env() -> Settings {
        let l = botscope_os::Locations::from_env();
        Settings {
            user_registry: l.user_registry,
            dns_cache: l.dns_cache,
            data_dir: l.data_dir,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            terminal: std::io::stderr().is_terminal(),
            leftovers: Leftovers::default(),
        }
    }

    /// The installed IP-owner databases (none when there are none); one
    /// that cannot be read is left out with a warning.
    pub fn owners(&self) -> botscope_ipdb::IpOwners {
        let Some(dir) = &self.data_dir else {
            return botscope_ipdb::IpOwners::none();
        };
        let (owners, warnings) = botscope_ipdb::DataDir::new(dir).open();
        for w in warnings {
            eprintln!("botscope: warning: {w}; left out (botscope data update replaces it)");
        }
        owners
    }

    /// The bundled registry, with the user registry (if any) and then
    /// `extra` (`--registry`) layered over it.
    pub fn registry(&self, extra: Option<&PathBuf>) -> Result<Registry> {
        let mut r = Registry::bundled();
        if let Some(p) = self.user_registry.as_ref().filter(|p| p.is_file()) {
            r = r.layered(parse_registry(p)?);
        }
        if let Some(path) = extra {
            r = r.layered(parse_registry(path)?);
        }
        Ok(r)
    }
}

/// How a command that fetches (harvest, fetch, robots from a URL, serve)
/// fetches, resolved once from its flags before anything is opened or
/// asked: the client's configuration (certificates read, User-Agent
/// chosen) and the nameservers given.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// How each host is fetched.
    pub config: Config,
    /// The nameservers `--dns` names; none means the system's
    /// ([`FetchSettings::nameservers`]).
    pub dns: Vec<SocketAddr>,
}

impl FetchSettings {
    /// The settings `args` give, for `semantics` (which statuses and
    /// redirects a robots.txt fetch follows) and `ip_gap` (the pause
    /// between two requests to one address).
    pub fn resolve(args: &FetchArgs, semantics: Semantics, ip_gap: Duration) -> Result<Self> {
        let dns = if args.dns.is_empty() {
            Vec::new()
        } else {
            botscope_dns::parse_nameservers(&args.dns).context("--dns")?
        };
        Ok(FetchSettings {
            config: Config {
                user_agent: args
                    .user_agent
                    .clone()
                    .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned()),
                connect_timeout: args.connect_timeout,
                total_timeout: args.timeout,
                ip_gap,
                allow_private: args.allow_private,
                http_port: args.http_port,
                https_port: args.https_port,
                policy: FetchPolicy::for_semantics(semantics),
                trust: trust(&args.tls)?,
            },
            dns,
        })
    }

    /// The nameservers to use: those given, else the system's
    /// (`/etc/resolv.conf`).
    pub fn nameservers(&self) -> Result<Vec<SocketAddr>> {
        if self.dns.is_empty() {
            return botscope_dns::system_nameservers().context("no --dns given");
        }
        Ok(self.dns.clone())
    }
}

/// How key directories are fetched, as `--allow-private`,
/// `--directory-timeout` and the TLS flags say.
pub fn directory_config(
    args: &botscope_cli::KeyDirectoryArgs,
) -> Result<botscope_http::directory::DirectoryConfig> {
    Ok(botscope_http::directory::DirectoryConfig {
        trust: trust(&args.tls)?,
        allow_private: args.allow_private,
        timeout: args.directory_timeout,
        ..Default::default()
    })
}

/// What HTTPS trusts, as `--tls-roots` and `--ca-file` say (the
/// certificates read and checked).
pub fn trust(args: &TlsArgs) -> Result<botscope_harvest::Trust> {
    let extra = match &args.ca_file {
        Some(ca) => botscope_harvest::certificates(
            &std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?,
        )
        .with_context(|| format!("--ca-file {}", ca.display()))?,
        None => Vec::new(),
    };
    Ok(botscope_harvest::Trust {
        roots: args.tls_roots,
        extra,
    })
}

/// A registry file's text, within the size limit.
pub fn registry_text(path: &Path) -> Result<String> {
    let bytes = botscope_os::read_capped(path, MAX_REGISTRY_BYTES as u64)?;
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
}

/// A registry file, read and validated.
pub fn parse_registry(path: &Path) -> Result<Registry> {
    let text = registry_text(path)?;
    Registry::parse(&path.display().to_string(), &text)
        .map_err(|e| anyhow::anyhow!("invalid registry:\n{}", botscope_botid::errors_text(&e)))
}

/// `--license-credentials FILE`: one line `CLIENT_ID:CLIENT_SECRET`.
pub fn licence_credentials(file: &Path) -> Result<(String, String)> {
    let (body, total) = crate::io::read_limited(file, Some(4097))?;
    anyhow::ensure!(
        total <= 4096,
        "--license-credentials {}: over 4096 bytes; nothing was done",
        crate::io::display(file)
    );
    let text = String::from_utf8(body).map_err(|_| {
        anyhow::anyhow!(
            "--license-credentials {}: not UTF-8; nothing was done",
            crate::io::display(file)
        )
    })?;
    let line = text.trim();
    match line.split_once(':') {
        Some((id, secret))
            if !id.is_empty()
                && !secret.is_empty()
                && !line.contains(['\n', '\r'])
                && line.chars().all(|c| !c.is_control()) =>
        {
            Ok((id.to_owned(), secret.to_owned()))
        }
        _ => anyhow::bail!(
            "--license-credentials {}: one line CLIENT_ID:CLIENT_SECRET; nothing was done",
            crate::io::display(file)
        ),
    }
}
