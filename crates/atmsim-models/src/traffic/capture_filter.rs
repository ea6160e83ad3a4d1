//! Packet filters for captures (`trace` parameter `capture_filter`): which of a
//! capture's packets to keep, written as tcpdump writes them (the pcap-filter
//! language, a subset of its primitives), so that one flow of a LAN capture — a host's
//! traffic, one TCP connection, the UDP datagrams of one port — can drive one VC.
//!
//! Primitives (on IPv4 and IPv6 packets; anything else, ARP say, matches none):
//!
//! | primitive | keeps |
//! |---|---|
//! | `[src\|dst] host ADDR`, `[src\|dst] ADDR` | packets from, to, or from or to the address |
//! | `[src\|dst] net ADDR/LEN` | the same for a prefix |
//! | `[src\|dst] port N`, `[src\|dst] portrange N-M` | TCP or UDP packets with that source, destination or either port (first fragments only: later ones carry no port) |
//! | `ip`, `ip6`, `tcp`, `udp`, `icmp`, `icmp6`, `proto N` | by network protocol, or by the IP protocol (IPv6: the first next-header) |
//! | `tcp port 80`, `udp dst port 53`, … | a transport protocol before `port` or `portrange` narrows it |
//!
//! combined with `not` (`!`), `and` (`&&`) and `or` (`||`) and parentheses. As in
//! tcpdump, `not` binds tightest and `and` and `or` have the same precedence and group
//! from the left (`a or b and c` is `(a or b) and c`). As in tcpdump, a bare address,
//! prefix, port or range after `and` or `or` (or after `not` there) takes the qualifiers
//! of the primitive before it: `host a or b` is `host a or host b`, `tcp dst port 80 or
//! 443` is `tcp dst port 80 or tcp dst port 443`, `host a and not b` is `host a and not
//! host b`; after a primitive with no such qualifiers (`tcp`, `ip`, `proto 17`) a bare
//! address is a host. IPv6 extension headers are not walked: `tcp` and `port` look at
//! the fixed header's next header only.
//!
//! The fields are read at their offsets in the captured octets rather than through the
//! wire crate's parsers: a capture holds packets cut at a snap length and, on the
//! sending host, with checksums left to the adapter, which a byte-exact parser rightly
//! refuses and a filter must still see.

use std::net::IpAddr;

/// Which end of a packet a host, net or port primitive looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum End {
    Src,
    Dst,
    Either,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Prim {
    Net(End, IpAddr, u8),
    Ports(End, u16, u16),
    /// The network layer: IPv4 (false) or IPv6 (true).
    Family(bool),
    /// An IP protocol number (tcp 6, udp 17, icmp 1, icmp6 58).
    Proto(u8),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Expr {
    Prim(Prim),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

/// A compiled filter; `Display` gives its source text back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Filter {
    text: String,
    expr: Expr,
}

impl std::fmt::Display for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The fields of an IP packet a filter reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpView {
    pub v6: bool,
    pub proto: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// Source and destination port (TCP and UDP, first fragments with the ports captured).
    pub ports: Option<(u16, u16)>,
}

impl IpView {
    /// Reads an IPv4 or IPv6 header at the start of `ip` (the octets after the link
    /// layer); `None` for anything else or a header cut short.
    pub fn read(ip: &[u8]) -> Option<IpView> {
        let version = ip.first()? >> 4;
        let (v6, proto, src, dst, transport, first) = match version {
            4 => {
                let ihl = usize::from(ip[0] & 0x0F) * 4;
                let h = ip.get(..20)?;
                let offset = u16::from_be_bytes([h[6], h[7]]) & 0x1FFF;
                let src: [u8; 4] = h[12..16].try_into().ok()?;
                let dst: [u8; 4] = h[16..20].try_into().ok()?;
                (false, h[9], IpAddr::from(src), IpAddr::from(dst), ihl, offset == 0)
            }
            6 => {
                let h = ip.get(..40)?;
                let src: [u8; 16] = h[8..24].try_into().ok()?;
                let dst: [u8; 16] = h[24..40].try_into().ok()?;
                (true, h[6], IpAddr::from(src), IpAddr::from(dst), 40, true)
            }
            _ => return None,
        };
        let ports = match (proto, first) {
            (6 | 17, true) => ip.get(transport..transport + 4).map(|p| (u16::from_be_bytes([p[0], p[1]]), u16::from_be_bytes([p[2], p[3]]))),
            _ => None,
        };
        Some(IpView { v6, proto, src, dst, ports })
    }
}

fn in_net(a: IpAddr, net: IpAddr, len: u8) -> bool {
    match (a, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - u32::from(len)) };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if len == 0 { 0 } else { u128::MAX << (128 - u32::from(len)) };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

fn either(end: End, src: bool, dst: bool) -> bool {
    match end {
        End::Src => src,
        End::Dst => dst,
        End::Either => src || dst,
    }
}

impl Prim {
    fn matches(&self, p: &IpView) -> bool {
        match *self {
            Prim::Net(end, net, len) => either(end, in_net(p.src, net, len), in_net(p.dst, net, len)),
            Prim::Ports(end, lo, hi) => p.ports.is_some_and(|(s, d)| either(end, (lo..=hi).contains(&s), (lo..=hi).contains(&d))),
            Prim::Family(v6) => p.v6 == v6,
            Prim::Proto(n) => p.proto == n,
        }
    }
}

impl Expr {
    fn matches(&self, p: Option<&IpView>) -> bool {
        match self {
            Expr::Prim(prim) => p.is_some_and(|p| prim.matches(p)),
            Expr::Not(e) => !e.matches(p),
            Expr::And(a, b) => a.matches(p) && b.matches(p),
            Expr::Or(a, b) => a.matches(p) || b.matches(p),
        }
    }
}

impl Filter {
    /// Whether a packet whose network layer starts `ip` (the octets after its link-layer
    /// header; empty when not captured) passes.
    pub fn matches(&self, ip: &[u8]) -> bool {
        self.expr.matches(IpView::read(ip).as_ref())
    }

    /// Compiles `text`; the error names the word at fault and what would be valid.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let tokens = tokenize(text);
        let mut p = Parser { tokens: &tokens, at: 0, last: None };
        let expr = p.expr()?;
        if let Some(t) = p.peek() {
            return Err(format!("unexpected '{t}' after a complete filter (join primitives with and, or)"));
        }
        Ok(Filter { text: text.trim().to_string(), expr })
    }
}

fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let op = match c {
            '(' | ')' | '!' => Some(c.to_string()),
            '&' | '|' if chars.peek() == Some(&c) => {
                chars.next();
                Some(format!("{c}{c}"))
            }
            _ => None,
        };
        if op.is_some() || c.is_whitespace() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.extend(op);
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

struct Parser<'a> {
    tokens: &'a [String],
    at: usize,
    /// The qualifiers of the last qualified primitive, which a bare value after it takes
    /// (tcpdump's carried qualifiers); `None` after `tcp`, `ip`, `proto N` and the like.
    last: Option<Qual>,
}

/// What a host, net, port or portrange primitive looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Host,
    Net,
    Port,
    Portrange,
}

/// A primitive's qualifiers: transport protocol (`tcp`, `udp`), end and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Qual {
    transport: Option<u8>,
    end: End,
    kind: Kind,
}

const PRIMITIVES: &str = "[src|dst] host ADDR, [src|dst] net ADDR/LEN, [src|dst] port N, [src|dst] portrange N-M, ip, ip6, tcp, udp, icmp, icmp6, proto N";

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(String::as_str)
    }

    fn expected(&self, what: &str) -> String {
        match self.tokens.get(self.at) {
            Some(t) => format!("at '{t}': expected {what}"),
            None => format!("the filter ends where {what} was expected"),
        }
    }

    /// expr := unary (("and" | "&&" | "or" | "||") unary)*, grouped from the left.
    fn expr(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        while let Some(op) = self.peek() {
            let and = match op {
                "and" | "&&" => true,
                "or" | "||" => false,
                _ => break,
            };
            self.at += 1;
            let right = self.unary()?;
            left = if and { Expr::And(Box::new(left), Box::new(right)) } else { Expr::Or(Box::new(left), Box::new(right)) };
        }
        Ok(left)
    }

    /// unary := ("not" | "!") unary | "(" expr ")" | primitive
    fn unary(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some("not" | "!") => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.at += 1;
                let e = self.expr()?;
                if self.peek() != Some(")") {
                    return Err(self.expected("')'"));
                }
                self.at += 1;
                Ok(e)
            }
            _ => self.primitive(),
        }
    }

    fn primitive(&mut self) -> Result<Expr, String> {
        let proto = |n: u8| Expr::Prim(Prim::Proto(n));
        let Some(word) = self.peek().map(str::to_string) else { return Err(self.expected(&format!("a primitive ({PRIMITIVES})"))) };
        let named = match word.as_str() {
            "ip" | "ip6" => Some(Expr::Prim(Prim::Family(word == "ip6"))),
            "icmp" => Some(proto(1)),
            "icmp6" => Some(proto(58)),
            _ => None,
        };
        if let Some(e) = named {
            self.at += 1;
            self.last = None;
            return Ok(e);
        }
        if word == "proto" {
            self.at += 1;
            let n = self.peek().map(str::parse::<u8>);
            let Some(Ok(n)) = n else { return Err(self.expected("an IP protocol number 0-255 after 'proto'")) };
            self.at += 1;
            self.last = None;
            return Ok(proto(n));
        }
        let transport = match word.as_str() {
            "tcp" => Some(6),
            "udp" => Some(17),
            _ => None,
        };
        if let Some(n) = transport {
            self.at += 1;
            // "tcp port 80", "udp src portrange 5000-5010": the protocol narrows the port
            let follows = matches!(self.peek(), Some("port" | "portrange"))
                || (matches!(self.peek(), Some("src" | "dst")) && matches!(self.tokens.get(self.at + 1).map(String::as_str), Some("port" | "portrange")));
            if !follows {
                self.last = None;
                return Ok(proto(n));
            }
        }
        self.qualified(transport)
    }

    /// [src|dst] (host ADDR | net ADDR/LEN | port N | portrange N-M | ADDR), or a bare
    /// value taking the qualifiers carried from the primitive before.
    fn qualified(&mut self, transport: Option<u8>) -> Result<Expr, String> {
        let end = match self.peek() {
            Some("src") => End::Src,
            Some("dst") => End::Dst,
            _ => End::Either,
        };
        if end != End::Either {
            self.at += 1;
        }
        let kind = match self.peek() {
            Some("host") => Some(Kind::Host),
            Some("net") => Some(Kind::Net),
            Some("port") => Some(Kind::Port),
            Some("portrange") => Some(Kind::Portrange),
            _ => None,
        };
        let qual = match (kind, self.last) {
            (Some(kind), _) => {
                self.at += 1;
                Qual { transport, end, kind }
            }
            // a bare value after and/or: the last primitive's qualifiers (tcpdump)
            (None, Some(last)) if end == End::Either && transport.is_none() && self.bare_value(last.kind) => last,
            (None, _) => {
                if self.peek().and_then(|t| t.parse::<IpAddr>().ok()).is_none() {
                    let what = if end == End::Either { format!("a primitive ({PRIMITIVES})") } else { "host, net, port, portrange or an address after 'src' or 'dst'".to_string() };
                    return Err(self.expected(&what));
                }
                Qual { transport, end, kind: Kind::Host }
            }
        };
        let e = self.value(qual)?;
        self.last = Some(qual);
        Ok(e)
    }

    /// Whether the next word is a value of `kind` (what a carried qualifier would take).
    fn bare_value(&self, kind: Kind) -> bool {
        let Some(t) = self.peek() else { return false };
        match kind {
            Kind::Host => t.parse::<IpAddr>().is_ok(),
            Kind::Net => t.split_once('/').is_some_and(|(a, _)| a.parse::<IpAddr>().is_ok()),
            Kind::Port => t.parse::<u16>().is_ok(),
            Kind::Portrange => t.split_once('-').is_some_and(|(lo, hi)| lo.parse::<u16>().is_ok() && hi.parse::<u16>().is_ok()),
        }
    }

    /// The value after a qualifier, as the primitive it makes.
    fn value(&mut self, q: Qual) -> Result<Expr, String> {
        let Qual { transport, end, kind } = q;
        let prim = match kind {
            Kind::Host => {
                let a = self.address("an IPv4 or IPv6 address after 'host'")?;
                Prim::Net(end, a, if a.is_ipv4() { 32 } else { 128 })
            }
            Kind::Net => {
                let bad = "ADDR/LEN after 'net', e.g. 10.1.0.0/16";
                let Some(t) = self.peek().map(str::to_string) else { return Err(self.expected(bad)) };
                let (a, len) = t.split_once('/').ok_or_else(|| self.expected(bad))?;
                let a: IpAddr = a.parse().map_err(|_| self.expected(bad))?;
                let max = if a.is_ipv4() { 32 } else { 128 };
                let len: u8 = len.parse().ok().filter(|&l| l <= max).ok_or_else(|| self.expected(&format!("a prefix length 0-{max} after '/'")))?;
                self.at += 1;
                Prim::Net(end, a, len)
            }
            Kind::Port => {
                let n = self.number("a port number 0-65535 after 'port'")?;
                Prim::Ports(end, n, n)
            }
            Kind::Portrange => {
                let bad = "a port range N-M (0-65535, N <= M) after 'portrange'";
                let t = self.peek().map(str::to_string).ok_or_else(|| self.expected(bad))?;
                let (lo, hi) = t.split_once('-').ok_or_else(|| self.expected(bad))?;
                match (lo.parse::<u16>(), hi.parse::<u16>()) {
                    (Ok(lo), Ok(hi)) if lo <= hi => {
                        self.at += 1;
                        Prim::Ports(end, lo, hi)
                    }
                    _ => return Err(self.expected(bad)),
                }
            }
        };
        Ok(match transport {
            Some(n) => Expr::And(Box::new(Expr::Prim(Prim::Proto(n))), Box::new(Expr::Prim(prim))),
            None => Expr::Prim(prim),
        })
    }

    fn address(&mut self, what: &str) -> Result<IpAddr, String> {
        match self.peek().map(str::parse::<IpAddr>) {
            Some(Ok(a)) => {
                self.at += 1;
                Ok(a)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn number(&mut self, what: &str) -> Result<u16, String> {
        match self.peek().map(str::parse::<u16>) {
            Some(Ok(n)) => {
                self.at += 1;
                Ok(n)
            }
            _ => Err(self.expected(what)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 header (20 octets) and, for TCP and UDP, the two ports.
    fn v4(src: [u8; 4], dst: [u8; 4], proto: u8, ports: (u16, u16), frag_offset: u16) -> Vec<u8> {
        let mut p = vec![0x45, 0, 0, 40, 0, 0, (frag_offset >> 8) as u8, frag_offset as u8, 64, proto, 0, 0];
        p.extend(src);
        p.extend(dst);
        p.extend(ports.0.to_be_bytes());
        p.extend(ports.1.to_be_bytes());
        p.extend([0u8; 16]);
        p
    }

    fn v6(src: &str, dst: &str, next: u8, ports: (u16, u16)) -> Vec<u8> {
        let mut p = vec![0x60, 0, 0, 0, 0, 20, next, 64];
        p.extend(src.parse::<std::net::Ipv6Addr>().unwrap().octets());
        p.extend(dst.parse::<std::net::Ipv6Addr>().unwrap().octets());
        p.extend(ports.0.to_be_bytes());
        p.extend(ports.1.to_be_bytes());
        p
    }

    fn keeps(filter: &str, packet: &[u8]) -> bool {
        Filter::parse(filter).unwrap_or_else(|e| panic!("{filter}: {e}")).matches(packet)
    }

    #[test]
    fn hosts_nets_and_ends() {
        let p = v4([10, 0, 0, 1], [192, 168, 1, 7], 6, (1234, 80), 0);
        for (f, want) in [
            ("host 10.0.0.1", true),
            ("host 192.168.1.7", true),
            ("host 10.0.0.2", false),
            ("src host 10.0.0.1", true),
            ("dst host 10.0.0.1", false),
            ("dst 192.168.1.7", true),
            ("10.0.0.1", true),
            ("net 192.168.0.0/16", true),
            ("src net 192.168.0.0/16", false),
            ("net 10.0.0.0/31", true),
            ("net 0.0.0.0/0", true),
            ("host ::1", false),
        ] {
            assert_eq!(keeps(f, &p), want, "{f}");
        }
    }

    #[test]
    fn protocols_and_ports() {
        let tcp = v4([10, 0, 0, 1], [10, 0, 0, 2], 6, (1234, 80), 0);
        let udp = v4([10, 0, 0, 1], [10, 0, 0, 2], 17, (53, 5000), 0);
        let icmp = v4([10, 0, 0, 1], [10, 0, 0, 2], 1, (0x0800, 0), 0);
        let later_fragment = v4([10, 0, 0, 1], [10, 0, 0, 2], 17, (53, 5000), 185);
        for (f, pkt, want) in [
            ("tcp", &tcp, true),
            ("udp", &tcp, false),
            ("port 80", &tcp, true),
            ("src port 80", &tcp, false),
            ("tcp port 80", &tcp, true),
            ("udp port 80", &tcp, false),
            ("tcp dst port 80", &tcp, true),
            ("portrange 1000-2000", &tcp, true),
            ("dst portrange 1000-2000", &tcp, false),
            ("udp src port 53", &udp, true),
            ("port 53", &later_fragment, false),
            ("udp", &later_fragment, true),
            ("icmp", &icmp, true),
            ("port 2048", &icmp, false),
            ("proto 17", &udp, true),
            ("ip", &udp, true),
            ("ip6", &udp, false),
        ] {
            assert_eq!(keeps(f, pkt), want, "{f}");
        }
    }

    #[test]
    fn ipv6_packets() {
        let p = v6("2001:db8::1", "2001:db8:1::2", 17, (5000, 53));
        for (f, want) in [
            ("ip6", true),
            ("ip", false),
            ("host 2001:db8::1", true),
            ("dst net 2001:db8:1::/48", true),
            ("src net 2001:db8:1::/48", false),
            ("udp dst port 53", true),
            ("host 10.0.0.1", false),
        ] {
            assert_eq!(keeps(f, &p), want, "{f}");
        }
    }

    #[test]
    fn operators_group_as_tcpdumps() {
        let p = v4([10, 0, 0, 1], [10, 0, 0, 2], 6, (1234, 80), 0);
        for (f, want) in [
            ("tcp and port 80", true),
            ("tcp && port 81", false),
            ("udp or port 80", true),
            ("not udp", true),
            ("!tcp", false),
            ("not (udp or port 81)", true),
            // and, or: equal precedence, from the left: (tcp or udp) and port 81
            ("tcp or udp and port 81", false),
            ("tcp or (udp and port 81)", true),
            ("host 10.0.0.1 and not dst port 22", true),
        ] {
            assert_eq!(keeps(f, &p), want, "{f}");
        }
    }

    #[test]
    fn a_bare_value_takes_the_qualifiers_before_it_as_in_tcpdump() {
        let p = v4([10, 0, 0, 1], [10, 0, 0, 2], 6, (1234, 443), 0);
        let u = v4([10, 0, 0, 1], [10, 0, 0, 2], 17, (1234, 443), 0);
        for (f, pkt, want) in [
            ("host 10.0.0.9 or 10.0.0.2", &p, true),
            ("host 10.0.0.9 or 10.0.0.8", &p, false),
            // the end is carried too: src host 10.0.0.2 does not match
            ("src host 10.0.0.9 or 10.0.0.2", &p, false),
            ("src 10.0.0.9 or 10.0.0.1", &p, true),
            ("port 80 or 443", &p, true),
            ("dst port 80 or 1234", &p, false),
            // the transport is carried: udp dst port 443
            ("tcp dst port 80 or 443", &p, true),
            ("tcp dst port 80 or 443", &u, false),
            ("udp port 53 or 443", &u, true),
            ("net 192.168.0.0/16 or 10.0.0.0/8", &p, true),
            ("portrange 1-10 or 400-500", &p, true),
            // not keeps the qualifier and negates the primitive: host a and not host b
            ("host 10.0.0.1 and not 10.0.0.2", &p, false),
            ("host 10.0.0.1 and not 10.0.0.3", &p, true),
            // after a primitive without qualifiers, an address is a host
            ("udp or 10.0.0.2", &p, true),
            ("tcp port 80 or (443)", &p, true),
        ] {
            assert_eq!(keeps(f, pkt), want, "{f}");
        }
        // a carried kind wants its own kind of value
        for (f, msg) in [("host 10.0.0.1 or 80", "at '80': expected a primitive"), ("tcp or 443", "at '443': expected a primitive")] {
            let e = Filter::parse(f).err().unwrap_or_else(|| panic!("{f} parsed"));
            assert!(e.contains(msg), "{f}: {e}");
        }
    }

    #[test]
    fn non_ip_and_short_packets_match_no_primitive() {
        let arp = [0x00, 0x01, 0x08, 0x00, 6, 4, 0, 1];
        assert!(!keeps("ip or ip6", &arp));
        assert!(keeps("not ip", &arp));
        assert!(!keeps("ip", &[0x45, 0, 0]));
        assert!(!keeps("ip", &[]));
        // a TCP header cut off before its ports: the packet is TCP but has no port
        let mut cut = v4([10, 0, 0, 1], [10, 0, 0, 2], 6, (1, 2), 0);
        cut.truncate(21);
        assert!(keeps("tcp", &cut) && !keeps("port 1", &cut));
    }

    #[test]
    fn errors_name_the_word_at_fault() {
        for (f, msg) in [
            ("", "the filter ends where a primitive"),
            ("host", "the filter ends where an IPv4 or IPv6 address after 'host'"),
            ("host 10.0.0.300", "at '10.0.0.300': expected an IPv4 or IPv6 address"),
            ("net 10.0.0.0", "at '10.0.0.0': expected ADDR/LEN"),
            ("net 10.0.0.0/33", "expected a prefix length 0-32"),
            ("port http", "at 'http': expected a port number"),
            ("portrange 9-3", "expected a port range N-M"),
            ("tcp port 80 udp", "unexpected 'udp' after a complete filter"),
            ("(tcp or udp", "the filter ends where ')' was expected"),
            ("(tcp or udp port", "the filter ends where a port number"),
            ("(tcp) udp", "unexpected 'udp'"),
            ("src tcp", "host, net, port, portrange or an address after 'src' or 'dst'"),
            ("proto x", "at 'x': expected an IP protocol number"),
            ("vlan 10", "at 'vlan': expected a primitive ([src|dst] host ADDR"),
        ] {
            let e = Filter::parse(f).err().unwrap_or_else(|| panic!("{f} parsed"));
            assert!(e.contains(msg), "{f}: {e}");
        }
        assert_eq!(Filter::parse("  tcp port 80 ").unwrap().to_string(), "tcp port 80");
    }
}
