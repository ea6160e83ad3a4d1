//! A transmitter: a cell buffer ([`super::buffer`]: one FIFO or per-VC queues) served at
//! a line rate ([`super::phy`]), followed by a propagation delay. Two kinds share it:
//!
//! - `fifo`, the cell multiplexer: many inputs, finite or unlimited capacity with tail
//!   drop, served at a line rate (usually a physical-layer preset), propagation 0 unless
//!   set;
//! - `link`, a physical link: line rate plus propagation delay (given as a delay or a
//!   length at 5 µs/km), its transmit buffer unlimited unless set.
//!
//! ```text
//!   in (many) -->[ buffer | server @ rate ]--( propagation )--> out
//! ```
//!
//! A message delivered at `t` is a cell whose last bit arrived at `t`. The server is
//! work-conserving in continuous time (no slot alignment): within a busy period that
//! began at `t0`, cell j starts at `t0 + ceil(j·424/rate)` and ends at
//! `t0 + ceil((j+1)·424/rate)`, computed from the counter (exact, no drift). `capacity`
//! counts every cell in the buffer including the one being transmitted, so a
//! `capacity = K` fifo fed by Poisson cells is the M/D/1/K queue. Cells on the wire keep
//! their order, so the propagation stage is a FIFO with a single pending timer.
//!
//! *Simultaneous arrival and departure.* A cell whose transmission ends at `t` leaves
//! before a cell arriving at `t` is admitted (the freed place is available to it, and it
//! never sees the departing cell in the buffer), whatever order the kernel's events
//! came in; the arriving cell's transmission follows on without a gap, so it continues
//! the busy period and its cell clock (a back-to-back train keeps the exact line rate).
//!
//! *Departures computed on arrival (the fast path).* A standalone `fifo` or `link`, or
//! a switch port its switch allows ([`Transmitter::allow_compute`]), FIFO and unframed,
//! computes each cell's end of transmission when the cell
//! arrives (Lindley's recursion on the cell clock) and hands the cell over at once as
//! a timed delivery for that instant plus propagation: no event per departure (to a
//! passive component such as a `sink`, no event at all; to a switch or host, one). It
//! keeps (arrival, end) per queued cell and books departures, waits and buffer levels
//! in time order when the next cell arrives or the kernel asks it to settle (warm-up,
//! samples, end), so everything it reports equals the event-per-departure path's. It is
//! chosen when the run starts (`Lanes::may_deliver_ahead`); `[scenario] fast_path =
//! "sinks"` limits it to passive downstream components, `false` turns it off. EPD and
//! PPD decide at arrivals, so they take it as they are. EFCI marking takes it only
//! where the cells sent ahead wait in a lane of the port's own (`Lanes::keeps_lane`): a
//! cell leaves marked exactly when the cell `threshold` places behind it arrives before
//! it leaves, and then the mark is set on the cell where it waits, `threshold` places
//! ahead of the arriving one (`Lanes::sent_ahead_mut`, [`Transmitter::mark_ahead`]), and
//! noted on its queued entry for the count at its departure.
//!
//! *SONET framing* (`framing = "sonet"`, OC-3c and OC-12c only; default `"none"`). The
//! line is then slotted from time zero on the STS-3c/STS-12c frame ([`super::sonet`]):
//! a cell takes the first free cell slot that starts once it is ready (it waits while an
//! idle cell or overhead is on the line), so cells keep the payload rate on average but
//! leave a gap wherever a row's overhead falls; every slot that carries no cell carries
//! an idle cell (`phy_tx_idle_cells`). Framed transmitters always use the
//! event-per-departure path.

use crate::kind::{BuildInfo, Cx};
use std::collections::VecDeque;

use atmsim_kernel::probe::{LevelHistogram, ProbeKind, ProbeSpec, Report, Tally};
use atmsim_kernel::rate::CellClock;
use atmsim_kernel::{Ledger, PortId, Rate, SimDuration, SimTime};

use crate::control::buffer_policy::{BufferPolicy, BufferPolicyParams};
use crate::link::sonet::{FramedClock, SonetGrid};
use crate::cell::{book_in_flight, Cell, Msg, FLAG_EFCI};
use crate::drops::Drops;
use crate::observe::{observe_at, observing, Event, Interest, Observation};
use crate::params::{CellLimit, ParamIssue, ParamSpec, ParamType, Params, PropagationParams};
use crate::series::{SeriesDecl, MB_PER_CELL};
use atmsim_kernel::SeriesKind;

pub use super::buffer::{CellBuffer, VcQueue};
pub use super::phy::{line_rate, phy_rate, sonet_grid, LineRateParams, PHY_NAMES, PHY_PRESETS};

const COMMON: [ParamSpec; 3] = [
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "physical-layer preset giving the cell rate (OC-3c 149.76, OC-12c 599.04, DS-3 40.704, TAXI-100 98.15 Mb/s); give phy or rate", source: "ITU-T I.432, ATM Forum UNI 3.1" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell-carrying bit rate (424 bits per cell); give phy or rate", source: "required (phy or rate)" },
    ParamSpec { name: "delay", ty: ParamType::Time, default: None, required: false, help: "propagation delay after transmission (or give length)", source: "0 by default" },
];

const POLICY: [ParamSpec; 4] = crate::control::buffer_policy::PARAMS;

/// The framing choices of a transmitter.
pub const FRAMINGS: [&str; 2] = ["none", "sonet"];

/// `framing`, shared by `fifo`, `link` and the ABR multiplexer.
pub const FRAMING: ParamSpec = ParamSpec { name: "framing", ty: ParamType::Choice(&FRAMINGS), default: Some("none"), required: false, help: "\"sonet\": cell slots on the STS-3c/STS-12c frame (9 rows x 90N columns per 125 us; overhead columns leave a gap per row; empty slots carry idle cells); needs phy = OC-3c or OC-12c. \"none\": cells back to back at the cell rate", source: "ITU-T G.707, ANSI T1.105; cell mapping ITU-T I.432.2" };

/// Probes of a framed transmitter.
pub const FRAMING_PROBES: [ProbeSpec; 1] = [
    ProbeSpec { name: "phy_tx_idle_cells", unit: "cells", kind: ProbeKind::Counter, help: "framing = sonet: cell slots that carried an idle cell (count)" },
];

const LENGTH: ParamSpec = ParamSpec { name: "length", ty: ParamType::Length, default: None, required: false, help: "fibre length; propagation 5 µs/km (or give delay)", source: "SPEC section 3 (5 µs/km)" };

/// The `fifo` kind's parameters (also the ABR multiplexer's buffer and line).
pub const FIFO_PARAMS: [ParamSpec; 10] = [
    COMMON[0], COMMON[1], COMMON[2], LENGTH, POLICY[0], POLICY[1], POLICY[2], POLICY[3], FRAMING,
    ParamSpec { name: "capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "buffer size counting the cell in transmission; tail drop when full (bytes convert at 53 per cell)", source: "atmsim convention" },
];

pub const LINK_PARAMS: [ParamSpec; 10] = [
    COMMON[0], COMMON[1], COMMON[2], LENGTH, POLICY[0], POLICY[1], POLICY[2], POLICY[3], FRAMING,
    ParamSpec { name: "capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "transmit buffer size; unlimited by default", source: "atmsim convention" },
];

pub const PROBES: [ProbeSpec; 8] = [
    ProbeSpec { name: "q_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells arriving (count, rate)" },
    ProbeSpec { name: "q_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells transmitted (count, rate)" },
    ProbeSpec { name: "q_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped: buffer full, or by early/partial packet discard when set (count)" },
    ProbeSpec { name: "q_loss_ratio", unit: "1", kind: ProbeKind::Gauge, help: "dropped / arrived (value)" },
    ProbeSpec { name: "q_len", unit: "cells", kind: ProbeKind::TimeAverage, help: "cells in the buffer including the one in transmission (mean, max)" },
    ProbeSpec { name: "q_wait", unit: "s", kind: ProbeKind::Tally, help: "time from a cell's arrival to the start of its transmission (count, mean, std, min, max)" },
    ProbeSpec { name: "q_len_tail", unit: "1", kind: ProbeKind::Histogram, help: "fraction of time with more than x cells in the buffer (statistics p_gt_0 … p_gt_32)" },
    ProbeSpec { name: "phy_utilisation", unit: "1", kind: ProbeKind::Gauge, help: "fraction of time the line was transmitting (value)" },
];

/// What a transmitter samples as time series.
pub const SERIES: [SeriesDecl; 4] = [
    SeriesDecl { name: "q_len", unit: "cells", kind: SeriesKind::Level, scale: 1.0, help: "cells in the buffer, including the one in transmission, at each instant" },
    SeriesDecl { name: "q_tx_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells transmitted per second over each interval" },
    SeriesDecl { name: "q_drop_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells dropped (buffer full) per second over each interval" },
    SeriesDecl { name: "q_tx_rate", unit: "Mb/s", kind: SeriesKind::Rate, scale: MB_PER_CELL, help: "transmitted cell bit rate over each interval, 424 bits per cell" },
];

/// Levels of `q_len_tail` reported (p_gt_0 … p_gt_TAIL_MAX).
pub const TAIL_MAX: usize = 32;

const TAG_TX_DONE: u32 = 0;
const TAG_ARRIVE: u32 = 1;

/// The `fifo` and `link` kinds' parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct TransmitterParams {
    pub line: LineRateParams,
    pub capacity: CellLimit,
    pub propagation: PropagationParams,
    pub policy: BufferPolicyParams,
    /// `framing = "sonet"`.
    pub sonet: bool,
}

impl TransmitterParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(TransmitterParams {
            line: LineRateParams::bind(p)?,
            capacity: p.need("capacity", Params::cell_limit)?,
            propagation: PropagationParams::bind(p)?,
            policy: BufferPolicyParams::bind(p)?,
            sonet: p.need_choice("framing", &[("none", false), ("sonet", true)])?,
        })
    }

    /// The SONET grid (None: not framed).
    pub fn grid(&self) -> Result<Option<SonetGrid>, ParamIssue> {
        sonet_grid(&self.line, self.sonet, "framing")
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.line.rate(None)?;
        self.grid()?;
        self.capacity()?;
        self.propagation.validate()?;
        self.policy.validate()
    }

    /// The buffer size in cells (None: unlimited).
    fn capacity(&self) -> Result<Option<usize>, ParamIssue> {
        self.capacity.at_least_one("capacity", "capacity must be at least 1 cell (or \"unlimited\")")
    }
}

/// A cell queued at a transmitter that computes departures on arrival (the cell itself
/// has been handed downstream).
#[derive(Clone, Copy, Debug)]
struct Queued {
    arrived: SimTime,
    /// Its end of transmission.
    end: SimTime,
    aux: u16,
    /// It leaves above the EFCI threshold (decided when the cell that many places
    /// behind it arrives before it leaves).
    efci: bool,
}

#[derive(Clone, Debug)]
pub struct Transmitter {
    rate: Rate,
    propagation: SimDuration,
    buffer: CellBuffer,
    clock: CellClock,
    /// SONET framing: the slot grid and the next free slot (None: unframed).
    framed: Option<FramedClock>,
    out_port: PortId,
    tag_base: u32,
    /// Per-VC counters [offered, transmitted, dropped] indexed by `Cell::aux`, with the VC labels,
    /// for switch ports (the per-port per-VC management view); empty elsewhere.
    /// Output-side VC labels per `Cell::aux`, when the buffer counts per VC.
    vc_labels: Vec<u32>,
    wire: VecDeque<(SimTime, Cell)>,
    /// The end of the transmission in progress (event-per-departure path).
    tx_end: Option<SimTime>,
    /// Whether the run's cell trace books each cell's start of transmission here
    /// ([`Transmitter::trace_from`]).
    traced: bool,
    /// Departure events already handled early (a simultaneous arrival came first).
    stale: u32,
    /// When the last transmission ended: a cell arriving then continues its busy period.
    last_end: SimTime,
    /// Whether this kind may compute departures on arrival (standalone fifo and link).
    may_compute: bool,
    /// Departures computed on arrival: every queued cell, the one in transmission
    /// first (fast path only).
    computed: Option<VecDeque<Queued>>,
    /// Fast path: the most cells the buffer holds ([`CellBuffer::fifo_capacity`]).
    computed_capacity: Option<usize>,
    /// Fast path with EFCI marking: its threshold (cells; `usize::MAX`: no marking).
    /// A cell's mark is set on it where it waits, sent ahead, in the kernel's lane
    /// ([`Transmitter::mark_ahead`]) when the buffer then holds more than this.
    mark_over: usize,
    /// Cells dropped because the buffer was full.
    full: Drops,
    /// EPD, PPD, EFCI marking (None: plain tail drop, the common case).
    policy: Option<Box<BufferPolicy>>,
    /// Whether the policy acts at arrivals ([`BufferPolicy::acts_at_arrival`]; not an
    /// EFCI-only one).
    policy_at_arrival: bool,
    // statistics since warm-up
    rx: u64,
    tx: u64,
    dropped: u64,
    since: SimTime,
    /// Time at each buffer level: gives q_len mean and max, q_len_tail and utilisation.
    levels: LevelHistogram,
    wait: Tally,
    /// Departures kept for the owner (`aux`, flow), when it asked for them: a switch
    /// port that returns credit as cells leave (None: not kept, the common case).
    departed: Option<Vec<(u16, u32)>>,
}

impl Transmitter {
    /// A `fifo` or `link` (its checks are [`TransmitterParams::validate`]'s).
    pub fn new(params: TransmitterParams) -> Result<Self, ParamIssue> {
        let rate = params.line.rate(None)?;
        let capacity = params.capacity()?;
        let propagation = params.propagation.delay()?;
        let mut t = Transmitter::with(rate, CellBuffer::fifo(capacity), propagation, 0, 0);
        t.set_policy(params.policy.policy()?);
        t.set_framing(params.grid()?);
        t.may_compute = true;
        Ok(t)
    }

    /// Sets what the buffer does besides tail drop (EPD, PPD, EFCI marking).
    pub fn set_policy(&mut self, policy: Option<BufferPolicy>) {
        self.policy_at_arrival = policy.as_ref().is_some_and(BufferPolicy::acts_at_arrival);
        self.policy = policy.map(Box::new);
    }

    /// Puts the cell slots on a SONET frame (None: unframed, cells back to back).
    pub fn set_framing(&mut self, grid: Option<SonetGrid>) {
        self.framed = grid.map(FramedClock::new);
    }

    /// Cell slots that carried an idle cell since the statistics were reset (framed
    /// transmitters; None otherwise): slots ended in (since, now] less cells sent.
    pub fn idle_cells(&self, now: SimTime) -> Option<u64> {
        let g = self.framed.as_ref()?.grid();
        let slots = g.slots_ended_by(now.0) - g.slots_ended_by(self.since.0);
        Some(slots.saturating_sub(self.tx))
    }

    /// A transmitter sending on output port `out_port`, its timers tagged from
    /// `tag_base` (it uses `tag_base` and `tag_base + 1`).
    pub fn with(rate: Rate, buffer: CellBuffer, propagation: SimDuration, out_port: PortId, tag_base: u32) -> Self {
        Transmitter {
            rate,
            propagation,
            buffer,
            clock: CellClock::new(rate),
            framed: None,
            out_port,
            tag_base,
            vc_labels: Vec::new(),
            wire: VecDeque::new(),
            tx_end: None,
            traced: false,
            stale: 0,
            last_end: SimTime(u64::MAX),
            may_compute: false,
            computed: None,
            computed_capacity: None,
            mark_over: usize::MAX,
            full: Drops::new("buffer_full"),
            policy: None,
            policy_at_arrival: false,
            rx: 0,
            tx: 0,
            dropped: 0,
            since: SimTime::ZERO,
            levels: LevelHistogram::new(SimTime::ZERO, 1 << 20),
            wait: Tally::default(),
            departed: None,
        }
    }

    /// Keeps each departure's (`aux`, flow) for [`Transmitter::take_departures`]:
    /// the owner learns which cells left, as they leave (a departure may happen inside
    /// [`Transmitter::accept`] as well as at [`Transmitter::tick`]).
    pub fn keep_departures(&mut self) {
        self.departed = Some(Vec::new());
        // Departures computed on arrival happen without an event to report them at.
        self.may_compute = false;
    }

    /// The departures since the last call, oldest first (empty unless kept).
    pub fn take_departures(&mut self, into: &mut Vec<(u16, u32)>) {
        if let Some(d) = self.departed.as_mut() {
            into.append(d);
        }
    }

    /// Keeps per-VC counters for cells whose `aux` indexes `labels`.
    pub fn count_per_vc(&mut self, labels: Vec<u32>) {
        self.buffer.count_vcs(labels.len());
        self.vc_labels = labels;
    }

    #[inline(always)]
    fn count_vc(&mut self, aux: u16, what: usize) {
        self.buffer.count(aux, what);
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Cells in the buffer, the one in transmission included.
    pub fn queue_len(&self) -> usize {
        match &self.computed {
            Some(d) => d.len(),
            None => self.buffer.len(),
        }
    }

    #[inline(always)]
    fn level_changed(&mut self, now: SimTime) {
        self.levels.set(now, self.buffer.len());
    }

    /// Lets the owner's port compute departures on arrival (the fast path, chosen at
    /// [`Transmitter::choose_path`]): for a switch port nothing else reads at departure
    /// instants (no credit, no shared memory, no ABR algorithm).
    pub fn allow_compute(&mut self) {
        self.may_compute = self.departed.is_none();
    }

    /// Chooses the path when the run starts: departures computed on arrival when
    /// nothing needs their instants (see the module doc). With EFCI marking, only if
    /// the cells sent ahead wait in a lane of the port's own, where a later arrival can
    /// still mark them ([`Transmitter::mark_ahead`]).
    pub fn choose_path(&mut self, ctx: &mut Cx<'_>) {
        self.trace_from(ctx);
        let fifo = self.buffer.in_arrival_order();
        let marks = self.policy.as_ref().and_then(|p| p.efci_threshold());
        if self.may_compute && fifo && self.framed.is_none() && ctx.lanes().may_deliver_ahead(self.out_port) && (marks.is_none() || ctx.lanes().keeps_lane(self.out_port)) {
            self.computed = Some(VecDeque::new());
            self.computed_capacity = self.buffer.fifo_capacity();
            self.mark_over = marks.unwrap_or(usize::MAX);
        }
    }

    /// Called when the run starts: fires each cell's start of transmission if the run
    /// observes departures ([`crate::observe`]; the owner of a transmitter that does
    /// not [`Transmitter::choose_path`] calls this).
    pub fn trace_from(&mut self, ctx: &mut Cx<'_>) {
        self.traced = observing(Interest::DEPART, ctx);
    }

    /// Fires that the cell `pop` returns next starts its transmission at `start`
    /// (event-per-departure path: it is chosen when it starts).
    #[cold]
    fn trace_next(&self, start: SimTime, ctx: &mut Cx<'_>) {
        if let Some(&(cell, _)) = self.buffer.next() {
            observe_at(start, Observation::Cell { event: Event::Depart(self.out_port), cell: &cell }, ctx);
        }
    }

    /// Fires when the cell joining the computed departures starts its transmission:
    /// when the last cell queued ends, or now on an idle line.
    #[cold]
    fn trace_computed(&self, cell: &Cell, ctx: &mut Cx<'_>) {
        let start = self.computed.as_ref().and_then(VecDeque::back).map_or(ctx.now, |b| b.end);
        observe_at(start, Observation::Cell { event: Event::Depart(self.out_port), cell }, ctx);
    }

    /// Cells in the buffer at `now` (departures ending now left first), bringing the
    /// computed departures up to date: for a reader at an arbitrary instant (a
    /// switch's ABR algorithm at a backward RM cell).
    pub fn queue_len_at(&mut self, now: SimTime) -> usize {
        self.depart_before(SimTime(now.0 + 1));
        self.queue_len()
    }

    /// An idle line takes a cell at `now`: a new busy period (and cell clock) starts,
    /// unless the last one ended at this very instant (then it goes on); the cell waits 0.
    #[inline(always)]
    fn start_busy_period(&mut self, now: SimTime) {
        if self.last_end != now {
            self.clock.restart(now);
        }
        self.wait.add(0.0);
    }

    /// The fast path's arrival: books the departures due by now, then admits the cell,
    /// computes its end of transmission and hands it downstream for that instant.
    #[inline(always)]
    fn accept_computed(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        // Departures at this very instant come first.
        self.depart_before(SimTime(now.0 + 1));
        self.rx += 1;
        if !self.vc_labels.is_empty() {
            self.count_vc(cell.aux, 0);
        }
        let Some(q) = self.computed.as_mut() else { return };
        let len = q.len();
        let room = !self.computed_capacity.is_some_and(|c| len >= c);
        if self.policy_at_arrival && self.policy_refuses(&cell, len, room, ctx) {
            return;
        }
        if !room {
            self.tail_drop(&cell, ctx);
            return;
        }
        if len == 0 {
            self.start_busy_period(now);
        }
        let end = self.clock.advance();
        if self.traced {
            self.trace_computed(&cell, ctx);
        }
        let Some(q) = self.computed.as_mut() else { return };
        q.push_back(Queued { arrived: now, end, aux: cell.aux, efci: false });
        let len = q.len();
        if len > self.mark_over {
            self.mark_ahead(len, ctx);
        }
        self.levels.set(now, len);
        ctx.send_at(end.plus(self.propagation), self.out_port, Msg::Cell(cell));
    }

    /// Books, in time order, the computed departures before `before`: what the
    /// event-per-departure path does at each end of transmission.
    #[inline(always)]
    pub fn depart_before(&mut self, before: SimTime) {
        let Some(q) = self.computed.as_mut() else { return };
        while let Some(&Queued { end, aux, efci, .. }) = q.front() {
            if end >= before {
                break;
            }
            q.pop_front();
            self.last_end = end;
            self.tx += 1;
            if !self.vc_labels.is_empty() {
                self.buffer.count(aux, 1);
            }
            if efci {
                if let Some(p) = self.policy.as_mut() {
                    p.count_mark();
                }
            }
            if let Some(next) = q.front() {
                self.wait.add(end.since(next.arrived).0 as f64);
            }
            self.levels.set(end, q.len());
        }
    }

    #[inline(always)]
    pub fn accept(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        if self.computed.is_some() {
            return self.accept_computed(cell, ctx);
        }
        let now = ctx.now;
        if self.tx_end == Some(now) {
            // The transmission ending now ends before this arrival (module doc); its
            // event, still pending, will be stale.
            self.tx_done(ctx);
            self.stale += 1;
        }
        self.rx += 1;
        if !self.vc_labels.is_empty() {
            self.count_vc(cell.aux, 0);
        }
        if self.policy_at_arrival {
            if !self.admit_with_policy(cell, ctx) {
                return;
            }
        } else if !self.buffer.admit(cell, now) {
            self.tail_drop(&cell, ctx);
            return;
        }
        if self.buffer.len() == 1 {
            let (start, end) = match self.framed.as_mut() {
                None => {
                    self.start_busy_period(now);
                    (now, self.clock.advance())
                }
                Some(f) => {
                    let (start, end) = f.take(now.0);
                    self.wait.add((start - now.0) as f64);
                    (SimTime(start), SimTime(end))
                }
            };
            ctx.schedule_at(end, self.tag_base + TAG_TX_DONE);
            self.tx_end = Some(end);
            if self.traced {
                self.trace_next(start, ctx);
            }
        }
        self.level_changed(now);
    }

    /// A cell arriving for this buffer that its owner refuses (a switch's shared
    /// memory is full): counted as arrived and dropped here, cause `buffer_full`, so the
    /// port's counters (`q_rx_cells`, `q_drop_cells`, per-VC drops) see it like a tail
    /// drop.
    #[cold]
    pub fn refuse(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        self.rx += 1;
        if !self.vc_labels.is_empty() {
            self.count_vc(cell.aux, 0);
        }
        self.tail_drop(&cell, ctx);
    }

    /// [`Transmitter::accept`]'s admission when a [`BufferPolicy`] is set: false if
    /// the cell went no further (it was dropped).
    #[cold]
    fn admit_with_policy(&mut self, cell: Cell, ctx: &mut Cx<'_>) -> bool {
        if self.policy_discards(&cell, self.buffer.len(), ctx) {
            return false;
        }
        let ok = self.buffer.admit(cell, ctx.now);
        self.policy_admission(&cell, ok);
        if !ok {
            self.tail_drop(&cell, ctx);
        }
        ok
    }

    /// The buffer policy's verdict on a cell arriving at a buffer of `len` cells: true
    /// if EPD or PPD discarded it (counted and gone).
    #[cold]
    fn policy_discards(&mut self, cell: &Cell, len: usize, ctx: &mut Cx<'_>) -> bool {
        let Some(policy) = self.policy.as_mut() else { return false };
        let Some(why) = policy.arrival(cell, len) else {
            return false;
        };
        // (The policy keeps these per flow for the ledger, by cause.)
        self.count_loss(cell);
        crate::drops::dropped_here(why.cause(), cell, ctx);
        true
    }

    /// The fast path's buffer policy at an arrival finding `len` cells (`room`: below
    /// capacity): true if EPD or PPD discarded the cell; else the policy is told
    /// whether it found room.
    #[cold]
    fn policy_refuses(&mut self, cell: &Cell, len: usize, room: bool, ctx: &mut Cx<'_>) -> bool {
        if self.policy_discards(cell, len, ctx) {
            return true;
        }
        self.policy_admission(cell, room);
        false
    }

    /// The fast path with EFCI marking, a cell having joined a buffer now of `len`
    /// cells, about to be sent ahead: the cell the threshold's number `t` (at least 1)
    /// of places ahead of it is still here, so it leaves marked. The mark goes on that
    /// cell where it waits for its delivery, `t − 1` places before the last one sent in
    /// the port's lane (every cell admitted is sent ahead there, in order, and
    /// delivered after it leaves), and on its queued entry, for the count at its
    /// departure.
    #[cold]
    fn mark_ahead(&mut self, len: usize, ctx: &mut Cx<'_>) {
        let t = self.mark_over;
        if let Some(x) = self.computed.as_mut().and_then(|q| q.get_mut(len - 1 - t)) {
            x.efci = true;
        }
        match t.checked_sub(1).and_then(|back| ctx.lanes().sent_ahead_mut(self.out_port, back)) {
            Some(Msg::Cell(c)) => c.flags |= FLAG_EFCI,
            _ => ctx.fail(format!("EFCI: the cell {t} places ahead of the one arriving is not waiting in the lane")),
        }
    }

    /// Tells the buffer policy whether the cell found room (PPD starts on a drop).
    fn policy_admission(&mut self, cell: &Cell, admitted: bool) {
        if let Some(policy) = self.policy.as_mut() {
            policy.admission(cell, admitted);
        }
    }

    /// A cell lost because the buffer was full.
    #[cold]
    fn tail_drop(&mut self, cell: &Cell, ctx: &mut Cx<'_>) {
        self.count_loss(cell);
        self.full.drop(cell, ctx);
    }

    fn count_loss(&mut self, cell: &Cell) {
        self.dropped += 1;
        if !self.vc_labels.is_empty() {
            self.count_vc(cell.aux, 2);
        }
    }

    #[inline(always)]
    fn tx_done(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let Some((mut cell, _)) = self.buffer.pop() else {
            ctx.fail("transmission ended with an empty buffer".into());
            return;
        };
        if let Some(policy) = self.policy.as_mut() {
            policy.departure(&mut cell, self.buffer.len() + 1);
        }
        self.last_end = now;
        self.tx += 1;
        if !self.vc_labels.is_empty() {
            self.count_vc(cell.aux, 1);
        }
        if let Some(d) = self.departed.as_mut() {
            d.push((cell.aux, cell.flow));
        }
        if let Some(arrived) = self.buffer.next_arrival() {
            let (start, end) = match self.framed.as_mut() {
                None => {
                    self.wait.add(now.since(arrived).0 as f64);
                    (now, self.clock.advance())
                }
                Some(f) => {
                    let (start, end) = f.take(now.0);
                    self.wait.add((start - arrived.0) as f64);
                    (SimTime(start), SimTime(end))
                }
            };
            ctx.schedule_at(end, self.tag_base + TAG_TX_DONE);
            self.tx_end = Some(end);
            if self.traced {
                self.trace_next(start, ctx);
            }
        } else {
            self.tx_end = None;
        }
        self.level_changed(now);
        if self.propagation.ps() == 0 {
            ctx.send(self.out_port, Msg::Cell(cell));
        } else {
            let at = now.plus(self.propagation);
            if self.wire.is_empty() {
                ctx.schedule_at(at, self.tag_base + TAG_ARRIVE);
            }
            self.wire.push_back((at, cell));
        }
    }

    fn arrive(&mut self, ctx: &mut Cx<'_>) {
        let Some((_, cell)) = self.wire.pop_front() else {
            ctx.fail("propagation timer with an empty wire".into());
            return;
        };
        if let Some(&(next, _)) = self.wire.front() {
            ctx.schedule_at(next, self.tag_base + TAG_ARRIVE);
        }
        ctx.send(self.out_port, Msg::Cell(cell));
    }

    #[inline(always)]
    pub fn tick(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        if tag == self.tag_base + TAG_TX_DONE {
            if self.stale > 0 {
                self.stale -= 1;
            } else {
                self.tx_done(ctx)
            }
        } else {
            self.arrive(ctx)
        }
    }

    /// Quantity `q` of [`SERIES`].
    pub fn quantity(&self, q: usize) -> f64 {
        match q {
            0 => self.queue_len() as f64,
            1 | 3 => self.tx as f64,
            2 => self.dropped as f64,
            _ => f64::NAN,
        }
    }



}



impl crate::kind::Kind for Transmitter {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let _ = b;
        let params = TransmitterParams::bind(p)?;
        params.validate()?;
        Transmitter::new(params)
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.rx = 0;
        self.tx = 0;
        self.dropped = 0;
        self.since = now;
        self.levels.reset(now);
        self.wait.reset();
        self.buffer.reset_counts();
        if let Some(p) = self.policy.as_mut() {
            p.reset_stats();
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { f64::NAN };
        out.push(path, "q_rx_cells", "count", self.rx as f64, "cells");
        out.push(path, "q_rx_cells", "rate", per_s(self.rx), "cells/s");
        out.push(path, "q_tx_cells", "count", self.tx as f64, "cells");
        out.push(path, "q_tx_cells", "rate", per_s(self.tx), "cells/s");
        out.push(path, "q_drop_cells", "count", self.dropped as f64, "cells");
        let loss = if self.rx > 0 { self.dropped as f64 / self.rx as f64 } else { f64::NAN };
        out.push(path, "q_loss_ratio", "value", loss, "1");
        out.push(path, "q_len", "mean", self.levels.mean(now), "cells");
        out.push(path, "q_len", "max", self.levels.max() as f64, "cells");
        self.wait.report(out, path, "q_wait", "s", 1e-12);
        let top = self.buffer.capacity().map(|c| c.min(TAIL_MAX)).unwrap_or(TAIL_MAX);
        for x in 0..=top {
            out.push(path, "q_len_tail", &format!("p_gt_{x}"), self.levels.p_greater(now, x), "1");
        }
        match self.idle_cells(now) {
            // The line transmits exactly when the buffer holds a cell.
            None => out.push(path, "phy_utilisation", "value", self.levels.p_greater(now, 0), "1"),
            // Framed: cells among the cell slots (idle cells and overhead excluded).
            Some(idle) => {
                let slots = idle + self.tx;
                out.push(path, "phy_utilisation", "value", if slots > 0 { self.tx as f64 / slots as f64 } else { f64::NAN }, "1");
                out.push(path, "phy_tx_idle_cells", "count", idle as f64, "cells");
            }
        }
        if let Some(p) = &self.policy {
            out.push(path, "q_epd_cells", "count", p.epd_cells as f64, "cells");
            out.push(path, "q_ppd_cells", "count", p.ppd_cells as f64, "cells");
            out.push(path, "q_efci_cells", "count", p.efci_cells as f64, "cells");
            out.push(path, "q_clp_cells", "count", p.clp_cells as f64, "cells");
        }
        for (aux, &vc) in self.vc_labels.iter().enumerate() {
            let c = self.buffer.counts(aux);
            let name = format!("{path}/{}", crate::cell::vc_name(vc));
            out.push(&name, "port_out_cells", "count", c[0] as f64, "cells");
            out.push(&name, "port_tx_cells", "count", c[1] as f64, "cells");
            out.push(&name, "port_drop_cells", "count", c[2] as f64, "cells");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        self.full.ledger(l);
        if let Some(p) = &self.policy {
            for (f, n) in p.drops_by_flow.iter() {
                l.add_dropped("epd", f, n[0]);
                l.add_dropped("ppd", f, n[1]);
                l.add_dropped("clp", f, n[2]);
            }
        }
        self.buffer.for_each(|c| book_in_flight(l, c));
        for (_, c) in &self.wire {
            book_in_flight(l, c);
        }
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        self.choose_path(ctx);
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        self.accept(cell, ctx);
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        self.tick(tag, ctx);
    }
    fn settle(&mut self, before: SimTime) {
        self.depart_before(before);
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        if sub.is_empty() { crate::series::find(&SERIES, name) } else { None }
    }
    fn sample(&self, index: u64) -> f64 {
        self.quantity(crate::series::split(index).1)
    }
}

/// The cell rate a fifo or link serves its inputs at (the load-time check of offered load).
fn served_rate(p: &Params) -> Option<f64> {
    line_rate(p, None).ok().map(Rate::bps)
}

/// The `fifo` kind's declarations (registered in `lib.rs`).
pub const FIFO_KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "fifo",
    help: "cell multiplexer: FIFO buffer (finite with tail drop, or unlimited) served at a line rate",
    source: "output-buffered ATM multiplexer",
    params: &[&crate::link::transmitter::FIFO_PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::link::transmitter::PROBES, &crate::control::buffer_policy::PROBES, &crate::link::transmitter::FRAMING_PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::link::transmitter::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates { offered: None, line: Some(served_rate), passes: false },
    observed: crate::kind::Observed::NONE,
};

/// The `link` kind's declarations (registered in `lib.rs`).
pub const LINK_KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "link",
    help: "physical link: transmitter at the line rate, then propagation delay (delay, or length at 5 µs/km)",
    source: "SONET/DS-3/TAXI presets (ITU-T I.432, ATM Forum UNI 3.1)",
    params: &[&crate::link::transmitter::LINK_PARAMS],
    inputs: &crate::kind::IN_ONE,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::link::transmitter::PROBES, &crate::control::buffer_policy::PROBES, &crate::link::transmitter::FRAMING_PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::link::transmitter::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates { offered: None, line: Some(served_rate), passes: false },
    observed: crate::kind::Observed::NONE,
};

impl crate::part::Part for Transmitter {
    fn reset_stats(&mut self, now: SimTime) {
        <Transmitter as crate::kind::Kind>::reset_stats(self, now)
    }
    fn report(&self, at: &crate::part::At<'_>, out: &mut Report) {
        <Transmitter as crate::kind::Kind>::report(self, at.now, at.path, out)
    }
    fn ledger(&self, l: &mut Ledger) {
        <Transmitter as crate::kind::Kind>::ledger(self, l)
    }
    fn series(&self) -> &'static [crate::series::SeriesDecl] {
        &SERIES
    }
    fn sample(&self, q: usize) -> f64 {
        self.quantity(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(aux: u16, seq: u32) -> Cell {
        Cell { aux, ..Cell::plain(SimTime::ZERO, 0, 0, seq) }
    }

    /// TAXI: 125 Mbaud of 4B/5B symbols carry 100 Mb/s; every 53-octet cell follows a
    /// one-octet start-of-cell command, so 54 octet times per cell: 100e6 / (54 × 8) =
    /// 231,481.5 cells/s, the 98 Mb/s of lazarou96 Table 2 (within 0.2%).
    #[test]
    fn taxi_carries_one_cell_per_54_octet_times() {
        let r = phy_rate("TAXI-100").map(|r| r.cells_per_s()).unwrap_or(0.0);
        assert!((r - 100e6 / 432.0).abs() < 0.01, "{r}");
        let mbps = r * 424.0 / 1e6;
        assert!((mbps - 98.0).abs() / 98.0 < 0.002, "{mbps}");
        let oc3 = phy_rate("OC-3c").map(|r| r.cells_per_s()).unwrap_or(0.0);
        assert!((oc3 - 353_207.5).abs() < 0.1, "{oc3}");
    }

    /// Per-VC queues serving one VC serve in arrival order, bounded by the smaller of
    /// the VC's and the port's limits, as `admit` bounds them; two VCs do not.
    #[test]
    fn a_per_vc_buffer_of_one_vc_is_a_fifo_of_the_smaller_limit() {
        for (vc, port, cap) in [(Some(2), Some(5), Some(2)), (Some(4), Some(3), Some(3)), (None, Some(3), Some(3)), (Some(2), None, Some(2)), (None, None, None)] {
            let mut b = CellBuffer::per_vc(1, vc, port);
            assert!(b.in_arrival_order());
            assert_eq!(b.fifo_capacity(), cap);
            let admitted = (0..6).filter(|&k| b.admit(cell(0, k), SimTime(k as u64))).count();
            assert_eq!(admitted, cap.unwrap_or(6).min(6), "{vc:?} {port:?}");
        }
        assert!(!CellBuffer::per_vc(2, Some(2), None).in_arrival_order());
        assert!(CellBuffer::fifo(Some(7)).in_arrival_order());
        assert_eq!(CellBuffer::fifo(Some(7)).fifo_capacity(), Some(7));
    }

    #[test]
    fn priority_levels_serve_the_lower_level_only_when_the_higher_are_empty() {
        // VCs 0 and 2 at level 0, VC 1 at level 1, VC 3 at level 2.
        let mut b = CellBuffer::per_vc(4, None, None).with_levels(vec![0, 1, 0, 2]);
        for (aux, seq) in [(3, 30), (1, 10), (1, 11), (0, 1), (2, 20), (0, 2)] {
            assert!(b.admit(cell(aux, seq), SimTime(seq as u64)));
        }
        // The first cell found the port idle: it is in transmission and goes first.
        // Then level 0 round robin (VCs 0, 2, 0, 2), level 1 (VC 1's two).
        assert_eq!(b.next_arrival(), Some(SimTime(30)));
        let mut order = vec![b.pop().map(|(c, _)| c.seq)];
        assert_eq!(b.next_arrival(), Some(SimTime(1)));
        // A level-0 cell arriving while level 0 is served joins its round robin.
        assert!(b.admit(cell(2, 21), SimTime(21)));
        order.extend(std::iter::from_fn(|| b.pop()).map(|(c, _)| Some(c.seq)));
        assert_eq!(order, [30, 1, 20, 2, 21, 10, 11].map(Some));
        // Once empty, a lower level's cell starts at once, and a higher one arriving
        // during its transmission waits for it (non-preemptive): the lower cell is the
        // one that ends first.
        assert!(b.admit(cell(3, 31), SimTime(40)));
        assert!(b.admit(cell(0, 3), SimTime(41)));
        assert_eq!(b.next_arrival(), Some(SimTime(40)));
        assert_eq!(b.pop().map(|(c, _)| c.seq), Some(31));
        assert_eq!(b.next_arrival(), Some(SimTime(41)));
        assert_eq!(b.pop().map(|(c, _)| c.seq), Some(3));
        assert!(b.is_empty());
    }

    #[test]
    fn weights_give_a_vc_that_many_cells_per_turn() {
        // VC 0 weight 3, VC 1 weight 1 (default), VC 2 weight 2; every VC backlogged.
        let mut b = CellBuffer::per_vc(3, None, None).with_weights(vec![3, 1, 2]);
        for k in 0..6 {
            for aux in 0..3u16 {
                assert!(b.admit(cell(aux, 10 * u32::from(aux) + k), SimTime(u64::from(k))));
            }
        }
        let order: Vec<u32> = std::iter::from_fn(|| b.pop()).map(|(c, _)| c.seq).collect();
        // turns: 0 0 0 | 1 | 2 2 | 0 0 0 | 1 | 2 2 | 1 | 2 2 | 1 | 1 | 1
        assert_eq!(order, vec![0, 1, 2, 10, 20, 21, 3, 4, 5, 11, 22, 23, 12, 24, 25, 13, 14, 15]);
        // A VC whose queue empties mid-turn starts a fresh turn when it comes back.
        let mut b = CellBuffer::per_vc(2, None, None).with_weights(vec![3, 1]);
        for (aux, seq) in [(0, 0), (1, 10), (1, 11)] {
            assert!(b.admit(cell(aux, seq), SimTime(0)));
        }
        assert_eq!(b.pop().map(|(c, _)| c.seq), Some(0));
        for seq in [1, 2, 3, 4] {
            assert!(b.admit(cell(0, seq), SimTime(1)));
        }
        let rest: Vec<u32> = std::iter::from_fn(|| b.pop()).map(|(c, _)| c.seq).collect();
        assert_eq!(rest, vec![10, 1, 2, 3, 11, 4]);
    }

    #[test]
    fn levels_all_zero_are_plain_round_robin() {
        let plain = CellBuffer::per_vc(3, Some(2), None);
        let zero = CellBuffer::per_vc(3, Some(2), None).with_levels(vec![0, 0, 0]);
        for mut b in [plain, zero] {
            for (aux, seq) in [(0, 1), (0, 2), (1, 10), (2, 20), (2, 21)] {
                assert!(b.admit(cell(aux, seq), SimTime(seq as u64)));
            }
            let order: Vec<u32> = std::iter::from_fn(|| b.pop()).map(|(c, _)| c.seq).collect();
            assert_eq!(order, vec![1, 10, 20, 2, 21]);
        }
    }

    #[test]
    fn per_vc_buffer_serves_round_robin_and_limits_each_vc() {
        let mut b = CellBuffer::per_vc(3, Some(2), None);
        for (aux, seq) in [(0, 1), (0, 2), (0, 3), (1, 10), (2, 20), (2, 21)] {
            let ok = b.admit(cell(aux, seq), SimTime(seq as u64));
            assert_eq!(ok, seq != 3, "seq {seq}");
        }
        let order: Vec<u32> = std::iter::from_fn(|| b.pop()).map(|(c, _)| c.seq).collect();
        assert_eq!(order, vec![1, 10, 20, 2, 21]);
        assert!(b.is_empty());
    }

    #[test]
    fn per_vc_queue_keeps_order_past_its_inline_head_and_counts_beside_it() {
        let mut b = CellBuffer::per_vc(2, None, None);
        b.count_vcs(2);
        for seq in 1..=4 {
            assert!(b.admit(cell(1, seq), SimTime(seq as u64)));
            b.count(1, 0);
        }
        assert!(b.admit(cell(0, 9), SimTime(5)));
        assert_eq!(b.next_arrival(), Some(SimTime(1)));
        let order: Vec<u32> = std::iter::from_fn(|| b.pop()).map(|(c, _)| c.seq).collect();
        assert_eq!(order, vec![1, 9, 2, 3, 4]);
        b.count(1, 1);
        b.count(7, 2); // an index beyond the table is not counted
        assert_eq!(b.counts(1), [4, 1, 0]);
        assert_eq!(b.counts(0), [0, 0, 0]);
        b.reset_counts();
        assert_eq!(b.counts(1), [0, 0, 0]);
        let mut f = CellBuffer::fifo(None);
        f.count_vcs(3);
        f.count(2, 2);
        assert_eq!(f.counts(2), [0, 0, 1]);
    }

    #[test]
    fn fifo_buffer_tail_drops() {
        let mut b = CellBuffer::fifo(Some(2));
        assert!(b.admit(cell(0, 1), SimTime(0)));
        assert!(b.admit(cell(0, 2), SimTime(0)));
        assert!(!b.admit(cell(0, 3), SimTime(0)));
        assert_eq!(b.next_arrival(), Some(SimTime(0)));
        assert_eq!(b.pop().map(|x| x.0.seq), Some(1));
    }
}
