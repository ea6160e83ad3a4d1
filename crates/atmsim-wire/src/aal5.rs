//! AAL5 CPCS-PDU (ITU-T I.363.5).
//!
//! ```text
//!  | payload (0..65535) | PAD (0..47) | CPCS-UU(1) | CPI(1) | Length(2) | CRC-32(4) |
//!  '---------------- a multiple of 48 octets, carried in that many cells -----------'
//! ```
//!
//! The CRC-32 (generator 0x04C11DB7, register preset to all ones, result complemented,
//! bits taken most significant first) covers the whole PDU but the CRC field itself;
//! it is the `CRC-32/BZIP2` of the `crc` catalogue. Length is the payload length; a
//! PDU that lost or gained a cell fails the length check or the CRC.

use crc::{Crc, CRC_32_BZIP2};

use crate::cell::PAYLOAD_LEN;
use crate::WireError;

/// Octets of the CPCS trailer.
pub const TRAILER_LEN: usize = 8;
/// Largest CPCS payload.
pub const MAX_PAYLOAD: usize = 65_535;

const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_BZIP2);

/// Cells needed to carry `payload` octets of CPCS payload.
pub const fn cells_for(payload: usize) -> usize {
    (payload + TRAILER_LEN).div_ceil(PAYLOAD_LEN)
}

/// A parsed CPCS-PDU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aal5Repr {
    pub uu: u8,
    pub cpi: u8,
    pub payload: Vec<u8>,
}

impl Aal5Repr {
    /// Octets of the encoded PDU (a multiple of 48).
    pub fn buffer_len(&self) -> usize {
        cells_for(self.payload.len()) * PAYLOAD_LEN
    }

    /// Encodes the PDU: payload, zero pad, trailer with CRC-32.
    pub fn emit(&self) -> Result<Vec<u8>, WireError> {
        if self.payload.len() > MAX_PAYLOAD {
            return Err(WireError::FieldRange { field: "length", value: self.payload.len() as u32, bits: 16 });
        }
        let n = self.buffer_len();
        let mut pdu = vec![0u8; n];
        pdu[..self.payload.len()].copy_from_slice(&self.payload);
        pdu[n - 8] = self.uu;
        pdu[n - 7] = self.cpi;
        pdu[n - 6..n - 4].copy_from_slice(&(self.payload.len() as u16).to_be_bytes());
        let crc = CRC32.checksum(&pdu[..n - 4]);
        pdu[n - 4..].copy_from_slice(&crc.to_be_bytes());
        Ok(pdu)
    }

    /// Decodes a reassembled PDU, checking alignment, length and CRC.
    pub fn parse(pdu: &[u8]) -> Result<Aal5Repr, WireError> {
        let n = pdu.len();
        if n < PAYLOAD_LEN {
            return Err(WireError::Truncated { got: n, need: PAYLOAD_LEN });
        }
        if n % PAYLOAD_LEN != 0 {
            return Err(WireError::NotCellAligned(n));
        }
        let carried = u32::from_be_bytes([pdu[n - 4], pdu[n - 3], pdu[n - 2], pdu[n - 1]]);
        let computed = CRC32.checksum(&pdu[..n - 4]);
        if computed != carried {
            return Err(WireError::Crc { computed, carried });
        }
        let length = u16::from_be_bytes([pdu[n - 6], pdu[n - 5]]) as usize;
        // The pad is 0..47 octets: the payload must end in the last cell or the one before.
        if length + TRAILER_LEN > n || cells_for(length) * PAYLOAD_LEN != n {
            return Err(WireError::Length { length, pdu: n });
        }
        Ok(Aal5Repr { uu: pdu[n - 8], cpi: pdu[n - 7], payload: pdu[..length].to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn crc_of(payload: Vec<u8>, uu: u8, cpi: u8) -> u32 {
        let pdu = Aal5Repr { uu, cpi, payload }.emit().unwrap();
        u32::from_be_bytes([pdu[44], pdu[45], pdu[46], pdu[47]])
    }

    #[test]
    fn published_crc32_vectors() {
        // ITU-T I.363.5 appendix test vectors: 40-octet payloads in one 48-octet PDU.
        assert_eq!(crc_of(vec![0x00; 40], 0, 0), 0x864d_7f99);
        assert_eq!(crc_of(vec![0xff; 40], 0, 0), 0xc55e_457a);
        assert_eq!(crc_of((1..=40).collect(), 0, 0), 0xbf67_1ed0);
        assert_eq!(crc_of((1..=40).collect(), 0x11, 0x22), 0xacba_602a);
        // catalogue check value of CRC-32/BZIP2
        assert_eq!(CRC32.checksum(b"123456789"), 0xfc89_1918);
    }

    #[test]
    fn cell_counts() {
        assert_eq!(cells_for(0), 1);
        assert_eq!(cells_for(40), 1);
        assert_eq!(cells_for(41), 2);
        assert_eq!(cells_for(9180 + 8), 192); // an IP MTU datagram with LLC/SNAP
    }

    #[test]
    fn a_lost_cell_is_detected() {
        let pdu = Aal5Repr { uu: 0, cpi: 0, payload: (0..200u8).collect() }.emit().unwrap();
        assert_eq!(pdu.len(), 5 * 48);
        let mut lost = pdu[..48].to_vec();
        lost.extend_from_slice(&pdu[96..]); // second cell missing
        assert!(Aal5Repr::parse(&lost).is_err());
        assert!(matches!(Aal5Repr::parse(&pdu[..239]), Err(WireError::NotCellAligned(239))));
    }

    proptest! {
        #[test]
        fn round_trip(payload in proptest::collection::vec(any::<u8>(), 0..2000), uu: u8, cpi: u8) {
            let r = Aal5Repr { uu, cpi, payload };
            let pdu = r.emit().unwrap();
            prop_assert_eq!(pdu.len() % 48, 0);
            prop_assert_eq!(Aal5Repr::parse(&pdu).unwrap(), r);
        }

        #[test]
        fn dropping_any_cell_of_a_multi_cell_pdu_is_detected(payload in proptest::collection::vec(any::<u8>(), 48..1500), which in 0usize..32) {
            let pdu = Aal5Repr { uu: 0, cpi: 0, payload }.emit().unwrap();
            let cells = pdu.len() / 48;
            let k = which % cells;
            let mut lost = pdu[..k * 48].to_vec();
            lost.extend_from_slice(&pdu[(k + 1) * 48..]);
            prop_assert!(Aal5Repr::parse(&lost).is_err());
        }

        #[test]
        fn any_single_bit_flip_is_detected(payload in proptest::collection::vec(any::<u8>(), 0..500), bit in 0usize..4000) {
            let mut pdu = Aal5Repr { uu: 0, cpi: 0, payload }.emit().unwrap();
            let b = bit % (pdu.len() * 8);
            pdu[b / 8] ^= 0x80 >> (b % 8);
            prop_assert!(Aal5Repr::parse(&pdu).is_err());
        }
    }
}
