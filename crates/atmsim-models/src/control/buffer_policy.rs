//! What a cell buffer may do besides tail drop: early and partial packet discard for
//! AAL5 traffic (Romanow & Floyd, "Dynamics of TCP traffic over ATM networks", IEEE
//! JSAC 1995; the EPD/PPD options of SPEC section 3), and EFCI marking above a queue
//! threshold (ATM Forum TM 4.0 EFCI switches; dastangoo96: threshold 500 cells).
//!
//! - **EPD** (`epd_threshold`): when the first cell of an AAL5 PDU arrives and the buffer
//!   already holds at least the threshold (the cell in transmission included), the whole
//!   PDU is discarded, its last cell too; a PDU whose first cell was accepted is never
//!   discarded by EPD.
//! - **PPD** (`ppd`): once a cell of a PDU is lost to a full buffer, the rest of that
//!   PDU is discarded except its last cell, which is offered to the buffer so that the
//!   receiver still sees the PDU's end.
//! - **EFCI** (`efci_threshold`): a cell leaving the buffer while it holds more than the
//!   threshold (the leaving cell included) gets the EFCI bit of its PTI set
//!   ([`FLAG_EFCI`]); marking at departure gives the destination the latest state.
//! - **Selective cell discard** (`clp_threshold`; partial buffer sharing, Kröner,
//!   Hébuterne, Boyer & Gravey, "Priority management in ATM switching nodes", IEEE JSAC
//!   9(3), 1991; the CLP bit of ITU-T I.150/I.371): a cell with CLP = 1 (low priority:
//!   tagged by usage parameter control, or sent so) arriving at a buffer that already
//!   holds at least the threshold (the cell in transmission included) is discarded;
//!   CLP = 0 cells may use the whole buffer. An AAL5 cell discarded so counts as lost
//!   for PPD (the rest of its PDU goes but the last cell); EPD's and PPD's own
//!   discards come first.
//!
//! PDUs are followed per VC label as the cells arrive at this buffer, and only for AAL5
//! cells (`pdu_cells > 0`); cell-level sources' cells see tail drop, selective discard
//! and EFCI only.

use atmsim_kernel::ByFlow;
use std::collections::HashMap;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec};

use crate::cell::{Cell, FLAG_CLP, FLAG_EFCI};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

pub const PARAMS: [ParamSpec; 4] = [
    ParamSpec { name: "epd_threshold", ty: ParamType::Size, default: None, required: false, help: "early packet discard: a new AAL5 PDU arriving at a buffer this full (or fuller) is discarded whole (default: no EPD)", source: "Romanow & Floyd 1995; SPEC section 3 (EPD option)" },
    ParamSpec { name: "ppd", ty: ParamType::Bool, default: Some("false"), required: false, help: "partial packet discard: after a cell of an AAL5 PDU is lost to a full buffer, drop the rest of it but its last cell", source: "Romanow & Floyd 1995; SPEC section 3 (PPD option)" },
    ParamSpec { name: "efci_threshold", ty: ParamType::Size, default: None, required: false, help: "EFCI marking: cells leaving while the buffer holds more than this get the EFCI bit (default: no marking)", source: "ATM Forum TM 4.0 (EFCI switch); dastangoo96: 500 cells" },
    ParamSpec { name: "clp_threshold", ty: ParamType::Size, default: None, required: false, help: "selective cell discard (partial buffer sharing): a CLP = 1 cell arriving at a buffer this full (or fuller, the cell in transmission included) is discarded; CLP = 0 cells may fill the whole buffer (default: CLP ignored)", source: "ITU-T I.371 (cell loss priority); Kröner et al., IEEE JSAC 9(3) 1991 (partial buffer sharing)" },
];

pub const PROBES: [ProbeSpec; 4] = [
    ProbeSpec { name: "q_epd_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells discarded by early packet discard (count)" },
    ProbeSpec { name: "q_ppd_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells discarded by partial packet discard (count)" },
    ProbeSpec { name: "q_efci_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells sent with the EFCI bit set by this buffer (count)" },
    ProbeSpec { name: "q_clp_cells", unit: "cells", kind: ProbeKind::Counter, help: "CLP = 1 cells discarded at the clp_threshold by selective cell discard (count)" },
];

/// Why a cell is discarded before it reaches the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discard {
    Epd,
    Ppd,
    /// Selective cell discard of a CLP = 1 cell.
    Clp,
}

impl Discard {
    /// The cause in the conservation ledger.
    pub fn cause(self) -> &'static str {
        match self {
            Discard::Epd => "epd",
            Discard::Ppd => "ppd",
            Discard::Clp => "clp",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PduState {
    /// A PDU has started (its first cell arrived) and has not ended.
    open: bool,
    /// The rest of the open PDU is being discarded.
    discarding: Option<Discard>,
}

/// The policy of one buffer, and what it did.
#[derive(Clone, Debug, Default)]
pub struct BufferPolicy {
    epd: Option<usize>,
    ppd: bool,
    efci: Option<usize>,
    clp: Option<usize>,
    pdus: HashMap<u32, PduState>,
    /// Since the warm-up: cells discarded by EPD, PPD and selective discard, cells
    /// marked.
    pub epd_cells: u64,
    pub ppd_cells: u64,
    pub clp_cells: u64,
    pub efci_cells: u64,
    /// Whole run, per flow: (EPD, PPD, selective) discards, for the ledger.
    pub drops_by_flow: ByFlow<[u64; 3]>,
}

/// The buffer policy parameters ([`PARAMS`]), bound; shared by every kind with a
/// buffer that declares them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferPolicyParams {
    /// EPD threshold in cells (None: no EPD).
    pub epd_threshold: Option<u64>,
    pub ppd: bool,
    /// EFCI threshold in cells (None: no marking).
    pub efci_threshold: Option<u64>,
    /// Selective discard threshold for CLP = 1 cells, in cells (None: CLP ignored).
    pub clp_threshold: Option<u64>,
}

impl BufferPolicyParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(BufferPolicyParams {
            epd_threshold: p.opt("epd_threshold", Params::cells)?,
            ppd: p.need("ppd", Params::bool)?,
            efci_threshold: p.opt("efci_threshold", Params::cells)?,
            clp_threshold: p.opt("clp_threshold", Params::cells)?,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.policy().map(drop)
    }

    /// The policy asked for (None: plain tail drop).
    pub fn policy(&self) -> Result<Option<BufferPolicy>, ParamIssue> {
        let size = |k: &str, v: Option<u64>| -> Result<Option<usize>, ParamIssue> {
            match v {
                Some(0) => Err(ParamIssue::new(k, format!("{k} must be at least 1 cell"))),
                v => Ok(v.map(|c| c as usize)),
            }
        };
        let (epd, efci, ppd) = (size("epd_threshold", self.epd_threshold)?, size("efci_threshold", self.efci_threshold)?, self.ppd);
        let clp = size("clp_threshold", self.clp_threshold)?;
        Ok((epd.is_some() || efci.is_some() || ppd || clp.is_some()).then(|| BufferPolicy::new(epd, ppd, efci).with_clp(clp)))
    }
}

impl BufferPolicy {

    pub fn new(epd: Option<usize>, ppd: bool, efci: Option<usize>) -> BufferPolicy {
        BufferPolicy { epd, ppd, efci, ..Default::default() }
    }

    /// The same policy with selective discard of CLP = 1 cells at `threshold` cells
    /// (None: CLP ignored).
    pub fn with_clp(self, threshold: Option<usize>) -> BufferPolicy {
        BufferPolicy { clp: threshold, ..self }
    }

    /// Whether this cell's PDU is followed: an AAL5 cell, and EPD or PPD on.
    fn follows(&self, cell: &Cell) -> bool {
        cell.pdu_cells > 0 && (self.epd.is_some() || self.ppd)
    }

    /// Whether the policy has anything to do when a cell arrives (EPD, PPD or
    /// selective discard): an EFCI-only policy acts at departures alone, and its
    /// buffer need not ask it at arrivals ([`BufferPolicy::arrival`] and
    /// [`BufferPolicy::admission`] would change nothing).
    pub fn acts_at_arrival(&self) -> bool {
        self.epd.is_some() || self.ppd || self.clp.is_some()
    }

    /// A cell arrives at a buffer holding `len` cells: Some(why) if it is discarded
    /// before the buffer's own admission.
    pub fn arrival(&mut self, cell: &Cell, len: usize) -> Option<Discard> {
        let follows = self.follows(cell);
        let mut verdict = if follows { self.pdu_verdict(cell, len) } else { None };
        if verdict.is_none() && cell.flags & FLAG_CLP != 0 && self.clp.is_some_and(|t| len >= t) {
            verdict = Some(Discard::Clp);
            if follows {
                // lost like a cell refused by a full buffer: PPD takes the rest
                self.admission(cell, false);
            }
        }
        if let Some(d) = verdict {
            let (count, j) = match d {
                Discard::Epd => (&mut self.epd_cells, 0),
                Discard::Ppd => (&mut self.ppd_cells, 1),
                Discard::Clp => (&mut self.clp_cells, 2),
            };
            *count += 1;
            self.drops_by_flow.entry(cell.flow)[j] += 1;
        }
        verdict
    }

    /// EPD's and PPD's verdict on an AAL5 cell of a followed PDU.
    fn pdu_verdict(&mut self, cell: &Cell, len: usize) -> Option<Discard> {
        let s = self.pdus.entry(cell.vc).or_default();
        let eop = cell.is_eop();
        let verdict = match s.discarding {
            Some(Discard::Ppd) if eop => {
                // PPD lets the last cell through to the buffer.
                s.discarding = None;
                None
            }
            Some(d) => Some(d),
            None if !s.open && self.epd.is_some_and(|t| len >= t) => {
                s.open = true;
                s.discarding = Some(Discard::Epd);
                Some(Discard::Epd)
            }
            None => None,
        };
        if verdict.is_some() && eop {
            *s = PduState::default();
        }
        verdict
    }

    /// The buffer accepted the cell (or, `admitted` false, dropped it when full).
    pub fn admission(&mut self, cell: &Cell, admitted: bool) {
        if !self.follows(cell) {
            return;
        }
        let s = self.pdus.entry(cell.vc).or_default();
        if cell.is_eop() {
            *s = PduState::default();
        } else {
            s.open = true;
            if !admitted && self.ppd {
                s.discarding = Some(Discard::Ppd);
            }
        }
    }

    /// A cell leaves a buffer that holds `len` cells counting it: marks it if above
    /// the EFCI threshold.
    pub fn departure(&mut self, cell: &mut Cell, len: usize) {
        if self.efci.is_some_and(|t| len > t) {
            cell.flags |= FLAG_EFCI;
            self.count_mark();
        }
    }

    /// The EFCI threshold in cells (None: no marking). A FIFO that computes departures
    /// on arrival decides the marks itself: a cell leaves above the threshold `t`
    /// exactly when the `t`-th cell after it arrives before it leaves.
    pub fn efci_threshold(&self) -> Option<usize> {
        self.efci
    }

    /// Counts a cell that left marked (decided by the buffer, see
    /// [`BufferPolicy::efci_threshold`]).
    pub fn count_mark(&mut self) {
        self.efci_cells += 1;
    }

    pub fn reset_stats(&mut self) {
        self.epd_cells = 0;
        self.ppd_cells = 0;
        self.clp_cells = 0;
        self.efci_cells = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_kernel::SimTime;

    /// Cell `j` of a `n`-cell AAL5 PDU on VC `vc`.
    fn cell(vc: u32, j: u16, n: u16) -> Cell {
        let mut c = Cell::plain(SimTime::ZERO, 0, vc, 0);
        c.pdu_cells = n;
        if j + 1 == n {
            c.flags |= crate::cell::FLAG_EOP;
        }
        c
    }

    /// Offers PDUs' cells in turn to a buffer of `capacity` that never drains; returns
    /// which were queued.
    fn offer(p: &mut BufferPolicy, capacity: usize, cells: &[Cell]) -> Vec<bool> {
        let mut len = 0;
        cells
            .iter()
            .map(|c| {
                if p.arrival(c, len).is_some() {
                    return false;
                }
                let ok = len < capacity;
                p.admission(c, ok);
                len += usize::from(ok);
                ok
            })
            .collect()
    }

    fn pdu(vc: u32, n: u16) -> Vec<Cell> {
        (0..n).map(|j| cell(vc, j, n)).collect()
    }

    /// An EFCI-only policy has nothing to do at arrivals (its buffer skips asking):
    /// it discards nothing, keeps no PDU state, whatever arrives (CLP = 1 cells, PDUs
    /// into a full buffer); EPD, PPD and selective discard each act there.
    #[test]
    fn only_epd_ppd_and_selective_discard_act_at_arrivals() {
        let mut efci = BufferPolicy::new(None, false, Some(4));
        assert!(!efci.acts_at_arrival());
        let mut cells = pdu(7, 5);
        cells[1].flags |= FLAG_CLP;
        assert_eq!(offer(&mut efci, 2, &cells), vec![true, true, false, false, false], "tail drop alone");
        assert!(efci.pdus.is_empty() && efci.drops_by_flow.is_empty());
        for p in [BufferPolicy::new(Some(8), false, None), BufferPolicy::new(None, true, Some(4)), BufferPolicy::new(None, false, None).with_clp(Some(3))] {
            assert!(p.acts_at_arrival(), "{p:?}");
        }
    }

    #[test]
    fn epd_refuses_whole_pdus_once_the_threshold_is_reached() {
        // Threshold 4: the first PDU (3 cells) and the second (3) start below it and
        // are kept whole even past it; the third starts at 6 ≥ 4 and goes entirely.
        let mut p = BufferPolicy::new(Some(4), false, None);
        let cells: Vec<Cell> = [pdu(1, 3), pdu(1, 3), pdu(1, 3)].concat();
        assert_eq!(offer(&mut p, 100, &cells), [vec![true; 6], vec![false; 3]].concat());
        assert_eq!(p.epd_cells, 3);
        assert_eq!(p.drops_by_flow.iter().map(|(f, &n)| (f, n)).collect::<Vec<_>>(), vec![(0, [3, 0, 0])]);
    }

    #[test]
    fn ppd_drops_the_rest_of_a_damaged_pdu_but_its_last_cell() {
        // Capacity 4: PDU 1 (3 cells) fits; PDU 2 (4 cells) loses its 2nd cell to the
        // full buffer, so PPD drops the 3rd, and the 4th (last) is offered: still full.
        let mut p = BufferPolicy::new(None, true, None);
        let cells: Vec<Cell> = [pdu(1, 3), pdu(1, 4)].concat();
        let got = offer(&mut p, 4, &cells);
        assert_eq!(got, vec![true, true, true, true, false, false, false]);
        assert_eq!(p.ppd_cells, 1, "only the cell between the loss and the last");
        // With room again the next PDU is taken whole.
        let again = offer(&mut p, 100, &pdu(1, 2));
        assert_eq!(again, vec![true, true]);
    }

    #[test]
    fn ppd_keeps_the_last_cell_when_there_is_room_for_it() {
        let mut p = BufferPolicy::new(None, true, None);
        // Cell 0 lost (a full buffer of capacity 0), cells 1–2 discarded, last kept.
        assert!(p.arrival(&cell(7, 0, 4), 0).is_none());
        p.admission(&cell(7, 0, 4), false);
        assert_eq!(p.arrival(&cell(7, 1, 4), 0), Some(Discard::Ppd));
        assert_eq!(p.arrival(&cell(7, 2, 4), 0), Some(Discard::Ppd));
        assert_eq!(p.arrival(&cell(7, 3, 4), 0), None);
    }

    #[test]
    fn vcs_are_followed_apart_and_plain_cells_are_left_alone() {
        let mut p = BufferPolicy::new(Some(2), true, None);
        // VC 1's PDU starts below the threshold; VC 2's starts at it: only VC 2's goes.
        assert!(p.arrival(&cell(1, 0, 3), 0).is_none());
        p.admission(&cell(1, 0, 3), true);
        assert_eq!(p.arrival(&cell(2, 0, 2), 2), Some(Discard::Epd));
        assert!(p.arrival(&cell(1, 1, 3), 2).is_none());
        assert_eq!(p.arrival(&cell(2, 1, 2), 3), Some(Discard::Epd));
        // A cell-level source's cell (no AAL5) is never discarded by EPD or PPD.
        assert!(p.arrival(&Cell::plain(SimTime::ZERO, 0, 3, 0), 50).is_none());
    }

    /// A cell with CLP = 1.
    fn low(mut c: Cell) -> Cell {
        c.flags |= FLAG_CLP;
        c
    }

    #[test]
    fn selective_discard_refuses_clp1_cells_from_the_threshold_on() {
        let mut p = BufferPolicy::default().with_clp(Some(3));
        let plain = |vc| Cell::plain(SimTime::ZERO, 0, vc, 0);
        // Below the threshold both priorities pass; at and above it only CLP = 0.
        assert_eq!(p.arrival(&low(plain(1)), 2), None);
        assert_eq!(p.arrival(&low(plain(1)), 3), Some(Discard::Clp));
        assert_eq!(p.arrival(&low(plain(1)), 9), Some(Discard::Clp));
        assert_eq!(p.arrival(&plain(1), 9), None);
        assert_eq!(p.clp_cells, 2);
        assert_eq!(p.drops_by_flow.iter().map(|(f, &n)| (f, n)).collect::<Vec<_>>(), vec![(0, [0, 0, 2])]);
        assert_eq!(Discard::Clp.cause(), "clp");
        p.reset_stats();
        assert_eq!(p.clp_cells, 0);
        assert_eq!(p.drops_by_flow.iter().map(|(f, &n)| (f, n)).collect::<Vec<_>>(), vec![(0, [0, 0, 2])], "the ledger's books are the whole run's");
    }

    #[test]
    fn a_selectively_discarded_aal5_cell_starts_ppd() {
        // Threshold 1, buffer of 100 never draining: the PDU's first cell (CLP = 0)
        // is queued, its second (CLP = 1) finds 1 cell and goes; PPD then takes the
        // third (CLP = 0 though it is), and the last is offered and queued.
        let mut p = BufferPolicy::new(None, true, None).with_clp(Some(1));
        let cells = [cell(4, 0, 4), low(cell(4, 1, 4)), cell(4, 2, 4), cell(4, 3, 4)];
        assert_eq!(offer(&mut p, 100, &cells), vec![true, false, false, true]);
        assert_eq!((p.clp_cells, p.ppd_cells), (1, 1));
        // Without PPD only the CLP = 1 cell is lost.
        let mut q = BufferPolicy::default().with_clp(Some(1));
        assert_eq!(offer(&mut q, 100, &cells), vec![true, false, true, true]);
    }

    #[test]
    fn epd_comes_before_selective_discard() {
        // A new PDU of CLP = 1 cells at a buffer above both thresholds is EPD's whole.
        let mut p = BufferPolicy::new(Some(2), false, None).with_clp(Some(2));
        let cells: Vec<Cell> = pdu(5, 3).into_iter().map(low).collect();
        assert_eq!(p.arrival(&cells[0], 5), Some(Discard::Epd));
        assert_eq!(p.arrival(&cells[1], 5), Some(Discard::Epd));
        assert_eq!(p.arrival(&cells[2], 5), Some(Discard::Epd));
        assert_eq!((p.epd_cells, p.clp_cells), (3, 0));
    }

    #[test]
    fn efci_marks_cells_leaving_above_the_threshold() {
        let mut p = BufferPolicy::new(None, false, Some(3));
        let mut c = Cell::plain(SimTime::ZERO, 0, 1, 0);
        p.departure(&mut c, 3);
        assert_eq!(c.flags & FLAG_EFCI, 0);
        p.departure(&mut c, 4);
        assert_ne!(c.flags & FLAG_EFCI, 0);
        assert_eq!(p.efci_cells, 1);
    }
}
