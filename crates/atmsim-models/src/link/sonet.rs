//! SONET framing of ATM cells: the cell slots of an STS-3c or STS-12c line, from the
//! byte positions of its frame (ITU-T G.707 / ANSI T1.105 frame; cell mapping of ITU-T
//! I.432.2 §4 and ATM Forum UNI 3.1 §2.1.2).
//!
//! ```text
//!   frame (125 µs) = 9 rows × 90·N columns, sent row by row, one byte per column
//!   row:  [ TOH: 3·N cols | POH: 1 col | fixed stuff: N/3 − 1 cols | payload: the rest ]
//!          STS-3c  (N = 3):   9 + 1 + 0 =  10 overhead,  260 payload bytes per row
//!          STS-12c (N = 12): 36 + 1 + 3 =  40 overhead, 1040 payload bytes per row
//! ```
//!
//! Cells fill the payload bytes back to back, crossing row and frame boundaries (I.432:
//! "the ATM cell boundaries are aligned with the byte boundaries"; a cell may cross the
//! C-4-Xc boundary). So cell slots follow the payload rate (149.76 / 599.04 Mb/s) but
//! the overhead bytes insert a gap at every row start.
//!
//! *Assumptions (documented in docs/models/transmitter.md).* The SPE pointer is fixed
//! at offset 0 (evans96: "pointers within the line overhead are always known and never
//! change"), so the SPE occupies the same columns of every row — the path overhead
//! column right after the transport overhead, then the fixed-stuff columns (G.707
//! §10.1.2.2: columns 2 to X of a VC-4-Xc) — and the overhead of each row is one
//! contiguous run of bytes. The cell delineation phase puts the first byte of cell 0 on
//! the first payload byte of row 0 of frame 0, at the frame clock's origin.
//!
//! *Arithmetic.* With R = 90·N bytes per row, O overhead and P = R − O payload bytes
//! per row, F = 9·R bytes per frame and T = 125,000,000 ps per frame:
//! payload byte p sits at stream position pos(p) = ⌊p/P⌋·R + O + (p mod P); stream byte
//! b starts at ⌈b·T / F⌉ ps. Cell slot k holds payload bytes 53k … 53k+52, so it starts
//! at ⌈pos(53k)·T/F⌉ and ends at ⌈(pos(53k+52) + 1)·T/F⌉ (the start of the next byte).
//! Everything is integer (u128), so no drift: 9·P bytes per frame give exactly
//! 9·P·8·8000 b/s of cells (149.76 / 599.04 Mb/s) and the slot pattern repeats every 53
//! frames (9·P/53 cells per frame: 44 9/53 for STS-3c, 176 32/53 for STS-12c).

/// One frame: 125 µs (8000 frames/s), in picoseconds.
pub const FRAME_PS: u64 = 125_000_000;
/// Rows per frame.
pub const ROWS: u64 = 9;
const CELL_BYTES: u64 = 53;

/// The cell-slot grid of an STS-Nc line whose frame clock starts at time zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SonetGrid {
    /// N of STS-Nc.
    n: u64,
    /// Bytes per row (90·N).
    row: u64,
    /// Overhead bytes at the start of each row (TOH + POH + fixed stuff).
    overhead: u64,
    /// Payload bytes per row.
    payload: u64,
}

impl SonetGrid {
    /// STS-Nc for a concatenation level N that is 3 or a multiple of 3 (STS-3c, -12c,
    /// -48c …); None otherwise.
    pub fn sts_nc(n: u64) -> Option<Self> {
        if n == 0 || !n.is_multiple_of(3) {
            return None;
        }
        let row = 90 * n;
        let overhead = 3 * n + 1 + (n / 3 - 1);
        Some(SonetGrid { n, row, overhead, payload: row - overhead })
    }

    /// The grid of a physical-layer preset that is one concatenated SONET payload
    /// ("OC-3c", "OC-12c"); None for the others (DS-3, TAXI, four OC-3c in an OC-12).
    pub fn for_phy(name: &str) -> Option<Self> {
        match name.to_ascii_uppercase().as_str() {
            "OC-3C" => Self::sts_nc(3),
            "OC-12C" => Self::sts_nc(12),
            _ => None,
        }
    }

    /// N of STS-Nc.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Overhead and payload bytes at the start and in the rest of each row.
    pub fn row_bytes(&self) -> (u64, u64) {
        (self.overhead, self.payload)
    }

    /// Bytes per frame.
    fn frame_bytes(&self) -> u64 {
        ROWS * self.row
    }

    /// Bit rate of the payload (cells), b/s: 9 rows × P bytes × 8 bits × 8000 frames/s.
    pub fn payload_bps(&self) -> u64 {
        ROWS * self.payload * 8 * 8000
    }

    /// Line bit rate, b/s.
    pub fn line_bps(&self) -> u64 {
        self.frame_bytes() * 8 * 8000
    }

    /// Stream position of payload byte `p`.
    fn position(&self, p: u64) -> u64 {
        (p / self.payload) * self.row + self.overhead + p % self.payload
    }

    /// When stream byte `b` starts, ps since the frame clock's origin.
    fn byte_start(&self, b: u64) -> u64 {
        let num = b as u128 * FRAME_PS as u128;
        let f = self.frame_bytes() as u128;
        num.div_ceil(f) as u64
    }

    /// When cell slot `k` starts (its first byte), ps since the origin.
    pub fn slot_start(&self, k: u64) -> u64 {
        self.byte_start(self.position(CELL_BYTES * k))
    }

    /// When cell slot `k` ends (its last byte is complete), ps since the origin.
    pub fn slot_end(&self, k: u64) -> u64 {
        self.byte_start(self.position(CELL_BYTES * k + CELL_BYTES - 1) + 1)
    }

    /// The first slot k for which `at(k) >= t` (`at` increasing in k): a guess from the
    /// mean cell rate, then exact steps.
    fn first(&self, t: u64, at: impl Fn(&Self, u64) -> u64) -> u64 {
        // Cells per ps = 9·P / (53·T).
        let mut k = (t as u128 * (ROWS * self.payload) as u128 / (CELL_BYTES as u128 * FRAME_PS as u128)) as u64;
        while at(self, k) < t {
            k += 1;
        }
        while k > 0 && at(self, k - 1) >= t {
            k -= 1;
        }
        k
    }

    /// The first slot starting at or after `t` (ps since the origin).
    pub fn first_starting_at_or_after(&self, t: u64) -> u64 {
        self.first(t, Self::slot_start)
    }

    /// The first slot ending at or after `t` (the slot a cell ending at `t` is in, on
    /// this grid).
    pub fn first_ending_at_or_after(&self, t: u64) -> u64 {
        self.first(t, Self::slot_end)
    }

    /// How many slots ended by `t` (inclusive).
    pub fn slots_ended_by(&self, t: u64) -> u64 {
        self.first(t.saturating_add(1), Self::slot_end)
    }
}

/// A transmitter's clock on a SONET grid: each cell takes the first free slot that
/// starts no earlier than the cell is ready (a cell arriving while an idle cell is on
/// the line waits for the next slot); slots nobody takes carry idle cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramedClock {
    grid: SonetGrid,
    /// The first slot not yet taken.
    next: u64,
}

impl FramedClock {
    pub fn new(grid: SonetGrid) -> Self {
        FramedClock { grid, next: 0 }
    }

    pub fn grid(&self) -> &SonetGrid {
        &self.grid
    }

    /// Takes the slot for a cell ready at `now` (ps): returns (start, end) of it.
    pub fn take(&mut self, now: u64) -> (u64, u64) {
        let k = self.grid.first_starting_at_or_after(now).max(self.next);
        self.next = k + 1;
        (self.grid.slot_start(k), self.grid.slot_end(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sts3c() -> SonetGrid {
        SonetGrid::sts_nc(3).unwrap()
    }
    fn sts12c() -> SonetGrid {
        SonetGrid::sts_nc(12).unwrap()
    }

    #[test]
    fn rows_and_rates_are_g707s() {
        // STS-3c: 9 TOH + 1 POH columns, 260 payload; STS-12c: 36 + 1 + 3 fixed stuff, 1040.
        assert_eq!(sts3c().row_bytes(), (10, 260));
        assert_eq!(sts12c().row_bytes(), (40, 1040));
        assert_eq!((sts3c().line_bps(), sts3c().payload_bps()), (155_520_000, 149_760_000));
        assert_eq!((sts12c().line_bps(), sts12c().payload_bps()), (622_080_000, 599_040_000));
        assert_eq!(SonetGrid::for_phy("OC-12c"), Some(sts12c()));
        assert_eq!(SonetGrid::for_phy("DS-3"), None);
        assert_eq!(SonetGrid::sts_nc(4), None);
    }

    #[test]
    fn first_slots_by_hand() {
        // STS-3c: 9·270 = 2430 bytes per frame, one every 125e6/2430 = 51,440.3 ps.
        let g = sts3c();
        // Slot 0: payload bytes 0..52 = stream bytes 10..62; starts ⌈10·125e6/2430⌉.
        assert_eq!(g.slot_start(0), (10u64 * FRAME_PS).div_ceil(2430));
        assert_eq!(g.slot_end(0), (63u64 * FRAME_PS).div_ceil(2430));
        // Slot 4: payload bytes 212..264 cross the row end (260): stream 222..269, then
        // row 1's 10 overhead bytes, then stream 280..284.
        assert_eq!(g.slot_start(4), (222u64 * FRAME_PS).div_ceil(2430));
        assert_eq!(g.slot_end(4), (285u64 * FRAME_PS).div_ceil(2430));
        // Inside a row, slots follow each other without a gap.
        assert_eq!(g.slot_end(0), g.slot_start(1));
        // Across the row boundary, the gap is the 10 overhead bytes.
        assert_eq!(g.slot_end(3), g.slot_start(4));
        let span4 = g.slot_end(4) - g.slot_start(4);
        let span3 = g.slot_end(3) - g.slot_start(3);
        assert!(span4 > span3, "{span4} {span3}");
    }

    #[test]
    fn cells_per_frame_and_the_53_frame_period() {
        for (g, per_53_frames) in [(sts3c(), 9 * 260), (sts12c(), 9 * 1040)] {
            let frame = |f: u64| f * FRAME_PS;
            // Cells ending within the first frame, then in 53 frames: exactly 9·P.
            let in_53 = g.slots_ended_by(frame(53));
            assert_eq!(in_53, per_53_frames, "N = {}", g.n());
            // The pattern repeats every 53 frames: slot k + 9·P is slot k shifted by 53 T.
            for k in [0, 1, 7, 100, 999] {
                assert_eq!(g.slot_start(k + per_53_frames), g.slot_start(k) + frame(53));
                assert_eq!(g.slot_end(k + per_53_frames), g.slot_end(k) + frame(53));
            }
            // Each frame carries ⌊9·P/53⌋ or ⌈9·P/53⌉ cells.
            for f in 0..53 {
                let n = g.slots_ended_by(frame(f + 1)) - g.slots_ended_by(frame(f));
                let lo = 9 * g.payload / 53;
                assert!(n == lo || n == lo + 1, "N {} frame {f}: {n}", g.n());
            }
        }
        // STS-3c: 44 or 45 cells per frame; STS-12c: 176 or 177.
        assert_eq!(9 * 260 / 53, 44);
        assert_eq!(9 * 1040 / 53, 176);
    }

    #[test]
    fn long_run_rate_is_the_payload_rate_exactly() {
        // 8000 frames (1 s) hold 8000·9·P bytes = 149.76e6 / 8 bytes: slots ended by 1 s
        // are ⌊bytes / 53⌋ (the last one complete), i.e. 353,207 for STS-3c.
        assert_eq!(sts3c().slots_ended_by(8000 * FRAME_PS), 149_760_000 / 424);
        assert_eq!(sts12c().slots_ended_by(8000 * FRAME_PS), 599_040_000 / 424);
    }

    #[test]
    fn gaps_fall_at_row_starts_only() {
        // Over 53 frames, the gap between consecutive slots is zero except where a row's
        // overhead falls inside the cell or between cells: 9·53 rows, one stretch each.
        for g in [sts3c(), sts12c()] {
            let (o, p) = g.row_bytes();
            let slots = 9 * p; // 53 frames
            let byte_ps = FRAME_PS as f64 / (9 * 90 * g.n()) as f64;
            let mut stretched = 0;
            for k in 0..slots {
                let span = g.slot_end(k) - g.slot_start(k);
                let gap = g.slot_start(k + 1) - g.slot_end(k);
                let extra = span as f64 - 53.0 * byte_ps + gap as f64;
                if extra > byte_ps / 2.0 {
                    stretched += 1;
                    // One row's overhead exactly (within the ps rounding).
                    assert!((extra - o as f64 * byte_ps).abs() < 2.0, "k {k} extra {extra}");
                }
            }
            assert_eq!(stretched, 9 * 53, "N {}", g.n());
        }
    }

    #[test]
    fn first_slot_lookups_invert_the_grid() {
        let g = sts12c();
        for k in [0u64, 1, 5, 19, 20, 176, 177, 5000] {
            let (s, e) = (g.slot_start(k), g.slot_end(k));
            assert_eq!(g.first_starting_at_or_after(s), k);
            assert_eq!(g.first_starting_at_or_after(s + 1), k + 1);
            assert_eq!(g.first_ending_at_or_after(e), k);
            assert_eq!(g.first_ending_at_or_after(e - 1), k);
            assert_eq!(g.first_ending_at_or_after(e + 1), k + 1);
            assert_eq!(g.slots_ended_by(e), k + 1);
            assert_eq!(g.slots_ended_by(e - 1), k);
        }
    }

    #[test]
    fn framed_clock_waits_for_the_next_slot_and_never_reuses_one() {
        let g = sts3c();
        let mut c = FramedClock::new(g);
        // A cell ready at 0 takes slot 0 (it starts after the first row's overhead).
        assert_eq!(c.take(0), (g.slot_start(0), g.slot_end(0)));
        // Ready before slot 0 ended: slot 1, not slot 0 again.
        assert_eq!(c.take(1), (g.slot_start(1), g.slot_end(1)));
        // Ready 1 ps after slot 5 started: slot 6 (slots 2..5 carry idle cells).
        assert_eq!(c.take(g.slot_start(5) + 1), (g.slot_start(6), g.slot_end(6)));
        // Back to back: the next one follows.
        assert_eq!(c.take(g.slot_end(6)), (g.slot_start(7), g.slot_end(7)));
    }
}
