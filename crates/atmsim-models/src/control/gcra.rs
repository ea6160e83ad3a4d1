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
//!
//! *Sustainable cell rate* (`scr`, `mbs`; VBR contracts, ATM Forum UNI 3.1 / TM 4.0
//! section 4.4 and Annex C, ITU-T I.371): a second GCRA(Ts, τs + BT) with Ts = 1/SCR
//! and the burst tolerance BT = (MBS − 1)(Ts − T), so that a burst at the peak rate
//! from an idle contract conforms for exactly MBS cells. A cell is tested against the
//! peak rate first; one that conforms to it is then tested against the sustainable
//! rate — every cell (`scr_cells = "clp0+1"`: VBR.1) or the CLP = 0 cells only
//! (`"clp0"`: VBR.2 with `scr_action = "drop"`, VBR.3 with `"tag"`). A cell conforming
//! to both updates both (the dual virtual scheduling algorithm); one failing the
//! sustainable rate is dropped (no update), or tagged or counted and passed on, when it
//! updates the peak-rate state only (a tagged cell is a CLP = 1 cell of the CLP = 0+1
//! stream).
//!
//! *The CDVT a stream needs* (`upc_cdvt_needed`): each contract also runs the
//! reference clock of ITU-T I.356's 1-point cell delay variation against its peak
//! increment T — c₀ = a₀, c_{k+1} = max(c_k, a_k) + T, y_k = c_k − a_k (positive:
//! cells clumped ahead of the clock) — and reports the largest y_k. That is the
//! smallest τ with which GCRA(T, τ) passes every cell of the stream: while every cell
//! conforms, TAT follows the same recursion as the clock, and a cell conforms exactly
//! when y_k ≤ τ. So a run with `action = "count"` at the contract's PCR tells what
//! CDVT to give the UPC downstream of a multiplexer (tested: with `cdvt` set to it no
//! cell fails; a picosecond less and one does).

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;
use std::collections::HashMap;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::units::{parse_quantity, Dimension, Quantity};
use atmsim_kernel::{Ledger, Rate, SeriesKind, SimDuration, SimTime};

use crate::drops::Drops;
use crate::cell::{parse_vc_entry, vc_name, Cell, Msg, FLAG_CLP};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::SeriesDecl;

pub const ALGORITHMS: [&str; 2] = ["virtual-scheduling", "leaky-bucket"];
pub const ACTIONS: [&str; 3] = ["drop", "tag", "count"];
const ACTION_CHOICES: [(&str, Action); 3] = [("drop", Action::Drop), ("tag", Action::Tag), ("count", Action::Count)];

pub const SCR_CELLS: [&str; 2] = ["clp0+1", "clp0"];

pub const PARAMS: [ParamSpec; 11] = [
    ParamSpec { name: "pcr", ty: ParamType::Rate, default: None, required: false, help: "peak cell rate policed (T = 1/PCR, 424 bits per cell); give pcr or increment (with vcs: the default of entries that set neither)", source: "required (pcr or increment); ITU-T I.371 traffic contract" },
    ParamSpec { name: "increment", ty: ParamType::Time, default: None, required: false, help: "increment T of GCRA(T, τ); give pcr or increment", source: "required (pcr or increment)" },
    ParamSpec { name: "cdvt", ty: ParamType::Time, default: Some("0 s"), required: false, help: "limit τ of GCRA(T, τ): cell delay variation tolerance (or burst tolerance)", source: "ITU-T I.371 (τ = 0: strict peak-rate spacing)" },
    ParamSpec { name: "algorithm", ty: ParamType::Choice(&ALGORITHMS), default: Some("virtual-scheduling"), required: false, help: "which of the two equivalent forms runs", source: "ITU-T I.371 Annex A" },
    ParamSpec { name: "action", ty: ParamType::Choice(&ACTIONS), default: Some("drop"), required: false, help: "what happens to a non-conforming cell: drop it, tag it (CLP = 1) or only count it", source: "ITU-T I.371 section 4.4 (UPC actions)" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: false, help: "per-VC contracts: \"VPI/VCI\" or \"VCI\", optionally \": pcr = RATE\" or \": increment = TIME\", and \", cdvt = TIME\", \", scr = RATE, mbs = N\" (else the component's); VCs not listed pass unpoliced. Default: one contract for every cell", source: "ITU-T I.371 (a traffic contract per connection)" },
    ParamSpec { name: "scr", ty: ParamType::Rate, default: None, required: false, help: "sustainable cell rate policed besides the peak (VBR): GCRA(1/SCR, cdvt_scr + BT), BT = (MBS - 1)(1/SCR - 1/PCR); needs mbs; at most the peak rate", source: "ATM Forum UNI 3.1 / TM 4.0 section 4.4, Annex C; ITU-T I.371" },
    ParamSpec { name: "mbs", ty: ParamType::Int { min: 1, max: 4_294_967_295 }, default: None, required: false, help: "maximum burst size (cells) at the peak rate that conforms to the sustainable rate from an idle contract; with scr", source: "ATM Forum UNI 3.1 / TM 4.0 (MBS, BT)" },
    ParamSpec { name: "cdvt_scr", ty: ParamType::Time, default: None, required: false, help: "cell delay variation tolerance added to BT in the sustainable-rate test (default: cdvt)", source: "ATM Forum TM 4.0 (CDVT per rate)" },
    ParamSpec { name: "scr_cells", ty: ParamType::Choice(&SCR_CELLS), default: Some("clp0+1"), required: false, help: "which cells the sustainable rate polices: every cell (\"clp0+1\": VBR.1) or the CLP = 0 cells (\"clp0\": VBR.2, VBR.3)", source: "ATM Forum TM 4.0 section 4.5 (VBR.1-VBR.3 conformance definitions)" },
    ParamSpec { name: "scr_action", ty: ParamType::Choice(&ACTIONS), default: None, required: false, help: "what happens to a cell conforming to the peak rate but not the sustainable rate (default: action); \"tag\" with scr_cells = \"clp0\" is VBR.3", source: "ATM Forum TM 4.0 section 4.5" },
];

pub const PROBES: [ProbeSpec; 6] = [
    ProbeSpec { name: "upc_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells arriving (count; with vcs also per policed VC, <upc>/vc<N>)" },
    ProbeSpec { name: "upc_conforming_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells conforming to GCRA(T, τ) (count)" },
    ProbeSpec { name: "upc_nonconforming_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells not conforming (count): dropped, tagged or counted per action" },
    ProbeSpec { name: "upc_nonconforming_ratio", unit: "1", kind: ProbeKind::Gauge, help: "non-conforming / arriving (value)" },
    ProbeSpec { name: "upc_cdvt_needed", unit: "s", kind: ProbeKind::Gauge, help: "largest 1-point CDV of the arrivals against the peak increment T (ITU-T I.356): the smallest cdvt with which every cell would conform to GCRA(T, cdvt) (value; per contract)" },
    ProbeSpec { name: "upc_scr_nonconforming_cells", unit: "cells", kind: ProbeKind::Counter, help: "with scr: cells conforming to the peak rate but not to the sustainable rate (count; included in upc_nonconforming_cells)" },
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
        let ok = self.conforms(ta);
        if ok {
            self.update(ta);
        }
        ok
    }

    /// Whether a cell arriving at `ta` would conform (the state unchanged).
    #[inline]
    pub fn conforms(&self, ta: u64) -> bool {
        match *self {
            Gcra::VirtualScheduling { tau, tat, .. } => ta.saturating_add(tau) >= tat,
            // X' = max(0, X − (ta − LCT))
            Gcra::LeakyBucket { tau, x, lct, .. } => x.saturating_sub(ta - lct) <= tau,
        }
    }

    /// Books a cell arriving at `ta` as conforming.
    #[inline]
    pub fn update(&mut self, ta: u64) {
        match self {
            Gcra::VirtualScheduling { t, tat, .. } => *tat = (*tat).max(ta).saturating_add(*t),
            Gcra::LeakyBucket { t, x, lct, .. } => {
                *x = x.saturating_sub(ta - *lct).saturating_add(*t);
                *lct = ta;
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

/// What the contract makes of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Conforming,
    /// Not conforming to the peak rate.
    Peak,
    /// Conforming to the peak rate, not to the sustainable rate.
    Sustainable,
}

/// The dual GCRA's decision on a cell arriving at `ta`: the peak rate first, then —
/// if the cell is one the sustainable rate polices (`scr`) — the sustainable rate. A
/// conforming cell books both; one failing the sustainable rate books the peak rate
/// if it is passed on (`passed`: tagged or counted), nothing if dropped.
#[inline]
pub fn decide(peak: &mut Gcra, scr: Option<&mut Gcra>, ta: u64, passed: bool) -> Fate {
    if !peak.conforms(ta) {
        return Fate::Peak;
    }
    if let Some(s) = scr {
        if !s.conforms(ta) {
            if passed {
                peak.update(ta);
            }
            return Fate::Sustainable;
        }
        s.update(ta);
    }
    peak.update(ta);
    Fate::Conforming
}

/// Which cells the sustainable rate polices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScrCells {
    /// Every cell (VBR.1).
    All,
    /// CLP = 0 cells (VBR.2, VBR.3).
    Clp0,
}

/// One traffic contract and what it saw.
#[derive(Clone, Debug)]
struct Contract {
    gcra: Gcra,
    /// The sustainable-rate GCRA, if the contract has one.
    scr: Option<Gcra>,
    rx: u64,
    nonconforming: u64,
    scr_nonconforming: u64,
    /// I.356's 1-point CDV reference clock at the peak increment (ps; None before the
    /// first cell) and the largest CDV since the warm-up (ps).
    clock: Option<u64>,
    cdv_max: u64,
}

impl Contract {
    fn new(gcra: Gcra, scr: Option<Gcra>) -> Self {
        Contract { gcra, scr, rx: 0, nonconforming: 0, scr_nonconforming: 0, clock: None, cdv_max: 0 }
    }

    /// Advances the 1-point CDV clock over a cell arriving at `ta`.
    #[inline]
    fn clock(&mut self, ta: u64, t: u64) {
        let c = self.clock.unwrap_or(ta);
        self.cdv_max = self.cdv_max.max(c.saturating_sub(ta));
        self.clock = Some(c.max(ta).saturating_add(t));
    }
}

impl Gcra {
    /// The increment T.
    pub fn increment(&self) -> u64 {
        match *self {
            Gcra::VirtualScheduling { t, .. } | Gcra::LeakyBucket { t, .. } => t,
        }
    }
}

/// A contract's GCRA parameters in picoseconds: (T, τ) and, for a sustainable rate,
/// (Ts, τs + BT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Spec {
    t: u64,
    tau: u64,
    scr: Option<(u64, u64)>,
}

/// The sustainable-rate GCRA's (Ts, τs + BT) for a peak increment `t`: BT =
/// (MBS − 1)(Ts − T). Err: the parameter at fault and why.
fn scr_spec(t: u64, scr: Option<Rate>, mbs: Option<u64>, tau_s: u64) -> Result<Option<(u64, u64)>, (&'static str, String)> {
    match (scr, mbs) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(("mbs", "scr needs mbs (the maximum burst size in cells)".into())),
        (None, Some(_)) => Err(("scr", "mbs needs scr (the sustainable cell rate)".into())),
        (Some(r), Some(mbs)) => {
            let ts = r.mean_cell_gap_ps().round() as u64;
            if ts < t {
                return Err(("scr", format!("the sustainable rate must not exceed the peak rate (1/SCR = {ts} ps < T = {t} ps)")));
            }
            if mbs == 0 {
                return Err(("mbs", "mbs must be at least 1 cell".into()));
            }
            let bt = (mbs - 1).checked_mul(ts - t).ok_or(("mbs", "mbs x (1/SCR - 1/PCR) is beyond atmsim's time range".to_string()))?;
            Ok(Some((ts, bt.saturating_add(tau_s))))
        }
    }
}

#[derive(Clone, Debug)]
pub struct Upc {
    action: Action,
    scr_action: Action,
    scr_cells: ScrCells,
    /// One contract for every cell (no `vcs`), or one per listed VC.
    whole: Option<Contract>,
    per_vc: Vec<(u32, Contract)>,
    by_label: HashMap<u32, usize>,
    rx: u64,
    nonconforming: u64,
    scr_nonconforming: u64,
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

/// A contract's settings where an entry does not give its own: the component's.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Defaults {
    t: Option<u64>,
    tau: u64,
    scr: Option<Rate>,
    mbs: Option<u64>,
    tau_s: u64,
}

/// A maximum burst size written in an entry: a whole number of cells.
fn parse_mbs(value: &str) -> Result<u64, String> {
    if let Ok(n) = value.trim().parse::<u64>() {
        return Ok(n);
    }
    match parse_quantity(value, Dimension::Size).map_err(|m| format!("mbs: {m}"))? {
        Quantity::Size(atmsim_kernel::units::Size::Cells(c)) if c >= 0.0 && c.fract() == 0.0 => Ok(c as u64),
        _ => Err(format!("mbs: '{value}' is not a whole number of cells")),
    }
}

/// Parses a `vcs` entry, `"VC[: key = value, ...]"`, against the component's settings:
/// the VC label and its contract in picoseconds.
fn parse_contract(text: &str, d: Defaults) -> Result<(u32, Spec), String> {
    let (label, settings) = parse_vc_entry(text, &["pcr", "increment", "cdvt", "scr", "mbs"])?;
    let (mut pcr, mut increment, mut tau, mut scr, mut mbs) = (None, None, d.tau, d.scr, d.mbs);
    for (key, value) in settings {
        if key == "mbs" {
            mbs = Some(parse_mbs(value)?);
            continue;
        }
        let dim = if key == "pcr" || key == "scr" { Dimension::Rate } else { Dimension::Time };
        match (key, parse_quantity(value, dim).map_err(|m| format!("{key}: {m}"))?) {
            ("pcr", Quantity::Rate(bps)) => pcr = Some(Rate::from_bps(bps).ok_or_else(|| format!("pcr: '{value}' must be a positive rate"))?),
            ("scr", Quantity::Rate(bps)) => scr = Some(Rate::from_bps(bps).ok_or_else(|| format!("scr: '{value}' must be a positive rate"))?),
            ("increment", Quantity::Time(s)) => increment = Some(SimDuration::from_secs_f64(s).ok_or_else(|| format!("increment: '{value}' must be a positive time"))?),
            ("cdvt", Quantity::Time(s)) => tau = SimDuration::from_secs_f64(s).ok_or_else(|| format!("cdvt: '{value}' must be zero or positive"))?.ps(),
            (k, _) => return Err(format!("'{k}' is not a contract setting (valid: pcr, increment, cdvt, scr, mbs)")),
        }
    }
    let t = increment_ps(pcr, increment)?.or(d.t).ok_or_else(|| format!("'{text}': no pcr or increment here or on the component"))?;
    let scr = scr_spec(t, scr, mbs, d.tau_s).map_err(|(_, m)| format!("'{text}': {m}"))?;
    Ok((label, Spec { t, tau, scr }))
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
    /// Sustainable cell rate and maximum burst size (cells), for VBR contracts.
    pub scr: Option<Rate>,
    pub mbs: Option<u64>,
    /// τs (None: `cdvt`).
    pub cdvt_scr: Option<SimDuration>,
    pub scr_cells: ScrCells,
    /// What happens to a cell failing only the sustainable rate (None: `action`).
    pub scr_action: Option<Action>,
}

/// The contracts a [`GcraParams`] asks for: one for every cell, or one per listed VC.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Contracts {
    Whole(Spec),
    PerVc(Vec<(u32, Spec)>),
}

impl GcraParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(GcraParams {
            pcr: p.opt("pcr", Params::rate)?,
            increment: p.opt("increment", Params::time)?,
            cdvt: p.need("cdvt", Params::time)?,
            algorithm: p.need_choice("algorithm", &[("virtual-scheduling", Algorithm::VirtualScheduling), ("leaky-bucket", Algorithm::LeakyBucket)])?,
            action: p.need_choice("action", &ACTION_CHOICES)?,
            vcs: p.opt_list("vcs")?,
            scr: p.opt("scr", Params::rate)?,
            mbs: p.opt("mbs", Params::int)?.map(|n| n as u64),
            cdvt_scr: p.opt("cdvt_scr", Params::time)?,
            scr_cells: p.need_choice("scr_cells", &[("clp0+1", ScrCells::All), ("clp0", ScrCells::Clp0)])?,
            scr_action: match p.opt("scr_action", Params::word)? {
                None => None,
                Some(_) => Some(p.need_choice("scr_action", &ACTION_CHOICES)?),
            },
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
        let d = Defaults { t, tau, scr: self.scr, mbs: self.mbs, tau_s: self.cdvt_scr.map_or(tau, SimDuration::ps) };
        let (contracts, has_scr) = match &self.vcs {
            None => {
                let t = t.ok_or_else(|| ParamIssue::new("pcr", "a gcra needs pcr (a rate) or increment (a time)"))?;
                let scr = scr_spec(t, d.scr, d.mbs, d.tau_s).map_err(|(key, m)| ParamIssue::new(key, m))?;
                (Contracts::Whole(Spec { t, tau, scr }), scr.is_some())
            }
            Some(entries) => {
                let mut out: Vec<(u32, Spec)> = Vec::with_capacity(entries.len());
                let mut seen = std::collections::HashSet::new();
                for e in entries {
                    let (label, spec) = parse_contract(e, d).map_err(|m| ParamIssue::new("vcs", m))?;
                    if !seen.insert(label) {
                        return Err(ParamIssue::new("vcs", format!("VC '{e}' listed twice")));
                    }
                    out.push((label, spec));
                }
                let any = out.iter().any(|(_, s)| s.scr.is_some());
                (Contracts::PerVc(out), any)
            }
        };
        // the sustainable-rate settings need a sustainable rate somewhere
        if !has_scr {
            if self.scr_action.is_some() {
                return Err(ParamIssue::new("scr_action", "scr_action needs a sustainable rate (scr and mbs)"));
            }
            if self.cdvt_scr.is_some() {
                return Err(ParamIssue::new("cdvt_scr", "cdvt_scr needs a sustainable rate (scr and mbs)"));
            }
        }
        Ok(contracts)
    }
}

impl Upc {
    /// A policer (its checks are [`GcraParams::validate`]'s).
    pub fn new(params: GcraParams) -> Result<Self, ParamIssue> {
        let gcra = |t, tau| match params.algorithm {
            Algorithm::LeakyBucket => Gcra::leaky_bucket(t, tau),
            Algorithm::VirtualScheduling => Gcra::virtual_scheduling(t, tau),
        };
        let contract = |s: Spec| Contract::new(gcra(s.t, s.tau), s.scr.map(|(ts, tau_s)| gcra(ts, tau_s)));
        let mut upc = Upc {
            action: params.action,
            scr_action: params.scr_action.unwrap_or(params.action),
            scr_cells: params.scr_cells,
            whole: None,
            per_vc: Vec::new(),
            by_label: HashMap::new(),
            rx: 0,
            nonconforming: 0,
            scr_nonconforming: 0,
            drops: Drops::new("upc"),
        };
        match params.contracts()? {
            Contracts::Whole(spec) => upc.whole = Some(contract(spec)),
            Contracts::PerVc(list) => {
                for (label, spec) in list {
                    upc.by_label.insert(label, upc.per_vc.len());
                    upc.per_vc.push((label, contract(spec)));
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
            c.clock(ctx.now.0, c.gcra.increment());
            let scr = c.scr.as_mut().filter(|_| self.scr_cells == ScrCells::All || cell.flags & FLAG_CLP == 0);
            // a cell passed on (tagged or counted) is a cell of the CLP = 0+1 stream
            let action = match decide(&mut c.gcra, scr, ctx.now.0, self.scr_action != Action::Drop) {
                Fate::Conforming => None,
                Fate::Peak => Some(self.action),
                Fate::Sustainable => {
                    c.scr_nonconforming += 1;
                    self.scr_nonconforming += 1;
                    Some(self.scr_action)
                }
            };
            if let Some(action) = action {
                c.nonconforming += 1;
                self.nonconforming += 1;
                match action {
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
        self.scr_nonconforming = 0;
        for c in self.whole.iter_mut().chain(self.per_vc.iter_mut().map(|(_, c)| c)) {
            c.rx = 0;
            c.nonconforming = 0;
            c.scr_nonconforming = 0;
            c.cdv_max = 0;
        }
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        let any_scr = self.whole.iter().chain(self.per_vc.iter().map(|(_, c)| c)).any(|c| c.scr.is_some());
        let rows = |out: &mut Report, name: &str, rx: u64, bad: u64, scr_bad: Option<u64>, cdv: Option<u64>| {
            out.push(name, "upc_rx_cells", "count", rx as f64, "cells");
            out.push(name, "upc_conforming_cells", "count", (rx - bad) as f64, "cells");
            out.push(name, "upc_nonconforming_cells", "count", bad as f64, "cells");
            let ratio = if rx > 0 { bad as f64 / rx as f64 } else { f64::NAN };
            out.push(name, "upc_nonconforming_ratio", "value", ratio, "1");
            if let Some(n) = scr_bad {
                out.push(name, "upc_scr_nonconforming_cells", "count", n as f64, "cells");
            }
            if let Some(ps) = cdv {
                out.push(name, "upc_cdvt_needed", "value", ps as f64 * 1e-12, "s");
            }
        };
        for (label, c) in &self.per_vc {
            rows(out, &format!("{path}/{}", vc_name(*label)), c.rx, c.nonconforming, c.scr.map(|_| c.scr_nonconforming), Some(c.cdv_max));
        }
        // The whole component: every cell through it, policed or not (the CDV where
        // one contract covers them all).
        let cdv = self.whole.as_ref().map(|c| c.cdv_max);
        rows(out, path, self.rx, self.nonconforming, any_scr.then_some(self.scr_nonconforming), cdv);
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
    help: "usage parameter control: GCRA(T, τ) in virtual-scheduling or leaky-bucket form, optionally with a sustainable rate (VBR: dual GCRA with SCR and MBS); non-conforming cells dropped, tagged (CLP = 1) or counted",
    source: "ITU-T I.371 section 4.4.3 and Annex A",
    params: &[&crate::control::gcra::PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::control::gcra::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::control::gcra::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The largest 1-point CDV of `arrivals` against increment `t` (the contract's clock).
    fn cdvt_needed(arrivals: &[u64], t: u64) -> u64 {
        let mut c = Contract::new(Gcra::virtual_scheduling(t, 0), None);
        arrivals.iter().for_each(|&a| c.clock(a, t));
        c.cdv_max
    }

    #[test]
    fn the_cdv_clock_gives_the_smallest_tolerance_passing_every_cell() {
        // T = 10; arrivals 0, 5, 10, 12, 20, 31: the clock reads 0, 10, 20, 30, 40, 50,
        // so the cells are 0, 5, 10, 18, 20, 19 ahead of it.
        let arrivals = [0, 5, 10, 12, 20, 31];
        assert_eq!(cdvt_needed(&arrivals, 10), 20);
        let mut g = Gcra::virtual_scheduling(10, 20);
        assert!(arrivals.iter().all(|&a| g.arrive(a)));
        let mut g = Gcra::virtual_scheduling(10, 19);
        assert_eq!(arrivals.iter().filter(|&&a| !g.arrive(a)).count(), 1);
        // a stream at or below the peak rate needs none
        assert_eq!(cdvt_needed(&[0, 10, 25, 35, 100], 10), 0);
    }

    proptest! {
        #[test]
        fn the_cdv_clock_is_the_gcra_threshold(gaps in proptest::collection::vec(0u64..40, 1..200), t in 1u64..30) {
            let arrivals: Vec<u64> = gaps.iter().scan(0u64, |at, g| { *at += g; Some(*at) }).collect();
            let need = cdvt_needed(&arrivals, t);
            for alg in [Gcra::virtual_scheduling(t, need), Gcra::leaky_bucket(t, need)] {
                let mut g = alg;
                prop_assert!(arrivals.iter().all(|&a| g.arrive(a)));
            }
            if need > 0 {
                let mut g = Gcra::virtual_scheduling(t, need - 1);
                prop_assert!(arrivals.iter().any(|&a| !g.arrive(a)));
            }
        }
    }

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

    /// Component settings: T and τ only.
    fn d(t: Option<u64>, tau: u64) -> Defaults {
        Defaults { t, tau, scr: None, mbs: None, tau_s: tau }
    }

    fn spec(t: u64, tau: u64) -> Spec {
        Spec { t, tau, scr: None }
    }

    #[test]
    fn contract_entries_parse_and_bad_ones_say_why() {
        let ten_us = 10_000_000;
        assert_eq!(parse_contract("0/100", d(Some(ten_us), 5)), Ok((100, spec(ten_us, 5))));
        assert_eq!(parse_contract("1/42: increment = 2 us, cdvt = 1 us", d(None, 0)), Ok(((1 << 16) | 42, spec(2_000_000, 1_000_000))));
        // 100,000 cells/s: T = 10 µs.
        assert_eq!(parse_contract("7: pcr = 42.4 Mb/s", d(None, 0)), Ok((7, spec(ten_us, 0))));
        assert!(parse_contract("7", d(None, 0)).unwrap_err().contains("no pcr or increment"));
        assert!(parse_contract("7: pcr = 1 Mb/s, increment = 1 us", d(None, 0)).unwrap_err().contains("not both"));
        assert!(parse_contract("7: peak = 1 Mb/s", d(None, 0)).unwrap_err().contains("valid: pcr, increment, cdvt, scr, mbs"));
        assert!(parse_contract("7: pcr = 5 ms", d(None, 0)).unwrap_err().starts_with("pcr"));
        assert!(parse_contract("7: cdvt", d(None, 0)).unwrap_err().contains("key = value"));
        // the colon left out: the line to write when it can be shown, else how to write it
        assert_eq!(parse_contract("7 pcr=1Mb/s", d(None, 0)).unwrap_err(), "'7 pcr=1Mb/s': write the VC, a colon, then the settings separated by commas: \"7: pcr = 1Mb/s\"");
        assert_eq!(parse_contract("7 pcr = 1 Mb/s", d(None, 0)).unwrap_err(), "'7 pcr = 1 Mb/s': write the VC, a colon, then key = value settings separated by commas (pcr, increment, cdvt, scr, mbs)");
    }

    #[test]
    fn vbr_entries_give_the_burst_tolerance_of_their_mbs() {
        // PCR 100,000 cells/s (T = 10 µs), SCR 25,000 cells/s (Ts = 40 µs), MBS 5:
        // BT = 4 × 30 µs = 120 µs, plus τs (the component's cdvt_scr, 2 µs).
        let dd = Defaults { t: None, tau: 0, scr: None, mbs: None, tau_s: 2_000_000 };
        let (label, s) = parse_contract("9: pcr = 42.4 Mb/s, scr = 10.6 Mb/s, mbs = 5", dd).expect("parses");
        assert_eq!((label, s.t, s.scr), (9, 10_000_000, Some((40_000_000, 122_000_000))));
        assert_eq!(parse_contract("9: pcr = 42.4 Mb/s, scr = 10.6 Mb/s, mbs = 5 cells", dd).map(|x| x.1), Ok(s));
        // the component's scr and mbs apply to entries that give none
        let with = Defaults { scr: Rate::from_bps(10.6e6), mbs: Some(5), ..dd };
        assert_eq!(parse_contract("9: pcr = 42.4 Mb/s", with).map(|x| x.1), Ok(s));
        let e = |t: &str| parse_contract(t, dd).unwrap_err();
        assert!(e("9: pcr = 42.4 Mb/s, scr = 10.6 Mb/s").contains("scr needs mbs"), "{}", e("9: pcr = 42.4 Mb/s, scr = 10.6 Mb/s"));
        assert!(e("9: pcr = 42.4 Mb/s, mbs = 5").contains("mbs needs scr"));
        assert!(e("9: pcr = 10.6 Mb/s, scr = 42.4 Mb/s, mbs = 5").contains("must not exceed the peak rate"));
        let frac = e("9: pcr = 42.4 Mb/s, scr = 10.6 Mb/s, mbs = 2.5");
        assert!(frac.starts_with("mbs"), "{frac}");
        assert!(e("9: pcr = 42.4 Mb/s, scr = 10.6 Mb/s, mbs = 0").contains("at least 1 cell"));
    }

    /// [`decide`] on cells arriving at the given times with the given CLP = 1 flags,
    /// the sustainable test for `scr_all` or CLP = 0 cells; each cell's fate.
    fn dual(mut p: Gcra, mut s: Gcra, scr_all: bool, scr_action: Action, cells: &[(u64, bool)]) -> Vec<&'static str> {
        cells
            .iter()
            .map(|&(ta, clp1)| match decide(&mut p, (scr_all || !clp1).then_some(&mut s), ta, scr_action != Action::Drop) {
                Fate::Conforming => "ok",
                Fate::Peak => "pcr",
                Fate::Sustainable => "scr",
            })
            .collect()
    }

    #[test]
    fn a_burst_at_the_peak_rate_conforms_for_exactly_mbs_cells() {
        // T = 10, Ts = 40, MBS = 5: BT = 4 × 30 = 120. Cells at the peak spacing from
        // an idle contract: five conform, the sixth does not (UNI 3.1's definition of
        // MBS); after a pause of 5 Ts the contract is idle again.
        for vs in [true, false] {
            let g = |t, tau| if vs { Gcra::virtual_scheduling(t, tau) } else { Gcra::leaky_bucket(t, tau) };
            let burst: Vec<(u64, bool)> = (0..7).map(|k| (10 * k, false)).chain((0..5).map(|k| (260 + 10 * k, false))).collect();
            let got = dual(g(10, 0), g(40, 120), true, Action::Drop, &burst);
            assert_eq!(got[..7], ["ok", "ok", "ok", "ok", "ok", "scr", "scr"], "vs {vs}");
            assert_eq!(got[7..], ["ok"; 5], "vs {vs}");
        }
    }

    #[test]
    fn clp0_only_contracts_let_clp1_cells_pass_the_sustainable_rate() {
        // Ts = 40, BT = 0: CLP = 1 cells at the peak spacing are tested on the peak only
        // (VBR.2, VBR.3); CLP = 0 cells among them meet the sustainable rate.
        let cells = [(0, false), (10, true), (20, true), (30, false), (40, false), (50, true)];
        let got = dual(Gcra::virtual_scheduling(10, 0), Gcra::virtual_scheduling(40, 0), false, Action::Drop, &cells);
        assert_eq!(got, ["ok", "ok", "ok", "scr", "ok", "ok"]);
        // VBR.1 (every cell): the CLP = 1 cells fail the sustainable rate too
        let all = dual(Gcra::virtual_scheduling(10, 0), Gcra::virtual_scheduling(40, 0), true, Action::Drop, &cells);
        assert_eq!(all, ["ok", "scr", "scr", "scr", "ok", "scr"]);
        // Tagging (VBR.3): a tagged cell books the peak rate, so the next cell at the
        // peak spacing still conforms to it; dropping books nothing.
        let burst = [(0, false), (10, false), (20, false)];
        let tag = dual(Gcra::virtual_scheduling(10, 0), Gcra::virtual_scheduling(40, 0), false, Action::Tag, &burst);
        assert_eq!(tag, ["ok", "scr", "scr"]);
        let tight = [(0, false), (10, false), (15, false)];
        // after a tagged cell at 10 the peak's TAT is 20: a cell at 15 fails the peak
        assert_eq!(dual(Gcra::virtual_scheduling(10, 0), Gcra::virtual_scheduling(40, 0), false, Action::Tag, &tight), ["ok", "scr", "pcr"]);
        // after a dropped one the peak's TAT stays 10: the cell at 15 passes the peak
        assert_eq!(dual(Gcra::virtual_scheduling(10, 0), Gcra::virtual_scheduling(40, 0), false, Action::Drop, &tight), ["ok", "scr", "scr"]);
    }

    proptest! {
        /// The dual GCRA in its two forms takes the same decision on every cell.
        #[test]
        fn dual_forms_agree(t in 1u64..200, ts_extra in 0u64..800, mbs in 1u64..20, tau in 0u64..300,
                            cells in prop::collection::vec((0u64..400, any::<bool>()), 1..300),
                            scr_all in any::<bool>(), tag in any::<bool>()) {
            let (ts, bt) = (t + ts_extra, (mbs - 1) * ts_extra);
            let mut ta = 0;
            let timed: Vec<(u64, bool)> = cells.iter().map(|&(g, c)| { ta += g; (ta, c) }).collect();
            let action = if tag { Action::Tag } else { Action::Drop };
            let vs = dual(Gcra::virtual_scheduling(t, tau), Gcra::virtual_scheduling(ts, tau + bt), scr_all, action, &timed);
            let lb = dual(Gcra::leaky_bucket(t, tau), Gcra::leaky_bucket(ts, tau + bt), scr_all, action, &timed);
            prop_assert_eq!(vs, lb);
        }

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
