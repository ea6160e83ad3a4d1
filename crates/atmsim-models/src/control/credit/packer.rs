//! The downstream node's credit chip (evans96): it watches the linecard's cell buffer;
//! each cell forwarded out of the buffer frees one space and creates credit for the
//! cell's VC; credit entries (VCI, credit 1–16) are packed, at most 24 per standard ATM
//! cell, and the cells are sent on up to four credit VCs toward the upstream nodes.
//!
//! ```text
//!   a cell of VC v leaves the buffer ─> on_departure(now, channel, v) ─> full cells
//!   the packing deadline passes ──────> on_deadline(now) ──────────────> flushed cells
//! ```
//!
//! Packing rules (the paper gives the counts, not the rules; these are atmsim's):
//! - each credit VC ("channel", 0 … 3) packs its own cell;
//! - a departure for VC v adds 1 to v's entry in the channel's open cell when it has one
//!   below 16; otherwise it needs a new entry: if the open cell already holds 24 entries
//!   that cell is sent first and the entry opens a new cell;
//! - the first entry of an open cell starts the packing delay `flush_after`; when it
//!   passes the cell is sent as it is ([`CreditPacker::deadline`], then
//!   [`CreditPacker::on_deadline`]). `flush_after = 0` sends one credit cell per
//!   departure, credit 1 (the packing delay is then only the caller's own order of
//!   events at the instant).
//! - the in-header variant (AN2 / DEC FLOWmaster) carries one entry per cell header:
//!   [`CreditPacker::with_entries_per_cell`]`(1)`; the same rules then let one entry
//!   gather up to 16 credits of its VC during the packing delay.

use atmsim_kernel::{SimDuration, SimTime};
use atmsim_wire::credit::{CreditCellRepr, CreditEntry};

/// At most four credit VCs (evans96: "up to four VCs can be used to carry credits").
pub const MAX_CHANNELS: usize = 4;
/// Entries per carrier: a credit cell's 24 (WAN variant) or a header's one (in-header).
pub const ENTRIES_IN_CELL: usize = atmsim_wire::credit::MAX_ENTRIES;
pub const ENTRIES_IN_HEADER: usize = 1;

#[derive(Clone, Debug, Default)]
struct Open {
    cell: CreditCellRepr,
    /// When the open cell must be sent (set by its first entry).
    due: Option<SimTime>,
}

/// Counts since the warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackerStats {
    /// Buffer spaces credited (cells that left the buffer).
    pub credited: u64,
    pub entries: u64,
    pub cells: u64,
}

/// The downstream credit packer.
#[derive(Clone, Debug)]
pub struct CreditPacker {
    flush_after: SimDuration,
    /// Entries one carrier holds (1 … 24).
    per_cell: usize,
    /// Credits one entry holds (1 … 16).
    max_credit: u8,
    open: Vec<Open>,
    pub stats: PackerStats,
}

impl CreditPacker {
    /// A packer for `channels` credit VCs (1 … 4) that sends an open cell `flush_after`
    /// after its first entry. Panics on 0 or more than 4 channels (callers validate
    /// their parameters first).
    pub fn new(channels: usize, flush_after: SimDuration) -> CreditPacker {
        assert!((1..=MAX_CHANNELS).contains(&channels), "1 to 4 credit channels");
        CreditPacker { flush_after, per_cell: ENTRIES_IN_CELL, max_credit: atmsim_wire::credit::MAX_CREDIT, open: vec![Open::default(); channels], stats: PackerStats::default() }
    }

    /// The same packer with at most `n` entries per carrier, clamped to 1 … 24
    /// ([`ENTRIES_IN_HEADER`] for the in-header variant).
    pub fn with_entries_per_cell(mut self, n: usize) -> CreditPacker {
        self.per_cell = n.clamp(1, ENTRIES_IN_CELL);
        self
    }

    /// The same packer with at most `n` credits per entry, clamped to 1 … 16.
    pub fn with_max_credit(mut self, n: u8) -> CreditPacker {
        self.max_credit = n.clamp(1, atmsim_wire::credit::MAX_CREDIT);
        self
    }

    pub fn channels(&self) -> usize {
        self.open.len()
    }

    /// A cell of VC `vci` (1 … 4095) left the buffer; its credit goes to `channel`.
    /// Returns the cell that had to be sent to make room (a full one), if any.
    pub fn on_departure(&mut self, now: SimTime, channel: usize, vci: u16) -> Option<CreditCellRepr> {
        self.stats.credited += 1;
        let flush_after = self.flush_after;
        let (per_cell, max_credit) = (self.per_cell, self.max_credit);
        let o = &mut self.open[channel];
        if o.cell.add_one_up_to(vci, max_credit) {
            return self.flush_zero(now, channel);
        }
        let sent = if o.cell.len() >= per_cell { Some(std::mem::take(o)) } else { None };
        let o = &mut self.open[channel];
        // In range by construction (the caller's VCI is validated, the credit is 1, the
        // cell is not full); an entry the format refuses is not counted.
        if o.cell.push(CreditEntry { vci, credit: 1 }).is_ok() {
            self.stats.entries += 1;
        }
        if o.due.is_none() {
            o.due = Some(now.plus(flush_after));
        }
        match sent {
            Some(full) => {
                self.stats.cells += 1;
                Some(full.cell)
            }
            None => self.flush_zero(now, channel),
        }
    }

    /// With no packing delay the open cell goes at once.
    fn flush_zero(&mut self, now: SimTime, channel: usize) -> Option<CreditCellRepr> {
        if self.flush_after == SimDuration(0) {
            return self.take_due(now, channel);
        }
        None
    }

    fn take_due(&mut self, now: SimTime, channel: usize) -> Option<CreditCellRepr> {
        let o = &mut self.open[channel];
        if o.due.is_some_and(|d| d <= now) {
            self.stats.cells += 1;
            return Some(std::mem::take(o).cell);
        }
        None
    }

    /// The earliest instant an open cell is due, if any is open.
    pub fn deadline(&self) -> Option<SimTime> {
        self.open.iter().filter_map(|o| o.due).min()
    }

    /// Sends every open cell due at or before `now`, as `(channel, cell)`.
    pub fn on_deadline(&mut self, now: SimTime) -> Vec<(usize, CreditCellRepr)> {
        (0..self.open.len()).filter_map(|c| self.take_due(now, c).map(|cell| (c, cell))).collect()
    }

    /// Credit created and not yet sent (spaces in open cells).
    pub fn pending_credit(&self) -> u64 {
        self.open.iter().flat_map(|o| o.cell.entries()).map(|e| u64::from(e.credit)).sum()
    }
}

/// Largest credit a piggybacked entry carries: the 4-bit GFC holds the credit itself,
/// 0 meaning "no credit" (atmsim's layout, `atmsim_wire::credit`).
pub const MAX_PIGGYBACK_CREDIT: u8 = 15;

/// Counts since the start, of [`PiggybackPacker`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PiggybackStats {
    /// Buffer spaces credited (cells that left the buffer).
    pub credited: u64,
    /// Entries that rode in the header of a cell going upstream.
    pub piggybacked: u64,
    /// Entries sent in a credit header of their own (the wait ran out, or the entry was
    /// full).
    pub own_cells: u64,
}

/// The downstream node's credit with piggybacking, as the AN2 does it: each VC's credit
/// gathers in an entry that rides in the header (GFC) of the next cell going upstream
/// on that VC (a bidirectional VCC keeps its VPI/VCI both ways); when no such cell comes
/// within `max_wait`, or the entry is full, the entry leaves in a credit header of its
/// own (the in-header variant's cell).
///
/// ```text
///   a cell of VC v leaves the buffer ─> on_departure(now, v) ─> an entry to send now?
///   a cell of VC v goes upstream ─────> on_reverse(now, v) ──> credit for its GFC?
///   the wait runs out ────────────────> on_deadline(now) ────> entries to send now
/// ```
#[derive(Clone, Debug)]
pub struct PiggybackPacker {
    max_wait: SimDuration,
    max_credit: u8,
    /// Per VC: credit gathered and when it must leave at the latest.
    pending: std::collections::BTreeMap<u16, (u8, SimTime)>,
    pub stats: PiggybackStats,
}

impl PiggybackPacker {
    /// A packer whose entries wait at most `max_wait` for a cell going upstream and hold
    /// at most `max_credit` credits (clamped to 1 … [`MAX_PIGGYBACK_CREDIT`]).
    pub fn new(max_wait: SimDuration, max_credit: u8) -> PiggybackPacker {
        PiggybackPacker { max_wait, max_credit: max_credit.clamp(1, MAX_PIGGYBACK_CREDIT), pending: std::collections::BTreeMap::new(), stats: PiggybackStats::default() }
    }

    /// A cell of VC `vci` left the buffer: one more credit for it. Returns the entry to
    /// send at once in a header of its own when it is full (or the wait is 0).
    pub fn on_departure(&mut self, now: SimTime, vci: u16) -> Option<CreditEntry> {
        self.stats.credited += 1;
        let due = now.plus(self.max_wait);
        let e = self.pending.entry(vci).or_insert((0, due));
        e.0 += 1;
        if e.0 >= self.max_credit || e.1 <= now {
            let credit = e.0;
            self.pending.remove(&vci);
            self.stats.own_cells += 1;
            return Some(CreditEntry { vci, credit });
        }
        None
    }

    /// A cell of VC `vci` passes on its way upstream: the credit its header carries (the
    /// VC's whole pending entry), if any.
    pub fn on_reverse(&mut self, vci: u16) -> Option<u8> {
        let (credit, _) = self.pending.remove(&vci)?;
        self.stats.piggybacked += 1;
        Some(credit)
    }

    /// The earliest instant an entry must leave on its own, if any waits.
    pub fn deadline(&self) -> Option<SimTime> {
        self.pending.values().map(|p| p.1).min()
    }

    /// The entries whose wait ran out by `now`, in VC order: each leaves in a header of
    /// its own.
    pub fn on_deadline(&mut self, now: SimTime) -> Vec<CreditEntry> {
        let due: Vec<u16> = self.pending.iter().filter(|(_, p)| p.1 <= now).map(|(&v, _)| v).collect();
        let mut out = Vec::with_capacity(due.len());
        for vci in due {
            if let Some((credit, _)) = self.pending.remove(&vci) {
                self.stats.own_cells += 1;
                out.push(CreditEntry { vci, credit });
            }
        }
        out
    }

    /// Credit created and not yet sent.
    pub fn pending_credit(&self) -> u64 {
        self.pending.values().map(|p| u64::from(p.0)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }
    fn e(vci: u16, credit: u8) -> CreditEntry {
        CreditEntry { vci, credit }
    }

    #[test]
    fn departures_merge_per_vc_until_the_packing_delay_passes() {
        let mut p = CreditPacker::new(1, SimDuration(10 * 1_000_000));
        assert_eq!(p.deadline(), None);
        assert_eq!(p.on_departure(t(0), 0, 40), None);
        assert_eq!(p.deadline(), Some(t(10)), "the first entry starts the packing delay");
        assert_eq!(p.on_departure(t(3), 0, 41), None);
        assert_eq!(p.on_departure(t(4), 0, 40), None);
        assert_eq!(p.deadline(), Some(t(10)), "later entries do not move it");
        assert_eq!(p.pending_credit(), 3);
        assert!(p.on_deadline(t(9)).is_empty(), "not yet due");
        let sent = p.on_deadline(t(10));
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, 0);
        assert_eq!(sent[0].1.entries().collect::<Vec<_>>(), vec![e(40, 2), e(41, 1)]);
        assert_eq!(p.deadline(), None);
        assert_eq!(p.pending_credit(), 0);
        assert_eq!(p.stats, PackerStats { credited: 3, entries: 2, cells: 1 });
    }

    #[test]
    fn an_entry_holds_at_most_16_credits() {
        let mut p = CreditPacker::new(1, SimDuration(100 * 1_000_000));
        for i in 0..17 {
            assert_eq!(p.on_departure(t(i), 0, 7), None);
        }
        let sent = p.on_deadline(t(100));
        assert_eq!(sent[0].1.entries().collect::<Vec<_>>(), vec![e(7, 16), e(7, 1)], "the 17th space opens a second entry");
    }

    #[test]
    fn smaller_entries_and_cells_by_parameter() {
        let mut p = CreditPacker::new(1, SimDuration(100 * 1_000_000)).with_max_credit(4).with_entries_per_cell(2);
        for i in 0..8 {
            assert_eq!(p.on_departure(t(i), 0, 7), None, "departure {i}");
        }
        let full = p.on_departure(t(8), 0, 7).expect("a third entry: the 2-entry cell goes");
        assert_eq!(full.entries().collect::<Vec<_>>(), vec![e(7, 4), e(7, 4)]);
        assert_eq!(p.on_deadline(t(108))[0].1.entries().collect::<Vec<_>>(), vec![e(7, 1)]);
        assert_eq!(CreditPacker::new(1, SimDuration(0)).with_max_credit(0).max_credit, 1, "clamped");
    }

    #[test]
    fn a_25th_entry_sends_the_full_cell_first() {
        let mut p = CreditPacker::new(1, SimDuration(100 * 1_000_000));
        for v in 1..=24u16 {
            assert_eq!(p.on_departure(t(1), 0, v), None);
        }
        // A full cell still takes credit for its own entries.
        assert_eq!(p.on_departure(t(2), 0, 5), None);
        let full = p.on_departure(t(3), 0, 25).expect("the full cell goes out");
        assert_eq!(full.len(), 24);
        assert_eq!(full.entry(4), e(5, 2));
        assert_eq!(full.entry(23), e(24, 1));
        assert_eq!(p.deadline(), Some(t(103)), "the new cell's own packing delay");
        assert_eq!(p.on_deadline(t(103))[0].1.entries().collect::<Vec<_>>(), vec![e(25, 1)]);
    }

    #[test]
    fn in_header_one_entry_per_carrier_gathers_its_vcs_credit() {
        let mut p = CreditPacker::new(1, SimDuration(10 * 1_000_000)).with_entries_per_cell(ENTRIES_IN_HEADER);
        assert_eq!(p.on_departure(t(0), 0, 40), None);
        assert_eq!(p.on_departure(t(1), 0, 40), None, "the open entry takes the VC's next credit");
        let first = p.on_departure(t(2), 0, 41).expect("another VC needs a new carrier: the open one goes");
        assert_eq!(first.entries().collect::<Vec<_>>(), vec![e(40, 2)]);
        assert_eq!(p.deadline(), Some(t(12)), "the new carrier's own packing delay");
        for i in 3..18 {
            assert_eq!(p.on_departure(t(i), 0, 41), None, "departure {i}");
        }
        let full = p.on_departure(t(18), 0, 41).expect("17 credits: the first carrier holds 16");
        assert_eq!(full.entries().collect::<Vec<_>>(), vec![e(41, 16)]);
        assert_eq!(p.on_deadline(t(28))[0].1.entries().collect::<Vec<_>>(), vec![e(41, 1)]);
        assert_eq!(p.stats, PackerStats { credited: 19, entries: 3, cells: 3 });
        assert_eq!(p.pending_credit(), 0);

        let mut z = CreditPacker::new(1, SimDuration(0)).with_entries_per_cell(0);
        assert_eq!(z.per_cell, 1, "clamped to one entry");
        assert_eq!(z.on_departure(t(0), 0, 5).map(|c| c.len()), Some(1));
    }

    #[test]
    fn channels_pack_separately_and_zero_delay_sends_each_departure() {
        let mut p = CreditPacker::new(2, SimDuration(5 * 1_000_000));
        p.on_departure(t(0), 0, 10);
        p.on_departure(t(2), 1, 10);
        assert_eq!(p.deadline(), Some(t(5)));
        let a = p.on_deadline(t(5));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].0, 0);
        assert_eq!(p.deadline(), Some(t(7)));
        let b = p.on_deadline(t(7));
        assert_eq!((b[0].0, b[0].1.entries().collect::<Vec<_>>()), (1, vec![e(10, 1)]));

        let mut z = CreditPacker::new(1, SimDuration(0));
        assert_eq!(z.on_departure(t(1), 0, 9).map(|c| c.entries().collect::<Vec<_>>()), Some(vec![e(9, 1)]));
        assert_eq!(z.on_departure(t(1), 0, 9).map(|c| c.entries().collect::<Vec<_>>()), Some(vec![e(9, 1)]));
        assert_eq!(z.deadline(), None);
        assert_eq!(z.stats.cells, 2);
    }
    #[test]
    fn piggyback_rides_on_the_next_upstream_cell_of_the_vc() {
        let mut p = PiggybackPacker::new(SimDuration(10 * 1_000_000), 16);
        assert_eq!(p.max_credit, MAX_PIGGYBACK_CREDIT, "the GFC holds 1 ... 15");
        assert_eq!(p.on_departure(t(0), 40), None);
        assert_eq!(p.deadline(), Some(t(10)), "the first credit starts the wait");
        assert_eq!(p.on_departure(t(2), 40), None);
        assert_eq!(p.on_departure(t(3), 41), None);
        assert_eq!(p.deadline(), Some(t(10)));
        assert_eq!(p.pending_credit(), 3);
        // A cell of another VC carries nothing for 40 or 41.
        assert_eq!(p.on_reverse(42), None);
        // VC 40's next upstream cell takes its two credits; 41 still waits.
        assert_eq!(p.on_reverse(40), Some(2));
        assert_eq!(p.on_reverse(40), None, "nothing left for the one after");
        assert_eq!(p.deadline(), Some(t(13)), "41's own wait");
        assert!(p.on_deadline(t(12)).is_empty());
        assert_eq!(p.on_deadline(t(13)), vec![e(41, 1)], "no cell of 41 came: its own header");
        assert_eq!(p.deadline(), None);
        assert_eq!(p.stats, PiggybackStats { credited: 3, piggybacked: 1, own_cells: 1 });
        // A new credit after a piggyback starts a new wait.
        assert_eq!(p.on_departure(t(20), 40), None);
        assert_eq!(p.deadline(), Some(t(30)));
    }

    #[test]
    fn a_full_piggyback_entry_or_no_wait_goes_at_once() {
        let mut p = PiggybackPacker::new(SimDuration(100 * 1_000_000), 4);
        for i in 0..3 {
            assert_eq!(p.on_departure(t(i), 7), None, "departure {i}");
        }
        assert_eq!(p.on_departure(t(3), 7), Some(e(7, 4)), "the fourth credit fills the entry");
        assert_eq!(p.deadline(), None);
        assert_eq!(p.on_reverse(7), None);
        let mut z = PiggybackPacker::new(SimDuration(0), 15);
        assert_eq!(z.on_departure(t(1), 9), Some(e(9, 1)), "no wait: every credit leaves in its own header");
        assert_eq!(z.pending_credit(), 0);
        assert_eq!(PiggybackPacker::new(SimDuration(0), 0).max_credit, 1, "clamped");
    }
}
