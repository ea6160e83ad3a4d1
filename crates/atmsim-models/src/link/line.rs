//! An end system's own line: the cells it sends are serialised back to back at the
//! line rate, in the order they are sent, then cross the fibre. Meant for an end
//! system whose cells rarely find its line busy (an ABR source or edge device sends at
//! ACR ≤ PCR ≤ the line rate, so only an out-of-rate RM cell may have to wait; an ABR
//! destination sends backward RM cells, one per 32 cells): it then needs no `link`
//! component behind it, and its cells get the same instants as through a `link` of
//! that rate and length (its busy periods and cell clock, [`CellClock`]), without the
//! link's buffer statistics and without an event per cell. Parameters `line_rate` and
//! `line_length` ([`PARAMS`]).
//!
//! ```text
//!   cell sent at t ──> [ serialised: starts at max(t, end of the last) ] ──> fibre ──> out
//! ```

use std::collections::VecDeque;

use atmsim_kernel::rate::CellClock;
use atmsim_kernel::{Ledger, PortId, Rate, SimDuration, SimTime};

use crate::cell::{book_in_flight, Cell, Msg};
use crate::kind::Cx;
use crate::observe::{observe_at, observing, Event, Interest, Observation};
use crate::params::{fibre_delay, ParamIssue, ParamSpec, ParamType, Params};

/// The parameters of a component's own line (the kinds that have one declare them).
pub const PARAMS: [ParamSpec; 2] = [
    ParamSpec {
        name: "line_rate",
        ty: ParamType::Rate,
        default: None,
        required: false,
        help: "the component's own line: the cells it sends are serialised back to back at this rate, in the order sent, then cross line_length of fibre, with the instants of a link of that rate and length behind it but no event per cell (an ABR source's: at least PCR). Unset: each cell leaves at its instant on whatever is wired to 'out' (a link, say)",
        source: "atmsim convention (dastangoo96 section 2.1: the end systems' OC-3c lines, 4 km)",
    },
    ParamSpec {
        name: "line_length",
        ty: ParamType::Length,
        default: Some("0 m"),
        required: false,
        help: "fibre length of the component's own line (5 us/km after transmission); needs line_rate",
        source: "SPEC section 3 (5 us/km); 0: the next component is at this one",
    },
];

/// [`PARAMS`], bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineParams {
    /// None: no line of its own.
    pub rate: Option<Rate>,
    /// Fibre length (m).
    pub length: f64,
}

impl LineParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(LineParams { rate: p.opt("line_rate", Params::rate)?, length: p.need("line_length", Params::length)? })
    }

    /// A length needs a rate.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        if self.rate.is_none() && self.length > 0.0 {
            return Err(ParamIssue::new("line_length", "a line length needs line_rate (the line's rate); or wire a link"));
        }
        Ok(())
    }

    /// The line on output `out_port`, its timer `tag` (None: no line).
    pub fn line(&self, out_port: PortId, tag: u32) -> Option<Line> {
        self.rate.map(|r| Line::new(r, fibre_delay(self.length), out_port, tag))
    }
}

/// The line of a sending component: rate, fibre, and (when the run does not deliver
/// ahead) the cells on their way, delivered by one timer.
#[derive(Clone, Debug)]
pub struct Line {
    clock: CellClock,
    propagation: SimDuration,
    /// When the last cell's transmission ends (a cell sent then continues the train).
    last_end: SimTime,
    out_port: PortId,
    /// The timer tag the owner routes to [`Line::arrive`].
    tag: u32,
    /// Whether cells are handed over ahead, for their instants ([`Cx::may_deliver_ahead`]);
    /// else they wait here (`wire`) for one timer at the first's instant.
    ahead: bool,
    /// Whether the run's cell trace books each cell's start of transmission.
    traced: bool,
    wire: VecDeque<(SimTime, Cell)>,
}

impl Line {
    /// A line of `rate` with `propagation` after it, sending on `out_port`; its timer
    /// is `tag`.
    pub fn new(rate: Rate, propagation: SimDuration, out_port: PortId, tag: u32) -> Line {
        Line { clock: CellClock::new(rate), propagation, last_end: SimTime::ZERO, out_port, tag, ahead: false, traced: false, wire: VecDeque::new() }
    }

    /// Called at start: hand cells over ahead where the run allows it; book each
    /// cell's start of transmission if the run keeps a cell trace.
    pub fn start(&mut self, ctx: &mut Cx<'_>) {
        self.ahead = ctx.lanes().may_deliver_ahead(self.out_port);
        self.traced = observing(Interest::DEPART, ctx);
    }

    /// When a cell sent at `now` reaches the far end: its transmission starts at once
    /// on an idle line (a new busy period, unless the last one ends at this very
    /// instant) or when the cell ahead of it ends, and lasts one cell time.
    pub fn delivery(&mut self, now: SimTime) -> SimTime {
        if self.last_end < now {
            self.clock.restart(now);
        }
        self.last_end = self.clock.advance();
        self.last_end.plus(self.propagation)
    }

    /// Sends `cell` at `ctx.now` on `line`, or on output port 0 at once without one.
    #[inline]
    pub fn send_on(line: Option<&mut Line>, cell: Cell, ctx: &mut Cx<'_>) {
        match line {
            Some(l) => l.send(cell, ctx),
            None => ctx.send(0, Msg::Cell(cell)),
        }
    }

    /// Sends `cell` at `ctx.now`.
    #[inline]
    pub fn send(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        if self.traced {
            // It starts now on an idle line, else when the cell ahead of it ends.
            observe_at(self.last_end.max(ctx.now), Observation::Cell { event: Event::Depart(self.out_port), cell: &cell }, ctx);
        }
        let at = self.delivery(ctx.now);
        if self.ahead {
            ctx.send_at(at, self.out_port, Msg::Cell(cell));
        } else {
            if self.wire.is_empty() {
                ctx.schedule_at(at, self.tag);
            }
            self.wire.push_back((at, cell));
        }
    }

    /// The line's timer: the first cell on the wire arrives.
    pub fn arrive(&mut self, ctx: &mut Cx<'_>) {
        let Some((_, cell)) = self.wire.pop_front() else {
            return ctx.fail("line timer with no cell on the wire".into());
        };
        if let Some(&(next, _)) = self.wire.front() {
            ctx.schedule_at(next, self.tag);
        }
        ctx.send(self.out_port, Msg::Cell(cell));
    }

    /// Books the cells still on the wire.
    pub fn ledger(&self, l: &mut Ledger) {
        self.wire.iter().for_each(|(_, c)| book_in_flight(l, c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_on_an_idle_line_takes_one_cell_time_then_the_fibre() {
        // 149.76 Mb/s: 424 bits in 2.831196… µs, rounded up to the ps.
        let r = Rate::from_bps(149.76e6).unwrap();
        let mut l = Line::new(r, SimDuration(20_000_000), 0, 0);
        assert_eq!(l.delivery(SimTime(1_000)), SimTime(1_000 + 2_831_197 + 20_000_000));
    }

    #[test]
    fn cells_sent_while_the_line_is_busy_follow_back_to_back_on_the_cell_clock() {
        let r = Rate::from_bps(149.76e6).unwrap();
        let mut l = Line::new(r, SimDuration(0), 0, 0);
        // Three cells at the same instant: a train of three from t = 5.
        let got: Vec<SimTime> = (0..3).map(|_| l.delivery(SimTime(5))).collect();
        let want: Vec<SimTime> = (1..=3).map(|k| SimTime(5).plus(r.cell_train_offset(k))).collect();
        assert_eq!(got, want);
        // Sent exactly when the last ends: the train goes on (no new rounding).
        let end = got[2];
        assert_eq!(l.delivery(end), SimTime(5).plus(r.cell_train_offset(4)));
        // Sent after the line went idle: a new busy period from then.
        let later = SimTime(end.0 + 10_000_000);
        assert_eq!(l.delivery(later), later.plus(r.cell_train_offset(1)));
    }
}
