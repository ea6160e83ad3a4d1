//! The input (receiving) buffers of a switch and the fabric that moves cells from them
//! to the output (transmitting) buffers (`buffering = "input-output"`).
//!
//! ```text
//!   pI ──► [receiving buffer pI] ──┐   fabric slot: each output grants one     ┌──► [transmitting buffer pJ] ──► pJ
//!          input_capacity cells    ├── input among those whose head cell has ──┤    capacity cells (or the
//!   ...                            │   a branch to it (arbitration); an input  │    shared memory)
//!   pK ──► [receiving buffer pK] ──┘   sends its head cell to every output     └──► ...
//!                                      that granted it
//! ```
//!
//! domingo95 (sections 2.2 and 5) describes the SynOptics LattisCell's ports as having a
//! *receiving* and a *transmitting* buffer, each with NMA counters of dropped cells
//! (2.4e-5 lost in port 4's receiving buffer, 2.3e-4 in its transmitting buffer in
//! experiment 3). The paper gives neither buffer's size nor the fabric's speed or
//! arbitration: all three are parameters.
//!
//! The fabric runs in slots of one cell at `speedup` × the fastest port's line rate.
//! In each slot every output accepts at most one cell and every input sends at most its
//! head-of-line cell (to all the outputs that granted it: a point-to-multipoint cell
//! leaves its input when every branch has been served, "fanout splitting"). A head cell
//! waiting for a busy output blocks the cells behind it (head-of-line blocking), which
//! is what a FIFO receiving buffer does. The output buffer takes what the fabric gives
//! it or drops it when full (no backpressure), so cells are lost at both buffers, as
//! NMA counts them. With `speedup` = 1 an output never receives faster than it sends,
//! and all loss moves to the receiving buffers (a pure input-queued switch).
//!
//! Arbitration among inputs contending for one output (`arbitration`): `round-robin`
//! (a pointer per output, moved past the winner: every contender is served within N
//! slots), `random` (uniform among the contenders, from the switch's own random
//! stream), `oldest-first` (the head cell that arrived first; ties in round-robin
//! order).
//!
//! *Every-other-slot restriction* (`vc_slot_gap`): in the DEC AN2, "a single source
//! cannot transmit back-to-back cells. It can transmit, at maximum, during every other
//! cell slot" (evans96), which "restricts any VC's maximum rate to 400 Mb/s (half the
//! capacity)". With a gap of g, a head cell whose VC (on its input) crossed the fabric
//! in slot s does not contend before slot s + g; meanwhile it blocks its input like
//! any head cell. g = 1 (the default) is no restriction; the AN2 is g = 2.
//!
//! The arbitration itself is sans-IO: [`InputStage::slot`] takes the routes and
//! returns the transfers of one slot; the switch schedules the slots and delivers.

use std::collections::VecDeque;

use atmsim_kernel::{SimTime, Stream};
use rand::Rng;

use crate::cell::Cell;

/// Names of the arbitration rules (the `arbitration` parameter's choices).
pub const ARBITRATION_NAMES: [&str; 3] = ["round-robin", "random", "oldest-first"];

/// How an output chooses among the inputs whose head cell wants it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arbitration {
    RoundRobin,
    Random,
    OldestFirst,
}

/// The most branches a point-to-multipoint route may have with input buffering (one
/// bit per pending branch).
pub const MAX_BRANCHES: usize = 64;

/// A cell in a receiving buffer.
#[derive(Clone, Debug)]
struct Waiting {
    route: u32,
    cell: Cell,
    /// Branches (bit b: branch b of the route) not yet sent to their output.
    pending: u64,
    arrived: SimTime,
}

/// One transfer of a fabric slot: branch `branch` of route `route` gets `cell`; `last`
/// when it was the cell's last pending branch (the cell left its input; the others are
/// copies).
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    pub input: u16,
    pub route: u32,
    pub branch: u16,
    pub cell: Cell,
    pub last: bool,
}

/// The receiving buffers and the arbiter.
#[derive(Clone, Debug)]
pub struct InputStage {
    queues: Vec<VecDeque<Waiting>>,
    capacity: Option<usize>,
    arbitration: Arbitration,
    rng: Stream,
    /// Per output: the input round-robin (and oldest-first ties) start from.
    pointer: Vec<u16>,
    /// Cells waiting in all receiving buffers.
    waiting: usize,
    /// Bit i (word i / 64): input i's buffer is not empty, so a slot visits only the
    /// inputs with cells, in input order.
    busy: Vec<u64>,
    /// Scratch: per output, the inputs contending for it in this slot.
    contenders: Vec<Vec<u16>>,
    touched: Vec<u16>,
    /// Smallest number of slots between two transfers of one VC (1: no restriction).
    vc_gap: u64,
    /// Per (input, VC label): the last slot a cell of it crossed (only with vc_gap > 1).
    last_slot: std::collections::HashMap<(u16, u32), u64>,
}

impl InputStage {
    /// `inputs` receiving buffers of `capacity` cells each (None: unlimited) in front of
    /// `outputs` outputs.
    pub fn new(inputs: usize, outputs: usize, capacity: Option<usize>, arbitration: Arbitration, rng: Stream) -> Self {
        InputStage {
            queues: vec![VecDeque::new(); inputs],
            capacity,
            arbitration,
            rng,
            pointer: vec![0; outputs],
            waiting: 0,
            busy: vec![0; inputs.div_ceil(64)],
            contenders: vec![Vec::new(); outputs],
            touched: Vec::new(),
            vc_gap: 1,
            last_slot: std::collections::HashMap::new(),
        }
    }

    /// The same stage where a VC crosses the fabric at most once in any `gap` slots
    /// (2: the AN2's every-other-slot restriction; 1 or 0: none).
    pub fn with_vc_gap(mut self, gap: u64) -> Self {
        self.vc_gap = gap.max(1);
        self
    }

    /// Whether no cell waits anywhere.
    pub fn is_empty(&self) -> bool {
        self.waiting == 0
    }

    /// Cells waiting in input `i`'s receiving buffer.
    pub fn len(&self, i: usize) -> usize {
        self.queues.get(i).map_or(0, VecDeque::len)
    }

    /// A cell of route `route` (with `branches` branches, at most [`MAX_BRANCHES`])
    /// arriving on input `i`: queued, or false when the buffer is full.
    pub fn admit(&mut self, i: usize, route: u32, branches: usize, cell: Cell, now: SimTime) -> bool {
        let Some(q) = self.queues.get_mut(i) else { return false };
        if self.capacity.is_some_and(|c| q.len() >= c) {
            return false;
        }
        let pending = if branches >= MAX_BRANCHES { u64::MAX } else { (1u64 << branches) - 1 };
        q.push_back(Waiting { route, cell, pending, arrived: now });
        self.waiting += 1;
        if let Some(w) = self.busy.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
        true
    }

    /// Every cell waiting (for the conservation ledger).
    pub fn for_each(&self, mut f: impl FnMut(&Cell)) {
        self.queues.iter().flatten().for_each(|w| f(&w.cell));
    }

    /// Fabric slot `now_slot` (slot numbers increase from call to call). `routes[r]` lists route r's branches (output port first). Each
    /// output with contenders grants one input; each granted head cell is sent to those
    /// outputs, and leaves its buffer once no branch is pending. Transfers come in
    /// output order.
    pub fn slot(&mut self, now_slot: u64, routes: &[Vec<(u16, u32, u16)>], out: &mut Vec<Transfer>) {
        out.clear();
        for &o in &self.touched {
            self.contenders[o as usize].clear();
        }
        self.touched.clear();
        for (word, &bits) in self.busy.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let Some(head) = self.queues.get(i).and_then(VecDeque::front) else { continue };
                if self.vc_gap > 1 && self.last_slot.get(&(i as u16, head.cell.vc)).is_some_and(|&s| now_slot < s + self.vc_gap) {
                    continue;
                }
                let Some(branches) = routes.get(head.route as usize) else { continue };
                for (b, br) in branches.iter().enumerate().take(MAX_BRANCHES) {
                    if head.pending & (1u64 << b) != 0 {
                        let o = br.0 as usize;
                        if self.contenders[o].is_empty() {
                            self.touched.push(o as u16);
                        }
                        self.contenders[o].push(i as u16);
                    }
                }
            }
        }
        self.touched.sort_unstable();
        let n_in = self.queues.len();
        for k in 0..self.touched.len() {
            let o = self.touched[k] as usize;
            let winner = self.pick(o);
            self.pointer[o] = ((winner as usize + 1) % n_in.max(1)) as u16;
            let w = winner as usize;
            let Some(head) = self.queues[w].front_mut() else { continue };
            let Some(branches) = routes.get(head.route as usize) else { continue };
            let Some(b) = branches.iter().take(MAX_BRANCHES).enumerate().position(|(b, br)| br.0 as usize == o && head.pending & (1u64 << b) != 0) else { continue };
            head.pending &= !(1u64 << b);
            let last = head.pending == 0;
            if self.vc_gap > 1 {
                self.last_slot.insert((winner, head.cell.vc), now_slot);
            }
            out.push(Transfer { input: winner, route: head.route, branch: b as u16, cell: head.cell, last });
            if last {
                self.queues[w].pop_front();
                self.waiting -= 1;
                if self.queues[w].is_empty() {
                    if let Some(b) = self.busy.get_mut(w / 64) {
                        *b &= !(1 << (w % 64));
                    }
                }
            }
        }
    }

    /// The input output `o` grants among its contenders (not empty, in input order).
    fn pick(&mut self, o: usize) -> u16 {
        let c = &self.contenders[o];
        let start = self.pointer[o];
        // Contenders in round-robin order from the pointer.
        let first = c.iter().position(|&i| i >= start).unwrap_or(0);
        match self.arbitration {
            Arbitration::RoundRobin => c[first],
            Arbitration::Random => c[self.rng.random_range(0..c.len())],
            Arbitration::OldestFirst => {
                let mut best = c[first];
                let mut best_t = self.queues[best as usize].front().map_or(SimTime(u64::MAX), |w| w.arrived);
                for k in 1..c.len() {
                    let i = c[(first + k) % c.len()];
                    let t = self.queues[i as usize].front().map_or(SimTime(u64::MAX), |w| w.arrived);
                    if t < best_t {
                        best = i;
                        best_t = t;
                    }
                }
                best
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_kernel::rng;

    fn cell(vc: u32) -> Cell {
        Cell::plain(SimTime(0), 0, vc, 0)
    }

    fn stage(arb: Arbitration, cap: Option<usize>) -> InputStage {
        InputStage::new(3, 3, cap, arb, rng::stream(1, 0, "sw", "arbitration"))
    }

    /// Routes: 0: input -> output 0; 1: -> output 1; 2: -> outputs 0 and 1.
    fn routes() -> Vec<Vec<(u16, u32, u16)>> {
        vec![vec![(0, 10, 0)], vec![(1, 11, 0)], vec![(0, 20, 0), (1, 21, 0)]]
    }

    #[test]
    fn capacity_drops_the_cell_that_does_not_fit() {
        let mut s = stage(Arbitration::RoundRobin, Some(2));
        assert!(s.admit(0, 0, 1, cell(1), SimTime(0)));
        assert!(s.admit(0, 0, 1, cell(2), SimTime(1)));
        assert!(!s.admit(0, 0, 1, cell(3), SimTime(2)));
        assert_eq!(s.len(0), 2);
        assert!(s.admit(1, 0, 1, cell(4), SimTime(2)), "each input has its own buffer");
    }

    /// A slot visits only inputs with cells (a bit per input, 64 to a word): with 130
    /// inputs, cells on inputs 3, 64, 67 and 129 (three words) for one output are
    /// served in round-robin turn, and an input that empties and fills again is seen.
    #[test]
    fn inputs_past_the_first_word_of_busy_bits_are_served() {
        let mut s = InputStage::new(130, 1, None, Arbitration::RoundRobin, rng::stream(1, 0, "sw", "arbitration"));
        for i in [129usize, 3, 67, 64] {
            assert!(s.admit(i, 0, 1, cell(i as u32), SimTime(0)));
        }
        let r = routes();
        let mut out = Vec::new();
        let mut order = Vec::new();
        for _ in 0..4 {
            s.slot(0, &r, &mut out);
            order.extend(out.iter().map(|t| t.input));
        }
        assert_eq!(order, vec![3, 64, 67, 129]);
        assert!(s.is_empty());
        s.slot(0, &r, &mut out);
        assert!(out.is_empty());
        assert!(s.admit(67, 0, 1, cell(1), SimTime(1)));
        s.slot(1, &r, &mut out);
        assert_eq!(out.iter().map(|t| t.input).collect::<Vec<_>>(), vec![67]);
    }

    #[test]
    fn round_robin_serves_contenders_in_turn() {
        let mut s = stage(Arbitration::RoundRobin, None);
        for k in 0..3 {
            for i in 0..3 {
                assert!(s.admit(i, 0, 1, cell(100 * i as u32 + k), SimTime(0)));
            }
        }
        let r = routes();
        let mut out = Vec::new();
        let mut order = Vec::new();
        for _ in 0..9 {
            s.slot(0, &r, &mut out);
            assert_eq!(out.len(), 1, "one output, one cell per slot");
            order.push(out[0].input);
        }
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
        assert!(s.is_empty());
    }

    #[test]
    fn every_other_slot_a_lone_vc_crosses_in_alternate_slots() {
        // One input, one VC, five cells waiting: with the AN2's gap of 2 it crosses in
        // slots 0, 2, 4, 6, 8 and nothing in the slots between.
        let mut s = stage(Arbitration::RoundRobin, None).with_vc_gap(2);
        for _ in 0..5 {
            assert!(s.admit(0, 0, 1, cell(7), SimTime(0)));
        }
        let r = routes();
        let mut out = Vec::new();
        let mut crossed = Vec::new();
        for k in 0..10 {
            s.slot(k, &r, &mut out);
            crossed.extend(out.iter().map(|_| k));
        }
        assert_eq!(crossed, vec![0, 2, 4, 6, 8]);
        // Without the restriction: back to back.
        let mut s = stage(Arbitration::RoundRobin, None);
        for _ in 0..5 {
            assert!(s.admit(0, 0, 1, cell(7), SimTime(0)));
        }
        let mut crossed = Vec::new();
        for k in 0..10 {
            s.slot(k, &r, &mut out);
            crossed.extend(out.iter().map(|_| k));
        }
        assert_eq!(crossed, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn every_other_slot_two_inputs_fill_the_output_in_round_robin() {
        // Two inputs with one VC each to output 0: they alternate and the output is busy
        // every slot, though neither VC crosses in two consecutive slots.
        let mut s = stage(Arbitration::RoundRobin, None).with_vc_gap(2);
        for _ in 0..4 {
            assert!(s.admit(0, 0, 1, cell(1), SimTime(0)));
            assert!(s.admit(1, 0, 1, cell(2), SimTime(0)));
        }
        let r = routes();
        let mut out = Vec::new();
        let mut order = Vec::new();
        for k in 0..8 {
            s.slot(k, &r, &mut out);
            assert_eq!(out.len(), 1, "slot {k}: one cell");
            order.push(out[0].input);
        }
        assert_eq!(order, vec![0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn every_other_slot_is_per_vc_on_an_input() {
        // One input with two VCs interleaved in its FIFO: VC 1, VC 2, VC 1, VC 2 — each
        // cell's VC did not cross in the slot before, so they go back to back; VC 1, VC 1
        // waits one slot (head-of-line).
        let mut s = stage(Arbitration::RoundRobin, None).with_vc_gap(2);
        for v in [1, 2, 1, 2, 2] {
            assert!(s.admit(0, 0, 1, cell(v), SimTime(0)));
        }
        let r = routes();
        let mut out = Vec::new();
        let mut got = Vec::new();
        for k in 0..7 {
            s.slot(k, &r, &mut out);
            got.push(out.first().map(|t| t.cell.vc));
        }
        assert_eq!(got, vec![Some(1), Some(2), Some(1), Some(2), None, Some(2), None]);
    }

    #[test]
    fn oldest_first_takes_the_earliest_head() {
        let mut s = stage(Arbitration::OldestFirst, None);
        s.admit(0, 0, 1, cell(1), SimTime(30));
        s.admit(1, 0, 1, cell(2), SimTime(10));
        s.admit(2, 0, 1, cell(3), SimTime(20));
        let r = routes();
        let mut out = Vec::new();
        let mut order = Vec::new();
        for _ in 0..3 {
            s.slot(0, &r, &mut out);
            order.push(out[0].input);
        }
        assert_eq!(order, vec![1, 2, 0]);
    }

    #[test]
    fn random_serves_every_contender_about_equally() {
        let mut s = stage(Arbitration::Random, None);
        let r = routes();
        let mut out = Vec::new();
        let mut wins = [0u32; 3];
        for _ in 0..3000 {
            for i in 0..3 {
                if s.len(i) == 0 {
                    s.admit(i, 0, 1, cell(1), SimTime(0));
                }
            }
            s.slot(0, &r, &mut out);
            wins[out[0].input as usize] += 1;
        }
        // Binomial(3000, 1/3): mean 1000, sd 25.8; 5 sd either side.
        for w in wins {
            assert!((871..=1129).contains(&w), "{wins:?}");
        }
    }

    #[test]
    fn different_outputs_transfer_in_the_same_slot_and_head_of_line_blocks() {
        let mut s = stage(Arbitration::RoundRobin, None);
        // Input 0: a cell for output 0, then one for output 1; input 1: one for output 0.
        s.admit(0, 0, 1, cell(1), SimTime(0));
        s.admit(0, 1, 1, cell(2), SimTime(0));
        s.admit(1, 0, 1, cell(3), SimTime(0));
        let r = routes();
        let mut out = Vec::new();
        s.slot(0, &r, &mut out);
        // Output 0 grants input 0; output 1 has no contender: input 0's second cell waits
        // behind its head (head-of-line blocking).
        assert_eq!(out.iter().map(|t| (t.input, t.cell.vc)).collect::<Vec<_>>(), vec![(0, 1)]);
        s.slot(0, &r, &mut out);
        // Now input 0's head wants output 1 and input 1's wants output 0: both move.
        let mut got: Vec<_> = out.iter().map(|t| (t.input, t.cell.vc)).collect();
        got.sort_unstable();
        assert_eq!(got, vec![(0, 2), (1, 3)]);
        assert!(s.is_empty());
    }

    #[test]
    fn multicast_head_leaves_after_its_last_branch() {
        let mut s = stage(Arbitration::RoundRobin, None);
        s.admit(0, 2, 2, cell(7), SimTime(0));
        s.admit(1, 0, 1, cell(8), SimTime(0));
        s.admit(1, 0, 1, cell(9), SimTime(0));
        let r = routes();
        let mut out = Vec::new();
        s.slot(0, &r, &mut out);
        // Output 0 grants input 0 (pointer 0), output 1 grants input 0 as well: the
        // multicast cell goes to both branches in one slot and leaves.
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].input, out[0].branch, out[0].last), (0, 0, false));
        assert_eq!((out[1].input, out[1].branch, out[1].last), (0, 1, true));
        assert_eq!(s.len(0), 0);
        // Next slot: output 0's pointer moved past input 0, input 1 is served.
        s.slot(0, &r, &mut out);
        assert_eq!((out[0].input, out[0].cell.vc), (1, 8));
    }

    #[test]
    fn multicast_branches_split_across_slots() {
        let mut s = stage(Arbitration::RoundRobin, None);
        let r = routes();
        let mut out = Vec::new();
        s.admit(0, 1, 1, cell(5), SimTime(0));
        s.slot(0, &r, &mut out); // output 1 grants input 0: its pointer moves to input 1
        s.admit(0, 2, 2, cell(7), SimTime(1));
        s.admit(1, 1, 1, cell(6), SimTime(1));
        s.slot(0, &r, &mut out);
        // Output 0 serves the multicast cell's first branch; output 1 prefers input 1.
        assert_eq!(out.iter().map(|t| (t.input, t.branch, t.last)).collect::<Vec<_>>(), vec![(0, 0, false), (1, 0, true)]);
        assert_eq!(s.len(0), 1, "the multicast cell waits for its second branch");
        s.slot(0, &r, &mut out);
        assert_eq!(out.iter().map(|t| (t.input, t.branch, t.last, t.cell.vc)).collect::<Vec<_>>(), vec![(0, 1, true, 7)]);
        assert!(s.is_empty());
    }
}
