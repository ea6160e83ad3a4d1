//! Credit cells of hop-by-hop (link-by-link) credit flow control in the WAN variant of
//! evans96 (the AN2/SONET gateway's downstream and upstream credit chips): a standard
//! ATM cell whose 48-octet payload carries up to 24 credit entries, each a VCI and a
//! credit value from 1 to 16 buffer spaces. The paper gives the counts and ranges but no
//! bit layout, and says the credit cell "does not carry any error detection or error
//! protection codes"; the layout here is atmsim's:
//!
//! ```text
//!  octets 2i+1 – 2i+2 (i = 0 … 23)   entry i, big-endian 16 bits:
//!      bits 15–4  VCI        (12 bits, 1 … 4095)
//!      bits  3–0  credit − 1 (4 bits, credit 1 … 16)
//!  an entry of all zeros (VCI 0) is padding; entries are packed from octet 1 and every
//!  entry after the first padding entry is padding too.
//! ```
//!
//! Why 12 bits of VCI: 24 entries in 48 octets leave 16 bits per entry; the credit
//! needs 4 (16 values), so the VCI keeps 12. A full 16-bit VCI with a 4-bit credit (20
//! bits) would fit only 19 entries, against the paper's 24. The VCI is the one the
//! *upstream* node sends the flow-controlled VC on (the paper: "the WAN is also capable of
//! remapping the VCI"), so the restriction is that credit-controlled VCs use VCIs 1 to
//! 4095 on the flow-controlled hop; VCI 0 is never a user VC (ITU-T I.361 reserves it for
//! unassigned cells), which frees the all-zero entry to mark padding, so no count octet
//! is needed. There is no CRC: a corrupted entry credits the wrong VC or amount, as in
//! the paper's hardware.
//!
//! The in-header variant (the AN2 LAN, DEC FLOWmaster: "credits are transmitted in the
//! cell headers"): one entry travels in a cell header on the hop, upstream. The paper
//! gives no layout; atmsim's ([`CreditEntry::header`]):
//!
//! ```text
//!  UNI header   GFC (4 bits) = credit − 1   VPI = 0   VCI = the credited VC (1 … 4095)
//!               PTI = 110 (ITU-T I.361: reserved for traffic control and resource
//!               management)   CLP = 0   HEC as usual; the 48 payload octets are zero
//! ```
//!
//! The GFC field exists only at the UNI and a switch rewrites the VPI/VCI, so such a
//! header cannot cross a network that does not implement the flow control: the reason
//! the paper gives for the WAN variant ("the ATM header cannot be used for cell credits
//! (as is done in the AN2) in the WAN").

use crate::cell::{HeaderRepr, Interface};
use crate::WireError;

/// Payload octets of a credit cell.
pub const CREDIT_PAYLOAD_LEN: usize = 48;
/// Entries per credit cell (evans96: "a maximum of 24 credit entries").
pub const MAX_ENTRIES: usize = 24;
/// Octets per entry.
pub const ENTRY_LEN: usize = 2;
/// The smallest and largest credit one entry carries (evans96: "from 1 to 16").
pub const MIN_CREDIT: u8 = 1;
pub const MAX_CREDIT: u8 = 16;
/// The largest VCI an entry can name (12 bits).
pub const MAX_VCI: u16 = 0x0fff;
/// The payload type of a header carrying a credit in the in-header variant (I.361's
/// "reserved for future traffic control and resource management functions"; atmsim's
/// choice).
pub const HEADER_CREDIT_PTI: u8 = 0b110;

/// One credit entry: `credit` buffer spaces freed for the VC the upstream node sends on
/// `vci`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CreditEntry {
    pub vci: u16,
    pub credit: u8,
}

impl CreditEntry {
    /// Checks the ranges (VCI 1 … 4095, credit 1 … 16).
    pub fn check(&self) -> Result<(), WireError> {
        if self.vci == 0 || self.vci > MAX_VCI {
            return Err(WireError::FieldRange { field: "credit entry VCI (1 ... 4095)", value: u32::from(self.vci), bits: 12 });
        }
        if !(MIN_CREDIT..=MAX_CREDIT).contains(&self.credit) {
            return Err(WireError::FieldRange { field: "credit value (1 ... 16)", value: u32::from(self.credit), bits: 4 });
        }
        Ok(())
    }

    fn word(&self) -> u16 {
        (self.vci << 4) | u16::from(self.credit - 1)
    }

    /// The cell header carrying this entry in the in-header variant (module docs): UNI,
    /// GFC = credit − 1, VPI 0, VCI = the credited VC, PTI 110, CLP 0.
    pub fn header(&self) -> Result<HeaderRepr, WireError> {
        self.check()?;
        Ok(HeaderRepr { interface: Interface::Uni, gfc: self.credit - 1, vpi: 0, vci: self.vci, pti: HEADER_CREDIT_PTI, clp: false })
    }

    /// The entry an in-header credit carries; an error for a header that is not one
    /// (another PTI, a VPI, the NNI format) or names a VCI outside 1 … 4095.
    pub fn from_header(h: &HeaderRepr) -> Result<CreditEntry, WireError> {
        if h.interface != Interface::Uni || h.vpi != 0 || h.pti != HEADER_CREDIT_PTI {
            return Err(WireError::NotCreditHeader { vpi: h.vpi, pti: h.pti });
        }
        let e = CreditEntry { vci: h.vci, credit: h.gfc + 1 };
        e.check()?;
        Ok(e)
    }
}

/// A checked view of a credit cell's payload.
#[derive(Debug, Clone, Copy)]
pub struct CreditCell<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CreditCell<T> {
    /// A view over `buffer`, which must hold at least the 48 payload octets.
    pub fn new_checked(buffer: T) -> Result<CreditCell<T>, WireError> {
        let got = buffer.as_ref().len();
        if got < CREDIT_PAYLOAD_LEN {
            return Err(WireError::Truncated { got, need: CREDIT_PAYLOAD_LEN });
        }
        Ok(CreditCell { buffer })
    }

    /// The raw 16-bit word of entry `i` (0 … 23).
    pub fn word(&self, i: usize) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[ENTRY_LEN * i], b[ENTRY_LEN * i + 1]])
    }

    /// Entry `i`, or `None` if it is padding.
    pub fn entry(&self, i: usize) -> Option<CreditEntry> {
        let w = self.word(i);
        (w >> 4 != 0).then(|| CreditEntry { vci: w >> 4, credit: (w & 0xf) as u8 + 1 })
    }
}

/// The entries of a credit cell (at most 24, in order). Kept as the wire's 16-bit
/// words, so a payload holding one stays as small as the other payloads (50 octets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CreditCellRepr {
    words: [u16; MAX_ENTRIES],
    len: u8,
}

impl CreditCellRepr {
    /// A cell with the given entries: an error if there are more than 24 or one is out
    /// of range.
    pub fn new(entries: &[CreditEntry]) -> Result<CreditCellRepr, WireError> {
        if entries.len() > MAX_ENTRIES {
            return Err(WireError::CreditEntries { got: entries.len(), max: MAX_ENTRIES });
        }
        let mut r = CreditCellRepr::default();
        for e in entries {
            r.push(*e)?;
        }
        Ok(r)
    }

    /// Appends an entry (an error if the cell already holds 24 or the entry is out of
    /// range; the cell is then unchanged).
    pub fn push(&mut self, e: CreditEntry) -> Result<(), WireError> {
        e.check()?;
        if self.is_full() {
            return Err(WireError::CreditEntries { got: MAX_ENTRIES + 1, max: MAX_ENTRIES });
        }
        self.words[self.len as usize] = e.word();
        self.len += 1;
        Ok(())
    }

    /// Entry `i` (0 ≤ i < len).
    pub fn entry(&self, i: usize) -> CreditEntry {
        let w = self.words[i];
        CreditEntry { vci: w >> 4, credit: (w & 0xf) as u8 + 1 }
    }

    /// The entries, in order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = CreditEntry> + '_ {
        (0..self.len()).map(|i| self.entry(i))
    }

    /// Adds one credit to the first entry for `vci` that holds fewer than 16; false if
    /// there is none (the caller then pushes a new entry).
    pub fn add_one(&mut self, vci: u16) -> bool {
        self.add_one_up_to(vci, MAX_CREDIT)
    }

    /// Adds one credit to the first entry for `vci` that holds fewer than `max` (1 … 16;
    /// a larger `max` counts as 16); false if there is none.
    pub fn add_one_up_to(&mut self, vci: u16, max: u8) -> bool {
        let n = self.len();
        let below = u16::from(max.clamp(MIN_CREDIT, MAX_CREDIT) - 1);
        match self.words[..n].iter_mut().find(|w| **w >> 4 == vci && **w & 0xf < below) {
            Some(w) => {
                *w += 1;
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len as usize == MAX_ENTRIES
    }

    pub const fn buffer_len(&self) -> usize {
        CREDIT_PAYLOAD_LEN
    }

    /// Writes the 48 payload octets (entries, then zero padding).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        let Some(p) = buf.get_mut(..CREDIT_PAYLOAD_LEN) else {
            return Err(WireError::Truncated { got: buf.len(), need: CREDIT_PAYLOAD_LEN });
        };
        p.fill(0);
        for (i, w) in self.words[..self.len()].iter().enumerate() {
            p[ENTRY_LEN * i..ENTRY_LEN * i + 2].copy_from_slice(&w.to_be_bytes());
        }
        Ok(())
    }

    /// Reads the entries. Every entry value is a valid credit (4 bits hold 1 … 16), so
    /// the only malformed payload is one with a non-zero word after a padding entry
    /// (including a word with VCI 0 and a non-zero credit field), reported as
    /// [`WireError::CreditPadding`].
    pub fn parse<T: AsRef<[u8]>>(cell: &CreditCell<T>) -> Result<CreditCellRepr, WireError> {
        let mut r = CreditCellRepr::default();
        let mut padding = false;
        for i in 0..MAX_ENTRIES {
            match (padding, cell.entry(i)) {
                (false, Some(_)) => {
                    r.words[i] = cell.word(i);
                    r.len += 1;
                }
                (false, None) if cell.word(i) == 0 => padding = true,
                (true, _) if cell.word(i) == 0 => {}
                _ => return Err(WireError::CreditPadding { index: i }),
            }
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_made_bytes() {
        // Entry 0: VCI 0x123, credit 16 → 0x123F; entry 1: VCI 32, credit 1 → 0x0200;
        // entry 2: VCI 4095, credit 5 → 0xFFF4; then padding.
        let mut bytes = [0u8; 48];
        bytes[..6].copy_from_slice(&[0x12, 0x3f, 0x02, 0x00, 0xff, 0xf4]);
        let view = CreditCell::new_checked(&bytes[..]).unwrap();
        let r = CreditCellRepr::parse(&view).unwrap();
        let want = [CreditEntry { vci: 0x123, credit: 16 }, CreditEntry { vci: 32, credit: 1 }, CreditEntry { vci: 4095, credit: 5 }];
        assert_eq!(r.entries().collect::<Vec<_>>(), want);
        let mut out = [0xaau8; 48];
        r.emit(&mut out).unwrap();
        assert_eq!(out, bytes);
    }

    #[test]
    fn a_full_cell_of_24_entries() {
        // Entry i = VCI 100 + i, credit i % 16 + 1: word (100 + i) << 4 | i % 16.
        let mut bytes = [0u8; 48];
        for i in 0..24u16 {
            let w = ((100 + i) << 4) | (i % 16);
            bytes[2 * i as usize] = (w >> 8) as u8;
            bytes[2 * i as usize + 1] = w as u8;
        }
        let r = CreditCellRepr::parse(&CreditCell::new_checked(&bytes).unwrap()).unwrap();
        assert_eq!(r.len(), 24);
        assert!(r.is_full());
        assert_eq!(r.entry(23), CreditEntry { vci: 123, credit: 8 });
        let mut out = [0u8; 48];
        r.emit(&mut out).unwrap();
        assert_eq!(out, bytes);
        let mut r2 = r;
        assert_eq!(r2.push(CreditEntry { vci: 5, credit: 1 }), Err(WireError::CreditEntries { got: 25, max: 24 }));
        assert_eq!(r2, r, "a refused push leaves the cell unchanged");
    }

    #[test]
    fn add_one_stops_at_the_entry_limit() {
        let mut r = CreditCellRepr::new(&[CreditEntry { vci: 9, credit: 3 }]).unwrap();
        assert!(!r.add_one_up_to(9, 3), "3 credits: full at a limit of 3");
        assert!(r.add_one_up_to(9, 4));
        assert_eq!(r.entry(0), CreditEntry { vci: 9, credit: 4 });
        assert!(!r.add_one_up_to(10, 16), "no entry for VCI 10");
        let mut full = CreditCellRepr::new(&[CreditEntry { vci: 9, credit: 16 }]).unwrap();
        assert!(!full.add_one(9) && !full.add_one_up_to(9, 200), "never above 16");
    }

    #[test]
    fn an_empty_cell_is_all_zeros() {
        let bytes = [0u8; 48];
        let r = CreditCellRepr::parse(&CreditCell::new_checked(&bytes).unwrap()).unwrap();
        assert!(r.is_empty());
    }

    #[test]
    fn out_of_range_entries_and_short_buffers_are_refused() {
        for (e, field) in [
            (CreditEntry { vci: 7, credit: 0 }, "credit value (1 ... 16)"),
            (CreditEntry { vci: 7, credit: 17 }, "credit value (1 ... 16)"),
            (CreditEntry { vci: 0, credit: 3 }, "credit entry VCI (1 ... 4095)"),
            (CreditEntry { vci: 4096, credit: 3 }, "credit entry VCI (1 ... 4095)"),
        ] {
            assert!(matches!(CreditCellRepr::new(&[e]), Err(WireError::FieldRange { field: f, .. }) if f == field), "{e:?}");
        }
        let too_many = vec![CreditEntry { vci: 40, credit: 2 }; 25];
        assert_eq!(CreditCellRepr::new(&too_many), Err(WireError::CreditEntries { got: 25, max: 24 }));
        assert_eq!(CreditCell::new_checked(&[0u8; 47][..]).err(), Some(WireError::Truncated { got: 47, need: 48 }));
        assert_eq!(CreditCellRepr::default().emit(&mut [0u8; 47]), Err(WireError::Truncated { got: 47, need: 48 }));
    }

    #[test]
    fn words_after_padding_are_malformed() {
        let mut bytes = [0u8; 48];
        bytes[0..2].copy_from_slice(&[0x01, 0x00]); // VCI 16, credit 1
        bytes[4..6].copy_from_slice(&[0x02, 0x00]); // entry 2 after padding entry 1
        assert_eq!(CreditCellRepr::parse(&CreditCell::new_checked(&bytes).unwrap()), Err(WireError::CreditPadding { index: 2 }));
        let mut bytes = [0u8; 48];
        bytes[1] = 0x03; // VCI 0 with credit field 3: not padding, not an entry
        assert_eq!(CreditCellRepr::parse(&CreditCell::new_checked(&bytes).unwrap()), Err(WireError::CreditPadding { index: 0 }));
    }

    #[test]
    fn an_in_header_credit_by_hand() {
        // VCI 100 credit 16: GFC 0xf, VPI 0, VCI 0x0064, PTI 110, CLP 0 →
        // octets f0 00 06 4c, then the HEC.
        let h = CreditEntry { vci: 100, credit: 16 }.header().unwrap();
        let mut b = [0u8; 5];
        h.emit(&mut b).unwrap();
        assert_eq!(b[..4], [0xf0, 0x00, 0x06, 0x4c]);
        let back = HeaderRepr::parse(&b, Interface::Uni).unwrap();
        assert_eq!(CreditEntry::from_header(&back), Ok(CreditEntry { vci: 100, credit: 16 }));
        let one = CreditEntry { vci: 4095, credit: 1 }.header().unwrap();
        assert_eq!((one.gfc, one.vci, one.pti), (0, 4095, 0b110));
    }

    #[test]
    fn headers_that_are_not_credits_are_refused() {
        let good = CreditEntry { vci: 7, credit: 3 }.header().unwrap();
        for bad in [HeaderRepr { pti: 0, ..good }, HeaderRepr { vpi: 1, ..good }, HeaderRepr { interface: Interface::Nni, gfc: 0, ..good }] {
            assert!(matches!(CreditEntry::from_header(&bad), Err(WireError::NotCreditHeader { .. })), "{bad:?}");
        }
        assert!(matches!(CreditEntry::from_header(&HeaderRepr { vci: 0, ..good }), Err(WireError::FieldRange { .. })));
        assert!(matches!(CreditEntry::from_header(&HeaderRepr { vci: 5000, ..good }), Err(WireError::FieldRange { .. })));
        for credit in [0u8, 17] {
            assert!(matches!(CreditEntry { vci: 7, credit }.header(), Err(WireError::FieldRange { .. })), "credit {credit}");
        }
    }

    proptest! {
        #[test]
        fn in_header_credits_round_trip(vci in 1u16..=4095, credit in 1u8..=16) {
            let e = CreditEntry { vci, credit };
            let mut b = [0u8; 5];
            e.header().unwrap().emit(&mut b).unwrap();
            prop_assert_eq!(CreditEntry::from_header(&HeaderRepr::parse(&b, Interface::Uni).unwrap()), Ok(e));
        }

        #[test]
        fn emit_and_parse_round_trip(raw in proptest::collection::vec((1u16..=4095, 1u8..=16), 0..=24)) {
            let entries: Vec<CreditEntry> = raw.iter().map(|&(vci, credit)| CreditEntry { vci, credit }).collect();
            let r = CreditCellRepr::new(&entries).unwrap();
            let mut buf = [0u8; 48];
            r.emit(&mut buf).unwrap();
            prop_assert!(buf[2 * entries.len()..].iter().all(|&b| b == 0));
            prop_assert_eq!(CreditCellRepr::parse(&CreditCell::new_checked(&buf).unwrap()), Ok(r));
        }
    }
}
