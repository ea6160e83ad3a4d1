//! The `abr_source` kind: an ABR connection's source end system (TM 4.0 section
//! 5.10.4, the sans-IO [`AbrSource`]) with its data, as a component.
//!
//! ```text
//!   back (backward RM cells) ──>[ abr_source ]──> out (data cells, forward RM cells)
//! ```
//!
//! - Data: greedy (a cell always waits) unless `demand` is given; then data cells
//!   become ready at the demand rate from `start` (cell k at `start + ceil(k·424/demand)`)
//!   and wait at the source until the ACR lets them go.
//! - `abr_edge` (same code, [`EDGE_KIND`]): the data are the cells of a traffic source
//!   wired to input `in`; they wait in a queue (unlimited, or `edge_capacity` cells,
//!   a cell arriving to a full queue dropped with cause `edge_full`) and each in-rate
//!   data chance takes the oldest. The source's cell ends at the edge (booked as
//!   delivered there) and a cell of the edge's own flow and VC goes on, carrying its
//!   payload; so the destination's delay is measured from the edge.
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
//!   byte-exact RM cell format first (`--check-wire`: [`crate::wirecheck::check_rm_cell`]).
//! - An idle source (no data ready: `demand` between cells, an edge's empty queue)
//!   still takes the in-rate chance at which rule 3 makes the next cell a forward RM
//!   cell (after Mrm cells once Trm has passed, or after Nrm − 1 cells).

use atmsim_kernel::ByFlow;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, TimeAverage};
use std::collections::VecDeque;

use atmsim_kernel::rate::CellClock;
use atmsim_kernel::{Ledger, PortId, Rate, SeriesKind, SimTime};

use super::params::{AbrParams, PARAMS as ABR_PARAMS};
use super::source::{AbrSource, PerAcr, Send};
use crate::cell::{book_held, Cell, FLAG_CLP};
use crate::drops::Drops;
use crate::kind::{BuildInfo, Cx, KindInfo, PortSpec, OUT};
use crate::link::line::{Line, LineParams, PARAMS as LINE_PARAMS};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::{Payload, PayloadId};
use crate::series::{KindSeries, SeriesDecl, MB_PER_CELL};
use crate::timer::{Timer, TimerKey};
use crate::traffic::{Source, SourceCore, SourceParams, COMMON_PARAMS, SOURCE_PROBES, SOURCE_SERIES};
use crate::observe::{observe, Control, Observation};

pub const PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "demand",
    ty: ParamType::Rate,
    default: None,
    required: false,
    help: "rate at which data cells become ready to send (default: greedy, a data cell always waits)",
    source: "atmsim convention (greedy sources as in dastangoo96's max-min study)",
}];

/// The `abr_edge` kind's own parameter.
pub const EDGE_PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "edge_capacity",
    ty: ParamType::SizeOr("unlimited"),
    default: Some("unlimited"),
    required: false,
    help: "the edge queue (cells; a cell arriving to a full queue is dropped, cause edge_full)",
    source: "atmsim convention: unlimited, so the queue shows the buffer an edge device needs (dastangoo96 studies that requirement)",
}];

/// What an edge device reports besides the source's probes.
pub const EDGE_PROBES: [ProbeSpec; 3] = [
    ProbeSpec { name: "edge_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells that arrived from the traffic source (count)" },
    ProbeSpec { name: "edge_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped at a full edge queue (count)" },
    ProbeSpec { name: "edge_q", unit: "cells", kind: ProbeKind::TimeAverage, help: "edge queue length (statistics mean: time average since warm-up, max, final)" },
];

/// An edge device samples the ABR source's series and its queue.
pub const EDGE_SERIES: [SeriesDecl; 4] = [SERIES[0], SERIES[1], SERIES[2], SeriesDecl { name: "edge_q", unit: "cells", kind: SeriesKind::Level, scale: 1.0, help: "edge queue length at each instant" }];

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
/// The forward RM cell an idle source owes (rule 3; [`AbrSourceNode::idle_frm_at`]).
const TAG_IDLE_FRM: u32 = 1;
/// The sender's own line ([`Line::arrive`]).
const TAG_LINE: u32 = 2;

/// `abr_edge`'s input `in` (the traffic source's cells; [`EDGE_INPUTS`]).
const EDGE_IN: PortId = 1;

/// The `abr_source` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrSourceParams {
    pub abr: AbrParams,
    /// None: greedy.
    pub demand: Option<Rate>,
    pub source: SourceParams,
    /// `abr_edge`: the data come from input `in` through a queue of this many cells
    /// (Some(None): unlimited).
    pub edge: Option<Option<usize>>,
    /// The sender's own line.
    pub line: LineParams,
}

impl AbrSourceParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        let edge = match p.opt("edge_capacity", Params::cell_limit)? {
            None => None,
            Some(l) => Some(l.at_least_one("edge_capacity", "must be at least 1 cell (or \"unlimited\")")?),
        };
        Ok(AbrSourceParams {
            abr: AbrParams::bind(p)?,
            demand: p.opt("demand", Params::rate)?,
            source: SourceParams::bind(p)?,
            edge,
            line: LineParams::bind(p)?,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.abr.validate()?;
        self.line.validate()?;
        // PCR in cells/s against the line's, to a part in 10^9 (both from Mb/s).
        if let Some(r) = self.line.rate.filter(|r| self.abr.pcr > r.cells_per_s() * (1.0 + 1e-9)) {
            let mbps = |cps: f64| cps * MB_PER_CELL;
            return Err(ParamIssue::new("line_rate", format!("the line ({} Mb/s) is slower than PCR ({} Mb/s): the source could never send at its peak rate; give a line_rate of at least PCR", mbps(r.cells_per_s()), mbps(self.abr.pcr))));
        }
        self.source.validate()
    }
}

/// A train of in-rate cells at one ACR: the k-th after `t0` at `t0 + ceil(k·424/rate)`,
/// stepped by a [`CellClock`] (no division per cell; the clock's one division is made
/// when the rate changes). `last`: the instant of the in-rate cell before `at` (`t0`
/// for the first), where the train restarts when ACR changes.
#[derive(Clone, Copy, Debug)]
struct Train {
    rate: Option<Rate>,
    clock: Option<CellClock>,
    last: SimTime,
    at: Option<SimTime>,
}

impl Train {
    /// A train at `rate` whose cell 0 goes at `t0`; `like`: a train whose clock is
    /// reused when its rate is the same.
    fn start(rate: Option<Rate>, t0: SimTime, like: Option<&Train>) -> Train {
        let clock = match (rate, like) {
            (Some(_), Some(tr)) if tr.rate == rate => tr.clock,
            (Some(r), _) => Some(CellClock::new(r)),
            (None, _) => None,
        };
        let mut tr = Train { rate, clock, last: t0, at: None };
        if let Some(c) = tr.clock.as_mut() {
            c.restart(t0);
            tr.at = Some(c.advance());
        }
        tr
    }

    /// The in-rate cell at `at` went: the train moves on to its next cell.
    fn step(&mut self) {
        if let (Some(at), Some(c)) = (self.at, self.clock.as_mut()) {
            self.last = at;
            self.at = Some(c.advance());
        }
    }

    /// The instant of the next in-rate cell (None: ACR is 0).
    fn next(&self) -> Option<SimTime> {
        self.at
    }
}

/// What the edge keeps of a traffic source's cell while it waits: its flow (for the
/// books) and its payload (carried on in the VC's cell). The rest ends at the edge,
/// so a queue of 10^5 cells takes 8 bytes each, not a whole cell's 32.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    flow: u32,
    payload: PayloadId,
}

const _: () = assert!(std::mem::size_of::<Waiting>() == 8, "a waiting cell stays 8 bytes at the edge");

/// An edge device's queue: a traffic source's cells waiting for the ABR VC.
#[derive(Clone, Debug)]
struct Edge {
    queue: VecDeque<Waiting>,
    capacity: Option<usize>,
    full: Drops,
    level: TimeAverage,
    /// Cells taken from the queue and sent on, per flow, whole run (delivered here).
    sent_by_flow: ByFlow<u64>,
    // since warm-up
    rx: u64,
    dropped: u64,
}

#[derive(Clone, Debug)]
pub struct AbrSourceNode {
    edge: Option<Edge>,
    /// The sender's own line (None: cells leave on 'out' at their instants).
    line: Option<Line>,
    core: SourceCore,
    abr: AbrSource,
    demand: Option<Rate>,
    data_sent: u64,
    /// None before the first in-rate cell.
    train: Option<Train>,
    /// [`AbrSourceNode::rate`] and the ACR (its bits) it was worked out for.
    rate_memo: PerAcr<Option<Rate>>,
    timer: Timer,
    idle_frm: Timer,
    acr: TimeAverage,
    /// Backward RM cells received per flow, whole run (the ledger's delivered).
    brm_by_flow: ByFlow<u64>,
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
        let edge = params.edge.map(|capacity| Edge { queue: VecDeque::new(), capacity, full: Drops::new("edge_full"), level: TimeAverage::new(SimTime::ZERO, 0.0), sent_by_flow: ByFlow::new(), rx: 0, dropped: 0 });
        AbrSourceNode {
            edge,
            line: params.line.line(0, TAG_LINE),
            acr: TimeAverage::new(SimTime::ZERO, abr.acr()),
            core,
            abr,
            demand: params.demand,
            data_sent: 0,
            train: None,
            rate_memo: PerAcr::new(f64::NAN, None),
            timer: Timer::default(),
            idle_frm: Timer::default(),
            brm_by_flow: ByFlow::new(),
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

    /// The ACR as a [`Rate`] (worked out again only when the ACR has changed: asked for
    /// at every cell).
    fn rate(&self) -> Option<Rate> {
        self.rate_memo.get(self.abr.acr(), Rate::from_cells_per_s)
    }

    /// When data cell number `data_sent` is ready (the start for a greedy source).
    fn data_ready_at(&self) -> SimTime {
        if let Some(e) = &self.edge {
            // An edge device: now if a cell waits, else not until one arrives.
            return if e.queue.is_empty() { SimTime::MAX } else { SimTime::ZERO };
        }
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
        // In-rate: at the next chance, once data is ready (an idle source's forward RM
        // cells: `idle_frm_at`; `send` decides what goes at the chance itself).
        let in_rate = self.next_in_rate(now).map(|t| t.max(self.data_ready_at()));
        let out_of_rate = self.abr.out_of_rate_at().map(|t| t.max(now));
        let at = match (in_rate, out_of_rate) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        (at < self.core.stop).then_some(at)
    }

    /// While no data is ready at the next in-rate chance: the chance at which rule 3
    /// makes the next cell a forward RM cell whatever waits (TM 4.0 applies rule 3 at
    /// every in-rate chance, so an idle source still sends it).
    fn idle_frm_at(&self, now: SimTime) -> Option<SimTime> {
        let at = self.next_in_rate(now)?.max(self.abr.frm_due_at()?);
        (at < self.data_ready_at() && at < self.core.stop).then_some(at)
    }

    /// Arms the send timer for the next thing to do, unless it is armed for that
    /// instant already (a different arming leaves the old event stale); and, while
    /// idle, the timer of the forward RM cell rule 3 makes due. That one is armed once
    /// per instant and never withdrawn: its instant stays the same from one in-rate
    /// forward RM cell to the next, so an edge whose queue empties and fills again many
    /// times meanwhile adds one event, not one per cycle (when data overtakes it, it
    /// fires and finds nothing due, or the chance it finds is a real one).
    fn plan(&mut self, ctx: &mut Cx<'_>) {
        match (self.wake_at(ctx.now), self.timer.due()) {
            (Some(at), due) if due != Some(at) => {
                self.timer.arm(at, TAG_SEND, ctx);
            }
            (None, Some(due)) => self.timer.cancel(TimerKey::Due(due)),
            _ => {}
        }
        if let Some(at) = self.idle_frm_at(ctx.now) {
            if self.idle_frm.due() != Some(at) {
                self.idle_frm.arm(at, TAG_IDLE_FRM, ctx);
            }
        }
    }

    /// ACR may have changed: the time average follows, and the train restarts at its
    /// last cell with the new rate.
    fn acr_changed(&mut self, now: SimTime) {
        let rate = self.rate();
        self.acr_changed_to(now, rate);
    }

    /// [`AbrSourceNode::acr_changed`] with `rate`, the ACR's [`Rate`], known already.
    fn acr_changed_to(&mut self, now: SimTime, rate: Option<Rate>) {
        self.acr.set(now, self.abr.acr());
        if let Some(tr) = self.train.as_mut() {
            if tr.rate != rate {
                *tr = Train::start(rate, tr.last, None);
            }
        }
    }

    fn send_rm(&mut self, ctx: &mut Cx<'_>, rm: atmsim_wire::rm::RmRepr, flags: u8) {
        let id = ctx.store().payloads.insert(Payload::Rm(rm));
        self.emit(ctx, flags, id);
    }

    /// Sends a cell of this connection now, on the sender's own line if it has one.
    #[inline]
    fn emit(&mut self, ctx: &mut Cx<'_>, flags: u8, payload: PayloadId) {
        let cell = self.core.cell_with(ctx.now, flags, payload);
        Line::send_on(self.line.as_mut(), cell, ctx);
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
                    match self.edge.as_mut() {
                        None => self.emit(ctx, 0, PayloadId::NONE),
                        Some(e) => {
                            // The traffic source's cell ends here; its payload goes
                            // on in the ABR VC's cell.
                            let Some(c) = e.queue.pop_front() else {
                                ctx.fail("abr_edge sent a data cell from an empty queue".into());
                                return;
                            };
                            e.level.set(now, e.queue.len() as f64);
                            if e.queue.is_empty() {
                                // The next arrival changes when the VC sends: an event.
                                ctx.lanes().defer_input(EDGE_IN, false);
                            }
                            *e.sent_by_flow.entry(c.flow) += 1;
                            self.emit(ctx, 0, c.payload);
                        }
                    }
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
                match self.train.as_mut() {
                    Some(tr) if tr.rate == rate && tr.next() == Some(now) => tr.step(),
                    _ => self.train = Some(Train::start(rate, now, self.train.as_ref())),
                }
                self.acr_changed_to(now, rate);
            }
        } else if self.abr.out_of_rate_at().is_some_and(|t| t <= now) {
            let rm = self.abr.send_out_of_rate(now);
            self.frm_out += 1;
            self.send_rm(ctx, rm, FLAG_CLP);
        }
        self.plan(ctx);
    }

    /// A cell at the source's own input (not an edge's traffic): its connection's
    /// backward RM cell, which sets ACR. Kept out of line: the edge's input, taken
    /// once per traffic cell, stays small.
    #[inline(never)]
    fn on_backward_rm(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let rm = match ctx.store().payloads.take(cell.payload) {
            Some(Payload::Rm(rm)) if rm.backward => rm,
            other => {
                let what = if other.is_some() { "a cell whose payload is not a backward RM cell" } else { "a cell without RM payload" };
                ctx.fail(format!("abr_source (flow {}) received {what} on {} at its input: only the backward path of its connection may end there", self.core.flow, crate::cell::vc_name(cell.vc)));
                return;
            }
        };
        if !observe(Observation::Control { cell: &cell, control: Control::Rm(&rm) }, ctx) {
            return;
        }
        *self.brm_by_flow.entry(cell.flow) += 1;
        self.brm += 1;
        self.abr.on_backward_rm(&rm);
        self.acr_changed(now);
        // The next in-rate chance may now be earlier or later.
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
        if let Some(line) = self.line.as_mut() {
            line.start(ctx);
        }
        self.plan(ctx);
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        let fired = match tag {
            TAG_SEND => self.timer.fire(ctx.now),
            TAG_IDLE_FRM => self.idle_frm.fire(ctx.now),
            TAG_LINE => {
                match self.line.as_mut() {
                    Some(line) => line.arrive(ctx),
                    None => ctx.fail("line timer without a line".into()),
                }
                false
            }
            _ => false,
        };
        if fired {
            self.on_send(ctx);
        }
    }
    #[inline]
    fn on_cell(&mut self, port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        if port == EDGE_IN {
            // abr_edge's input: the traffic source's cells join the queue.
            let Some(e) = self.edge.as_mut() else { return };
            e.rx += 1;
            if e.capacity.is_some_and(|c| e.queue.len() >= c) {
                e.dropped += 1;
                e.full.drop(&cell, ctx);
                return;
            }
            let was_empty = e.queue.is_empty();
            e.queue.push_back(Waiting { flow: cell.flow, payload: cell.payload });
            e.level.set(now, e.queue.len() as f64);
            // Only the first waiting cell changes when the VC next sends (data ready
            // now instead of never); behind it, the timer stays as planned, and the
            // cells arriving while one waits only join the queue: the kernel may hand
            // them over late, each at its instant (a deferred input).
            if was_empty {
                self.plan(ctx);
                ctx.lanes().defer_input(EDGE_IN, true);
            }
            return;
        }
        self.on_backward_rm(cell, ctx);
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.core.reset_stats(now);
        self.acr.reset(now);
        self.abr.reset_stats();
        if let Some(e) = self.edge.as_mut() {
            e.level.reset(now);
            (e.rx, e.dropped) = (0, 0);
        }
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
        if let Some(e) = &self.edge {
            out.push(path, "edge_rx_cells", "count", e.rx as f64, "cells");
            out.push(path, "edge_drop_cells", "count", e.dropped as f64, "cells");
            out.push(path, "edge_q", "mean", e.level.mean(now), "cells");
            out.push(path, "edge_q", "max", e.level.max(), "cells");
            out.push(path, "edge_q", "final", e.queue.len() as f64, "cells");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        self.core.ledger(l);
        if let Some(line) = &self.line {
            line.ledger(l);
        }
        for (f, &n) in self.brm_by_flow.iter() {
            l.add_delivered(f, n);
        }
        if let Some(e) = &self.edge {
            for (f, &n) in e.sent_by_flow.iter() {
                l.add_delivered(f, n);
            }
            e.full.ledger(l);
            e.queue.iter().for_each(|w| book_held(l, w.flow, w.payload));
        }
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let series: &[SeriesDecl] = if self.edge.is_some() { &EDGE_SERIES } else { &SERIES };
        if sub.is_empty() { crate::series::find(series, name) } else { None }
    }
    fn sample(&self, index: u64) -> f64 {
        match crate::series::split(index).1 {
            2 => self.abr.acr(),
            3 => self.edge.as_ref().map_or(f64::NAN, |e| e.queue.len() as f64),
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
    params: &[&ABR_PARAMS, &PARAMS, &LINE_PARAMS, &COMMON_PARAMS],
    inputs: &INPUTS,
    outputs: &OUT,
    ports: None,
    probes: &[&SOURCE_PROBES, &PROBES],
    series: &[KindSeries { at: "", series: &SERIES }],
    is_source: true,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

/// An edge device's inputs: backward RM cells, and the traffic source's cells.
pub const EDGE_INPUTS: [PortSpec; 2] = [PortSpec::cells("back", false), PortSpec::cells("in", true)];

/// The `abr_edge` kind's declarations (registered in `lib.rs`): an `abr_source` whose
/// data are the cells of a traffic source wired to `in`, queued and sent at ACR.
pub const EDGE_KIND: KindInfo = KindInfo {
    kind: "abr_edge",
    help: "ABR edge device: cells of any traffic source wired to input 'in' wait in a queue (unlimited, or edge_capacity with losses counted) drained by one ABR VC at its ACR (abr_source's rules and parameters); backward RM cells on 'back'",
    source: "dastangoo96 (ABR edge devices fed by self-similar traffic); ATM Forum TM 4.0 section 5.10.4",
    params: &[&ABR_PARAMS, &EDGE_PARAMS, &LINE_PARAMS, &COMMON_PARAMS],
    inputs: &EDGE_INPUTS,
    outputs: &OUT,
    ports: None,
    probes: &[&SOURCE_PROBES, &PROBES, &EDGE_PROBES],
    series: &[KindSeries { at: "", series: &EDGE_SERIES }],
    is_source: true,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_train_at_a_constant_acr_is_exact_to_the_picosecond() {
        // 7 cells × 424 bits at 74.88 Mb/s = 39.6367521… µs, rounded up to the ps.
        let rate = Rate::from_bps(74.88e6);
        let mut tr = Train::start(rate, SimTime(1_000), None);
        for _ in 1..7 {
            tr.step();
        }
        assert_eq!(tr.next(), Some(SimTime(1_000 + 39_636_753)));
        // The cell before it: 6 cells = 33.9743589… µs.
        assert_eq!(tr.last, SimTime(1_000 + 33_974_359));
        // The same rate again reuses the clock and starts afresh.
        let again = Train::start(rate, SimTime(5), Some(&tr));
        assert_eq!(again.next(), Some(SimTime(5 + 5_662_394)));
        // No rate (ACR 0): no in-rate cell.
        assert_eq!(Train::start(None, tr.last, Some(&tr)).next(), None);
    }

    #[test]
    fn demand_makes_data_ready_at_its_rate_from_start() {
        let p = AbrSourceParams { abr: AbrParams::eprca95(), demand: Rate::from_bps(42.4e6), source: SourceParams { vc: None, start: atmsim_kernel::SimDuration(5), stop: None, clp: false }, edge: None, line: LineParams { rate: None, length: 0.0 } };
        let mut s = AbrSourceNode::new(p, 0);
        assert_eq!(s.data_ready_at(), SimTime(5));
        // 100,000 cells/s: one every 10 µs.
        s.data_sent = 3;
        assert_eq!(s.data_ready_at(), SimTime(5 + 30_000_000));
    }
}
