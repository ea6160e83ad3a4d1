//! ERICA explicit-rate switch for one output port, with ERICA+ queue control as an
//! option, as a sans-IO state machine (Jain, Kalyanaraman, Goyal, Fahmy, Viswanathan,
//! "ERICA switch algorithm: a complete description", ATM Forum 96-1172, 1996; queue
//! control functions: Vandalore, Jain, Goyal, Fahmy, "Design and analysis of queue
//! control functions for explicit rate switch schemes", 1998).
//!
//! ```text
//!   every ABR cell arriving (VC) ──> on_cell ──────> counts; ends the averaging interval
//!   every other cell (CBR, VBR) ───> on_other_cell ─> counts as higher-priority load
//!   forward RM cell (CCR) ─────────> on_forward_rm ─> CCR[VC]
//!   backward RM cell ──────────────> on_backward_rm > ER = min(ER, computed ER)
//! ```
//!
//! At the end of each averaging interval (a number of cells or a time, whichever is
//! configured): ABR capacity = target utilisation · f · (link rate − non-ABR input
//! rate) (f = 1 without queue control; the non-ABR rate, CBR and VBR cells arrived /
//! interval length, 96-1172's "link bandwidth − VBR and CBR bandwidth usage", never
//! taken below 0), input rate = ABR cells arrived / interval length, overload z =
//! input rate / ABR capacity, active VCs N = the VCs that sent a cell in the interval,
//! fair share = ABR capacity / N; MaxAllocPrevious takes MaxAllocCurrent and
//! MaxAllocCurrent restarts at the fair share.
//!
//! On a backward RM cell of VC i: VCShare = CCR[i]/z; ER = max(fair share, VCShare)
//! when z > 1 + δ, else max(fair share, VCShare, MaxAllocPrevious); MaxAllocCurrent =
//! max(MaxAllocCurrent, ER); if ER > fair share and CCR[i] < fair share (the fair
//! share, with `ccr_on_grid` rounded down to the RM cells' rate format as CCR is),
//! ER = fair share; the cell's ER becomes min(ER in cell, ER, ABR capacity).
//!
//! Two options of 96-1172 section 3 (both off by default):
//!
//! - `per_vc_ccr` ("per-VC CCR measurement"): a VC's rate is measured at the port —
//!   its cells in the last interval / the interval's length — instead of read from the
//!   CCR of its forward RM cells. A source-limited VC sends less than its ACR, and
//!   its CCR (= ACR) then overstates its load; through VCShare it lifts
//!   MaxAllocPrevious, and with it every VC at the port.
//! - `single_feedback` ("one feedback per averaging interval"): a VC's ER is computed
//!   at its first backward RM cell of an interval and the same value is given to its
//!   later ones in that interval. Without it, a VC sending several RM cells per
//!   interval is divided by the same z once per RM cell (its CCR has followed the
//!   previous ER): CCR/z, CCR/z², … — the compounding the option removes.
//!
//! ERICA+ queue control: with the queueing delay Tq = queue length / link rate and
//! the target delay T0, f = a·T0/((a − 1)·Tq + T0) for Tq ≤ T0 (above 1: an empty
//! queue lets the sources fill the link) and f = max(QDLF, b·T0/((b − 1)·Tq + T0))
//! above (below 1: part of the link drains the queue); both branches equal 1 at T0.
//!
//! Before the first interval ends, nothing is measured and backward RM cells pass
//! unchanged.

use std::collections::{BTreeSet, HashMap};

use atmsim_kernel::{SimDuration, SimTime};
use atmsim_wire::rm::{RmRate, RmRepr};

use crate::params::ParamIssue;

/// How long an averaging interval is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Averaging {
    /// This many ABR cells arrived at the port.
    Cells(u64),
    /// This much time passed (checked when a cell or backward RM cell comes).
    Time(SimDuration),
}

/// ERICA+'s queue control function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueControl {
    /// Target queueing delay T0.
    pub target_delay: SimDuration,
    /// Curve below T0 (f(0) = a).
    pub a: f64,
    /// Curve above T0.
    pub b: f64,
    /// Queue drain limit factor: f never falls below it.
    pub qdlf: f64,
}

impl QueueControl {
    /// f for a queueing delay of `tq` seconds.
    pub fn fraction(&self, tq: f64) -> f64 {
        let t0 = self.target_delay.as_secs_f64();
        if tq <= t0 {
            self.a * t0 / ((self.a - 1.0) * tq + t0)
        } else {
            (self.b * t0 / ((self.b - 1.0) * tq + t0)).max(self.qdlf)
        }
    }
}

/// ERICA's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaParams {
    /// The port's line rate (cells/s).
    pub link_rate: f64,
    /// Target utilisation: the share of the line ABR may fill.
    pub target_utilisation: f64,
    pub averaging: Averaging,
    /// Overload margin δ: MaxAllocPrevious is used only while z ≤ 1 + δ.
    pub delta: f64,
    /// ERICA+ (None: plain ERICA).
    pub queue_control: Option<QueueControl>,
    /// Judge "CCR below the fair share" with the fair share rounded down to the RM
    /// cells' rate format (the grid CCR is carried on); false: exactly.
    pub ccr_on_grid: bool,
    /// Measure each VC's rate over the interval instead of reading CCR (96-1172).
    pub per_vc_ccr: bool,
    /// One ER per VC per averaging interval (96-1172).
    pub single_feedback: bool,
}

impl EricaParams {
    pub fn validate(&self) -> Result<(), ParamIssue> {
        if !(self.target_utilisation > 0.0 && self.target_utilisation <= 1.0) {
            return Err(ParamIssue::new("target_utilisation", format!("target_utilisation must be in (0, 1]; got {}", self.target_utilisation)));
        }
        match self.averaging {
            Averaging::Cells(0) => return Err(ParamIssue::new("averaging_cells", "the averaging interval must be at least 1 cell")),
            Averaging::Time(SimDuration::ZERO) => return Err(ParamIssue::new("averaging_time", "the averaging interval must be longer than 0 s")),
            _ => {}
        }
        if self.delta.is_nan() || self.delta < 0.0 {
            return Err(ParamIssue::new("delta", format!("delta must be at least 0; got {}", self.delta)));
        }
        if let Some(q) = self.queue_control {
            if q.target_delay == SimDuration::ZERO {
                return Err(ParamIssue::new("target_delay", "target_delay must be longer than 0 s"));
            }
            if q.a.is_nan() || q.b.is_nan() || q.a < 1.0 || q.b < 1.0 {
                return Err(ParamIssue::new("queue_a", format!("queue_a and queue_b must be at least 1; got {} and {}", q.a, q.b)));
            }
            if !(q.qdlf > 0.0 && q.qdlf <= 1.0) {
                return Err(ParamIssue::new("qdlf", format!("qdlf must be in (0, 1]; got {}", q.qdlf)));
            }
        }
        Ok(())
    }
}

/// What the last averaging interval measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure {
    /// ABR capacity (cells/s).
    pub capacity: f64,
    /// Overload factor z.
    pub z: f64,
    /// Active VCs.
    pub active: usize,
    /// Fair share (cells/s).
    pub fair_share: f64,
    /// Non-ABR (CBR, VBR) input rate taken off the link rate (cells/s).
    pub non_abr: f64,
}

#[derive(Clone, Debug)]
pub struct Erica {
    p: EricaParams,
    start: SimTime,
    cells: u64,
    /// Non-ABR cells (CBR, VBR) arrived in the interval.
    other: u64,
    active: BTreeSet<u32>,
    /// CCR of each VC's last forward RM cell (cells/s); looked up, never iterated.
    ccr: HashMap<u32, f64>,
    /// `per_vc_ccr`: each VC's cells in the current interval (drained at its end,
    /// each entry on its own: the order does not matter).
    vc_cells: HashMap<u32, u64>,
    /// `per_vc_ccr`: each VC's rate measured over the last interval (cells/s).
    measured: HashMap<u32, f64>,
    /// `single_feedback`: the interval (count) each VC was last given an ER in, and it.
    given: HashMap<u32, (u64, f64)>,
    measure: Option<Measure>,
    max_alloc_prev: f64,
    max_alloc_cur: f64,
    /// Intervals ended.
    pub intervals: u64,
}

impl Erica {
    pub fn new(p: EricaParams) -> Erica {
        Erica { p, start: SimTime::ZERO, cells: 0, other: 0, active: BTreeSet::new(), ccr: HashMap::new(), vc_cells: HashMap::new(), measured: HashMap::new(), given: HashMap::new(), measure: None, max_alloc_prev: 0.0, max_alloc_cur: 0.0, intervals: 0 }
    }

    pub fn measure(&self) -> Option<Measure> {
        self.measure
    }

    /// Ends the interval at `now` if it is due; `queue_len` is the port's buffer (cells).
    fn end_interval_if_due(&mut self, now: SimTime, queue_len: u64) {
        let due = match self.p.averaging {
            Averaging::Cells(n) => self.cells >= n,
            Averaging::Time(d) => now.since(self.start) >= d,
        };
        let span_ps = now.since(self.start).ps();
        if !due || span_ps == 0 {
            return;
        }
        let f = self.p.queue_control.map_or(1.0, |q| q.fraction(queue_len as f64 / self.p.link_rate));
        // Cells per second as quotients of integers (exact when they are one).
        let per_s = |n: u64| n as f64 * 1e12 / span_ps as f64;
        let non_abr = per_s(self.other);
        let capacity = self.p.target_utilisation * f * (self.p.link_rate - non_abr).max(0.0);
        let active = self.active.len().max(1);
        let fair_share = capacity / active as f64;
        let input = per_s(self.cells);
        let z = if capacity > 0.0 { input / capacity } else { f64::INFINITY };
        self.measure = Some(Measure { capacity, z, active, fair_share, non_abr });
        self.max_alloc_prev = self.max_alloc_cur;
        self.max_alloc_cur = fair_share;
        if self.p.per_vc_ccr {
            self.measured = self.vc_cells.drain().map(|(vc, n)| (vc, per_s(n))).collect();
        }
        self.start = now;
        self.cells = 0;
        self.other = 0;
        self.active.clear();
        self.intervals += 1;
    }

    /// An ABR cell (data or forward RM) of `vc` arrives at the port at `now`, which
    /// then holds `queue_len` cells.
    pub fn on_cell(&mut self, now: SimTime, vc: u32, queue_len: u64) {
        self.cells += 1;
        self.active.insert(vc);
        if self.p.per_vc_ccr {
            *self.vc_cells.entry(vc).or_insert(0) += 1;
        }
        self.end_interval_if_due(now, queue_len);
    }

    /// A cell that is not ABR (CBR, VBR: higher priority in TM 4.0's service order)
    /// arrives at the port at `now`: its rate is taken off the link's before the
    /// target utilisation applies.
    pub fn on_other_cell(&mut self, now: SimTime, queue_len: u64) {
        self.other += 1;
        self.end_interval_if_due(now, queue_len);
    }

    /// A forward RM cell of `vc` (after [`Erica::on_cell`] for it).
    pub fn on_forward_rm(&mut self, vc: u32, rm: &RmRepr) {
        self.ccr.insert(vc, rm.ccr.cells_per_s());
    }

    /// A backward RM cell of `vc`, whose forward cells cross this port.
    pub fn on_backward_rm(&mut self, now: SimTime, vc: u32, rm: &mut RmRepr, queue_len: u64) {
        self.end_interval_if_due(now, queue_len);
        let Some(m) = self.measure else { return };
        if self.p.single_feedback {
            if let Some(&(k, er)) = self.given.get(&vc) {
                if k == self.intervals {
                    rm.er = rm.er.min(RmRate::from_cells_per_s(er));
                    return;
                }
            }
        }
        let ccr = if self.p.per_vc_ccr { self.measured.get(&vc).copied().unwrap_or(0.0) } else { self.ccr.get(&vc).copied().unwrap_or(0.0) };
        let vc_share = if m.z > 0.0 { ccr / m.z } else { f64::INFINITY };
        let mut er = if m.z > 1.0 + self.p.delta { m.fair_share.max(vc_share) } else { m.fair_share.max(vc_share).max(self.max_alloc_prev) };
        self.max_alloc_cur = self.max_alloc_cur.max(er.min(m.capacity));
        // A CCR is carried rounded down (up to 1/512): a VC sent exactly the fair share
        // reports a CCR a little below it and, compared with the exact value, is held
        // at the fair share even where its max-min share is higher (`ccr_on_grid`).
        let fair_share = if self.p.ccr_on_grid { RmRate::from_cells_per_s(m.fair_share).cells_per_s() } else { m.fair_share };
        if er > m.fair_share && ccr < fair_share {
            er = m.fair_share;
        }
        let er = er.min(m.capacity);
        if self.p.single_feedback {
            self.given.insert(vc, (self.intervals, er));
        }
        rm.er = rm.er.min(RmRate::from_cells_per_s(er));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    fn p() -> EricaParams {
        EricaParams { link_rate: 1000.0, target_utilisation: 0.9, averaging: Averaging::Time(SimDuration(100 * MS)), delta: 0.1, queue_control: None, ccr_on_grid: false, per_vc_ccr: false, single_feedback: false }
    }

    fn brm(er: f64) -> RmRepr {
        RmRepr { protocol_id: 1, backward: true, bn: false, ci: false, ni: false, ra: false, er: RmRate::from_cells_per_s(er), ccr: RmRate(0), mcr: RmRate(0), ql: 0, sn: 0 }
    }

    fn frm(ccr: f64) -> RmRepr {
        RmRepr { backward: false, ccr: RmRate::from_cells_per_s(ccr), ..brm(4096.0) }
    }

    /// `n` cells spread over 100 ms from `t0_ms`, alternating over `vcs`.
    fn load(e: &mut Erica, t0_ms: u64, n: u64, vcs: &[u32]) {
        for k in 0..n {
            let t = SimTime(t0_ms * MS + k * 100 * MS / n);
            e.on_cell(t, vcs[(k % vcs.len() as u64) as usize], 0);
        }
    }

    /// A VC sent exactly the fair share reports it rounded down in CCR: compared
    /// exactly it counts as below the fair share and is held there; compared on the
    /// rate grid it gets its VC share.
    #[test]
    fn ccr_at_the_fair_share_on_the_rate_grid() {
        // Seven VCs: fair share 900/7 = 128.571 cells/s, carried as 128·(1 + 2/512) = 128.5.
        let fs = 900.0 / 7.0;
        assert_eq!(frm(fs).ccr.cells_per_s(), 128.5);
        for on_grid in [false, true] {
            let mut e = Erica::new(EricaParams { ccr_on_grid: on_grid, ..p() });
            e.on_forward_rm(1, &frm(fs));
            // 45 cells over 100 ms: z = 0.5; VCShare 128.5/0.5 = 257; MaxAllocPrevious 0.
            load(&mut e, 0, 44, &[1, 2, 3, 4, 5, 6, 7]);
            e.on_cell(SimTime(100 * MS), 7, 0);
            assert_eq!((e.measure().unwrap().z, e.measure().unwrap().active), (0.5, 7));
            let mut b = brm(4096.0);
            e.on_backward_rm(SimTime(100 * MS), 1, &mut b, 0);
            // Exact: 128.5 < 128.571 → the fair share. On the grid: 128.5 is not below
            // 128.5 → VCShare 257 = 256·(1 + 2/512), on the grid.
            let want = if on_grid { 257.0 } else { 128.5 };
            assert_eq!(b.er.cells_per_s(), want, "ccr_on_grid = {on_grid}");
        }
    }

    /// `per_vc_ccr`: VC 1 claims CCR 600 cells/s but sent 20 cells in the 100 ms
    /// interval (200 cells/s, source-limited); VC 2 sent 70 (700 cells/s). z = 90/90 =
    /// 1 (not above 1 + δ); fair share 450. From CCR, VC 1's VCShare is 600 and lifts
    /// MaxAllocCurrent to 600; measured, its VCShare is 200 (ER = the fair share) and
    /// MaxAllocCurrent stays at VC 2's 700. A VC with no cell in the interval is
    /// measured at 0.
    #[test]
    fn per_vc_ccr_measures_the_rate_not_the_claim() {
        for per_vc in [false, true] {
            let mut e = Erica::new(EricaParams { per_vc_ccr: per_vc, ..p() });
            e.on_forward_rm(1, &frm(600.0));
            e.on_forward_rm(2, &frm(700.0));
            for k in 0..90u64 {
                let vc = if k % 9 < 2 { 1 } else { 2 };
                e.on_cell(SimTime(k * 100 * MS / 90 + 1), vc, 0);
            }
            e.on_cell(SimTime(100 * MS), 2, 0);
            let m = e.measure().unwrap();
            assert!((m.z - 91.0 * 10.0 / 900.0).abs() < 1e-12, "{m:?}");
            let mut b1 = brm(4096.0);
            e.on_backward_rm(SimTime(100 * MS), 1, &mut b1, 0);
            // CCR 600/z or 200/z (z = 1.0111): the latter is below the fair share 450.
            let want1 = if per_vc { RmRate::from_cells_per_s(450.0) } else { RmRate::from_cells_per_s(600.0 / m.z) };
            assert_eq!(b1.er, want1, "per_vc_ccr = {per_vc}");
            let mut b2 = brm(4096.0);
            e.on_backward_rm(SimTime(100 * MS), 2, &mut b2, 0);
            // VC 2: 71 cells measured (710/z = 702.2) or CCR 700/z = 692.3.
            let want2 = if per_vc { 710.0 / m.z } else { 700.0 / m.z };
            assert_eq!(b2.er, RmRate::from_cells_per_s(want2), "per_vc_ccr = {per_vc}");
            // Next interval: only VC 2 sends (90 cells, z = 1, fair share 900).
            for k in 0..89u64 {
                e.on_cell(SimTime(100 * MS + k * 100 * MS / 89 + 1), 2, 0);
            }
            e.on_cell(SimTime(200 * MS), 2, 0);
            let mut b3 = brm(4096.0);
            e.on_backward_rm(SimTime(200 * MS), 3, &mut b3, 0);
            // VC 3 never sent: measured 0 (or no CCR): ER = max(fair share 900,
            // MaxAllocPrevious) = 900, the capacity, either way.
            assert_eq!(b3.er, RmRate::from_cells_per_s(900.0));
        }
    }

    /// `single_feedback`: in one interval z = 2; VC 1 at CCR 1600 gets 800 at its
    /// first backward RM cell. Its source follows (forward RM cell with CCR 800) and a
    /// second backward RM cell in the same interval gets 800 again with the option,
    /// 800/2 = 400 → the fair share 450 without it (divided by z twice).
    #[test]
    fn single_feedback_gives_one_er_per_interval() {
        for single in [false, true] {
            let mut e = Erica::new(EricaParams { single_feedback: single, ..p() });
            e.on_forward_rm(1, &frm(1536.0));
            load(&mut e, 0, 179, &[1, 2]);
            e.on_cell(SimTime(100 * MS), 2, 0);
            assert_eq!(e.measure().unwrap().z, 2.0);
            let mut b1 = brm(4096.0);
            e.on_backward_rm(SimTime(100 * MS + 1), 1, &mut b1, 0);
            assert_eq!(b1.er.cells_per_s(), 768.0);
            e.on_forward_rm(1, &frm(768.0));
            let mut b2 = brm(4096.0);
            e.on_backward_rm(SimTime(100 * MS + 2), 1, &mut b2, 0);
            let want = if single { RmRate::from_cells_per_s(768.0) } else { RmRate::from_cells_per_s(450.0) };
            assert_eq!(b2.er, want, "single_feedback = {single}");
            // A lower ER already in the cell still wins.
            let mut b3 = brm(100.0);
            e.on_backward_rm(SimTime(100 * MS + 3), 1, &mut b3, 0);
            assert_eq!(b3.er.cells_per_s(), 100.0);
            // The next interval computes afresh: z = 1 → ER = max(450, 768, MaxAllocPrevious).
            load(&mut e, 100, 89, &[1, 2]);
            e.on_cell(SimTime(200 * MS), 2, 0);
            let mut b4 = brm(4096.0);
            e.on_backward_rm(SimTime(200 * MS), 1, &mut b4, 0);
            assert!(b4.er.cells_per_s() >= 767.0, "{:?}", b4.er.cells_per_s());
        }
    }

    #[test]
    fn nothing_measured_leaves_er() {
        let mut e = Erica::new(p());
        let mut b = brm(4096.0);
        e.on_backward_rm(SimTime(MS), 1, &mut b, 0);
        assert_eq!(b.er.cells_per_s(), 4096.0);
    }

    #[test]
    fn interval_measures_overload_and_fair_share() {
        let mut e = Erica::new(p());
        // 180 cells in 100 ms from two VCs: 1800 cells/s against 900 of capacity.
        load(&mut e, 0, 180, &[1, 2]);
        e.on_cell(SimTime(100 * MS), 1, 0);
        let m = e.measure().unwrap();
        assert_eq!(m.capacity, 900.0);
        assert_eq!(m.active, 2);
        assert_eq!(m.fair_share, 450.0);
        assert_eq!(m.z, 1810.0 / 900.0);
    }

    /// CBR/VBR cells are taken off the link before the target utilisation applies:
    /// 20 of them in 100 ms on a 1000 cells/s link leave 800, so the ABR capacity is
    /// 0.9 · 800 = 720 (not 900); 90 ABR cells give z = 900/720 = 1.25 and a fair
    /// share of 360 for two VCs; VC 1 at CCR 600 gets VCShare 600/1.25 = 480.
    #[test]
    fn capacity_is_net_of_non_abr_traffic() {
        let mut e = Erica::new(p());
        e.on_forward_rm(1, &frm(600.0));
        for k in 0..20 {
            e.on_other_cell(SimTime(k * 5 * MS), 0);
        }
        load(&mut e, 0, 89, &[1, 2]);
        assert_eq!(e.measure(), None);
        e.on_cell(SimTime(100 * MS), 1, 0);
        let m = e.measure().unwrap();
        assert!((m.non_abr - 200.0).abs() < 1e-9 && (m.capacity - 720.0).abs() < 1e-9, "{m:?}");
        assert!((m.z - 1.25).abs() < 1e-12 && (m.fair_share - 360.0).abs() < 1e-9, "{m:?}");
        let mut b = brm(4096.0);
        e.on_backward_rm(SimTime(100 * MS), 1, &mut b, 0);
        assert_eq!(b.er.cells_per_s(), 480.0);
        // The next interval without CBR: the whole 0.9 · 1000 again.
        load(&mut e, 100, 89, &[1, 2]);
        e.on_cell(SimTime(200 * MS), 1, 0);
        let m = e.measure().unwrap();
        assert_eq!((m.non_abr, m.capacity), (0.0, 900.0));
    }

    /// Non-ABR traffic above the line rate leaves ABR nothing: capacity 0, z infinite
    /// (not NaN), and every backward RM cell gets ER = 0 (the source then falls to MCR).
    #[test]
    fn no_capacity_left_gives_er_zero() {
        let mut e = Erica::new(p());
        e.on_forward_rm(1, &frm(600.0));
        for k in 0..110 {
            e.on_other_cell(SimTime(k * 100 * MS / 110), 0);
        }
        e.on_cell(SimTime(100 * MS), 1, 0);
        let m = e.measure().unwrap();
        assert_eq!((m.capacity, m.z, m.fair_share), (0.0, f64::INFINITY, 0.0));
        let mut b = brm(4096.0);
        e.on_backward_rm(SimTime(100 * MS), 1, &mut b, 0);
        assert_eq!(b.er.cells_per_s(), 0.0);
    }

    #[test]
    fn overload_gives_max_of_fair_share_and_vc_share() {
        let mut e = Erica::new(p());
        e.on_forward_rm(1, &frm(1536.0));
        e.on_forward_rm(2, &frm(256.0));
        // 179 + 1 cells in 100 ms: z = 2 exactly.
        load(&mut e, 0, 179, &[1, 2]);
        e.on_cell(SimTime(100 * MS), 2, 0);
        assert_eq!(e.measure().unwrap().z, 2.0);
        let mut b1 = brm(4096.0);
        e.on_backward_rm(SimTime(100 * MS), 1, &mut b1, 0);
        // VCShare 768 > fair share 450; CCR 1536 ≥ 450.
        assert_eq!(b1.er.cells_per_s(), 768.0);
        let mut b2 = brm(4096.0);
        e.on_backward_rm(SimTime(100 * MS), 2, &mut b2, 0);
        // VCShare 128 < fair share 450 (RM format: 450 = 256·(1 + 388/512) → 449.5).
        assert_eq!(b2.er, RmRate::from_cells_per_s(450.0));
        // An ER already lower in the cell stays.
        let mut b3 = brm(64.0);
        e.on_backward_rm(SimTime(100 * MS), 1, &mut b3, 0);
        assert_eq!(b3.er.cells_per_s(), 64.0);
    }

    #[test]
    fn underload_uses_max_alloc_previous_and_caps_at_capacity() {
        let mut e = Erica::new(p());
        e.on_forward_rm(1, &frm(400.0));
        e.on_forward_rm(2, &frm(10.0));
        // Interval 1: 45 cells over 100 ms from two VCs → z = 0.5, fair share 450.
        load(&mut e, 0, 44, &[1, 2]);
        e.on_cell(SimTime(100 * MS), 2, 0);
        let m = e.measure().unwrap();
        assert_eq!((m.z, m.fair_share), (0.5, 450.0));
        // VC 1: VCShare 800; ER 800 > 450 but CCR 400 < 450 → fair share.
        let mut b1 = brm(4096.0);
        e.on_backward_rm(SimTime(100 * MS), 1, &mut b1, 0);
        assert_eq!(b1.er, RmRate::from_cells_per_s(450.0));
        // VC 3 ran at 500 (≥ fair share): VCShare 1000, capped at capacity 900.
        e.on_forward_rm(3, &frm(500.0));
        let mut b3 = brm(4096.0);
        e.on_backward_rm(SimTime(100 * MS), 3, &mut b3, 0);
        assert_eq!(b3.er, RmRate::from_cells_per_s(900.0));
        // Interval 2: MaxAllocPrevious = 900 (the largest ER given, capped), so a VC at
        // CCR 460 ≥ fair share (VCShare 460) is offered 900.
        // Interval 2: 90 cells, z = 1 (not above 1 + δ).
        load(&mut e, 100, 89, &[1, 2]);
        e.on_cell(SimTime(200 * MS), 2, 0);
        assert_eq!(e.measure().unwrap().z, 1.0);
        e.on_forward_rm(4, &frm(460.0));
        let mut b4 = brm(4096.0);
        e.on_backward_rm(SimTime(200 * MS), 4, &mut b4, 0);
        assert_eq!(b4.er, RmRate::from_cells_per_s(900.0));
    }

    #[test]
    fn averaging_in_cells() {
        let mut e = Erica::new(EricaParams { averaging: Averaging::Cells(10), ..p() });
        for k in 0..9 {
            e.on_cell(SimTime((k + 1) * MS), 1, 0);
        }
        assert_eq!(e.intervals, 0);
        e.on_cell(SimTime(10 * MS), 1, 0);
        assert_eq!(e.intervals, 1);
        // 10 cells in 10 ms = 1000 cells/s over 900.
        assert!((e.measure().unwrap().z - 1000.0 / 900.0).abs() < 1e-12);
    }

    #[test]
    fn erica_plus_fraction_is_a_above_one_below_and_qdlf_at_most() {
        let q = QueueControl { target_delay: SimDuration(MS), a: 1.15, b: 1.05, qdlf: 0.5 };
        assert!((q.fraction(0.0) - 1.15).abs() < 1e-12);
        assert!((q.fraction(0.001) - 1.0).abs() < 1e-12);
        // Tq = 2·T0: 1.05/(0.05·2 + 1) = 1.05/1.1.
        assert!((q.fraction(0.002) - 1.05 / 1.1).abs() < 1e-12);
        // Tq = T0/2: 1.15/(0.15·0.5 + 1).
        assert!((q.fraction(0.0005) - 1.15 / 1.075).abs() < 1e-12);
        assert_eq!(q.fraction(1.0), 0.5);
    }

    #[test]
    fn erica_plus_capacity_follows_the_queue() {
        let q = QueueControl { target_delay: SimDuration(10 * MS), a: 1.15, b: 1.05, qdlf: 0.5 };
        let mut e = Erica::new(EricaParams { queue_control: Some(q), target_utilisation: 1.0, ..p() });
        load(&mut e, 0, 99, &[1]);
        // 1000 cells queued at 1000 cells/s: Tq = 1 s ≫ T0 → f = QDLF.
        e.on_cell(SimTime(100 * MS), 1, 1000);
        assert_eq!(e.measure().unwrap().capacity, 500.0);
        load(&mut e, 100, 99, &[1]);
        e.on_cell(SimTime(200 * MS), 1, 0);
        assert!((e.measure().unwrap().capacity - 1150.0).abs() < 1e-9);
    }

    #[test]
    fn validate_names_the_bad_key() {
        assert_eq!(EricaParams { target_utilisation: 0.0, ..p() }.validate().unwrap_err().key, "target_utilisation");
        assert_eq!(EricaParams { averaging: Averaging::Cells(0), ..p() }.validate().unwrap_err().key, "averaging_cells");
        let q = QueueControl { target_delay: SimDuration(MS), a: 1.15, b: 1.05, qdlf: 0.0 };
        assert_eq!(EricaParams { queue_control: Some(q), ..p() }.validate().unwrap_err().key, "qdlf");
        assert_eq!(p().validate(), Ok(()));
    }
}
