//! The upstream node's credit gate as a part other kinds embed: the [`CreditLinecard`]
//! (entry FIFO, per-VC credit and queues) on the cell clock of a line rate. The
//! `credit_sender` kind is this gate alone; a `switch` output port with `credit_out` and
//! a `host` with `credit_window` put it in front of their transmitter, so a
//! credit-controlled hop needs no extra components.
//!
//! ```text
//!   cell to send ──> enqueue ──┐
//!   credit cell ───> on_credit ┴─> [ CreditLinecard ] ── on_slot(k) ──> the cell of slot k
//!                                      ^ wake(now): the slot to run next, if idle
//! ```
//!
//! Sans-IO: the gate says when its next cell cycle is due ([`CreditGate::wake`],
//! [`CreditGate::on_slot`]); the owner schedules it and sends what a slot returns. Slot
//! k begins at `k · 424 / rate` (the kernel's exact cell instants); the clock runs only
//! while the linecard has something to do.

use atmsim_kernel::ByFlow;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, Rate, SimTime};
use atmsim_wire::credit::CreditEntry;

use super::linecard::CreditLinecard;
use crate::cell::{book_in_flight, Cell};

/// The gate's probes (the `credit_sender` kind's names, at the gated port or host).
pub const PROBES: [ProbeSpec; 5] = [
    ProbeSpec { name: "credit_sent_cells", unit: "cells", kind: ProbeKind::Counter, help: "data cells sent with credit (count)" },
    ProbeSpec { name: "credit_blocked_slots", unit: "slots", kind: ProbeKind::Counter, help: "cell cycles in which cells waited and no VC held credit (count)" },
    ProbeSpec { name: "credit_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "credit cells received (count)" },
    ProbeSpec { name: "credit_entries", unit: "entries", kind: ProbeKind::Counter, help: "credit entries handed to the linecard (count)" },
    ProbeSpec { name: "credit_fifo_max", unit: "entries", kind: ProbeKind::Gauge, help: "largest number of entries waiting in the FIFO (value)" },
];

/// A linecard that sends a VC's cell only while it holds credit, on a cell clock.
#[derive(Clone, Debug)]
pub struct CreditGate {
    rate: Rate,
    card: CreditLinecard<Cell>,
    /// The next slot's index while the clock runs.
    next_slot: Option<u64>,
    /// Credit cells consumed, per flow (the ledger books them delivered here).
    credit_by_flow: ByFlow<u64>,
    /// Counters at the warm-up: sent, blocked, credit cells, entries.
    base: (u64, u64, u64, u64),
}

impl CreditGate {
    /// A gate on the cell clock of `rate` sending on `vcis` (VPI 0), each starting with
    /// `window` credits.
    pub fn new(rate: Rate, vcis: &[u16], window: u64) -> CreditGate {
        CreditGate { rate, card: CreditLinecard::new(vcis, window), next_slot: None, credit_by_flow: ByFlow::new(), base: (0, 0, 0, 0) }
    }

    /// Queues a data cell (VPI 0: its VCI names the VC); `Err(cell)` for a VC the gate
    /// does not send on.
    pub fn enqueue(&mut self, cell: Cell) -> Result<(), Cell> {
        let vci = if cell.vc >> 16 == 0 { (cell.vc & 0xffff) as u16 } else { 0 };
        self.card.enqueue(vci, cell)
    }

    /// Cells of VC `vci` waiting for credit.
    pub fn queued(&self, vci: u16) -> usize {
        self.card.queued(vci)
    }

    /// Cells waiting for credit, all VCs.
    pub fn queued_total(&self) -> usize {
        self.card.cells().count()
    }

    /// A credit cell of flow `flow` arrived with `entries`: they join the FIFO.
    pub fn on_credit(&mut self, flow: u32, entries: impl IntoIterator<Item = CreditEntry>) {
        *self.credit_by_flow.entry(flow) += 1;
        self.card.on_credit_cell(entries);
    }

    /// Entries that arrive in no credit cell of their own (piggybacked in a header).
    pub fn on_entry(&mut self, e: CreditEntry) {
        self.card.on_credit_cell(std::iter::once(e));
    }

    /// If the clock is stopped and a cycle has work, starts it: the instant the owner
    /// must run [`CreditGate::on_slot`] at.
    pub fn wake(&mut self, now: SimTime) -> Option<SimTime> {
        if self.next_slot.is_none() && self.card.busy() {
            let k = self.rate.slot_after(now);
            self.next_slot = Some(k);
            return Some(SimTime(0).plus(self.rate.cell_train_offset(k)));
        }
        None
    }

    /// The cell cycle due now: the cell it sends (if any) and the instant of the next
    /// cycle (None: the clock stops). A call with the clock stopped does nothing.
    pub fn on_slot(&mut self) -> (Option<Cell>, Option<SimTime>) {
        let Some(k) = self.next_slot else { return (None, None) };
        let cell = self.card.slot().map(|(_, c)| c);
        if self.card.busy() {
            self.next_slot = Some(k + 1);
            (cell, Some(SimTime(0).plus(self.rate.cell_train_offset(k + 1))))
        } else {
            self.next_slot = None;
            (cell, None)
        }
    }

    /// Credit a VC holds now.
    pub fn credit(&self, vci: u16) -> Option<u64> {
        self.card.credit(vci)
    }

    /// Credit cells (and piggybacked entries) received since the start.
    pub fn credit_cells(&self) -> u64 {
        self.card.stats.credit_cells
    }

    pub fn reset_stats(&mut self) {
        let s = &self.card.stats;
        self.base = (s.sent, s.blocked_cycles, s.credit_cells, s.entries);
        self.card.stats.fifo_max = self.card.fifo_len();
    }

    /// The [`PROBES`] at `path`; `piggybacked`: entries since the warm-up that came in
    /// no credit cell of their own (not counted as credit cells).
    pub fn report(&self, path: &str, piggybacked: u64, out: &mut Report) {
        let s = &self.card.stats;
        out.push(path, "credit_sent_cells", "count", (s.sent - self.base.0) as f64, "cells");
        out.push(path, "credit_blocked_slots", "count", (s.blocked_cycles - self.base.1) as f64, "slots");
        out.push(path, "credit_rx_cells", "count", (s.credit_cells - self.base.2 - piggybacked) as f64, "cells");
        out.push(path, "credit_entries", "count", (s.entries - self.base.3) as f64, "entries");
        out.push(path, "credit_fifo_max", "value", s.fifo_max as f64, "entries");
    }

    /// Cells waiting for credit are in flight; credit cells consumed are delivered.
    pub fn ledger(&self, l: &mut Ledger) {
        self.card.cells().for_each(|c| book_in_flight(l, c));
        for (f, &n) in self.credit_by_flow.iter() {
            l.add_delivered(f, n);
        }
    }
}

impl crate::part::Part for CreditGate {
    fn reset_stats(&mut self, _now: atmsim_kernel::SimTime) {
        CreditGate::reset_stats(self)
    }
    /// The gate's rows, with no piggybacked entries (a host's adapter takes none).
    fn report(&self, at: &crate::part::At<'_>, out: &mut Report) {
        CreditGate::report(self, at.path, 0, out)
    }
    fn ledger(&self, l: &mut Ledger) {
        CreditGate::ledger(self, l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(vc: u32, seq: u32) -> Cell {
        Cell::plain(SimTime::ZERO, 0, vc, seq)
    }

    #[test]
    fn the_clock_runs_on_exact_slots_only_while_there_is_work() {
        let oc3 = Rate::from_bps(149.76e6).unwrap();
        let mut g = CreditGate::new(oc3, &[100], 2);
        assert_eq!(g.wake(SimTime::ZERO), None, "nothing to do: no clock");
        g.enqueue(cell(100, 0)).unwrap();
        g.enqueue(cell(100, 1)).unwrap();
        g.enqueue(cell(100, 2)).unwrap();
        assert_eq!(g.enqueue(cell(101, 9)).map_err(|c| c.seq), Err(9), "not a gated VC");
        // A cell queued 1 ps after slot 0 waits for slot 1.
        let t1 = SimTime(0).plus(oc3.cell_train_offset(1));
        assert_eq!(g.wake(SimTime(1)), Some(t1));
        assert_eq!(g.wake(SimTime(1)), None, "already running");
        let t2 = SimTime(0).plus(oc3.cell_train_offset(2));
        let (c, next) = g.on_slot();
        assert_eq!((c.map(|c| c.seq), next), (Some(0), Some(t2)));
        let (c, next) = g.on_slot();
        assert_eq!((c.map(|c| c.seq), next), (Some(1), None), "window of 2 spent: the clock stops");
        assert_eq!((g.credit(100), g.queued(100), g.queued_total()), (Some(0), 1, 1));
        assert_eq!(g.on_slot().0.map(|c| c.seq), None, "stopped: a stale call does nothing");
        // A credit cell restarts the clock; its entry is handed over in the cycle it sends in.
        g.on_credit(3, [CreditEntry { vci: 100, credit: 1 }]);
        let (t9, t10) = (SimTime(0).plus(oc3.cell_train_offset(9)), SimTime(0).plus(oc3.cell_train_offset(10)));
        assert_eq!(g.wake(t9), Some(t10), "a wake on a slot's instant takes the next slot");
        let (c, next) = g.on_slot();
        assert_eq!((c.map(|c| c.seq), next), (Some(2), None));
        let mut l = Ledger::default();
        g.ledger(&mut l);
        assert_eq!((l.delivered.get(3).copied(), l.in_flight.iter().sum::<u64>()), (Some(1), 0), "the credit cell is booked delivered under its flow; nothing waits");
    }
}
