//! Per-VC i-out-of-m rate control: the i/m controller of evans96 ("Rate-based flow
//! control", the AN2 LAN/WAN gateway's FPGA): "no more than i cells in any m continuous
//! cell slots" per virtual circuit, so i is the largest burst and i/m the largest
//! long-term rate (normalised to the line). "Restoration of tokens is performed in
//! hardware m cell slots after that particular token was used"; a VC that has spent its
//! i tokens is *stopped* until one comes back. i is a 9-bit field (≤ 511), m a 10-bit
//! one (≤ 1023). One bit per VC says whether it is paced: cells of other VCs go out
//! without a token limit, sharing the same line.
//!
//! ```text
//!   in (many) ──► [ VC a: FIFO │ i_a of m_a tokens ] ─┐
//!                 [ VC b: FIFO │ i_b of m_b tokens ] ─┼─► one cell per slot ──► out
//!                 [ unpaced VC: FIFO               ] ─┘   (round robin)
//! ```
//!
//! *Slots.* The output line is slotted from time zero at its cell rate: slot k starts
//! at `ceil(k · 424 / rate)` (exact, [`Rate::cell_train_offset`]). A cell that arrives
//! at `t` may use the first slot starting strictly after `t` (so the order of events at
//! one instant never matters); a cell sent in slot k leaves, last bit out, when slot
//! k + 1 begins. In each slot the controller sends the head cell of the next VC in
//! round-robin order that has a cell and (if paced) a token; a token used in slot s is
//! back at slot s + m, so any m consecutive slots carry at most i of the VC's cells.
//! Work-conserving otherwise: a slot is idle only when no VC has both.
//!
//! The controller decides slot by slot only while it has something to do: an idle one
//! waits for a cell, one whose backlogged VCs are all stopped waits for the earliest
//! token to come back.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, Tally};
use atmsim_kernel::{Ctx, Ledger, Rate, SeriesKind, SimTime};

use crate::cell::{parse_vc_label, vc_name, Cell, Msg};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::SeriesDecl;
use crate::transmitter::{line_rate, PHY_NAMES};

/// Largest `i` and `m` (the hardware's 9- and 10-bit fields, evans96).
pub const I_MAX: i64 = 511;
pub const M_MAX: i64 = 1023;

pub const PARAMS: [ParamSpec; 6] = [
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "physical-layer preset of the output line, whose cell slots the controller counts (OC-12c for the evans96 gateway); give phy or rate", source: "evans96 (OC-12c gateway); ITU-T I.432" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell-carrying bit rate of the output line (424 bits per slot); give phy or rate", source: "required (phy or rate)" },
    ParamSpec { name: "i", ty: ParamType::Int { min: 1, max: I_MAX }, default: None, required: true, help: "cells a paced VC may send in any m consecutive slots (its largest burst); VCs listed in vcs may set their own", source: "required; evans96: a 9-bit field" },
    ParamSpec { name: "m", ty: ParamType::Int { min: 1, max: M_MAX }, default: None, required: true, help: "window in cell slots; i/m is the largest long-term rate as a fraction of the line", source: "required; evans96: a 10-bit field" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: false, help: "paced VCs: \"VPI/VCI\" or \"VCI\", optionally followed by \"i=N m=M\" (their own i and m); cells of other VCs are not paced. Default: every VC paced with i and m", source: "evans96 (per-VC tables of i and m, and a paced bit)" },
    ParamSpec { name: "vc_capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "cells each VC's queue holds; tail drop when full", source: "atmsim convention" },
];

pub const PROBES: [ProbeSpec; 6] = [
    ProbeSpec { name: "iofm_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells sent, per VC (<iofm>/vc<N>) and in all (count, rate)" },
    ProbeSpec { name: "iofm_wait", unit: "s", kind: ProbeKind::Tally, help: "time from a cell's arrival to the start of its slot, per VC (count, mean, std, min, max)" },
    ProbeSpec { name: "iofm_stops", unit: "1", kind: ProbeKind::Counter, help: "times a paced VC was stopped: a cell waiting, no token left (count; each token that comes back restarts the VC, so a backlogged VC is stopped between 1 and i times per m slots)" },
    ProbeSpec { name: "iofm_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped because the VC's queue was full (count)" },
    ProbeSpec { name: "iofm_q_len", unit: "cells", kind: ProbeKind::Gauge, help: "cells waiting at the end of the run, per VC (value)" },
    ProbeSpec { name: "phy_utilisation", unit: "1", kind: ProbeKind::Gauge, help: "fraction of the output line's slots that carried a cell (value)" },
];

/// What the controller samples as time series, in all or per VC (`<iofm>/vc<N>`).
pub const SERIES: [SeriesDecl; 2] = [
    SeriesDecl { name: "iofm_q_len", unit: "cells", kind: SeriesKind::Level, scale: 1.0, help: "cells waiting at each instant" },
    SeriesDecl { name: "iofm_tx_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells sent per second over each interval" },
];

/// (i, m) of a paced VC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub i: u32,
    pub m: u64,
}

/// One VC's queue, tokens and books.
#[derive(Clone, Debug)]
struct VcState {
    label: u32,
    window: Option<Window>,
    /// Cells waiting, with their arrival instants.
    queue: VecDeque<(SimTime, Cell)>,
    /// Slots in which the tokens now out were used (each comes back m slots later).
    used: VecDeque<u64>,
    /// In the round-robin ring, or stopped (waiting for a token); neither when idle.
    in_ring: bool,
    stopped: bool,
    sent: u64,
    tx: u64,
    stops: u64,
    drops: u64,
    wait: Tally,
}

impl VcState {
    fn new(label: u32, window: Option<Window>) -> Self {
        VcState { label, window, queue: VecDeque::new(), used: VecDeque::new(), in_ring: false, stopped: false, sent: 0, tx: 0, stops: 0, drops: 0, wait: Tally::default() }
    }
}

/// The controller, apart from the kernel: what arrives, what each slot sends.
#[derive(Clone, Debug)]
pub struct Controller {
    rate: Rate,
    vcs: Vec<VcState>,
    by_label: HashMap<u32, usize>,
    /// The window of VCs not configured in advance (None: they are not paced).
    default_window: Option<Window>,
    vc_capacity: Option<usize>,
    ring: VecDeque<usize>,
    /// Stopped VCs by the slot their oldest token comes back.
    stopped: BinaryHeap<Reverse<(u64, usize)>>,
    /// The cell being sent, and its slot.
    on_line: Option<Cell>,
    /// The slot of the next decision, if one is pending.
    pub armed: Option<u64>,
    waiting: usize,
    drops_by_flow: Vec<u64>,
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
            drops_by_flow: Vec::new(),
        };
        for &(label, w) in configured {
            c.vc_index(label, w);
        }
        c
    }

    fn vc_index(&mut self, label: u32, window: Option<Window>) -> usize {
        if let Some(&v) = self.by_label.get(&label) {
            return v;
        }
        self.vcs.push(VcState::new(label, window));
        self.by_label.insert(label, self.vcs.len() - 1);
        self.vcs.len() - 1
    }

    /// When slot `k` begins.
    pub fn slot_start(&self, k: u64) -> SimTime {
        SimTime(self.rate.cell_train_offset(k).0)
    }

    /// A cell arrives at `now`. Returns the slot at which a decision must now be taken,
    /// if none is pending at or before the cell's first usable slot.
    pub fn arrive(&mut self, cell: Cell, now: SimTime) -> Option<u64> {
        let window = self.default_window;
        let v = self.vc_index(cell.vc, window);
        let vc = &mut self.vcs[v];
        if self.vc_capacity.is_some_and(|c| vc.queue.len() >= c) {
            vc.drops += 1;
            let f = cell.flow as usize;
            if self.drops_by_flow.len() <= f {
                self.drops_by_flow.resize(f + 1, 0);
            }
            self.drops_by_flow[f] += 1;
            return None;
        }
        vc.queue.push_back((now, cell));
        self.waiting += 1;
        if !vc.in_ring && !vc.stopped {
            vc.in_ring = true;
            self.ring.push_back(v);
        }
        let first = self.rate.slot_after(now);
        match self.armed {
            Some(s) if s <= first => None,
            _ => {
                self.armed = Some(first);
                Some(first)
            }
        }
    }

    /// Slot `k` begins: returns the cell whose transmission (in slot k − 1) ends now,
    /// and the slot of the next decision (None: idle until a cell arrives).
    pub fn slot(&mut self, k: u64) -> (Option<Cell>, Option<u64>) {
        let out = self.on_line.take();
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
                while vc.used.front().is_some_and(|&s| s + w.m <= k) {
                    vc.used.pop_front();
                }
                if vc.used.len() >= w.i as usize {
                    let back = vc.used.front().map_or(k + 1, |&s| s + w.m);
                    vc.in_ring = false;
                    vc.stopped = true;
                    vc.stops += 1;
                    self.stopped.push(Reverse((back, v)));
                    continue;
                }
                vc.used.push_back(k);
            }
            let Some((arrived, cell)) = vc.queue.pop_front() else { continue };
            self.waiting -= 1;
            vc.sent += 1;
            vc.tx += 1;
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

/// Parses a `vcs` entry: `"VPI/VCI"` or `"VCI"`, then optionally `i=N m=M`.
fn parse_entry(text: &str, default: Window) -> Result<(u32, Window), String> {
    let mut words = text.split_whitespace();
    let label = parse_vc_label(words.next().ok_or("an empty entry: give \"VPI/VCI\" or \"VCI\", then optionally i=N m=M")?)?;
    let mut w = default;
    for word in words {
        let (key, value) = word.split_once('=').ok_or_else(|| format!("'{word}': expected i=N or m=M"))?;
        let n: i64 = value.parse().map_err(|_| format!("'{word}': {value} is not a whole number"))?;
        match key {
            "i" if (1..=I_MAX).contains(&n) => w.i = n as u32,
            "m" if (1..=M_MAX).contains(&n) => w.m = n as u64,
            "i" => return Err(format!("'{word}': i must be 1..{I_MAX}")),
            "m" => return Err(format!("'{word}': m must be 1..{M_MAX}")),
            _ => return Err(format!("'{word}': unknown setting '{key}' (valid: i, m)")),
        }
    }
    if w.i as u64 > w.m {
        return Err(format!("'{text}': i = {} exceeds m = {} (i/m is at most 1)", w.i, w.m));
    }
    Ok((label, w))
}

/// The `iofm` component.
#[derive(Clone, Debug)]
pub struct Iofm {
    ctl: Controller,
    /// Each decision's timer carries a generation number; a superseded one is ignored.
    generation: u32,
    since: SimTime,
    slots_since: u64,
}

impl Iofm {
    pub fn new(p: &Params) -> Result<Self, ParamIssue> {
        let rate = line_rate(p, None)?;
        let i = p.int("i").ok_or_else(|| ParamIssue::new("i", "missing"))?;
        let m = p.int("m").ok_or_else(|| ParamIssue::new("m", "missing"))?;
        if i > m {
            return Err(ParamIssue::new("i", format!("i = {i} exceeds m = {m} (i/m is at most 1)")));
        }
        let window = Window { i: i as u32, m: m as u64 };
        let vc_capacity = match p.word("vc_capacity") {
            Some(_) => None,
            None => match p.cells("vc_capacity").unwrap_or(0) {
                0 => return Err(ParamIssue::new("vc_capacity", "a VC queue holds at least 1 cell (or \"unlimited\")")),
                c => Some(c as usize),
            },
        };
        let (configured, default_window) = match p.list("vcs") {
            None => (Vec::new(), Some(window)),
            Some(entries) => {
                let mut out: Vec<(u32, Option<Window>)> = Vec::new();
                for e in entries {
                    let (label, w) = parse_entry(e, window).map_err(|m| ParamIssue::new("vcs", m))?;
                    if out.iter().any(|&(l, _)| l == label) {
                        return Err(ParamIssue::new("vcs", format!("VC '{e}' listed twice")));
                    }
                    out.push((label, Some(w)));
                }
                (out, None)
            }
        };
        Ok(Iofm { ctl: Controller::new(rate, &configured, default_window, vc_capacity), generation: 0, since: SimTime::ZERO, slots_since: 0 })
    }

    fn arm(&mut self, slot: u64, ctx: &mut Ctx<'_, Msg>) {
        self.generation = self.generation.wrapping_add(1);
        ctx.schedule_at(self.ctl.slot_start(slot), self.generation);
    }

    pub fn on_cell(&mut self, cell: Cell, ctx: &mut Ctx<'_, Msg>) {
        if let Some(slot) = self.ctl.arrive(cell, ctx.now) {
            self.arm(slot, ctx);
        }
    }

    pub fn on_timer(&mut self, tag: u32, ctx: &mut Ctx<'_, Msg>) {
        let Some(k) = self.ctl.armed else { return };
        if tag != self.generation {
            return;
        }
        let (out, next) = self.ctl.slot(k);
        if let Some(slot) = next {
            self.arm(slot, ctx);
        }
        if let Some(cell) = out {
            ctx.send(0, Msg::Cell(cell));
        }
    }

    /// The series index of quantity `name` for all VCs (`sub` empty) or `vc<N>`.
    pub fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let element = if sub.is_empty() { 0 } else { crate::series::parse_vc_name(sub)? as u64 + 1 };
        Some(crate::series::code(element, crate::series::find(&SERIES, name)?))
    }

    pub fn sample(&self, index: u64) -> f64 {
        let (element, q) = crate::series::split(index);
        let label = element.checked_sub(1).map(|l| l as u32);
        match q {
            0 => self.ctl.waiting(label) as f64,
            1 => self.ctl.sent(label) as f64,
            _ => f64::NAN,
        }
    }

    pub fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        self.slots_since = self.ctl.rate.slot_after(SimTime(now.0.saturating_sub(1)));
        for v in &mut self.ctl.vcs {
            v.tx = 0;
            v.stops = 0;
            v.drops = 0;
            v.wait.reset();
        }
    }

    pub fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { f64::NAN };
        let mut total = 0;
        for v in &self.ctl.vcs {
            let name = format!("{path}/{}", vc_name(v.label));
            total += v.tx;
            out.push(&name, "iofm_tx_cells", "count", v.tx as f64, "cells");
            out.push(&name, "iofm_tx_cells", "rate", per_s(v.tx), "cells/s");
            v.wait.report(out, &name, "iofm_wait", "s", 1e-12);
            if v.window.is_some() {
                out.push(&name, "iofm_stops", "count", v.stops as f64, "1");
            }
            out.push(&name, "iofm_drop_cells", "count", v.drops as f64, "cells");
            out.push(&name, "iofm_q_len", "value", v.queue.len() as f64, "cells");
        }
        out.push(path, "iofm_tx_cells", "count", total as f64, "cells");
        out.push(path, "iofm_tx_cells", "rate", per_s(total), "cells/s");
        // Slots that began in the measurement window.
        let slots = self.ctl.rate.slot_after(SimTime(now.0.saturating_sub(1))).saturating_sub(self.slots_since);
        out.push(path, "phy_utilisation", "value", if slots > 0 { total as f64 / slots as f64 } else { f64::NAN }, "1");
    }

    pub fn ledger(&self, l: &mut Ledger) {
        for (f, &n) in self.ctl.drops_by_flow.iter().enumerate() {
            l.add_dropped("buffer_full", f as u32, n);
        }
        for v in &self.ctl.vcs {
            for (_, c) in &v.queue {
                l.add_in_flight(c.flow, 1);
            }
        }
        if let Some(c) = &self.ctl.on_line {
            l.add_in_flight(c.flow, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn oc3() -> Rate {
        Rate::from_bps(149.76e6).unwrap()
    }

    /// Drives a controller slot by slot (as the component's timers do) with arrivals
    /// at the given instants (cell `seq` = its index); returns, per slot, the VC and
    /// seq of the cell sent in it.
    fn drive_cells(ctl: &mut Controller, arrivals: &[(SimTime, u32)], slots: u64) -> Vec<Option<(u32, u32)>> {
        let mut order: Vec<usize> = (0..arrivals.len()).collect();
        order.sort_by_key(|&j| arrivals[j].0);
        let mut sent_in = vec![None; slots as usize + 2];
        let mut next = 0;
        for k in 0..=slots {
            let start = ctl.slot_start(k);
            // Arrivals up to and including the start of slot k come first (a cell
            // arriving exactly then must not use slot k anyway).
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

    fn drive(ctl: &mut Controller, arrivals: Vec<(SimTime, u32)>, slots: u64) -> Vec<Option<u32>> {
        drive_cells(ctl, &arrivals, slots).into_iter().map(|x| x.map(|(vc, _)| vc)).collect()
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
    fn entries_parse_and_bad_ones_say_why() {
        let d = Window { i: 4, m: 100 };
        assert_eq!(parse_entry("0/100", d), Ok((100, d)));
        assert_eq!(parse_entry("1/42 i=7 m=9", d), Ok(((1 << 16) | 42, Window { i: 7, m: 9 })));
        assert!(parse_entry("42 i=600", d).unwrap_err().contains("1..511"));
        assert!(parse_entry("42 m=2000", d).unwrap_err().contains("1..1023"));
        assert!(parse_entry("42 i=8 m=5", d).unwrap_err().contains("exceeds"));
        assert!(parse_entry("42 k=5", d).unwrap_err().contains("valid: i, m"));
        assert!(parse_entry("42 i=x", d).unwrap_err().contains("whole number"));
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
            let cells = drive_cells(&mut ctl, &arrivals, slots);
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
