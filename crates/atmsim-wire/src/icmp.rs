//! ICMP echo request and echo reply messages (RFC 792, "Echo or Echo Reply Message")
//! with the ICMP checksum (RFC 1071).
//!
//! ```text
//!   0                   1                   2                   3
//!   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |     Type      |     Code      |          Checksum             |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |           Identifier          |        Sequence Number        |
//!  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!  |     Data ...
//!  +-+-+-+-+-
//! ```
//!
//! Type 8 is an echo request, type 0 an echo reply; the code is 0 for both. ICMP carries
//! no length of its own: the message is the whole buffer, as the IP layer delimits it.
//! The checksum is the one's complement of the one's-complement sum of the whole message
//! (header and data, an odd last octet padded with zero), taken with the checksum field
//! zero; unlike TCP and UDP there is no pseudo-header. A receiver sums the message as it
//! came, checksum included, and accepts it if the sum is all ones.
//!
//! [`Packet`] is a view over any ICMP message at least as long as the 8-octet header
//! (its checksum can be read and verified whatever the type); [`IcmpEchoRepr`] reads and
//! writes only the two echo messages.

use crate::ipv4::{ones_complement_add, ones_complement_sum};
use crate::WireError;

/// Octets of the echo header: type, code, checksum, identifier and sequence number.
pub const HEADER_LEN: usize = 8;
/// Message types (RFC 792).
pub const TYPE_ECHO_REPLY: u8 = 0;
pub const TYPE_ECHO_REQUEST: u8 = 8;

/// A view over the bytes of an ICMP message, checked by [`Packet::new_checked`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

crate::byte_view!(Packet);

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks that the buffer (the whole message) holds the 8-octet header. Does not
    /// look at the type, code or checksum; [`IcmpEchoRepr::parse`] does.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let got = buffer.as_ref().len();
        if got < HEADER_LEN {
            return Err(WireError::Truncated { got, need: HEADER_LEN });
        }
        Ok(Packet { buffer })
    }

    pub fn msg_type(&self) -> u8 {
        self.b()[0]
    }

    pub fn code(&self) -> u8 {
        self.b()[1]
    }

    /// The checksum field as carried.
    pub fn checksum(&self) -> u16 {
        self.be16(2)
    }

    /// Octets 4–5: the identifier of an echo message (other types use these octets
    /// otherwise).
    pub fn ident(&self) -> u16 {
        self.be16(4)
    }

    /// Octets 6–7: the sequence number of an echo message.
    pub fn seq(&self) -> u16 {
        self.be16(6)
    }

    /// The data: everything after the 8-octet header.
    pub fn data(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }

    /// The checksum the message should carry (its field taken as zero).
    pub fn computed_checksum(&self) -> u16 {
        let b = self.b();
        !ones_complement_add(ones_complement_sum(&b[..2]), ones_complement_sum(&b[4..]))
    }

    /// True when the one's-complement sum of the message, checksum included, is all
    /// ones.
    pub fn verify_checksum(&self) -> bool {
        ones_complement_sum(self.b()) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn b_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Sets the type (an echo responder turns 8 into 0; then [`Packet::fill_checksum`]).
    pub fn set_msg_type(&mut self, ty: u8) {
        self.b_mut()[0] = ty;
    }

    /// Writes the checksum of the message as it stands.
    pub fn fill_checksum(&mut self) {
        let c = self.computed_checksum();
        self.b_mut()[2..4].copy_from_slice(&c.to_be_bytes());
    }

    /// The data, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.b_mut()[HEADER_LEN..]
    }
}

/// A parsed echo request or echo reply (the checksum, which `emit` computes and `parse`
/// verifies, left out; the data itself stays in the buffer, [`Packet::data`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpEchoRepr {
    /// True for an echo reply (type 0), false for an echo request (type 8).
    pub reply: bool,
    pub ident: u16,
    pub seq: u16,
    /// Octets of data after the header.
    pub data_len: usize,
}

impl IcmpEchoRepr {
    /// The type octet: [`TYPE_ECHO_REPLY`] or [`TYPE_ECHO_REQUEST`].
    pub const fn msg_type(&self) -> u8 {
        if self.reply {
            TYPE_ECHO_REPLY
        } else {
            TYPE_ECHO_REQUEST
        }
    }

    /// Octets `emit` writes: header and data (saturating, as
    /// [`Ipv4Repr::total_len`]).
    ///
    /// [`Ipv4Repr::total_len`]: crate::ipv4::Ipv4Repr::total_len
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN.saturating_add(self.data_len)
    }

    /// Reads a checked view: the checksum must be right (a damaged message is reported
    /// as [`WireError::IcmpChecksum`] whatever its type), then the message must be an
    /// echo request or reply with code 0 (anything else is [`WireError::IcmpType`]).
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<IcmpEchoRepr, WireError> {
        if !packet.verify_checksum() {
            return Err(WireError::IcmpChecksum { computed: packet.computed_checksum(), carried: packet.checksum() });
        }
        let reply = match (packet.msg_type(), packet.code()) {
            (TYPE_ECHO_REPLY, 0) => true,
            (TYPE_ECHO_REQUEST, 0) => false,
            (ty, code) => return Err(WireError::IcmpType { ty, code }),
        };
        Ok(IcmpEchoRepr { reply, ident: packet.ident(), seq: packet.seq(), data_len: packet.data().len() })
    }

    /// Writes header and `data` (which must be `data_len` octets) at the start of
    /// `buf`, checksum included. The message is the first [`IcmpEchoRepr::buffer_len`]
    /// octets; a parser must be given exactly those.
    pub fn emit(&self, buf: &mut [u8], data: &[u8]) -> Result<(), WireError> {
        if data.len() != self.data_len {
            return Err(WireError::PayloadLen { expected: self.data_len, got: data.len() });
        }
        let n = self.buffer_len();
        let Some(msg) = buf.get_mut(..n) else {
            return Err(WireError::Truncated { got: buf.len(), need: n });
        };
        msg[0] = self.msg_type();
        msg[1] = 0;
        msg[2..4].fill(0);
        msg[4..6].copy_from_slice(&self.ident.to_be_bytes());
        msg[6..8].copy_from_slice(&self.seq.to_be_bytes());
        msg[HEADER_LEN..].copy_from_slice(data);
        let c = !ones_complement_sum(msg);
        msg[2..4].copy_from_slice(&c.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipv4::{self, Ipv4Repr};
    use proptest::prelude::*;

    use crate::refsum::plain_sum as reference_sum;

    /// The checksum a message should carry, by the reference sum over a copy whose
    /// checksum field is zero.
    fn reference_checksum(msg: &[u8]) -> u16 {
        let mut z = msg.to_vec();
        z[2..4].fill(0);
        !reference_sum(&z)
    }

    /// Sets the checksum field so that the message checks, by the reference sum.
    fn fix_checksum(msg: &mut [u8]) {
        let c = reference_checksum(msg);
        msg[2..4].copy_from_slice(&c.to_be_bytes());
    }

    fn parse(bytes: &[u8]) -> Result<IcmpEchoRepr, WireError> {
        IcmpEchoRepr::parse(&Packet::new_checked(bytes)?)
    }

    /// A captured `ping 127.0.0.1` from Linux (the "ICMP Echo Request" sample of jpcap,
    /// docs/ethernet/ip/icmp/echoRequest.txt, with its decoding): IPv4 header (ident
    /// 0x0010, TTL 64, checksum 0x7c97), then type 8, code 0, checksum 0x3bf6,
    /// identifier 0xf703, sequence 0, and ping's default 56 octets of data (a struct
    /// timeval, then the octets 0x08 to 0x37).
    const CAPTURED_PING: [u8; 84] = [
        0x45, 0x00, 0x00, 0x54, 0x00, 0x10, 0x00, 0x00, 0x40, 0x01, 0x7c, 0x97, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, // IPv4
        0x08, 0x00, 0x3b, 0xf6, 0xf7, 0x03, 0x00, 0x00, // ICMP echo request header
        0x68, 0xc8, 0x05, 0x3b, 0x60, 0xff, 0x0b, 0x00, // timeval
        0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, //
        0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, //
        0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
    ];

    /// An echo request 10.1.1.1 → 10.1.1.2 as printed by the packman packet tool
    /// (packer/util/icmp): identifier 0xb204, sequence 0, checksum 0x3e29, 56 octets of
    /// data in ping's layout.
    const PACKMAN_ECHO: [u8; 64] = [
        0x08, 0x00, 0x3e, 0x29, 0xb2, 0x04, 0x00, 0x00, // header
        0xe4, 0x7f, 0x6e, 0x3c, 0xc2, 0x12, 0x08, 0x00, // timeval
        0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, //
        0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, //
        0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
    ];

    #[test]
    fn captured_ping_known_answer() {
        let ip = ipv4::Packet::new_checked(&CAPTURED_PING[..]).unwrap();
        let ip_repr = Ipv4Repr::parse(&ip).unwrap();
        assert_eq!((ip_repr.protocol, ip_repr.src, ip_repr.dst, ip_repr.payload_len), (ipv4::PROTOCOL_ICMP, [127, 0, 0, 1], [127, 0, 0, 1], 64));
        let msg = ip.payload();
        // The published checksum, by the independent sum.
        assert_eq!(reference_checksum(msg), 0x3bf6);
        assert_eq!(reference_sum(msg), 0xffff);

        let p = Packet::new_checked(msg).unwrap();
        assert_eq!((p.msg_type(), p.code(), p.checksum(), p.ident(), p.seq()), (TYPE_ECHO_REQUEST, 0, 0x3bf6, 0xf703, 0));
        assert_eq!(p.computed_checksum(), 0x3bf6);
        assert!(p.verify_checksum());
        assert_eq!(p.data(), &CAPTURED_PING[28..]);
        let r = IcmpEchoRepr::parse(&p).unwrap();
        assert_eq!(r, IcmpEchoRepr { reply: false, ident: 0xf703, seq: 0, data_len: 56 });
        assert_eq!(r.buffer_len(), 64);

        // Re-emitted, the same octets.
        let mut out = [0u8; 64];
        r.emit(&mut out, p.data()).unwrap();
        assert_eq!(out, msg);

        // The reply echoes identifier, sequence and data with type 0: the word 0x0800
        // leaves the sum, so the checksum rises by 0x0800 (RFC 1624).
        let reply = IcmpEchoRepr { reply: true, ..r };
        reply.emit(&mut out, p.data()).unwrap();
        assert_eq!(&out[..4], &[0x00, 0x00, 0x43, 0xf6]);
        assert_eq!(&out[4..], &msg[4..]);
        assert_eq!(reference_checksum(&out), 0x43f6);
        assert_eq!(parse(&out), Ok(reply));
    }

    #[test]
    fn packman_echo_known_answer() {
        assert_eq!(reference_checksum(&PACKMAN_ECHO), 0x3e29);
        let r = parse(&PACKMAN_ECHO).unwrap();
        assert_eq!(r, IcmpEchoRepr { reply: false, ident: 0xb204, seq: 0, data_len: 56 });
        let mut out = [0u8; 64];
        r.emit(&mut out, &PACKMAN_ECHO[8..]).unwrap();
        assert_eq!(out, PACKMAN_ECHO);
    }

    #[test]
    fn echo_responder_in_place() {
        let mut msg = CAPTURED_PING[20..].to_vec();
        let mut p = Packet::new_checked(&mut msg[..]).unwrap();
        p.set_msg_type(TYPE_ECHO_REPLY);
        assert!(!p.verify_checksum());
        assert_eq!(IcmpEchoRepr::parse(&p), Err(WireError::IcmpChecksum { computed: 0x43f6, carried: 0x3bf6 }));
        p.fill_checksum();
        assert_eq!(p.checksum(), 0x43f6);
        assert!(p.verify_checksum());
        assert_eq!(IcmpEchoRepr::parse(&p), Ok(IcmpEchoRepr { reply: true, ident: 0xf703, seq: 0, data_len: 56 }));
        p.data_mut()[0] = 0xaa;
        assert_eq!(msg[8], 0xaa);
    }

    #[test]
    fn odd_and_empty_data() {
        // An odd length: the last octet is padded with zero for the sum.
        let r = IcmpEchoRepr { reply: false, ident: 0x1234, seq: 0xabcd, data_len: 3 };
        let mut out = [0u8; 11];
        r.emit(&mut out, b"xyz").unwrap();
        assert_eq!(&out[..2], &[8, 0]);
        assert_eq!(&out[4..], &[0x12, 0x34, 0xab, 0xcd, b'x', b'y', b'z']);
        // By hand: 0800 + 1234 + abcd + 7879 + 7a00 = 0x1b87a → 0xb87b, complement 0x4784.
        assert_eq!(reference_checksum(&out), 0x4784);
        assert_eq!(&out[2..4], &[0x47, 0x84]);
        assert_eq!(parse(&out), Ok(r));
        // No data: the 8-octet header alone.
        let bare = IcmpEchoRepr { reply: true, ident: 0, seq: 1, data_len: 0 };
        let mut out = [0u8; 8];
        bare.emit(&mut out, &[]).unwrap();
        assert_eq!(out, [0, 0, 0xff, 0xfe, 0, 0, 0, 1]);
        assert_eq!(parse(&out), Ok(bare));
    }

    #[test]
    fn other_types_and_codes_are_rejected() {
        // Every type with a few codes, each with a right checksum: only echo request and
        // echo reply with code 0 parse.
        for ty in 0..=255u8 {
            for code in [0u8, 1, 3, 255] {
                let mut msg = [ty, code, 0, 0, 0xf7, 0x03, 0x00, 0x01, 0xde, 0xad];
                fix_checksum(&mut msg);
                let res = parse(&msg);
                match (ty, code) {
                    (0 | 8, 0) => assert_eq!(res, Ok(IcmpEchoRepr { reply: ty == 0, ident: 0xf703, seq: 1, data_len: 2 })),
                    _ => assert_eq!(res, Err(WireError::IcmpType { ty, code })),
                }
            }
        }
        // A destination unreachable (type 3, code 3: port unreachable) quoting a header.
        let mut unreachable = [0u8; 36];
        unreachable[0] = 3;
        unreachable[1] = 3;
        unreachable[8..28].copy_from_slice(&CAPTURED_PING[..20]);
        fix_checksum(&mut unreachable);
        assert_eq!(parse(&unreachable), Err(WireError::IcmpType { ty: 3, code: 3 }));
        // A damaged message is reported by its checksum first, whatever its type.
        unreachable[30] ^= 1;
        assert!(matches!(parse(&unreachable), Err(WireError::IcmpChecksum { .. })));
    }

    #[test]
    fn a_wrong_checksum_reports_both_values() {
        let mut msg = PACKMAN_ECHO;
        msg[3] = 0x2a;
        assert_eq!(parse(&msg), Err(WireError::IcmpChecksum { computed: 0x3e29, carried: 0x3e2a }));
    }

    #[test]
    fn truncated_messages_are_rejected() {
        for n in 0..HEADER_LEN {
            assert_eq!(parse(&PACKMAN_ECHO[..n]), Err(WireError::Truncated { got: n, need: HEADER_LEN }));
        }
        // ICMP has no length field: a message cut after its header is told by the
        // checksum.
        for n in HEADER_LEN..PACKMAN_ECHO.len() {
            assert!(matches!(parse(&PACKMAN_ECHO[..n]), Err(WireError::IcmpChecksum { .. })), "cut at {n}");
        }
        assert!(parse(&PACKMAN_ECHO).is_ok());
    }

    #[test]
    fn emit_rejects_what_does_not_fit() {
        let r = IcmpEchoRepr { reply: false, ident: 1, seq: 2, data_len: 4 };
        assert_eq!(r.emit(&mut [0u8; 11], b"ping"), Err(WireError::Truncated { got: 11, need: 12 }));
        assert_eq!(r.emit(&mut [0u8; 12], b"pin"), Err(WireError::PayloadLen { expected: 4, got: 3 }));
        assert_eq!(r.emit(&mut [0u8; 12], b"pings"), Err(WireError::PayloadLen { expected: 4, got: 5 }));
        // A longer buffer: only the first 12 octets are written.
        let mut b = [0xeeu8; 16];
        r.emit(&mut b, b"ping").unwrap();
        assert_eq!(&b[12..], &[0xee; 4]);
        assert_eq!(parse(&b[..12]), Ok(r));
        let huge = IcmpEchoRepr { data_len: usize::MAX, ..r };
        assert_eq!(huge.buffer_len(), usize::MAX);
    }

    #[test]
    fn a_whole_ping_over_ipv4() {
        let (src, dst) = ([192, 0, 2, 1], [198, 51, 100, 7]);
        let data = b"abcdefghijklmnopqrstuvwabcdefghi";
        let echo = IcmpEchoRepr { reply: false, ident: 1, seq: 9, data_len: data.len() };
        let ip = Ipv4Repr { src, dst, protocol: ipv4::PROTOCOL_ICMP, payload_len: echo.buffer_len(), ttl: 128, ident: 0x4d2, dont_frag: false, more_frags: false, frag_offset: 0, tos: 0 };
        let mut d = vec![0u8; ip.total_len()];
        ip.emit(&mut d).unwrap();
        echo.emit(&mut d[ip.buffer_len()..], data).unwrap();
        let ip_packet = ipv4::Packet::new_checked(&d[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&ip_packet), Ok(ip));
        let p = Packet::new_checked(ip_packet.payload()).unwrap();
        assert_eq!(IcmpEchoRepr::parse(&p), Ok(echo));
        assert_eq!(p.data(), data);
        assert_eq!(reference_sum(ip_packet.payload()), 0xffff);
    }

    fn any_repr() -> impl Strategy<Value = (IcmpEchoRepr, Vec<u8>)> {
        (any::<bool>(), any::<u16>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 0..100))
            .prop_map(|(reply, ident, seq, data)| (IcmpEchoRepr { reply, ident, seq, data_len: data.len() }, data))
    }

    fn emitted(r: &IcmpEchoRepr, data: &[u8]) -> Vec<u8> {
        let mut m = vec![0u8; r.buffer_len()];
        r.emit(&mut m, data).unwrap();
        m
    }

    proptest! {
        #[test]
        fn emit_parse_round_trip((r, data) in any_repr()) {
            let m = emitted(&r, &data);
            prop_assert_eq!(reference_sum(&m), 0xffff, "the emitted checksum checks by the reference sum");
            prop_assert_eq!(u16::from_be_bytes([m[2], m[3]]), reference_checksum(&m));
            let p = Packet::new_checked(&m[..]).unwrap();
            prop_assert_eq!(IcmpEchoRepr::parse(&p), Ok(r));
            prop_assert_eq!(p.data(), &data[..]);
        }

        /// Every single-bit error anywhere in the message, type and code included, is
        /// caught by the checksum.
        #[test]
        fn every_single_bit_flip_is_detected((r, data) in any_repr()) {
            let good = emitted(&r, &data);
            for bit in 0..good.len() * 8 {
                let mut bad = good.clone();
                bad[bit / 8] ^= 0x80 >> (bit % 8);
                let res = parse(&bad);
                prop_assert!(matches!(res, Err(WireError::IcmpChecksum { .. })), "bit {}: {:?}", bit, res);
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let res = parse(&bytes);
            // Accepted only when the reference sum checks and the type is an echo.
            if res.is_ok() {
                prop_assert_eq!(reference_sum(&bytes), 0xffff);
                prop_assert!(matches!((bytes[0], bytes[1]), (0 | 8, 0)));
            }
        }

        /// Arbitrary bytes with a right checksum and an echo type, so that parsing goes
        /// all the way: they parse, and re-emit to the very same octets.
        #[test]
        fn arbitrary_echo_messages_re_emit_identically(mut bytes in proptest::collection::vec(any::<u8>(), 8..120), reply: bool) {
            bytes[0] = if reply { TYPE_ECHO_REPLY } else { TYPE_ECHO_REQUEST };
            bytes[1] = 0;
            fix_checksum(&mut bytes);
            let r = parse(&bytes).unwrap();
            prop_assert_eq!(r.reply, reply);
            prop_assert_eq!(emitted(&r, &bytes[8..]), bytes);
        }
    }
}
