//! # atmsim-wire
//!
//! Byte-exact encoders and decoders for what atmsim's models exchange. No simulation
//! here: the hot path carries cell metadata (`atmsim_models::Cell`); this layer serves
//! tests, trace export and a byte-accurate checking mode.
//!
//! Formats come in pairs, as in smoltcp: a checked view over bytes and a `Repr` with
//! `parse` / `emit` / `buffer_len`.
//!
//! - [`cell`]: the 5-octet ATM cell header, UNI and NNI (GFC/VPI/VCI/PTI/CLP), with the
//!   HEC (CRC-8, x^8+x^2+x+1, coset 0x55) and the I.432 receiver that corrects single-bit
//!   errors and detects multi-bit ones;
//! - [`aal5`]: the AAL5 CPCS-PDU (payload, pad to a multiple of 48, 8-octet trailer
//!   CPCS-UU, CPI, Length, CRC-32);
//! - [`llc`]: LLC/SNAP encapsulation of routed protocols (RFC 1483 section 4.1);
//! - [`rm`]: ABR resource management cells (ATM Forum TM 4.0: DIR/BN/CI/NI/RA, ER, CCR
//!   and MCR in the 16-bit rate format, QL, SN, CRC-10).

pub mod aal5;
pub mod cell;
pub mod llc;
pub mod rm;

/// Errors of the wire layer. Every variant is a property of the bytes, never a bug.
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
}
