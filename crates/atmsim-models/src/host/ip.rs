//! IPv4 sizes and fragmentation (RFC 791), how IP facts ride in cell metadata, and the
//! IP parts a composite model holds: [`Ident`] (the identification counter) and
//! [`IpReassembly`] (fragments in, whole datagrams out, timed-out ones counted).

use std::collections::VecDeque;

use atmsim_kernel::probe::Report;
use atmsim_kernel::{SimDuration, SimTime};

use crate::aal::aal5;
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

/// The AAL5 PDU length in cells of each fragment of a datagram carrying `payload`
/// octets of transport data (each IP packet plus LLC/SNAP is one PDU).
pub fn fragment_cells(payload: usize, mtu: usize) -> Vec<u16> {
    fragment_sizes(payload, mtu).iter().map(|&ipl| aal5::cells_for(ipl + LLC_SNAP) as u16).collect()
}

/// The IPv4 identification counter of one sender (24 bits here: see [`encode_seq`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ident {
    next: u32,
}

impl Ident {
    /// Takes the next identification (wrapping at [`ID_MASK`]).
    pub fn take(&mut self) -> u32 {
        let id = self.next;
        self.next = (self.next + 1) & ID_MASK;
        id
    }
}

/// A datagram whose fragments all arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    pub kind: Kind,
    pub id: u32,
    /// The flow its cells belong to.
    pub flow: u32,
    /// The earliest birth of its fragments' cells.
    pub born: SimTime,
    /// Each fragment's PDU length in cells, in fragment order (an echo reply mirrors
    /// them).
    pub cells: Vec<u16>,
}

/// A datagram being reassembled.
#[derive(Clone, Debug)]
struct Partial {
    key: (u32, u32), // (flow, seq without fragment index)
    started: SimTime,
    born: SimTime,
    got: u64,
    last: Option<u8>,
    cells: Vec<u16>,
}

/// IP reassembly (RFC 791) on cell metadata: fragments in, whole datagrams out. A
/// datagram not complete `timeout` after its first fragment is dropped; the drops are
/// found when the next fragment arrives (no timer), and at the end of the run the
/// datagrams still pending count as dropped too.
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

    /// A fragment arrived whole at `now`: the PDU `seq` (see [`encode_seq`]) of flow
    /// `flow`, `cells` long, the last fragment if `last`, its first cell born at `born`.
    /// Returns the datagram it completes, if any (timed-out datagrams are dropped
    /// first).
    pub fn input(&mut self, now: SimTime, flow: u32, seq: u32, last: bool, cells: u16, born: SimTime) -> Option<Datagram> {
        self.expire(now);
        let (kind, id, frag) = decode_seq(seq);
        let key = (flow, seq & !0x3f);
        let pos = match self.partials.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                self.partials.push_back(Partial { key, started: now, born, got: 0, last: None, cells: Vec::new() });
                self.partials.len() - 1
            }
        };
        let p = &mut self.partials[pos];
        p.got |= 1 << frag;
        if p.cells.len() <= frag as usize {
            p.cells.resize(frag as usize + 1, 0);
        }
        p.cells[frag as usize] = cells;
        if p.born > born {
            p.born = born;
        }
        if last {
            p.last = Some(frag);
        }
        let complete = p.last.is_some_and(|l| p.got == (u64::MAX >> (63 - l as u32)));
        if !complete {
            return None;
        }
        let p = self.partials.remove(pos)?;
        Some(Datagram { kind, id, flow, born: p.born, cells: p.cells })
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

    #[test]
    fn fragment_cells_are_the_pdu_lengths() {
        // 2048 data octets + 8 ICMP with a 1500-octet MTU: 1500 + 596 octets, 32 + 13 cells.
        assert_eq!(fragment_cells(ICMP_HEADER + 2048, 1500), vec![32, 13]);
        assert_eq!(fragment_cells(ICMP_HEADER + 64, 9180), vec![3]);
    }

    #[test]
    fn ident_counts_and_wraps_at_24_bits() {
        let mut i = Ident::default();
        assert_eq!((i.take(), i.take()), (0, 1));
        let mut j = Ident { next: ID_MASK };
        assert_eq!((j.take(), j.take()), (ID_MASK, 0));
    }

    #[test]
    fn fragments_in_any_order_make_one_datagram() {
        let mut r = IpReassembly::new(SimDuration(1_000));
        let seq = |f: u8| encode_seq(Kind::EchoRequest, 42, f);
        assert_eq!(r.input(SimTime(10), 1, seq(2), true, 5, SimTime(3)), None);
        assert_eq!(r.input(SimTime(11), 1, seq(0), false, 32, SimTime(1)), None);
        // Same id, other flow: a datagram of its own.
        assert_eq!(r.input(SimTime(11), 2, seq(0), true, 7, SimTime(2)), Some(Datagram { kind: Kind::EchoRequest, id: 42, flow: 2, born: SimTime(2), cells: vec![7] }));
        assert_eq!(r.pending(), 1);
        let d = r.input(SimTime(12), 1, seq(1), false, 32, SimTime(2));
        assert_eq!(d, Some(Datagram { kind: Kind::EchoRequest, id: 42, flow: 1, born: SimTime(1), cells: vec![32, 32, 5] }));
        assert_eq!((r.pending(), r.dropped()), (0, 0));
    }

    #[test]
    fn a_datagram_missing_a_fragment_times_out() {
        let mut r = IpReassembly::new(SimDuration(1_000));
        let udp = |id: u32, f: u8| encode_seq(Kind::Udp, id, f);
        assert_eq!(r.input(SimTime(0), 0, udp(1, 0), false, 32, SimTime(0)), None);
        assert_eq!(r.input(SimTime(500), 0, udp(2, 0), false, 32, SimTime(500)), None);
        // Pending datagrams count as dropped.
        assert_eq!(r.dropped(), 2);
        // At exactly the timeout the first is still kept; past it, it is dropped when
        // the next fragment arrives, and its late fragment starts a new datagram.
        assert_eq!(r.expire(SimTime(1_000)), 0);
        assert_eq!(r.input(SimTime(1_001), 0, udp(1, 1), true, 4, SimTime(0)), None);
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
