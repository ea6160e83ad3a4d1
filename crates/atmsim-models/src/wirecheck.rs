//! The byte-exact checking mode (`atmsim run --check-wire`, `[scenario] check_wire =
//! true`): every payload-carrying PDU is emitted through the wire layer when it is
//! segmented — LLC/SNAP, the IPv4 header and the TCP header with their checksums (the
//! data octets as zeros), the AAL5 CPCS-PDU with its CRC-32 — and, when its last cell
//! arrives, the cell's header is emitted from the cell's metadata as it arrives (VPI/VCI
//! after every translation, PTI, CLP) with its HEC and parsed back by the I.432
//! receiver, and the PDU is parsed back layer by layer and compared with the payload
//! the cell carried and with the metadata's PDU length. Any mismatch fails the run with
//! a message naming the VC, the PDU and the layer. Runs without the option pay nothing.
//!
//! RM cells are single cells, not AAL5 PDUs: [`check_rm_cell`] emits the whole
//! 53-octet cell (header with PTI = 110 and its HEC, the 48-octet RM payload with its
//! CRC-10) and parses both back (for the ABR components, which are not written yet).

use atmsim_wire::aal5::Aal5Repr;
use atmsim_wire::cell::{HeaderRepr, HecOutcome, HecReceiver, Interface};
use atmsim_wire::ipv4::{self, Ipv4Repr};
use atmsim_wire::llc::{SnapRepr, ETHERTYPE_IPV4};
use atmsim_wire::rm::{RmRepr, PTI_RM, RM_PAYLOAD_LEN};
use atmsim_wire::tcp::{self, TcpRepr};

use crate::cell::{vc_name, Cell, FLAG_CLP, FLAG_EFCI, FLAG_EOP};
use crate::payload::Payload;

/// The checking mode's state in the run's store.
#[derive(Debug, Default)]
pub struct WireCheck {
    /// The mode is on.
    pub on: bool,
    /// PDUs checked end to end so far.
    pub checked: u64,
    /// Test hook: flip this bit of the next PDU emitted (to see the check fail).
    pub corrupt_next: Option<usize>,
}

/// The bytes of the AAL5 CPCS-PDU carrying `p` (LLC/SNAP, IPv4, TCP, zero data).
pub fn emit_pdu(p: &Payload) -> Result<Vec<u8>, String> {
    match p {
        Payload::Tcp { ip, tcp } => {
            let snap = SnapRepr { ethertype: ETHERTYPE_IPV4 };
            let ip_len = ip.total_len();
            let mut sdu = vec![0u8; snap.buffer_len() + ip_len];
            snap.emit(&mut sdu).map_err(|e| format!("LLC/SNAP: {e}"))?;
            let at = snap.buffer_len();
            ip.emit(&mut sdu[at..]).map_err(|e| format!("IPv4 emit: {e}"))?;
            let data = vec![0u8; tcp.payload_len];
            let th = at + ip.buffer_len();
            tcp.emit(&mut sdu[th..], ip.src, ip.dst, &data).map_err(|e| format!("TCP emit: {e}"))?;
            Aal5Repr { uu: 0, cpi: 0, payload: sdu }.emit().map_err(|e| format!("AAL5 emit: {e}"))
        }
        Payload::Rm(_) => Err("RM cells are checked cell by cell, not as AAL5 PDUs".into()),
    }
}

/// Parses `pdu` back and compares it with the payload `p` its last cell carried.
pub fn check_pdu(pdu: &[u8], p: &Payload) -> Result<(), String> {
    let aal5 = Aal5Repr::parse(pdu).map_err(|e| format!("AAL5: {e}"))?;
    let sdu = &aal5.payload;
    let snap = SnapRepr::parse(sdu).map_err(|e| format!("LLC/SNAP: {e}"))?;
    if snap.ethertype != ETHERTYPE_IPV4 {
        return Err(format!("LLC/SNAP: EtherType {:#06x}, not IPv4", snap.ethertype));
    }
    let ip_bytes = &sdu[snap.buffer_len()..];
    let ip_packet = ipv4::Packet::new_checked(ip_bytes).map_err(|e| format!("IPv4: {e}"))?;
    let ip = Ipv4Repr::parse(&ip_packet).map_err(|e| format!("IPv4: {e}"))?;
    match p {
        Payload::Tcp { ip: want_ip, tcp: want_tcp } => {
            if ip != *want_ip {
                return Err(format!("IPv4 header {ip:?} differs from the payload's {want_ip:?}"));
            }
            let seg = ip_packet.payload();
            let tcp_packet = tcp::Packet::new_checked(seg).map_err(|e| format!("TCP: {e}"))?;
            let got = TcpRepr::parse(&tcp_packet, ip.src, ip.dst).map_err(|e| format!("TCP: {e}"))?;
            if got != *want_tcp {
                return Err(format!("TCP header {got:?} differs from the payload's {want_tcp:?}"));
            }
            Ok(())
        }
        Payload::Rm(_) => Err("an RM payload on an AAL5 PDU".into()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::tcp::Segment;
    use atmsim_wire::ipv4::PROTOCOL_TCP;

    fn tcp_payload(len: u32) -> Payload {
        let tcp = Segment::data(1_000_000, len).to_repr(1124, 5001);
        let ip = Ipv4Repr { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], protocol: PROTOCOL_TCP, payload_len: tcp.buffer_len(), ttl: 64, ident: 7, dont_frag: true, more_frags: false, frag_offset: 0, tos: 0 };
        Payload::Tcp { ip, tcp }
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
        let Payload::Tcp { ip, mut tcp } = p else { unreachable!() };
        tcp.ack ^= 1;
        tcp.flags |= atmsim_wire::tcp::TcpFlags::ACK;
        let e = check_arrival(&eop_cell(cells), &pdu, &Payload::Tcp { ip, tcp }).unwrap_err();
        assert!(e.contains("TCP header") && e.contains("differs"), "{e}");
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
