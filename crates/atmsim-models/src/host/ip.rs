//! IPv4 sizes and fragmentation (RFC 791) and the IP parts a composite model holds:
//! [`Ident`] (the identification counter), [`fragment`] (a datagram into IP packets,
//! each with its headers as a payload) and [`IpReassembly`] (fragments in, whole
//! datagrams out, timed-out ones counted).

use std::collections::VecDeque;

use atmsim_kernel::probe::Report;
use atmsim_kernel::{SimDuration, SimTime};
use atmsim_wire::ipv4::{Ipv4Repr, PROTOCOL_ICMP, PROTOCOL_TCP, PROTOCOL_UDP};

use crate::aal::aal5;
use crate::payload::L4;

/// Octets of an IPv4 header without options.
pub const IP_HEADER: usize = 20;
/// Octets of an ICMP echo header.
pub const ICMP_HEADER: usize = 8;
/// Octets of a UDP header.
pub const UDP_HEADER: usize = 8;
/// Octets of LLC/SNAP encapsulation (RFC 1483).
pub const LLC_SNAP: usize = 8;

/// Hosts have no IP addresses of their own yet: whoever starts an exchange (a ping, a
/// UDP blaster, a TCP data sender) is 10.0.0.1 ...
pub const SENDER: [u8; 4] = [10, 0, 0, 1];
/// ... and the host at the far end of its PVC is 10.0.0.2 (an answer swaps them).
pub const RECEIVER: [u8; 4] = [10, 0, 0, 2];
/// ttcp's port (TCP and UDP): the receiver listens on it.
pub const TTCP_PORT: u16 = 5001;
/// Time to live of the datagrams a host sends (RFC 1700's recommended default).
pub const TTL: u8 = 64;

/// What a datagram that reassembly hands up carries (TCP segments go straight to their
/// connection and never through [`IpReassembly`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    EchoRequest,
    EchoReply,
    Udp,
}

impl Kind {
    /// What a datagram whose first fragment carries `l4` is, if reassembly hands it up.
    pub fn of(l4: &L4) -> Option<Kind> {
        match l4 {
            L4::Echo(e) if e.reply => Some(Kind::EchoReply),
            L4::Echo(_) => Some(Kind::EchoRequest),
            L4::Udp(_) => Some(Kind::Udp),
            L4::Tcp(_) | L4::Continuation => None,
        }
    }
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

/// The AAL5 PDU length in cells of an IP packet of `ip_len` octets (LLC/SNAP added).
pub fn pdu_cells(ip_len: usize) -> u16 {
    aal5::cells_for(ip_len + LLC_SNAP) as u16
}

/// The AAL5 PDU length in cells of each fragment of a datagram carrying `payload`
/// octets of transport data (each IP packet plus LLC/SNAP is one PDU).
pub fn fragment_cells(payload: usize, mtu: usize) -> Vec<u16> {
    fragment_sizes(payload, mtu).iter().map(|&ipl| pdu_cells(ipl)).collect()
}

/// One IP packet of a datagram: its data octets at `offset`, and the AAL5 PDU it
/// travels in (`cells` long).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Fragment offset in octets (a multiple of 8).
    pub offset: u16,
    /// Octets of data after the IP header.
    pub len: usize,
    /// The PDU's length in cells.
    pub cells: u16,
}

/// The pieces of a datagram carrying `payload` octets of transport data (its header
/// included) with this MTU (RFC 791; see [`fragment_sizes`]).
pub fn pieces(payload: usize, mtu: usize) -> Vec<Piece> {
    let mut offset = 0;
    fragment_sizes(payload, mtu)
        .into_iter()
        .map(|total| {
            let p = Piece { offset: offset as u16, len: total - IP_HEADER, cells: pdu_cells(total) };
            offset += p.len;
            p
        })
        .collect()
}

/// The IP packets of one datagram: `head`'s addresses, protocol and identification on
/// each, cut at `pieces`; the first carries `l4`, the others [`L4::Continuation`].
/// Returns each packet's headers and its PDU length in cells.
pub fn fragment(head: &Ipv4Repr, l4: L4, pieces: &[Piece]) -> Vec<(Ipv4Repr, L4, u16)> {
    let n = pieces.len();
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ip = Ipv4Repr { payload_len: p.len, more_frags: i + 1 < n, frag_offset: p.offset, dont_frag: false, ..*head };
            (ip, if i == 0 { l4 } else { L4::Continuation }, p.cells)
        })
        .collect()
}

/// The IP protocol number of a transport header (`None` for a continuation).
pub fn protocol(l4: &L4) -> Option<u8> {
    match l4 {
        L4::Tcp(_) => Some(PROTOCOL_TCP),
        L4::Echo(_) => Some(PROTOCOL_ICMP),
        L4::Udp(_) => Some(PROTOCOL_UDP),
        L4::Continuation => None,
    }
}

/// The IPv4 identification counter of one sender (16 bits, RFC 791).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ident {
    next: u16,
}

impl Ident {
    /// Takes the next identification (wrapping at 2^16).
    pub fn take(&mut self) -> u16 {
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        id
    }
}

/// A datagram whose fragments all arrived.
#[derive(Clone, Debug, PartialEq)]
pub struct Datagram {
    /// The first fragment's IPv4 header (addresses, protocol, identification).
    pub ip: Ipv4Repr,
    /// The transport header the first fragment carried.
    pub l4: L4,
    /// The flow its cells belong to.
    pub flow: u32,
    /// The earliest birth of its fragments' cells.
    pub born: SimTime,
    /// Its fragments in offset order (an echo reply mirrors them).
    pub pieces: Vec<Piece>,
}

/// RFC 791's reassembly key (source, destination, protocol, identification), per flow.
type Key = (u32, [u8; 4], [u8; 4], u8, u16);

/// A datagram being reassembled.
#[derive(Clone, Debug)]
struct Partial {
    key: Key,
    started: SimTime,
    born: SimTime,
    /// The first fragment's headers, once it arrived.
    head: Option<(Ipv4Repr, L4)>,
    /// Data octets of the whole datagram, once the last fragment arrived.
    total: Option<usize>,
    /// Data octets arrived.
    got: usize,
    pieces: Vec<Piece>,
}

/// IP reassembly (RFC 791) on the headers the fragments carry: fragments in, whole
/// datagrams out. A datagram not complete `timeout` after its first fragment is
/// dropped; the drops are found when the next fragment arrives (no timer), and at the
/// end of the run the datagrams still pending count as dropped too.
#[derive(Clone, Debug)]
pub struct IpReassembly {
    timeout: SimDuration,
    partials: VecDeque<Partial>,
    dropped: u64,
}

impl IpReassembly {
    /// Reassembly with this timeout.
    pub fn new(timeout: SimDuration) -> IpReassembly {
        IpReassembly { timeout, partials: VecDeque::new(), dropped: 0 }
    }

    /// Drops the datagrams older than the timeout at `now`; returns how many.
    pub fn expire(&mut self, now: SimTime) -> u64 {
        let mut n = 0;
        while self.partials.front().is_some_and(|p| now.since(p.started) > self.timeout) {
            self.partials.pop_front();
            n += 1;
        }
        self.dropped += n;
        n
    }

    /// A fragment of flow `flow` arrived whole at `now`: headers `ip` and `l4`, in a
    /// PDU `cells` long whose first cell was born at `born`. Returns the datagram it
    /// completes, if any (timed-out datagrams are dropped first; a fragment repeating
    /// an offset already held is ignored).
    pub fn input(&mut self, now: SimTime, flow: u32, ip: &Ipv4Repr, l4: L4, cells: u16, born: SimTime) -> Option<Datagram> {
        self.expire(now);
        let key = (flow, ip.src, ip.dst, ip.protocol, ip.ident);
        let pos = match self.partials.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                self.partials.push_back(Partial { key, started: now, born, head: None, total: None, got: 0, pieces: Vec::new() });
                self.partials.len() - 1
            }
        };
        let p = &mut self.partials[pos];
        let piece = Piece { offset: ip.frag_offset, len: ip.payload_len, cells };
        let at = match p.pieces.binary_search_by_key(&piece.offset, |q| q.offset) {
            Ok(_) => return None,
            Err(at) => at,
        };
        p.pieces.insert(at, piece);
        p.got += piece.len;
        if p.born > born {
            p.born = born;
        }
        if piece.offset == 0 {
            p.head = Some((*ip, l4));
        }
        if !ip.more_frags {
            p.total = Some(piece.offset as usize + piece.len);
        }
        if p.total != Some(p.got) || p.head.is_none() {
            return None;
        }
        let p = self.partials.remove(pos)?;
        let (ip, l4) = p.head?;
        Some(Datagram { ip, l4, flow, born: p.born, pieces: p.pieces })
    }

    /// Datagrams being reassembled.
    pub fn pending(&self) -> usize {
        self.partials.len()
    }

    /// Datagrams dropped since the last reset, counting the pending ones as dropped.
    pub fn dropped(&self) -> u64 {
        self.dropped + self.partials.len() as u64
    }

    /// Starts the drop count afresh.
    pub fn reset_stats(&mut self) {
        self.dropped = 0;
    }

    /// Row `ip_drop_datagrams` (count, see [`IpReassembly::dropped`]).
    pub fn report(&self, path: &str, out: &mut Report) {
        out.push(path, "ip_drop_datagrams", "count", self.dropped() as f64, "1");
    }
}

impl crate::part::Part for IpReassembly {
    fn reset_stats(&mut self, _now: atmsim_kernel::SimTime) {
        IpReassembly::reset_stats(self)
    }
    fn report(&self, at: &crate::part::At<'_>, out: &mut Report) {
        IpReassembly::report(self, at.path, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aal::aal5::cells_for;
    use atmsim_wire::icmp::IcmpEchoRepr;

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
    fn fragment_cells_are_the_pdu_lengths() {
        // 2048 data octets + 8 ICMP with a 1500-octet MTU: 1500 + 596 octets, 32 + 13 cells.
        assert_eq!(fragment_cells(ICMP_HEADER + 2048, 1500), vec![32, 13]);
        assert_eq!(fragment_cells(ICMP_HEADER + 64, 9180), vec![3]);
    }

    #[test]
    fn ident_counts_and_wraps_at_16_bits() {
        let mut i = Ident::default();
        assert_eq!((i.take(), i.take()), (0, 1));
        let mut j = Ident { next: u16::MAX };
        assert_eq!((j.take(), j.take()), (u16::MAX, 0));
    }

    fn echo(data_len: usize) -> L4 {
        L4::Echo(IcmpEchoRepr { reply: false, ident: 3, seq: 9, data_len })
    }

    fn head(ident: u16) -> Ipv4Repr {
        Ipv4Repr { src: SENDER, dst: RECEIVER, protocol: PROTOCOL_ICMP, payload_len: 0, ttl: TTL, ident, dont_frag: false, more_frags: false, frag_offset: 0, tos: 0 }
    }

    #[test]
    fn a_datagram_is_cut_into_packets_with_offsets_and_flags_per_rfc791() {
        // 2048 data + 8 ICMP = 2056 octets, MTU 1500: 1480 at offset 0 (MF), 576 at 1480.
        let ps = pieces(ICMP_HEADER + 2048, 1500);
        assert_eq!(ps, vec![Piece { offset: 0, len: 1480, cells: 32 }, Piece { offset: 1480, len: 576, cells: 13 }]);
        let f = fragment(&head(7), echo(2048), &ps);
        assert_eq!(f.len(), 2);
        let (a, la, ca) = f[0];
        let (b, lb, cb) = f[1];
        assert_eq!((a.ident, a.frag_offset, a.payload_len, a.more_frags, la, ca), (7, 0, 1480, true, echo(2048), 32));
        assert_eq!((b.ident, b.frag_offset, b.payload_len, b.more_frags, lb, cb), (7, 1480, 576, false, L4::Continuation, 13));
        assert!(f.iter().all(|(ip, _, _)| (ip.src, ip.dst, ip.protocol) == (SENDER, RECEIVER, PROTOCOL_ICMP)));
        // Each piece's PDU holds its IP packet: 1500 + 8 LLC/SNAP + 8 trailer → 32 cells.
        assert_eq!(pdu_cells(1500), 32);
    }

    fn frags(ident: u16, data: usize, mtu: usize) -> Vec<(Ipv4Repr, L4, u16)> {
        fragment(&head(ident), echo(data), &pieces(ICMP_HEADER + data, mtu))
    }

    #[test]
    fn fragments_in_any_order_make_one_datagram() {
        let mut r = IpReassembly::new(SimDuration(1_000));
        // 3000 data + 8 ICMP, MTU 1500: offsets 0, 1480, 2960.
        let f = frags(42, 3000, 1500);
        assert_eq!(f.len(), 3);
        assert_eq!(r.input(SimTime(10), 1, &f[2].0, f[2].1, f[2].2, SimTime(3)), None);
        assert_eq!(r.input(SimTime(11), 1, &f[0].0, f[0].1, f[0].2, SimTime(1)), None);
        // A repeated fragment changes nothing.
        assert_eq!(r.input(SimTime(11), 1, &f[0].0, f[0].1, f[0].2, SimTime(1)), None);
        // Same identification, other flow: a datagram of its own.
        let g = frags(42, 64, 9180);
        let d = r.input(SimTime(11), 2, &g[0].0, g[0].1, g[0].2, SimTime(2)).expect("one fragment is a whole datagram");
        assert_eq!((d.flow, d.born, d.l4, d.pieces.len()), (2, SimTime(2), echo(64), 1));
        // Same flow, other identification: another datagram too.
        let h = frags(43, 64, 9180);
        assert!(r.input(SimTime(11), 1, &h[0].0, h[0].1, h[0].2, SimTime(2)).is_some());
        assert_eq!(r.pending(), 1);
        let d = r.input(SimTime(12), 1, &f[1].0, f[1].1, f[1].2, SimTime(2)).expect("the last gap filled");
        assert_eq!((d.ip.ident, d.flow, d.born, d.l4), (42, 1, SimTime(1), echo(3000)));
        let offsets: Vec<(u16, usize, u16)> = d.pieces.iter().map(|p| (p.offset, p.len, p.cells)).collect();
        // 48 + 20 IP + 8 LLC/SNAP + 8 trailer = 84 octets: 2 cells.
        assert_eq!(offsets, vec![(0, 1480, 32), (1480, 1480, 32), (2960, 48, 2)]);
        assert_eq!(Kind::of(&d.l4), Some(Kind::EchoRequest));
        assert_eq!((r.pending(), r.dropped()), (0, 0));
    }

    #[test]
    fn a_datagram_missing_a_fragment_times_out() {
        let mut r = IpReassembly::new(SimDuration(1_000));
        let (f1, f2) = (frags(1, 2048, 1500), frags(2, 2048, 1500));
        assert_eq!(r.input(SimTime(0), 0, &f1[0].0, f1[0].1, f1[0].2, SimTime(0)), None);
        assert_eq!(r.input(SimTime(500), 0, &f2[0].0, f2[0].1, f2[0].2, SimTime(500)), None);
        // Pending datagrams count as dropped.
        assert_eq!(r.dropped(), 2);
        // At exactly the timeout the first is still kept; past it, it is dropped when
        // the next fragment arrives, and its late fragment starts a new datagram.
        assert_eq!(r.expire(SimTime(1_000)), 0);
        assert_eq!(r.input(SimTime(1_001), 0, &f1[1].0, f1[1].1, f1[1].2, SimTime(0)), None);
        assert_eq!(r.pending(), 2);
        assert_eq!(r.dropped(), 3);
        r.reset_stats();
        assert_eq!(r.dropped(), 2);
        let mut out = Report::default();
        r.report("h", &mut out);
        assert_eq!(out.rows[0].probe, "ip_drop_datagrams");
        assert_eq!(out.rows[0].value, 2.0);
    }
}
