//! Which nameservers to ask: given on the command line (`IP`, `IP:PORT`,
//! `[IPv6]:PORT`), or the system's (hickory's reading of resolv.conf and
//! its equivalents on other systems).

use std::net::{IpAddr, SocketAddr};

use crate::Error;

/// `IP` (port 53), `IP:PORT` or `[IPv6]:PORT`.
pub fn parse_nameserver(s: &str) -> Result<SocketAddr, Error> {
    let t = s.trim();
    t.parse::<SocketAddr>()
        .or_else(|_| t.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| Error::Nameserver(s.to_owned()))
}

/// Every value of a repeatable `--dns` flag.
pub fn parse_nameservers<S: AsRef<str>>(values: &[S]) -> Result<Vec<SocketAddr>, Error> {
    values
        .iter()
        .map(|v| parse_nameserver(v.as_ref()))
        .collect()
}

/// The system's nameservers.
pub fn system_nameservers() -> Result<Vec<SocketAddr>, Error> {
    let (config, _) = hickory_resolver::system_conf::read_system_conf()
        .map_err(|e| Error::System(e.to_string()))?;
    let mut out: Vec<SocketAddr> = config
        .name_servers()
        .iter()
        .map(|ns| {
            let port = ns.connections.first().map_or(53, |c| c.port);
            SocketAddr::new(ns.ip, port)
        })
        .collect();
    out.dedup();
    if out.is_empty() {
        return Err(Error::System("it names no nameserver".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nameserver_forms() {
        let a = |s: &str| parse_nameserver(s).ok();
        assert_eq!(a("127.0.0.1"), Some(SocketAddr::from(([127, 0, 0, 1], 53))));
        assert_eq!(
            a(" 127.0.0.1:5353 "),
            Some(SocketAddr::from(([127, 0, 0, 1], 5353)))
        );
        assert_eq!(a("::1"), "[::1]:53".parse().ok());
        assert_eq!(a("[::1]:5300"), "[::1]:5300".parse().ok());
        assert_eq!(a("dns.example"), None);
        assert_eq!(
            parse_nameserver("1.2.3.4:x").map_err(|e| e.to_string()),
            Err("\"1.2.3.4:x\" is not a nameserver address (IP or IP:PORT)".to_owned())
        );
    }
}
