//! The ATM cell header (ITU-T I.361) and its HEC (ITU-T I.432).
//!
//! ```text
//!  UNI:  | GFC(4) VPI(4) | VPI(4) VCI(4) | VCI(8) | VCI(4) PTI(3) CLP(1) | HEC(8) |
//!  NNI:  | VPI(8)        | VPI(4) VCI(4) | VCI(8) | VCI(4) PTI(3) CLP(1) | HEC(8) |
//! ```
//!
//! HEC = CRC-8 of the first four octets with generator x^8 + x^2 + x + 1, XOR 0x55 (the
//! coset, I.432 section 4.3.2) — the `CRC-8/I-432-1` of the `crc` catalogue. The
//! receiver ([`HecReceiver`]) runs the two-mode algorithm of I.432 Figure 3: in
//! correction mode a single-bit error is corrected and the receiver moves to detection
//! mode; in detection mode every errored header is discarded; an error-free header
//! returns it to correction mode. A multi-bit error is discarded in either mode.

use crc::{Crc, CRC_8_I_432_1};

use crate::WireError;

/// Octets in a cell, its header and its payload.
pub const CELL_LEN: usize = 53;
pub const HEADER_LEN: usize = 5;
pub const PAYLOAD_LEN: usize = 48;

const HEC: Crc<u8> = Crc::<u8>::new(&CRC_8_I_432_1);

/// The HEC of the first four header octets.
pub fn hec(first4: &[u8; 4]) -> u8 {
    HEC.checksum(first4)
}

/// Which header format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    /// User-network interface: 4-bit GFC, 8-bit VPI.
    Uni,
    /// Network-node interface: 12-bit VPI.
    Nni,
}

/// A parsed cell header (without the HEC, which `emit` computes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderRepr {
    pub interface: Interface,
    /// Generic flow control (UNI only; 0 on NNI).
    pub gfc: u8,
    pub vpi: u16,
    pub vci: u16,
    /// Payload type: bit 2 = OAM/RM (1) vs user data (0); for user data bit 1 = EFCI
    /// congestion experienced, bit 0 = AAL-indicate (AAL5 end of PDU).
    pub pti: u8,
    /// Cell loss priority.
    pub clp: bool,
}

impl HeaderRepr {
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    fn check(&self) -> Result<(), WireError> {
        let (vpi_bits, gfc_ok) = match self.interface {
            Interface::Uni => (8, self.gfc < 16),
            Interface::Nni => (12, self.gfc == 0),
        };
        if !gfc_ok {
            return Err(WireError::FieldRange { field: "gfc", value: self.gfc as u32, bits: if self.interface == Interface::Uni { 4 } else { 0 } });
        }
        if (self.vpi as u32) >= 1 << vpi_bits {
            return Err(WireError::FieldRange { field: "vpi", value: self.vpi as u32, bits: vpi_bits });
        }
        if self.pti >= 8 {
            return Err(WireError::FieldRange { field: "pti", value: self.pti as u32, bits: 3 });
        }
        Ok(())
    }

    /// Writes the five header octets, HEC included.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        self.check()?;
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: buf.len(), need: HEADER_LEN });
        }
        let vci = self.vci as u32;
        let first = match self.interface {
            Interface::Uni => (self.gfc << 4) | ((self.vpi >> 4) as u8 & 0x0f),
            Interface::Nni => (self.vpi >> 4) as u8,
        };
        buf[0] = first;
        buf[1] = (((self.vpi & 0x0f) as u8) << 4) | ((vci >> 12) as u8 & 0x0f);
        buf[2] = (vci >> 4) as u8;
        buf[3] = (((vci & 0x0f) as u8) << 4) | (self.pti << 1) | u8::from(self.clp);
        let h = hec(&[buf[0], buf[1], buf[2], buf[3]]);
        buf[4] = h;
        Ok(())
    }

    /// Parses five octets whose HEC is already known to be right (see [`HecReceiver`]
    /// for the checking receiver).
    pub fn parse(buf: &[u8], interface: Interface) -> Result<HeaderRepr, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: buf.len(), need: HEADER_LEN });
        }
        if hec(&[buf[0], buf[1], buf[2], buf[3]]) != buf[4] {
            return Err(WireError::Hec);
        }
        let (gfc, vpi_hi) = match interface {
            Interface::Uni => (buf[0] >> 4, (buf[0] & 0x0f) as u16),
            Interface::Nni => (0, buf[0] as u16),
        };
        let vpi = (vpi_hi << 4) | (buf[1] >> 4) as u16;
        let vci = (((buf[1] & 0x0f) as u16) << 12) | ((buf[2] as u16) << 4) | (buf[3] >> 4) as u16;
        Ok(HeaderRepr { interface, gfc, vpi, vci, pti: (buf[3] >> 1) & 0x07, clp: buf[3] & 1 == 1 })
    }

    /// True for the last cell of an AAL5 PDU (user data, AAL-indicate set).
    pub fn is_end_of_pdu(&self) -> bool {
        self.pti & 0b100 == 0 && self.pti & 0b001 == 1
    }
}

/// What the I.432 receiver did with one header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HecOutcome {
    /// No error.
    Valid([u8; 5]),
    /// A single-bit error at bit `bit` (0 = most significant bit of octet 0) was corrected.
    Corrected { header: [u8; 5], bit: u8 },
    /// Discarded: an error in detection mode, or an uncorrectable one.
    Discarded,
}

/// The two modes of the I.432 HEC receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HecMode {
    Correction,
    Detection,
}

/// The HEC receiver of ITU-T I.432 Figure 3 (sans-IO: feed it headers).
#[derive(Clone, Debug)]
pub struct HecReceiver {
    mode: HecMode,
    /// syndrome → bit position of the single-bit error that produces it.
    single_bit: [Option<u8>; 256],
}

fn syndrome(h: &[u8; 5]) -> u8 {
    hec(&[h[0], h[1], h[2], h[3]]) ^ h[4]
}

impl Default for HecReceiver {
    fn default() -> Self {
        HecReceiver::new()
    }
}

impl HecReceiver {
    pub fn new() -> Self {
        // The code is linear: the syndrome of an error pattern does not depend on the
        // header, so flipping each of the 40 bits of any valid header gives the table.
        let mut single_bit = [None; 256];
        let base = [0u8, 0, 0, 0, hec(&[0, 0, 0, 0])];
        for bit in 0..40u8 {
            let mut h = base;
            h[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
            single_bit[syndrome(&h) as usize] = Some(bit);
        }
        HecReceiver { mode: HecMode::Correction, single_bit }
    }

    pub fn mode(&self) -> HecMode {
        self.mode
    }

    /// Checks (and in correction mode, corrects) one header.
    pub fn receive(&mut self, mut h: [u8; 5]) -> HecOutcome {
        let s = syndrome(&h);
        if s == 0 {
            self.mode = HecMode::Correction;
            return HecOutcome::Valid(h);
        }
        match (self.mode, self.single_bit[s as usize]) {
            (HecMode::Correction, Some(bit)) => {
                h[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
                self.mode = HecMode::Detection;
                HecOutcome::Corrected { header: h, bit }
            }
            _ => {
                self.mode = HecMode::Detection;
                HecOutcome::Discarded
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn published_hec_vectors() {
        // I.432 section 4.5: the idle cell header 00 00 00 01 carries HEC 0x52;
        // an all-zero header (unassigned cell, I.361) carries the coset 0x55.
        assert_eq!(hec(&[0x00, 0x00, 0x00, 0x01]), 0x52);
        assert_eq!(hec(&[0x00, 0x00, 0x00, 0x00]), 0x55);
        // The catalogue check value of CRC-8/I-432-1 over "123456789" is 0xa1.
        assert_eq!(HEC.checksum(b"123456789"), 0xa1);
    }

    #[test]
    fn uni_layout_by_hand() {
        // GFC 0, VPI 1, VCI 32 (0x0020), PTI 0, CLP 0: 00 10 02 00, then the HEC.
        let r = HeaderRepr { interface: Interface::Uni, gfc: 0, vpi: 1, vci: 32, pti: 0, clp: false };
        let mut b = [0u8; 5];
        r.emit(&mut b).unwrap();
        assert_eq!(&b[..4], &[0x00, 0x10, 0x02, 0x00]);
        assert_eq!(b[4], hec(&[0x00, 0x10, 0x02, 0x00]));
        // End of an AAL5 PDU: PTI = 001 sets bit 1 of octet 3.
        let eop = HeaderRepr { pti: 1, ..r };
        eop.emit(&mut b).unwrap();
        assert_eq!(b[3], 0x02);
        assert!(eop.is_end_of_pdu());
    }

    #[test]
    fn field_ranges_are_checked() {
        let r = HeaderRepr { interface: Interface::Uni, gfc: 0, vpi: 256, vci: 1, pti: 0, clp: false };
        assert!(matches!(r.emit(&mut [0; 5]), Err(WireError::FieldRange { field: "vpi", .. })));
        let n = HeaderRepr { interface: Interface::Nni, vpi: 4095, ..r };
        assert!(n.emit(&mut [0; 5]).is_ok());
        assert!(matches!(HeaderRepr::parse(&[0; 3], Interface::Uni), Err(WireError::Truncated { .. })));
    }

    #[test]
    fn receiver_modes_follow_i432() {
        let mut rx = HecReceiver::new();
        let mut good = [0u8; 5];
        HeaderRepr { interface: Interface::Uni, gfc: 0, vpi: 5, vci: 77, pti: 0, clp: false }.emit(&mut good).unwrap();
        let mut one = good;
        one[2] ^= 0x10;
        // correction mode: corrected, then detection mode
        assert_eq!(rx.receive(one), HecOutcome::Corrected { header: good, bit: 19 });
        assert_eq!(rx.mode(), HecMode::Detection);
        // detection mode: even a single-bit error is discarded
        assert_eq!(rx.receive(one), HecOutcome::Discarded);
        // a good header returns to correction mode
        assert_eq!(rx.receive(good), HecOutcome::Valid(good));
        assert_eq!(rx.mode(), HecMode::Correction);
    }

    fn any_header() -> impl Strategy<Value = HeaderRepr> {
        (any::<bool>(), 0u8..16, any::<u16>(), any::<u16>(), 0u8..8, any::<bool>()).prop_map(|(nni, gfc, vpi, vci, pti, clp)| {
            if nni {
                HeaderRepr { interface: Interface::Nni, gfc: 0, vpi: vpi & 0x0fff, vci, pti, clp }
            } else {
                HeaderRepr { interface: Interface::Uni, gfc, vpi: vpi & 0x00ff, vci, pti, clp }
            }
        })
    }

    proptest! {
        #[test]
        fn emit_parse_round_trip(r in any_header()) {
            let mut b = [0u8; 5];
            r.emit(&mut b).unwrap();
            prop_assert_eq!(HeaderRepr::parse(&b, r.interface).unwrap(), r);
        }

        #[test]
        fn every_single_bit_error_is_corrected(r in any_header(), bit in 0u8..40) {
            let mut good = [0u8; 5];
            r.emit(&mut good).unwrap();
            let mut bad = good;
            bad[(bit / 8) as usize] ^= 0x80 >> (bit % 8);
            prop_assert_eq!(HecReceiver::new().receive(bad), HecOutcome::Corrected { header: good, bit });
        }

        #[test]
        fn every_double_bit_error_is_detected(r in any_header(), a in 0u8..40, b in 0u8..40) {
            prop_assume!(a != b);
            let mut good = [0u8; 5];
            r.emit(&mut good).unwrap();
            let mut bad = good;
            bad[(a / 8) as usize] ^= 0x80 >> (a % 8);
            bad[(b / 8) as usize] ^= 0x80 >> (b % 8);
            // HEC has minimum distance 4 over the 40-bit header: two errors never look
            // like zero or one error.
            prop_assert_eq!(HecReceiver::new().receive(bad), HecOutcome::Discarded);
        }
    }
}
