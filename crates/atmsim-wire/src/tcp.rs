//! The TCP header (RFC 793 section 3.1, flags as in RFC 9293 with ECE and CWR from
//! RFC 3168), its checksum over the IPv4 pseudo-header, and the MSS (kind 2, RFC 793)
//! and window scale (kind 3, RFC 7323) options.
//!
//! ```text
//!   0                   1                   2                   3
//!   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |          Source Port          |       Destination Port        |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |                        Sequence Number                        |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |                    Acknowledgment Number                      |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |  Data |       |C|E|U|A|P|R|S|F|                               |
//!  | Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             |
//!  |       |       |R|E|G|K|H|T|N|N|                               |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |           Checksum            |         Urgent Pointer        |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |                    Options (data offset > 5)                  |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The data offset counts the header in 32-bit words (at least 5). TCP carries no
//! length of its own: the segment is the whole buffer, as the IP layer delimits it, and
//! its length enters the checksum through the pseudo-header (source and destination
//! address, zero, protocol 6, segment length; see [`crate::ipv4::pseudo_header_sum`]).
//! The checksum is the one's complement of the one's-complement sum of pseudo-header,
//! header and data (an odd last octet padded with zero), taken with the checksum field
//! zero.
//!
//! On parse, every option is walked (end of list, no-operation, and kind–length–value
//! for the rest, unknown kinds skipped) and MSS and window scale are kept; on emit, MSS
//! goes first (`02 04 mss`) and window scale after a no-operation (`01 03 03 shift`).

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use crate::ipv4::{ones_complement_add, ones_complement_sum, pseudo_header_sum, PROTOCOL_TCP};
use crate::WireError;

/// Octets of a header without options (data offset 5).
pub const HEADER_LEN: usize = 20;
/// Octets of the largest header (data offset 15).
pub const MAX_HEADER_LEN: usize = 60;
/// Largest segment whose length the pseudo-header can carry.
pub const MAX_SEGMENT_LEN: usize = 65_535;
/// Option kinds.
pub const OPT_END: u8 = 0;
pub const OPT_NOP: u8 = 1;
pub const OPT_MSS: u8 = 2;
pub const OPT_WINDOW_SCALE: u8 = 3;

/// The eight flag bits of octet 13.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const URG: TcpFlags = TcpFlags(0x20);
    /// ECN-echo (RFC 3168).
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// Congestion window reduced (RFC 3168).
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// True when every flag of `other` is set here.
    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for TcpFlags {
    fn bitor_assign(&mut self, rhs: TcpFlags) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for TcpFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 8] = ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"];
        let set: Vec<&str> = (0..8).filter(|i| self.0 & (1 << i) != 0).map(|i| NAMES[i]).collect();
        write!(f, "TcpFlags({})", if set.is_empty() { "-".to_string() } else { set.join("|") })
    }
}

/// A view over the bytes of a TCP segment, checked by [`Packet::new_checked`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

crate::byte_view!(Packet);

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks that the buffer (the whole segment) holds the header its data offset
    /// claims and is no longer than the pseudo-header's 16-bit length. Does not look at
    /// the checksum or the options; [`TcpRepr::parse`] does.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let b = buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: b.len(), need: HEADER_LEN });
        }
        if b.len() > MAX_SEGMENT_LEN {
            return Err(WireError::FieldRange { field: "tcp length", value: u32::try_from(b.len()).unwrap_or(u32::MAX), bits: 16 });
        }
        let offset = b[12] >> 4;
        if offset < 5 {
            return Err(WireError::TcpDataOffset(offset));
        }
        let header = usize::from(offset) * 4;
        if b.len() < header {
            return Err(WireError::Truncated { got: b.len(), need: header });
        }
        Ok(Packet { buffer })
    }

    pub fn src_port(&self) -> u16 {
        self.be16(0)
    }

    pub fn dst_port(&self) -> u16 {
        self.be16(2)
    }

    pub fn seq(&self) -> u32 {
        self.be32(4)
    }

    /// The acknowledgment number as carried (meaningful when ACK is set).
    pub fn ack(&self) -> u32 {
        self.be32(8)
    }

    /// Octets of the header, options included (data offset · 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[12] >> 4) * 4
    }

    pub fn flags(&self) -> TcpFlags {
        TcpFlags(self.b()[13])
    }

    pub fn window(&self) -> u16 {
        self.be16(14)
    }

    /// The checksum field as carried.
    pub fn checksum(&self) -> u16 {
        self.be16(16)
    }

    pub fn urgent(&self) -> u16 {
        self.be16(18)
    }

    /// The options, as carried (padding included).
    pub fn options(&self) -> &[u8] {
        &self.b()[HEADER_LEN..self.header_len()]
    }

    /// The data: everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }

    fn pseudo(&self, src: [u8; 4], dst: [u8; 4]) -> u16 {
        // new_checked bounds the length by 65535.
        pseudo_header_sum(src, dst, PROTOCOL_TCP, self.b().len() as u16)
    }

    /// The checksum the segment should carry between `src` and `dst` (its field taken
    /// as zero).
    pub fn computed_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> u16 {
        let b = self.b();
        !ones_complement_add(ones_complement_add(self.pseudo(src, dst), ones_complement_sum(&b[..16])), ones_complement_sum(&b[18..]))
    }

    /// True when the one's-complement sum of pseudo-header and segment, checksum
    /// included, is all ones.
    pub fn verify_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> bool {
        ones_complement_add(self.pseudo(src, dst), ones_complement_sum(self.b())) == 0xffff
    }
}

/// MSS and window scale from an option list; the rest is skipped.
fn parse_options(mut opts: &[u8]) -> Result<(Option<u16>, Option<u8>), WireError> {
    let (mut mss, mut window_scale) = (None, None);
    while let [kind, rest @ ..] = opts {
        match *kind {
            OPT_END => break,
            OPT_NOP => opts = rest,
            kind => {
                let malformed = WireError::TcpOption { kind };
                let len = usize::from(*rest.first().ok_or(malformed.clone())?);
                if len < 2 || len > opts.len() {
                    return Err(malformed);
                }
                let value = &opts[2..len];
                match (kind, value) {
                    (OPT_MSS, &[hi, lo]) => mss = Some(u16::from_be_bytes([hi, lo])),
                    (OPT_WINDOW_SCALE, &[shift]) => window_scale = Some(shift),
                    (OPT_MSS | OPT_WINDOW_SCALE, _) => return Err(malformed),
                    _ => {}
                }
                opts = &opts[len..];
            }
        }
    }
    Ok((mss, window_scale))
}

/// A parsed TCP header (options reduced to MSS and window scale; the checksum, which
/// `emit` computes and `parse` verifies, left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    /// The acknowledgment number, carried as is; it means something when `flags`
    /// contains [`TcpFlags::ACK`].
    pub ack: u32,
    pub flags: TcpFlags,
    pub window: u16,
    pub urgent: u16,
    /// Maximum segment size option (kind 2).
    pub mss: Option<u16>,
    /// Window scale option (kind 3): the shift count as carried (RFC 7323 caps its use
    /// at 14; the wire format does not).
    pub window_scale: Option<u8>,
    /// Octets of data after the header.
    pub payload_len: usize,
}

impl TcpRepr {
    /// Octets of the header `emit` writes, options included.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN + if self.mss.is_some() { 4 } else { 0 } + if self.window_scale.is_some() { 4 } else { 0 }
    }

    /// Octets `emit` writes: header and data (saturating, as [`Ipv4Repr::total_len`]).
    ///
    /// [`Ipv4Repr::total_len`]: crate::ipv4::Ipv4Repr::total_len
    pub const fn buffer_len(&self) -> usize {
        self.header_len().saturating_add(self.payload_len)
    }

    /// Reads a checked view of a segment sent from `src` to `dst`: the checksum must be
    /// right and the options well formed (each within the header, with a length of at
    /// least 2; MSS of length 4, window scale of length 3).
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>, src: [u8; 4], dst: [u8; 4]) -> Result<TcpRepr, WireError> {
        if !packet.verify_checksum(src, dst) {
            return Err(WireError::TcpChecksum { computed: packet.computed_checksum(src, dst), carried: packet.checksum() });
        }
        let (mss, window_scale) = parse_options(packet.options())?;
        Ok(TcpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            seq: packet.seq(),
            ack: packet.ack(),
            flags: packet.flags(),
            window: packet.window(),
            urgent: packet.urgent(),
            mss,
            window_scale,
            payload_len: packet.payload().len(),
        })
    }

    /// Writes header, options and `payload` (which must be `payload_len` octets) at the
    /// start of `buf`, the checksum computed for a segment from `src` to `dst`. The
    /// segment is the first [`TcpRepr::buffer_len`] octets; a parser must be given
    /// exactly those.
    pub fn emit(&self, buf: &mut [u8], src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Result<(), WireError> {
        if payload.len() != self.payload_len {
            return Err(WireError::PayloadLen { expected: self.payload_len, got: payload.len() });
        }
        let n = self.buffer_len();
        if n > MAX_SEGMENT_LEN {
            return Err(WireError::FieldRange { field: "tcp length", value: u32::try_from(n).unwrap_or(u32::MAX), bits: 16 });
        }
        let Some(seg) = buf.get_mut(..n) else {
            return Err(WireError::Truncated { got: buf.len(), need: n });
        };
        let header = self.header_len();
        seg[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        seg[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        seg[4..8].copy_from_slice(&self.seq.to_be_bytes());
        seg[8..12].copy_from_slice(&self.ack.to_be_bytes());
        seg[12] = ((header / 4) as u8) << 4;
        seg[13] = self.flags.0;
        seg[14..16].copy_from_slice(&self.window.to_be_bytes());
        seg[16..18].fill(0);
        seg[18..20].copy_from_slice(&self.urgent.to_be_bytes());
        let mut at = HEADER_LEN;
        if let Some(mss) = self.mss {
            let [hi, lo] = mss.to_be_bytes();
            seg[at..at + 4].copy_from_slice(&[OPT_MSS, 4, hi, lo]);
            at += 4;
        }
        if let Some(shift) = self.window_scale {
            seg[at..at + 4].copy_from_slice(&[OPT_NOP, OPT_WINDOW_SCALE, 3, shift]);
        }
        seg[header..].copy_from_slice(payload);
        let c = !ones_complement_add(pseudo_header_sum(src, dst, PROTOCOL_TCP, n as u16), ones_complement_sum(seg));
        seg[16..18].copy_from_slice(&c.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipv4::{self, Ipv4Repr};
    use proptest::prelude::*;

    /// The pseudo-header and segment sum, by the test-only plain summation.
    fn reference_sum(src: [u8; 4], dst: [u8; 4], segment: &[u8]) -> u16 {
        crate::refsum::plain_pseudo_sum(src, dst, 6, segment.len() as u16, segment)
    }

    /// Sets the checksum field so that the segment checks, by the reference sum.
    fn fix_checksum(src: [u8; 4], dst: [u8; 4], segment: &mut [u8]) {
        segment[16..18].fill(0);
        let c = !reference_sum(src, dst, segment);
        segment[16..18].copy_from_slice(&c.to_be_bytes());
    }

    fn parse(bytes: &[u8], src: [u8; 4], dst: [u8; 4]) -> Result<TcpRepr, WireError> {
        TcpRepr::parse(&Packet::new_checked(bytes)?, src, dst)
    }

    /// A captured IPv4 datagram carrying a TCP ACK with timestamp options,
    /// 172.22.104.109:44831 → 74.125.159.103:80 (published with its decoding at
    /// mark.kandm-solutions.com, "checksum"), IP checksum 0x4eb6, TCP checksum 0x37a6.
    const CAPTURED_ACK: [u8; 52] = [
        0x45, 0x00, 0x00, 0x34, 0xed, 0xa5, 0x40, 0x00, 0x40, 0x06, 0x4e, 0xb6, 0xac, 0x16, 0x68, 0x6d, 0x4a, 0x7d, 0x9f, 0x67, // IPv4
        0xaf, 0x1f, 0x00, 0x50, 0xe8, 0x33, 0x8b, 0x62, 0xfc, 0x13, 0xda, 0x66, 0x80, 0x10, 0x00, 0x5c, 0x37, 0xa6, 0x00, 0x00, // TCP
        0x01, 0x01, 0x08, 0x0a, 0x04, 0xb8, 0x66, 0xf7, 0x4a, 0xdd, 0x90, 0x45, // NOP NOP TS
    ];

    /// A captured SYN-ACK, 64.142.126.178:80 → 192.168.1.3:36374, with MSS 1460,
    /// SACK-permitted, timestamps, NOP and window scale 2; checksum 0xfa03 (the segment
    /// of Suricata's TCP checksum unit test, src/decode-tcp.c).
    const SYN_ACK_SRC: [u8; 4] = [64, 142, 126, 178];
    const SYN_ACK_DST: [u8; 4] = [192, 168, 1, 3];
    const SYN_ACK: [u8; 40] = [
        0x00, 0x50, 0x8e, 0x16, 0x0d, 0x59, 0xcd, 0x3c, 0xcf, 0x0d, 0x21, 0x80, 0xa0, 0x12, 0x16, 0xa0, 0xfa, 0x03, 0x00, 0x00, // header
        0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x6e, 0x18, 0x78, 0x73, 0x01, 0x71, 0x74, 0xde, 0x01, 0x03, 0x03, 0x02, // options
    ];

    #[test]
    fn captured_ack_known_answer() {
        let ip = ipv4::Packet::new_checked(&CAPTURED_ACK[..]).unwrap();
        let ip_repr = Ipv4Repr::parse(&ip).unwrap();
        assert_eq!(ip_repr.protocol, ipv4::PROTOCOL_TCP);
        let (src, dst) = (ip_repr.src, ip_repr.dst);
        let seg = ip.payload();
        assert_eq!(seg.len(), 32);
        // The published checksum, by the independent sum: the field is zeroed and the
        // complement taken.
        let mut zeroed = seg.to_vec();
        zeroed[16..18].fill(0);
        assert_eq!(!reference_sum(src, dst, &zeroed), 0x37a6);
        assert_eq!(reference_sum(src, dst, seg), 0xffff);

        let p = Packet::new_checked(seg).unwrap();
        assert_eq!(p.header_len(), 32);
        assert_eq!(p.options(), &CAPTURED_ACK[40..]);
        assert_eq!(p.checksum(), 0x37a6);
        assert_eq!(p.computed_checksum(src, dst), 0x37a6);
        let r = TcpRepr::parse(&p, src, dst).unwrap();
        assert_eq!(
            r,
            TcpRepr { src_port: 44_831, dst_port: 80, seq: 0xe833_8b62, ack: 0xfc13_da66, flags: TcpFlags::ACK, window: 92, urgent: 0, mss: None, window_scale: None, payload_len: 0 }
        );
        // The wrong addresses (a misrouted segment) fail the checksum.
        assert!(TcpRepr::parse(&p, dst, src).is_ok(), "swapping src and dst keeps the sum");
        assert_eq!(TcpRepr::parse(&p, src, [74, 125, 159, 104]), Err(WireError::TcpChecksum { computed: 0x37a5, carried: 0x37a6 }));
    }

    #[test]
    fn captured_syn_ack_known_answer() {
        let mut zeroed = SYN_ACK;
        zeroed[16..18].fill(0);
        assert_eq!(!reference_sum(SYN_ACK_SRC, SYN_ACK_DST, &zeroed), 0xfa03);
        let r = parse(&SYN_ACK, SYN_ACK_SRC, SYN_ACK_DST).unwrap();
        assert_eq!(
            r,
            TcpRepr {
                src_port: 80,
                dst_port: 36_374,
                seq: 0x0d59_cd3c,
                ack: 0xcf0d_2180,
                flags: TcpFlags::SYN | TcpFlags::ACK,
                window: 5792,
                urgent: 0,
                mss: Some(1460),
                window_scale: Some(2),
                payload_len: 0,
            }
        );
        // Re-emitted with only MSS and window scale: 28 octets, and it checks.
        let mut out = [0u8; 28];
        r.emit(&mut out, SYN_ACK_SRC, SYN_ACK_DST, &[]).unwrap();
        assert_eq!(&out[..12], &SYN_ACK[..12]);
        assert_eq!(out[12], 0x70);
        assert_eq!(&out[20..], &[2, 4, 0x05, 0xb4, 1, 3, 3, 2]);
        assert_eq!(reference_sum(SYN_ACK_SRC, SYN_ACK_DST, &out), 0xffff);
        assert_eq!(parse(&out, SYN_ACK_SRC, SYN_ACK_DST), Ok(r));
    }

    #[test]
    fn syn_layout_by_hand() {
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let r = TcpRepr { src_port: 0x1234, dst_port: 0x0050, seq: 0x0102_0304, ack: 0, flags: TcpFlags::SYN, window: 0xffff, urgent: 0, mss: Some(9140), window_scale: Some(7), payload_len: 0 };
        let mut b = [0u8; 28];
        r.emit(&mut b, src, dst, &[]).unwrap();
        // 9140 = 0x23b4 (an ATM MTU of 9180 less 40 octets of headers).
        let expected_head = [0x12, 0x34, 0x00, 0x50, 1, 2, 3, 4, 0, 0, 0, 0, 0x70, 0x02, 0xff, 0xff];
        assert_eq!(&b[..16], &expected_head);
        assert_eq!(&b[18..], &[0, 0, 2, 4, 0x23, 0xb4, 1, 3, 3, 7]);
        let mut zeroed = b;
        zeroed[16..18].fill(0);
        assert_eq!(u16::from_be_bytes([b[16], b[17]]), !reference_sum(src, dst, &zeroed));
        // Without options: data offset 5.
        let bare = TcpRepr { mss: None, window_scale: None, ..r };
        let mut b = [0u8; 20];
        bare.emit(&mut b, src, dst, &[]).unwrap();
        assert_eq!(b[12], 0x50);
        assert_eq!(parse(&b, src, dst), Ok(bare));
        assert_eq!(format!("{:?}", TcpFlags::SYN | TcpFlags::ACK), "TcpFlags(SYN|ACK)");
        assert!((TcpFlags::SYN | TcpFlags::ACK).contains(TcpFlags::ACK));
        assert!(!TcpFlags::SYN.contains(TcpFlags::ACK));
    }

    #[test]
    fn a_whole_datagram_over_ipv4() {
        let (src, dst) = ([192, 0, 2, 1], [198, 51, 100, 7]);
        let data = b"GET / HTTP/1.0\r\n\r\n!"; // 19 octets: an odd length
        let tcp = TcpRepr { src_port: 40_000, dst_port: 80, seq: 1, ack: 2, flags: TcpFlags::PSH | TcpFlags::ACK, window: 8192, urgent: 0, mss: None, window_scale: None, payload_len: data.len() };
        let ip = Ipv4Repr { src, dst, protocol: ipv4::PROTOCOL_TCP, payload_len: tcp.buffer_len(), ttl: 64, ident: 7, dont_frag: true, more_frags: false, frag_offset: 0, tos: 0 };
        let mut d = vec![0u8; ip.total_len()];
        ip.emit(&mut d).unwrap();
        tcp.emit(&mut d[ip.buffer_len()..], src, dst, data).unwrap();

        let ip_packet = ipv4::Packet::new_checked(&d[..]).unwrap();
        let ip_back = Ipv4Repr::parse(&ip_packet).unwrap();
        assert_eq!(ip_back, ip);
        let seg = Packet::new_checked(ip_packet.payload()).unwrap();
        assert_eq!(TcpRepr::parse(&seg, ip_back.src, ip_back.dst), Ok(tcp));
        assert_eq!(seg.payload(), data);
        assert_eq!(reference_sum(src, dst, ip_packet.payload()), 0xffff);
    }

    #[test]
    fn emit_rejects_what_does_not_fit() {
        let r = TcpRepr { src_port: 1, dst_port: 2, seq: 3, ack: 4, flags: TcpFlags::ACK, window: 5, urgent: 0, mss: Some(536), window_scale: None, payload_len: 3 };
        assert_eq!(r.emit(&mut [0u8; 26], [0; 4], [0; 4], b"abc"), Err(WireError::Truncated { got: 26, need: 27 }));
        assert_eq!(r.emit(&mut [0u8; 27], [0; 4], [0; 4], b"ab"), Err(WireError::PayloadLen { expected: 3, got: 2 }));
        assert!(r.emit(&mut [0u8; 27], [0; 4], [0; 4], b"abc").is_ok());
        let big = TcpRepr { mss: None, payload_len: 65_516, ..r };
        let payload = vec![0u8; 65_516];
        assert!(matches!(big.emit(&mut vec![0u8; 70_000], [0; 4], [0; 4], &payload), Err(WireError::FieldRange { field: "tcp length", value: 65_536, bits: 16 })));
    }

    #[test]
    fn truncated_and_malformed_segments_are_rejected() {
        let (src, dst) = (SYN_ACK_SRC, SYN_ACK_DST);
        for n in 0..20 {
            assert_eq!(parse(&SYN_ACK[..n], src, dst), Err(WireError::Truncated { got: n, need: 20 }));
        }
        // Data offset 10: the header is 40 octets.
        for n in 20..40 {
            assert_eq!(parse(&SYN_ACK[..n], src, dst), Err(WireError::Truncated { got: n, need: 40 }));
        }
        // TCP has no length field: a segment cut after its header is told by the
        // checksum, whose pseudo-header carries the length.
        let mut with_data = [0u8; 32];
        let r = TcpRepr { payload_len: 4, ..parse(&SYN_ACK, src, dst).unwrap() };
        r.emit(&mut with_data, src, dst, b"data").unwrap();
        for n in 28..32 {
            assert!(matches!(parse(&with_data[..n], src, dst), Err(WireError::TcpChecksum { .. })), "cut at {n}");
        }
        // Data offsets below 5.
        for offset in 0..5u8 {
            let mut bad = SYN_ACK;
            bad[12] = offset << 4;
            fix_checksum(src, dst, &mut bad);
            assert_eq!(parse(&bad, src, dst), Err(WireError::TcpDataOffset(offset)));
        }
        // Data offset 15 beyond a 40-octet segment.
        let mut long = SYN_ACK;
        long[12] = 0xf0;
        assert_eq!(parse(&long, src, dst), Err(WireError::Truncated { got: 40, need: 60 }));
        // Longer than a pseudo-header can say.
        let huge = vec![0x50u8; 65_536];
        assert!(matches!(parse(&huge, src, dst), Err(WireError::FieldRange { field: "tcp length", .. })));
    }

    /// A 24-octet segment with the given four octets of options, its checksum right.
    fn with_options(opts: [u8; 4]) -> [u8; 24] {
        let mut s = [0u8; 24];
        s[12] = 0x60;
        s[13] = TcpFlags::SYN.0;
        s[20..].copy_from_slice(&opts);
        fix_checksum([1, 2, 3, 4], [5, 6, 7, 8], &mut s);
        s
    }

    #[test]
    fn options_are_walked() {
        let opts = |o| parse(&with_options(o), [1, 2, 3, 4], [5, 6, 7, 8]).map(|r| (r.mss, r.window_scale));
        assert_eq!(opts([2, 4, 0x05, 0xb4]), Ok((Some(1460), None)));
        assert_eq!(opts([1, 3, 3, 14]), Ok((None, Some(14))));
        // End of list: what follows is not read.
        assert_eq!(opts([0, 0xff, 0xff, 0xff]), Ok((None, None)));
        assert_eq!(opts([1, 0, 2, 9]), Ok((None, None)));
        // Unknown kinds are skipped by their length (SACK-permitted, then padding).
        assert_eq!(opts([4, 2, 1, 1]), Ok((None, None)));
        assert_eq!(opts([0xfe, 4, 2, 4]), Ok((None, None)));
        // Malformed: a length below 2, past the header, missing, or wrong for the kind.
        assert_eq!(opts([8, 0, 0, 0]), Err(WireError::TcpOption { kind: 8 }));
        assert_eq!(opts([8, 1, 0, 0]), Err(WireError::TcpOption { kind: 8 }));
        assert_eq!(opts([1, 1, 2, 4]), Err(WireError::TcpOption { kind: 2 }));
        assert_eq!(opts([1, 1, 1, 8]), Err(WireError::TcpOption { kind: 8 }));
        assert_eq!(opts([2, 3, 5, 0]), Err(WireError::TcpOption { kind: 2 }));
        assert_eq!(opts([3, 4, 7, 0]), Err(WireError::TcpOption { kind: 3 }));
        assert_eq!(opts([3, 2, 0, 0]), Err(WireError::TcpOption { kind: 3 }));
    }

    fn any_repr() -> impl Strategy<Value = (TcpRepr, Vec<u8>)> {
        (
            (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>(), any::<u8>(), any::<u16>(), any::<u16>()),
            (proptest::option::of(any::<u16>()), proptest::option::of(any::<u8>()), proptest::collection::vec(any::<u8>(), 0..64)),
        )
            .prop_map(|((src_port, dst_port, seq, ack, flags, window, urgent), (mss, window_scale, payload))| {
                (TcpRepr { src_port, dst_port, seq, ack, flags: TcpFlags(flags), window, urgent, mss, window_scale, payload_len: payload.len() }, payload)
            })
    }

    fn emitted(r: &TcpRepr, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut s = vec![0u8; r.buffer_len()];
        r.emit(&mut s, src, dst, payload).unwrap();
        s
    }

    proptest! {
        #[test]
        fn emit_parse_round_trip((r, payload) in any_repr(), src: [u8; 4], dst: [u8; 4]) {
            let s = emitted(&r, src, dst, &payload);
            prop_assert_eq!(reference_sum(src, dst, &s), 0xffff, "the emitted checksum checks by the reference sum");
            let p = Packet::new_checked(&s[..]).unwrap();
            prop_assert_eq!(TcpRepr::parse(&p, src, dst), Ok(r));
            prop_assert_eq!(p.payload(), &payload[..]);
        }

        /// Every single-bit error in the segment, header, options and data, is caught by
        /// the checksum, but in the data offset, where the length checks may see it
        /// first; so is every single-bit error in either address of the pseudo-header.
        #[test]
        fn every_single_bit_flip_is_detected((r, payload) in any_repr(), src: [u8; 4], dst: [u8; 4]) {
            let good = emitted(&r, src, dst, &payload);
            for bit in 0..good.len() * 8 {
                let mut bad = good.clone();
                bad[bit / 8] ^= 0x80 >> (bit % 8);
                let res = parse(&bad, src, dst);
                if (96..100).contains(&bit) {
                    prop_assert!(
                        matches!(res, Err(WireError::TcpChecksum { .. } | WireError::TcpDataOffset(_) | WireError::Truncated { .. })),
                        "bit {}: {:?}", bit, res
                    );
                } else {
                    prop_assert!(matches!(res, Err(WireError::TcpChecksum { .. })), "bit {}: {:?}", bit, res);
                }
            }
            for bit in 0..32 {
                let mut a = src;
                a[bit / 8] ^= 0x80 >> (bit % 8);
                prop_assert!(matches!(parse(&good, a, dst), Err(WireError::TcpChecksum { .. })), "source bit {}", bit);
                let mut a = dst;
                a[bit / 8] ^= 0x80 >> (bit % 8);
                prop_assert!(matches!(parse(&good, src, a), Err(WireError::TcpChecksum { .. })), "destination bit {}", bit);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), src: [u8; 4], dst: [u8; 4]) {
            let _ = parse(&bytes, src, dst);
        }

        /// Arbitrary bytes with a plausible data offset and a right checksum, so that the
        /// options are walked whatever they hold; what parses re-emits to a segment that
        /// parses the same.
        #[test]
        fn arbitrary_options_parse_or_fail_cleanly(mut bytes in proptest::collection::vec(any::<u8>(), 20..100), offset in 5u8..16, src: [u8; 4], dst: [u8; 4]) {
            let offset = offset.min((bytes.len() / 4) as u8);
            bytes[12] = (offset << 4) | (bytes[12] & 0x0f);
            fix_checksum(src, dst, &mut bytes);
            match parse(&bytes, src, dst) {
                Ok(r) => {
                    let payload = Packet::new_checked(&bytes[..]).unwrap().payload().to_vec();
                    let again = emitted(&r, src, dst, &payload);
                    prop_assert_eq!(parse(&again, src, dst), Ok(r));
                }
                Err(e) => prop_assert!(matches!(e, WireError::TcpOption { .. }), "{:?}", e),
            }
        }
    }
}
