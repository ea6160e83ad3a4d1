//! The IPv4 header (RFC 791 section 3.1) and the Internet checksum (RFC 1071).
//!
//! ```text
//!   0                   1                   2                   3
//!   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |Version|  IHL  |  DSCP     |ECN|          Total Length         |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |         Identification        |0|D|M|      Fragment Offset    |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |  Time to Live |    Protocol   |         Header Checksum       |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |                       Source Address                          |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |                    Destination Address                        |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |                    Options (IHL > 5)                          |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! IHL counts the header in 32-bit words (at least 5); Total Length counts header and
//! data in octets; the fragment offset counts 8-octet units. The second octet, once the
//! type of service, is DSCP (RFC 2474) and ECN (RFC 3168). The header checksum is the
//! one's complement of the one's-complement sum of the header's 16-bit words, taken with
//! the checksum field zero (RFC 1071); a receiver sums the header as it came, checksum
//! included, and accepts it if the sum is all ones.
//!
//! [`Packet`] is a view over bytes that [`Packet::new_checked`] has found long enough
//! for every field it reads (IHL at least 5, the header and the Total Length within the
//! buffer), so none of its accessors can panic. Options are skipped on parse and never
//! emitted.

use crate::WireError;

/// Octets of a header without options (IHL = 5).
pub const HEADER_LEN: usize = 20;
/// Octets of the largest header (IHL = 15).
pub const MAX_HEADER_LEN: usize = 60;
/// Protocol numbers (IANA "Assigned Internet Protocol Numbers").
pub const PROTOCOL_ICMP: u8 = 1;
pub const PROTOCOL_TCP: u8 = 6;
pub const PROTOCOL_UDP: u8 = 17;

/// The 16-bit one's-complement sum of `data` taken as big-endian words, an odd last
/// octet padded on the right with zero (RFC 1071 section 1), folded to 16 bits but not
/// complemented. Sums of consecutive pieces combine with [`ones_complement_add`] as long
/// as every piece but the last has an even length.
pub fn ones_complement_sum(data: &[u8]) -> u16 {
    let mut words = data.chunks_exact(2);
    // 2^48 words before a u64 could overflow: no slice is that long.
    let mut acc: u64 = words.by_ref().map(|w| u64::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// One's-complement addition of two 16-bit sums (end-around carry).
pub fn ones_complement_add(a: u16, b: u16) -> u16 {
    let s = u32::from(a) + u32::from(b);
    ((s & 0xffff) + (s >> 16)) as u16
}

/// The Internet checksum of `data`: the one's complement of [`ones_complement_sum`].
/// Over a header whose checksum field is zero it is the value to put there; over a
/// header carrying a right checksum it is zero (or 0xffff, the other zero).
pub fn checksum(data: &[u8]) -> u16 {
    !ones_complement_sum(data)
}

/// The one's-complement sum of the IPv4 pseudo-header that TCP and UDP checksums cover
/// (RFC 793 section 3.1): source address, destination address, a zero octet, the
/// protocol and the length of the transport segment (header and data) in octets.
pub fn pseudo_header_sum(src: [u8; 4], dst: [u8; 4], protocol: u8, length: u16) -> u16 {
    let mut ph = [0u8; 12];
    ph[..4].copy_from_slice(&src);
    ph[4..8].copy_from_slice(&dst);
    ph[9] = protocol;
    ph[10..12].copy_from_slice(&length.to_be_bytes());
    ones_complement_sum(&ph)
}

/// A view over the bytes of an IPv4 datagram, checked by [`Packet::new_checked`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

crate::byte_view!(Packet);

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks that the buffer holds a whole header and the datagram its Total Length
    /// claims (the buffer may be longer: link-layer padding is ignored). Does not look
    /// at the version or the checksum; [`Ipv4Repr::parse`] does.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let b = buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: b.len(), need: HEADER_LEN });
        }
        let ihl = b[0] & 0x0f;
        if ihl < 5 {
            return Err(WireError::Ipv4HeaderLen(ihl));
        }
        let header = usize::from(ihl) * 4;
        if b.len() < header {
            return Err(WireError::Truncated { got: b.len(), need: header });
        }
        let total = usize::from(u16::from_be_bytes([b[2], b[3]]));
        if total < header {
            return Err(WireError::Ipv4TotalLen { total, header });
        }
        if b.len() < total {
            return Err(WireError::Truncated { got: b.len(), need: total });
        }
        Ok(Packet { buffer })
    }

    pub fn version(&self) -> u8 {
        self.b()[0] >> 4
    }

    /// Octets of the header, options included (IHL · 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[0] & 0x0f) * 4
    }

    /// The second octet whole: DSCP in the six high bits, ECN in the two low ones.
    pub fn tos(&self) -> u8 {
        self.b()[1]
    }

    pub fn dscp(&self) -> u8 {
        self.b()[1] >> 2
    }

    pub fn ecn(&self) -> u8 {
        self.b()[1] & 0x03
    }

    /// Octets of the datagram, header included.
    pub fn total_len(&self) -> u16 {
        self.be16(2)
    }

    pub fn ident(&self) -> u16 {
        self.be16(4)
    }

    pub fn dont_frag(&self) -> bool {
        self.b()[6] & 0x40 != 0
    }

    pub fn more_frags(&self) -> bool {
        self.b()[6] & 0x20 != 0
    }

    /// The fragment offset in octets (the field counts 8-octet units).
    pub fn frag_offset(&self) -> u16 {
        (self.be16(6) & 0x1fff) << 3
    }

    pub fn ttl(&self) -> u8 {
        self.b()[8]
    }

    pub fn protocol(&self) -> u8 {
        self.b()[9]
    }

    /// The checksum field as carried.
    pub fn checksum(&self) -> u16 {
        self.be16(10)
    }

    pub fn src_addr(&self) -> [u8; 4] {
        let b = self.b();
        [b[12], b[13], b[14], b[15]]
    }

    pub fn dst_addr(&self) -> [u8; 4] {
        let b = self.b();
        [b[16], b[17], b[18], b[19]]
    }

    /// The options, as carried (empty when IHL = 5).
    pub fn options(&self) -> &[u8] {
        &self.b()[HEADER_LEN..self.header_len()]
    }

    /// The data: from the end of the header to Total Length.
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..usize::from(self.total_len())]
    }

    /// The checksum the header should carry (its field taken as zero).
    pub fn computed_checksum(&self) -> u16 {
        let h = &self.b()[..self.header_len()];
        !ones_complement_add(ones_complement_sum(&h[..10]), ones_complement_sum(&h[12..]))
    }

    /// True when the one's-complement sum of the header, checksum included, is all ones.
    pub fn verify_checksum(&self) -> bool {
        ones_complement_sum(&self.b()[..self.header_len()]) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn b_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Sets the time to live (a router decrements it; then [`Packet::fill_checksum`]).
    pub fn set_ttl(&mut self, ttl: u8) {
        self.b_mut()[8] = ttl;
    }

    /// Writes the checksum of the header as it stands.
    pub fn fill_checksum(&mut self) {
        let c = self.computed_checksum();
        self.b_mut()[10..12].copy_from_slice(&c.to_be_bytes());
    }

    /// The data, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        &mut self.b_mut()[start..end]
    }
}

/// A parsed IPv4 header (without options, without the checksum, which `emit`
/// computes and `parse` verifies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    /// Octets of data after the header (Total Length less the header).
    pub payload_len: usize,
    pub ttl: u8,
    pub ident: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    /// Fragment offset in octets, a multiple of 8.
    pub frag_offset: u16,
    /// DSCP (six high bits) and ECN (two low bits).
    pub tos: u8,
}

impl Ipv4Repr {
    /// Octets `emit` writes: the header, without options.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Octets of the whole datagram (the Total Length field; saturating, so that a
    /// `payload_len` near `usize::MAX` gives an error from `emit`, not an overflow).
    pub const fn total_len(&self) -> usize {
        HEADER_LEN.saturating_add(self.payload_len)
    }

    /// Reads a checked view: the version must be 4 and the checksum right. Options are
    /// skipped; `payload_len` is Total Length less the header, options included.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Ipv4Repr, WireError> {
        if packet.version() != 4 {
            return Err(WireError::Ipv4Version(packet.version()));
        }
        if !packet.verify_checksum() {
            return Err(WireError::Ipv4Checksum { computed: packet.computed_checksum(), carried: packet.checksum() });
        }
        Ok(Ipv4Repr {
            src: packet.src_addr(),
            dst: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len: usize::from(packet.total_len()) - packet.header_len(),
            ttl: packet.ttl(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            tos: packet.tos(),
        })
    }

    /// Writes the 20-octet header, checksum included, at the start of `buf`. The data
    /// (`payload_len` octets) is the caller's to write after it.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let total = self.total_len();
        if total > usize::from(u16::MAX) {
            return Err(WireError::FieldRange { field: "total length", value: u32::try_from(total).unwrap_or(u32::MAX), bits: 16 });
        }
        if self.frag_offset & 0x7 != 0 {
            return Err(WireError::FragOffset(self.frag_offset));
        }
        let Some(h) = buf.get_mut(..HEADER_LEN) else {
            return Err(WireError::Truncated { got: buf.len(), need: HEADER_LEN });
        };
        h[0] = 0x45;
        h[1] = self.tos;
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        h[4..6].copy_from_slice(&self.ident.to_be_bytes());
        let flags_frag = (u16::from(self.dont_frag) << 14) | (u16::from(self.more_frags) << 13) | (self.frag_offset >> 3);
        h[6..8].copy_from_slice(&flags_frag.to_be_bytes());
        h[8] = self.ttl;
        h[9] = self.protocol;
        h[10..12].fill(0);
        h[12..16].copy_from_slice(&self.src);
        h[16..20].copy_from_slice(&self.dst);
        let c = checksum(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::refsum::plain_sum as reference_sum;

    fn parse(bytes: &[u8]) -> Result<Ipv4Repr, WireError> {
        Ipv4Repr::parse(&Packet::new_checked(bytes)?)
    }

    /// The classic example header (a UDP datagram 192.168.0.1 → 192.168.0.199, total
    /// length 115, DF, TTL 64), whose checksum is 0xb861.
    const CLASSIC: [u8; 20] = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];

    /// The IP header of a captured TCP segment (172.22.104.109 → 74.125.159.103, ident
    /// 0xeda5, DF, TTL 64, total length 52), checksum 0x4eb6; the whole segment is in
    /// the tcp module's tests.
    const CAPTURED: [u8; 20] = [0x45, 0x00, 0x00, 0x34, 0xed, 0xa5, 0x40, 0x00, 0x40, 0x06, 0x4e, 0xb6, 0xac, 0x16, 0x68, 0x6d, 0x4a, 0x7d, 0x9f, 0x67];

    #[test]
    fn rfc1071_section3_example() {
        // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to 0xddf2 (carries
        // folded), whose complement 0x220d is the checksum.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(reference_sum(&data), 0xddf2);
        assert_eq!(ones_complement_sum(&data), 0xddf2);
        assert_eq!(checksum(&data), 0x220d);
        // The sum does not depend on byte order (RFC 1071 section 2(B)): swapped, 0xf2dd.
        let swapped = [0x01, 0x00, 0x03, 0xf2, 0xf5, 0xf4, 0xf7, 0xf6];
        assert_eq!(ones_complement_sum(&swapped), 0xf2dd);
        // An odd octet is padded on the right; sums of even pieces add up.
        assert_eq!(ones_complement_sum(&[0xab]), 0xab00);
        assert_eq!(ones_complement_add(ones_complement_sum(&data[..4]), ones_complement_sum(&data[4..])), 0xddf2);
        assert_eq!(ones_complement_sum(&[]), 0);
    }

    #[test]
    fn classic_header_known_answer() {
        let mut zeroed = CLASSIC;
        zeroed[10..12].fill(0);
        assert_eq!(!reference_sum(&zeroed), 0xb861, "the reference agrees with the published value");
        assert_eq!(checksum(&zeroed), 0xb861);
        assert_eq!(reference_sum(&CLASSIC), 0xffff);

        let mut datagram = [0u8; 0x73];
        datagram[..20].copy_from_slice(&CLASSIC);
        let p = Packet::new_checked(&datagram[..]).unwrap();
        assert_eq!((p.version(), p.header_len(), p.total_len()), (4, 20, 115));
        assert_eq!((p.dscp(), p.ecn(), p.ident(), p.dont_frag(), p.more_frags(), p.frag_offset()), (0, 0, 0, true, false, 0));
        assert_eq!((p.ttl(), p.protocol(), p.checksum()), (64, PROTOCOL_UDP, 0xb861));
        assert!(p.verify_checksum());
        assert_eq!(p.computed_checksum(), 0xb861);
        assert_eq!(p.payload().len(), 95);
        let repr = Ipv4Repr::parse(&p).unwrap();
        let expected = Ipv4Repr {
            src: [192, 168, 0, 1],
            dst: [192, 168, 0, 199],
            protocol: PROTOCOL_UDP,
            payload_len: 95,
            ttl: 64,
            ident: 0,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            tos: 0,
        };
        assert_eq!(repr, expected);
        let mut out = [0u8; 20];
        expected.emit(&mut out).unwrap();
        assert_eq!(out, CLASSIC);
    }

    #[test]
    fn captured_header_known_answer() {
        let mut zeroed = CAPTURED;
        zeroed[10..12].fill(0);
        assert_eq!(!reference_sum(&zeroed), 0x4eb6);
        let mut datagram = [0u8; 52];
        datagram[..20].copy_from_slice(&CAPTURED);
        let repr = parse(&datagram).unwrap();
        assert_eq!(repr.src, [172, 22, 104, 109]);
        assert_eq!(repr.dst, [74, 125, 159, 103]);
        assert_eq!((repr.protocol, repr.payload_len, repr.ident), (PROTOCOL_TCP, 32, 0xeda5));
        let mut out = [0u8; 20];
        repr.emit(&mut out).unwrap();
        assert_eq!(out, CAPTURED);
    }

    #[test]
    fn pseudo_header_sum_by_hand() {
        // c0a8 + 0001 + c0a8 + 00c7 + 0006 + 0014 = 0x18232 → 0x8233.
        assert_eq!(pseudo_header_sum([192, 168, 0, 1], [192, 168, 0, 199], PROTOCOL_TCP, 20), 0x8233);
        let ph = [192, 168, 0, 1, 192, 168, 0, 199, 0, 6, 0, 20];
        assert_eq!(reference_sum(&ph), 0x8233);
    }

    #[test]
    fn fragment_fields() {
        let r = Ipv4Repr { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], protocol: PROTOCOL_UDP, payload_len: 8, ttl: 1, ident: 0x1234, dont_frag: false, more_frags: true, frag_offset: 8 * 185, tos: 0xb8 };
        let mut b = [0u8; 28];
        r.emit(&mut b).unwrap();
        // MF is bit 13 of octets 6–7, the offset field 185 = 0x0b9 units.
        assert_eq!(&b[6..8], &[0x20, 0xb9]);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.dscp(), p.ecn()), (46, 0), "EF is DSCP 46");
        assert_eq!(Ipv4Repr::parse(&p), Ok(r));
        // The largest offset: 8191 units.
        let last = Ipv4Repr { frag_offset: 65_528, ..r };
        last.emit(&mut b).unwrap();
        assert_eq!(&b[6..8], &[0x3f, 0xff]);
        assert_eq!(parse(&b), Ok(last));
    }

    #[test]
    fn emit_rejects_what_does_not_fit() {
        let r = Ipv4Repr { src: [0; 4], dst: [0; 4], protocol: 0, payload_len: 0, ttl: 0, ident: 0, dont_frag: false, more_frags: false, frag_offset: 0, tos: 0 };
        assert_eq!(r.emit(&mut [0u8; 19]), Err(WireError::Truncated { got: 19, need: 20 }));
        assert_eq!(Ipv4Repr { frag_offset: 12, ..r }.emit(&mut [0u8; 20]), Err(WireError::FragOffset(12)));
        assert!(matches!(Ipv4Repr { payload_len: 65_516, ..r }.emit(&mut [0u8; 20]), Err(WireError::FieldRange { field: "total length", .. })));
        assert!(Ipv4Repr { payload_len: 65_515, ..r }.emit(&mut [0u8; 20]).is_ok());
        assert!(matches!(Ipv4Repr { payload_len: usize::MAX, ..r }.emit(&mut [0u8; 20]), Err(WireError::FieldRange { field: "total length", value: u32::MAX, .. })));
    }

    #[test]
    fn options_are_skipped() {
        // IHL 6: one word of options (a NOP and an end-of-options, then padding).
        let mut b = [0u8; 28];
        b[..20].copy_from_slice(&CLASSIC);
        b[0] = 0x46;
        b[2..4].copy_from_slice(&28u16.to_be_bytes());
        b[20] = 0x01;
        b[24..28].copy_from_slice(b"data");
        b[10..12].fill(0);
        let c = !reference_sum(&b[..24]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.options(), &[1, 0, 0, 0]);
        assert_eq!(p.payload(), b"data");
        let r = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(r.payload_len, 4);
        assert_eq!(r.src, [192, 168, 0, 1]);
    }

    #[test]
    fn truncated_and_malformed_headers_are_rejected() {
        let mut d = vec![0u8; 115];
        d[..20].copy_from_slice(&CLASSIC);
        for n in 0..20 {
            assert_eq!(parse(&d[..n]), Err(WireError::Truncated { got: n, need: 20 }));
        }
        // Total Length 115 does not fit a shorter buffer.
        for n in 20..115 {
            assert_eq!(parse(&d[..n]), Err(WireError::Truncated { got: n, need: 115 }));
        }
        assert!(parse(&d).is_ok());
        // Link-layer padding past Total Length is ignored.
        let mut padded = d.clone();
        padded.extend_from_slice(&[0xee; 7]);
        assert_eq!(Packet::new_checked(&padded[..]).unwrap().payload().len(), 95);
        assert!(parse(&padded).is_ok());

        // Version 6 (the checksum adjusted so only the version is wrong).
        let mut v6 = d.clone();
        v6[0] = 0x65;
        v6[10..12].fill(0);
        let c = !reference_sum(&v6[..20]);
        v6[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse(&v6), Err(WireError::Ipv4Version(6)));

        // IHL below 5.
        for ihl in 0..5u8 {
            let mut bad = d.clone();
            bad[0] = 0x40 | ihl;
            assert_eq!(parse(&bad), Err(WireError::Ipv4HeaderLen(ihl)));
        }
        // IHL 15 (60 octets) beyond a 40-octet buffer whose Total Length is 40.
        let mut long = d[..40].to_vec();
        long[0] = 0x4f;
        long[2..4].copy_from_slice(&40u16.to_be_bytes());
        assert_eq!(parse(&long), Err(WireError::Truncated { got: 40, need: 60 }));
        // IHL 6 with Total Length 20: the header does not fit the datagram.
        let mut short_total = d.clone();
        short_total[0] = 0x46;
        short_total[2..4].copy_from_slice(&20u16.to_be_bytes());
        assert_eq!(parse(&short_total), Err(WireError::Ipv4TotalLen { total: 20, header: 24 }));
    }

    #[test]
    fn a_wrong_checksum_reports_both_values() {
        let mut d = vec![0u8; 115];
        d[..20].copy_from_slice(&CLASSIC);
        d[11] = 0x62;
        assert_eq!(parse(&d), Err(WireError::Ipv4Checksum { computed: 0xb861, carried: 0xb862 }));
    }

    #[test]
    fn router_hop_refills_the_checksum() {
        let mut d = [0u8; 115];
        d[..20].copy_from_slice(&CLASSIC);
        let mut p = Packet::new_checked(&mut d[..]).unwrap();
        p.set_ttl(p.ttl() - 1);
        assert!(!p.verify_checksum());
        p.fill_checksum();
        assert!(p.verify_checksum());
        // TTL 64 → 63 lowers the word 0x4011 by 0x0100, so the checksum rises by 0x0100.
        assert_eq!(p.checksum(), 0xb961);
        p.payload_mut()[0] = 0xaa;
        assert_eq!(d[20], 0xaa);
    }

    fn any_repr() -> impl Strategy<Value = Ipv4Repr> {
        (any::<[u8; 4]>(), any::<[u8; 4]>(), any::<u8>(), 0usize..1500, any::<u8>(), any::<u16>(), any::<bool>(), any::<bool>(), 0u16..8192, any::<u8>()).prop_map(
            |(src, dst, protocol, payload_len, ttl, ident, dont_frag, more_frags, units, tos)| Ipv4Repr {
                src,
                dst,
                protocol,
                payload_len,
                ttl,
                ident,
                dont_frag,
                more_frags,
                frag_offset: units * 8,
                tos,
            },
        )
    }

    fn emitted(r: &Ipv4Repr) -> Vec<u8> {
        let mut d = vec![0u8; r.total_len()];
        r.emit(&mut d).unwrap();
        d
    }

    proptest! {
        #[test]
        fn emit_parse_round_trip(r in any_repr()) {
            let d = emitted(&r);
            prop_assert_eq!(reference_sum(&d[..20]), 0xffff, "the emitted checksum checks by the reference sum");
            prop_assert_eq!(parse(&d), Ok(r));
        }

        #[test]
        fn the_sum_agrees_with_the_reference(data in proptest::collection::vec(any::<u8>(), 0..3000)) {
            prop_assert_eq!(ones_complement_sum(&data), reference_sum(&data));
        }

        /// Every single-bit error in the header is caught: by the checksum, or, in the
        /// version, IHL and Total Length fields, possibly first by their own checks.
        #[test]
        fn every_single_bit_flip_in_the_header_is_detected(r in any_repr()) {
            let good = emitted(&r);
            for bit in 0..160 {
                let mut bad = good.clone();
                bad[bit / 8] ^= 0x80 >> (bit % 8);
                let res = parse(&bad);
                let in_length_fields = bit < 8 || (16..32).contains(&bit);
                if in_length_fields {
                    prop_assert!(res.is_err(), "bit {} flip accepted", bit);
                } else {
                    prop_assert!(matches!(res, Err(WireError::Ipv4Checksum { .. })), "bit {}: {:?}", bit, res);
                }
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes);
        }

        /// Arbitrary bytes made to look like a header (version 4, a Total Length that
        /// fits, a right checksum) so that parsing goes all the way; what parses
        /// re-emits to a header that parses the same.
        #[test]
        fn arbitrary_headers_parse_or_fail_cleanly(mut bytes in proptest::collection::vec(any::<u8>(), 20..120), ihl in 0u8..16) {
            let n = bytes.len();
            bytes[0] = 0x40 | ihl;
            let total = (n - (bytes[3] as usize % 8)) as u16;
            bytes[2..4].copy_from_slice(&total.to_be_bytes());
            let h = (usize::from(ihl) * 4).clamp(20, n);
            bytes[10..12].fill(0);
            let c = !reference_sum(&bytes[..h]);
            bytes[10..12].copy_from_slice(&c.to_be_bytes());
            if let Ok(r) = parse(&bytes) {
                prop_assert!(ihl >= 5);
                let p = Packet::new_checked(&bytes[..]).unwrap();
                prop_assert_eq!(r.payload_len, p.payload().len());
                let mut again = vec![0u8; r.total_len()];
                r.emit(&mut again).unwrap();
                prop_assert_eq!(parse(&again), Ok(r));
            }
        }
    }
}
