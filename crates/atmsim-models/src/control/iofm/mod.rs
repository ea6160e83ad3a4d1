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
//!
//! *Adaptive shaping* (`adapt_interval`): evans96's real-time adaptive i-out-of-m
//! shaper changes each paced VC's i and m at the end of every measurement interval from
//! the pacing-measurement counts (cells, and bursts as the hardware counts them); see
//! [`adapt`] and [`Controller::slot`].

mod adapt;
mod controller;

pub use adapt::{adapt_window, Adapt, AdaptState, Window};
pub use controller::{reference_run, Arrival, Controller};

use crate::kind::{BuildInfo, Cx};
use crate::timer::KeyedTimer;
use atmsim_kernel::PortId;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, Rate, SeriesKind, SimTime};

use crate::cell::{book_in_flight, vc_name, Cell, Msg};
use crate::params::{CellLimit, ParamIssue, ParamSpec, ParamType, Params};
use crate::series::SeriesDecl;
use crate::link::transmitter::{LineRateParams, PHY_NAMES};

/// Largest `i` and `m` (the hardware's 9- and 10-bit fields, evans96).
pub const I_MAX: i64 = 511;
pub const M_MAX: i64 = 1023;

pub const PARAMS: [ParamSpec; 12] = [
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "physical-layer preset of the output line, whose cell slots the controller counts; give phy or rate", source: "required (phy or rate); ITU-T I.432" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell-carrying bit rate of the output line (424 bits per slot); give phy or rate", source: "required (phy or rate)" },
    ParamSpec { name: "i", ty: ParamType::Int { min: 1, max: I_MAX }, default: None, required: true, help: "cells a paced VC may send in any m consecutive slots (its largest burst); VCs listed in vcs may set their own; the starting value under adaptive shaping", source: "required; evans96: a 9-bit field" },
    ParamSpec { name: "m", ty: ParamType::Int { min: 1, max: M_MAX }, default: None, required: true, help: "window in cell slots; i/m is the largest long-term rate as a fraction of the line", source: "required; evans96: a 10-bit field" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: false, help: "paced VCs: \"VPI/VCI\" or \"VCI\", optionally followed by \": i = N, m = M\" (their own i and m); cells of other VCs are not paced. Default: every VC paced with i and m", source: "evans96 (per-VC tables of i and m, and a paced bit)" },
    ParamSpec { name: "vc_capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "cells each VC's queue holds; tail drop when full", source: "atmsim convention" },
    ParamSpec { name: "adapt_interval", ty: ParamType::Int { min: 1, max: 1_000_000_000 }, default: None, required: false, help: "adaptive shaping: measurement interval in cell slots (evans96: 50,000); absent: i and m stay as set", source: "evans96 (adaptive i-out-of-m shaper)" },
    ParamSpec { name: "mu_plus", ty: ParamType::Float { min: 0.0, max: 10.0 }, default: None, required: false, help: "adaptive shaping: i = i + i·μ+ when i < 1.1 β (required with adapt_interval)", source: "evans96 (value not given)" },
    ParamSpec { name: "mu_minus", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "adaptive shaping: i = i − i·μ− when i > 1.3 β (required with adapt_interval)", source: "evans96 (value not given)" },
    ParamSpec { name: "gamma_plus", ty: ParamType::Float { min: 0.0, max: 10.0 }, default: None, required: false, help: "adaptive shaping: m/i = m/i + (m/i)·γ+ (lower rate) when r ≤ r_targ (required with adapt_interval)", source: "evans96 (value not given)" },
    ParamSpec { name: "gamma_minus", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "adaptive shaping: m/i = m/i − (m/i)·γ− (higher rate) when r > r_targ (required with adapt_interval)", source: "evans96 (value not given)" },
    ParamSpec { name: "target_utilisation", ty: ParamType::Float { min: 0.0, max: 100.0 }, default: Some("0.85"), required: false, help: "adaptive shaping: target rate utilisation r_targ of the window (measured rate / (i/m))", source: "evans96 (0.85 for its validation)" },
];

/// The adaptive shaper's parameters, all or none.
const ADAPT_KEYS: [&str; 4] = ["mu_plus", "mu_minus", "gamma_plus", "gamma_minus"];

pub const PROBES: [ProbeSpec; 10] = [
    ProbeSpec { name: "iofm_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells sent, per VC (<iofm>/vc<N>) and in all (count, rate)" },
    ProbeSpec { name: "iofm_wait", unit: "s", kind: ProbeKind::Tally, help: "time from a cell's arrival to the start of its slot, per VC (count, mean, std, min, max)" },
    ProbeSpec { name: "iofm_stops", unit: "1", kind: ProbeKind::Counter, help: "times a paced VC was stopped: a cell waiting, no token left (count; each token that comes back restarts the VC, so a backlogged VC is stopped between 1 and i times per m slots)" },
    ProbeSpec { name: "iofm_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped because the VC's queue was full (count)" },
    ProbeSpec { name: "iofm_q_len", unit: "cells", kind: ProbeKind::Gauge, help: "cells waiting at the end of the run, per VC (value)" },
    ProbeSpec { name: "phy_utilisation", unit: "1", kind: ProbeKind::Gauge, help: "fraction of the output line's slots that carried a cell (value)" },
    ProbeSpec { name: "iofm_bursts", unit: "1", kind: ProbeKind::Counter, help: "bursts a VC sent in, as evans96's measurement counts them: runs of busy slots, not counting the one a VC opens right after its own last cell (count)" },
    ProbeSpec { name: "iofm_stopped", unit: "1", kind: ProbeKind::Gauge, help: "per paced VC: the pacing measurement's stopped flag at the end of the run (1: stopped and no cell sent since) (value)" },
    ProbeSpec { name: "iofm_i", unit: "cells", kind: ProbeKind::Gauge, help: "a paced VC's i at the end of the run (value)" },
    ProbeSpec { name: "iofm_m", unit: "slots", kind: ProbeKind::Gauge, help: "a paced VC's m at the end of the run (value)" },
];

/// What the controller samples as time series, in all or per VC (`<iofm>/vc<N>`).
pub const SERIES: [SeriesDecl; 4] = [
    SeriesDecl { name: "iofm_q_len", unit: "cells", kind: SeriesKind::Level, scale: 1.0, help: "cells waiting at each instant" },
    SeriesDecl { name: "iofm_tx_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells sent per second over each interval" },
    SeriesDecl { name: "iofm_allowed_rate", unit: "Mb/s", kind: SeriesKind::Level, scale: 1.0, help: "a paced VC's i/m times the line's cell rate (424 bits per cell), at each instant (per VC only)" },
    SeriesDecl { name: "iofm_i", unit: "cells", kind: SeriesKind::Level, scale: 1.0, help: "a paced VC's i at each instant (per VC only)" },
];

/// The tag of the adaptive shaper's interval timer (decision timers are even).
const ADAPT_TAG: u32 = 1;

/// Parses a `vcs` entry: `"VPI/VCI"` or `"VCI"`, then optionally `": i = N, m = M"` (the
/// per-VC syntax of every kind, [`crate::cell::parse_vc_entry`]).
fn parse_entry(text: &str, default: Window) -> Result<(u32, Window), String> {
    let (label, settings) = crate::cell::parse_vc_entry(text, &["i", "m"])?;
    let mut w = default;
    for (key, value) in settings {
        let n: i64 = value.parse().map_err(|_| format!("{key} = {value}: not a whole number"))?;
        match key {
            "i" if (1..=I_MAX).contains(&n) => w.i = n as u32,
            "m" if (1..=M_MAX).contains(&n) => w.m = n as u64,
            "i" => return Err(format!("i = {value}: i must be 1..{I_MAX}")),
            _ => return Err(format!("m = {value}: m must be 1..{M_MAX}")),
        }
    }
    if w.i as u64 > w.m {
        return Err(format!("'{text}': i = {} exceeds m = {} (i/m is at most 1)", w.i, w.m));
    }
    Ok((label, w))
}

/// The `iofm` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct IofmParams {
    pub line: LineRateParams,
    pub i: u32,
    pub m: u64,
    /// Paced VC entries (None: every VC paced with i and m).
    pub vcs: Option<Vec<String>>,
    pub vc_capacity: CellLimit,
    /// Adaptive shaping's measurement interval in cell slots (None: no adaptation).
    pub adapt_interval: Option<u64>,
    pub mu_plus: Option<f64>,
    pub mu_minus: Option<f64>,
    pub gamma_plus: Option<f64>,
    pub gamma_minus: Option<f64>,
    pub target_utilisation: f64,
}

/// What [`IofmParams::plan`] works out: everything a controller is built from.
struct Plan {
    rate: Rate,
    configured: Vec<(u32, Option<Window>)>,
    default_window: Option<Window>,
    vc_capacity: Option<usize>,
    adapt: Option<Adapt>,
}

impl IofmParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(IofmParams {
            line: LineRateParams::bind(p)?,
            i: p.need("i", Params::int)? as u32,
            m: p.need("m", Params::int)? as u64,
            vcs: p.opt_list("vcs")?,
            vc_capacity: p.need("vc_capacity", Params::cell_limit)?,
            adapt_interval: p.opt("adapt_interval", Params::int)?.map(|v| v as u64),
            mu_plus: p.opt("mu_plus", Params::float)?,
            mu_minus: p.opt("mu_minus", Params::float)?,
            gamma_plus: p.opt("gamma_plus", Params::float)?,
            gamma_minus: p.opt("gamma_minus", Params::float)?,
            target_utilisation: p.need("target_utilisation", Params::float)?,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.plan().map(drop)
    }

    /// Every check, in order, and what they work out.
    fn plan(&self) -> Result<Plan, ParamIssue> {
        let rate = self.line.rate(None)?;
        let (i, m) = (self.i, self.m);
        if u64::from(i) > m {
            return Err(ParamIssue::new("i", format!("i = {i} exceeds m = {m} (i/m is at most 1)")));
        }
        let window = Window { i, m };
        let vc_capacity = self.vc_capacity.at_least_one("vc_capacity", "a VC queue holds at least 1 cell (or \"unlimited\")")?;
        let (configured, default_window) = match &self.vcs {
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
        let factors = [self.mu_plus, self.mu_minus, self.gamma_plus, self.gamma_minus];
        let given: Vec<&str> = ADAPT_KEYS.iter().zip(factors).filter(|(_, v)| v.is_some()).map(|(k, _)| *k).collect();
        let adapt = match (self.adapt_interval, factors) {
            (Some(interval), [Some(mu_plus), Some(mu_minus), Some(gamma_plus), Some(gamma_minus)]) => {
                Some(Adapt { interval, mu_plus, mu_minus, gamma_plus, gamma_minus, target: self.target_utilisation })
            }
            (Some(_), _) => {
                let missing = ADAPT_KEYS.iter().zip(factors).find(|(_, v)| v.is_none()).map_or(ADAPT_KEYS[0], |(k, _)| *k);
                return Err(ParamIssue::new(missing, format!("adaptive shaping (adapt_interval) needs {} (evans96 gives no values)", ADAPT_KEYS.join(", "))));
            }
            (None, _) => {
                if let Some(k) = given.first() {
                    return Err(ParamIssue::new(k, "set only with adapt_interval (adaptive shaping)"));
                }
                None
            }
        };
        Ok(Plan { rate, configured, default_window, vc_capacity, adapt })
    }
}

/// The `iofm` component.
#[derive(Clone, Debug)]
pub struct Iofm {
    ctl: Controller,
    /// The decision timer (its keys are even tags; `ADAPT_TAG` is odd).
    decision: KeyedTimer,
    since: SimTime,
    slots_since: u64,
}

impl Iofm {
    /// A controller (its checks are [`IofmParams::validate`]'s).
    pub fn new(params: IofmParams) -> Result<Self, ParamIssue> {
        let Plan { rate, configured, default_window, vc_capacity, adapt } = params.plan()?;
        let mut ctl = Controller::new(rate, &configured, default_window, vc_capacity);
        if let Some(a) = adapt {
            ctl = ctl.adaptive(a);
        }
        Ok(Iofm { ctl, decision: KeyedTimer::default(), since: SimTime::ZERO, slots_since: 0 })
    }

    fn arm(&mut self, slot: u64, ctx: &mut Cx<'_>) {
        self.decision.arm(self.ctl.slot_start(slot), ctx);
    }

}

impl crate::kind::Kind for Iofm {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let _ = b;
        let params = IofmParams::bind(p)?;
        params.validate()?;
        Iofm::new(params)
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        if self.ctl.next_adapt < u64::MAX {
            ctx.schedule_at(self.ctl.slot_start(self.ctl.next_adapt), ADAPT_TAG);
        }
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        match self.ctl.arrive(cell, ctx.now) {
            Arrival::Queued(Some(slot)) => self.arm(slot, ctx),
            Arrival::Queued(None) => {}
            Arrival::Dropped => crate::drops::dropped_here("buffer_full", &cell, ctx),
        }
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        if tag == ADAPT_TAG {
            // The end of a measurement interval (the slot starting now): adapt, and wake a
            // stopped VC if it may now send sooner. A decision at this same instant may
            // have adapted already; catching up to the slot of now is then a no-op.
            let k = self.ctl.rate.slot_after(SimTime(ctx.now.0.saturating_sub(1)));
            if let Some(slot) = self.ctl.catch_up(k) {
                self.arm(slot, ctx);
            }
            ctx.schedule_at(self.ctl.slot_start(self.ctl.next_adapt), ADAPT_TAG);
            return;
        }
        if !self.decision.fire(tag) {
            return; // a superseded decision
        }
        let Some(k) = self.ctl.armed else { return };
        let (out, next) = self.ctl.slot(k);
        if let Some(slot) = next {
            self.arm(slot, ctx);
        }
        if let Some(cell) = out {
            ctx.send(0, Msg::Cell(cell));
        }
    }
    /// The series index of quantity `name` for all VCs (`sub` empty) or `vc<N>`.
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let element = if sub.is_empty() { 0 } else { crate::series::parse_vc_name(sub)? as u64 + 1 };
        Some(crate::series::code(element, crate::series::find(&SERIES, name)?))
    }
    fn sample(&self, index: u64) -> f64 {
        let (element, q) = crate::series::split(index);
        let label = element.checked_sub(1).map(|l| l as u32);
        let window = || label.and_then(|l| self.ctl.window_of(l));
        match q {
            0 => self.ctl.waiting(label) as f64,
            1 => self.ctl.sent(label) as f64,
            2 => window().map_or(f64::NAN, |w| w.i as f64 / w.m as f64 * self.ctl.rate.bps() / 1e6),
            3 => window().map_or(f64::NAN, |w| w.i as f64),
            _ => f64::NAN,
        }
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        self.slots_since = self.ctl.rate.slot_after(SimTime(now.0.saturating_sub(1)));
        for v in &mut self.ctl.vcs {
            v.tx = 0;
            v.stops = 0;
            v.drops = 0;
            v.bursts = 0;
            v.wait.reset();
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { f64::NAN };
        let mut total = 0;
        for (k, v) in self.ctl.vcs.iter().enumerate() {
            let name = format!("{path}/{}", vc_name(v.label));
            total += v.tx;
            out.push(&name, "iofm_tx_cells", "count", v.tx as f64, "cells");
            out.push(&name, "iofm_tx_cells", "rate", per_s(v.tx), "cells/s");
            v.wait.report(out, &name, "iofm_wait", "s", 1e-12);
            out.push(&name, "iofm_bursts", "count", v.bursts as f64, "1");
            if let Some(w) = v.window {
                out.push(&name, "iofm_stops", "count", v.stops as f64, "1");
                let flag = self.ctl.meas.read(k as u32).is_some_and(|r| r.stopped);
                out.push(&name, "iofm_stopped", "value", if flag { 1.0 } else { 0.0 }, "1");
                out.push(&name, "iofm_i", "value", w.i as f64, "cells");
                out.push(&name, "iofm_m", "value", w.m as f64, "slots");
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
    fn ledger(&self, l: &mut Ledger) {
        for (f, &n) in self.ctl.drops_by_flow.iter() {
            l.add_dropped("buffer_full", f, n);
        }
        for v in &self.ctl.vcs {
            for (_, c) in &v.queue {
                book_in_flight(l, c);
            }
        }
        if let Some(c) = &self.ctl.on_line {
            book_in_flight(l, c);
        }
    }
}

/// The `iofm` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "iofm",
    help: "per-VC i-out-of-m rate control: at most i cells of a VC in any m consecutive slots of the output line (a token comes back m slots after use); unpaced VCs share the line; optionally evans96's adaptive shaper",
    source: "evans96 (the gateway's i/m controller: i ≤ 511, m ≤ 1023; the adaptive i-out-of-m shaper, Fig. 16)",
    params: &[&crate::control::iofm::PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::control::iofm::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::control::iofm::SERIES }, crate::series::KindSeries { at: "vc<N>", series: &crate::control::iofm::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_and_bad_ones_say_why() {
        let d = Window { i: 4, m: 100 };
        assert_eq!(parse_entry("0/100", d), Ok((100, d)));
        assert_eq!(parse_entry("1/42: i = 7, m = 9", d), Ok(((1 << 16) | 42, Window { i: 7, m: 9 })));
        assert_eq!(parse_entry("42: m=9", d), Ok((42, Window { i: 4, m: 9 })));
        assert!(parse_entry("42: i = 600", d).unwrap_err().contains("1..511"));
        assert!(parse_entry("42: m = 2000", d).unwrap_err().contains("1..1023"));
        assert!(parse_entry("42: i = 8, m = 5", d).unwrap_err().contains("exceeds"));
        assert!(parse_entry("42: k = 5", d).unwrap_err().contains("valid: i, m"));
        assert!(parse_entry("42: i = x", d).unwrap_err().contains("whole number"));
        assert!(parse_entry("42: i = 3, i = 4", d).unwrap_err().contains("i is given twice"));
        // the old form says how to write it now
        assert_eq!(parse_entry("1/42 i=7 m=9", d).unwrap_err(), "'1/42 i=7 m=9': write the VC, a colon, then the settings separated by commas: \"1/42: i = 7, m = 9\"");
    }

}
