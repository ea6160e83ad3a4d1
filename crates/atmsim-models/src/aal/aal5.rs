//! AAL5 segmentation and reassembly on cell metadata (sans-IO).
//!
//! The byte format is in `atmsim-wire::aal5`; here cells carry only what the receiver
//! would learn from the bytes: the end-of-PDU mark (PTI AAL-indicate bit), the PDU the
//! cell came from (`Cell::seq`, standing for the CRC: cells of two PDUs never pass it)
//! and the PDU's cell count (`Cell::pdu_cells`, standing for the trailer's Length).
//!
//! The reassembler keeps, per VC, the cells collected since the last end of PDU. At an
//! end-of-PDU cell it delivers the PDU if every collected cell belongs to it and there
//! are exactly as many as its length says; otherwise the whole collection is discarded
//! (`length` if the count is wrong, `crc` if the count happens to be right but cells of
//! two PDUs were merged). A partial PDU older than the reassembly timeout is discarded
//! (`timeout`). The test `metadata_and_wire_paths_agree` checks, loss pattern by loss
//! pattern, that these outcomes equal what byte-exact AAL5 (CRC-32 and Length) decides.

use atmsim_kernel::{SimDuration, SimTime};

use crate::cell::{Cell, FLAG_EOP};

/// Octets of the AAL5 trailer and of a cell payload.
pub const TRAILER: usize = 8;
pub const CELL_PAYLOAD: usize = 48;

/// The largest CPCS-PDU in cells (65,535 octets of payload + trailer): a reassembly
/// that grows past it without an end-of-PDU cell is discarded (a real receiver's
/// buffer would overflow; cells of a non-AAL5 stream arriving on the VC end here).
pub const MAX_PDU_CELLS: u32 = cells_for(65_535) as u32;

/// Cells carrying a CPCS payload of `bytes` octets.
pub const fn cells_for(bytes: usize) -> usize {
    (bytes + TRAILER).div_ceil(CELL_PAYLOAD)
}

/// The cells of one PDU: `cells_for(bytes)` cells, the last marked end-of-PDU.
pub fn segment(born: SimTime, flow: u32, vc: u32, pdu: u32, bytes: usize) -> impl Iterator<Item = Cell> {
    segment_cells(born, flow, vc, pdu, cells_for(bytes).min(u16::MAX as usize) as u16)
}

/// The `cells` cells of one PDU whose cell count is already known.
pub fn segment_cells(born: SimTime, flow: u32, vc: u32, pdu: u32, cells: u16) -> impl Iterator<Item = Cell> {
    (0..cells).map(move |i| Cell {
        flags: if i + 1 == cells { FLAG_EOP } else { 0 },
        pdu_cells: cells,
        pdu_index: i,
        ..Cell::plain(born, flow, vc, pdu)
    })
}

/// What became of a collection of cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reassembly {
    /// PDU `pdu` arrived whole in `cells` cells; `born` is its first cell's birth.
    Delivered { pdu: u32, cells: u32, born: SimTime },
    /// Discarded, with the cells it held.
    Discarded { cause: &'static str, cells: u32, flow: u32 },
}

#[derive(Clone, Debug, Default)]
struct Partial {
    pdu: u32,
    flow: u32,
    cells: u32,
    merged: bool,
    started: SimTime,
    born: SimTime,
}

/// Per-VC reassembly state.
#[derive(Clone, Debug, Default)]
pub struct Reassembler {
    partial: Option<Partial>,
}

impl Reassembler {
    /// Takes one cell; returns an outcome when the cell closes a PDU (or when an old
    /// partial PDU is found timed out, in which case the cell starts a new one).
    pub fn on_cell(&mut self, cell: &Cell, now: SimTime, timeout: SimDuration) -> (Option<Reassembly>, Option<Reassembly>) {
        let mut expired = None;
        if let Some(p) = &self.partial {
            if now.since(p.started) > timeout {
                expired = Some(Reassembly::Discarded { cause: "timeout", cells: p.cells, flow: p.flow });
                self.partial = None;
            }
        }
        let p = self.partial.get_or_insert(Partial { pdu: cell.seq, flow: cell.flow, cells: 0, merged: false, started: now, born: cell.born });
        p.cells += 1;
        if cell.seq != p.pdu || cell.flow != p.flow {
            p.merged = true;
        }
        if !cell.is_eop() {
            if p.cells >= MAX_PDU_CELLS {
                let r = Reassembly::Discarded { cause: "length", cells: p.cells, flow: p.flow };
                self.partial = None;
                return (expired, Some(r));
            }
            return (expired, None);
        }
        let p = self.partial.take().unwrap_or_default();
        let done = if p.cells != cell.pdu_cells as u32 {
            Reassembly::Discarded { cause: "length", cells: p.cells, flow: p.flow }
        } else if p.merged {
            Reassembly::Discarded { cause: "crc", cells: p.cells, flow: p.flow }
        } else {
            Reassembly::Delivered { pdu: p.pdu, cells: p.cells, born: p.born }
        };
        (expired, Some(done))
    }

    /// Discards a partial PDU older than `timeout` (call from a timer).
    pub fn expire(&mut self, now: SimTime, timeout: SimDuration) -> Option<Reassembly> {
        match &self.partial {
            Some(p) if now.since(p.started) >= timeout => {
                let r = Reassembly::Discarded { cause: "timeout", cells: p.cells, flow: p.flow };
                self.partial = None;
                Some(r)
            }
            _ => None,
        }
    }

    /// When the partial PDU (if any) times out.
    pub fn deadline(&self, timeout: SimDuration) -> Option<SimTime> {
        self.partial.as_ref().map(|p| p.started.plus(timeout))
    }

    /// Cells held (for the conservation ledger), with their flow.
    pub fn held(&self) -> Option<(u32, u32)> {
        self.partial.as_ref().map(|p| (p.flow, p.cells))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_wire::aal5::Aal5Repr;
    use proptest::prelude::*;

    const LONG: SimDuration = SimDuration(u64::MAX / 4);

    fn outcomes_meta(sizes: &[usize], lost: &[bool]) -> Vec<(bool, u32)> {
        let mut r = Reassembler::default();
        let mut out = Vec::new();
        let mut k = 0;
        for (pdu, &b) in sizes.iter().enumerate() {
            for c in segment(SimTime::ZERO, 0, 1, pdu as u32, b) {
                let keep = !lost[k];
                k += 1;
                if keep {
                    if let (_, Some(o)) = r.on_cell(&c, SimTime::ZERO, LONG) {
                        out.push(match o {
                            Reassembly::Delivered { cells, .. } => (true, cells),
                            Reassembly::Discarded { cells, .. } => (false, cells),
                        });
                    }
                }
            }
        }
        out
    }

    fn outcomes_wire(sizes: &[usize], lost: &[bool]) -> Vec<(bool, u32)> {
        // Byte-exact: encode each PDU, cut it into 48-octet cells, drop the lost ones,
        // collect until a cell that ends a PDU (PTI bit), then decode length + CRC.
        let mut out = Vec::new();
        let mut collected: Vec<u8> = Vec::new();
        let mut ncells = 0u32;
        let mut k = 0;
        for (pdu, &b) in sizes.iter().enumerate() {
            let payload: Vec<u8> = (0..b).map(|i| (i * 7 + pdu * 13) as u8).collect();
            let bytes = Aal5Repr { uu: 0, cpi: 0, payload }.emit().unwrap();
            let n = bytes.len() / 48;
            for i in 0..n {
                let keep = !lost[k];
                k += 1;
                if !keep {
                    continue;
                }
                collected.extend_from_slice(&bytes[i * 48..(i + 1) * 48]);
                ncells += 1;
                if i + 1 == n {
                    out.push((Aal5Repr::parse(&collected).is_ok(), ncells));
                    collected.clear();
                    ncells = 0;
                }
            }
        }
        out
    }

    #[test]
    fn whole_pdus_are_delivered_and_a_lost_cell_discards_one() {
        let sizes = [100, 40, 200];
        let total: usize = sizes.iter().map(|&b| cells_for(b)).sum();
        assert_eq!(total, 3 + 1 + 5);
        let none = vec![false; total];
        assert_eq!(outcomes_meta(&sizes, &none), vec![(true, 3), (true, 1), (true, 5)]);
        let mut one = none.clone();
        one[1] = true; // middle cell of the first PDU
        assert_eq!(outcomes_meta(&sizes, &one), vec![(false, 2), (true, 1), (true, 5)]);
        let mut eop = none.clone();
        eop[2] = true; // end of the first PDU: merges with the second
        assert_eq!(outcomes_meta(&sizes, &eop), vec![(false, 3), (true, 5)]);
    }

    #[test]
    fn a_stream_without_end_of_pdu_is_discarded_at_the_largest_pdu() {
        let mut r = Reassembler::default();
        let plain = Cell::plain(SimTime::ZERO, 3, 50, 0);
        let mut out = Vec::new();
        for _ in 0..(3 * MAX_PDU_CELLS) {
            if let (_, Some(o)) = r.on_cell(&plain, SimTime::ZERO, LONG) {
                out.push(o);
            }
        }
        assert_eq!(out, vec![Reassembly::Discarded { cause: "length", cells: MAX_PDU_CELLS, flow: 3 }; 3]);
        assert_eq!(MAX_PDU_CELLS, 1366);
    }

    #[test]
    fn timeout_discards_a_stale_partial() {
        let mut r = Reassembler::default();
        let cells: Vec<Cell> = segment(SimTime(0), 0, 1, 0, 100).collect();
        let t = SimDuration(1_000);
        assert_eq!(r.on_cell(&cells[0], SimTime(0), t), (None, None));
        assert_eq!(r.deadline(t), Some(SimTime(1_000)));
        assert_eq!(r.expire(SimTime(1_000), t), Some(Reassembly::Discarded { cause: "timeout", cells: 1, flow: 0 }));
        assert_eq!(r.held(), None);
    }

    proptest! {
        #[test]
        fn metadata_and_wire_paths_agree(sizes in proptest::collection::vec(0usize..400, 1..12), seed: u64, p in 0.0f64..0.3) {
            let total: usize = sizes.iter().map(|&b| cells_for(b)).sum();
            let mut x = seed | 1;
            let lost: Vec<bool> = (0..total).map(|_| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                (x % 10_000) as f64 / 10_000.0 < p
            }).collect();
            prop_assert_eq!(outcomes_meta(&sizes, &lost), outcomes_wire(&sizes, &lost));
        }
    }
}
