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
    } else if s[0] == 0x0064 && s[1] == 0xff9b {
        // NAT64: judge the embedded IPv4 address.
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_problem(v4);
    } else if s[0] & 0xe000 != 0x2000 {
        // Outside 2000::/3, the global unicast space.
        "reserved"
    } else {
        return None;
    })
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
        ] {
            let ip: IpAddr = s.parse().expect(s);
            assert_eq!(not_public(ip), None, "{s}");
        }
    }
}
