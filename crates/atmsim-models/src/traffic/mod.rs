//! Traffic sources: CBR, Poisson, the two-state Markov on-off source of buddhikot92,
//! self-similar sources (fractional Gaussian noise rates) and trace-driven sources
//! (packet and frame-size traces as AAL5 PDUs).
//!
//! ```text
//!   +--------+
//!   | source |--> out   (cells, one flow)
//!   +--------+
//! ```
//!
//! All sources share [`SourceCore`]: flow id, VC label, start/stop window, sequence
//! numbers, and the `src_*` probes.

pub mod capture_filter;
pub mod cbr;
pub mod onoff;
pub mod poisson;
pub mod selfsimilar;
pub mod sink;
pub mod trace;
pub mod trace_pcap;

use crate::kind::Cx;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, SimDuration, SimTime, CELL_BITS};
use rand_distr::{Distribution, Exp1};

use crate::cell::{Cell, Msg};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::{SeriesDecl, MB_PER_CELL};
use atmsim_kernel::SeriesKind;

/// Parameters every source has.
pub const COMMON_PARAMS: [ParamSpec; 3] = [
    ParamSpec { name: "vc", ty: ParamType::Int { min: 0, max: 4_294_967_295 }, default: None, required: false, help: "VC label carried by the cells (default: flow number + 1, unique per source)", source: "atmsim convention" },
    ParamSpec { name: "start", ty: ParamType::Time, default: Some("0 s"), required: false, help: "time of the first possible emission", source: "atmsim convention" },
    ParamSpec { name: "stop", ty: ParamType::Time, default: None, required: false, help: "no emission at or after this time (default: never stop)", source: "atmsim convention" },
];

/// The cell loss priority of a plain source's cells (not an ABR source's: TM 4.0
/// sends in-rate cells with CLP = 0).
pub const CLP_PARAMS: [ParamSpec; 1] = [
    ParamSpec { name: "clp", ty: ParamType::Int { min: 0, max: 1 }, default: Some("0"), required: false, help: "cell loss priority of every cell: 1 = low priority, discarded first by a buffer's clp_threshold (selective cell discard)", source: "ITU-T I.361 (CLP bit), I.371" },
];

/// Probes every source reports.
pub const SOURCE_PROBES: [ProbeSpec; 4] = [
    ProbeSpec { name: "src_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells emitted after warm-up (count; rate in cells/s)" },
    ProbeSpec { name: "src_tx_rate", unit: "Mb/s", kind: ProbeKind::Gauge, help: "mean emitted rate after warm-up, 424 bits per cell (statistic mean)" },
    ProbeSpec { name: "flow_loss_ratio", unit: "1", kind: ProbeKind::Gauge, help: "this source's cells dropped anywhere / generated, whole run, from the conservation ledger (value)" },
    ProbeSpec { name: "flow_cells", unit: "cells", kind: ProbeKind::Gauge, help: "this source's books for the whole run (statistics generated, delivered, dropped, in_flight, replicated)" },
];

/// What every source samples as time series.
pub const SOURCE_SERIES: [SeriesDecl; 2] = [
    SeriesDecl { name: "src_tx_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells emitted per second over each interval" },
    SeriesDecl { name: "src_tx_rate", unit: "Mb/s", kind: SeriesKind::Rate, scale: MB_PER_CELL, help: "emitted cell bit rate over each interval, 424 bits per cell" },
];

/// A cell source: apart from when it emits, everything lives in its [`SourceCore`];
/// kinds with statistics of their own (on-off bursts, trace PDUs) override the defaults.
pub trait Source {
    fn core(&self) -> &SourceCore;
    fn core_mut(&mut self) -> &mut SourceCore;
    fn reset_stats(&mut self, now: SimTime) {
        self.core_mut().reset_stats(now);
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.core().report(now, path, out);
    }
    fn ledger(&self, l: &mut Ledger) {
        self.core().ledger(l);
    }
}

/// The parts of [`crate::kind::Kind`] every source shares: its books live in its
/// [`SourceCore`] (through [`Source`], which on-off and trace sources extend), its series
/// are [`SOURCE_SERIES`].
macro_rules! source_kind {
    () => {
        fn reset_stats(&mut self, now: atmsim_kernel::SimTime) {
            crate::traffic::Source::reset_stats(self, now);
        }
        fn report(&self, now: atmsim_kernel::SimTime, path: &str, out: &mut atmsim_kernel::probe::Report) {
            crate::traffic::Source::report(self, now, path, out);
        }
        fn ledger(&self, l: &mut atmsim_kernel::Ledger) {
            crate::traffic::Source::ledger(self, l);
        }
        fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
            if sub.is_empty() { crate::series::find(&crate::traffic::SOURCE_SERIES, name) } else { None }
        }
        fn sample(&self, index: u64) -> f64 {
            crate::traffic::Source::core(self).sample(crate::series::split(index).1)
        }
        fn source_flow(&self) -> Option<(u32, u32)> {
            let c = crate::traffic::Source::core(self);
            Some((c.flow, c.vc))
        }
    };
}
pub(crate) use source_kind;

/// A source kind's declarations: what every source shares (no inputs, one output, the
/// source probes and series, a flow of its own) around its own `params` (the common
/// ones are added), `probes` (after the source probes) and `offered`, the mean rate its
/// parameters say it sends while active (the load-time check against the line rate).
pub const fn source_info(kind: &'static str, help: &'static str, source: &'static str, params: &'static [&'static [ParamSpec]], probes: &'static [&'static [ProbeSpec]], offered: crate::kind::RateOf) -> crate::kind::KindInfo {
    let rates = crate::kind::Rates { offered: Some(offered), line: None, passes: false };
    crate::kind::KindInfo { kind, help, source, params, inputs: &[], outputs: &crate::kind::OUT, ports: None, probes, series: &[crate::series::KindSeries { at: "", series: &SOURCE_SERIES }], is_source: true, forwards_only: false, rates, observed: crate::kind::Observed::NONE }
}

/// What every source keeps.
#[derive(Clone, Debug)]
pub struct SourceCore {
    pub flow: u32,
    pub vc: u32,
    pub start: SimTime,
    pub stop: SimTime,
    seq: u32,
    generated: u64,
    counted: u64,
    since: SimTime,
    /// Cells handed over ahead of their instant ([`SourceCore::emit_at_each`]) whose
    /// instant the source has not yet counted as past ([`SourceCore::count_due`]).
    pending: u64,
    /// Flags every cell carries (CLP).
    flags: u8,
}

/// The parameters every source has ([`COMMON_PARAMS`]), bound.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceParams {
    /// VC label (None: flow number + 1).
    pub vc: Option<u32>,
    pub start: SimDuration,
    /// None: never stop.
    pub stop: Option<SimDuration>,
    /// Cells sent with CLP = 1 ([`CLP_PARAMS`]; false for kinds without it).
    pub clp: bool,
}

impl SourceParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(SourceParams {
            vc: p.opt("vc", Params::int)?.map(|v| v as u32),
            start: p.need("start", Params::time)?,
            stop: p.opt("stop", Params::time)?,
            clp: p.opt("clp", Params::int)? == Some(1),
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        if self.stop_time() <= self.start_time() {
            return Err(ParamIssue::new("stop", "stop must be later than start"));
        }
        Ok(())
    }

    /// When the source starts emitting.
    pub fn start_time(&self) -> SimTime {
        SimTime::ZERO.plus(self.start)
    }

    /// When it stops (SimTime::MAX: never).
    pub fn stop_time(&self) -> SimTime {
        self.stop.map(|d| SimTime::ZERO.plus(d)).unwrap_or(SimTime::MAX)
    }
}

impl SourceCore {
    /// The core of source number `flow` (parameters validated).
    pub fn new(p: &SourceParams, flow: u32) -> SourceCore {
        let vc = p.vc.unwrap_or(flow + 1);
        let flags = if p.clp { crate::cell::FLAG_CLP } else { 0 };
        SourceCore { flow, vc, start: p.start_time(), stop: p.stop_time(), seq: 0, generated: 0, counted: 0, since: SimTime::ZERO, pending: 0, flags }
    }

    /// The source's next cell, born at `t`: numbered and booked as generated.
    #[inline(always)]
    fn next_cell(&mut self, t: SimTime) -> Cell {
        let cell = Cell { flags: self.flags, ..Cell::plain(t, self.flow, self.vc, self.seq) };
        self.seq = self.seq.wrapping_add(1);
        self.generated += 1;
        cell
    }

    /// Emits one cell on output port 0 now.
    #[inline(always)]
    pub fn emit(&mut self, ctx: &mut Cx<'_>) {
        let cell = self.next_cell(ctx.now);
        self.counted += 1;
        ctx.send(0, Msg::Cell(cell));
    }

    /// Hands over one cell for emission at each of `times` (in order, not before now)
    /// on output port 0 ([`atmsim_kernel::Lanes::send_at_each`]: one route and lane
    /// lookup for the whole train; the run must allow it,
    /// [`atmsim_kernel::Lanes::may_deliver_ahead`]). Each is generated now (the ledger
    /// books it in flight until it is delivered) and counted as emitted once the source
    /// learns its instant is past ([`SourceCore::count_due`]).
    #[inline]
    pub fn emit_at_each(&mut self, ctx: &mut Cx<'_>, times: impl IntoIterator<Item = SimTime>) {
        ctx.lanes().send_at_each(0, times.into_iter().map(|t| {
            let cell = self.next_cell(t);
            self.pending += 1;
            (t, Msg::Cell(cell))
        }));
    }

    /// Counts `k` cells handed over ahead ([`SourceCore::emit_at_each`]) as emitted: their
    /// instants are past.
    #[inline(always)]
    pub fn count_due(&mut self, k: u64) {
        let k = k.min(self.pending);
        self.pending -= k;
        self.counted += k;
    }

    /// Emits one cell with these flags and payload on output port 0 now (sources whose
    /// cells carry more than metadata: an ABR source's RM cells).
    pub fn emit_with(&mut self, ctx: &mut Cx<'_>, flags: u8, payload: crate::payload::PayloadId) {
        let cell = self.cell_with(ctx.now, flags, payload);
        ctx.send(0, Msg::Cell(cell));
    }

    /// The cell [`SourceCore::emit_with`] emits, for a source that puts it on its own
    /// line ([`crate::link::line::Line`]); counted as emitted.
    pub fn cell_with(&mut self, now: SimTime, flags: u8, payload: crate::payload::PayloadId) -> Cell {
        self.counted += 1;
        Cell { flags, payload, ..self.next_cell(now) }
    }

    /// Quantity `q` of [`SOURCE_SERIES`] (both are the running count of cells).
    pub fn sample(&self, _q: usize) -> f64 {
        (self.generated - self.pending) as f64
    }

    /// Emits cell `index` of `pdu_cells`-long PDU number `pdu` now, marked end-of-PDU
    /// if `last` (trace-driven sources: AAL5 framing as a host's adapter does it).
    #[inline]
    pub fn emit_pdu_cell(&mut self, ctx: &mut Cx<'_>, pdu: u32, index: u16, last: bool, pdu_cells: u16) {
        let mut cell = Cell::plain(ctx.now, self.flow, self.vc, pdu);
        cell.pdu_cells = pdu_cells;
        cell.pdu_index = index;
        cell.flags = self.flags;
        if last {
            cell.flags |= crate::cell::FLAG_EOP;
        }
        self.generated += 1;
        self.counted += 1;
        ctx.send(0, Msg::Cell(cell));
    }

    pub fn reset_stats(&mut self, now: SimTime) {
        self.counted = 0;
        self.since = now;
    }

    pub fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        let rate = if secs > 0.0 { self.counted as f64 / secs } else { f64::NAN };
        out.push(path, "src_tx_cells", "count", self.counted as f64, "cells");
        out.push(path, "src_tx_cells", "rate", rate, "cells/s");
        out.push(path, "src_tx_rate", "mean", rate * CELL_BITS as f64 / 1e6, "Mb/s");
    }

    pub fn ledger(&self, l: &mut Ledger) {
        l.add_generated(self.flow, self.generated);
    }
}

/// An exponential variate with the given mean in picoseconds, rounded to the picosecond.
#[inline(always)]
pub fn exp_ps(rng: &mut atmsim_kernel::Stream, mean_ps: f64) -> u64 {
    let x: f64 = Exp1.sample(rng);
    // x ≥ 0, so adding one half and truncating rounds to nearest without a libm call.
    (x * mean_ps + 0.5) as u64
}
