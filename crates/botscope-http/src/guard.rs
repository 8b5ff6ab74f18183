//! Which addresses a harvest connects to: public unicast only, by default.
//! A DNS answer pointing anywhere else (loopback, private networks,
//! link-local, multicast, documentation, reserved space) is recorded as
//! refused, never connected to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not a public unicast address, or `None` when it is.
pub fn not_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_problem(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_problem(v4);
            }
            v6_problem(v6)
        }
    }
}

fn v4_problem(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() {
        "private"
    } else if ip.is_link_local() {
        "link-local"
    } else if ip.is_multicast() {
        "multicast"
    } else if ip.is_broadcast() || a >= 240 {
        "reserved"
    } else if a == 0 {
        "this-network"
    } else if a == 100 && (64..128).contains(&b) {
        "shared (carrier-grade NAT)"
    } else if (a == 192 && b == 0 && c == 2)
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
    {
        "documentation"
    } else if a == 198 && (18..20).contains(&b) {
        "benchmarking"
    } else if a == 192 && b == 0 && c == 0 {
        "protocol assignments"
    } else {
        return None;
    })
}

fn v6_problem(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_unspecified() {
        "unspecified"
    } else if ip.is_multicast() {
        "multicast"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "link-local"
    } else if s[0] & 0xfe00 == 0xfc00 {
        "private (unique local)"
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        "documentation"
    } else if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // The well-known NAT64 prefix 64:ff9b::/96 (RFC 6052): judge the
        // embedded IPv4 address.
        return v4_problem(v4_at(s[6], s[7])).map(|_| "NAT64 of a non-public IPv4 address");
    } else if s[0] == 0x0064 && s[1] == 0xff9b {
        // 64:ff9b:1::/48 (RFC 8215) is for local use, its embedding not
        // fixed: never a public destination.
        "local-use NAT64"
    } else if s[0] == 0x2002 {
        // 6to4 (RFC 3056): the IPv4 address follows the prefix.
        return v4_problem(v4_at(s[1], s[2])).map(|_| "6to4 of a non-public IPv4 address");
    } else if s[0] == 0x2001 && s[1] == 0 {
        // Teredo (RFC 4380): the server's address, and the client's
        // obfuscated (inverted) in the last 32 bits.
        let server = v4_at(s[2], s[3]);
        let client = v4_at(!s[6], !s[7]);
        if v4_problem(server).is_some() || v4_problem(client).is_some() {
            "Teredo of a non-public IPv4 address"
        } else {
            return None;
        }
    } else if s[0] & 0xe000 != 0x2000 {
        // Outside 2000::/3, the global unicast space.
        "reserved"
    } else {
        return None;
    })
}

fn v4_at(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let bad = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.1.1",
            "224.0.0.1",
            "255.255.255.255",
            "0.1.2.3",
            "100.64.0.1",
            "192.0.2.7",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "100::1",
            // Addresses that embed a non-public IPv4 address.
            "2002:7f00:1::1",                       // 6to4 of 127.0.0.1
            "2002:a00:1::1",                        // 6to4 of 10.0.0.1
            "2002:c0a8:101::",                      // 6to4 of 192.168.1.1
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
            "2001:0:a00:1:8000:63bf:3fff:fdd2",     // Teredo, server 10.0.0.1
            "64:ff9b:1::a00:1",                     // local-use NAT64
            "64:ff9b:1:7f00:1::",                   // local-use NAT64, /48 embedding of 127.0.0.1
        ];
        for s in bad {
            let ip: IpAddr = s.parse().expect(s);
            assert!(not_public(ip).is_some(), "{s}");
        }
        for s in [
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::808:808",
            "2002:808:808::1",                      // 6to4 of 8.8.8.8
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8
        ] {
            let ip: IpAddr = s.parse().expect(s);
            assert_eq!(not_public(ip), None, "{s}");
        }
    }
}

/// Why [`resolve_guarded`] gave no address.
#[derive(Debug)]
pub(crate) enum Unresolved {
    /// The name did not resolve in time, or to nothing.
    Fetch(crate::FetchError),
    /// One of its addresses is one the guard refuses.
    Private(IpAddr, &'static str),
}

/// The address to connect to for `host` (a name, or an address written
/// as one), resolved before `deadline`; unless `allow_private`, every
/// address it resolves to must be public (a name that also points inside
/// is not connected to at all).
pub(crate) async fn resolve_guarded(
    host: &str,
    port: u16,
    deadline: std::time::Instant,
    allow_private: bool,
) -> Result<IpAddr, Unresolved> {
    use crate::FetchError;
    let ips: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::time::timeout_at(deadline.into(), tokio::net::lookup_host((host, port)))
            .await
            .map_err(|_| Unresolved::Fetch(FetchError::Timeout(format!("resolving {host}"))))?
            .map_err(|e| Unresolved::Fetch(FetchError::Dns(format!("{host}: {e}"))))?
            .map(|a| a.ip())
            .collect(),
    };
    if !allow_private {
        for ip in &ips {
            if let Some(why) = not_public(*ip) {
                return Err(Unresolved::Private(*ip, why));
            }
        }
    }
    ips.first()
        .copied()
        .ok_or_else(|| Unresolved::Fetch(FetchError::Dns(format!("{host} has no address"))))
}
