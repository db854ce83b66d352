//! Address classes: which IP addresses are private, loopback, link-local,
//! shared, or cloud metadata endpoints, looking through IPv6 forms that embed
//! an IPv4 address (mapped, NAT64, 6to4).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A class of address that `--block-private` (or, for metadata, the default) refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddrClass {
    /// 169.254.169.254, 169.254.170.2, 100.100.100.200, fd00:ec2::254: refused unless explicitly allowed.
    Metadata,
    Loopback,
    /// 10/8, 172.16/12, 192.168/16.
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// Carrier-grade NAT, 100.64/10.
    SharedCgnat,
    /// fc00::/7.
    UniqueLocal,
    /// 0.0.0.0/8, ::, 255.255.255.255, multicast, reserved 240/4.
    Unroutable,
}

impl AddrClass {
    /// The class as the rule name in messages.
    pub fn describe(self) -> &'static str {
        match self {
            AddrClass::Metadata => "a cloud metadata address",
            AddrClass::Loopback => "a loopback address",
            AddrClass::Private => "a private address",
            AddrClass::LinkLocal => "a link-local address",
            AddrClass::SharedCgnat => "a shared (carrier-grade NAT) address",
            AddrClass::UniqueLocal => "a private (unique local) IPv6 address",
            AddrClass::Unroutable => "an unroutable address",
        }
    }
}

impl std::fmt::Display for AddrClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// Host names that reach a cloud metadata service.
pub const METADATA_NAMES: &[&str] =
    &["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"];

/// True for a metadata host name (lower-case, with or without a trailing dot).
pub fn is_metadata_name(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    METADATA_NAMES.iter().any(|n| h.eq_ignore_ascii_case(n))
}

/// The class of `ip`, or `None` for an ordinary public address.
pub fn classify(ip: IpAddr) -> Option<AddrClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddrClass> {
    let o = ip.octets();
    if [[169, 254, 169, 254], [169, 254, 170, 2], [100, 100, 100, 200]].contains(&o) {
        Some(AddrClass::Metadata)
    } else if o[0] == 127 {
        Some(AddrClass::Loopback)
    } else if ip.is_private() {
        Some(AddrClass::Private)
    } else if ip.is_link_local() {
        Some(AddrClass::LinkLocal)
    } else if o[0] == 100 && (64..128).contains(&o[1]) {
        Some(AddrClass::SharedCgnat)
    } else if o[0] == 0 || ip.is_broadcast() || ip.is_multicast() || o[0] >= 240 {
        Some(AddrClass::Unroutable)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddrClass> {
    let s = ip.segments();
    // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002:AABB:CCDD::/16).
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return classify_v4(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8));
    }
    if s[0] == 0x2002 {
        return classify_v4(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some(AddrClass::Metadata)
    } else if ip.is_loopback() {
        Some(AddrClass::Loopback)
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some(AddrClass::Unroutable)
    } else if s[0] & 0xfe00 == 0xfc00 {
        Some(AddrClass::UniqueLocal)
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some(AddrClass::LinkLocal)
    } else if s[..6] == [0, 0, 0, 0, 0, 0] && (s[6] != 0 || s[7] > 1) {
        // Deprecated IPv4-compatible form ::a.b.c.d.
        classify_v4(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddrClass> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn classes() {
        use AddrClass::*;
        for (ip, want) in [
            ("169.254.169.254", Some(Metadata)),
            ("fd00:ec2::254", Some(Metadata)),
            ("::ffff:169.254.169.254", Some(Metadata)),
            ("64:ff9b::a9fe:a9fe", Some(Metadata)),
            ("127.0.0.1", Some(Loopback)),
            ("127.8.9.10", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::127.0.0.1", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.0.1", Some(Private)),
            ("2002:c0a8:0101::1", Some(Private)),
            ("169.254.1.1", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("100.64.0.1", Some(SharedCgnat)),
            ("fd12:3456::1", Some(UniqueLocal)),
            ("0.0.0.0", Some(Unroutable)),
            ("::", Some(Unroutable)),
            ("224.0.0.1", Some(Unroutable)),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
        assert!(is_metadata_name("Metadata.Google.Internal."));
        assert!(!is_metadata_name("example.com"));
    }
}
