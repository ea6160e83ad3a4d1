//! The ABR destination end system of ATM Forum TM 4.0 (af-tm-0056.000) section
//! 5.10.5, as a sans-IO state machine.
//!
//! ```text
//!   data cell (EFCI bit) ──> on_data(now, efci) ──> Some(BECN RM cell) (option)
//!   forward RM cell ───────> turn_around(rm) ─────> backward RM cell
//! ```
//!
//! - Rule 1: the EFCI bit of each data cell received is kept as the connection's EFCI
//!   state.
//! - Rule 2: a forward RM cell is turned around: DIR becomes backward, BN = 0, the
//!   other fields as received, except that CI is set when the EFCI state is set, and
//!   the state is then cleared.
//! - Rule 3 (a turned-around cell still waiting when the next forward one comes is
//!   overwritten) does not arise here: this destination sends each backward RM cell as
//!   it is made, it has no rate of its own to wait for.
//! - Backward explicit congestion notification (optional, the destination's rule 5):
//!   a destination may make a backward RM cell of its own, BN = 1 and CI = 1, at most
//!   10 per second per connection. It does so here when a data cell arrives with EFCI
//!   set (the congestion it sees), filling ER, CCR and MCR from the last forward RM cell
//!   (ER = PCR of that cell; none sent before the first forward RM cell).

use atmsim_kernel::{SimDuration, SimTime};
use atmsim_wire::rm::RmRepr;

/// At most 10 BECN cells per second per connection (TM 4.0).
pub const BECN_MIN_GAP: SimDuration = SimDuration(100_000_000_000);

/// Counts since the warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbrDestStats {
    pub turned: u64,
    pub ci_set: u64,
    pub becn: u64,
}

/// One ABR connection's destination end.
#[derive(Clone, Debug, Default)]
pub struct AbrDest {
    efci: bool,
    becn: bool,
    last_frm: Option<RmRepr>,
    last_becn: Option<SimTime>,
    pub stats: AbrDestStats,
}

impl AbrDest {
    /// A destination; `becn` turns backward explicit congestion notification on.
    pub fn new(becn: bool) -> AbrDest {
        AbrDest { becn, ..Default::default() }
    }

    /// The connection's EFCI state (rule 1).
    pub fn efci_state(&self) -> bool {
        self.efci
    }

    /// Rule 1, and the BECN option: a data cell arrives with its EFCI bit.
    pub fn on_data(&mut self, now: SimTime, efci: bool) -> Option<RmRepr> {
        self.efci = efci;
        if !(self.becn && efci) {
            return None;
        }
        let frm = self.last_frm?;
        if self.last_becn.is_some_and(|t| now.since(t) < BECN_MIN_GAP) {
            return None;
        }
        self.last_becn = Some(now);
        self.stats.becn += 1;
        Some(RmRepr { backward: true, bn: true, ci: true, ni: false, ..frm })
    }

    /// Rule 2: the backward RM cell for a forward one.
    pub fn turn_around(&mut self, rm: &RmRepr) -> RmRepr {
        self.last_frm = Some(*rm);
        let ci = rm.ci || self.efci;
        if self.efci {
            self.stats.ci_set += 1;
            self.efci = false;
        }
        self.stats.turned += 1;
        RmRepr { backward: true, bn: false, ci, ..*rm }
    }

    pub fn reset_stats(&mut self) {
        self.stats = AbrDestStats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_wire::rm::RmRate;

    fn frm() -> RmRepr {
        RmRepr { protocol_id: 1, backward: false, bn: false, ci: false, ni: true, ra: false, er: RmRate(0x5000), ccr: RmRate(0x4c00), mcr: RmRate(0x4200), ql: 7, sn: 9 }
    }

    #[test]
    fn turns_around_keeping_the_fields() {
        let mut d = AbrDest::new(false);
        let b = d.turn_around(&frm());
        assert_eq!(b, RmRepr { protocol_id: 1, backward: true, bn: false, ci: false, ni: true, ra: false, er: RmRate(0x5000), ccr: RmRate(0x4c00), mcr: RmRate(0x4200), ql: 7, sn: 9 });
    }

    #[test]
    fn ci_follows_the_last_data_cell_and_is_cleared() {
        let mut d = AbrDest::new(false);
        assert_eq!(d.on_data(SimTime(1), true), None);
        assert!(d.turn_around(&frm()).ci);
        assert!(!d.efci_state());
        assert!(!d.turn_around(&frm()).ci, "the state was cleared by the turn-around");
        // Only the last data cell counts.
        d.on_data(SimTime(2), true);
        d.on_data(SimTime(3), false);
        assert!(!d.turn_around(&frm()).ci);
        // A CI already set by a switch stays set.
        assert!(d.turn_around(&RmRepr { ci: true, ..frm() }).ci);
        assert_eq!(d.stats, AbrDestStats { turned: 4, ci_set: 1, becn: 0 });
    }

    #[test]
    fn becn_at_most_ten_per_second_after_a_forward_rm_cell() {
        let ms = |m: u64| SimTime(m * 1_000_000_000);
        let mut d = AbrDest::new(true);
        assert_eq!(d.on_data(ms(0), true), None, "no forward RM cell seen yet");
        d.turn_around(&frm());
        let b = d.on_data(ms(1), true).unwrap();
        assert!(b.backward && b.bn && b.ci && !b.ni);
        assert_eq!((b.er, b.ccr, b.mcr), (frm().er, frm().ccr, frm().mcr));
        assert_eq!(d.on_data(ms(100), true), None, "99 ms after the last");
        assert!(d.on_data(ms(101), true).is_some());
        assert_eq!(d.on_data(ms(300), false), None, "EFCI clear");
        assert_eq!(AbrDest::new(false).on_data(ms(0), true), None);
    }
}
