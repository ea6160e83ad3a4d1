//! Cell-level pacing as lazarou96 models it (section 4.4): "an infinite size FIFO queue
//! and a server with service rate equal to the pacing rate". A cell leaves the pacer
//! when its service of 424 bits at the pacing rate ends: d_n = max(a_n, d_{n−1}) + 424/r.
//!
//! ```text
//!   in ──► [ per paced VC: unlimited FIFO ─ server at `rate` ] ──► out
//!          (cells of VCs not listed pass straight through)
//! ```
//!
//! [`Pacer`] is the per-VC queue, reused by `host` (a pacer on a connection's VC in the
//! adapter, as the OTTO interface paces per VC in evans96) and by the `pacer` kind
//! (placed before a link or after a switch port).
//!
//! **What a pacing rate counts** ([`PacingUnit`]). A pacing setting of r Mb/s is a
//! number of bits per second, but which bits of a cell it counts is not said by the
//! papers. `payload` (the default) counts the 48-octet cell payload, the AAL5 PDU
//! octets, so a cell takes 384/r; `cell` counts whole 53-octet cells (424/r). The
//! evidence (docs/models/lazarou96.md, "Pacing rate"): lazarou96's own FIFO model of a
//! 70 Mb/s pacer gives 71.93 Mb/s of TCP data and the measurement 71.51, both above
//! the 62.9 Mb/s a whole-cell server of 70 Mb/s can carry (70 × 48/53 × 9140/9216) and
//! within 3.6% of the payload reading's 69.4; evans96 gives its 5 Mb/s OTTO setting as
//! "67 packets/s", which is 67.8 packets/s of 192-cell PDUs in the payload reading and
//! 61.4 in the cell reading.

use crate::kind::{BuildInfo, Cx};
use crate::timer::Timer;
use atmsim_kernel::PortId;
use std::collections::VecDeque;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, Tally};
use atmsim_kernel::rate::CellClock;
use atmsim_kernel::{Ledger, Rate, SimTime};

use crate::cell::{book_in_flight, parse_vc_label, vc_name, Cell, Msg};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::SeriesDecl;
use atmsim_kernel::SeriesKind;

/// What bits a pacing rate counts (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingUnit {
    /// Whole 53-octet cells: a cell is served in 424 bits / rate.
    Cell,
    /// The 48-octet cell payload (AAL5 PDU octets): a cell is served in 384 bits / rate.
    Payload,
}

/// The `unit` choices (scenario names).
pub const UNITS: [(&str, PacingUnit); 2] = [("payload", PacingUnit::Payload), ("cell", PacingUnit::Cell)];
pub const UNIT_NAMES: [&str; 2] = ["payload", "cell"];

impl PacingUnit {
    /// The rate of whole cells a setting of `setting` in this unit comes to (None if it
    /// is out of range).
    pub fn cell_rate(self, setting: Rate) -> Option<Rate> {
        match self {
            PacingUnit::Cell => Some(setting),
            // 424/384 = 53/48 more cell bits than payload bits.
            PacingUnit::Payload => Rate::from_bps(setting.bps() * 53.0 / 48.0),
        }
    }
}

/// One pacing queue.
#[derive(Clone, Debug)]
pub struct Pacer {
    clock: CellClock,
    free_at: SimTime,
    queue: VecDeque<(SimTime, Cell)>,
    /// The release timer of the head cell (components use [`Pacer::enqueue`] and
    /// [`Pacer::release`]; `push` and `pop` are the sans-IO steps).
    timer: Timer,
    pub paced: u64,
    pub wait: Tally,
}

impl Pacer {
    pub fn new(rate: Rate) -> Pacer {
        Pacer { clock: CellClock::new(rate), free_at: SimTime::ZERO, queue: VecDeque::new(), timer: Timer::default(), paced: 0, wait: Tally::default() }
    }

    /// Queues a cell arriving at `now`; returns the instant to schedule a release for
    /// when the queue was empty (else a release is already pending).
    pub fn push(&mut self, cell: Cell, now: SimTime) -> Option<SimTime> {
        if self.free_at <= now {
            self.clock.restart(now);
        }
        let done = self.clock.advance();
        self.free_at = done;
        self.queue.push_back((done, cell));
        (self.queue.len() == 1).then_some(done)
    }

    /// Takes the head cell (due at `now`) and says when the next one is due.
    pub fn pop(&mut self, now: SimTime) -> Option<(Cell, Option<SimTime>)> {
        match self.queue.front() {
            Some(&(t, _)) if t <= now => {}
            _ => return None,
        }
        let (t, cell) = self.queue.pop_front()?;
        self.paced += 1;
        self.wait.add(t.since(cell.born).0 as f64);
        Some((cell, self.queue.front().map(|&(t, _)| t)))
    }

    /// Queues a cell arriving now and arms the release timer (tag `tag`) if the queue
    /// was empty.
    pub fn enqueue(&mut self, cell: Cell, tag: u32, ctx: &mut Cx<'_>) {
        if let Some(t) = self.push(cell, ctx.now) {
            self.timer.arm(t, tag, ctx);
        }
    }

    /// The release timer (tag `tag`) fired: the head cell, if it is due now, and the
    /// timer re-armed for the next one.
    pub fn release(&mut self, tag: u32, ctx: &mut Cx<'_>) -> Option<Cell> {
        if !self.timer.fire(ctx.now) {
            return None;
        }
        let (cell, next) = self.pop(ctx.now)?;
        if let Some(t) = next {
            self.timer.arm(t, tag, ctx);
        }
        Some(cell)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Cells held, by flow (for the conservation ledger).
    pub fn ledger(&self, l: &mut Ledger) {
        for (_, c) in &self.queue {
            book_in_flight(l, c);
        }
    }
}

pub const PARAMS: [ParamSpec; 3] = [
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: true, help: "pacing rate, in the bits `unit` says", source: "lazarou96 4.4: 70 Mb/s; 4.5: 40 Mb/s" },
    ParamSpec { name: "unit", ty: ParamType::Choice(&UNIT_NAMES), default: Some("payload"), required: false, help: "what the rate counts: payload = the 48-octet cell payload (384 bits per cell), cell = whole 53-octet cells (424 bits)", source: "lazarou96 4.4 (71.93 Mb/s of TCP at a 70 Mb/s pacer); evans96 (5 Mb/s = 67 packets/s): docs/models/lazarou96.md" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: false, help: "VC labels (\"VPI/VCI\" or \"VCI\") paced, each in its own queue; default: every cell in one queue", source: "scenario" },
];

pub const PROBES: [ProbeSpec; 2] = [
    ProbeSpec { name: "paced_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells released by the pacer, per paced VC (count, rate)" },
    ProbeSpec { name: "pacer_q_len", unit: "cells", kind: ProbeKind::Gauge, help: "cells held at the end of the run, per paced VC (value)" },
];

/// The `pacer` component.
/// What a pacer samples as time series (per VC as `<pacer>/vc<N>`, or the whole).
pub const SERIES: [SeriesDecl; 2] = [
    SeriesDecl { name: "pacer_q_len", unit: "cells", kind: SeriesKind::Level, scale: 1.0, help: "cells waiting to be paced at each instant" },
    SeriesDecl { name: "paced_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells sent on per second over each interval" },
];

/// The `pacer` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct PacerParams {
    /// The setting, in `unit`'s bits.
    pub rate: Rate,
    pub unit: PacingUnit,
    /// VC labels paced, as given (None: every cell in one queue).
    pub vcs: Option<Vec<String>>,
}

impl PacerParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(PacerParams { rate: p.need("rate", Params::rate)?, unit: p.need_choice("unit", &UNITS)?, vcs: p.opt_list("vcs")? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.cell_rate()?;
        self.labels().map(drop)
    }

    /// The rate of whole cells the setting comes to.
    pub fn cell_rate(&self) -> Result<Rate, ParamIssue> {
        self.unit.cell_rate(self.rate).ok_or_else(|| ParamIssue::new("rate", "out of range"))
    }

    /// The VC labels paced, in order (empty: one queue for everything).
    pub fn labels(&self) -> Result<Vec<u32>, ParamIssue> {
        let mut labels = Vec::new();
        for v in self.vcs.iter().flatten() {
            let l = parse_vc_label(v).map_err(|m| ParamIssue::new("vcs", m))?;
            if labels.contains(&l) {
                return Err(ParamIssue::new("vcs", format!("VC '{v}' listed twice")));
            }
            labels.push(l);
        }
        Ok(labels)
    }
}

#[derive(Clone, Debug)]
pub struct PacerNode {
    /// VC labels paced (empty: one queue for everything).
    labels: Vec<u32>,
    queues: Vec<Pacer>,
    since: SimTime,
    base: Vec<u64>,
}

impl PacerNode {
    /// A pacer (its checks are [`PacerParams::validate`]'s).
    pub fn new(params: PacerParams) -> Result<Self, ParamIssue> {
        let labels = params.labels()?;
        let n = labels.len().max(1);
        Ok(PacerNode { labels, queues: vec![Pacer::new(params.cell_rate()?); n], since: SimTime::ZERO, base: vec![0; n] })
    }



    /// The queue of paced VC `label`.
    pub fn queue_of(&self, label: u32) -> Option<usize> {
        self.labels.iter().position(|&x| x == label)
    }

    /// Quantity `q` of [`SERIES`] for queue `i` (None: all queues together).
    pub fn quantity(&self, i: Option<usize>, q: usize) -> f64 {
        let qs = self.queues.iter().enumerate().filter(|(j, _)| i.is_none_or(|i| i == *j)).map(|(_, q)| q);
        match q {
            0 => qs.map(|q| q.len() as f64).sum(),
            1 => qs.map(|q| q.paced as f64).sum(),
            _ => f64::NAN,
        }
    }



}


impl crate::kind::Kind for PacerNode {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let _ = b;
        let params = PacerParams::bind(p)?;
        params.validate()?;
        PacerNode::new(params)
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let q = if self.labels.is_empty() {
            0
        } else {
            match self.labels.iter().position(|&l| l == cell.vc) {
                Some(i) => i,
                None => {
                    ctx.send(0, Msg::Cell(cell));
                    return;
                }
            }
        };
        self.queues[q].enqueue(cell, q as u32, ctx);
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        let Some(q) = self.queues.get_mut(tag as usize) else {
            ctx.fail(format!("pacer timer for queue {tag}"));
            return;
        };
        if let Some(cell) = q.release(tag, ctx) {
            ctx.send(0, Msg::Cell(cell));
        }
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        for (b, q) in self.base.iter_mut().zip(&self.queues) {
            *b = q.paced;
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        for (i, q) in self.queues.iter().enumerate() {
            let p = match self.labels.get(i) {
                Some(&l) => format!("{path}/{}", vc_name(l)),
                None => path.to_string(),
            };
            let n = q.paced - self.base[i];
            out.push(&p, "paced_cells", "count", n as f64, "cells");
            out.push(&p, "paced_cells", "rate", if secs > 0.0 { n as f64 / secs } else { f64::NAN }, "cells/s");
            out.push(&p, "pacer_q_len", "value", q.len() as f64, "cells");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        for q in &self.queues {
            q.ledger(l);
        }
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let element = if sub.is_empty() { 0 } else { self.queue_of(crate::series::parse_vc_name(sub)?)? as u64 + 1 };
        Some(crate::series::code(element, crate::series::find(&SERIES, name)?))
    }
    fn sample(&self, index: u64) -> f64 {
        let (element, q) = crate::series::split(index);
        self.quantity(element.checked_sub(1).map(|e| e as usize), q)
    }
}

/// The `pacer` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "pacer",
    help: "cell-level pacer: an unlimited FIFO per paced VC served at the pacing rate; other VCs pass through",
    source: "lazarou96 section 4.4 (FIFO + server at the pacing rate); evans96 (per-VC pacing)",
    params: &[&crate::control::pacer::PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::control::pacer::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::control::pacer::SERIES }, crate::series::KindSeries { at: "vc<N>", series: &crate::control::pacer::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

impl crate::part::Part for Pacer {
    fn ledger(&self, l: &mut Ledger) {
        Pacer::ledger(self, l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_leaves_at_the_pacing_rate() {
        // 70 Mb/s: 424 bits every 6.057142… µs.
        let rate = Rate::from_bps(70e6).unwrap();
        let mut p = Pacer::new(rate);
        let t0 = SimTime(1_000_000);
        let first = p.push(Cell::plain(t0, 0, 5, 0), t0);
        for k in 1..10 {
            assert_eq!(p.push(Cell::plain(t0, 0, 5, k), t0), None);
        }
        let mut t = first.unwrap();
        let mut times = vec![t];
        while let Some((_, next)) = p.pop(t) {
            match next {
                Some(n) => {
                    t = n;
                    times.push(t);
                }
                None => break,
            }
        }
        assert_eq!(times.len(), 10);
        for (k, &t) in times.iter().enumerate() {
            // Cell k ends service at t0 + (k+1)·424/r, rounded up to the picosecond.
            let exact = t0.0 as f64 + (k as f64 + 1.0) * 424.0 / 70e6 * 1e12;
            assert!((t.0 as f64 - exact).abs() <= 1.0, "cell {k}: {} vs {exact}", t.0);
        }
        // An idle pacer serves a late arrival from its arrival.
        let late = SimTime(t.0 + 1_000_000_000);
        assert_eq!(p.push(Cell::plain(late, 0, 5, 99), late), Some(SimTime(late.0 + rate.time_for_bits(424).0)));
    }

    #[test]
    fn a_payload_rate_serves_each_cell_in_384_bits_and_a_cell_rate_in_424() {
        let setting = Rate::from_bps(70e6).unwrap();
        // Payload reading: 70 Mb/s of 48-octet payloads = 77.2916… Mb/s of cells; one
        // cell every 384 bits / 70 Mb/s = 5.485714… µs.
        let cells = PacingUnit::Payload.cell_rate(setting).unwrap();
        assert_eq!(cells.bps(), 77_291_666.667);
        let mut p = Pacer::new(cells);
        let t0 = SimTime(0);
        let first = p.push(Cell::plain(t0, 0, 5, 0), t0).unwrap();
        assert!((first.0 as f64 - 384.0 / 70e6 * 1e12).abs() <= 1.0, "{first:?}");
        // Cell reading: the setting is the cell rate (424 bits / 70 Mb/s = 6.057… µs).
        assert_eq!(PacingUnit::Cell.cell_rate(setting), Some(setting));
        // A 9,140-octet TCP segment is 192 cells: 192 · 384 bits at 70 Mb/s carry
        // 9140 · 8 bits, 69.42 Mb/s of TCP data; 192 · 424 bits carry 62.87.
        let tcp = |u: PacingUnit| 9140.0 * 8.0 / (192.0 * 424.0 / u.cell_rate(setting).unwrap().bps()) / 1e6;
        assert!((tcp(PacingUnit::Payload) - 69.42).abs() < 0.005 && (tcp(PacingUnit::Cell) - 62.87).abs() < 0.005);
    }
}
