//! [`Lookup`] over hickory-resolver.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::{Resolver, TokioResolver};

use crate::{DnsFailure, Error, Lookup, Timed};

/// How long an answer without records is kept when the server gives no
/// negative TTL.
const DEFAULT_NEGATIVE_TTL: Duration = Duration::from_secs(300);
/// The longest any answer is kept.
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

/// DNS through hickory-resolver, without its own cache (the crate's cache
/// keeps answers across runs).
#[derive(Debug, Clone)]
pub struct HickoryLookup {
    resolver: TokioResolver,
}

impl HickoryLookup {
    /// Asks `servers` (`IP:PORT`), or the system's nameservers when empty.
    /// Must be called inside a Tokio runtime.
    pub fn new(servers: &[SocketAddr], timeout: Duration) -> Result<HickoryLookup, Error> {
        let mut builder = if servers.is_empty() {
            Resolver::builder_tokio().map_err(|e| {
                Error::Config(format!(
                    "failed to read the system's DNS configuration: {e}"
                ))
            })?
        } else {
            let mut config = ResolverConfig::default();
            for s in servers {
                let mut udp = ConnectionConfig::udp();
                udp.port = s.port();
                let mut tcp = ConnectionConfig::tcp();
                tcp.port = s.port();
                config.add_name_server(NameServerConfig::new(s.ip(), true, vec![udp, tcp]));
            }
            Resolver::builder_with_config(
                config,
                hickory_resolver::net::runtime::TokioRuntimeProvider::default(),
            )
        };
        let opts: &mut ResolverOpts = builder.options_mut();
        opts.timeout = timeout;
        opts.attempts = 1;
        opts.cache_size = 0;
        opts.ndots = 0;
        let resolver = builder
            .build()
            .map_err(|e| Error::Config(format!("failed to set up the resolver: {e}")))?;
        Ok(HickoryLookup { resolver })
    }
}

fn failure(e: &NetError) -> DnsFailure {
    match e {
        NetError::Timeout => DnsFailure::Timeout,
        NetError::Dns(DnsError::ResponseCode(ResponseCode::ServFail)) => DnsFailure::ServerFailure,
        NetError::Dns(DnsError::ResponseCode(ResponseCode::Refused)) => DnsFailure::Refused,
        NetError::Dns(DnsError::NoRecordsFound(nr))
            if nr.response_code == ResponseCode::ServFail =>
        {
            DnsFailure::ServerFailure
        }
        NetError::Dns(DnsError::NoRecordsFound(nr))
            if nr.response_code == ResponseCode::Refused =>
        {
            DnsFailure::Refused
        }
        other => DnsFailure::Other(other.to_string()),
    }
}

/// An empty answer (NXDOMAIN or no data) is an answer, kept for its
/// negative TTL; anything else that is not an answer is a failure.
fn empty_or_failure<T>(e: &NetError) -> Timed<T> {
    if let NetError::Dns(DnsError::NoRecordsFound(nr)) = e
        && matches!(
            nr.response_code,
            ResponseCode::NXDomain | ResponseCode::NoError
        )
    {
        let ttl = nr
            .negative_ttl
            .map_or(DEFAULT_NEGATIVE_TTL, |t| Duration::from_secs(u64::from(t)));
        return Timed {
            answer: Ok(Vec::new()),
            ttl: ttl.min(MAX_TTL),
        };
    }
    Timed {
        answer: Err(failure(e)),
        ttl: Duration::ZERO,
    }
}

impl Lookup for HickoryLookup {
    async fn exists(&self, name: &str) -> Result<bool, DnsFailure> {
        let fqdn = format!("{}.", name.trim_end_matches('.'));
        match self.resolver.lookup(fqdn.as_str(), RecordType::SOA).await {
            Ok(_) => Ok(true),
            Err(NetError::Dns(DnsError::NoRecordsFound(nr))) => match nr.response_code {
                ResponseCode::NoError => Ok(true),
                ResponseCode::NXDomain => Ok(false),
                _ => Err(failure(&NetError::Dns(DnsError::NoRecordsFound(nr)))),
            },
            Err(e) => Err(failure(&e)),
        }
    }

    async fn reverse(&self, ip: IpAddr) -> Timed<String> {
        match self.resolver.reverse_lookup(ip).await {
            Ok(lookup) => {
                let mut ttl = MAX_TTL;
                let mut names = Vec::new();
                for r in lookup.answers() {
                    if let RData::PTR(ptr) = &r.data {
                        names.push(ptr.to_string().trim_end_matches('.').to_ascii_lowercase());
                        ttl = ttl.min(Duration::from_secs(u64::from(r.ttl)));
                    }
                }
                Timed {
                    answer: Ok(names),
                    ttl,
                }
            }
            Err(e) => empty_or_failure(&e),
        }
    }

    async fn forward(&self, name: &str) -> Timed<IpAddr> {
        let fqdn = format!("{}.", name.trim_end_matches('.'));
        let mut addrs = Vec::new();
        let mut ttl = MAX_TTL;
        let mut answered = false;
        let mut last = None;
        for v6 in [false, true] {
            let result = if v6 {
                self.resolver.ipv6_lookup(fqdn.as_str()).await
            } else {
                self.resolver.ipv4_lookup(fqdn.as_str()).await
            };
            match result {
                Ok(lookup) => {
                    answered = true;
                    for r in lookup.answers() {
                        match &r.data {
                            RData::A(a) => addrs.push(IpAddr::V4(a.0)),
                            RData::AAAA(a) => addrs.push(IpAddr::V6(a.0)),
                            _ => continue,
                        }
                        ttl = ttl.min(Duration::from_secs(u64::from(r.ttl)));
                    }
                }
                Err(e) => {
                    let t: Timed<IpAddr> = empty_or_failure(&e);
                    match t.answer {
                        Ok(_) => {
                            answered = true;
                            ttl = ttl.min(t.ttl);
                        }
                        Err(f) => last = Some(f),
                    }
                }
            }
        }
        match (answered, last) {
            // One family failing while the other answered is still a
            // failure: the missing records could hold the address.
            (_, Some(f)) if addrs.is_empty() || !answered => Timed {
                answer: Err(f),
                ttl: Duration::ZERO,
            },
            _ => Timed {
                answer: Ok(addrs),
                ttl,
            },
        }
    }
}
