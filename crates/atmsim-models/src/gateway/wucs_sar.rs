//! The WUCS SAR protocol of buddhikot92 (section 2, the SAR protocol of [Escobar
//! 1991] as the gateway's SAR protocol processor runs it; Table 1: a cell carries a
//! SAR sequence number, an F bit and a C bit), sans-IO.
//!
//! ```text
//!   MCHIP segment (octets) ──► Segmenter::segment ──► cells: seq, seq+1, …
//!                                                      F on the first, C on all but the last
//!   cells ──► Reassembler::on_cell(seq, F, C) ──► Stored / Discarded
//!                                                 + segments closed (whole, or in error)
//! ```
//!
//! A cell is 53 octets: 5 of ATM header, 3 of SAR header (sequence number, F and C
//! marks) and [`PAYLOAD_OCTETS`] = 45 of segment data — the 8 octets of overhead the
//! paper's section 6.1 strips ("approximately a 15 percent difference between the
//! offered load and the carried load": 45/53). The paper gives no bit layout of the SAR
//! header nor the width of the sequence number, so there is no byte format here to
//! check; the sequence number space is a parameter ([`DEFAULT_SEQ_MODULUS`]).
//!
//! Reassembly per connection keeps what the SPP's tables keep (section 5): the
//! expected sequence number, the start sequence number of the *next* segment (the
//! negotiated segment size after the current one's start, or the cell after a C = 0
//! cell), and the current segment's frame status. Rules:
//!
//! - a cell whose sequence number is not the expected one (cells missing or out of
//!   sequence) marks the segment being assembled in error, and it and the rest of that
//!   segment are discarded (not written to the reassembly buffer);
//! - an F cell starts a new segment; a segment still open then was cut (its last cell
//!   was lost) and is closed in error;
//! - a cell without F at or past the next segment's start sequence number means the
//!   next segment's F cell was lost: the open segment is closed in error and the new
//!   one is in error from its start;
//! - a cell with C = 0 closes its segment: whole ([`Segment::in_error`] false) or in
//!   error. Segments in error are handed on marked, for the MPP to drop (frame loss in
//!   the MPP).

/// Octets in a cell.
pub const CELL_OCTETS: u32 = 53;
/// Segment data per cell.
pub const PAYLOAD_OCTETS: u32 = 45;
/// ATM header (5) + SAR header (3).
pub const OVERHEAD_OCTETS: u32 = CELL_OCTETS - PAYLOAD_OCTETS;
/// Sequence numbers count modulo this (the paper gives no width): atmsim convention.
pub const DEFAULT_SEQ_MODULUS: u32 = 1 << 16;
/// Cell flag (in [`crate::cell::Cell::flags`]) of a WUCS F (first) cell; the last cell
/// of a segment (C = 0) carries [`crate::cell::FLAG_EOP`].
pub const FLAG_FIRST: u8 = 0x10;

/// The SAR fields of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SarCell {
    pub seq: u32,
    /// F: the first cell of a segment.
    pub first: bool,
    /// C: more cells of this segment follow.
    pub more: bool,
}

/// Cells needed for a segment of `octets` (45 per cell, at least one).
pub fn cells_for(octets: u32) -> u32 {
    octets.div_ceil(PAYLOAD_OCTETS).max(1)
}

/// Segmentation for one connection: numbers cells consecutively across segments.
#[derive(Clone, Debug)]
pub struct Segmenter {
    next: u32,
    modulus: u32,
}

impl Segmenter {
    pub fn new(modulus: u32) -> Segmenter {
        Segmenter { next: 0, modulus: modulus.max(2) }
    }

    /// The cells of one segment of `octets`.
    pub fn segment(&mut self, octets: u32) -> impl Iterator<Item = SarCell> {
        let n = cells_for(octets);
        let (start, m) = (self.next, self.modulus);
        self.next = ((u64::from(start) + u64::from(n)) % u64::from(m)) as u32;
        (0..n).map(move |k| SarCell { seq: ((u64::from(start) + u64::from(k)) % u64::from(m)) as u32, first: k == 0, more: k + 1 < n })
    }
}

/// A segment closed by the reassembler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of its first cell (as known: the expected start if F was lost).
    pub start: u32,
    /// Cells written to the reassembly buffer.
    pub stored: u32,
    /// Frame status: cells were missing or out of sequence.
    pub in_error: bool,
}

/// What happened to one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Written to the reassembly buffer.
    Stored,
    /// Its segment is in error: dropped.
    Discarded,
}

/// The outcome of one cell: its fate, a segment it cut short (closed in error), and
/// the segment it completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rx {
    pub fate: Fate,
    pub cut: Option<Segment>,
    pub closed: Option<Segment>,
}

/// Per-connection reassembly state (the SPP's tables for one connection).
#[derive(Clone, Debug)]
pub struct Reassembler {
    modulus: u32,
    /// Negotiated segment size, cells.
    seg_cells: u32,
    expected: Option<u32>,
    next_start: Option<u32>,
    open: Option<Segment>,
}

impl Reassembler {
    /// A connection whose segments are at most `seg_cells` cells.
    pub fn new(seg_cells: u32, modulus: u32) -> Reassembler {
        Reassembler { modulus: modulus.max(2), seg_cells: seg_cells.max(1), expected: None, next_start: None, open: None }
    }

    fn add(&self, a: u32, b: u32) -> u32 {
        ((u64::from(a) + u64::from(b)) % u64::from(self.modulus)) as u32
    }

    /// `seq` is at or past `mark` (within half the sequence space).
    fn at_or_past(&self, seq: u32, mark: u32) -> bool {
        let ahead = (u64::from(seq) + u64::from(self.modulus) - u64::from(mark)) % u64::from(self.modulus);
        ahead < u64::from(self.modulus / 2)
    }

    /// The expected sequence number (None before the first cell).
    pub fn expected(&self) -> Option<u32> {
        self.expected
    }

    /// The start sequence number of the next segment.
    pub fn next_start(&self) -> Option<u32> {
        self.next_start
    }

    /// The segment being assembled, if any.
    pub fn open(&self) -> Option<Segment> {
        self.open
    }

    /// One arriving cell.
    pub fn on_cell(&mut self, c: SarCell) -> Rx {
        let gap = self.expected.is_some_and(|e| e != c.seq);
        self.expected = Some(self.add(c.seq, 1));
        let mut cut = None;
        if c.first {
            cut = self.open.take().map(|s| Segment { in_error: true, ..s });
            self.open = Some(Segment { start: c.seq, stored: 0, in_error: false });
            self.next_start = Some(self.add(c.seq, self.seg_cells));
        } else {
            let past_next = self.next_start.is_some_and(|n| self.at_or_past(c.seq, n));
            if self.open.is_none() || past_next {
                // The F cell of this segment was lost.
                cut = self.open.take().map(|s| Segment { in_error: true, ..s });
                let start = match (past_next, self.next_start) {
                    (true, Some(n)) => n,
                    _ => c.seq,
                };
                self.open = Some(Segment { start, stored: 0, in_error: true });
                self.next_start = Some(self.add(start, self.seg_cells));
            } else if gap {
                if let Some(s) = self.open.as_mut() {
                    s.in_error = true;
                }
            }
        }
        let mut fate = Fate::Discarded;
        if let Some(s) = self.open.as_mut() {
            if !s.in_error {
                s.stored += 1;
                fate = Fate::Stored;
            }
        }
        let mut closed = None;
        if !c.more {
            closed = self.open.take();
            self.next_start = Some(self.add(c.seq, 1));
        }
        Rx { fate, cut, closed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(seq: u32, first: bool, more: bool) -> SarCell {
        SarCell { seq, first, more }
    }
    const STORED: Fate = Fate::Stored;
    const DROP: Fate = Fate::Discarded;

    #[test]
    fn overhead_is_eight_octets_and_segments_take_ceil_45() {
        assert_eq!(OVERHEAD_OCTETS, 8);
        // 85 cells of Table 3 carry 85 × 45 = 3,825 octets; one more octet needs 86.
        assert_eq!(cells_for(3825), 85);
        assert_eq!(cells_for(3826), 86);
        assert_eq!(cells_for(1), 1);
    }

    #[test]
    fn segmentation_numbers_cells_across_segments_and_marks_f_and_c() {
        let mut s = Segmenter::new(8);
        let a: Vec<_> = s.segment(100).collect(); // 3 cells
        assert_eq!(a, vec![cell(0, true, true), cell(1, false, true), cell(2, false, false)]);
        let b: Vec<_> = s.segment(45 * 6).collect(); // 6 cells, wrapping modulo 8
        assert_eq!(b.iter().map(|c| c.seq).collect::<Vec<_>>(), vec![3, 4, 5, 6, 7, 0]);
        assert!(b[0].first && !b[5].more && b[1..5].iter().all(|c| !c.first && c.more));
    }

    #[test]
    fn in_sequence_cells_reassemble_a_whole_segment() {
        let mut r = Reassembler::new(3, 256);
        assert_eq!(r.on_cell(cell(0, true, true)), Rx { fate: STORED, cut: None, closed: None });
        assert_eq!(r.on_cell(cell(1, false, true)).fate, STORED);
        let rx = r.on_cell(cell(2, false, false));
        assert_eq!(rx, Rx { fate: STORED, cut: None, closed: Some(Segment { start: 0, stored: 3, in_error: false }) });
        assert_eq!(r.open(), None);
    }

    #[test]
    fn a_missing_cell_marks_the_segment_in_error_and_drops_the_rest() {
        let mut r = Reassembler::new(4, 256);
        r.on_cell(cell(0, true, true));
        // Cell 1 is lost.
        assert_eq!(r.on_cell(cell(2, false, true)).fate, DROP);
        let rx = r.on_cell(cell(3, false, false));
        assert_eq!(rx.fate, DROP, "the rest of the segment is dropped even in sequence");
        assert_eq!(rx.closed, Some(Segment { start: 0, stored: 1, in_error: true }));
        // The next segment is whole again.
        r.on_cell(cell(4, true, true));
        assert_eq!(r.on_cell(cell(5, false, false)).closed, Some(Segment { start: 4, stored: 2, in_error: false }));
    }

    #[test]
    fn an_out_of_sequence_cell_marks_the_segment_in_error() {
        let mut r = Reassembler::new(4, 256);
        r.on_cell(cell(0, true, true));
        r.on_cell(cell(1, false, true));
        assert_eq!(r.on_cell(cell(3, false, true)).fate, DROP);
        assert_eq!(r.on_cell(cell(2, false, true)).fate, DROP);
        assert!(r.open().is_some_and(|s| s.in_error && s.stored == 2));
    }

    #[test]
    fn a_lost_last_cell_is_found_at_the_next_f_cell() {
        let mut r = Reassembler::new(3, 256);
        r.on_cell(cell(0, true, true));
        r.on_cell(cell(1, false, true));
        // Cell 2 (C = 0) is lost; cell 3 starts the next segment.
        let rx = r.on_cell(cell(3, true, true));
        assert_eq!(rx.fate, STORED);
        assert_eq!(rx.cut, Some(Segment { start: 0, stored: 2, in_error: true }));
    }

    #[test]
    fn a_lost_f_cell_is_found_by_the_start_sequence_number() {
        let mut r = Reassembler::new(3, 256);
        r.on_cell(cell(0, true, true));
        r.on_cell(cell(1, false, true));
        // Cells 2 (last of segment 0) and 3 (F of segment 1) are lost; cell 4 is past
        // the next segment's start (3).
        let rx = r.on_cell(cell(4, false, true));
        assert_eq!(rx.fate, DROP);
        assert_eq!(rx.cut, Some(Segment { start: 0, stored: 2, in_error: true }));
        let rx = r.on_cell(cell(5, false, false));
        assert_eq!(rx.closed, Some(Segment { start: 3, stored: 0, in_error: true }));
        // Segment 2 starts at 6 and is whole.
        r.on_cell(cell(6, true, true));
        r.on_cell(cell(7, false, true));
        assert_eq!(r.on_cell(cell(8, false, false)).closed, Some(Segment { start: 6, stored: 3, in_error: false }));
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut s = Segmenter::new(4);
        let mut r = Reassembler::new(3, 4);
        for _ in 0..5 {
            let cells: Vec<_> = s.segment(3 * 45).collect();
            let mut last = None;
            for c in cells {
                let rx = r.on_cell(c);
                assert_eq!(rx.fate, STORED, "{c:?}");
                last = rx.closed;
            }
            assert_eq!(last.map(|x| (x.stored, x.in_error)), Some((3, false)));
        }
    }
}
