//! The byte-exact checking mode (`atmsim run --check-wire`, `[scenario] check_wire =
//! true`): every payload-carrying PDU is emitted through the wire layer when it is
//! segmented — LLC/SNAP, the IPv4 header and, on a datagram's first fragment, the TCP,
//! UDP or ICMP echo header with their checksums (the data octets as zeros), the AAL5
//! CPCS-PDU with its CRC-32 — and, when its last cell
//! arrives, the cell's header is emitted from the cell's metadata as it arrives (VPI/VCI
//! after every translation, PTI, CLP) with its HEC and parsed back by the I.432
//! receiver, and the PDU is parsed back layer by layer and compared with the payload
//! the cell carried and with the metadata's PDU length. Any mismatch fails the run with
//! a message naming the VC, the PDU and the layer. Runs without the option pay nothing.
//!
//! RM cells are single cells, not AAL5 PDUs: [`check_rm_cell`] emits the whole
//! 53-octet cell (header with PTI = 110 and its HEC, the 48-octet RM payload with its
//! CRC-10) and parses both back; credit cells and credits in headers likewise.
//!
//! These are the round trips themselves; the observer that runs them on a run's PDUs
//! and control cells is [`crate::observers::wire_check`].

use atmsim_wire::aal5::Aal5Repr;
use atmsim_wire::cell::{HeaderRepr, HecOutcome, HecReceiver, Interface};
use atmsim_wire::credit::{CreditCell, CreditCellRepr, CreditEntry, CREDIT_PAYLOAD_LEN};
use atmsim_wire::icmp::{self, IcmpEchoRepr};
use atmsim_wire::ipv4::{self, Ipv4Repr};
use atmsim_wire::llc::{SnapRepr, ETHERTYPE_IPV4};
use atmsim_wire::rm::{RmRepr, PTI_RM, RM_PAYLOAD_LEN};
use atmsim_wire::tcp::{self, TcpRepr};
use atmsim_wire::udp::{self, UdpRepr};

use crate::cell::{vc_name, Cell, FLAG_CLP, FLAG_EFCI, FLAG_EOP};
use crate::payload::{Payload, L4};

/// The bytes of the AAL5 CPCS-PDU carrying the IP packet `p` (LLC/SNAP, IPv4, the
/// transport header on a first fragment, zero data).
///
/// The model's data octets are zeros, which add nothing to a one's-complement sum: the
/// ICMP or UDP checksum of the whole datagram is computed here over the header and the
/// datagram's zero data, and the first fragment carries the first `payload_len` octets
/// of that message.
pub fn emit_pdu(p: &Payload) -> Result<Vec<u8>, String> {
    let sdu = emit_sdu(p)?;
    Aal5Repr { uu: 0, cpi: 0, payload: sdu }.emit().map_err(|e| format!("AAL5 emit: {e}"))
}

/// The AAL5 CPCS-SDU carrying the IP packet `p` — what [`emit_pdu`] pads and closes
/// with the trailer: LLC/SNAP, IPv4, the transport header on a first fragment, zero
/// data (also what a capture at the host records, [`crate::capture`]).
pub fn emit_sdu(p: &Payload) -> Result<Vec<u8>, String> {
    let Payload::Ip { ip, l4 } = p else { return Err("RM and credit cells are checked cell by cell, not as AAL5 PDUs".into()) };
    let snap = SnapRepr { ethertype: ETHERTYPE_IPV4 };
    let mut sdu = vec![0u8; snap.buffer_len() + ip.total_len()];
    snap.emit(&mut sdu).map_err(|e| format!("LLC/SNAP: {e}"))?;
    let at = snap.buffer_len();
    ip.emit(&mut sdu[at..]).map_err(|e| format!("IPv4 emit: {e}"))?;
    let th = at + ip.buffer_len();
    let message = match l4 {
        L4::Tcp(tcp) => {
            let mut m = vec![0u8; tcp.buffer_len()];
            tcp.emit(&mut m, ip.src, ip.dst, &vec![0u8; tcp.payload_len]).map_err(|e| format!("TCP emit: {e}"))?;
            m
        }
        L4::Echo(e) => {
            let mut m = vec![0u8; e.buffer_len()];
            e.emit(&mut m, &vec![0u8; e.data_len]).map_err(|e| format!("ICMP emit: {e}"))?;
            m
        }
        L4::Udp(u) => {
            let mut m = vec![0u8; u.buffer_len()];
            u.emit(&mut m, ip.src, ip.dst, &vec![0u8; u.payload_len]).map_err(|e| format!("UDP emit: {e}"))?;
            m
        }
        L4::Continuation => Vec::new(),
    };
    let n = message.len().min(ip.payload_len);
    sdu[th..th + n].copy_from_slice(&message[..n]);
    Ok(sdu)
}

/// Parses `pdu` back and compares it with the payload `p` its last cell carried. A
/// first fragment's transport message is completed with the zero data of the rest of
/// its datagram (see [`emit_pdu`]) and parsed whole, checksum included; a later
/// fragment must carry exactly its data octets.
pub fn check_pdu(pdu: &[u8], p: &Payload) -> Result<(), String> {
    let Payload::Ip { ip: want_ip, l4 } = p else { return Err("an RM payload on an AAL5 PDU".into()) };
    let aal5 = Aal5Repr::parse(pdu).map_err(|e| format!("AAL5: {e}"))?;
    let sdu = &aal5.payload;
    let snap = SnapRepr::parse(sdu).map_err(|e| format!("LLC/SNAP: {e}"))?;
    if snap.ethertype != ETHERTYPE_IPV4 {
        return Err(format!("LLC/SNAP: EtherType {:#06x}, not IPv4", snap.ethertype));
    }
    let ip_bytes = &sdu[snap.buffer_len()..];
    let ip_packet = ipv4::Packet::new_checked(ip_bytes).map_err(|e| format!("IPv4: {e}"))?;
    let ip = Ipv4Repr::parse(&ip_packet).map_err(|e| format!("IPv4: {e}"))?;
    if ip != *want_ip {
        return Err(format!("IPv4 header {ip:?} differs from the payload's {want_ip:?}"));
    }
    let data = ip_packet.payload();
    // The whole transport message: this packet's octets, then, for the first fragment
    // of a fragmented datagram, the zeros of the rest of the datagram. (ICMP has no
    // length field: a first fragment's ICMP data length is checked only through the
    // fragments' IP lengths; UDP's Length field is checked with its checksum.)
    let whole = |len: usize| {
        let mut m = data.to_vec();
        if ip.more_frags {
            m.resize(len.max(data.len()), 0);
        }
        m
    };
    match l4 {
        L4::Tcp(want) => {
            let packet = tcp::Packet::new_checked(data).map_err(|e| format!("TCP: {e}"))?;
            let got = TcpRepr::parse(&packet, ip.src, ip.dst).map_err(|e| format!("TCP: {e}"))?;
            if got != *want {
                return Err(format!("TCP header {got:?} differs from the payload's {want:?}"));
            }
        }
        L4::Echo(want) => {
            let m = whole(want.buffer_len());
            let packet = icmp::Packet::new_checked(&m[..]).map_err(|e| format!("ICMP: {e}"))?;
            let got = IcmpEchoRepr::parse(&packet).map_err(|e| format!("ICMP: {e}"))?;
            if got != *want {
                return Err(format!("ICMP echo {got:?} differs from the payload's {want:?}"));
            }
        }
        L4::Udp(want) => {
            let m = whole(want.buffer_len());
            let packet = udp::Packet::new_checked(&m[..]).map_err(|e| format!("UDP: {e}"))?;
            let got = UdpRepr::parse(&packet, ip.src, ip.dst).map_err(|e| format!("UDP: {e}"))?;
            if got != *want {
                return Err(format!("UDP header {got:?} differs from the payload's {want:?}"));
            }
        }
        L4::Continuation => {
            if ip.frag_offset == 0 {
                return Err("a fragment at offset 0 without its transport header".into());
            }
        }
    }
    Ok(())
}

/// Emits `cell`'s header from its metadata (UNI format, or NNI for a VPI above 255),
/// runs it through the I.432 receiver and compares what comes out with the metadata.
pub fn check_header(cell: &Cell) -> Result<(), String> {
    let vpi = (cell.vc >> 16) as u16;
    let vci = (cell.vc & 0xffff) as u16;
    let pti = (u8::from(cell.flags & FLAG_EFCI != 0) << 1) | u8::from(cell.flags & FLAG_EOP != 0);
    let interface = if vpi < 256 { Interface::Uni } else { Interface::Nni };
    let h = HeaderRepr { interface, gfc: 0, vpi, vci, pti, clp: cell.flags & FLAG_CLP != 0 };
    let mut b = [0u8; 5];
    h.emit(&mut b).map_err(|e| format!("cell header: {e}"))?;
    match HecReceiver::new().receive(b) {
        HecOutcome::Valid(bytes) => {
            let back = HeaderRepr::parse(&bytes, interface).map_err(|e| format!("cell header: {e}"))?;
            if back != h {
                return Err(format!("cell header {back:?} differs from the metadata's {h:?}"));
            }
            Ok(())
        }
        other => Err(format!("cell header: the HEC receiver answered {other:?}")),
    }
}

/// The whole check at the receiver: the last cell's header, the PDU length the
/// metadata claims, and the PDU's layers against the payload.
pub fn check_arrival(cell: &Cell, pdu: &[u8], p: &Payload) -> Result<(), String> {
    let at = || format!("--check-wire: {} PDU {} (flow {})", vc_name(cell.vc), cell.seq, cell.flow);
    check_header(cell).map_err(|e| format!("{}: {e}", at()))?;
    let cells = pdu.len() / atmsim_wire::cell::PAYLOAD_LEN;
    if cells != cell.pdu_cells as usize {
        return Err(format!("{}: the bytes make {cells} cells, the metadata says {}", at(), cell.pdu_cells));
    }
    check_pdu(pdu, p).map_err(|e| format!("{}: {e}", at()))
}

/// The 53 octets of the RM cell `cell` carrying `rm`: its header from the metadata (PTI
/// = 110, CLP from the flags, UNI or NNI as for data cells) with the HEC, then the RM
/// payload with its CRC-10.
pub fn emit_rm_cell(cell: &Cell, rm: &RmRepr) -> Result<[u8; 53], String> {
    let h = rm_header(cell);
    let mut b = [0u8; 53];
    h.emit(&mut b[..5]).map_err(|e| format!("cell header: {e}"))?;
    rm.emit(&mut b[5..]).map_err(|e| format!("RM payload: {e}"))?;
    Ok(b)
}

fn rm_header(cell: &Cell) -> HeaderRepr {
    let vpi = (cell.vc >> 16) as u16;
    let interface = if vpi < 256 { Interface::Uni } else { Interface::Nni };
    HeaderRepr { interface, gfc: 0, vpi, vci: (cell.vc & 0xffff) as u16, pti: PTI_RM, clp: cell.flags & FLAG_CLP != 0 }
}

/// Parses the 53 octets of an RM cell back — the header through the I.432 receiver,
/// the payload with its CRC-10 — and compares them with the metadata and `rm`.
pub fn check_rm_bytes(cell: &Cell, bytes: &[u8; 53], rm: &RmRepr) -> Result<(), String> {
    let at = || format!("--check-wire: {} RM cell (flow {})", vc_name(cell.vc), cell.flow);
    let want = rm_header(cell);
    let mut hb = [0u8; 5];
    hb.copy_from_slice(&bytes[..5]);
    match HecReceiver::new().receive(hb) {
        HecOutcome::Valid(h) => {
            let back = HeaderRepr::parse(&h, want.interface).map_err(|e| format!("{}: cell header: {e}", at()))?;
            if back != want {
                return Err(format!("{}: cell header {back:?} differs from the metadata's {want:?}", at()));
            }
        }
        other => return Err(format!("{}: cell header: the HEC receiver answered {other:?}", at())),
    }
    let got = RmRepr::parse(&bytes[5..5 + RM_PAYLOAD_LEN]).map_err(|e| format!("{}: RM payload: {e}", at()))?;
    if got != *rm {
        return Err(format!("{}: RM payload {got:?} differs from the cell's {rm:?}", at()));
    }
    Ok(())
}

/// The RM cell round trip of the checking mode: emit, then parse back and compare.
pub fn check_rm_cell(cell: &Cell, rm: &RmRepr) -> Result<(), String> {
    let b = emit_rm_cell(cell, rm).map_err(|e| format!("--check-wire: {} RM cell (flow {}): {e}", vc_name(cell.vc), cell.flow))?;
    check_rm_bytes(cell, &b, rm)
}

/// The 53 octets of the credit cell `cell` carrying `credit`: a standard user-data cell
/// (its header from the metadata, as [`check_header`] emits it, with the HEC), then the
/// 48 payload octets of entries (`atmsim_wire::credit`; no error detection).
pub fn emit_credit_cell(cell: &Cell, credit: &CreditCellRepr) -> Result<[u8; 53], String> {
    let vpi = (cell.vc >> 16) as u16;
    let interface = if vpi < 256 { Interface::Uni } else { Interface::Nni };
    let pti = (u8::from(cell.flags & FLAG_EFCI != 0) << 1) | u8::from(cell.flags & FLAG_EOP != 0);
    let h = HeaderRepr { interface, gfc: 0, vpi, vci: (cell.vc & 0xffff) as u16, pti, clp: cell.flags & FLAG_CLP != 0 };
    let mut b = [0u8; 53];
    h.emit(&mut b[..5]).map_err(|e| format!("cell header: {e}"))?;
    credit.emit(&mut b[5..]).map_err(|e| format!("credit payload: {e}"))?;
    Ok(b)
}

/// The credit cell round trip of the checking mode: the header through the I.432
/// receiver against the metadata ([`check_header`]), the payload emitted and parsed back
/// through the checked view and compared with `credit`.
pub fn check_credit_cell(cell: &Cell, credit: &CreditCellRepr) -> Result<(), String> {
    let at = || format!("--check-wire: {} credit cell (flow {})", vc_name(cell.vc), cell.flow);
    check_header(cell).map_err(|e| format!("{}: {e}", at()))?;
    let b = emit_credit_cell(cell, credit).map_err(|e| format!("{}: {e}", at()))?;
    check_credit_bytes(cell, &b, credit)
}

/// Parses the payload of the 53 octets `bytes` of a credit cell and compares it with
/// `credit`.
pub fn check_credit_bytes(cell: &Cell, bytes: &[u8; 53], credit: &CreditCellRepr) -> Result<(), String> {
    let at = || format!("--check-wire: {} credit cell (flow {})", vc_name(cell.vc), cell.flow);
    let view = CreditCell::new_checked(&bytes[5..5 + CREDIT_PAYLOAD_LEN]).map_err(|e| format!("{}: credit payload: {e}", at()))?;
    let got = CreditCellRepr::parse(&view).map_err(|e| format!("{}: credit payload: {e}", at()))?;
    if got != *credit {
        return Err(format!("{}: credit payload {got:?} differs from the cell's {credit:?}", at()));
    }
    Ok(())
}

/// The five header octets of the in-header credit `cell` carries (its one entry; the
/// layout of `atmsim_wire::credit`: GFC = credit − 1, VPI 0, VCI = the credited VC, PTI
/// 110).
pub fn emit_credit_header(cell: &Cell, credit: &CreditCellRepr) -> Result<[u8; 5], String> {
    let at = || format!("--check-wire: {} in-header credit (flow {})", vc_name(cell.vc), cell.flow);
    if credit.len() != 1 {
        return Err(format!("{}: {} entries; a header carries exactly one", at(), credit.len()));
    }
    let mut b = [0u8; 5];
    credit.entry(0).header().and_then(|h| h.emit(&mut b)).map_err(|e| format!("{}: {e}", at()))?;
    Ok(b)
}

/// The in-header credit round trip of the checking mode: the header emitted with its
/// HEC, through the I.432 receiver, parsed back; the entry it carries must be the cell's
/// one entry and name the cell's own VC.
pub fn check_credit_header(cell: &Cell, credit: &CreditCellRepr) -> Result<(), String> {
    let b = emit_credit_header(cell, credit)?;
    check_credit_header_bytes(cell, b, credit)
}

/// Parses the header octets `bytes` of an in-header credit and compares the entry.
pub fn check_credit_header_bytes(cell: &Cell, bytes: [u8; 5], credit: &CreditCellRepr) -> Result<(), String> {
    let at = || format!("--check-wire: {} in-header credit (flow {})", vc_name(cell.vc), cell.flow);
    let HecOutcome::Valid(ok) = HecReceiver::new().receive(bytes) else {
        return Err(format!("{}: the HEC receiver refused the header", at()));
    };
    let h = HeaderRepr::parse(&ok, Interface::Uni).map_err(|e| format!("{}: {e}", at()))?;
    let got = CreditEntry::from_header(&h).map_err(|e| format!("{}: {e}", at()))?;
    if credit.len() != 1 || got != credit.entry(0) || cell.vc != u32::from(got.vci) {
        return Err(format!("{}: the header carries {got:?}, the cell {:?}", at(), credit.entries().collect::<Vec<_>>()));
    }
    Ok(())
}

/// The piggybacked credit round trip of the checking mode: the cell's own header with
/// GFC = the credit (1 … 15; 0 = none: atmsim's layout for a credit riding on a cell
/// going upstream, crediting the cell's own VC), emitted with its HEC, through the I.432
/// receiver and parsed back; the GFC and the VC must come back unchanged.
pub fn check_piggyback_header(cell: &Cell, credit: CreditEntry) -> Result<(), String> {
    let at = || format!("--check-wire: {} piggybacked credit (flow {})", vc_name(cell.vc), cell.flow);
    if !(1..=15).contains(&credit.credit) || cell.vc >> 16 != 0 || u32::from(credit.vci) != cell.vc {
        return Err(format!("{}: {credit:?} cannot ride in this header (GFC 1 ... 15, VPI 0, the cell's own VCI)", at()));
    }
    let pti = (u8::from(cell.flags & FLAG_EFCI != 0) << 1) | u8::from(cell.flags & FLAG_EOP != 0);
    let h = HeaderRepr { interface: Interface::Uni, gfc: credit.credit, vpi: 0, vci: credit.vci, pti, clp: cell.flags & FLAG_CLP != 0 };
    let mut b = [0u8; 5];
    h.emit(&mut b).map_err(|e| format!("{}: {e}", at()))?;
    let HecOutcome::Valid(ok) = HecReceiver::new().receive(b) else {
        return Err(format!("{}: the HEC receiver refused the header", at()));
    };
    let back = HeaderRepr::parse(&ok, Interface::Uni).map_err(|e| format!("{}: {e}", at()))?;
    if back != h {
        return Err(format!("{}: the header came back as {back:?}, sent {h:?}", at()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::tcp::Segment;
    use atmsim_wire::ipv4::PROTOCOL_TCP;

    fn tcp_payload(len: u32) -> Payload {
        let tcp = Segment::data(1_000_000, len).to_repr(1124, 5001);
        let ip = Ipv4Repr { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], protocol: PROTOCOL_TCP, payload_len: tcp.buffer_len(), ttl: 64, ident: 7, dont_frag: true, more_frags: false, frag_offset: 0, tos: 0 };
        Payload::Ip { ip, l4: L4::Tcp(tcp) }
    }

    fn eop_cell(cells: u16) -> Cell {
        let mut c = Cell::plain(atmsim_kernel::SimTime(0), 0, (1 << 16) | 100, 3);
        c.flags = FLAG_EOP;
        c.pdu_cells = cells;
        c
    }

    #[test]
    fn a_tcp_segment_round_trips_and_its_size_matches_the_cell_count() {
        // 9140 data octets + 40 headers + 8 LLC/SNAP + 8 trailer = 9196 → 192 cells.
        let p = tcp_payload(9140);
        let pdu = emit_pdu(&p).expect("emit");
        assert_eq!(pdu.len(), 192 * 48);
        check_arrival(&eop_cell(192), &pdu, &p).expect("the PDU checks");
        let e = check_arrival(&eop_cell(191), &pdu, &p).unwrap_err();
        assert!(e.contains("the bytes make 192 cells, the metadata says 191"), "{e}");
    }

    #[test]
    fn any_flipped_bit_or_changed_field_fails_with_the_layer_named() {
        let p = tcp_payload(512);
        let pdu = emit_pdu(&p).expect("emit");
        let cells = (pdu.len() / 48) as u16;
        for bit in (0..pdu.len() * 8).step_by(37) {
            let mut bad = pdu.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let e = check_arrival(&eop_cell(cells), &bad, &p).unwrap_err();
            assert!(e.starts_with("--check-wire: vc1.100 PDU 3 (flow 0): AAL5"), "bit {bit}: {e}");
        }
        // The payload the cell carries no longer matches the bytes.
        let Payload::Ip { ip, l4: L4::Tcp(mut tcp) } = p else { unreachable!() };
        tcp.ack ^= 1;
        tcp.flags |= atmsim_wire::tcp::TcpFlags::ACK;
        let e = check_arrival(&eop_cell(cells), &pdu, &Payload::Ip { ip, l4: L4::Tcp(tcp) }).unwrap_err();
        assert!(e.contains("TCP header") && e.contains("differs"), "{e}");
    }

    /// The packets of a datagram as a host sends them.
    fn packets(l4: L4, transport_len: usize, mtu: usize) -> Vec<(Payload, u16)> {
        use crate::host::ip;
        let protocol = ip::protocol(&l4).expect("a transport header");
        let head = Ipv4Repr { src: ip::SENDER, dst: ip::RECEIVER, protocol, payload_len: 0, ttl: ip::TTL, ident: 99, dont_frag: false, more_frags: false, frag_offset: 0, tos: 0 };
        ip::fragment(&head, l4, &ip::pieces(transport_len, mtu)).into_iter().map(|(ip, l4, cells)| (Payload::Ip { ip, l4 }, cells)).collect()
    }

    #[test]
    fn fragmented_echo_and_udp_datagrams_check_fragment_by_fragment() {
        let echo = L4::Echo(IcmpEchoRepr { reply: false, ident: 1124, seq: 3, data_len: 4000 });
        let udp = L4::Udp(UdpRepr { src_port: 1124, dst_port: 5001, payload_len: 4000 });
        for l4 in [echo, udp] {
            let ps = packets(l4, 8 + 4000, 1500);
            assert_eq!(ps.len(), 3, "4008 octets over a 1500-octet MTU: 1480 + 1480 + 1048");
            for (p, cells) in &ps {
                let pdu = emit_pdu(p).expect("emit");
                check_arrival(&eop_cell(*cells), &pdu, p).expect("each fragment checks");
            }
            // The first fragment's transport header is compared field by field.
            let (first, cells) = ps[0];
            let pdu = emit_pdu(&first).expect("emit");
            let Payload::Ip { ip, l4 } = first else { unreachable!() };
            let other = match l4 {
                L4::Echo(e) => L4::Echo(IcmpEchoRepr { seq: e.seq + 1, ..e }),
                L4::Udp(u) => L4::Udp(UdpRepr { dst_port: u.dst_port + 1, ..u }),
                other => other,
            };
            let e = check_arrival(&eop_cell(cells), &pdu, &Payload::Ip { ip, l4: other }).unwrap_err();
            assert!(e.contains("differs from the payload"), "{e}");
            // UDP's Length covers the whole datagram: a header claiming another length
            // fails the checksum over the datagram.
            if let L4::Udp(u) = l4 {
                let longer = L4::Udp(UdpRepr { payload_len: u.payload_len + 8, ..u });
                let e = check_arrival(&eop_cell(cells), &pdu, &Payload::Ip { ip, l4: longer }).unwrap_err();
                assert!(e.contains("UDP"), "{e}");
            }
            // A later fragment's bytes are data only: one posing as a first fragment fails.
            let (later, cells) = ps[1];
            let pdu = emit_pdu(&later).expect("emit");
            let Payload::Ip { ip, .. } = later else { unreachable!() };
            assert!(check_arrival(&eop_cell(cells), &pdu, &Payload::Ip { ip, l4 }).is_err());
        }
        // An unfragmented ping checks whole, and a flipped data bit fails its checksum
        // even where the AAL5 CRC is recomputed over the damage.
        let (p, cells) = packets(L4::Echo(IcmpEchoRepr { reply: true, ident: 1, seq: 2, data_len: 64 }), 8 + 64, 9180)[0];
        let pdu = emit_pdu(&p).expect("emit");
        check_arrival(&eop_cell(cells), &pdu, &p).expect("a whole ping checks");
        let Payload::Ip { ip, l4: L4::Echo(e) } = p else { unreachable!() };
        let longer = Payload::Ip { ip, l4: L4::Echo(IcmpEchoRepr { data_len: 72, ..e }) };
        assert!(check_arrival(&eop_cell(cells), &pdu, &longer).unwrap_err().contains("ICMP echo"), "an unfragmented ping's data length is checked");
        let aal = Aal5Repr::parse(&pdu).expect("aal5");
        let mut sdu = aal.payload.clone();
        let last = sdu.len() - 1;
        sdu[last] ^= 1;
        let bad = Aal5Repr { uu: 0, cpi: 0, payload: sdu }.emit().expect("emit");
        let e = check_arrival(&eop_cell(cells), &bad, &p).unwrap_err();
        assert!(e.contains("ICMP"), "{e}");
    }

    #[test]
    fn the_cell_header_round_trips_through_the_hec_receiver() {
        let mut c = eop_cell(1);
        c.flags |= FLAG_EFCI | FLAG_CLP;
        check_header(&c).expect("header");
        c.vc = (255 << 16) | 65535;
        check_header(&c).expect("largest UNI label");
        c.vc = (4095 << 16) | 65535;
        check_header(&c).expect("largest NNI label");
        c.vc = (4096 << 16) | 1;
        assert!(check_header(&c).is_err(), "a VPI over 4095 fits no header");
    }

    fn source_rm() -> RmRepr {
        use crate::control::abr::params::AbrParams;
        use crate::control::abr::source::{AbrSource, Send};
        let mut s = AbrSource::new(AbrParams::eprca95());
        match s.send(atmsim_kernel::SimTime(0), true, false) {
            Some(Send::ForwardRm(rm)) => rm,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_in_header_credit_round_trips_and_a_changed_gfc_is_caught() {
        use atmsim_wire::credit::CreditEntry;
        let c = CreditCellRepr::new(&[CreditEntry { vci: 100, credit: 9 }]).unwrap();
        let cell = Cell::plain(atmsim_kernel::SimTime(0), 0, 100, 0);
        check_credit_header(&cell, &c).expect("in-header credit");
        let mut b = emit_credit_header(&cell, &c).unwrap();
        assert_eq!(b[0] >> 4, 8, "GFC = credit - 1");
        b[0] ^= 0x10; // one flipped GFC bit: the receiver's HEC sees it (emitted bytes must arrive valid)
        assert!(check_credit_header_bytes(&cell, b, &c).unwrap_err().contains("HEC"));
        let mut forged = [0u8; 5];
        HeaderRepr { gfc: 7, ..CreditEntry { vci: 100, credit: 9 }.header().unwrap() }.emit(&mut forged).unwrap();
        let e = check_credit_header_bytes(&cell, forged, &c).unwrap_err();
        assert!(e.contains("carries"), "credit 8 in a header with a valid HEC against the cell's 9: {e}");
        let other = Cell::plain(atmsim_kernel::SimTime(0), 0, 101, 0);
        let e = check_credit_header(&other, &c).unwrap_err();
        assert!(e.contains("carries"), "a header naming another VC than the cell's: {e}");
        let two = CreditCellRepr::new(&[CreditEntry { vci: 100, credit: 1 }, CreditEntry { vci: 100, credit: 1 }]).unwrap();
        assert!(check_credit_header(&cell, &two).unwrap_err().contains("exactly one"));
    }

    #[test]
    fn a_credit_cell_round_trips_and_a_changed_entry_is_caught() {
        use atmsim_wire::credit::CreditEntry;
        let c = CreditCellRepr::new(&[CreditEntry { vci: 100, credit: 16 }, CreditEntry { vci: 7, credit: 1 }]).unwrap();
        let cell = Cell::plain(atmsim_kernel::SimTime(0), 3, 4095, 0);
        check_credit_cell(&cell, &c).expect("credit cell");
        let mut b = emit_credit_cell(&cell, &c).unwrap();
        // Entry 0 = VCI 100 << 4 | 15 = 0x064F, after the 5 header octets.
        assert_eq!((b[5], b[6], b[7], b[8]), (0x06, 0x4f, 0x00, 0x70));
        b[6] ^= 0x01; // credit 16 -> 15: no error detection, the comparison catches it
        let e = check_credit_bytes(&cell, &b, &c).unwrap_err();
        assert!(e.contains("differs") && e.contains("credit cell"), "{e}");
    }

    #[test]
    fn an_abr_sources_rm_cell_round_trips_with_hec_and_crc10() {
        let rm = source_rm();
        let mut cell = Cell::plain(atmsim_kernel::SimTime(0), 2, (1 << 16) | 100, 0);
        check_rm_cell(&cell, &rm).expect("forward RM cell");
        cell.flags = FLAG_CLP;
        let back = RmRepr { backward: true, ci: true, ..rm };
        check_rm_cell(&cell, &back).expect("backward RM cell, CLP 1 (out of rate)");
        let b = emit_rm_cell(&cell, &back).unwrap();
        // PTI 110 in the header's fourth octet (bits 3..1), CLP bit 0.
        assert_eq!(b[3] & 0x0f, 0b1101);
        // The payload's first octets: protocol 1, DIR and CI set.
        assert_eq!((b[5], b[6]), (1, 0b1010_0000));
    }

    #[test]
    fn a_flipped_payload_bit_fails_the_crc10_and_a_wrong_field_the_comparison() {
        let rm = source_rm();
        let cell = Cell::plain(atmsim_kernel::SimTime(0), 2, (1 << 16) | 100, 0);
        let mut b = emit_rm_cell(&cell, &rm).unwrap();
        b[5 + 20] ^= 0x04;
        let e = check_rm_bytes(&cell, &b, &rm).unwrap_err();
        assert!(e.contains("RM payload") && e.contains("vc1.100"), "{e}");
        let b = emit_rm_cell(&cell, &rm).unwrap();
        let e = check_rm_bytes(&cell, &b, &RmRepr { ci: true, ..rm }).unwrap_err();
        assert!(e.contains("differs"), "{e}");
    }
}
