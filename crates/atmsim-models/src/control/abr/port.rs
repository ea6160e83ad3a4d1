//! One output port's ABR switch algorithm — EFCI, EPRCA or ERICA — as the `abr_mux`
//! kind and the `switch` kind's output ports both run it: the parameters (read once
//! from a component's table, see [`PARAMS`]) and the state that sees the forward cells
//! entering the port's buffer and writes into the backward RM cells of the same VCs.
//!
//! ```text
//!   forward cell of VC v joins the port's buffer ─> on_forward (EPRCA: MACR from a
//!                                                   forward RM cell; ERICA: counts, CCR)
//!   backward RM cell of VC v (same label v) ──────> on_backward (ER, CI written)
//! ```
//!
//! EFCI is the buffer policy's marking (`efci_threshold`); here it does nothing.

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{SimDuration, SimTime};
use atmsim_wire::rm::RmRepr;

use super::eprca::{Eprca, EprcaParams};
use super::erica::{Averaging, Erica, EricaParams, QueueControl};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;

const EPRCA_SRC: &str = "Roberts, ATM Forum 94-0735R1 (EPRCA), 1994";
const ERICA_PLUS_SRC: &str = "Jain et al., ATM Forum 95-1346 (ERICA+) and 96-1172 section 6; Vandalore et al., queue control functions, 1998";

/// The algorithms' parameters (everything but the choice of algorithm).
pub const PARAMS: [ParamSpec; 20] = [
    ParamSpec { name: "av", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.0625"), required: false, help: "EPRCA: averaging factor of MACR (1/16)", source: EPRCA_SRC },
    ParamSpec { name: "dpf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.875"), required: false, help: "EPRCA: down-pressure factor, fair share = DPF·MACR (7/8)", source: EPRCA_SRC },
    ParamSpec { name: "mrf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.25"), required: false, help: "EPRCA: major reduction factor above dqt (1/4)", source: EPRCA_SRC },
    ParamSpec { name: "erf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "EPRCA: explicit reduction factor, while congested the VCs above DPF·MACR are told ERF·MACR (given; absent: they are told DPF·MACR, the fair share)", source: "ATM Forum TM 4.0 appendix I's EPRCA example as cited (ERF = 15/16; its text not read here): docs/models/abr.md, \"EPRCA: the check\"" },
    ParamSpec { name: "qt", ty: ParamType::Size, default: Some("500 cells"), required: false, help: "EPRCA: congestion threshold (queue above it: congested)", source: "atmsim convention: dastangoo96's switch threshold (500 cells); 94-0735R1 leaves it to the implementation" },
    ParamSpec { name: "dqt", ty: ParamType::Size, default: Some("2000 cells"), required: false, help: "EPRCA: heavy congestion threshold (at least qt)", source: "atmsim convention (4·qt); 94-0735R1 leaves it to the implementation" },
    ParamSpec { name: "mark_ci", ty: ParamType::Bool, default: Some("false"), required: false, help: "EPRCA: also set CI on the VCs told to slow down while congested", source: "atmsim convention (ER only, as 94-0735R1's ER switches)" },
    ParamSpec { name: "macr_all", ty: ParamType::Bool, default: Some("false"), required: false, help: "EPRCA: MACR averages every forward RM cell's CCR, congested or not (false: while the queue is above qt only CCRs below MACR)", source: "atmsim option: the two readings of which cells update MACR (docs/models/abr.md, \"EPRCA: the check\")" },
    ParamSpec { name: "target_utilisation", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.9"), required: false, help: "ERICA: share of the line rate ABR may fill (ABR capacity = this · line rate)", source: "atmsim convention: 0.9, the value of ERICA's published simulations (96-1172; not in the seeds, to be checked)" },
    ParamSpec { name: "averaging", ty: ParamType::Time, default: Some("1 ms"), required: false, help: "ERICA: averaging interval, a time", source: "atmsim convention: 1 ms (about 350 OC-3c cell times; 96-1172 leaves it to the implementation)" },
    ParamSpec { name: "ccr_on_grid", ty: ParamType::Bool, default: Some("true"), required: false, help: "ERICA: judge \"CCR below the fair share\" with the fair share rounded down to the RM rate format, as CCR is carried (true reaches max-min shares above a port's fair share; false, exact: a VC sent exactly the fair share is held at it)", source: "TM 4.0 section 5.10.3.1: CCR travels in the 16-bit RM rate format, so a switch knows it only on that grid (docs/models/abr.md, \"ccr_on_grid\")" },
    ParamSpec { name: "delta", ty: ParamType::Float { min: 0.0, max: 10.0 }, default: Some("0.1"), required: false, help: "ERICA: overload margin δ, MaxAllocPrevious used only while z ≤ 1 + δ", source: "atmsim convention: 0.1 (96-1172's example value; not in the seeds, to be checked)" },
    ParamSpec { name: "averaging_cells", ty: ParamType::Size, default: None, required: false, help: "ERICA: averaging interval as a number of ABR cells arrived at the port (given: replaces the time interval `averaging`)", source: "96-1172 (the interval ends after a number of cells or a time; the count is left to the implementation)" },
    ParamSpec { name: "erica_plus", ty: ParamType::Bool, default: Some("false"), required: false, help: "ERICA+: multiply the ABR capacity by the queue control fraction f(Tq) of the queueing delay Tq = queue / line rate (ERICA+ aims at 100% utilisation: set target_utilisation = 1)", source: ERICA_PLUS_SRC },
    ParamSpec { name: "target_delay", ty: ParamType::Time, default: Some("0.5 ms"), required: false, help: "ERICA+: target queueing delay T0 (f = 1 at Tq = T0)", source: "atmsim convention: 0.5 ms (about 177 OC-3c cells); 95-1346 makes T0 a parameter (value not in the seeds)" },
    ParamSpec { name: "queue_a", ty: ParamType::Float { min: 1.0, max: 10.0 }, default: Some("1.15"), required: false, help: "ERICA+: f = a·T0/((a − 1)·Tq + T0) for Tq ≤ T0 (f(0) = a)", source: ERICA_PLUS_SRC },
    ParamSpec { name: "queue_b", ty: ParamType::Float { min: 1.0, max: 10.0 }, default: Some("1.05"), required: false, help: "ERICA+: f = b·T0/((b − 1)·Tq + T0) for Tq > T0", source: ERICA_PLUS_SRC },
    ParamSpec { name: "per_vc_ccr", ty: ParamType::Bool, default: Some("false"), required: false, help: "ERICA: measure each VC's rate at the port (its cells in the last averaging interval / the interval) instead of reading the CCR of its forward RM cells (a source-limited VC's CCR overstates its rate)", source: "Jain et al., ATM Forum 96-1172, section 3 (per-VC CCR measurement option)" },
    ParamSpec { name: "single_feedback", ty: ParamType::Bool, default: Some("false"), required: false, help: "ERICA: one ER per VC per averaging interval: the first backward RM cell of the VC in an interval computes it, the later ones get the same value", source: "Jain et al., ATM Forum 96-1172, section 3 (single feedback in an averaging interval)" },
    ParamSpec { name: "qdlf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.5"), required: false, help: "ERICA+: queue drain limit factor, f never below it", source: "Vandalore et al. 1998 (\"typically QDLF = 0.5\")" },
];

/// What a port running an algorithm reports (at the port's component path).
pub const PROBES: [ProbeSpec; 3] = [
    ProbeSpec { name: "abr_er_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells whose ER this port lowered (count)" },
    ProbeSpec { name: "abr_ci_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells this port set CI on (count)" },
    ProbeSpec { name: "abr_fair_share", unit: "Mb/s", kind: ProbeKind::Gauge, help: "ERICA: fair share of the last interval; EPRCA: DPF·MACR (value, 424 bits per cell)" },
];

/// The algorithm names, as a component's parameters spell them.
/// `erica+`: ERICA with ERICA+ queue control on this port (its `target_delay`,
/// `queue_a`, `queue_b`, `qdlf`), whatever `erica_plus` says — so one switch can run
/// ERICA on one port and ERICA+ on another, and a sweep can put ERICA+ beside the
/// others on one axis.
pub const NAMES: [(&str, Which); 4] = [("efci", Which::Efci), ("eprca", Which::Eprca), ("erica", Which::Erica), ("erica+", Which::EricaPlus)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Efci,
    Eprca,
    Erica,
    EricaPlus,
}

/// [`PARAMS`] bound: EPRCA's and ERICA's settings (ERICA's line rate is the port's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortAbrParams {
    pub eprca: EprcaParams,
    pub target_utilisation: f64,
    pub averaging: SimDuration,
    pub delta: f64,
    pub ccr_on_grid: bool,
    /// ABR cells per averaging interval (None: `averaging`, a time).
    pub averaging_cells: Option<u64>,
    /// ERICA+ queue control (None: plain ERICA).
    pub queue_control: Option<QueueControl>,
    pub per_vc_ccr: bool,
    pub single_feedback: bool,
    /// The queue control an `erica+` port runs (bound whether or not `erica_plus`).
    pub plus: QueueControl,
}

impl PortAbrParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        let plus = QueueControl {
            target_delay: p.need("target_delay", Params::time)?,
            a: p.need("queue_a", Params::float)?,
            b: p.need("queue_b", Params::float)?,
            qdlf: p.need("qdlf", Params::float)?,
        };
        Ok(PortAbrParams {
            eprca: EprcaParams {
                av: p.need("av", Params::float)?,
                dpf: p.need("dpf", Params::float)?,
                mrf: p.need("mrf", Params::float)?,
                erf: p.opt("erf", Params::float)?,
                qt: p.need("qt", Params::cells)?,
                dqt: p.need("dqt", Params::cells)?,
                mark_ci: p.need("mark_ci", Params::bool)?,
                macr_all: p.need("macr_all", Params::bool)?,
            },
            target_utilisation: p.need("target_utilisation", Params::float)?,
            averaging: p.need("averaging", Params::time)?,
            delta: p.need("delta", Params::float)?,
            ccr_on_grid: p.need("ccr_on_grid", Params::bool)?,
            averaging_cells: p.opt("averaging_cells", Params::cells)?,
            per_vc_ccr: p.need("per_vc_ccr", Params::bool)?,
            single_feedback: p.need("single_feedback", Params::bool)?,
            queue_control: match p.need("erica_plus", Params::bool)? {
                false => None,
                true => Some(plus),
            },
            plus,
        })
    }

    /// The algorithm `which` for a port of line rate `link_rate` (cells/s), checked.
    /// `efci_threshold`: the buffer policy's threshold (EFCI needs one).
    pub fn algorithm(&self, which: Which, link_rate: f64, efci_threshold: bool) -> Result<AlgorithmParams, ParamIssue> {
        match which {
            Which::Efci if !efci_threshold => Err(ParamIssue::new("algorithm", "algorithm = \"efci\" needs efci_threshold (dastangoo96: \"500 cells\")")),
            Which::Efci => Ok(AlgorithmParams::Efci),
            Which::Eprca => self.eprca.validate().map(|()| AlgorithmParams::Eprca(self.eprca)),
            Which::Erica | Which::EricaPlus => {
                let queue_control = if which == Which::EricaPlus { Some(self.plus) } else { self.queue_control };
                let averaging = match self.averaging_cells {
                    Some(n) => Averaging::Cells(n),
                    None if self.averaging == SimDuration::ZERO => return Err(ParamIssue::new("averaging", "the averaging interval must be longer than 0 s")),
                    None => Averaging::Time(self.averaging),
                };
                let e = EricaParams { link_rate, target_utilisation: self.target_utilisation, averaging, delta: self.delta, queue_control, ccr_on_grid: self.ccr_on_grid, per_vc_ccr: self.per_vc_ccr, single_feedback: self.single_feedback };
                e.validate().map(|()| AlgorithmParams::Erica(e))
            }
        }
    }
}

/// Which algorithm, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum AlgorithmParams {
    Efci,
    Eprca(EprcaParams),
    Erica(EricaParams),
}

#[derive(Clone, Debug)]
enum Algorithm {
    Efci,
    Eprca(Eprca, f64),
    Erica(Erica),
}

/// One port's algorithm and its counts.
#[derive(Clone, Debug)]
pub struct PortAbr {
    algorithm: Algorithm,
    /// ERICA: backward RM cells whose ER it lowered, since warm-up.
    er_lowered: u64,
    /// The VC labels (sorted) a forward RM cell has been seen of at this port: their
    /// cells are ABR input; the others' are not (CBR, VBR).
    abr_vcs: Vec<u32>,
}

/// The RM fields of a cell's payload if it is a forward RM cell.
pub fn forward_rm(payload: Option<&Payload>) -> Option<RmRepr> {
    match payload {
        Some(&Payload::Rm(rm)) if !rm.backward => Some(rm),
        _ => None,
    }
}

impl PortAbr {
    pub fn new(p: AlgorithmParams) -> PortAbr {
        let algorithm = match p {
            AlgorithmParams::Efci => Algorithm::Efci,
            AlgorithmParams::Eprca(e) => Algorithm::Eprca(Eprca::new(e), e.dpf),
            AlgorithmParams::Erica(e) => Algorithm::Erica(Erica::new(e)),
        };
        PortAbr { algorithm, er_lowered: 0, abr_vcs: Vec::new() }
    }

    /// Whether the algorithm reads forward cells (EFCI does not).
    pub fn reads_forward(&self) -> bool {
        !matches!(self.algorithm, Algorithm::Efci)
    }

    /// A cell of VC `vc` (the label it leaves the port with) joined the port's buffer,
    /// which now holds `queue_len` cells; `rm`: its RM fields if it is a forward RM
    /// cell ([`forward_rm`]). A forward RM cell makes its VC an ABR one: from then on
    /// its cells are the port's ABR input ([`PortAbr::on_forward`]); the cells of the
    /// other VCs (CBR, VBR, and an ABR VC's before its first forward RM cell) load the
    /// link before ABR's share of it ([`PortAbr::on_other`]). The `switch` kind's
    /// output ports and the `abr_mux` kind both come this way.
    pub fn on_join(&mut self, now: SimTime, vc: u32, rm: Option<&RmRepr>, queue_len: u64) {
        let abr = match self.abr_vcs.binary_search(&vc) {
            Ok(_) => true,
            Err(k) if rm.is_some() => {
                self.abr_vcs.insert(k, vc);
                true
            }
            Err(_) => false,
        };
        if abr {
            self.on_forward(now, vc, rm, queue_len);
        } else {
            self.on_other(now, queue_len);
        }
    }

    /// An ABR cell of VC `vc` joined the port's buffer, which now holds `queue_len`
    /// cells; `rm`: its RM fields if it is a forward RM cell.
    pub fn on_forward(&mut self, now: SimTime, vc: u32, rm: Option<&RmRepr>, queue_len: u64) {
        match &mut self.algorithm {
            Algorithm::Efci => {}
            Algorithm::Eprca(e, _) => {
                if let Some(rm) = rm {
                    e.on_forward_rm(rm, queue_len);
                }
            }
            Algorithm::Erica(e) => {
                e.on_cell(now, vc, queue_len);
                if let Some(rm) = rm {
                    e.on_forward_rm(vc, rm);
                }
            }
        }
    }

    /// A cell of a VC that is not ABR (CBR, VBR) joined the port's buffer, which now
    /// holds `queue_len` cells: ERICA takes its rate off the link's.
    pub fn on_other(&mut self, now: SimTime, queue_len: u64) {
        if let Algorithm::Erica(e) = &mut self.algorithm {
            e.on_other_cell(now, queue_len);
        }
    }

    /// A backward RM cell of VC `vc` (whose forward cells join this port's buffer,
    /// which holds `queue_len` cells): ER and CI written into `rm`.
    pub fn on_backward(&mut self, now: SimTime, vc: u32, rm: &mut RmRepr, queue_len: u64) {
        match &mut self.algorithm {
            Algorithm::Efci => {}
            Algorithm::Eprca(e, _) => e.on_backward_rm(rm, queue_len),
            Algorithm::Erica(e) => {
                let before = rm.er;
                e.on_backward_rm(now, vc, rm, queue_len);
                self.er_lowered += u64::from(rm.er < before);
            }
        }
    }

    /// (backward RM cells whose ER was lowered, with CI set) since warm-up.
    pub fn counts(&self) -> (u64, u64) {
        match &self.algorithm {
            Algorithm::Eprca(e, _) => (e.stats.er_lowered, e.stats.ci_set),
            _ => (self.er_lowered, 0),
        }
    }

    /// The fair share the algorithm computes now (cells/s; NaN if none).
    pub fn fair_share(&self) -> f64 {
        match &self.algorithm {
            Algorithm::Efci => f64::NAN,
            Algorithm::Eprca(e, dpf) => e.macr().map_or(f64::NAN, |m| m * dpf),
            Algorithm::Erica(e) => e.measure().map_or(f64::NAN, |m| m.fair_share),
        }
    }

    /// [`PROBES`] at `path`.
    pub fn report(&self, path: &str, out: &mut Report) {
        let (er, ci) = self.counts();
        out.push(path, "abr_er_cells", "count", er as f64, "cells");
        out.push(path, "abr_ci_cells", "count", ci as f64, "cells");
        out.push(path, "abr_fair_share", "value", self.fair_share() * crate::series::MB_PER_CELL, "Mb/s");
    }

    pub fn reset_stats(&mut self) {
        self.er_lowered = 0;
        if let Algorithm::Eprca(e, _) = &mut self.algorithm {
            e.reset_stats();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_wire::rm::RmRate;

    const MS: u64 = 1_000_000_000;

    fn settings() -> PortAbrParams {
        PortAbrParams {
            eprca: EprcaParams { av: 1.0 / 16.0, dpf: 7.0 / 8.0, mrf: 0.25, erf: None, qt: 500, dqt: 2000, mark_ci: false, macr_all: false },
            target_utilisation: 0.9,
            averaging: SimDuration(100 * MS),
            delta: 0.1,
            ccr_on_grid: false,
            averaging_cells: None,
            queue_control: None,
            per_vc_ccr: false,
            single_feedback: false,
            plus: QueueControl { target_delay: SimDuration(MS), a: 1.15, b: 1.05, qdlf: 0.5 },
        }
    }

    /// `erica+` runs the queue control on its port whatever `erica_plus` says;
    /// `erica` runs it only with `erica_plus`.
    #[test]
    fn erica_plus_by_name_runs_the_queue_control() {
        let s = settings();
        let q = |a: &AlgorithmParams| match a {
            AlgorithmParams::Erica(e) => e.queue_control,
            _ => None,
        };
        assert_eq!(q(&s.algorithm(Which::Erica, 1000.0, false).unwrap()), None);
        assert_eq!(q(&s.algorithm(Which::EricaPlus, 1000.0, false).unwrap()), Some(s.plus));
        let on = PortAbrParams { queue_control: Some(s.plus), ..settings() };
        assert_eq!(q(&on.algorithm(Which::Erica, 1000.0, false).unwrap()), Some(s.plus));
        assert_eq!(NAMES.iter().find(|n| n.0 == "erica+").map(|n| n.1), Some(Which::EricaPlus));
    }

    fn frm(ccr: f64) -> RmRepr {
        RmRepr { protocol_id: 1, backward: false, bn: false, ci: false, ni: false, ra: false, er: RmRate::from_cells_per_s(4096.0), ccr: RmRate::from_cells_per_s(ccr), mcr: RmRate(0), ql: 0, sn: 0 }
    }

    /// One code path for the switch port and the multiplexer: VC 7 sends 20 cells and
    /// never a forward RM cell (CBR), so over 100 ms on a 1000 cells/s line it takes
    /// 200 cells/s off: ABR capacity 0.9 · 800 = 720. VC 1's cells count as ABR from its
    /// first forward RM cell on; its one data cell before that counts as VC 7's do.
    #[test]
    fn on_join_takes_non_abr_vcs_off_the_line() {
        let mut a = PortAbr::new(settings().algorithm(Which::Erica, 1000.0, false).unwrap());
        a.on_join(SimTime(0), 1, None, 0);
        for k in 0..19 {
            a.on_join(SimTime(k * 5 * MS), 7, None, 0);
        }
        a.on_join(SimTime(MS), 1, Some(&frm(500.0)), 0);
        for k in 0..88 {
            a.on_join(SimTime(2 * MS + k * MS), 1, None, 0);
        }
        assert!(a.fair_share().is_nan(), "nothing measured before the interval ends");
        a.on_join(SimTime(100 * MS), 1, None, 0);
        // 20 non-ABR cells (19 of VC 7, VC 1's first): 200 cells/s; 90 ABR cells.
        let Algorithm::Erica(e) = &a.algorithm else { panic!("erica") };
        let m = e.measure().unwrap();
        assert!((m.non_abr - 200.0).abs() < 1e-9 && (m.capacity - 720.0).abs() < 1e-9, "{m:?}");
        assert_eq!(m.active, 1, "VC 7 is not an active ABR VC");
        assert!((m.z - 900.0 / 720.0).abs() < 1e-12, "{m:?}");
    }

    /// `erica_plus` binds the queue control function; with 2·T0 of queue when the
    /// interval ends f = b·T0/((b − 1)·2·T0 + T0) = 1.05/1.1 and the capacity that of the line (target
    /// utilisation 1, as ERICA+ aims at full use).
    #[test]
    fn erica_plus_lowers_the_capacity_by_f_of_the_queueing_delay() {
        let q = QueueControl { target_delay: SimDuration(10 * MS), a: 1.15, b: 1.05, qdlf: 0.5 };
        let s = PortAbrParams { queue_control: Some(q), target_utilisation: 1.0, averaging_cells: Some(100), ..settings() };
        let mut a = PortAbr::new(s.algorithm(Which::Erica, 1000.0, false).unwrap());
        a.on_join(SimTime(0), 1, Some(&frm(500.0)), 0);
        for k in 1..99 {
            a.on_join(SimTime(k * MS), 1, None, 10);
        }
        assert!(a.fair_share().is_nan());
        // The 100th cell, 100 ms in: 20 cells queued = 20 ms of delay = 2·T0.
        a.on_join(SimTime(100 * MS), 1, None, 20);
        let want = 1000.0 * 1.05 / 1.1;
        assert!((a.fair_share() - want).abs() < 1e-9, "{} vs {want}", a.fair_share());
        // Then an empty queue: f = a = 1.15, the sources may fill what the queue left.
        for k in 101..200 {
            a.on_join(SimTime(k * MS), 1, None, 0);
        }
        a.on_join(SimTime(200 * MS), 1, None, 0);
        assert!((a.fair_share() - 1150.0).abs() < 1e-9, "{}", a.fair_share());
    }

    #[test]
    fn averaging_cells_zero_is_refused_with_its_key() {
        let s = PortAbrParams { averaging_cells: Some(0), ..settings() };
        assert_eq!(s.algorithm(Which::Erica, 1000.0, false).unwrap_err().key, "averaging_cells");
    }
}
