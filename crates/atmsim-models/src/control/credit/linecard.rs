//! The upstream node (evans96): credit cells arriving from the downstream nodes are
//! recognised by their VC, their entries are extracted into a FIFO ("to prevent loss of
//! credits if multiple cells arrive within a short period of time"), and one entry per
//! cell cycle is handed to the linecard, which sends a VC's cell only while it holds
//! credit for it.
//!
//! ```text
//!   credit cell ──> on_credit_cell(entries) ──> entry FIFO
//!   cell cycle ───> slot() : 1. one entry from the FIFO to its VC's credit count
//!                            2. the next VC (round robin) with a queued cell and
//!                               credit > 0 sends one cell, credit − 1
//!   cell to send ─> enqueue(vci, cell)
//! ```
//!
//! Each VC starts with `initial` credits: the buffer spaces the downstream node holds
//! for it (atmsim convention: the credit window is a per-VC parameter; the paper gives
//! none). Round robin among eligible VCs is atmsim's choice; the paper does not say how
//! the linecard picks among VCs.

use std::collections::{BTreeMap, VecDeque};

use atmsim_wire::credit::CreditEntry;

#[derive(Clone, Debug)]
struct Vc<T> {
    credit: u64,
    queue: VecDeque<T>,
}

/// Counts since the warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinecardStats {
    pub credit_cells: u64,
    pub entries: u64,
    /// Entries naming a VC the linecard does not send on (counted, ignored).
    pub unknown_vc: u64,
    pub sent: u64,
    /// Cycles in which some VC had a cell queued but none could send for want of credit.
    pub blocked_cycles: u64,
    pub fifo_max: usize,
}

/// The upstream node's entry FIFO and the linecard's per-VC credit and queues.
#[derive(Clone, Debug)]
pub struct CreditLinecard<T> {
    fifo: VecDeque<CreditEntry>,
    vcs: BTreeMap<u16, Vc<T>>,
    /// The round-robin position: the VCI after which the next search starts.
    last: u16,
    pub stats: LinecardStats,
}

impl<T> CreditLinecard<T> {
    /// A linecard sending on `vcs`, each with `initial` credits.
    pub fn new(vcs: &[u16], initial: u64) -> CreditLinecard<T> {
        let vcs = vcs.iter().map(|&v| (v, Vc { credit: initial, queue: VecDeque::new() })).collect();
        CreditLinecard { fifo: VecDeque::new(), vcs, last: 0, stats: LinecardStats::default() }
    }

    /// A credit cell's entries arrive; they wait in the FIFO.
    pub fn on_credit_cell(&mut self, entries: impl IntoIterator<Item = CreditEntry>) {
        self.stats.credit_cells += 1;
        self.fifo.extend(entries);
        self.stats.fifo_max = self.stats.fifo_max.max(self.fifo.len());
    }

    /// Queues a cell to send on `vci`; `Err(cell)` (the cell is given back) if the linecard does
    /// not send on that VC.
    pub fn enqueue(&mut self, vci: u16, cell: T) -> Result<(), T> {
        match self.vcs.get_mut(&vci) {
            Some(vc) => {
                vc.queue.push_back(cell);
                Ok(())
            }
            None => Err(cell),
        }
    }

    /// One cell cycle: hands one entry to the linecard, then sends at most one cell.
    pub fn slot(&mut self) -> Option<(u16, T)> {
        if let Some(e) = self.fifo.pop_front() {
            self.stats.entries += 1;
            match self.vcs.get_mut(&e.vci) {
                Some(vc) => vc.credit += u64::from(e.credit),
                None => self.stats.unknown_vc += 1,
            }
        }
        let pick = self.vcs.range(self.last.saturating_add(1)..).chain(self.vcs.range(..=self.last)).find(|(_, vc)| vc.credit > 0 && !vc.queue.is_empty()).map(|(&v, _)| v);
        let Some(v) = pick else {
            if self.vcs.values().any(|vc| !vc.queue.is_empty()) {
                self.stats.blocked_cycles += 1;
            }
            return None;
        };
        self.last = v;
        let vc = self.vcs.get_mut(&v)?;
        vc.credit -= 1;
        self.stats.sent += 1;
        vc.queue.pop_front().map(|c| (v, c))
    }

    /// True when a cycle could do something (an entry waits, or a cell could be sent):
    /// a caller may stop its cell clock when this is false.
    pub fn busy(&self) -> bool {
        !self.fifo.is_empty() || self.vcs.values().any(|vc| vc.credit > 0 && !vc.queue.is_empty())
    }

    pub fn credit(&self, vci: u16) -> Option<u64> {
        self.vcs.get(&vci).map(|vc| vc.credit)
    }

    pub fn queued(&self, vci: u16) -> usize {
        self.vcs.get(&vci).map_or(0, |vc| vc.queue.len())
    }

    pub fn fifo_len(&self) -> usize {
        self.fifo.len()
    }

    /// Every queued cell (for the ledger).
    pub fn cells(&self) -> impl Iterator<Item = &T> {
        self.vcs.values().flat_map(|vc| vc.queue.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(vci: u16, credit: u8) -> CreditEntry {
        CreditEntry { vci, credit }
    }

    #[test]
    fn a_vc_sends_only_while_it_holds_credit() {
        let mut l = CreditLinecard::new(&[50], 2);
        for seq in 0..4 {
            l.enqueue(50, seq).unwrap();
        }
        assert_eq!(l.slot(), Some((50, 0)));
        assert_eq!(l.slot(), Some((50, 1)));
        assert_eq!(l.credit(50), Some(0));
        assert!(!l.busy());
        assert_eq!(l.slot(), None, "no credit: the cell waits");
        assert_eq!(l.stats.blocked_cycles, 1);
        l.on_credit_cell([e(50, 1)]);
        assert!(l.busy());
        assert_eq!(l.slot(), Some((50, 2)), "the entry reaches the linecard in the cycle it sends in");
        assert_eq!(l.slot(), None);
        assert_eq!(l.queued(50), 1);
        assert_eq!(l.enqueue(51, 9), Err(9), "not a VC of this linecard");
    }

    #[test]
    fn one_entry_per_cycle_from_the_fifo() {
        let mut l: CreditLinecard<u32> = CreditLinecard::new(&[10, 11], 0);
        l.on_credit_cell([e(10, 3), e(11, 16), e(99, 4)]);
        l.on_credit_cell([e(10, 1)]);
        assert_eq!(l.fifo_len(), 4);
        assert_eq!(l.stats.fifo_max, 4);
        assert_eq!(l.slot(), None);
        assert_eq!((l.credit(10), l.credit(11)), (Some(3), Some(0)));
        assert_eq!(l.slot(), None);
        assert_eq!(l.credit(11), Some(16));
        assert_eq!(l.slot(), None);
        assert_eq!(l.stats.unknown_vc, 1);
        assert_eq!(l.slot(), None);
        assert_eq!(l.credit(10), Some(4));
        assert_eq!(l.fifo_len(), 0);
        assert_eq!(l.stats.entries, 4);
    }

    #[test]
    fn eligible_vcs_take_turns() {
        let mut l = CreditLinecard::new(&[3, 7, 9], 10);
        for i in 0..3 {
            l.enqueue(3, 30 + i).unwrap();
            l.enqueue(9, 90 + i).unwrap();
        }
        let order: Vec<_> = std::iter::from_fn(|| l.slot()).collect();
        assert_eq!(order, vec![(3, 30), (9, 90), (3, 31), (9, 91), (3, 32), (9, 92)]);
        assert_eq!((l.credit(3), l.credit(7), l.credit(9)), (Some(7), Some(10), Some(7)));
    }
}
