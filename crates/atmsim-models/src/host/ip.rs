//! IPv4 sizes and fragmentation (RFC 791), and how IP facts ride in cell metadata.

use crate::cell::FLAG_CLP;

/// Octets of an IPv4 header without options.
pub const IP_HEADER: usize = 20;
/// Octets of an ICMP echo header.
pub const ICMP_HEADER: usize = 8;
/// Octets of a UDP header.
pub const UDP_HEADER: usize = 8;
/// Octets of LLC/SNAP encapsulation (RFC 1483).
pub const LLC_SNAP: usize = 8;

/// Cell flag: the cell belongs to the last fragment of its datagram (IP MF = 0).
pub const FLAG_LAST_FRAGMENT: u8 = FLAG_CLP << 1;

/// Datagram ids use 24 bits.
pub const ID_MASK: u32 = (1 << 24) - 1;

/// What a datagram carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    EchoRequest,
    EchoReply,
    Udp,
    /// A TCP segment (never fragmented: the MSS fits the MTU).
    Tcp,
}

/// `kind << 30 | id << 6 | fragment` (fragment < 64: datagrams up to 64 fragments).
pub fn encode_seq(kind: Kind, id: u32, fragment: u8) -> u32 {
    let k = match kind {
        Kind::EchoRequest => 0,
        Kind::EchoReply => 1,
        Kind::Udp => 2,
        Kind::Tcp => 3,
    };
    (k << 30) | ((id & ID_MASK) << 6) | (fragment as u32 & 0x3f)
}

pub fn decode_seq(seq: u32) -> (Kind, u32, u8) {
    let kind = match seq >> 30 {
        0 => Kind::EchoRequest,
        1 => Kind::EchoReply,
        2 => Kind::Udp,
        _ => Kind::Tcp,
    };
    (kind, (seq >> 6) & ID_MASK, (seq & 0x3f) as u8)
}

/// Total lengths (header included) of the IP packets carrying `payload` octets of
/// transport data (ICMP or UDP header included) with this MTU: RFC 791 fragments
/// carry a multiple of 8 data octets, all but the last as many as fit.
pub fn fragment_sizes(payload: usize, mtu: usize) -> Vec<usize> {
    if payload + IP_HEADER <= mtu {
        return vec![payload + IP_HEADER];
    }
    let per = ((mtu - IP_HEADER) / 8) * 8;
    let mut out = Vec::new();
    let mut left = payload;
    while left > per {
        out.push(per + IP_HEADER);
        left -= per;
    }
    out.push(left + IP_HEADER);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aal::aal5::cells_for;

    fn ping_cells(data: usize, mtu: usize) -> usize {
        fragment_sizes(ICMP_HEADER + data, mtu).iter().map(|&l| cells_for(l + LLC_SNAP)).sum()
    }

    #[test]
    fn fragments_follow_rfc791() {
        assert_eq!(fragment_sizes(1480, 1500), vec![1500]);
        assert_eq!(fragment_sizes(1481, 1500), vec![1500, 21]);
        assert_eq!(fragment_sizes(2056, 1500), vec![1500, 596]);
        assert_eq!(fragment_sizes(100, 9180), vec![120]);
    }

    #[test]
    fn ping_cell_counts_with_ip_over_atm() {
        // 64 data octets + 8 ICMP + 20 IP + 8 LLC/SNAP + 8 AAL5 trailer = 108 → 3 cells.
        assert_eq!(ping_cells(64, 9180), 3);
        assert_eq!(ping_cells(1024, 9180), 23);
    }

    #[test]
    fn seq_round_trip() {
        for (k, id, f) in [(Kind::EchoRequest, 0, 0), (Kind::EchoReply, 99, 5), (Kind::Udp, ID_MASK, 63)] {
            assert_eq!(decode_seq(encode_seq(k, id, f)), (k, id, f));
        }
    }
}
