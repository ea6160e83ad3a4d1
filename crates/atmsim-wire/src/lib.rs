//! # atmsim-wire
//!
//! Byte-exact encoders and decoders for what atmsim's models exchange. No simulation
//! here: the hot path carries cell metadata (`atmsim_models::Cell`); this layer serves
//! tests, trace export and a byte-accurate checking mode.
//!
//! Formats come as in smoltcp: a `Repr` with `parse` / `emit` / `buffer_len` and, for
//! the IP formats, a checked view over bytes (`Packet::new_checked`) for `parse` to read.
//!
//! - [`cell`]: the 5-octet ATM cell header, UNI and NNI (GFC/VPI/VCI/PTI/CLP), with the
//!   HEC (CRC-8, x^8+x^2+x+1, coset 0x55) and the I.432 receiver that corrects single-bit
//!   errors and detects multi-bit ones;
//! - [`aal5`]: the AAL5 CPCS-PDU (payload, pad to a multiple of 48, 8-octet trailer
//!   CPCS-UU, CPI, Length, CRC-32);
//! - [`llc`]: LLC/SNAP encapsulation of routed protocols (RFC 1483 section 4.1);
//! - [`rm`]: ABR resource management cells (ATM Forum TM 4.0: DIR/BN/CI/NI/RA, ER, CCR
//!   and MCR in the 16-bit rate format, QL, SN, CRC-10);
//! - [`credit`]: credit cells of hop-by-hop credit flow control (evans96's WAN variant:
//!   up to 24 entries of VCI and credit 1–16 in one cell, no error detection; atmsim's
//!   layout, 12-bit VCI and 4-bit credit − 1 per 16-bit entry);
//! - [`ipv4`]: the IPv4 header (RFC 791; options skipped on parse, never emitted) with
//!   its header checksum, the Internet checksum itself (RFC 1071) and the pseudo-header
//!   sum the transport checksums cover;
//! - [`tcp`]: the TCP header (RFC 793: ports, sequence and acknowledgment numbers,
//!   flags, window, urgent pointer) with its checksum over the IPv4 pseudo-header and
//!   the MSS and window scale options;
//! - [`udp`]: the UDP header (RFC 768: ports, length) with its checksum over the IPv4
//!   pseudo-header, optional on the wire (a carried zero means none);
//! - [`icmp`]: ICMP echo request and echo reply (RFC 792: type 8 and 0, identifier,
//!   sequence number, data) with the ICMP checksum;
//! - [`sunatm`]: the SunATM pseudo-header of libpcap captures of ATM (direction,
//!   traffic type, VPI, VCI).

/// The accessors every checked view over a byte buffer shares ([`ipv4::Packet`],
/// [`tcp::Packet`], [`udp::Packet`], [`icmp::Packet`]: a struct with one field, `buffer:
/// T`): the buffer back, its bytes, and big-endian fields at an offset.
macro_rules! byte_view {
    ($view:ident) => {
        impl<T: AsRef<[u8]>> $view<T> {
            /// The underlying buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            fn b(&self) -> &[u8] {
                self.buffer.as_ref()
            }

            fn be16(&self, i: usize) -> u16 {
                u16::from_be_bytes([self.b()[i], self.b()[i + 1]])
            }

            #[allow(dead_code)] // TCP's sequence numbers only
            fn be32(&self, i: usize) -> u32 {
                let b = self.b();
                u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
            }
        }
    };
}
pub(crate) use byte_view;

pub mod aal5;
pub mod cell;
pub mod credit;
pub mod icmp;
pub mod ipv4;
pub mod llc;
pub mod rm;
pub mod sunatm;
#[cfg(test)]
mod refsum;
pub mod tcp;
pub mod udp;

/// Errors of the wire layer. Every variant is a property of the bytes (or, from `emit`,
/// of the values given to it), never a bug; parsing returns one of them rather than
/// panic, whatever the bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer is shorter than the format needs.
    #[error("buffer too short: {got} octets, need {need}")]
    Truncated { got: usize, need: usize },
    /// A field value does not fit its width.
    #[error("field {field} = {value} does not fit in {bits} bits")]
    FieldRange { field: &'static str, value: u32, bits: u32 },
    /// The header error control does not match (and was not correctable).
    #[error("HEC mismatch")]
    Hec,
    /// An AAL5 PDU whose length is not a multiple of 48 octets.
    #[error("AAL5 PDU of {0} octets is not a whole number of cells")]
    NotCellAligned(usize),
    /// The AAL5 Length field does not fit the PDU (a lost or extra cell).
    #[error("AAL5 length {length} does not fit a PDU of {pdu} octets")]
    Length { length: usize, pdu: usize },
    /// The AAL5 CRC-32 does not match (a corrupted, lost or misordered cell).
    #[error("AAL5 CRC-32 mismatch: computed {computed:#010x}, carried {carried:#010x}")]
    Crc { computed: u32, carried: u32 },
    /// An RM cell's CRC-10 does not match.
    #[error("RM cell CRC-10 mismatch: computed {computed:#05x}, carried {carried:#05x}")]
    Crc10 { computed: u16, carried: u16 },
    /// An LLC/SNAP header other than the one expected.
    #[error("not an LLC/SNAP header for a routed protocol")]
    NotSnap,
    /// An IP header whose version field is not 4.
    #[error("IP version {0}, not 4")]
    Ipv4Version(u8),
    /// An IPv4 IHL below 5 words (the header without options is 5).
    #[error("IPv4 IHL {0} is below 5")]
    Ipv4HeaderLen(u8),
    /// An IPv4 Total Length shorter than the header (IHL · 4) it includes.
    #[error("IPv4 total length {total} is shorter than its {header}-octet header")]
    Ipv4TotalLen { total: usize, header: usize },
    /// The IPv4 header checksum does not match.
    #[error("IPv4 header checksum mismatch: computed {computed:#06x}, carried {carried:#06x}")]
    Ipv4Checksum { computed: u16, carried: u16 },
    /// An IPv4 fragment offset (in octets) that is not a multiple of 8.
    #[error("IPv4 fragment offset {0} is not a multiple of 8 octets")]
    FragOffset(u16),
    /// A TCP data offset below 5 words (the header without options is 5).
    #[error("TCP data offset {0} is below 5")]
    TcpDataOffset(u8),
    /// A TCP option without its length octet, with a length below 2 or running past
    /// the header, or with a length wrong for its kind (MSS 4, window scale 3).
    #[error("malformed TCP option of kind {kind}")]
    TcpOption { kind: u8 },
    /// The TCP checksum (pseudo-header, header and data) does not match.
    #[error("TCP checksum mismatch: computed {computed:#06x}, carried {carried:#06x}")]
    TcpChecksum { computed: u16, carried: u16 },
    /// An ICMP message that is not an echo request (type 8) or echo reply (type 0)
    /// with code 0.
    #[error("ICMP type {ty} code {code} is not an echo request or reply")]
    IcmpType { ty: u8, code: u8 },
    /// The ICMP checksum (the whole message) does not match.
    #[error("ICMP checksum mismatch: computed {computed:#06x}, carried {carried:#06x}")]
    IcmpChecksum { computed: u16, carried: u16 },
    /// A UDP Length field below the 8-octet header it includes.
    #[error("UDP length {0} is shorter than the 8-octet header")]
    UdpLength(u16),
    /// The UDP checksum (pseudo-header, header and data) does not match; `computed` is
    /// the value the field should carry (a computed zero given as 0xffff).
    #[error("UDP checksum mismatch: computed {computed:#06x}, carried {carried:#06x}")]
    UdpChecksum { computed: u16, carried: u16 },
    /// A credit cell with more entries than fit (24).
    #[error("{got} credit entries in one cell; at most {max}")]
    CreditEntries { got: usize, max: usize },
    /// A credit cell with a non-padding word at entry `index` after a padding entry (or a
    /// word with VCI 0 and a non-zero credit field).
    #[error("credit cell entry {index} is neither an entry nor padding after padding")]
    CreditPadding { index: usize },
    /// A header that does not carry an in-header credit (UNI format, VPI 0, PTI 110).
    #[error("header (VPI {vpi}, PTI {pti:#05b}) does not carry a credit: an in-header credit has VPI 0 and PTI 0b110")]
    NotCreditHeader { vpi: u16, pti: u8 },
    /// `emit` was given a payload of another length than the `Repr`'s `payload_len`
    /// (`data_len` for ICMP echo).
    #[error("payload of {got} octets for a header announcing {expected}")]
    PayloadLen { expected: usize, got: usize },
}
