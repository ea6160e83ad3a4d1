//! LLC/SNAP encapsulation of routed protocols over AAL5 (RFC 1483 section 4.1, kept in
//! RFC 2684): `AA AA 03` (LLC: SNAP), OUI `00 00 00`, then the EtherType.
//!
//! ```text
//!  | DSAP AA | SSAP AA | Ctrl 03 | OUI 00 00 00 | EtherType (2) | routed PDU ... |
//! ```

use crate::WireError;

/// Octets of the LLC/SNAP header.
pub const HEADER_LEN: usize = 8;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;

/// A parsed LLC/SNAP header for a routed protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapRepr {
    pub ethertype: u16,
}

impl SnapRepr {
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: buf.len(), need: HEADER_LEN });
        }
        buf[..6].copy_from_slice(&[0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00]);
        buf[6..8].copy_from_slice(&self.ethertype.to_be_bytes());
        Ok(())
    }

    pub fn parse(buf: &[u8]) -> Result<SnapRepr, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::Truncated { got: buf.len(), need: HEADER_LEN });
        }
        if buf[..6] != [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00] {
            return Err(WireError::NotSnap);
        }
        Ok(SnapRepr { ethertype: u16::from_be_bytes([buf[6], buf[7]]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_is_the_rfc1483_octets() {
        let mut b = [0u8; 8];
        SnapRepr { ethertype: ETHERTYPE_IPV4 }.emit(&mut b).unwrap();
        assert_eq!(b, [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00]);
        assert_eq!(SnapRepr::parse(&b).unwrap().ethertype, ETHERTYPE_IPV4);
        assert_eq!(SnapRepr::parse(&[0xfe, 0xfe, 0x03, 0, 0, 0, 8, 0]), Err(WireError::NotSnap));
    }
}
