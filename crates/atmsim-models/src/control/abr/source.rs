//! The ABR source end system of ATM Forum TM 4.0 (af-tm-0056.000) section 5.10.4,
//! rules 1–13, as a sans-IO state machine: it takes `now` and what is waiting, says
//! which cell goes next and when the next in-rate cell may go, and takes backward RM
//! cells. It never reads a clock and sends nothing itself.
//!
//! ```text
//!   data waiting ─┐                         ┌─> Send::ForwardRm(RmRepr) / BackwardRm / Data
//!   BRM waiting  ─┼─> send(now, …) ─────────┤   next_send_at(): last + 1/ACR
//!   backward RM ──┴─> on_backward_rm(…)     └─> out_of_rate_at(): out-of-rate FRM at ≤ TCR
//! ```
//!
//! Rules (TM 4.0 numbering): 1 ACR within [MCR, PCR], in-rate cells at most at ACR;
//! 2 ACR starts at ICR and the first in-rate cell is a forward RM cell; 3 the order
//! of in-rate cells (a forward RM cell after Nrm − 1 cells, or after at least Mrm
//! cells once Trm has passed; a waiting backward RM cell once per forward RM interval,
//! or whenever no data waits; data otherwise); 4 in-rate cells have CLP = 0 and
//! 12 data cells leave with EFCI = 0 (both the adapter's: it builds the cells);
//! 5 ADTF: before an in-rate forward RM cell, if ACR > ICR and more than ADTF passed
//! since the last one, ACR falls to ICR ([`Timeout`]); 6 CRM: before an in-rate
//! forward RM cell, if CRM of them went out since the last backward RM cell with
//! BN = 0, ACR falls by CDF·ACR (not below MCR); 7 the forward RM cell carries the
//! ACR so computed in CCR; 8 a backward RM cell with CI = 1 decreases ACR by RDF·ACR
//! (not below MCR; see [`Decrease`]), with CI = 0 and NI = 0 increases it by RIF·PCR
//! (not above PCR), with NI = 1 leaves it; 9 then ACR = max(MCR, min(ACR, ER));
//! 10 forward RM cells carry DIR = 0, BN = CI = NI = 0, ER = PCR, CCR = ACR, MCR;
//! 11 out-of-rate forward RM cells at most at TCR (sent here only while the next
//! in-rate chance is further away than 1/TCR, so that a source held at a very low
//! ACR still learns of increases); 13 use-it-or-lose-it is rule 5's ADTF.

use atmsim_kernel::{SimDuration, SimTime};
use atmsim_wire::rm::{RmRate, RmRepr, PROTOCOL_ABR};

use super::params::{AbrParams, Decrease, Timeout};

/// What the source sends in its next in-rate cell slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Send {
    /// A forward RM cell with these fields.
    ForwardRm(RmRepr),
    /// The backward RM cell that was waiting (the caller's, for the reverse direction).
    BackwardRm,
    Data,
}

/// Counts since the warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbrSourceStats {
    pub frm_sent: u64,
    pub frm_out_of_rate: u64,
    pub brm_received: u64,
    pub data_sent: u64,
}

/// One ABR connection's source end.
#[derive(Clone, Debug)]
pub struct AbrSource {
    p: AbrParams,
    /// Allowed cell rate (cells/s).
    acr: f64,
    /// The first in-rate forward RM cell has gone (rule 2).
    started: bool,
    /// In-rate cells sent since the last in-rate forward RM cell.
    since_frm: u32,
    /// An in-rate backward RM cell went since the last in-rate forward RM cell.
    brm_since_frm: bool,
    last_frm: SimTime,
    /// The last forward RM cell, in-rate or out-of-rate (rule 11).
    last_any_frm: SimTime,
    /// In-rate forward RM cells sent since the last backward RM cell with BN = 0.
    unacked: u32,
    /// Per-cell decrease: the last backward RM cell said CI = 1.
    congested: bool,
    last_send: Option<SimTime>,
    /// `cell_gap(acr)` and the ACR (its bits) it was worked out for: asked for at
    /// every cell, it changes only with feedback (a division and a rounding each time).
    acr_gap: PerAcr<SimDuration>,
    /// `cell_gap(tcr)` (rule 11's out-of-rate spacing).
    tcr_gap: SimDuration,
    pub stats: AbrSourceStats,
}

/// A value worked out from an ACR and kept until the ACR changes (compared bit for bit):
/// the source asks for its cell time, and its adapter for its rate, at every cell,
/// while the ACR changes only with feedback.
#[derive(Clone, Debug)]
pub struct PerAcr<T: Copy>(std::cell::Cell<(u64, T)>);

impl<T: Copy> PerAcr<T> {
    /// Kept: `value`, worked out for `acr`.
    pub fn new(acr: f64, value: T) -> Self {
        PerAcr(std::cell::Cell::new((acr.to_bits(), value)))
    }

    /// The value for `acr`: the kept one, or `work(acr)` (then kept).
    pub fn get(&self, acr: f64, work: impl FnOnce(f64) -> T) -> T {
        let (bits, value) = self.0.get();
        if bits == acr.to_bits() {
            return value;
        }
        let value = work(acr);
        self.0.set((acr.to_bits(), value));
        value
    }
}

/// The time one cell takes at `cells_per_s` (the far future for no rate).
pub fn cell_gap(cells_per_s: f64) -> SimDuration {
    if cells_per_s > 0.0 {
        SimDuration::from_secs_f64(1.0 / cells_per_s).unwrap_or(SimDuration(u64::MAX))
    } else {
        SimDuration(u64::MAX)
    }
}

impl AbrSource {
    /// A source before its first cell, ACR = ICR (rule 2). `p` is validated.
    pub fn new(p: AbrParams) -> AbrSource {
        let acr_gap = PerAcr::new(p.icr, cell_gap(p.icr));
        AbrSource { p, acr: p.icr, started: false, since_frm: 0, brm_since_frm: false, last_frm: SimTime::ZERO, last_any_frm: SimTime::ZERO, unacked: 0, congested: false, last_send: None, acr_gap, tcr_gap: cell_gap(p.tcr), stats: AbrSourceStats::default() }
    }

    /// `cell_gap(acr)`, worked out again only when the ACR has changed.
    fn acr_gap(&self) -> SimDuration {
        self.acr_gap.get(self.acr, cell_gap)
    }

    pub fn params(&self) -> &AbrParams {
        &self.p
    }

    /// The allowed cell rate (cells/s).
    pub fn acr(&self) -> f64 {
        self.acr
    }

    /// The earliest instant of the next in-rate cell: one cell time at the current ACR
    /// after the last (rule 1); immediately before the first.
    pub fn next_send_at(&self) -> SimTime {
        match self.last_send {
            None => SimTime::ZERO,
            Some(t) => t.plus(self.acr_gap()),
        }
    }

    /// Rule 3(a): the next in-rate cell must be a forward RM cell.
    fn frm_due(&self, now: SimTime) -> bool {
        !self.started || self.frm_due_at().is_some_and(|t| t <= now)
    }

    /// From when rule 3(a) makes the next in-rate cell a forward RM cell, whatever
    /// waits (None: not before more cells go, or before the first): at once after
    /// Nrm − 1 in-rate cells, else once Trm has passed since the last in-rate forward
    /// RM cell if at least Mrm cells went since. An idle source's in-rate chances still
    /// carry that cell (TM 4.0 rule 3 is applied at every in-rate chance).
    pub fn frm_due_at(&self) -> Option<SimTime> {
        if !self.started {
            None
        } else if self.since_frm + 1 >= self.p.nrm {
            Some(SimTime::ZERO)
        } else if self.since_frm >= self.p.mrm {
            Some(self.last_frm.plus(self.p.trm))
        } else {
            None
        }
    }

    /// The next in-rate cell at `now` (the caller keeps to [`next_send_at`]), given
    /// whether a data cell and a backward RM cell (of the reverse direction) wait; None
    /// when nothing is to be sent.
    ///
    /// [`next_send_at`]: AbrSource::next_send_at
    pub fn send(&mut self, now: SimTime, data_waiting: bool, brm_waiting: bool) -> Option<Send> {
        if !self.started && !data_waiting && !brm_waiting {
            return None;
        }
        let what = if self.frm_due(now) {
            Send::ForwardRm(self.forward_rm(now))
        } else if brm_waiting && (!self.brm_since_frm || !data_waiting) {
            self.since_frm += 1;
            self.brm_since_frm = true;
            Send::BackwardRm
        } else if data_waiting {
            self.since_frm += 1;
            self.stats.data_sent += 1;
            Send::Data
        } else {
            return None;
        };
        self.last_send = Some(now);
        if self.congested && self.p.decrease == Decrease::PerCell {
            self.acr = (self.acr * (1.0 - self.p.rdf / self.p.nrm as f64)).max(self.p.mcr);
        }
        Some(what)
    }

    /// Rules 5, 6, 7 and 10 for an in-rate forward RM cell sent at `now`.
    fn forward_rm(&mut self, now: SimTime) -> RmRepr {
        if self.started && self.acr > self.p.icr && now.since(self.last_frm) > self.p.adtf {
            self.acr = match self.p.timeout {
                Timeout::ToIcr => self.p.icr,
                Timeout::Fraction(f) => (self.acr * (1.0 - f)).max(self.p.icr),
            };
        }
        if self.unacked >= self.p.crm {
            self.acr = (self.acr - self.acr * self.p.cdf).max(self.p.mcr);
        }
        self.started = true;
        self.unacked = self.unacked.saturating_add(1);
        self.since_frm = 0;
        self.brm_since_frm = false;
        self.last_frm = now;
        self.last_any_frm = now;
        self.stats.frm_sent += 1;
        self.rm_cell()
    }

    fn rm_cell(&self) -> RmRepr {
        RmRepr {
            protocol_id: PROTOCOL_ABR,
            backward: false,
            bn: false,
            ci: false,
            ni: false,
            ra: false,
            er: RmRate::from_cells_per_s(self.p.pcr),
            ccr: RmRate::from_cells_per_s(self.acr),
            mcr: RmRate::from_cells_per_s(self.p.mcr),
            ql: 0,
            sn: 0,
        }
    }

    /// Rule 11: when an out-of-rate forward RM cell may go (None: not needed, the next
    /// in-rate chance comes within 1/TCR of the last forward RM cell, or the source has
    /// not started).
    pub fn out_of_rate_at(&self) -> Option<SimTime> {
        if !self.started {
            return None;
        }
        let at = self.last_any_frm.plus(self.tcr_gap);
        (self.next_send_at() > at).then_some(at)
    }

    /// An out-of-rate forward RM cell sent at `now` (the adapter sends it with CLP = 1).
    /// It counts for neither Nrm nor CRM, and rules 5 and 6 do not run before it.
    pub fn send_out_of_rate(&mut self, now: SimTime) -> RmRepr {
        self.last_any_frm = now;
        self.stats.frm_out_of_rate += 1;
        self.rm_cell()
    }

    /// Rules 8 and 9: a backward RM cell of this connection arrives.
    pub fn on_backward_rm(&mut self, rm: &RmRepr) {
        self.stats.brm_received += 1;
        if !rm.bn {
            self.unacked = 0;
        }
        let p = &self.p;
        if rm.ci {
            match p.decrease {
                Decrease::PerRm => self.acr = (self.acr - self.acr * p.rdf).max(p.mcr),
                Decrease::PerCell => self.congested = true,
            }
        } else {
            self.congested = false;
            if !rm.ni {
                self.acr = (self.acr + p.rif * p.pcr).min(p.pcr);
            }
        }
        self.acr = self.acr.min(rm.er.cells_per_s()).max(p.mcr);
    }

    pub fn reset_stats(&mut self) {
        self.stats = AbrSourceStats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    /// A small connection with round numbers: PCR 1000, ICR 100, MCR 10 cells/s,
    /// RIF = RDF = 1/16, Nrm 8, Mrm 2, Trm 100 ms, ADTF 500 ms, CRM 3, CDF 1/2.
    fn p() -> AbrParams {
        AbrParams { pcr: 1000.0, mcr: 10.0, icr: 100.0, nrm: 8, crm: 3, cdf: 0.5, ..AbrParams::tm40(1000.0) }
    }

    fn t(ms: u64) -> SimTime {
        SimTime(ms * MS)
    }

    fn brm(ci: bool, ni: bool, er: f64) -> RmRepr {
        RmRepr { protocol_id: 1, backward: true, bn: false, ci, ni, ra: false, er: RmRate::from_cells_per_s(er), ccr: RmRate(0), mcr: RmRate(0), ql: 0, sn: 0 }
    }

    fn frm_ccr(s: Option<Send>) -> f64 {
        match s {
            Some(Send::ForwardRm(rm)) => {
                assert!(!rm.backward && !rm.ci && !rm.ni && !rm.bn);
                rm.ccr.cells_per_s()
            }
            other => panic!("expected a forward RM cell, got {other:?}"),
        }
    }

    #[test]
    fn starts_at_icr_with_a_forward_rm_cell_carrying_pcr_and_mcr() {
        let mut s = AbrSource::new(p());
        assert_eq!(s.acr(), 100.0);
        assert_eq!(s.send(t(0), false, false), None, "nothing waiting: nothing sent");
        match s.send(t(0), true, false) {
            Some(Send::ForwardRm(rm)) => {
                assert_eq!(rm.ccr.cells_per_s(), 100.0);
                assert_eq!(rm.er.cells_per_s(), 1000.0);
                assert_eq!(rm.mcr.cells_per_s(), 10.0);
                assert_eq!(rm.protocol_id, 1);
            }
            other => panic!("{other:?}"),
        }
        // The next in-rate cell one cell time at ACR = 100 cells/s later: 10 ms.
        assert_eq!(s.next_send_at(), t(10));
    }

    #[test]
    fn the_next_chance_follows_every_acr_change() {
        // The cell time is kept between cells (`acr_gap`): each feedback that moves
        // ACR must move the next chance with it, and a change back must be seen too.
        let mut s = AbrSource::new(p());
        frm_ccr(s.send(t(0), true, false));
        assert_eq!(s.next_send_at(), t(10), "ICR 100 cells/s");
        s.on_backward_rm(&brm(false, false, 200.0)); // +RIF·PCR = 62.5, under ER
        assert_eq!(s.acr(), 162.5);
        assert_eq!(s.next_send_at(), t(0).plus(cell_gap(162.5)));
        s.on_backward_rm(&brm(false, false, 100.0)); // ER clamps to 100 again
        assert_eq!(s.acr(), 100.0);
        assert_eq!(s.next_send_at(), t(10));
        s.on_backward_rm(&brm(true, false, 1000.0)); // CI: −RDF·ACR
        assert_eq!(s.next_send_at(), t(0).plus(cell_gap(s.acr())));
        assert!(s.next_send_at() > t(10));
    }

    #[test]
    fn a_forward_rm_cell_every_nrm_cells() {
        let mut s = AbrSource::new(p());
        let mut kinds = String::new();
        for k in 0..17u64 {
            let now = SimTime(k * MS); // within Trm throughout
            kinds.push(match s.send(now, true, false) {
                Some(Send::ForwardRm(_)) => 'F',
                Some(Send::Data) => 'd',
                other => panic!("{other:?}"),
            });
        }
        assert_eq!(kinds, "FdddddddFdddddddF");
    }

    #[test]
    fn an_idle_source_knows_from_when_its_next_cell_is_a_forward_rm_cell() {
        let mut s = AbrSource::new(p());
        assert_eq!(s.frm_due_at(), None, "before the first cell");
        frm_ccr(s.send(t(0), true, false));
        assert_eq!(s.send(t(10), true, false), Some(Send::Data));
        assert_eq!(s.frm_due_at(), None, "one cell (< Mrm = 2) since the forward RM cell");
        assert_eq!(s.send(t(20), true, false), Some(Send::Data));
        assert_eq!(s.frm_due_at(), Some(t(100)), "Mrm cells went: Trm after the forward RM cell");
        // Idle (no data) before then: nothing; at Trm: the forward RM cell.
        assert_eq!(s.send(t(60), false, false), None);
        frm_ccr(s.send(t(100), false, false));
        assert_eq!(s.frm_due_at(), None);
        // Nrm - 1 = 7 cells since: due at once, data or not.
        for k in 0..7 {
            assert_eq!(s.send(t(110 + 10 * k), true, false), Some(Send::Data));
        }
        assert_eq!(s.frm_due_at(), Some(SimTime::ZERO));
        frm_ccr(s.send(t(180), false, false));
    }

    #[test]
    fn trm_sends_a_forward_rm_cell_after_mrm_cells() {
        let mut s = AbrSource::new(p());
        frm_ccr(s.send(t(0), true, false));
        assert_eq!(s.send(t(10), true, false), Some(Send::Data));
        // Trm has passed but only one cell (< Mrm = 2) went: data.
        assert_eq!(s.send(t(150), true, false), Some(Send::Data));
        // Two cells went and Trm has passed: a forward RM cell.
        frm_ccr(s.send(t(160), true, false));
        // Just after it, Trm has not passed: data.
        assert_eq!(s.send(t(170), true, false), Some(Send::Data));
        assert_eq!(s.send(t(180), true, false), Some(Send::Data));
        assert_eq!(s.send(t(259), true, false), Some(Send::Data));
        frm_ccr(s.send(t(260), true, false));
    }

    #[test]
    fn idle_source_sends_a_trm_forward_rm_cell_then_stops() {
        let mut s = AbrSource::new(p());
        frm_ccr(s.send(t(0), true, false));
        s.send(t(10), true, false);
        s.send(t(20), true, false);
        assert_eq!(s.send(t(50), false, false), None);
        frm_ccr(s.send(t(120), false, false));
        assert_eq!(s.send(t(400), false, false), None);
    }

    #[test]
    fn backward_rm_cells_interleave_once_per_forward_rm_interval() {
        let mut s = AbrSource::new(p());
        frm_ccr(s.send(t(0), true, true));
        assert_eq!(s.send(t(1), true, true), Some(Send::BackwardRm));
        // A second waiting backward RM cell yields to data ...
        assert_eq!(s.send(t(2), true, true), Some(Send::Data));
        // ... unless no data waits.
        assert_eq!(s.send(t(3), false, true), Some(Send::BackwardRm));
    }

    #[test]
    fn additive_increase_on_ci_0_ni_0_capped_at_pcr() {
        let mut s = AbrSource::new(p());
        s.on_backward_rm(&brm(false, false, 1000.0));
        assert_eq!(s.acr(), 162.5); // 100 + 1000/16
        for _ in 0..20 {
            s.on_backward_rm(&brm(false, false, 1000.0));
        }
        assert_eq!(s.acr(), 1000.0);
    }

    #[test]
    fn no_increase_with_ni() {
        let mut s = AbrSource::new(p());
        s.on_backward_rm(&brm(false, true, 1000.0));
        assert_eq!(s.acr(), 100.0);
    }

    #[test]
    fn multiplicative_decrease_on_ci_floored_at_mcr() {
        let mut s = AbrSource::new(p());
        s.on_backward_rm(&brm(true, false, 1000.0));
        assert_eq!(s.acr(), 93.75); // 100 − 100/16
        for _ in 0..100 {
            s.on_backward_rm(&brm(true, false, 1000.0));
        }
        assert_eq!(s.acr(), 10.0);
    }

    #[test]
    fn er_clamps_acr_but_not_below_mcr() {
        let mut s = AbrSource::new(p());
        // Increase to 162.5, then the ER of 64 cells/s (exact in the RM format) wins.
        s.on_backward_rm(&brm(false, false, 64.0));
        assert_eq!(s.acr(), 64.0);
        s.on_backward_rm(&brm(false, true, 4.0));
        assert_eq!(s.acr(), 10.0);
    }

    #[test]
    fn crm_forward_rm_cells_without_feedback_cut_acr_by_cdf() {
        let mut s = AbrSource::new(p());
        // Forward RM cells only (Nrm − 1 = 7 cells apart); no backward RM cell comes.
        let mut ccrs = Vec::new();
        let mut now = 0;
        for _ in 0..5 {
            ccrs.push(frm_ccr(s.send(SimTime(now), true, false)));
            for _ in 0..7 {
                now += MS;
                assert_eq!(s.send(SimTime(now), true, false), Some(Send::Data));
            }
            now += MS;
        }
        // CRM = 3 went unanswered before the 4th: 100 → 50 → 25 (MCR 10 below).
        assert_eq!(ccrs, vec![100.0, 100.0, 100.0, 50.0, 25.0]);
        // A backward RM cell with BN = 0 resets the count.
        s.on_backward_rm(&brm(false, true, 1000.0));
        assert_eq!(frm_ccr(s.send(SimTime(now), true, false)), 25.0);
    }

    #[test]
    fn becn_cells_do_not_reset_the_crm_count() {
        let mut s = AbrSource::new(AbrParams { crm: 1, ..p() });
        frm_ccr(s.send(t(0), true, false));
        s.on_backward_rm(&RmRepr { bn: true, ..brm(false, true, 1000.0) });
        for k in 1..8 {
            s.send(SimTime(k * MS), true, false);
        }
        assert_eq!(frm_ccr(s.send(t(8), true, false)), 50.0);
    }

    #[test]
    fn adtf_use_it_or_lose_it_returns_to_icr() {
        let mut s = AbrSource::new(p());
        frm_ccr(s.send(t(0), true, false));
        s.on_backward_rm(&brm(false, false, 1000.0));
        s.send(t(10), true, false);
        s.send(t(20), true, false);
        // 500 ms is not more than ADTF: ACR stays.
        assert_eq!(frm_ccr(s.send(t(500), true, false)), 162.5);
        s.send(t(510), true, false);
        s.send(t(520), true, false);
        assert_eq!(frm_ccr(s.send(t(1001), true, false)), 100.0);
    }

    #[test]
    fn tdf_timeout_cuts_a_fraction_but_not_below_icr() {
        let mut s = AbrSource::new(AbrParams { timeout: Timeout::Fraction(0.5), crm: 100, ..p() });
        frm_ccr(s.send(t(0), true, false));
        for _ in 0..20 {
            s.on_backward_rm(&brm(false, false, 1000.0));
        }
        s.send(t(1), true, false);
        s.send(t(2), true, false);
        assert_eq!(frm_ccr(s.send(t(600), true, false)), 500.0);
        s.send(t(601), true, false);
        s.send(t(602), true, false);
        assert_eq!(frm_ccr(s.send(t(1200), true, false)), 250.0);
        s.send(t(1201), true, false);
        s.send(t(1202), true, false);
        assert_eq!(frm_ccr(s.send(t(1800), true, false)), 125.0);
        s.send(t(1801), true, false);
        s.send(t(1802), true, false);
        assert_eq!(frm_ccr(s.send(t(2400), true, false)), 100.0);
    }

    #[test]
    fn per_cell_decrease_runs_until_relief() {
        let mut s = AbrSource::new(AbrParams { decrease: Decrease::PerCell, ..p() });
        frm_ccr(s.send(t(0), true, false));
        s.on_backward_rm(&brm(true, false, 1000.0));
        assert_eq!(s.acr(), 100.0, "no decrease on the RM cell itself");
        s.send(t(10), true, false);
        // RDF/Nrm = 1/128 per cell.
        assert_eq!(s.acr(), 100.0 * (1.0 - 1.0 / 128.0));
        s.send(t(20), true, false);
        assert_eq!(s.acr(), 100.0 * (1.0 - 1.0 / 128.0) * (1.0 - 1.0 / 128.0));
        let before = s.acr();
        s.on_backward_rm(&brm(false, true, 1000.0));
        s.send(t(30), true, false);
        assert_eq!(s.acr(), before);
    }

    #[test]
    fn next_send_follows_the_current_acr() {
        let mut s = AbrSource::new(p());
        frm_ccr(s.send(t(0), true, false));
        assert_eq!(s.next_send_at(), t(10));
        for _ in 0..20 {
            s.on_backward_rm(&brm(false, false, 1000.0));
        }
        assert_eq!(s.next_send_at(), t(1));
    }

    #[test]
    fn out_of_rate_forward_rm_at_tcr_when_acr_is_below_it() {
        let mut s = AbrSource::new(AbrParams { mcr: 0.0, ..p() });
        assert_eq!(s.out_of_rate_at(), None, "not before the first cell");
        frm_ccr(s.send(t(0), true, false));
        assert_eq!(s.out_of_rate_at(), None, "ACR 100 > TCR 10");
        s.on_backward_rm(&brm(false, true, 0.0));
        assert_eq!(s.acr(), 0.0);
        assert_eq!(s.next_send_at(), SimTime(u64::MAX));
        // 1/TCR = 100 ms after the last forward RM cell.
        assert_eq!(s.out_of_rate_at(), Some(t(100)));
        let rm = s.send_out_of_rate(t(100));
        assert_eq!((rm.backward, rm.ccr.cells_per_s()), (false, 0.0));
        assert_eq!(s.out_of_rate_at(), Some(t(200)));
        assert_eq!(s.stats.frm_out_of_rate, 1);
        // The ER comes back: in-rate again.
        s.on_backward_rm(&brm(false, false, 1000.0));
        assert_eq!(s.acr(), 62.5);
        assert_eq!(s.out_of_rate_at(), None);
    }
}
