//! The i/m controller's slot-by-slot behaviour, apart from the kernel: per-VC queues
//! and tokens, the round robin, and evans96's pacing measurement (cells and bursts per
//! VC per measurement interval).

use atmsim_kernel::ByFlow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use atmsim_kernel::probe::Tally;
use atmsim_kernel::{Rate, SimTime};

use super::adapt::{adapt_window, Adapt, AdaptState, Window};
use crate::cell::Cell;
use crate::control::measure::MeasurementChip;

/// One VC's queue, tokens and books.
#[derive(Clone, Debug)]
pub(super) struct VcState {
    pub(super) label: u32,
    pub(super) window: Option<Window>,
    /// Cells waiting, with their arrival instants.
    pub(super) queue: VecDeque<(SimTime, Cell)>,
    /// The slots at which the tokens now out come back (m slots after each was used,
    /// with the m in force then), in increasing order.
    back: VecDeque<u64>,
    /// In the round-robin ring, or stopped (waiting for a token); neither when idle.
    in_ring: bool,
    stopped: bool,
    pub(super) sent: u64,
    pub(super) tx: u64,
    pub(super) stops: u64,
    pub(super) drops: u64,
    pub(super) wait: Tally,
    /// Bursts this VC took part in (evans96's count, see [`Controller::slot`]).
    pub(super) bursts: u64,
    /// This measurement interval's cells and bursts.
    pub(super) interval_cells: u64,
    pub(super) interval_bursts: u64,
    /// The adaptive shaper's state, for VCs it adapts.
    pub(super) adapt: Option<AdaptState>,
}

impl VcState {
    fn new(label: u32, window: Option<Window>) -> Self {
        VcState {
            label,
            window,
            queue: VecDeque::new(),
            back: VecDeque::new(),
            in_ring: false,
            stopped: false,
            sent: 0,
            tx: 0,
            stops: 0,
            drops: 0,
            wait: Tally::default(),
            bursts: 0,
            interval_cells: 0,
            interval_bursts: 0,
            adapt: None,
        }
    }
}

/// What became of an arriving cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Queued; `Some(k)`: a decision must now be taken at slot `k`.
    Queued(Option<u64>),
    /// Dropped: its VC's queue was full (booked for the ledger).
    Dropped,
}

/// The controller, apart from the kernel: what arrives, what each slot sends.
#[derive(Clone, Debug)]
pub struct Controller {
    pub(super) rate: Rate,
    pub(super) vcs: Vec<VcState>,
    by_label: HashMap<u32, usize>,
    /// The window of VCs not configured in advance (None: they are not paced).
    default_window: Option<Window>,
    vc_capacity: Option<usize>,
    ring: VecDeque<usize>,
    /// Stopped VCs by the slot their oldest token comes back.
    stopped: BinaryHeap<Reverse<(u64, usize)>>,
    /// The cell being sent.
    pub(super) on_line: Option<Cell>,
    /// The slot of the next decision, if one is pending.
    pub armed: Option<u64>,
    waiting: usize,
    pub(super) drops_by_flow: ByFlow<u64>,
    /// The last slot decided.
    last_decided: Option<u64>,
    /// The adaptive shaper's settings, and the first slot of the next measurement
    /// interval.
    adapt: Option<Adapt>,
    pub(super) next_adapt: u64,
    /// evans96's pacing measurement on the controller's output, keyed by VC index: the
    /// burst count (one idle slot ends a burst here, as the adaptive shaper has always
    /// counted them) and the stopped flag.
    pub(super) meas: MeasurementChip,
}

impl Controller {
    /// `configured`: VCs paced with their own window (or, None, not paced);
    /// `default_window`: for every other VC.
    pub fn new(rate: Rate, configured: &[(u32, Option<Window>)], default_window: Option<Window>, vc_capacity: Option<usize>) -> Self {
        let mut c = Controller {
            rate,
            vcs: Vec::new(),
            by_label: HashMap::new(),
            default_window,
            vc_capacity,
            ring: VecDeque::new(),
            stopped: BinaryHeap::new(),
            on_line: None,
            armed: None,
            waiting: 0,
            drops_by_flow: ByFlow::new(),
            last_decided: None,
            adapt: None,
            next_adapt: u64::MAX,
            meas: MeasurementChip::new(1, usize::MAX),
        };
        for &(label, w) in configured {
            c.vc_index(label, w);
        }
        c
    }

    /// Adapts every paced VC's window with evans96's algorithm at the end of each
    /// measurement interval of `a.interval` slots (the first ends at that slot).
    pub fn adaptive(mut self, a: Adapt) -> Self {
        for vc in &mut self.vcs {
            vc.adapt = vc.window.map(AdaptState::from_window);
        }
        self.next_adapt = a.interval;
        self.adapt = Some(a);
        self
    }

    /// Runs the adaptations due at or before slot `k` (each interval's, in turn: an
    /// interval without cells is an idle one), then returns the slot at which a decision
    /// must now be taken, if a stopped VC may send sooner than planned.
    pub fn catch_up(&mut self, k: u64) -> Option<u64> {
        let a = self.adapt?;
        if k < self.next_adapt {
            return None;
        }
        while self.next_adapt <= k {
            for vc in &mut self.vcs {
                if let (Some(s), Some(w)) = (vc.adapt, vc.window) {
                    let (s, w) = adapt_window(s, w, vc.interval_cells, vc.interval_bursts, &a);
                    vc.adapt = Some(s);
                    vc.window = Some(w);
                }
                vc.interval_cells = 0;
                vc.interval_bursts = 0;
            }
            self.next_adapt = self.next_adapt.saturating_add(a.interval);
        }
        // Windows changed: a stopped VC now waits for the tokens its new i needs (none if
        // enough are back already: it may go now). It stays in the stopped heap, keyed
        // by that slot, and `slot` restarts it as it restarts any VC whose token comes
        // back: in (slot, VC) order, at the back of the ring, at the decision itself.
        // (Restarting here instead would put VCs back into the ring in the heap's
        // storage order, and before cells arriving at this same instant: a different
        // round robin from the static controller's even when no window changed.)
        // Tokens already back (at or before k) count as back; with unchanged windows every
        // key stays as it was.
        let now = if self.last_decided.is_some_and(|d| d >= k) { k + 1 } else { k };
        for Reverse((_, v)) in std::mem::take(&mut self.stopped).into_vec() {
            let vc = &self.vcs[v];
            let i = vc.window.map_or(u32::MAX, |w| w.i) as usize;
            let back = vc.back.len().checked_sub(i).and_then(|j| vc.back.get(j)).map_or(k, |&b| b.max(k));
            self.stopped.push(Reverse((back, v)));
        }
        if !self.ring.is_empty() {
            return self.arm_by(now);
        }
        // Nothing can go sooner than the earliest restart, which may now be earlier.
        let first = self.stopped.peek().map(|r| r.0 .0)?;
        self.arm_by(first.max(now))
    }

    /// Arms a decision at `slot` unless one is pending at or before it.
    fn arm_by(&mut self, slot: u64) -> Option<u64> {
        match self.armed {
            Some(s) if s <= slot => None,
            _ => {
                self.armed = Some(slot);
                Some(slot)
            }
        }
    }

    /// The window in force for VC `label`.
    pub fn window_of(&self, label: u32) -> Option<Window> {
        self.by_label.get(&label).and_then(|&v| self.vcs[v].window)
    }

    fn vc_index(&mut self, label: u32, window: Option<Window>) -> usize {
        if let Some(&v) = self.by_label.get(&label) {
            return v;
        }
        let mut vc = VcState::new(label, window);
        if self.adapt.is_some() {
            vc.adapt = window.map(AdaptState::from_window);
        }
        self.vcs.push(vc);
        self.by_label.insert(label, self.vcs.len() - 1);
        self.vcs.len() - 1
    }

    /// When slot `k` begins.
    pub fn slot_start(&self, k: u64) -> SimTime {
        SimTime(self.rate.cell_train_offset(k).0)
    }

    /// A cell arrives at `now`. Returns whether it was dropped (its VC's queue full) or
    /// queued, and then the slot at which a decision must now be taken, if none is
    /// pending at or before the cell's first usable slot.
    pub fn arrive(&mut self, cell: Cell, now: SimTime) -> Arrival {
        let window = self.default_window;
        let v = self.vc_index(cell.vc, window);
        let vc = &mut self.vcs[v];
        if self.vc_capacity.is_some_and(|c| vc.queue.len() >= c) {
            vc.drops += 1;
            *self.drops_by_flow.entry(cell.flow) += 1;
            return Arrival::Dropped;
        }
        vc.queue.push_back((now, cell));
        self.waiting += 1;
        if !vc.in_ring && !vc.stopped {
            vc.in_ring = true;
            self.ring.push_back(v);
        }
        let first = self.rate.slot_after(now);
        Arrival::Queued(self.arm_by(first))
    }

    /// Slot `k` begins: returns the cell whose transmission (in slot k − 1) ends now,
    /// and the slot of the next decision (None: idle until a cell arrives).
    pub fn slot(&mut self, k: u64) -> (Option<Cell>, Option<u64>) {
        let out = self.on_line.take();
        self.catch_up(k);
        self.last_decided = Some(k);
        let start = self.slot_start(k);
        while let Some(&Reverse((back, v))) = self.stopped.peek() {
            if back > k {
                break;
            }
            self.stopped.pop();
            self.vcs[v].stopped = false;
            self.vcs[v].in_ring = true;
            self.ring.push_back(v);
        }
        for _ in 0..self.ring.len() {
            let Some(v) = self.ring.pop_front() else { break };
            let vc = &mut self.vcs[v];
            let Some(&(arrived, _)) = vc.queue.front() else {
                vc.in_ring = false;
                continue;
            };
            if arrived >= start {
                // Arrived as this slot began: it may use the next one.
                self.ring.push_back(v);
                continue;
            }
            if let Some(w) = vc.window {
                while vc.back.front().is_some_and(|&s| s <= k) {
                    vc.back.pop_front();
                }
                if vc.back.len() >= w.i as usize {
                    // (i may have shrunk below the tokens out: wait for enough of them.)
                    let back = vc.back.get(vc.back.len() - w.i as usize).copied().unwrap_or(k + 1);
                    vc.in_ring = false;
                    vc.stopped = true;
                    vc.stops += 1;
                    self.meas.monitor(v as u32);
                    self.meas.stop(v as u32);
                    self.stopped.push(Reverse((back, v)));
                    continue;
                }
                // Kept in order even after m shrank (a later use may come back sooner).
                let at = k + w.m;
                let pos = vc.back.partition_point(|&s| s <= at);
                vc.back.insert(pos, at);
            }
            let Some((arrived, cell)) = vc.queue.pop_front() else { continue };
            self.waiting -= 1;
            vc.sent += 1;
            vc.tx += 1;
            vc.interval_cells += 1;
            // evans96's burst count (see `MeasurementChip`): a burst is a run of busy
            // slots between idle ones; each VC that sends in it counts it once, except the
            // VC whose cell opens it when that VC also sent the last cell before it.
            let before = self.meas.read(v as u32).map_or(0, |r| r.bursts);
            self.meas.cell(k, v as u32, true);
            if self.meas.read(v as u32).map_or(0, |r| r.bursts) != before {
                vc.bursts += 1;
                vc.interval_bursts += 1;
            }
            vc.wait.add(start.since(arrived).0 as f64);
            if vc.queue.is_empty() {
                vc.in_ring = false;
            } else {
                self.ring.push_back(v);
            }
            self.on_line = Some(cell);
            return (out, self.arm(Some(k + 1)));
        }
        let next = if !self.ring.is_empty() { Some(k + 1) } else { self.stopped.peek().map(|r| r.0 .0) };
        // With every backlogged VC stopped, an adaptation may restart one sooner.
        let next = match (next, self.adapt.is_some() && !self.stopped.is_empty()) {
            (Some(n), true) if self.ring.is_empty() => Some(n.min(self.next_adapt)),
            (n, _) => n,
        };
        (out, self.arm(next))
    }

    fn arm(&mut self, next: Option<u64>) -> Option<u64> {
        self.armed = next;
        next
    }

    /// Cells waiting (all VCs, or the VC `label`).
    pub fn waiting(&self, label: Option<u32>) -> usize {
        match label {
            None => self.waiting,
            Some(l) => self.by_label.get(&l).map_or(0, |&v| self.vcs[v].queue.len()),
        }
    }

    /// Cells sent since the start (all VCs, or the VC `label`).
    pub fn sent(&self, label: Option<u32>) -> u64 {
        match label {
            None => self.vcs.iter().map(|v| v.sent).sum(),
            Some(l) => self.by_label.get(&l).map_or(0, |&v| self.vcs[v].sent),
        }
    }
}

/// The controller driven slot by slot over slots 0..=`slots`, without the kernel:
/// arrivals at the given instants (cell `seq` = its index, on VC label `.1`), each slot
/// decided when one is armed for it. Returns, per slot, the (VC, seq) of the cell sent
/// in it. The reference the `iofm` component is tested against (its timers must give
/// the same schedule), and a way to explore a controller by hand.
pub fn reference_run(ctl: &mut Controller, arrivals: &[(SimTime, u32)], slots: u64) -> Vec<Option<(u32, u32)>> {
    let mut order: Vec<usize> = (0..arrivals.len()).collect();
    order.sort_by_key(|&j| arrivals[j].0);
    let mut sent_in = vec![None; slots as usize + 2];
    let mut next = 0;
    for k in 0..=slots {
        let start = ctl.slot_start(k);
        // Arrivals up to and including the start of slot k come first (a cell arriving
        // exactly then may not use slot k anyway).
        while next < order.len() && arrivals[order[next]].0 <= start {
            let (t, vc) = arrivals[order[next]];
            ctl.arrive(Cell::plain(t, 0, vc, order[next] as u32), t);
            next += 1;
        }
        if ctl.armed.is_some_and(|s| s <= k) {
            ctl.slot(k);
            if let Some(c) = &ctl.on_line {
                sent_in[k as usize] = Some((c.vc, c.seq));
            }
        }
    }
    sent_in
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn oc3() -> Rate {
        Rate::from_bps(149.76e6).unwrap()
    }

    fn drive(ctl: &mut Controller, arrivals: Vec<(SimTime, u32)>, slots: u64) -> Vec<Option<u32>> {
        reference_run(ctl, &arrivals, slots).into_iter().map(|x| x.map(|(vc, _)| vc)).collect()
    }

    #[test]
    fn a_backlogged_vc_sends_i_cells_then_waits_for_its_tokens() {
        let w = Window { i: 3, m: 10 };
        let mut ctl = Controller::new(oc3(), &[], Some(w), None);
        let arrivals = (0..12).map(|_| (SimTime(1), 7)).collect();
        let sent = drive(&mut ctl, arrivals, 40);
        let slots: Vec<usize> = sent.iter().enumerate().filter(|(_, v)| v.is_some()).map(|(k, _)| k).collect();
        // Slots 1, 2, 3 (tokens back at 11, 12, 13), then 11, 12, 13, 21, …
        assert_eq!(slots, vec![1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33]);
    }

    #[test]
    fn the_measurement_stopped_flag_is_set_when_stopped_and_cleared_by_the_next_cell() {
        // i = 3 of m = 10, backlogged: cells in slots 1-3, stopped at slot 4 until 11.
        let w = Window { i: 3, m: 10 };
        let mut ctl = Controller::new(oc3(), &[], Some(w), None);
        for _ in 0..6 {
            assert!(matches!(ctl.arrive(Cell::plain(SimTime(0), 0, 7, 0), SimTime(1)), Arrival::Queued(_)));
        }
        let flags: Vec<bool> = (1..=11)
            .map(|k| {
                ctl.slot(k);
                ctl.meas.read(0).is_some_and(|r| r.stopped)
            })
            .collect();
        // Slots 1-3 send; at 4 a cell waits with no token left; the flag stays set until
        // slot 11, when a token is back and a cell goes.
        assert_eq!(flags, vec![false, false, false, true, true, true, true, true, true, true, false]);
        assert_eq!(ctl.meas.read(0).map(|r| r.cells), Some(4));
    }

    #[test]
    fn unpaced_vcs_use_the_slots_paced_ones_leave() {
        let paced = (5, Some(Window { i: 1, m: 4 }));
        let mut ctl = Controller::new(oc3(), &[paced], None, None);
        let mut arrivals: Vec<(SimTime, u32)> = (0..4).map(|_| (SimTime(1), 5)).collect();
        arrivals.extend((0..6).map(|_| (SimTime(1), 9)));
        let sent = drive(&mut ctl, arrivals, 12);
        // Round robin while both may send; the unpaced VC fills the rest.
        // VC 5 (1 token per 4 slots) is stopped at slot 3 until 5, and at 8 until 10;
        // a restored VC rejoins the ring at the back.
        assert_eq!(&sent[1..=10], &[Some(5), Some(9), Some(9), Some(9), Some(9), Some(5), Some(9), Some(9), None, Some(5)]);
    }

    #[test]
    fn bursts_are_counted_as_the_measurement_hardware_counts_them() {
        // Unpaced VCs; a cell arriving just before slot k starts goes in slot k.
        let burst = |pattern: &[(u64, u32)]| {
            let mut ctl = Controller::new(oc3(), &[(1, None), (2, None)], None, None);
            let arrivals = pattern.iter().map(|&(k, vc)| (SimTime(ctl.slot_start(k).0 - 1), vc)).collect();
            drive(&mut ctl, arrivals, 20);
            (ctl.vcs[0].bursts, ctl.vcs[1].bursts)
        };
        // VC 1 in slots 1–3, idle 4, VC 1 again in 5: the second burst opens with the
        // VC that sent the last cell, so it is not counted (the AN2 exception).
        assert_eq!(burst(&[(1, 1), (1, 1), (1, 1), (5, 1)]), (1, 0));
        // 1, 2 | 2: the second burst opens with VC 2, which sent last: not counted.
        assert_eq!(burst(&[(1, 1), (2, 2), (4, 2)]), (1, 1));
        // 1, 2 | 1: VC 1 opens the second burst after VC 2's cell: counted.
        assert_eq!(burst(&[(1, 1), (2, 2), (4, 1)]), (2, 1));
        // 1, 2, 1 in one burst: each VC once.
        assert_eq!(burst(&[(1, 1), (2, 2), (3, 1)]), (1, 1));
    }

    #[test]
    fn a_greedy_vc_is_adapted_interval_by_interval() {
        // One backlogged VC, i = 2, m = 64, 100-slot intervals, γ± = 0.5, μ± = 0.
        // Interval 1: slots 1, 2, 65, 66 → λ = 0.04, r = 1.28 > 0.85: m/i 32 → 16, m 32.
        // Interval 2: tokens from 65, 66 back at 129, 130 (the old m); then every 32:
        //   129, 130, 161, 162, 193, 194 → r = 0.06·16 = 0.96: m/i → 8, m 16.
        // Interval 3: 225, 226, 241, 242, …, 289, 290 → 10 cells, r = 0.8 ≤ 0.85: the
        //   rate goes down, m/i → 12, m 24.
        // Interval 4: 305, 306, 329, 330, 353, 354, 377, 378 → r = 0.96: m/i → 6, m 12.
        let a = Adapt { interval: 100, mu_plus: 0.0, mu_minus: 0.0, gamma_plus: 0.5, gamma_minus: 0.5, target: 0.85 };
        for (slots, m) in [(150, 32), (250, 16), (350, 24), (450, 12)] {
            let mut ctl = Controller::new(oc3(), &[], Some(Window { i: 2, m: 64 }), None).adaptive(a);
            let arrivals = (0..2000).map(|_| (SimTime(1), 3)).collect();
            drive(&mut ctl, arrivals, slots);
            assert_eq!(ctl.window_of(3), Some(Window { i: 2, m }), "after {slots} slots");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Adaptive shaping whose coefficients are all zero never changes a window:
        /// the cells go in exactly the slots the static controller gives them (the
        /// interval bookkeeping, the re-check of stopped VCs and the wake-ups at
        /// interval ends change nothing).
        #[test]
        fn zero_coefficients_change_nothing(
            windows in proptest::collection::vec((1u32..6, 1u64..20), 2),
            interval in 1u64..40,
            gaps in proptest::collection::vec((0u64..9_000_000, 0usize..3), 1..80),
        ) {
            let configured: Vec<(u32, Option<Window>)> = windows.iter().enumerate()
                .map(|(j, &(i, m))| (j as u32 + 1, Some(Window { i: i.min(m as u32), m }))).collect();
            let mut t = 0;
            let arrivals: Vec<(SimTime, u32)> = gaps.iter().map(|&(g, v)| { t += g + 1; (SimTime(t), v as u32 + 1) }).collect();
            let slots = oc3().slot_after(SimTime(t)) + 20 * arrivals.len() as u64 + 20;
            let a = Adapt { interval, mu_plus: 0.0, mu_minus: 0.0, gamma_plus: 0.0, gamma_minus: 0.0, target: 0.85 };
            let mut fixed = Controller::new(oc3(), &configured, Some(Window { i: 2, m: 7 }), None);
            let mut adaptive = Controller::new(oc3(), &configured, Some(Window { i: 2, m: 7 }), None).adaptive(a);
            let f = reference_run(&mut fixed, &arrivals, slots);
            let g = reference_run(&mut adaptive, &arrivals, slots);
            prop_assert_eq!(f, g);
        }
    }

    /// Like [`reference_run`], but as the component's interval timer may fire: at each
    /// interval's end, before the cells arriving at that same instant and before the
    /// decision (the component's timer calls `catch_up` on its own).
    fn run_interval_timer_first(ctl: &mut Controller, arrivals: &[(SimTime, u32)], slots: u64) -> Vec<Option<(u32, u32)>> {
        let mut sent_in = vec![None; slots as usize + 2];
        let mut next = 0;
        for k in 0..=slots {
            let start = ctl.slot_start(k);
            if k == ctl.next_adapt {
                ctl.catch_up(k);
            }
            while next < arrivals.len() && arrivals[next].0 <= start {
                let (t, vc) = arrivals[next];
                ctl.arrive(Cell::plain(t, 0, vc, next as u32), t);
                next += 1;
            }
            if ctl.armed.is_some_and(|s| s <= k) {
                ctl.slot(k);
                if let Some(c) = &ctl.on_line {
                    sent_in[k as usize] = Some((c.vc, c.seq));
                }
            }
        }
        sent_in
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// The same with the interval timer firing before the cells that arrive at an
        /// interval's end (some arrivals exactly at slot starts): stopped VCs restart in
        /// the decision, as in the static controller, so the order of events at one
        /// instant changes nothing.
        #[test]
        fn zero_coefficients_change_nothing_whatever_the_order_at_an_instant(
            windows in proptest::collection::vec((1u32..6, 1u64..20), 3),
            interval in 1u64..40,
            gaps in proptest::collection::vec((0u64..9_000_000, 0usize..3, any::<bool>()), 1..80),
        ) {
            let configured: Vec<(u32, Option<Window>)> = windows.iter().enumerate()
                .map(|(j, &(i, m))| (j as u32 + 1, Some(Window { i: i.min(m as u32), m }))).collect();
            let mut t = 0;
            let arrivals: Vec<(SimTime, u32)> = gaps.iter().map(|&(g, v, on_slot)| {
                t += g + 1;
                if on_slot {
                    t = oc3().cell_train_offset(oc3().slot_after(SimTime(t))).0;
                }
                (SimTime(t), v as u32 + 1)
            }).collect();
            let slots = oc3().slot_after(SimTime(t)) + 20 * arrivals.len() as u64 + 20;
            let a = Adapt { interval, mu_plus: 0.0, mu_minus: 0.0, gamma_plus: 0.0, gamma_minus: 0.0, target: 0.85 };
            let mut fixed = Controller::new(oc3(), &configured, None, None);
            let mut adaptive = Controller::new(oc3(), &configured, None, None).adaptive(a);
            let f = reference_run(&mut fixed, &arrivals, slots);
            let g = run_interval_timer_first(&mut adaptive, &arrivals, slots);
            prop_assert_eq!(f, g);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random arrivals on up to four VCs with random windows (one unpaced), some
        /// exactly at slot starts: every paced VC sends at most i cells in any m
        /// consecutive slots; a cell goes in a slot that starts after it arrived; each
        /// VC's cells leave in order; and no slot is left idle while some VC had a cell
        /// that had arrived before the slot began and (if paced) fewer than i cells sent
        /// in the m − 1 slots before it — the check recomputes tokens from what was sent.
        #[test]
        fn at_most_i_in_any_m_slots_and_no_idle_slot_with_an_eligible_vc(
            windows in proptest::collection::vec((1u32..6, 1u64..20), 3),
            gaps in proptest::collection::vec((0u64..9_000_000, 0usize..4, any::<bool>()), 1..120),
        ) {
            let mut configured: Vec<(u32, Option<Window>)> = windows.iter().enumerate()
                .map(|(j, &(i, m))| (j as u32 + 1, Some(Window { i: i.min(m as u32), m }))).collect();
            configured.push((4, None));
            let mut ctl = Controller::new(oc3(), &configured, None, None);
            let mut t = 0;
            let arrivals: Vec<(SimTime, u32)> = gaps.iter().map(|&(g, v, on_slot)| {
                t += g + 1;
                if on_slot {
                    t = ctl.slot_start(oc3().slot_after(SimTime(t))).0;
                }
                (SimTime(t), v as u32 + 1)
            }).collect();
            // Long enough for the slowest VC (1 cell per 19 slots) to drain everything.
            let slots = oc3().slot_after(SimTime(t)) + 20 * arrivals.len() as u64 + 20;
            let cells = reference_run(&mut ctl, &arrivals, slots);
            let mut last_seq: HashMap<u32, u32> = HashMap::new();
            for (k, c) in cells.iter().enumerate() {
                if let Some((vc, seq)) = *c {
                    prop_assert!(ctl.slot_start(k as u64) > arrivals[seq as usize].0, "cell {} sent in slot {} before it arrived", seq, k);
                    prop_assert!(last_seq.insert(vc, seq).is_none_or(|p| p < seq), "vc {} out of order", vc);
                }
            }
            let sent: Vec<Option<u32>> = cells.iter().map(|x| x.map(|(vc, _)| vc)).collect();
            for (vc, w) in configured.iter().filter_map(|&(l, w)| w.map(|w| (l, w))) {
                let used: Vec<u64> = (0..sent.len() as u64).filter(|&k| sent[k as usize] == Some(vc)).collect();
                for (a, &s) in used.iter().enumerate() {
                    let within = used[a..].iter().take_while(|&&x| x < s + w.m).count();
                    prop_assert!(within <= w.i as usize, "vc {} sent {} cells in slots {}..{}", vc, within, s, s + w.m);
                }
            }
            // Every cell left, and in each slot with none sent no VC was eligible.
            let total: usize = sent.iter().filter(|v| v.is_some()).count();
            prop_assert_eq!(total, arrivals.len());
            for k in 0..sent.len() as u64 {
                if sent[k as usize].is_some() {
                    continue;
                }
                let start = ctl.slot_start(k);
                for &(vc, w) in &configured {
                    let arrived = arrivals.iter().filter(|a| a.1 == vc && a.0 < start).count();
                    let gone = (0..k).filter(|&s| sent[s as usize] == Some(vc)).count();
                    if arrived > gone {
                        let recent = (k.saturating_sub(w.map_or(1, |w| w.m) - 1)..k).filter(|&s| sent[s as usize] == Some(vc)).count();
                        prop_assert!(w.is_some_and(|w| recent >= w.i as usize), "slot {} idle while vc {} could send", k, vc);
                    }
                }
            }
        }
    }
}
