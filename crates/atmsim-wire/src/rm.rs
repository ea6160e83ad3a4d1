//! ABR resource management (RM) cells: the 48-octet payload of ATM Forum Traffic
//! Management 4.0 (af-tm-0056.000, section 5.10.3.1, Table 5-4), carried in cells with
//! PTI = 110 (VC-level RM) or on VCI 6 (VP-level).
//!
//! ```text
//!  octet 1      protocol ID (1 = ABR)
//!  octet 2      DIR | BN | CI | NI | RA | reserved (3 bits)     (DIR the MSB)
//!  octets 3–4   ER   explicit rate            } 16-bit rate format, see [`RmRate`]
//!  octets 5–6   CCR  current cell rate        }
//!  octets 7–8   MCR  minimum cell rate        }
//!  octets 9–12  QL   queue length
//!  octets 13–16 SN   sequence number
//!  octets 17–46 reserved, 0x6A each
//!  octets 47–48 reserved (6 bits) | CRC-10 (10 bits)
//! ```
//!
//! The CRC-10 (generator x^10 + x^9 + x^5 + x^4 + x + 1, ITU-T I.610) covers the 374 bits
//! before it: the remainder of M(x)·x^10 divided by the generator, M the 46 octets and
//! the 6 reserved bits (zero).

use crc::{Crc, CRC_10_ATM};

use crate::WireError;

/// Payload octets of an RM cell.
pub const RM_PAYLOAD_LEN: usize = 48;
/// ABR's protocol identifier.
pub const PROTOCOL_ABR: u8 = 1;
/// What the reserved octets 17–46 carry.
pub const RESERVED_OCTET: u8 = 0x6A;
/// PTI of a VC-level (F5) RM cell.
pub const PTI_RM: u8 = 0b110;

const CRC10: Crc<u16> = Crc::<u16>::new(&CRC_10_ATM);
const GENERATOR: u16 = 0x233;

/// A rate in the RM cell's 16-bit format: bit 15 reserved (0), bit 14 nz, bits 13–9 the
/// exponent e, bits 8–0 the mantissa m; the rate is `nz · 2^e · (1 + m/512)` cells/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct RmRate(pub u16);

impl RmRate {
    /// The largest rate below or at `cells_per_s` (0 for rates under 1 cell/s or not a
    /// number; rates beyond the format's largest saturate to it).
    pub fn from_cells_per_s(cells_per_s: f64) -> RmRate {
        if cells_per_s.is_nan() || cells_per_s < 1.0 {
            return RmRate(0);
        }
        let e = (cells_per_s.log2().floor() as i32).clamp(0, 31);
        let scaled = cells_per_s / 2f64.powi(e);
        // 1 ≤ scaled < 2 (up to the saturation at e = 31).
        let m = (((scaled - 1.0) * 512.0).floor() as i64).clamp(0, 511) as u16;
        RmRate((1 << 14) | ((e as u16) << 9) | m)
    }

    pub fn cells_per_s(self) -> f64 {
        if self.0 & (1 << 14) == 0 {
            return 0.0;
        }
        let e = (self.0 >> 9) & 0x1f;
        let m = self.0 & 0x1ff;
        2f64.powi(e as i32) * (1.0 + m as f64 / 512.0)
    }
}

/// The fields of an RM cell's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmRepr {
    pub protocol_id: u8,
    /// Direction: false forward (source to destination), true backward.
    pub backward: bool,
    /// Backward explicit congestion notification (a switch or destination made it).
    pub bn: bool,
    /// Congestion indication.
    pub ci: bool,
    /// No increase.
    pub ni: bool,
    /// Request/acknowledge (not used by ABR in TM 4.0; carried).
    pub ra: bool,
    pub er: RmRate,
    pub ccr: RmRate,
    pub mcr: RmRate,
    pub ql: u32,
    pub sn: u32,
}

/// The CRC-10 of the 374 bits before the CRC field of an RM payload.
pub fn crc10(payload: &[u8; RM_PAYLOAD_LEN]) -> u16 {
    // The crate gives B(x)·x^10 mod G for the 46 octets B; the 6 reserved bits follow,
    // one at a time: (c·x + b·x^10) mod G.
    let mut c = CRC10.checksum(&payload[..46]);
    for i in 0..6 {
        let bit = u16::from((payload[46] >> (7 - i)) & 1);
        let feedback = ((c >> 9) & 1) ^ bit;
        c = (c << 1) & 0x3ff;
        if feedback != 0 {
            c ^= GENERATOR;
        }
    }
    c
}

impl RmRepr {
    pub const fn buffer_len(&self) -> usize {
        RM_PAYLOAD_LEN
    }

    /// Writes the payload, reserved octets and CRC-10 included.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let Some(p) = buf.get_mut(..RM_PAYLOAD_LEN) else {
            return Err(WireError::Truncated { got: buf.len(), need: RM_PAYLOAD_LEN });
        };
        p[0] = self.protocol_id;
        p[1] = (u8::from(self.backward) << 7) | (u8::from(self.bn) << 6) | (u8::from(self.ci) << 5) | (u8::from(self.ni) << 4) | (u8::from(self.ra) << 3);
        p[2..4].copy_from_slice(&self.er.0.to_be_bytes());
        p[4..6].copy_from_slice(&self.ccr.0.to_be_bytes());
        p[6..8].copy_from_slice(&self.mcr.0.to_be_bytes());
        p[8..12].copy_from_slice(&self.ql.to_be_bytes());
        p[12..16].copy_from_slice(&self.sn.to_be_bytes());
        p[16..46].fill(RESERVED_OCTET);
        p[46] = 0;
        p[47] = 0;
        let mut whole = [0u8; RM_PAYLOAD_LEN];
        whole.copy_from_slice(p);
        let c = crc10(&whole);
        p[46] = (c >> 8) as u8;
        p[47] = c as u8;
        Ok(())
    }

    /// Reads a payload whose CRC-10 checks.
    pub fn parse(buf: &[u8]) -> Result<RmRepr, WireError> {
        let Some(p) = buf.get(..RM_PAYLOAD_LEN) else {
            return Err(WireError::Truncated { got: buf.len(), need: RM_PAYLOAD_LEN });
        };
        let mut whole = [0u8; RM_PAYLOAD_LEN];
        whole.copy_from_slice(p);
        let carried = (u16::from(p[46] & 0x03) << 8) | u16::from(p[47]);
        let computed = crc10(&whole);
        if computed != carried {
            return Err(WireError::Crc10 { computed, carried });
        }
        let be16 = |i: usize| u16::from_be_bytes([p[i], p[i + 1]]);
        let be32 = |i: usize| u32::from_be_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]);
        Ok(RmRepr {
            protocol_id: p[0],
            backward: p[1] & 0x80 != 0,
            bn: p[1] & 0x40 != 0,
            ci: p[1] & 0x20 != 0,
            ni: p[1] & 0x10 != 0,
            ra: p[1] & 0x08 != 0,
            er: RmRate(be16(2)),
            ccr: RmRate(be16(4)),
            mcr: RmRate(be16(6)),
            ql: be32(8),
            sn: be32(12),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// CRC-10 by the definition: long division of the 374 message bits followed by ten
    /// zero bits, one bit at a time (independent of the crate and of the shift above).
    fn crc10_by_division(payload: &[u8; RM_PAYLOAD_LEN]) -> u16 {
        let bits: Vec<u8> = payload.iter().flat_map(|&b| (0..8).rev().map(move |i| (b >> i) & 1)).take(374).chain(std::iter::repeat_n(0, 10)).collect();
        let mut r: u32 = 0;
        for b in bits {
            r = (r << 1) | u32::from(b);
            if r & 0x400 != 0 {
                r ^= 0x400 | u32::from(GENERATOR);
            }
        }
        r as u16
    }

    fn sample() -> RmRepr {
        RmRepr {
            protocol_id: PROTOCOL_ABR,
            backward: true,
            bn: false,
            ci: true,
            ni: false,
            ra: false,
            er: RmRate::from_cells_per_s(353_207.5),
            ccr: RmRate::from_cells_per_s(23_584.0),
            mcr: RmRate::from_cells_per_s(1_179.0),
            ql: 500,
            sn: 0x0102_0304,
        }
    }

    #[test]
    fn the_crc_algorithm_is_the_catalogued_crc_10() {
        // CRC-10/ATM (I.610) check value over "123456789".
        assert_eq!(CRC10.checksum(b"123456789"), 0x199);
    }

    #[test]
    fn layout_and_crc_of_an_rm_cell() {
        let mut buf = [0u8; RM_PAYLOAD_LEN];
        sample().emit(&mut buf).unwrap();
        assert_eq!(buf[0], 1);
        assert_eq!(buf[1], 0b1010_0000, "DIR = 1, CI = 1");
        assert_eq!(&buf[8..12], &[0, 0, 1, 0xf4], "QL = 500");
        assert_eq!(&buf[12..16], &[1, 2, 3, 4]);
        assert!(buf[16..46].iter().all(|&b| b == 0x6a));
        assert_eq!(buf[46] & 0xfc, 0, "6 reserved bits");
        let carried = (u16::from(buf[46]) << 8) | u16::from(buf[47]);
        assert_eq!(carried, crc10_by_division(&buf));
        assert_eq!(RmRepr::parse(&buf), Ok(sample()));
        assert!(matches!(RmRepr::parse(&buf[..47]), Err(WireError::Truncated { .. })));
    }

    #[test]
    fn rate_format_values() {
        // nz = 0 is zero; 1 cell/s is e = 0, m = 0; 2^e·(1 + m/512) is exact.
        assert_eq!(RmRate(0).cells_per_s(), 0.0);
        assert_eq!(RmRate::from_cells_per_s(1.0), RmRate(0x4000));
        assert_eq!(RmRate::from_cells_per_s(0.5), RmRate(0));
        let r = RmRate((1 << 14) | (18 << 9) | 177);
        assert_eq!(r.cells_per_s(), 262_144.0 * (1.0 + 177.0 / 512.0));
        assert_eq!(RmRate::from_cells_per_s(r.cells_per_s()), r);
        // OC-3c's 353,207.5 cells/s: e = 18, m = floor((353207.5/262144 − 1)·512) = 177.
        assert_eq!(RmRate::from_cells_per_s(353_207.5), r);
    }

    proptest! {
        #[test]
        fn rates_encode_downwards_within_one_mantissa_step(x in 1.0f64..1e9) {
            let r = RmRate::from_cells_per_s(x);
            let back = r.cells_per_s();
            prop_assert!(back <= x && back > x * (1.0 - 1.0 / 512.0) - 1e-9, "{} -> {}", x, back);
        }

        #[test]
        fn emit_and_parse_round_trip(backward: bool, bn: bool, ci: bool, ni: bool, er: u16, ccr: u16, mcr: u16, ql: u32, sn: u32) {
            let repr = RmRepr { protocol_id: 1, backward, bn, ci, ni, ra: false, er: RmRate(er & 0x7fff), ccr: RmRate(ccr & 0x7fff), mcr: RmRate(mcr & 0x7fff), ql, sn };
            let mut buf = [0u8; RM_PAYLOAD_LEN];
            repr.emit(&mut buf).unwrap();
            prop_assert_eq!(RmRepr::parse(&buf), Ok(repr));
            prop_assert_eq!((u16::from(buf[46]) << 8) | u16::from(buf[47]), crc10_by_division(&buf));
        }

        /// CRC-10 catches every single- and double-bit error in the 384 bits, the
        /// reserved ones included (its generator is (x + 1)(x^9 + x^4 + 1), the second
        /// factor primitive, of period 511 > 384).
        #[test]
        fn one_or_two_flipped_bits_are_caught(a in 0usize..384, b in 0usize..384, sn: u32) {
            let mut buf = [0u8; RM_PAYLOAD_LEN];
            RmRepr { sn, ..sample() }.emit(&mut buf).unwrap();
            buf[a / 8] ^= 0x80 >> (a % 8);
            if b != a {
                buf[b / 8] ^= 0x80 >> (b % 8);
            }
            prop_assert!(RmRepr::parse(&buf).is_err());
        }
    }
}
