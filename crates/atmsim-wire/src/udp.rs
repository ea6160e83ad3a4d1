//! The UDP header (RFC 768) and its checksum over the IPv4 pseudo-header.
//!
//! ```text
//!   0                   1                   2                   3
//!   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |          Source Port          |       Destination Port        |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |            Length             |           Checksum            |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |     Data ...
//!  +-+-+-+-+-
//! ```
//!
//! Length counts header and data in octets (at least 8). The checksum is the one's
//! complement of the one's-complement sum of the pseudo-header (source and destination
//! address, zero, protocol 17, the UDP length; see [`crate::ipv4::pseudo_header_sum`]),
//! header and data (an odd last octet padded with zero), taken with the checksum field
//! zero. A carried checksum of zero means the sender computed none (RFC 768: "all zero
//! transmitted checksum value means that the transmitter generated no checksum"), so a
//! computed zero is sent as 0xffff, its one's-complement equal.
//!
//! The datagram is the first Length octets of the buffer; octets after them (padding,
//! as with IPv4's Total Length) are not read.

use crate::ipv4::{ones_complement_add, ones_complement_sum, pseudo_header_sum, PROTOCOL_UDP};
use crate::WireError;

/// Octets of the header.
pub const HEADER_LEN: usize = 8;
/// Largest datagram the Length field can carry.
pub const MAX_DATAGRAM_LEN: usize = 65_535;

/// A view over the bytes of a UDP datagram, checked by [`Packet::new_checked`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

crate::byte_view!(Packet);

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks that the buffer holds the header and the datagram its Length claims (the
    /// buffer may be longer: what follows is ignored), and that Length covers at least
    /// the header. Does not look at the checksum; [`UdpRepr::parse`] does.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let b = buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: b.len(), need: HEADER_LEN });
        }
        let length = u16::from_be_bytes([b[4], b[5]]);
        if usize::from(length) < HEADER_LEN {
            return Err(WireError::UdpLength(length));
        }
        if b.len() < usize::from(length) {
            return Err(WireError::Truncated { got: b.len(), need: usize::from(length) });
        }
        Ok(Packet { buffer })
    }

    pub fn src_port(&self) -> u16 {
        self.be16(0)
    }

    pub fn dst_port(&self) -> u16 {
        self.be16(2)
    }

    /// The Length field: octets of header and data.
    pub fn length(&self) -> u16 {
        self.be16(4)
    }

    /// The checksum field as carried (zero: none was computed).
    pub fn checksum(&self) -> u16 {
        self.be16(6)
    }

    /// True when the datagram carries a checksum (the field is not zero).
    pub fn has_checksum(&self) -> bool {
        self.checksum() != 0
    }

    /// The datagram: header and data, the first Length octets of the buffer.
    fn datagram(&self) -> &[u8] {
        &self.b()[..usize::from(self.length())]
    }

    /// The data: from the end of the header to Length.
    pub fn payload(&self) -> &[u8] {
        &self.datagram()[HEADER_LEN..]
    }

    fn pseudo(&self, src: [u8; 4], dst: [u8; 4]) -> u16 {
        pseudo_header_sum(src, dst, PROTOCOL_UDP, self.length())
    }

    /// The checksum the datagram should carry between `src` and `dst` (its field taken
    /// as zero; a computed zero given as 0xffff).
    pub fn computed_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> u16 {
        let d = self.datagram();
        let c = !ones_complement_add(ones_complement_add(self.pseudo(src, dst), ones_complement_sum(&d[..6])), ones_complement_sum(&d[8..]));
        if c == 0 {
            0xffff
        } else {
            c
        }
    }

    /// True when the datagram carries no checksum, or when the one's-complement sum of
    /// pseudo-header and datagram, checksum included, is all ones.
    pub fn verify_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> bool {
        !self.has_checksum() || ones_complement_add(self.pseudo(src, dst), ones_complement_sum(self.datagram())) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the checksum of the datagram as it stands, for `src` and `dst`.
    pub fn fill_checksum(&mut self, src: [u8; 4], dst: [u8; 4]) {
        let c = self.computed_checksum(src, dst);
        self.buffer.as_mut()[6..8].copy_from_slice(&c.to_be_bytes());
    }

    /// The data, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.length());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// A parsed UDP header (the Length reduced to `payload_len`; the checksum, which `emit`
/// computes and `parse` verifies when present, left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Octets of data after the header (Length less 8).
    pub payload_len: usize,
}

impl UdpRepr {
    /// Octets `emit` writes: header and data (the Length field; saturating, as
    /// [`Ipv4Repr::total_len`]).
    ///
    /// [`Ipv4Repr::total_len`]: crate::ipv4::Ipv4Repr::total_len
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN.saturating_add(self.payload_len)
    }

    /// Reads a checked view of a datagram sent from `src` to `dst`: the checksum, when
    /// carried, must be right.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>, src: [u8; 4], dst: [u8; 4]) -> Result<UdpRepr, WireError> {
        if !packet.verify_checksum(src, dst) {
            return Err(WireError::UdpChecksum { computed: packet.computed_checksum(src, dst), carried: packet.checksum() });
        }
        Ok(UdpRepr { src_port: packet.src_port(), dst_port: packet.dst_port(), payload_len: packet.payload().len() })
    }

    /// Writes header and `payload` (which must be `payload_len` octets) at the start of
    /// `buf`, with the checksum computed for a datagram from `src` to `dst` (always
    /// computed: a zero result is sent as 0xffff). The datagram is the first
    /// [`UdpRepr::buffer_len`] octets.
    pub fn emit(&self, buf: &mut [u8], src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Result<(), WireError> {
        if payload.len() != self.payload_len {
            return Err(WireError::PayloadLen { expected: self.payload_len, got: payload.len() });
        }
        let n = self.buffer_len();
        if n > MAX_DATAGRAM_LEN {
            return Err(WireError::FieldRange { field: "udp length", value: u32::try_from(n).unwrap_or(u32::MAX), bits: 16 });
        }
        let Some(d) = buf.get_mut(..n) else {
            return Err(WireError::Truncated { got: buf.len(), need: n });
        };
        d[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        d[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        d[4..6].copy_from_slice(&(n as u16).to_be_bytes());
        d[6..8].fill(0);
        d[HEADER_LEN..].copy_from_slice(payload);
        let c = !ones_complement_add(pseudo_header_sum(src, dst, PROTOCOL_UDP, n as u16), ones_complement_sum(d));
        let c = if c == 0 { 0xffff } else { c };
        d[6..8].copy_from_slice(&c.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipv4::{self, Ipv4Repr};
    use proptest::prelude::*;

    /// The pseudo-header (the length taken from the datagram's own Length field) and
    /// datagram sum, by the test-only plain summation.
    fn reference_sum(src: [u8; 4], dst: [u8; 4], datagram: &[u8]) -> u16 {
        crate::refsum::plain_pseudo_sum(src, dst, 17, u16::from_be_bytes([datagram[4], datagram[5]]), datagram)
    }

    /// The checksum field a datagram should carry, by the reference sum (a zero given as
    /// 0xffff).
    fn reference_checksum(src: [u8; 4], dst: [u8; 4], datagram: &[u8]) -> u16 {
        let mut z = datagram.to_vec();
        z[6..8].fill(0);
        match !reference_sum(src, dst, &z) {
            0 => 0xffff,
            c => c,
        }
    }

    /// Sets the checksum field so that the datagram checks, by the reference sum.
    fn fix_checksum(src: [u8; 4], dst: [u8; 4], datagram: &mut [u8]) {
        let c = reference_checksum(src, dst, datagram);
        datagram[6..8].copy_from_slice(&c.to_be_bytes());
    }

    fn parse(bytes: &[u8], src: [u8; 4], dst: [u8; 4]) -> Result<UdpRepr, WireError> {
        UdpRepr::parse(&Packet::new_checked(bytes)?, src, dst)
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// A captured DNS query, 192.168.1.32:55380 → 192.168.1.1:53, Length 66, checksum
    /// 0x1d81 (a packet dump in the UDP unit tests of the Python packet library nally):
    /// ID 0xfc3c, RD, one question, A IN for
    /// r3---sn-5ua5ouuxaxj-hn9e.googlevideo.com.
    const DNS_SRC: [u8; 4] = [192, 168, 1, 32];
    const DNS_DST: [u8; 4] = [192, 168, 1, 1];
    const DNS_QUERY: &str = concat!(
        "d854003500421d81", // header
        "fc3c0100000100000000000018",
        "72332d2d2d736e2d357561356f75757861786a2d686e3965",
        "0b676f6f676c65766964656f",
        "03636f6d00",
        "00010001",
    );

    /// A captured datagram of odd length, 192.168.1.32:53349 → 217.38.170.114:1194
    /// (OpenVPN), Length 121, checksum 0xa351 (the same test file).
    const ODD_SRC: [u8; 4] = [192, 168, 1, 32];
    const ODD_DST: [u8; 4] = [217, 38, 170, 114];
    const ODD_DATAGRAM: &str = concat!(
        "d06504aa0079a351",
        "306357a78616b3f152c9385a8a8e4a3492ba5b274254d97ef246282d8935ecfc",
        "be0479a496ceee59520792b0085edfe05edcbc585ffe8efed56489fd51dc2ba2",
        "49ff413a55906ba26bfb6109c27d7ea8cbc3cd218ad7d48340eea7964bfeb67b",
        "6dceb1fa74c3eea95936393f9b9489f09b",
    );

    #[test]
    fn dns_query_known_answer() {
        let d = hex(DNS_QUERY);
        assert_eq!(d.len(), 66);
        // The published checksum, by the independent sum.
        assert_eq!(reference_checksum(DNS_SRC, DNS_DST, &d), 0x1d81);
        assert_eq!(reference_sum(DNS_SRC, DNS_DST, &d), 0xffff);

        let p = Packet::new_checked(&d[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.length(), p.checksum()), (55_380, 53, 66, 0x1d81));
        assert!(p.has_checksum());
        assert_eq!(p.computed_checksum(DNS_SRC, DNS_DST), 0x1d81);
        assert!(p.verify_checksum(DNS_SRC, DNS_DST));
        let r = UdpRepr::parse(&p, DNS_SRC, DNS_DST).unwrap();
        assert_eq!(r, UdpRepr { src_port: 55_380, dst_port: 53, payload_len: 58 });
        // The DNS message: ID, flags (RD), QDCOUNT 1, ..., QTYPE A, QCLASS IN.
        let dns = p.payload();
        assert_eq!(&dns[..6], &[0xfc, 0x3c, 0x01, 0x00, 0x00, 0x01]);
        assert_eq!(dns[12], 24);
        assert_eq!(&dns[13..37], b"r3---sn-5ua5ouuxaxj-hn9e");
        assert_eq!(&dns[dns.len() - 4..], &[0, 1, 0, 1]);

        // Re-emitted, the same octets.
        let mut out = [0u8; 66];
        r.emit(&mut out, DNS_SRC, DNS_DST, dns).unwrap();
        assert_eq!(&out[..], &d[..]);

        // Misdelivered (another destination), it fails the checksum.
        assert_eq!(parse(&d, DNS_SRC, [192, 168, 1, 2]), Err(WireError::UdpChecksum { computed: 0x1d80, carried: 0x1d81 }));
        assert!(parse(&d, DNS_DST, DNS_SRC).is_ok(), "swapping src and dst keeps the sum");
    }

    #[test]
    fn odd_length_known_answer() {
        let d = hex(ODD_DATAGRAM);
        assert_eq!(d.len(), 121);
        assert_eq!(reference_checksum(ODD_SRC, ODD_DST, &d), 0xa351);
        let r = parse(&d, ODD_SRC, ODD_DST).unwrap();
        assert_eq!(r, UdpRepr { src_port: 53_349, dst_port: 1194, payload_len: 113 });
        let mut out = vec![0u8; 121];
        r.emit(&mut out, ODD_SRC, ODD_DST, &d[8..]).unwrap();
        assert_eq!(out, d);
    }

    #[test]
    fn dns_query_over_ipv4() {
        let d = hex(DNS_QUERY);
        let ip = Ipv4Repr { src: DNS_SRC, dst: DNS_DST, protocol: ipv4::PROTOCOL_UDP, payload_len: 66, ttl: 64, ident: 0x1c46, dont_frag: true, more_frags: false, frag_offset: 0, tos: 0 };
        let mut datagram = vec![0u8; ip.total_len()];
        ip.emit(&mut datagram).unwrap();
        let udp = parse(&d, DNS_SRC, DNS_DST).unwrap();
        udp.emit(&mut datagram[20..], DNS_SRC, DNS_DST, &d[8..]).unwrap();
        let ip_packet = ipv4::Packet::new_checked(&datagram[..]).unwrap();
        let ip_back = Ipv4Repr::parse(&ip_packet).unwrap();
        assert_eq!(ip_back.protocol, ipv4::PROTOCOL_UDP);
        assert_eq!(ip_packet.payload(), &d[..]);
        assert_eq!(parse(ip_packet.payload(), ip_back.src, ip_back.dst), Ok(udp));
    }

    #[test]
    fn a_zero_checksum_means_none() {
        let mut d = hex(DNS_QUERY);
        d[6..8].fill(0);
        let p = Packet::new_checked(&d[..]).unwrap();
        assert!(!p.has_checksum());
        assert!(p.verify_checksum([0; 4], [0; 4]), "no checksum: any addresses");
        assert_eq!(parse(&d, DNS_SRC, DNS_DST), Ok(UdpRepr { src_port: 55_380, dst_port: 53, payload_len: 58 }));
        // Nothing guards the data then.
        d[20] ^= 0xff;
        assert!(parse(&d, DNS_SRC, DNS_DST).is_ok());
        // fill_checksum puts one back.
        let mut p = Packet::new_checked(&mut d[..]).unwrap();
        p.fill_checksum(DNS_SRC, DNS_DST);
        assert!(p.has_checksum());
        assert_eq!(reference_sum(DNS_SRC, DNS_DST, &d), 0xffff);
        // Once the octet is restored, the checksum (of the altered data) no longer fits.
        d[20] ^= 0xff;
        let carried = u16::from_be_bytes([d[6], d[7]]);
        assert_ne!(carried, 0x1d81);
        assert_eq!(parse(&d, DNS_SRC, DNS_DST), Err(WireError::UdpChecksum { computed: 0x1d81, carried }));
    }

    #[test]
    fn a_computed_zero_is_sent_as_all_ones() {
        // Two octets of data chosen so that pseudo-header, header and data sum to
        // 0xffff with the checksum field zero: the checksum computes to zero.
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let mut d = [0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0a, 0, 0, 0, 0];
        let w = 0xffff - reference_sum(src, dst, &d);
        d[8..].copy_from_slice(&w.to_be_bytes());
        assert_eq!(reference_sum(src, dst, &d), 0xffff);
        let r = UdpRepr { src_port: 1234, dst_port: 5678, payload_len: 2 };
        let mut out = [0u8; 10];
        r.emit(&mut out, src, dst, &d[8..]).unwrap();
        assert_eq!(&out[6..8], &[0xff, 0xff]);
        // 0xffff is the other zero: the datagram still sums to all ones.
        assert_eq!(reference_sum(src, dst, &out), 0xffff);
        let p = Packet::new_checked(&out[..]).unwrap();
        assert_eq!(p.computed_checksum(src, dst), 0xffff);
        assert_eq!(UdpRepr::parse(&p, src, dst), Ok(r));
        // Carried as zero, the same datagram passes as one without checksum.
        out[6..8].fill(0);
        assert_eq!(parse(&out, src, dst), Ok(r));
    }

    #[test]
    fn layout_by_hand() {
        let (src, dst) = ([192, 0, 2, 1], [192, 0, 2, 2]);
        let r = UdpRepr { src_port: 0x1234, dst_port: 0x0035, payload_len: 1 };
        let mut out = [0u8; 9];
        r.emit(&mut out, src, dst, &[0xab]).unwrap();
        // Pseudo-header c000 0201 c000 0202 0011 0009, header 1234 0035 0009, data ab00:
        // 0x2418f → 0x4191, complement 0xbe6e.
        assert_eq!(out, [0x12, 0x34, 0x00, 0x35, 0x00, 0x09, 0xbe, 0x6e, 0xab]);
        assert_eq!(reference_checksum(src, dst, &out), 0xbe6e);
        // No data: Length 8.
        let bare = UdpRepr { payload_len: 0, ..r };
        let mut out = [0u8; 8];
        bare.emit(&mut out, src, dst, &[]).unwrap();
        assert_eq!(&out[4..6], &[0, 8]);
        assert_eq!(parse(&out, src, dst), Ok(bare));
    }

    #[test]
    fn emit_rejects_what_does_not_fit() {
        let r = UdpRepr { src_port: 1, dst_port: 2, payload_len: 3 };
        assert_eq!(r.emit(&mut [0u8; 10], [0; 4], [0; 4], b"abc"), Err(WireError::Truncated { got: 10, need: 11 }));
        assert_eq!(r.emit(&mut [0u8; 11], [0; 4], [0; 4], b"ab"), Err(WireError::PayloadLen { expected: 3, got: 2 }));
        assert!(r.emit(&mut [0u8; 11], [0; 4], [0; 4], b"abc").is_ok());
        let payload = vec![0u8; 65_528];
        let big = UdpRepr { payload_len: payload.len(), ..r };
        assert_eq!(big.emit(&mut vec![0u8; 70_000], [0; 4], [0; 4], &payload), Err(WireError::FieldRange { field: "udp length", value: 65_536, bits: 16 }));
        let biggest = UdpRepr { payload_len: 65_527, ..r };
        let mut out = vec![0u8; 65_535];
        biggest.emit(&mut out, [1; 4], [2; 4], &payload[..65_527]).unwrap();
        assert_eq!(&out[4..6], &[0xff, 0xff]);
        assert_eq!(parse(&out, [1; 4], [2; 4]), Ok(biggest));
    }

    #[test]
    fn truncated_and_malformed_datagrams_are_rejected() {
        let d = hex(DNS_QUERY);
        for n in 0..HEADER_LEN {
            assert_eq!(parse(&d[..n], DNS_SRC, DNS_DST), Err(WireError::Truncated { got: n, need: 8 }));
        }
        // Length 66 does not fit a shorter buffer.
        for n in HEADER_LEN..66 {
            assert_eq!(parse(&d[..n], DNS_SRC, DNS_DST), Err(WireError::Truncated { got: n, need: 66 }));
        }
        // Octets after Length are not read.
        let mut padded = d.clone();
        padded.extend_from_slice(&[0xee; 5]);
        let p = Packet::new_checked(&padded[..]).unwrap();
        assert_eq!(p.payload(), &d[8..]);
        assert_eq!(UdpRepr::parse(&p, DNS_SRC, DNS_DST).map(|r| r.payload_len), Ok(58));
        // A Length below the header.
        for length in 0..8u16 {
            let mut bad = d.clone();
            bad[4..6].copy_from_slice(&length.to_be_bytes());
            assert_eq!(parse(&bad, DNS_SRC, DNS_DST), Err(WireError::UdpLength(length)));
        }
        // A Length that cuts the datagram short leaves data out of the sum: the
        // checksum tells, at every cut.
        for length in 8..66u16 {
            let mut bad = d.clone();
            bad[4..6].copy_from_slice(&length.to_be_bytes());
            assert!(matches!(parse(&bad, DNS_SRC, DNS_DST), Err(WireError::UdpChecksum { .. })), "length {length}");
        }
    }

    #[test]
    fn a_wrong_checksum_reports_both_values() {
        let mut d = hex(DNS_QUERY);
        d[7] = 0x80;
        assert_eq!(parse(&d, DNS_SRC, DNS_DST), Err(WireError::UdpChecksum { computed: 0x1d81, carried: 0x1d80 }));
    }

    fn any_repr() -> impl Strategy<Value = (UdpRepr, Vec<u8>)> {
        (any::<u16>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 0..100))
            .prop_map(|(src_port, dst_port, payload)| (UdpRepr { src_port, dst_port, payload_len: payload.len() }, payload))
    }

    fn emitted(r: &UdpRepr, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut d = vec![0u8; r.buffer_len()];
        r.emit(&mut d, src, dst, payload).unwrap();
        d
    }

    proptest! {
        #[test]
        fn emit_parse_round_trip((r, payload) in any_repr(), src: [u8; 4], dst: [u8; 4]) {
            let d = emitted(&r, src, dst, &payload);
            prop_assert_eq!(reference_sum(src, dst, &d), 0xffff, "the emitted checksum checks by the reference sum");
            prop_assert_eq!(u16::from_be_bytes([d[6], d[7]]), reference_checksum(src, dst, &d));
            let p = Packet::new_checked(&d[..]).unwrap();
            prop_assert!(p.has_checksum());
            prop_assert_eq!(UdpRepr::parse(&p, src, dst), Ok(r));
            prop_assert_eq!(p.payload(), &payload[..]);
        }

        /// Every single-bit error in ports and data is caught by the checksum, and so is
        /// every one in either address of the pseudo-header. Two fields have their own
        /// exceptions. The checksum field: a flip that leaves it zero turns the checksum
        /// off (RFC 768), and the datagram passes as one without. Length: a flip to a
        /// larger value runs past the buffer, one to a smaller value shortens the
        /// datagram, which then passes only if its sum happens to check; the test asks
        /// the reference sum about that chance case rather than assume it away.
        #[test]
        fn every_single_bit_flip_is_detected((r, payload) in any_repr(), src: [u8; 4], dst: [u8; 4]) {
            let good = emitted(&r, src, dst, &payload);
            for bit in 0..good.len() * 8 {
                let mut bad = good.clone();
                bad[bit / 8] ^= 0x80 >> (bit % 8);
                let res = parse(&bad, src, dst);
                match bit {
                    32..=47 => {
                        let length = usize::from(u16::from_be_bytes([bad[4], bad[5]]));
                        if length > good.len() {
                            prop_assert_eq!(res, Err(WireError::Truncated { got: good.len(), need: length }));
                        } else if length < HEADER_LEN {
                            prop_assert_eq!(res, Err(WireError::UdpLength(length as u16)));
                        } else if reference_sum(src, dst, &bad[..length]) == 0xffff {
                            prop_assert_eq!(res, Ok(UdpRepr { payload_len: length - HEADER_LEN, ..r }));
                        } else {
                            prop_assert!(matches!(res, Err(WireError::UdpChecksum { .. })), "bit {}: {:?}", bit, res);
                        }
                    }
                    48..=63 if bad[6..8] == [0, 0] => prop_assert_eq!(res, Ok(r)),
                    _ => prop_assert!(matches!(res, Err(WireError::UdpChecksum { .. })), "bit {}: {:?}", bit, res),
                }
            }
            for bit in 0..32 {
                let mut a = src;
                a[bit / 8] ^= 0x80 >> (bit % 8);
                prop_assert!(matches!(parse(&good, a, dst), Err(WireError::UdpChecksum { .. })), "source bit {}", bit);
                let mut a = dst;
                a[bit / 8] ^= 0x80 >> (bit % 8);
                prop_assert!(matches!(parse(&good, src, a), Err(WireError::UdpChecksum { .. })), "destination bit {}", bit);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), src: [u8; 4], dst: [u8; 4]) {
            // Accepted only with a Length that fits and a checksum that is absent or
            // checks by the reference sum.
            if let Ok(r) = parse(&bytes, src, dst) {
                let length = usize::from(u16::from_be_bytes([bytes[4], bytes[5]]));
                prop_assert!((HEADER_LEN..=bytes.len()).contains(&length));
                prop_assert_eq!(r.payload_len, length - HEADER_LEN);
                prop_assert!(bytes[6..8] == [0, 0] || reference_sum(src, dst, &bytes[..length]) == 0xffff);
            }
        }

        /// Arbitrary bytes with a Length that fits and a right checksum, so that parsing
        /// goes all the way: they parse, and re-emit to the very same datagram.
        #[test]
        fn arbitrary_datagrams_re_emit_identically(mut bytes in proptest::collection::vec(any::<u8>(), 8..120), cut in 0usize..8, src: [u8; 4], dst: [u8; 4]) {
            let length = (bytes.len() - cut).max(HEADER_LEN);
            bytes[4..6].copy_from_slice(&(length as u16).to_be_bytes());
            fix_checksum(src, dst, &mut bytes[..length]);
            let r = parse(&bytes, src, dst).unwrap();
            prop_assert_eq!(r.payload_len, length - HEADER_LEN);
            prop_assert_eq!(emitted(&r, src, dst, &bytes[HEADER_LEN..length]), &bytes[..length]);
        }
    }
}
