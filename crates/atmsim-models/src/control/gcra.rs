//! Usage parameter control: the Generic Cell Rate Algorithm GCRA(T, τ) of ITU-T I.371
//! (section 4.4.3 and Annex A; the same algorithm is the ATM Forum UNI 3.1 / TM 4.0
//! conformance definition), in either of its two equivalent forms.
//!
//! ```text
//!   in ──►[ GCRA(T, τ): conforming? ]──► out        non-conforming: drop, tag or count
//! ```
//!
//! *Virtual scheduling* keeps the theoretical arrival time TAT. A cell arriving at
//! `ta` is non-conforming if `ta < TAT − τ` (TAT unchanged); otherwise it conforms and
//! `TAT = max(ta, TAT) + T`.
//!
//! *Continuous-state leaky bucket* keeps the bucket content X and the last conformance
//! time LCT. At `ta`, `X' = X − (ta − LCT)`; if `X' < 0` then `X' = 0`; the cell is
//! non-conforming if `X' > τ` (X, LCT unchanged); otherwise it conforms, `X = X' + T`,
//! `LCT = ta`.
//!
//! The two take the same decisions on every arrival sequence (TAT = LCT + X; tested on
//! random sequences and in whole runs, which give identical traces). Times are integer
//! picoseconds: `T` from `pcr` is rounded to the nearest picosecond (< 2e-7 relative at
//! OC-3c rates). The first cell always conforms.
//!
//! Non-conforming cells are dropped (cause `upc` in the ledger), tagged (CLP set to 1
//! and passed on: the CLP = 0+1 flow is policed, tagging applies to all its cells) or
//! only counted (monitoring).
//!
//! *Per-VC contracts* (`vcs`): each listed VC is policed by its own GCRA, with its own
//! T and τ or the component's; cells of VCs not listed pass unpoliced. Without `vcs`,
//! one contract covers every cell through the component.

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;
use std::collections::HashMap;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::units::{parse_quantity, Dimension, Quantity};
use atmsim_kernel::{Ledger, Rate, SeriesKind, SimDuration, SimTime};

use crate::cell::Drops;
use crate::cell::{parse_vc_entry, vc_name, Cell, Msg, FLAG_CLP};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::SeriesDecl;

pub const ALGORITHMS: [&str; 2] = ["virtual-scheduling", "leaky-bucket"];
pub const ACTIONS: [&str; 3] = ["drop", "tag", "count"];

pub const PARAMS: [ParamSpec; 6] = [
    ParamSpec { name: "pcr", ty: ParamType::Rate, default: None, required: false, help: "peak cell rate policed (T = 1/PCR, 424 bits per cell); give pcr or increment (with vcs: the default of entries that set neither)", source: "required (pcr or increment); ITU-T I.371 traffic contract" },
    ParamSpec { name: "increment", ty: ParamType::Time, default: None, required: false, help: "increment T of GCRA(T, τ); give pcr or increment", source: "required (pcr or increment)" },
    ParamSpec { name: "cdvt", ty: ParamType::Time, default: Some("0 s"), required: false, help: "limit τ of GCRA(T, τ): cell delay variation tolerance (or burst tolerance)", source: "ITU-T I.371 (τ = 0: strict peak-rate spacing)" },
    ParamSpec { name: "algorithm", ty: ParamType::Choice(&ALGORITHMS), default: Some("virtual-scheduling"), required: false, help: "which of the two equivalent forms runs", source: "ITU-T I.371 Annex A" },
    ParamSpec { name: "action", ty: ParamType::Choice(&ACTIONS), default: Some("drop"), required: false, help: "what happens to a non-conforming cell: drop it, tag it (CLP = 1) or only count it", source: "ITU-T I.371 section 4.4 (UPC actions)" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: false, help: "per-VC contracts: \"VPI/VCI\" or \"VCI\", optionally \": pcr = RATE\" or \": increment = TIME\", and \", cdvt = TIME\" (else the component's); VCs not listed pass unpoliced. Default: one contract for every cell", source: "ITU-T I.371 (a traffic contract per connection)" },
];

pub const PROBES: [ProbeSpec; 4] = [
    ProbeSpec { name: "upc_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells arriving (count; with vcs also per policed VC, <upc>/vc<N>)" },
    ProbeSpec { name: "upc_conforming_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells conforming to GCRA(T, τ) (count)" },
    ProbeSpec { name: "upc_nonconforming_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells not conforming (count): dropped, tagged or counted per action" },
    ProbeSpec { name: "upc_nonconforming_ratio", unit: "1", kind: ProbeKind::Gauge, help: "non-conforming / arriving (value)" },
];

pub const SERIES: [SeriesDecl; 2] = [
    SeriesDecl { name: "upc_rx_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells arriving per second over each interval" },
    SeriesDecl { name: "upc_nonconforming_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "non-conforming cells per second over each interval" },
];

/// GCRA(T, τ) state, in one of the two forms; times in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gcra {
    VirtualScheduling { t: u64, tau: u64, tat: u64 },
    LeakyBucket { t: u64, tau: u64, x: u64, lct: u64 },
}

impl Gcra {
    pub fn virtual_scheduling(t: u64, tau: u64) -> Gcra {
        Gcra::VirtualScheduling { t, tau, tat: 0 }
    }
    pub fn leaky_bucket(t: u64, tau: u64) -> Gcra {
        Gcra::LeakyBucket { t, tau, x: 0, lct: 0 }
    }

    /// Whether a cell arriving at `ta` (not before the previous arrival) conforms;
    /// updates the state if it does.
    #[inline]
    pub fn arrive(&mut self, ta: u64) -> bool {
        match self {
            Gcra::VirtualScheduling { t, tau, tat } => {
                if ta.saturating_add(*tau) < *tat {
                    return false;
                }
                *tat = (*tat).max(ta).saturating_add(*t);
                true
            }
            Gcra::LeakyBucket { t, tau, x, lct } => {
                // X' = max(0, X − (ta − LCT))
                let drained = x.saturating_sub(ta - *lct);
                if drained > *tau {
                    return false;
                }
                *x = drained.saturating_add(*t);
                *lct = ta;
                true
            }
        }
    }
}

/// Which form of GCRA(T, τ) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    VirtualScheduling,
    LeakyBucket,
}

/// What happens to a non-conforming cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Drop,
    Tag,
    Count,
}

/// One traffic contract and what it saw.
#[derive(Clone, Debug)]
struct Contract {
    gcra: Gcra,
    rx: u64,
    nonconforming: u64,
}

impl Contract {
    fn new(gcra: Gcra) -> Self {
        Contract { gcra, rx: 0, nonconforming: 0 }
    }
}

#[derive(Clone, Debug)]
pub struct Upc {
    action: Action,
    /// One contract for every cell (no `vcs`), or one per listed VC.
    whole: Option<Contract>,
    per_vc: Vec<(u32, Contract)>,
    by_label: HashMap<u32, usize>,
    rx: u64,
    nonconforming: u64,
    drops: Drops,
}

/// T in picoseconds from a peak cell rate or an increment (at most one of them).
fn increment_ps(pcr: Option<Rate>, increment: Option<SimDuration>) -> Result<Option<u64>, String> {
    let t = match (pcr, increment) {
        (Some(_), Some(_)) => return Err("give either pcr or increment, not both".into()),
        (Some(r), None) => r.mean_cell_gap_ps().round() as u64,
        (None, Some(i)) => i.ps(),
        (None, None) => return Ok(None),
    };
    if t == 0 {
        return Err("the increment T must be at least 1 ps".into());
    }
    Ok(Some(t))
}

/// Parses a `vcs` entry, `"VC[: key = value, ...]"`, against the component's T and τ:
/// the VC label and its (T, τ) in picoseconds.
fn parse_contract(text: &str, t: Option<u64>, tau: u64) -> Result<(u32, u64, u64), String> {
    let (label, settings) = parse_vc_entry(text, &["pcr", "increment", "cdvt"])?;
    let (mut pcr, mut increment, mut tau) = (None, None, tau);
    for (key, value) in settings {
        let dim = if key == "pcr" { Dimension::Rate } else { Dimension::Time };
        match (key, parse_quantity(value, dim).map_err(|m| format!("{key}: {m}"))?) {
            ("pcr", Quantity::Rate(bps)) => pcr = Some(Rate::from_bps(bps).ok_or_else(|| format!("pcr: '{value}' must be a positive rate"))?),
            ("increment", Quantity::Time(s)) => increment = Some(SimDuration::from_secs_f64(s).ok_or_else(|| format!("increment: '{value}' must be a positive time"))?),
            ("cdvt", Quantity::Time(s)) => tau = SimDuration::from_secs_f64(s).ok_or_else(|| format!("cdvt: '{value}' must be zero or positive"))?.ps(),
            (k, _) => return Err(format!("'{k}' is not a contract setting (valid: pcr, increment, cdvt)")),
        }
    }
    let t = increment_ps(pcr, increment)?.or(t).ok_or_else(|| format!("'{text}': no pcr or increment here or on the component"))?;
    Ok((label, t, tau))
}

/// The `gcra` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct GcraParams {
    pub pcr: Option<Rate>,
    pub increment: Option<SimDuration>,
    /// τ.
    pub cdvt: SimDuration,
    pub algorithm: Algorithm,
    pub action: Action,
    /// Per-VC contract entries (None: one contract for every cell).
    pub vcs: Option<Vec<String>>,
}

/// The contracts a [`GcraParams`] asks for: one for every cell, or (VC label, T, τ) per
/// listed VC, times in picoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Contracts {
    Whole { t: u64, tau: u64 },
    PerVc(Vec<(u32, u64, u64)>),
}

impl GcraParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(GcraParams {
            pcr: p.opt("pcr", Params::rate)?,
            increment: p.opt("increment", Params::time)?,
            cdvt: p.need("cdvt", Params::time)?,
            algorithm: p.need_choice("algorithm", &[("virtual-scheduling", Algorithm::VirtualScheduling), ("leaky-bucket", Algorithm::LeakyBucket)])?,
            action: p.need_choice("action", &[("drop", Action::Drop), ("tag", Action::Tag), ("count", Action::Count)])?,
            vcs: p.opt_list("vcs")?,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.contracts().map(drop)
    }

    /// Every check, in order, and the contracts they give.
    fn contracts(&self) -> Result<Contracts, ParamIssue> {
        let t = increment_ps(self.pcr, self.increment).map_err(|m| ParamIssue::new("increment", m))?;
        let tau = self.cdvt.ps();
        match &self.vcs {
            None => {
                let t = t.ok_or_else(|| ParamIssue::new("pcr", "a gcra needs pcr (a rate) or increment (a time)"))?;
                Ok(Contracts::Whole { t, tau })
            }
            Some(entries) => {
                let mut out: Vec<(u32, u64, u64)> = Vec::with_capacity(entries.len());
                let mut seen = std::collections::HashSet::new();
                for e in entries {
                    let (label, t, tau) = parse_contract(e, t, tau).map_err(|m| ParamIssue::new("vcs", m))?;
                    if !seen.insert(label) {
                        return Err(ParamIssue::new("vcs", format!("VC '{e}' listed twice")));
                    }
                    out.push((label, t, tau));
                }
                Ok(Contracts::PerVc(out))
            }
        }
    }
}

impl Upc {
    /// A policer (its checks are [`GcraParams::validate`]'s).
    pub fn new(params: GcraParams) -> Result<Self, ParamIssue> {
        let gcra = |t, tau| match params.algorithm {
            Algorithm::LeakyBucket => Gcra::leaky_bucket(t, tau),
            Algorithm::VirtualScheduling => Gcra::virtual_scheduling(t, tau),
        };
        let mut upc = Upc { action: params.action, whole: None, per_vc: Vec::new(), by_label: HashMap::new(), rx: 0, nonconforming: 0, drops: Drops::new("upc") };
        match params.contracts()? {
            Contracts::Whole { t, tau } => upc.whole = Some(Contract::new(gcra(t, tau))),
            Contracts::PerVc(list) => {
                for (label, t, tau) in list {
                    upc.by_label.insert(label, upc.per_vc.len());
                    upc.per_vc.push((label, Contract::new(gcra(t, tau))));
                }
            }
        }
        Ok(upc)
    }


    /// Quantity `q` of [`SERIES`].
    pub fn quantity(&self, q: usize) -> f64 {
        match q {
            0 => self.rx as f64,
            1 => self.nonconforming as f64,
            _ => f64::NAN,
        }
    }



}


impl crate::kind::Kind for Upc {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let _ = b;
        let params = GcraParams::bind(p)?;
        params.validate()?;
        Upc::new(params)
    }
    #[inline]
    fn on_cell(&mut self, _port: PortId, mut cell: Cell, ctx: &mut Cx<'_>) {
        self.rx += 1;
        let contract = match &mut self.whole {
            Some(c) => Some(c),
            None => self.by_label.get(&cell.vc).and_then(|&i| self.per_vc.get_mut(i)).map(|(_, c)| c),
        };
        if let Some(c) = contract {
            c.rx += 1;
            if !c.gcra.arrive(ctx.now.0) {
                c.nonconforming += 1;
                self.nonconforming += 1;
                match self.action {
                    Action::Drop => {
                        self.drops.drop(&cell, ctx);
                        return;
                    }
                    Action::Tag => cell.flags |= FLAG_CLP,
                    Action::Count => {}
                }
            }
        }
        ctx.send(0, Msg::Cell(cell));
    }
    fn reset_stats(&mut self, _now: SimTime) {
        self.rx = 0;
        self.nonconforming = 0;
        for (_, c) in &mut self.per_vc {
            c.rx = 0;
            c.nonconforming = 0;
        }
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        let rows = |out: &mut Report, name: &str, rx: u64, bad: u64| {
            out.push(name, "upc_rx_cells", "count", rx as f64, "cells");
            out.push(name, "upc_conforming_cells", "count", (rx - bad) as f64, "cells");
            out.push(name, "upc_nonconforming_cells", "count", bad as f64, "cells");
            let ratio = if rx > 0 { bad as f64 / rx as f64 } else { f64::NAN };
            out.push(name, "upc_nonconforming_ratio", "value", ratio, "1");
        };
        for (label, c) in &self.per_vc {
            rows(out, &format!("{path}/{}", vc_name(*label)), c.rx, c.nonconforming);
        }
        // The whole component: every cell through it, policed or not.
        rows(out, path, self.rx, self.nonconforming);
    }
    fn ledger(&self, l: &mut Ledger) {
        self.drops.ledger(l);
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        if sub.is_empty() { crate::series::find(&SERIES, name) } else { None }
    }
    fn sample(&self, index: u64) -> f64 {
        self.quantity(crate::series::split(index).1)
    }
}

/// The `gcra` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "gcra",
    help: "usage parameter control: GCRA(T, τ) in virtual-scheduling or leaky-bucket form; non-conforming cells dropped, tagged (CLP = 1) or counted",
    source: "ITU-T I.371 section 4.4.3 and Annex A",
    params: &[&crate::control::gcra::PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::control::gcra::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::control::gcra::SERIES }],
    is_source: false,
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strict_spacing_with_zero_tolerance() {
        // T = 10, τ = 0: cells at 0, 5, 10, 12, 20, 31 → conform, no, yes, no, yes, yes.
        let mut g = Gcra::virtual_scheduling(10, 0);
        let got: Vec<bool> = [0, 5, 10, 12, 20, 31].iter().map(|&t| g.arrive(t)).collect();
        assert_eq!(got, vec![true, false, true, false, true, true]);
    }

    #[test]
    fn tolerance_admits_a_burst_of_one_plus_tau_over_t_minus_t() {
        // A back-to-back burst at spacing δ = 1 against GCRA(T = 10, τ = 25): the maximum
        // burst size is 1 + floor(τ / (T − δ)) = 1 + floor(25 / 9) = 3 (I.371 Annex A);
        // then cells conform again once TAT − τ is reached (at 5: TAT = 30).
        for mut g in [Gcra::virtual_scheduling(10, 25), Gcra::leaky_bucket(10, 25)] {
            let got: Vec<bool> = (0..7).map(|k| g.arrive(k)).collect();
            assert_eq!(got, vec![true, true, true, false, false, true, false], "{g:?}");
        }
    }

    #[test]
    fn contract_entries_parse_and_bad_ones_say_why() {
        let ten_us = 10_000_000;
        assert_eq!(parse_contract("0/100", Some(ten_us), 5), Ok((100, ten_us, 5)));
        assert_eq!(parse_contract("1/42: increment = 2 us, cdvt = 1 us", None, 0), Ok(((1 << 16) | 42, 2_000_000, 1_000_000)));
        // 100,000 cells/s: T = 10 µs.
        assert_eq!(parse_contract("7: pcr = 42.4 Mb/s", None, 0), Ok((7, ten_us, 0)));
        assert!(parse_contract("7", None, 0).unwrap_err().contains("no pcr or increment"));
        assert!(parse_contract("7: pcr = 1 Mb/s, increment = 1 us", None, 0).unwrap_err().contains("not both"));
        assert!(parse_contract("7: peak = 1 Mb/s", None, 0).unwrap_err().contains("valid: pcr, increment, cdvt"));
        assert!(parse_contract("7: pcr = 5 ms", None, 0).unwrap_err().starts_with("pcr"));
        assert!(parse_contract("7: cdvt", None, 0).unwrap_err().contains("key = value"));
        // the colon left out: the line to write when it can be shown, else how to write it
        assert_eq!(parse_contract("7 pcr=1Mb/s", None, 0).unwrap_err(), "'7 pcr=1Mb/s': write the VC, a colon, then the settings separated by commas: \"7: pcr = 1Mb/s\"");
        assert_eq!(parse_contract("7 pcr = 1 Mb/s", None, 0).unwrap_err(), "'7 pcr = 1 Mb/s': write the VC, a colon, then key = value settings separated by commas (pcr, increment, cdvt)");
    }

    proptest! {
        /// The two forms take the same decision on every cell of any arrival sequence.
        #[test]
        fn virtual_scheduling_and_leaky_bucket_agree(t in 1u64..1000, tau in 0u64..3000,
                                                      gaps in prop::collection::vec(0u64..2000, 1..300)) {
            let (mut vs, mut lb) = (Gcra::virtual_scheduling(t, tau), Gcra::leaky_bucket(t, tau));
            let mut ta = 0;
            for g in gaps {
                ta += g;
                prop_assert_eq!(vs.arrive(ta), lb.arrive(ta), "at {}", ta);
                if let (Gcra::VirtualScheduling { tat, .. }, Gcra::LeakyBucket { x, lct, .. }) = (vs, lb) {
                    prop_assert_eq!(tat, lct + x, "TAT = LCT + X");
                }
            }
        }
    }
}
