//! AAL5 SAR as parts a composite model reuses (the host today; the gateway, ABR end
//! systems and credit endpoints next): [`Segmenter`] holds PDUs for the segmentation
//! delay and cuts the due ones into cells; [`VcReassembly`] reassembles per VC with its
//! counters, its probe rows and its ledger contribution.
//!
//! ```text
//!   PDUs ──► Segmenter: wait sar_delay, FIFO ──► cells (last one end-of-PDU)
//!   cells ──► VcReassembly: one aal5::Reassembler per VC ──► whole PDUs
//!                                            (discards booked: length/crc/timeout)
//! ```
//!
//! Both are sans-IO: [`Segmenter::push`] / [`Segmenter::pop`] and
//! [`VcReassembly::on_cell`] take the time they are asked at and touch no kernel. The
//! segmenter also owns its timer ([`crate::timer::Timer`]): [`Segmenter::enqueue`] arms
//! it when the queue was empty, and its handler checks [`Segmenter::fire`], takes the
//! due PDUs with [`Segmenter::pop`], then calls [`Segmenter::rearm`] for the next one
//! (after the due PDUs' cells have left, so ties keep their order).

use atmsim_kernel::ByFlow;
use std::collections::VecDeque;

use atmsim_kernel::probe::Report;
use atmsim_kernel::{Ledger, SimDuration, SimTime};

use super::aal5::{segment_cells, Reassembler, Reassembly};
use crate::cell::Cell;
use crate::kind::Cx;
use crate::payload::Payload;
use crate::timer::Timer;

/// One PDU handed to the segmenter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pdu {
    /// Birth time of its cells.
    pub born: SimTime,
    /// VC label its cells carry.
    pub vc: u32,
    /// Its PDU number (`Cell::seq` of every cell): [`Segmenter::push`] numbers the PDUs
    /// it is given 0, 1, 2, ... (wrapping), replacing what the caller put here.
    pub seq: u32,
    /// Its length in cells (`Cell::pdu_cells`).
    pub cells: u16,
    /// What the PDU's last cell carries (an IP packet's headers); the composite
    /// inserts it into the run's store as it emits that cell.
    pub last_payload: Option<Payload>,
    /// Which adapter queue its cells enter (the host: the index of a pacer); `None`:
    /// straight to the interface.
    pub pacer: Option<u16>,
}

impl Pdu {
    /// Its cells, of flow `flow`: the last one marked end-of-PDU. The payload is not
    /// attached (see [`Pdu::last_payload`]).
    pub fn cells(&self, flow: u32) -> impl Iterator<Item = Cell> {
        segment_cells(self.born, flow, self.vc, self.seq, self.cells)
    }
}

/// AAL5 segmentation: PDUs wait `delay` (the SAR time per PDU), in order, then leave as
/// cells of one flow.
#[derive(Clone, Debug)]
pub struct Segmenter {
    flow: u32,
    delay: SimDuration,
    queue: VecDeque<(SimTime, Pdu)>,
    timer: Timer,
    generated: u64,
    /// The number the next PDU pushed gets.
    next_seq: u32,
}

impl Segmenter {
    /// A segmenter whose cells are of flow `flow`, taking `delay` per PDU.
    pub fn new(flow: u32, delay: SimDuration) -> Segmenter {
        Segmenter { flow, delay, queue: VecDeque::new(), timer: Timer::default(), generated: 0, next_seq: 0 }
    }

    /// The flow of the cells it makes.
    pub fn flow(&self) -> u32 {
        self.flow
    }

    /// Queues `pdu`, handed over at `now`, under the next PDU number: it is due at
    /// `now + delay`. Returns that instant when the queue was empty (a timer is to be
    /// set), else `None` (one is already pending for an earlier PDU).
    pub fn push(&mut self, now: SimTime, mut pdu: Pdu) -> Option<SimTime> {
        pdu.seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let at = now.plus(self.delay);
        let was_empty = self.queue.is_empty();
        self.queue.push_back((at, pdu));
        was_empty.then_some(at)
    }

    /// Takes the head PDU if it is due at `now` (its cells count as generated).
    pub fn pop(&mut self, now: SimTime) -> Option<Pdu> {
        match self.queue.front() {
            Some(&(at, _)) if at <= now => {}
            _ => return None,
        }
        let (_, pdu) = self.queue.pop_front()?;
        self.generated += pdu.cells as u64;
        Some(pdu)
    }

    /// When the head PDU is due, if any.
    pub fn next_due(&self) -> Option<SimTime> {
        self.queue.front().map(|&(at, _)| at)
    }

    /// Queues `pdu` now and arms the timer (tag `tag`) if the queue was empty.
    pub fn enqueue(&mut self, pdu: Pdu, tag: u32, ctx: &mut Cx<'_>) {
        if let Some(at) = self.push(ctx.now, pdu) {
            self.timer.arm(at, tag, ctx);
        }
    }

    /// The timer fired at `now`: true if it is the armed event (take the due PDUs with
    /// [`Segmenter::pop`], then call [`Segmenter::rearm`]).
    pub fn fire(&mut self, now: SimTime) -> bool {
        self.timer.fire(now)
    }

    /// Arms the timer (tag `tag`) for the head PDU, if any is left.
    pub fn rearm(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        if let Some(at) = self.next_due() {
            self.timer.arm(at, tag, ctx);
        }
    }

    /// PDUs waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no PDU waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Cells cut so far (the whole run).
    pub fn generated(&self) -> u64 {
        self.generated
    }

    /// Books the cells it generated (waiting PDUs are not cells yet).
    pub fn ledger(&self, l: &mut Ledger) {
        l.add_generated(self.flow, self.generated);
    }
}

/// A PDU that arrived whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Whole {
    /// Its PDU number.
    pub pdu: u32,
    /// Its length in cells.
    pub cells: u32,
    /// Its first cell's birth.
    pub born: SimTime,
}

/// What AAL5 reassembly reports (a host's, and a sink's with `frames = true`).
pub const PROBES: [atmsim_kernel::ProbeSpec; 2] = [
    atmsim_kernel::ProbeSpec { name: "aal5_rx_pdus", unit: "1", kind: atmsim_kernel::ProbeKind::Counter, help: "AAL5 PDUs reassembled whole (count)" },
    atmsim_kernel::ProbeSpec { name: "aal5_drop_pdus", unit: "1", kind: atmsim_kernel::ProbeKind::Counter, help: "AAL5 PDUs discarded (count; statistics length, crc, timeout by cause)" },
];

/// The AAL5 discard causes, in the order of the probe rows.
pub const DROP_CAUSES: [&str; 3] = ["length", "crc", "timeout"];

/// Per-VC AAL5 reassembly with its counters: whole PDUs out; discarded PDUs booked by
/// cause (their cells dropped for the ledger); partial PDUs' cells in flight; cells of
/// whole PDUs delivered, by the flow of the cell that completes them.
#[derive(Clone, Debug)]
pub struct VcReassembly {
    timeout: SimDuration,
    vcs: Vec<(u32, Reassembler)>,
    // whole-run books
    delivered_by_flow: ByFlow<u64>,
    dropped: Vec<(&'static str, u32, u64)>,
    // statistics (since the last reset)
    pdus_rx: u64,
    pdus_drop: [u64; 3],
}

impl VcReassembly {
    /// Reassembly discarding a partial PDU older than `timeout`.
    pub fn new(timeout: SimDuration) -> VcReassembly {
        VcReassembly { timeout, vcs: Vec::new(), delivered_by_flow: ByFlow::new(), dropped: Vec::new(), pdus_rx: 0, pdus_drop: [0; 3] }
    }

    /// Takes one cell arriving at `now`; returns the PDU it completes, if it does and
    /// the PDU is whole. A discard (this cell's PDU, or an older partial PDU found timed
    /// out) is only booked.
    pub fn on_cell(&mut self, cell: &Cell, now: SimTime) -> Option<Whole> {
        let idx = match self.vcs.iter().position(|(vc, _)| *vc == cell.vc) {
            Some(i) => i,
            None => {
                self.vcs.push((cell.vc, Reassembler::default()));
                self.vcs.len() - 1
            }
        };
        let (expired, done) = self.vcs[idx].1.on_cell(cell, now, self.timeout);
        let mut whole = None;
        for r in [expired, done].into_iter().flatten() {
            match r {
                Reassembly::Delivered { pdu, cells, born } => {
                    *self.delivered_by_flow.entry(cell.flow) += cells as u64;
                    self.pdus_rx += 1;
                    whole = Some(Whole { pdu, cells, born });
                }
                Reassembly::Discarded { cause, cells, flow } => {
                    let k = DROP_CAUSES.iter().position(|&c| c == cause).unwrap_or(2);
                    self.pdus_drop[k] += 1;
                    match self.dropped.iter_mut().find(|e| e.0 == cause && e.1 == flow) {
                        Some(e) => e.2 += cells as u64,
                        None => self.dropped.push((cause, flow, cells as u64)),
                    }
                }
            }
        }
        whole
    }

    /// PDUs reassembled whole since the last reset.
    pub fn pdus_rx(&self) -> u64 {
        self.pdus_rx
    }

    /// PDUs discarded since the last reset, by cause ([`DROP_CAUSES`]).
    pub fn pdus_dropped(&self) -> [u64; 3] {
        self.pdus_drop
    }

    /// Starts the statistics afresh (the ledger's books are whole-run).
    pub fn reset_stats(&mut self) {
        self.pdus_rx = 0;
        self.pdus_drop = [0; 3];
    }

    /// Rows `aal5_rx_pdus` (count) and `aal5_drop_pdus` (count, then by cause).
    pub fn report(&self, path: &str, out: &mut Report) {
        out.push(path, "aal5_rx_pdus", "count", self.pdus_rx as f64, "1");
        out.push(path, "aal5_drop_pdus", "count", self.pdus_drop.iter().sum::<u64>() as f64, "1");
        for (i, cause) in DROP_CAUSES.iter().enumerate() {
            out.push(path, "aal5_drop_pdus", cause, self.pdus_drop[i] as f64, "1");
        }
    }

    /// Books discarded cells (`aal5_length`, `aal5_crc`, `aal5_timeout`), the cells of
    /// partial PDUs (in flight) and the cells delivered.
    pub fn ledger(&self, l: &mut Ledger) {
        for &(cause, flow, n) in &self.dropped {
            l.add_dropped(if cause == "length" { "aal5_length" } else if cause == "crc" { "aal5_crc" } else { "aal5_timeout" }, flow, n);
        }
        for (_, r) in &self.vcs {
            if let Some((flow, n)) = r.held() {
                l.add_in_flight(flow, n as u64);
            }
        }
        for (f, &n) in self.delivered_by_flow.iter() {
            l.add_delivered(f, n);
        }
    }
}

impl crate::part::Part for VcReassembly {
    fn reset_stats(&mut self, _now: SimTime) {
        VcReassembly::reset_stats(self)
    }
    fn report(&self, at: &crate::part::At<'_>, out: &mut Report) {
        VcReassembly::report(self, at.path, out)
    }
    fn ledger(&self, l: &mut Ledger) {
        VcReassembly::ledger(self, l)
    }
}

impl crate::part::Part for Segmenter {
    fn ledger(&self, l: &mut Ledger) {
        Segmenter::ledger(self, l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::FLAG_EOP;

    fn pdu(seq: u32, cells: u16) -> Pdu {
        Pdu { born: SimTime(0), vc: 7, seq, cells, last_payload: None, pacer: None }
    }

    #[test]
    fn segmenter_holds_pdus_for_the_delay_in_order() {
        let mut s = Segmenter::new(3, SimDuration(100));
        // The first PDU into an empty queue asks for a timer; the next ones do not.
        assert_eq!(s.push(SimTime(0), pdu(1, 2)), Some(SimTime(100)));
        assert_eq!(s.push(SimTime(0), pdu(2, 1)), None);
        assert_eq!(s.push(SimTime(50), pdu(3, 3)), None);
        assert_eq!(s.pop(SimTime(99)), None);
        assert_eq!(s.next_due(), Some(SimTime(100)));
        // The segmenter numbers the PDUs in the order it gets them.
        assert_eq!(s.pop(SimTime(100)).map(|p| (p.seq, p.cells)), Some((0, 2)));
        assert_eq!(s.pop(SimTime(100)).map(|p| (p.seq, p.cells)), Some((1, 1)));
        assert_eq!(s.pop(SimTime(100)), None);
        assert_eq!(s.next_due(), Some(SimTime(150)));
        assert_eq!(s.generated(), 3);
        assert_eq!(s.pop(SimTime(200)).map(|p| (p.seq, p.cells)), Some((2, 3)));
        assert!(s.is_empty());
        assert_eq!(s.push(SimTime(300), pdu(4, 1)), Some(SimTime(400)));
        let mut l = Ledger::default();
        s.ledger(&mut l);
        assert_eq!(l.generated, vec![0, 0, 0, 6]);
    }

    #[test]
    fn a_pdu_leaves_as_its_cells() {
        let cells: Vec<Cell> = pdu(9, 3).cells(4).collect();
        assert_eq!(cells.len(), 3);
        assert!(cells.iter().all(|c| c.flow == 4 && c.vc == 7 && c.seq == 9 && c.pdu_cells == 3 && c.payload.is_none()));
        assert_eq!(cells.iter().map(|c| c.flags & FLAG_EOP != 0).collect::<Vec<_>>(), vec![false, false, true]);
    }

    #[test]
    fn reassembly_delivers_books_and_discards_per_vc() {
        let mut r = VcReassembly::new(SimDuration(1_000));
        // Two VCs interleaved: each PDU completes on its own VC.
        let a: Vec<Cell> = pdu(1, 2).cells(0).collect();
        let b: Vec<Cell> = Pdu { vc: 8, ..pdu(5, 2) }.cells(1).collect();
        assert_eq!(r.on_cell(&a[0], SimTime(0)), None);
        assert_eq!(r.on_cell(&b[0], SimTime(1)), None);
        assert_eq!(r.on_cell(&a[1], SimTime(2)), Some(Whole { pdu: 1, cells: 2, born: SimTime(0) }));
        // b's first cell is left alone for longer than the timeout: the next cell on
        // its VC finds it expired (a timeout discard) and starts a PDU of its own,
        // which is one cell where two were announced (a length discard).
        assert_eq!(r.on_cell(&b[1], SimTime(2_000)), None);
        assert_eq!(r.pdus_rx(), 1);
        assert_eq!(r.pdus_dropped(), [1, 0, 1]);
        // A partial PDU is in flight for the ledger.
        assert_eq!(r.on_cell(&a[0], SimTime(3_000)), None);
        let mut l = Ledger::default();
        r.ledger(&mut l);
        assert_eq!(l.delivered, vec![2]);
        assert_eq!(l.in_flight, vec![1]);
        assert_eq!(l.dropped.get(&("aal5_timeout", 1)), Some(&1));
        assert_eq!(l.dropped.get(&("aal5_length", 1)), Some(&1));
        let mut out = Report::default();
        r.report("h", &mut out);
        let rows: Vec<(String, f64)> = out.rows.iter().map(|x| (format!("{}/{}", x.probe, x.statistic), x.value)).collect();
        assert_eq!(rows, vec![("aal5_rx_pdus/count".into(), 1.0), ("aal5_drop_pdus/count".into(), 2.0), ("aal5_drop_pdus/length".into(), 1.0), ("aal5_drop_pdus/crc".into(), 0.0), ("aal5_drop_pdus/timeout".into(), 1.0)]);
        r.reset_stats();
        assert_eq!((r.pdus_rx(), r.pdus_dropped()), (0, [0; 3]));
    }
}
