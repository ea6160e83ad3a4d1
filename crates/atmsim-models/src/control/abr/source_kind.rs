//! The `abr_source` kind: an ABR connection's source end system (TM 4.0 section
//! 5.10.4, the sans-IO [`AbrSource`]) with its data, as a component.
//!
//! ```text
//!   back (backward RM cells) ──>[ abr_source ]──> out (data cells, forward RM cells)
//! ```
//!
//! - Data: greedy (a cell always waits) unless `demand` is given; then data cells
//!   become ready at the demand rate from `start` (cell k at `start + ceil(k·424/demand)`)
//!   and wait at the source until the ACR lets them go. (An edge device feeding it
//!   from a traffic source is issue 15 item 3, not built yet.)
//! - In-rate cells (data and forward RM cells, rule 3's order from the state machine)
//!   leave at ACR: a train at a constant ACR is exact to the picosecond (cell k of a
//!   train started at `t0` at `t0 + ceil(k·424/ACR)`, as `cbr` computes its instants);
//!   when a backward RM cell changes ACR the train restarts at the last in-rate cell,
//!   so the next cell may go earlier (an increase) or later (a decrease).
//! - Forward RM cells carry their fields as a [`Payload::Rm`] in the run's store; they
//!   leave with CLP = 0, out-of-rate ones (rule 11, at most TCR) with CLP = 1; data
//!   cells leave with CLP = 0 and EFCI = 0 (rules 4 and 12).
//! - Backward RM cells arriving on `back` are consumed (their payload taken) and fed
//!   to the state machine (rules 8, 9); the ledger books them as delivered here. With
//!   the checking mode on (`--check-wire`), each is round-tripped through the
//!   byte-exact RM cell format first ([`wirecheck::check_rm_cell`]).
//! - Not done: with `demand`, an idle source sends no Trm-driven forward RM cell while
//!   no data waits (it wakes when the next data cell is ready).

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, TimeAverage};
use atmsim_kernel::{Ledger, PortId, Rate, SeriesKind, SimTime};

use super::params::{AbrParams, PARAMS as ABR_PARAMS};
use super::source::{AbrSource, Send};
use crate::cell::{Cell, FLAG_CLP};
use crate::kind::{BuildInfo, Cx, KindInfo, PortSpec, OUT};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::{Payload, PayloadId};
use crate::series::{KindSeries, SeriesDecl, MB_PER_CELL};
use crate::timer::{Timer, TimerKey};
use crate::traffic::{Source, SourceCore, SourceParams, COMMON_PARAMS, SOURCE_PROBES, SOURCE_SERIES};
use crate::wirecheck;

pub const PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "demand",
    ty: ParamType::Rate,
    default: None,
    required: false,
    help: "rate at which data cells become ready to send (default: greedy, a data cell always waits)",
    source: "atmsim convention (greedy sources as in dastangoo96's max-min study)",
}];

pub const PROBES: [ProbeSpec; 4] = [
    ProbeSpec { name: "abr_acr", unit: "Mb/s", kind: ProbeKind::TimeAverage, help: "allowed cell rate, 424 bits per cell (statistics mean: time average since warm-up, max, final)" },
    ProbeSpec { name: "abr_data_cells", unit: "cells", kind: ProbeKind::Counter, help: "data cells sent (count)" },
    ProbeSpec { name: "abr_frm_cells", unit: "cells", kind: ProbeKind::Counter, help: "forward RM cells sent (statistics in_rate, out_of_rate)" },
    ProbeSpec { name: "abr_brm_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells received (count)" },
];

/// What an ABR source samples: the source series, then ACR.
pub const SERIES: [SeriesDecl; 3] = [
    SOURCE_SERIES[0],
    SOURCE_SERIES[1],
    SeriesDecl { name: "acr", unit: "Mb/s", kind: SeriesKind::Level, scale: MB_PER_CELL, help: "allowed cell rate at each instant, 424 bits per cell" },
];

const TAG_SEND: u32 = 0;

/// The `abr_source` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrSourceParams {
    pub abr: AbrParams,
    /// None: greedy.
    pub demand: Option<Rate>,
    pub source: SourceParams,
}

impl AbrSourceParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(AbrSourceParams { abr: AbrParams::bind(p)?, demand: p.opt("demand", Params::rate)?, source: SourceParams::bind(p)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.abr.validate()?;
        self.source.validate()
    }
}

/// A train of in-rate cells at one ACR: the k-th after `t0` at `t0 + ceil(k·424/rate)`.
#[derive(Clone, Copy, Debug)]
struct Train {
    rate: Option<Rate>,
    t0: SimTime,
    k: u64,
}

impl Train {
    /// The instant of the next in-rate cell (None: ACR is 0).
    fn next(&self) -> Option<SimTime> {
        Some(self.t0.plus(self.rate?.cell_train_offset(self.k)))
    }
}

#[derive(Clone, Debug)]
pub struct AbrSourceNode {
    core: SourceCore,
    abr: AbrSource,
    demand: Option<Rate>,
    data_sent: u64,
    /// None before the first in-rate cell.
    train: Option<Train>,
    timer: Timer,
    acr: TimeAverage,
    /// Backward RM cells received per flow, whole run (the ledger's delivered).
    brm_by_flow: Vec<u64>,
    // since warm-up
    data: u64,
    frm_in: u64,
    frm_out: u64,
    brm: u64,
}

impl AbrSourceNode {
    pub fn new(params: AbrSourceParams, flow: u32) -> AbrSourceNode {
        let abr = AbrSource::new(params.abr);
        let core = SourceCore::new(&params.source, flow);
        AbrSourceNode {
            acr: TimeAverage::new(SimTime::ZERO, abr.acr()),
            core,
            abr,
            demand: params.demand,
            data_sent: 0,
            train: None,
            timer: Timer::default(),
            brm_by_flow: Vec::new(),
            data: 0,
            frm_in: 0,
            frm_out: 0,
            brm: 0,
        }
    }

    /// The allowed cell rate (cells/s).
    pub fn acr(&self) -> f64 {
        self.abr.acr()
    }

    fn rate(&self) -> Option<Rate> {
        Rate::from_cells_per_s(self.abr.acr())
    }

    /// When data cell number `data_sent` is ready (the start for a greedy source).
    fn data_ready_at(&self) -> SimTime {
        match self.demand {
            None => self.core.start,
            Some(d) => self.core.start.plus(d.cell_train_offset(self.data_sent)),
        }
    }

    /// The next in-rate chance, not before `now` (None: ACR is 0).
    fn next_in_rate(&self, now: SimTime) -> Option<SimTime> {
        let t = match self.train {
            None => Some(self.core.start),
            Some(tr) => tr.next(),
        }?;
        Some(t.max(now))
    }

    /// When the next thing is to be done (None: nothing before `stop`).
    fn wake_at(&self, now: SimTime) -> Option<SimTime> {
        // In-rate: at the next chance, once data is ready (a started source may still
        // owe a Trm forward RM cell, which `send` decides at the chance itself).
        let in_rate = self.next_in_rate(now).map(|t| t.max(self.data_ready_at()));
        let out_of_rate = self.abr.out_of_rate_at().map(|t| t.max(now));
        let at = match (in_rate, out_of_rate) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        (at < self.core.stop).then_some(at)
    }

    /// Arms the send timer for the next thing to do, unless it is armed for that
    /// instant already (a different arming leaves the old event stale).
    fn plan(&mut self, ctx: &mut Cx<'_>) {
        match (self.wake_at(ctx.now), self.timer.due()) {
            (Some(at), due) if due != Some(at) => {
                self.timer.arm(at, TAG_SEND, ctx);
            }
            (None, Some(due)) => self.timer.cancel(TimerKey::Due(due)),
            _ => {}
        }
    }

    /// ACR may have changed: the time average follows, and the train restarts at its
    /// last cell with the new rate.
    fn acr_changed(&mut self, now: SimTime) {
        self.acr.set(now, self.abr.acr());
        let rate = self.rate();
        if let Some(tr) = self.train.as_mut() {
            if tr.rate != rate {
                let last = match tr.rate {
                    Some(r) if tr.k > 0 => tr.t0.plus(r.cell_train_offset(tr.k - 1)),
                    _ => tr.t0,
                };
                *tr = Train { rate, t0: last, k: 1 };
            }
        }
    }

    fn send_rm(&mut self, ctx: &mut Cx<'_>, rm: atmsim_wire::rm::RmRepr, flags: u8) {
        let id = ctx.store().insert(Payload::Rm(rm));
        self.core.emit_with(ctx, flags, id);
    }

    fn on_send(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        if now >= self.core.stop {
            return;
        }
        let in_rate_due = self.next_in_rate(now).is_some_and(|t| t <= now);
        if in_rate_due {
            let waiting = self.data_ready_at() <= now;
            let sent = self.abr.send(now, waiting, false);
            match sent {
                Some(Send::ForwardRm(rm)) => {
                    self.frm_in += 1;
                    self.send_rm(ctx, rm, 0);
                }
                Some(Send::Data) => {
                    self.data += 1;
                    self.data_sent += 1;
                    self.core.emit_with(ctx, 0, PayloadId::NONE);
                }
                Some(Send::BackwardRm) => {
                    ctx.fail("the ABR source sent a backward RM cell it was never given".into());
                    return;
                }
                None => {}
            }
            if sent.is_some() {
                // Continue the train if this cell was on it, else start one here.
                let rate = self.rate();
                self.train = match self.train {
                    Some(tr) if tr.rate == rate && tr.next() == Some(now) => Some(Train { k: tr.k + 1, ..tr }),
                    _ => Some(Train { rate, t0: now, k: 1 }),
                };
                self.acr_changed(now);
            }
        } else if self.abr.out_of_rate_at().is_some_and(|t| t <= now) {
            let rm = self.abr.send_out_of_rate(now);
            self.frm_out += 1;
            self.send_rm(ctx, rm, FLAG_CLP);
        }
        self.plan(ctx);
    }
}

impl Source for AbrSourceNode {
    fn core(&self) -> &SourceCore {
        &self.core
    }
    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }
}

impl crate::kind::Kind for AbrSourceNode {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = AbrSourceParams::bind(p)?;
        params.validate()?;
        Ok(AbrSourceNode::new(params, b.flow))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        self.plan(ctx);
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        if tag == TAG_SEND && self.timer.fire(ctx.now) {
            self.on_send(ctx);
        }
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let rm = match ctx.store().take(cell.payload) {
            Some(Payload::Rm(rm)) if rm.backward => rm,
            other => {
                let what = if other.is_some() { "a cell whose payload is not a backward RM cell" } else { "a cell without RM payload" };
                ctx.fail(format!("abr_source (flow {}) received {what} on {} at its input: only the backward path of its connection may end there", self.core.flow, crate::cell::vc_name(cell.vc)));
                return;
            }
        };
        if ctx.store().check.on {
            match wirecheck::check_rm_cell(&cell, &rm) {
                Ok(()) => ctx.store().check.checked += 1,
                Err(e) => {
                    ctx.fail(e);
                    return;
                }
            }
        }
        let f = cell.flow as usize;
        if self.brm_by_flow.len() <= f {
            self.brm_by_flow.resize(f + 1, 0);
        }
        self.brm_by_flow[f] += 1;
        self.brm += 1;
        self.abr.on_backward_rm(&rm);
        self.acr_changed(now);
        // The next in-rate chance may now be earlier or later.
        self.plan(ctx);
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.core.reset_stats(now);
        self.acr.reset(now);
        self.abr.reset_stats();
        (self.data, self.frm_in, self.frm_out, self.brm) = (0, 0, 0, 0);
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.core.report(now, path, out);
        let mbps = |cps: f64| cps * MB_PER_CELL;
        out.push(path, "abr_acr", "mean", mbps(self.acr.mean(now)), "Mb/s");
        out.push(path, "abr_acr", "max", mbps(self.acr.max()), "Mb/s");
        out.push(path, "abr_acr", "final", mbps(self.abr.acr()), "Mb/s");
        out.push(path, "abr_data_cells", "count", self.data as f64, "cells");
        out.push(path, "abr_frm_cells", "in_rate", self.frm_in as f64, "cells");
        out.push(path, "abr_frm_cells", "out_of_rate", self.frm_out as f64, "cells");
        out.push(path, "abr_brm_cells", "count", self.brm as f64, "cells");
    }
    fn ledger(&self, l: &mut Ledger) {
        self.core.ledger(l);
        for (f, &n) in self.brm_by_flow.iter().enumerate() {
            l.add_delivered(f as u32, n);
        }
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        if sub.is_empty() { crate::series::find(&SERIES, name) } else { None }
    }
    fn sample(&self, index: u64) -> f64 {
        match crate::series::split(index).1 {
            2 => self.abr.acr(),
            q => self.core.sample(q),
        }
    }
    fn source_flow(&self) -> Option<(u32, u32)> {
        Some((self.core.flow, self.core.vc))
    }
}

/// The input backward RM cells come back on.
pub const INPUTS: [PortSpec; 1] = [PortSpec::cells("back", false)];

/// The `abr_source` kind's declarations (registered in `lib.rs`).
pub const KIND: KindInfo = KindInfo {
    kind: "abr_source",
    help: "ABR source end system (TM 4.0 rules 1-13): greedy or demand-rate data at ACR, forward RM cells every Nrm cells; backward RM cells return on input 'back' (required: the path back for RM cells)",
    source: "ATM Forum TM 4.0 (af-tm-0056.000) section 5.10.4; dastangoo96 Table 1 (params = \"eprca95\")",
    params: &[&ABR_PARAMS, &PARAMS, &COMMON_PARAMS],
    inputs: &INPUTS,
    outputs: &OUT,
    ports: None,
    probes: &[&SOURCE_PROBES, &PROBES],
    series: &[KindSeries { at: "", series: &SERIES }],
    is_source: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_train_at_a_constant_acr_is_exact_to_the_picosecond() {
        // 7 cells × 424 bits at 74.88 Mb/s = 39.6367521… µs, rounded up to the ps.
        let tr = Train { rate: Rate::from_bps(74.88e6), t0: SimTime(1_000), k: 7 };
        assert_eq!(tr.next(), Some(SimTime(1_000 + 39_636_753)));
        // No rate (ACR 0): no in-rate cell.
        assert_eq!(Train { rate: None, ..tr }.next(), None);
    }

    #[test]
    fn demand_makes_data_ready_at_its_rate_from_start() {
        let p = AbrSourceParams { abr: AbrParams::eprca95(), demand: Rate::from_bps(42.4e6), source: SourceParams { vc: None, start: atmsim_kernel::SimDuration(5), stop: None } };
        let mut s = AbrSourceNode::new(p, 0);
        assert_eq!(s.data_ready_at(), SimTime(5));
        // 100,000 cells/s: one every 10 µs.
        s.data_sent = 3;
        assert_eq!(s.data_ready_at(), SimTime(5 + 30_000_000));
    }
}
