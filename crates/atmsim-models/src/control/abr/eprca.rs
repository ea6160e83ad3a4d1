//! EPRCA explicit-rate switch with intelligent marking, for one output port, as a
//! sans-IO state machine (Roberts, "Enhanced PRCA (proportional rate-control
//! algorithm)", ATM Forum 94-0735R1, 1994; the selective marking of Siu & Tzeng,
//! "Intelligent congestion control for ABR service in ATM networks", ACM CCR 1995).
//!
//! ```text
//!   forward RM cell (CCR), queue length ──> on_forward_rm ──> MACR
//!   backward RM cell, queue length ───────> on_backward_rm ─> ER (and CI) lowered
//! ```
//!
//! - The port keeps MACR, a running average of the CCRs of the forward RM cells that
//!   cross it: MACR += AV·(CCR − MACR), taken from every cell while the queue is at or
//!   below QT, and only from cells with CCR < MACR while it is above (so that the fast
//!   sources do not pull the average up during congestion: the "intelligent" part).
//!   MACR starts at the first CCR seen.
//! - Congested (queue above QT): a backward RM cell whose CCR is above the fair share
//!   DPF·MACR gets ER = min(ER, DPF·MACR) — or min(ER, ERF·MACR) with the explicit
//!   reduction factor `erf` set (the TM 4.0 appendix I reading: the VCs above DPF·MACR
//!   are told ERF·MACR, ERF = 15/16); only those VCs are told (intelligent marking), and
//!   with `mark_ci` they also get CI = 1 (for sources that ignore ER).
//! - Very congested (queue above DQT): every backward RM cell gets ER = min(ER,
//!   MRF·MACR) and CI = 1.
//!
//! The queue length is the caller's: the port's buffer in cells when the cell crosses.

use atmsim_wire::rm::{RmRate, RmRepr};

use crate::params::ParamIssue;

/// EPRCA's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EprcaParams {
    /// Averaging factor of MACR (94-0735R1: 1/16).
    pub av: f64,
    /// Down-pressure factor: the fair share is DPF·MACR (94-0735R1: 7/8).
    pub dpf: f64,
    /// Major reduction factor when very congested (94-0735R1: 1/4).
    pub mrf: f64,
    /// Explicit reduction factor: while congested a VC above DPF·MACR is told
    /// ERF·MACR (TM 4.0 appendix I's EPRCA example: 15/16); None: it is told DPF·MACR,
    /// the fair share (the OSU survey's reading, as summarised: "ER reduced to the fair share").
    pub erf: Option<f64>,
    /// Congestion threshold (cells).
    pub qt: u64,
    /// Heavy congestion threshold (cells).
    pub dqt: u64,
    /// Also set CI on the VCs told to slow down while congested.
    pub mark_ci: bool,
    /// MACR from every forward RM cell's CCR, congested or not (false: while congested
    /// only from CCRs below MACR, the selective reading).
    pub macr_all: bool,
}

impl EprcaParams {
    pub fn validate(&self) -> Result<(), ParamIssue> {
        for (k, v) in [("av", self.av), ("dpf", self.dpf), ("mrf", self.mrf), ("erf", self.erf.unwrap_or(1.0))] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ParamIssue::new(k, format!("{k} must be in (0, 1]; got {v}")));
            }
        }
        if self.dqt < self.qt {
            return Err(ParamIssue::new("dqt", format!("dqt ({} cells) must be at least qt ({} cells)", self.dqt, self.qt)));
        }
        Ok(())
    }
}

/// Counts since the warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EprcaStats {
    /// Backward RM cells whose ER this port lowered.
    pub er_lowered: u64,
    /// Backward RM cells this port set CI on.
    pub ci_set: u64,
}

#[derive(Clone, Debug)]
pub struct Eprca {
    p: EprcaParams,
    /// Mean allowed cell rate (cells/s); None before the first forward RM cell.
    macr: Option<f64>,
    pub stats: EprcaStats,
}

impl Eprca {
    pub fn new(p: EprcaParams) -> Eprca {
        Eprca { p, macr: None, stats: EprcaStats::default() }
    }

    pub fn macr(&self) -> Option<f64> {
        self.macr
    }

    /// A forward RM cell crosses the port while it holds `queue_len` cells.
    pub fn on_forward_rm(&mut self, rm: &RmRepr, queue_len: u64) {
        let ccr = rm.ccr.cells_per_s();
        let congested = queue_len > self.p.qt;
        self.macr = Some(match self.macr {
            None => ccr,
            Some(m) if !congested || ccr < m || self.p.macr_all => m + self.p.av * (ccr - m),
            Some(m) => m,
        });
    }

    /// A backward RM cell of a VC whose forward cells cross this port; the port holds
    /// `queue_len` cells.
    pub fn on_backward_rm(&mut self, rm: &mut RmRepr, queue_len: u64) {
        let Some(macr) = self.macr else { return };
        let (er, ci) = if queue_len > self.p.dqt {
            (Some(self.p.mrf * macr), true)
        } else if queue_len > self.p.qt && rm.ccr.cells_per_s() > self.p.dpf * macr {
            (Some(self.p.erf.unwrap_or(self.p.dpf) * macr), self.p.mark_ci)
        } else {
            (None, false)
        };
        if let Some(er) = er {
            let er = RmRate::from_cells_per_s(er);
            if er < rm.er {
                rm.er = er;
                self.stats.er_lowered += 1;
            }
        }
        if ci && !rm.ci {
            rm.ci = true;
            self.stats.ci_set += 1;
        }
    }

    pub fn reset_stats(&mut self) {
        self.stats = EprcaStats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> EprcaParams {
        EprcaParams { av: 1.0 / 16.0, dpf: 7.0 / 8.0, mrf: 1.0 / 4.0, erf: None, qt: 100, dqt: 400, mark_ci: false, macr_all: false }
    }

    fn rm(ccr: f64, er: f64) -> RmRepr {
        RmRepr { protocol_id: 1, backward: false, bn: false, ci: false, ni: false, ra: false, er: RmRate::from_cells_per_s(er), ccr: RmRate::from_cells_per_s(ccr), mcr: RmRate(0), ql: 0, sn: 0 }
    }

    #[test]
    fn macr_starts_at_the_first_ccr_and_averages_with_av() {
        let mut e = Eprca::new(p());
        assert_eq!(e.macr(), None);
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        assert_eq!(e.macr(), Some(1024.0));
        e.on_forward_rm(&rm(2048.0, 4096.0), 0);
        assert_eq!(e.macr(), Some(1088.0)); // 1024 + 1024/16
    }

    #[test]
    fn congested_macr_follows_only_lower_rates() {
        let mut e = Eprca::new(p());
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        e.on_forward_rm(&rm(2048.0, 4096.0), 101);
        assert_eq!(e.macr(), Some(1024.0));
        e.on_forward_rm(&rm(512.0, 4096.0), 101);
        assert_eq!(e.macr(), Some(992.0)); // 1024 − 512/16
    }

    /// `macr_all`: a congested port averages the higher CCRs too.
    #[test]
    fn macr_all_averages_every_ccr_when_congested() {
        let mut e = Eprca::new(EprcaParams { macr_all: true, ..p() });
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        e.on_forward_rm(&rm(2048.0, 4096.0), 101);
        assert_eq!(e.macr(), Some(1088.0)); // 1024 + 1024/16, congested
        e.on_forward_rm(&rm(64.0, 4096.0), 101);
        assert_eq!(e.macr(), Some(1024.0)); // 1088 − (1088 − 64)/16
    }

    #[test]
    fn no_macr_no_marking_and_uncongested_leaves_er() {
        let mut e = Eprca::new(p());
        let mut b = rm(2048.0, 4096.0);
        e.on_backward_rm(&mut b, 1000);
        assert_eq!(b, rm(2048.0, 4096.0));
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        e.on_backward_rm(&mut b, 100);
        assert_eq!(b, rm(2048.0, 4096.0), "at QT is not above it");
    }

    #[test]
    fn congested_lowers_er_to_dpf_macr_only_above_the_fair_share() {
        let mut e = Eprca::new(p());
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        // Fair share 7/8 · 1024 = 896 cells/s.
        let mut fast = rm(1024.0, 4096.0);
        e.on_backward_rm(&mut fast, 101);
        assert_eq!(fast.er.cells_per_s(), 896.0);
        assert!(!fast.ci);
        let mut slow = rm(800.0, 4096.0);
        e.on_backward_rm(&mut slow, 101);
        assert_eq!(slow.er.cells_per_s(), 4096.0);
        // An ER already lower stays.
        let mut low = rm(1024.0, 512.0);
        e.on_backward_rm(&mut low, 101);
        assert_eq!(low.er.cells_per_s(), 512.0);
        assert_eq!(e.stats, EprcaStats { er_lowered: 1, ci_set: 0 });
    }

    /// `erf`: a congested port tells the VCs above DPF·MACR ERF·MACR, and leaves the
    /// VCs at or below DPF·MACR alone, as without it.
    #[test]
    fn erf_tells_the_fast_vcs_erf_macr() {
        let mut e = Eprca::new(EprcaParams { erf: Some(15.0 / 16.0), ..p() });
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        // DPF·MACR = 896 cells/s decides who is told; ERF·MACR = 960 is what they are told.
        let mut fast = rm(900.0, 4096.0);
        e.on_backward_rm(&mut fast, 101);
        assert_eq!(fast.er.cells_per_s(), 960.0);
        let mut at_share = rm(896.0, 4096.0);
        e.on_backward_rm(&mut at_share, 101);
        assert_eq!(at_share.er.cells_per_s(), 4096.0);
        // Not congested: nobody is told.
        let mut quiet = rm(2048.0, 4096.0);
        e.on_backward_rm(&mut quiet, 100);
        assert_eq!(quiet.er.cells_per_s(), 4096.0);
        // Very congested: MRF·MACR for all, ERF plays no part.
        let mut slow = rm(100.0, 4096.0);
        e.on_backward_rm(&mut slow, 401);
        assert_eq!(slow.er.cells_per_s(), 256.0);
        assert_eq!(e.stats, EprcaStats { er_lowered: 2, ci_set: 1 });
    }

    #[test]
    fn mark_ci_tells_the_fast_vcs_with_ci_too() {
        let mut e = Eprca::new(EprcaParams { mark_ci: true, ..p() });
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        let mut fast = rm(1024.0, 4096.0);
        e.on_backward_rm(&mut fast, 101);
        assert!(fast.ci);
        let mut slow = rm(800.0, 4096.0);
        e.on_backward_rm(&mut slow, 101);
        assert!(!slow.ci);
    }

    #[test]
    fn very_congested_cuts_every_vc_to_mrf_macr_with_ci() {
        let mut e = Eprca::new(p());
        e.on_forward_rm(&rm(1024.0, 4096.0), 0);
        let mut slow = rm(100.0, 4096.0);
        e.on_backward_rm(&mut slow, 401);
        assert_eq!(slow.er.cells_per_s(), 256.0);
        assert!(slow.ci);
    }

    #[test]
    fn validate_names_the_bad_key() {
        assert_eq!(EprcaParams { dqt: 50, ..p() }.validate().unwrap_err().key, "dqt");
        assert_eq!(EprcaParams { av: 0.0, ..p() }.validate().unwrap_err().key, "av");
        assert_eq!(EprcaParams { erf: Some(1.5), ..p() }.validate().unwrap_err().key, "erf");
        assert_eq!(p().validate(), Ok(()));
    }
}
