//! FCrDNS evidence for the pipelines, from inside any Tokio runtime: the
//! resolver over the given or the system's nameservers, the answers kept
//! in a cache file across runs.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::{Cache, Error, Fcrdns, FcrdnsEvidence, HickoryLookup};

/// How to ask.
#[derive(Debug, Clone)]
pub struct EvidenceConfig {
    /// Nameservers; the system's when empty.
    pub servers: Vec<SocketAddr>,
    /// Time to wait for one answer.
    pub timeout: Duration,
    /// Addresses resolved at once.
    pub concurrency: usize,
    /// The cache file; `None` keeps answers in memory only.
    pub cache: Option<PathBuf>,
}

impl EvidenceConfig {
    /// From command-line flags: nameservers as written (`IP[:PORT]`; the
    /// system's when none), the timeout in seconds (0.1 s to an hour), the
    /// concurrency (at least 1), and the cache file.
    pub fn from_flags(
        servers: &[String],
        timeout_secs: f64,
        concurrency: usize,
        cache: Option<PathBuf>,
    ) -> Result<EvidenceConfig, Error> {
        Ok(EvidenceConfig {
            servers: crate::parse_nameservers(servers)?,
            timeout: Duration::try_from_secs_f64(timeout_secs.clamp(0.1, 3600.0))
                .map_err(|_| Error::Config(format!("{timeout_secs} is not a timeout")))?,
            concurrency: concurrency.max(1),
            cache,
        })
    }
}

/// Where FCrDNS evidence comes from, with its persisted cache.
#[derive(Debug)]
pub struct DnsEvidence {
    fcrdns: Fcrdns<HickoryLookup>,
    cache: Option<PathBuf>,
}

impl DnsEvidence {
    /// Sets the resolver up (inside a Tokio runtime) and loads the cache
    /// (none yet is an empty cache). A file at the cache's path that is not
    /// a botscope DNS cache is an error: it is never overwritten (botscope
    /// writes its cache atomically, so its own is never half-written).
    pub async fn new(config: &EvidenceConfig) -> Result<DnsEvidence, Error> {
        let lookup = HickoryLookup::new(&config.servers, config.timeout)?;
        // The answers of these nameservers only: a shared file holds each
        // resolver's apart.
        let scope = crate::cache::resolver_scope(&config.servers);
        let cache = match &config.cache {
            Some(p) => {
                let path = p.clone();
                tokio::task::spawn_blocking(move || Cache::load(&path))
                    .await
                    .map_err(|e| Error::Cache(e.to_string()))??
            }
            None => Cache::default(),
        }
        .scoped(&scope);
        Ok(DnsEvidence {
            // The PTR query, the forward queries (A, then AAAA) at once,
            // and a check of the domains after a negative answer.
            fcrdns: Fcrdns::new(lookup, cache, config.concurrency.max(1))
                .with_deadline(config.timeout.saturating_mul(4)),
            cache: config.cache.clone(),
        })
    }

    /// Evidence for each distinct address, checked against its domains
    /// (as [`botscope_botid::dns_questions`] gives them), then the cache
    /// saved, merged with what other runs saved meanwhile. A cache that
    /// cannot be saved is reported beside the evidence.
    pub async fn gather(
        &self,
        questions: &[(IpAddr, Vec<String>)],
    ) -> (HashMap<IpAddr, FcrdnsEvidence>, Option<Error>) {
        let ev = self.fcrdns.evidence_batch(questions).await;
        let problem = match &self.cache {
            Some(path) => {
                let mut cache = self.fcrdns.cache().clone();
                let path = path.clone();
                match tokio::task::spawn_blocking(move || cache.save(&path)).await {
                    Ok(r) => r.err(),
                    Err(e) => Some(Error::Cache(e.to_string())),
                }
            }
            None => None,
        };
        (ev, problem)
    }
}
